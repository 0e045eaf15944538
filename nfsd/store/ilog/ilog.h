/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ilog: the intent log of stable writes, the store module's
 * internal side; the server's calls are in store_open.h (store_ilog_open,
 * store_ilog_close).  A stable WRITE costs one sequential log append and a
 * share of one flush instead of an fsync of its file:
 *
 * - Writers write the data to the file (page cache, so READs see it), then
 *   append a record (handle bytes, offset, data, xxh3 of header and body)
 *   to an in-memory batch under the log's lock, then wait until a flush
 *   covers it: on the loop, without blocking (store__ilog_append_async:
 *   the flush thread calls the caller back), or on a work thread
 *   (store__ilog_append + store__ilog_wait) when that would block.  Two
 *   flush threads each take the batch filled so far, pad it to 4 KiB and
 *   write it with one O_DIRECT|O_DSYNC pwrite (buffered pwrite + fdatasync
 *   where the filesystem refuses O_DIRECT), two in flight, while new
 *   records fill the next batch: one flush covers every record appended
 *   before it, across files, connections and datastores (the figures that
 *   chose this: perf/ilog/appendbench.c, docs/bench.md "Intent log").
 * - The log is a ring after a 4 KiB superblock (two slots: a torn write
 *   leaves the other).  Positions are LSNs, byte counts since the log was
 *   opened; a record carries its LSN and the log's salt (new at every
 *   open), so bytes of an older lap or an older run end the replay.
 * - A checkpoint thread, at half the ring, every checkpoint_ms, or when a
 *   caller needs it, fsyncs every file with records since the last one
 *   (each dirty file holds a reference), then writes the superblock with
 *   the new head: the ring before it is free.  A writer that finds the
 *   ring full waits for that checkpoint; it never fails for want of space.
 * - Replay never undoes later changes: COMMIT and a size change of a file
 *   with records after the head first wait for a checkpoint that covers
 *   them (store__ilog_settle), so the records are gone before the newer
 *   bytes or size can be stable.  REMOVE and RENAME need nothing: replay
 *   finds a file by its handle (inode and generation), so a removed file is
 *   ESTALE and skipped and a renamed one gets its data under its new name.
 * - Large writes (at least inplace_min bytes, store_ilog_set_inplace_min;
 *   ZFS's WR_INDIRECT) are not copied into the log: on one disk that would
 *   write every byte twice.  They go to the file and are made stable there
 *   by an fdatasync shared through the file's sync group; then, only when
 *   the file has records after the head, a SYNCED record (handle, range,
 *   and upto: the end LSN of the file's newest record when the bytes were
 *   written) is logged and waited for.  Replay does not write the bytes of
 *   an older record (LSN below upto) of that file that the range covers,
 *   so it never puts older data back over them; it is logged after the
 *   sync, so a durable SYNCED record always names durable bytes.
 * - Failures are sticky: a failed log write or checkpoint fsync fails every
 *   later stable write of the log (-EIO or the error), which the nfs3 layer
 *   answers with a new write verifier; the records stay for the next start.
 */
#ifndef DSNFS_STORE_ILOG_H
#define DSNFS_STORE_ILOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nfsd/store/store_open.h"

struct local_obj;

#define STORE_ILOG_BLOCK 4096u /* flush and superblock unit */
#define STORE_ILOG_DATA_OFF 4096u /* the ring starts after the superblock */
#define STORE_ILOG_SUPER_SLOT 512u /* slot 0 at 0, slot 1 at 512 */
#define STORE_ILOG_SUPER_BYTES 56u
#define STORE_ILOG_HEAD_BYTES 56u /* record header */
/* Largest data of one record: nfs3 WRITE counts stop at 1 MiB. */
#define STORE_ILOG_DATA_MAX (1u << 20)
#define STORE_ILOG_REC_MAX                                                     \
	(STORE_ILOG_HEAD_BYTES + STORE_FH_MAX + STORE_ILOG_DATA_MAX + 8u)
/* A batch holds at least one largest record and its pad. */
#define STORE_ILOG_BATCH_BYTES (4u << 20)
#define STORE_ILOG_RING_MIN (2u * STORE_ILOG_BATCH_BYTES)
#define STORE_ILOG_RING_MAX (1ull << 40)

enum store_ilog_rec_type {
	STORE_ILOG_REC_WRITE = 1,
	STORE_ILOG_REC_PAD = 2, /* fills a batch to its 4 KiB end */
	STORE_ILOG_REC_SYNCED = 3, /* a range written and synced in place */
};

/* Body of a SYNCED record after the handle: upto (u64). */
#define STORE_ILOG_SYNCED_BODY 8u

/* A decoded record.  @data borrows the decoded buffer. */
struct store_ilog_rec {
	enum store_ilog_rec_type type;
	uint64_t lsn;
	uint64_t off_bytes;
	uint32_t data_len; /* SYNCED: the range's length (no data) */
	uint32_t rec_len; /* header + handle + data, rounded up to 8 */
	struct store_fh fh;
	const uint8_t *data;
	/* SYNCED: the file's records ending at or below this are older than
	 * the range's bytes (0 < upto <= lsn). */
	uint64_t upto_lsn;
};

/* The superblock: where replay starts and how to read the ring. */
struct store_ilog_super {
	uint64_t salt;
	uint64_t head_lsn;
	uint64_t seq; /* slot seq % 2; the higher valid one wins */
	uint64_t ring_bytes;
};

/* ---- records (ilog_record.c: pure, bytes in and out) ------------------ */

/* Bytes of a WRITE record of @fh_len handle bytes and @data_len data. */
uint32_t store__ilog_rec_len(uint32_t fh_len, uint32_t data_len);

/* Encodes a WRITE record into @out (store__ilog_rec_len() bytes). */
void store__ilog_rec_encode(uint8_t *out, uint64_t salt, uint64_t lsn,
			    const struct store_fh *fh, uint64_t off_bytes,
			    const void *data, uint32_t data_len);

/* Bytes of a SYNCED record of @fh_len handle bytes. */
uint32_t store__ilog_synced_len(uint32_t fh_len);

/* Encodes a SYNCED record (store__ilog_synced_len() bytes) into @out: the
 * @len_bytes at @off_bytes of @fh's file are stable there, newer than its
 * records ending at or below @upto_lsn. */
void store__ilog_synced_encode(uint8_t *out, uint64_t salt, uint64_t lsn,
			       const struct store_fh *fh, uint64_t off_bytes,
			       uint32_t len_bytes, uint64_t upto_lsn);

/* Encodes a PAD record of @rec_len bytes (>= STORE_ILOG_HEAD_BYTES, a
 * multiple of 8) into @out. */
void store__ilog_pad_encode(uint8_t *out, uint64_t salt, uint64_t lsn,
			    uint32_t rec_len);

/*
 * Decodes the header in @buf (@len bytes, at least STORE_ILOG_HEAD_BYTES)
 * as the record at @lsn of the log with @salt.  Returns 0 (*out filled but
 * @data, which needs the body), -ENODATA when these bytes are no record of
 * this log at this place (the normal end of a log), -EBADMSG when the
 * header's checksum fails, -EINVAL when a checked header holds fields out
 * of bounds.
 */
int store__ilog_head_decode(const uint8_t *buf, size_t len, uint64_t salt,
			    uint64_t lsn, struct store_ilog_rec *out);

/*
 * Decodes the whole record in @buf (@len >= its rec_len, else -EINVAL) and
 * checks its body's checksum (-EBADMSG).  Other returns as
 * store__ilog_head_decode().  out->data borrows @buf.
 */
int store__ilog_rec_decode(const uint8_t *buf, size_t len, uint64_t salt,
			   uint64_t lsn, struct store_ilog_rec *out);

/* Encodes @sb into STORE_ILOG_SUPER_BYTES at @out. */
void store__ilog_super_encode(uint8_t *out, const struct store_ilog_super *sb);
/* Decodes a slot: 0, or -EINVAL (magic, checksum or a bound). */
int store__ilog_super_decode(const uint8_t *buf, size_t len,
			     struct store_ilog_super *out);
/* Whether the slot at @buf starts with the superblock's magic: a log's
 * file even when its checksum fails. */
bool store__ilog_super_has_magic(const uint8_t *buf);

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

/* ---- the writer (ilog.c) ----------------------------------------------- */

/*
 * Appends a record of @count bytes of @buf at @off_bytes of @obj's file
 * (whose data the caller has just written there), waiting for a checkpoint
 * when the ring is full.  @obj is borrowed; the log takes a reference
 * until its next checkpoint.  Returns the LSN that a flush must reach
 * (> 0), or -errno (a failed log: nothing was appended).
 */
int64_t store__ilog_append(struct store_ilog *ilog, struct local_obj *obj,
			   uint64_t off_bytes, const void *buf, uint32_t count);

/*
 * As store__ilog_append, without blocking: -EAGAIN when the ring or the
 * batch is full (nothing appended).  Else 0: @done(@arg, err) is called
 * once, on the log's flush thread, when a flush covers the record (or the
 * log failed: its -errno); @w (borrowed until then) queues the call.
 */
int store__ilog_append_async(struct store_ilog *ilog, struct local_obj *obj,
			     uint64_t off_bytes, const void *buf,
			     uint32_t count, struct store_write_wait *w,
			     store_write_done_fn done, void *arg);

/*
 * After a write of @len_bytes at @off_bytes of @obj's file was made stable
 * in place (ilog.h, large writes): when the file has records after the
 * head that end at or below @upto_lsn (its ilog_lsn read when the bytes
 * were written, under its ilog_order), appends a SYNCED record, waiting
 * for ring space, and returns the LSN a flush must reach (> 0); else 0
 * (nothing to log).  -errno: a failed log (sticky).
 */
int64_t store__ilog_append_synced(struct store_ilog *ilog,
				  struct local_obj *obj, uint64_t off_bytes,
				  uint32_t len_bytes, uint64_t upto_lsn);

/* Waits until the log is stable up to @end_lsn, flushing it on this thread
 * when no flush is in flight.  Returns 0 or the log's -errno. */
int store__ilog_wait(struct store_ilog *ilog, int64_t end_lsn);

/*
 * Before a change that replay must not undo (COMMIT of newer bytes, a size
 * change): when @obj has records after the head, waits for a checkpoint
 * that covers them.  Returns 0 or the log's -errno.  Blocks.
 */
int store__ilog_settle(struct store_ilog *ilog, struct local_obj *obj);

/* Writers now waiting for a flush (tests wait on it). */
uint32_t store__ilog_waiters(struct store_ilog *ilog);

/*
 * Tests: replaces the batch write (pwrite of @len bytes of @buf at log
 * offset @off, plus the flush) with @fn; NULL restores it.  Set before
 * writers run.
 */
typedef int (*store_ilog_write_fn)(void *arg, int fd, const void *buf,
				   size_t len, uint64_t off);
void store__ilog_write_hook(struct store_ilog *ilog, store_ilog_write_fn fn,
			    void *arg);

/* Tests: stops the log as a crash would (no checkpoint, no flush of the
 * batch being filled) and frees it. */
void store__ilog_abandon(struct store_ilog *ilog);

/* ---- the log's state (ilog.c, ilog_checkpoint.c, ilog_open.c only) ----- */

#include <pthread.h>

#include "nfsd/store/syncgroup.h"

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
	/* Stable writes of at least this many bytes go in place; 0: none. */
	_Atomic uint32_t inplace_min;
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
