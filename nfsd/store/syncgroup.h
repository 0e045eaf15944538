/* SPDX-License-Identifier: Apache-2.0 */
/*
 * syncgroup: group commit for the stable writes and COMMITs of one open
 * file.  ESXi keeps many FILE_SYNC writes in flight per VMDK; each used to
 * pay its own fsync(2).  Here concurrent callers share one sync "round":
 *
 * - A caller enters after its data is written (pwrite returned).  It needs
 *   a round that *starts* after it entered: a round already in flight may
 *   have begun before its pwrite and does not cover it.  So every caller
 *   waits for the next round to start and finish, and exactly one of the
 *   callers waiting for that round (the first to find none in flight) runs
 *   it; the others sleep on a condition variable.  One round covers
 *   everyone who entered before it started.
 * - Levels: STORE_DATA_SYNC (fdatasync: DATA_SYNC writes and COMMIT) and
 *   STORE_FILE_SYNC (fsync: data and metadata).  A round runs at the
 *   highest level among the callers it covers, so an fsync round serves
 *   both kinds and an fdatasync round only ever covers data waiters.
 * - Errors are sticky.  Linux reports a writeback error to fsync once per
 *   open file description (errseq_t) and then marks the pages clean: after
 *   a failed round, a second fsync on the same descriptor returns 0 even
 *   though the data, and any UNSTABLE data written before it, is lost.
 *   So the first failed round fails every caller it covered, and every
 *   later caller of the group gets the same error without syncing again,
 *   for the life of the group (the open file object; see obj.c for when a
 *   file is reopened).  A client is thereby never told that data is
 *   stable after its writeback failed on this descriptor.
 *
 * With group commit off (config [server] group_commit = false) each caller
 * runs its own sync right away, as before, with the same sticky errors.
 * The sync itself is injected (store_sync_fn) so tests count rounds with
 * real threads.  Waiting blocks the calling (work) thread.
 */
#ifndef DSNFS_STORE_SYNCGROUP_H
#define DSNFS_STORE_SYNCGROUP_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "nfsd/store/store.h"

/*
 * Makes stable what was written to the file behind @arg, at @level
 * (STORE_DATA_SYNC or STORE_FILE_SYNC).  Returns 0 or -errno.  Runs
 * without the group's lock held; may block.
 */
typedef int (*store_sync_fn)(void *arg, enum store_stable level);

/* One file's group.  Fields are the module's, under @lock. */
struct store_syncgroup {
	pthread_mutex_t lock;
	pthread_cond_t done[2]; /* by round parity, see syncgroup.c */
	uint64_t started; /* rounds started; the current one's number */
	uint64_t finished; /* rounds finished (in order: one at a time) */
	bool running; /* round @started is in flight */
	enum store_stable next_level; /* UNSTABLE: nobody waits for next */
	uint32_t next_waiters; /* callers waiting for round started + 1 */
	uint64_t failed_round; /* 0, or the first round that failed */
	int err; /* its error, returned to every later caller */
};

/* Returns 0 or -errno (pthread init). */
int store__syncgroup_init(struct store_syncgroup *sg);
void store__syncgroup_fini(struct store_syncgroup *sg);

/*
 * Waits until a sync at @level or higher that started after this call
 * has finished, running it on this thread when no one else does; with
 * @grouped false, runs its own sync right away.  @fn and @arg (borrowed)
 * must name the same file for every caller of one group.  Returns 0, or
 * the -errno of the round that covered the caller or of an earlier failed
 * round (sticky, see above).
 */
int store__syncgroup_sync(struct store_syncgroup *sg, enum store_stable level,
			  bool grouped, store_sync_fn fn, void *arg);

/* Callers now waiting for the next round (tests wait on it, lock held
 * inside). */
uint32_t store__syncgroup_waiters(struct store_syncgroup *sg);

#endif
