/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store_ilog: the server's calls on an intent log of stable writes (open,
 * close, counters), apart from store_open.h so that a backend can name
 * the counters (cephfs's RADOS log keeps the same ones) without the
 * header of the file that picks the backends.  The log itself is the local
 * backend's journal, store/ilog/ (ilog.h).
 */
#ifndef DSNFS_STORE_STORE_ILOG_H
#define DSNFS_STORE_STORE_ILOG_H

#include <stddef.h>
#include <stdint.h>

#include "nfsd/store/store.h"

/*
 * Opens the intent log at @path (created, preallocated and zeroed on first
 * use, mode 0600) with a ring of @ring_bytes (a multiple of 4 KiB, at least
 * 8 MiB) and a checkpoint at least every @checkpoint_ms (0: only by size
 * and when needed), first replaying what the file holds after its last
 * checkpoint onto the files of @stores (@nstores, borrowed; records of
 * other export ids are skipped and counted).  Replay stops at a torn tail
 * or a corrupt record and logs where and why; the log opens anyway.  Then
 * point the stores' `ilog` at it.  Every store must be of the local
 * backend (the log replays onto its files' descriptors).  *out returns
 * owned: store_ilog_close().
 * Returns 0 or -errno with the path named in errbuf.
 */
int store_ilog_open(const char *path, uint64_t ring_bytes,
		    uint32_t checkpoint_ms, struct store *const *stores,
		    size_t nstores, struct store_ilog **out, char *errbuf,
		    size_t errlen);

/*
 * DATA_SYNC and FILE_SYNC writes through @ilog of at least @min_bytes, and
 * those of at least @seq_min_bytes that start where their file's last
 * write ended (a sequential stream), are written and fdatasynced in their
 * file instead of copied into the log, which then holds at most a small
 * SYNCED record (ilog.h; config intent_log_inplace_min_bytes and
 * intent_log_inplace_sequential_min_bytes).  0 turns a rule off; both 0
 * (the values at open): every stable write is logged.
 */
void store_ilog_set_inplace(struct store_ilog *ilog, uint32_t min_bytes,
			    uint32_t seq_min_bytes);
/* Whether in-place writes over blocks their file already holds are
 * written O_DIRECT with RWF_DSYNC (config intent_log_inplace_direct;
 * off at open). */
void store_ilog_set_inplace_direct(struct store_ilog *ilog, bool on);
/*
 * Whether those direct writes, for a WRITE the loop parks, are submitted
 * through an io_uring of the log's (store/dring.h: one thread keeps them
 * in flight and merges a file's writes that meet) instead of each holding
 * a work thread (config intent_log_inplace_uring; off at open).  On:
 * 0, or -errno when io_uring cannot be had here (the work threads go on
 * doing them).  Set before writers run.
 */
int store_ilog_set_inplace_uring(struct store_ilog *ilog, bool on);
/* Sets the size rule alone (the sequential one as it was). */
void store_ilog_set_inplace_min(struct store_ilog *ilog, uint32_t min_bytes);

/*
 * Waits until every write_async of @ilog has had its done hook called
 * (they hand requests back to the loops: call it after the loops stopped,
 * before their memory goes).  NULL is a no-op.
 */
void store_ilog_drain(struct store_ilog *ilog);

/* Checkpoints everything (the next start replays nothing), logs the
 * counters, frees.  NULL is a no-op.  After every store using it stopped
 * writing. */
void store_ilog_close(struct store_ilog *ilog);

/* Counters of an intent log since it opened (/metrics, tests, the closing
 * log line): records appended, flushes of the log, checkpoints, writers
 * that waited for ring space, records replayed at open and skipped;
 * writes synced in place, and the SYNCED records they logged (of the
 * records counted), and of those writes the ones written O_DIRECT; the bytes
 * written to the log's ring (records and their pads: the log device's share of
 * the stable bytes); of the direct writes, those that went through the
 * io_uring (store_ilog_set_inplace_uring) and the writevs they went down
 * as (fewer: a file's writes that meet are merged). */
struct store_ilog_stats {
	uint64_t records, flushes, checkpoints, full_waits;
	uint64_t replayed, replay_skipped;
	uint64_t inplace_writes, synced_records, direct_writes;
	uint64_t bytes;
	uint64_t ring_writes, ring_writevs;
};
void store_ilog_stats(struct store_ilog *ilog, struct store_ilog_stats *out);

/* The path the log was opened at (borrowed, for labels and messages). */
const char *store_ilog_path(const struct store_ilog *ilog);

#endif
