/* SPDX-License-Identifier: Apache-2.0 */
/*
 * quota: what one datastore has allocated, against its quota (the
 * volume's quota of its capacity pool, pool.h).  The figure is the bytes
 * the filesystem allocated under the datastore's directory (st_blocks x
 * 512, each inode once), as ANF counts a volume's consumed size: thin
 * disks cost what they hold, not their logical size, so a datastore may be
 * overallocated.
 *
 * Cheap per request: the directory is scanned once at start
 * (quota_scan(), before the loops run), which records each file's
 * allocation by inode.  From then on the NFS calls that may allocate or
 * free re-measure the files they changed (quota_file_update(),
 * quota_file_forget()) and add the difference from the record: two calls
 * about one file, on two threads, count its change once, because the
 * measure and the record change under one lock.  A WRITE first reserves
 * the most it can allocate (quota_write_growth()), so that concurrent
 * writes never pass the quota together: one that does not fit gets
 * -ENOSPC before it touches the file.  Changes made behind the server's
 * back are seen when the file is next written, or at the next start.
 *
 * Thread-safe: the loops and the blocking-work threads call it at once;
 * the admin API reads it and sets limits.
 */
#ifndef DSNFS_QUOTA_H
#define DSNFS_QUOTA_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "nfsd/quota/files.h"

/* The allocation unit assumed for a write into a hole. */
#define QUOTA_BLOCK_BYTES 4096

struct quota {
	_Atomic uint64_t limit_bytes; /* 0: no quota (counted anyway) */
	_Atomic int64_t used_bytes;
	_Atomic uint64_t reserved_bytes; /* writes under way */
	pthread_mutex_t lock; /* the file records below */
	struct quota_files files; /* by inode */
};

struct quota_usage {
	uint64_t limit_bytes; /* 0: none */
	uint64_t used_bytes;
	uint64_t reserved_bytes;
	uint64_t files; /* inodes on record */
};

/* No limit, nothing used, no records. */
void quota_init(struct quota *q);

/* Frees the records. */
void quota_fini(struct quota *q);

/* Sets the quota, live (0: none).  Writes already reserved go on. */
void quota_set_limit(struct quota *q, uint64_t limit_bytes);

void quota_get(struct quota *q, struct quota_usage *out);

/*
 * The bytes a write of @count at @off_bytes may newly allocate in a file
 * of @size_bytes with @used_bytes allocated: none when the file has no
 * hole (used >= size rounded up to QUOTA_BLOCK_BYTES) and the write stays
 * within it; else every block the write touches.
 */
uint64_t quota_write_growth(uint64_t size_bytes, uint64_t used_bytes,
			    uint64_t off_bytes, uint32_t count);

/*
 * Reserves @bytes for an allocation about to happen: 0, or -ENOSPC when
 * used + reserved + @bytes would pass the limit (nothing reserved then).
 * Always 0 without a limit.  Give it back with quota_release().
 */
int quota_reserve(struct quota *q, uint64_t bytes);

/* Gives back a reservation once its allocation is counted (or failed). */
void quota_release(struct quota *q, uint64_t bytes);

/* Measures what a file has allocated now (st_blocks x 512): 0 or -errno. */
typedef int (*quota_measure_fn)(void *arg, uint64_t *used_bytes);

/*
 * Re-measures file @fileid with @measure (called once, with the quota's
 * lock held) and counts the change since its record; a file with no
 * record (new, or made behind the server's back) counts all it holds.
 * Returns 0, or -ENOMEM / the measure's error, with nothing changed.
 */
int quota_file_update(struct quota *q, uint64_t fileid,
		      quota_measure_fn measure, void *arg);

/* File @fileid is gone (its last link removed): uncounts its record, if
 * it has one. */
void quota_file_forget(struct quota *q, uint64_t fileid);

/*
 * Records and counts what is allocated under @dir (@dir included; each
 * inode once, so hard links count once), without following symlinks or
 * crossing into other filesystems, and replaces the used figure with the
 * sum.  Blocks: call before the loops start, or off them.  Returns 0, or
 * -errno with the path in errbuf.
 */
int quota_scan(struct quota *q, const char *dir, char *errbuf, size_t errlen);

struct store;

/*
 * As quota_scan(), through the ops of store @st (borrowed): readdir,
 * lookup and getattr's used_bytes, for a datastore that is not a
 * directory of this machine (the cephfs backend).  Blocks.  Returns 0, or
 * -errno with the datastore named in errbuf.
 */
int quota_scan_store(struct quota *q, struct store *st, char *errbuf,
		     size_t errlen);

#endif
