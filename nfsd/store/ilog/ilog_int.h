/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ilog_int: what the files of the intent log share (ilog*.c and their
 * unit tests only): the log's file, its state and threads, and replay.
 * The log is the local backend's journal, so it knows the local object
 * (local/local_int.h: its ilog_* fields) and the local store (replay).
 */
#ifndef DSNFS_STORE_ILOG_INT_H
#define DSNFS_STORE_ILOG_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nfsd/store/ilog/ilog.h"
#include "nfsd/store/local/local_int.h"
#include "nfsd/store/syncgroup.h"

/* ---- the log's file (ilog_file.c) -------------------------------------- */

/*
 * Opens the existing log at @path for replay, or finds there is none.
 * Refuses (one clear reason in @errbuf) a symbolic link, a file that is
 * not regular, one not owned by our uid, one with group or other mode bits,
 * and a non-empty file with neither superblock's magic (not a log: a disk
 * named by typo is left as it was).  Returns 0 with *@fd open on the log,
 * or 0 with *@fd = -1 when there is no log yet (no file, or an empty one),
 * or -errno.
 */
int store__ilog_file_open(const char *path, int *fd, char *errbuf,
			  size_t errlen);

/*
 * Makes a zeroed file of @total bytes beside @path, created 0600 with
 * O_EXCL|O_NOFOLLOW: *@fd open on it, its name in @tmp.  The caller writes
 * the superblock, then store__ilog_file_publish() renames it over @path,
 * so @path never names a log without a superblock.
 */
int store__ilog_file_make(const char *path, uint64_t total, int *fd, char *tmp,
			  size_t tmplen);
/* Renames @tmp to @path (@replace: over the log or the empty file there;
 * else only when nothing is there) and syncs the directory. */
int store__ilog_file_publish(const char *tmp, const char *path, bool replace);

/* ---- the log's state (ilog.c, ilog_checkpoint.c, ilog_open.c only) ----- */

/* Writes in flight at once, and batch buffers: one more fills meanwhile. */
#define STORE_ILOG_FLUSHERS 2
#define STORE_ILOG_NBATCH (STORE_ILOG_FLUSHERS + 1)

/* One batch buffer and, while it is in flight, the LSNs it covers. */
struct store_ilog_batch {
	uint8_t *buf; /* STORE_ILOG_BATCH_BYTES, 4 KiB aligned */
	uint64_t end_lsn; /* padded end */
	bool written; /* its write returned; retired in LSN order */
};

struct store_ilog {
	char path[4096];
	int fd; /* O_DIRECT|O_DSYNC when @direct, else buffered */
	bool direct;
	uint64_t ring_bytes;
	uint32_t checkpoint_ms;
	/* Stable writes of at least this many bytes go in place, and those
	 * of a sequential stream from inplace_seq_min; 0: that rule is off. */
	_Atomic uint32_t inplace_min;
	_Atomic uint32_t inplace_seq_min;
	/* In-place writes over written blocks go O_DIRECT + RWF_DSYNC
	 * (store/local/local_direct.c). */
	_Atomic bool inplace_direct;
	/* Those direct writes of parked WRITEs go through this ring
	 * (store/dring.h) instead of a work thread; NULL: no ring. */
	struct store_dring *dring;
	store_ilog_write_fn write_fn; /* tests; NULL: store_ilog_write_ring */
	void *write_arg;

	pthread_mutex_t lock;
	/* The stable LSN moved or a batch buffer came free: for the work
	 * threads that wait (store__ilog_wait, a full batch), the rare path
	 * since stable WRITEs park (write_async). */
	pthread_cond_t flush_cv;
	uint32_t full_waiters; /* on flush_cv */
	pthread_cond_t space_cv; /* a checkpoint ended */
	pthread_cond_t ckpt_cv; /* the checkpoint thread has work */
	pthread_t thread;
	bool thread_started;
	bool stop;
	/* The flush threads: take batches, write them, call done hooks. */
	pthread_cond_t flusher_cv;
	pthread_t flusher[STORE_ILOG_FLUSHERS];
	unsigned nflushers;
	struct store_write_wait *async_head, *async_tail;
	bool async_calling; /* done hooks running without the lock */
	pthread_cond_t idle_cv; /* the queue emptied (store_ilog_drain) */

	struct store_ilog_batch batch[STORE_ILOG_NBATCH];
	unsigned fill; /* batch[fill] takes records */
	unsigned oldest; /* the oldest batch in flight, when inflight > 0 */
	unsigned inflight; /* batches taken and not yet retired */
	uint64_t buf_lsn; /* LSN of batch[fill].buf[0] */
	uint64_t tail_lsn; /* the next record's LSN */
	uint64_t flushed_lsn; /* stable below this */
	uint32_t waiters;
	uint64_t head_lsn; /* checkpointed: replay starts here */
	uint64_t ckpt_want; /* a caller needs head_lsn >= this */
	struct local_obj *dirty; /* files with records since the head */
	size_t ndirty;
	/* The checkpoint in flight: its files (their references), taken off
	 * the dirty list, whose records stay above the head until its
	 * superblock is written (store__ilog_held finds them there). */
	struct local_obj **ckpt_files;
	size_t nckpt;
	int err; /* sticky: the first failure */

	struct store_ilog_super sb; /* the slot last written */
	uint8_t *super_block; /* STORE_ILOG_BLOCK, aligned: both slots */

	struct store_ilog_stats stats;
};

/* Worst case a record's batch still needs: its pad to the next block. */
#define STORE_ILOG_PAD_MAX (STORE_ILOG_BLOCK + STORE_ILOG_HEAD_BYTES)

/* Writes @len bytes of @buf at @off of the log's descriptor @fd. */
int store__ilog_pwrite(int fd, const void *buf, size_t len, uint64_t off);
/* Keeps the first failure (logged with @what) and wakes every waiter;
 * lock held. */
void store__ilog_fail(struct store_ilog *ilog, int err, const char *what);
/* Writes the superblock slot of @sb (seq % 2), keeping the other. */
int store__ilog_super_write(struct store_ilog *ilog,
			    const struct store_ilog_super *sb);
/* One checkpoint up to the current tail; called and returns with the
 * lock held, drops it for the fsyncs. */
void store__ilog_checkpoint_locked(struct store_ilog *ilog);
/* The threads' bodies (@arg: the log). */
void *store__ilog_checkpoint_main(void *arg);
void *store__ilog_flusher_main(void *arg);

/* ---- replay (ilog_replay.c) --------------------------------------------- */

/*
 * Replays the ring of @fd (a buffered descriptor of the log at @path,
 * borrowed) from @sb's head onto the files of @stores (@nstores, borrowed;
 * a record goes to the store its handle's export id names), then fsyncs
 * every file it wrote.  Stops at the first record that is not whole: a
 * torn tail (logged as a warning) or a corrupt record (an error naming the
 * file, the offset and the reason); either way the log opens.  *applied
 * and *skipped (file gone, export not served) count records.  Returns 0, or
 * -errno when a write or fsync of a file failed (the log is kept).
 */
int store__ilog_replay(const char *path, int fd,
		       const struct store_ilog_super *sb,
		       struct store *const *stores, size_t nstores,
		       uint64_t *applied, uint64_t *skipped);

#endif
