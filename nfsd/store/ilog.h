/*
 * ilog: the intent log of stable writes (issue 13), the store module's
 * internal side; the server's calls are in store.h (store_ilog_open,
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
 * - Failures are sticky: a failed log write or checkpoint fsync fails every
 *   later stable write of the log (-EIO or the error), which the nfs3 layer
 *   answers with a new write verifier; the records stay for the next start.
 */
#ifndef DSNFS_STORE_ILOG_H
#define DSNFS_STORE_ILOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nfsd/store/store.h"

struct store_obj;

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
};

/* A decoded record.  @data borrows the decoded buffer. */
struct store_ilog_rec {
	enum store_ilog_rec_type type;
	uint64_t lsn;
	uint64_t off_bytes;
	uint32_t data_len;
	uint32_t rec_len; /* header + handle + data, rounded up to 8 */
	struct store_fh fh;
	const uint8_t *data;
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

/* ---- the writer (ilog.c) ----------------------------------------------- */

/*
 * Appends a record of @count bytes of @buf at @off_bytes of @obj's file
 * (whose data the caller has just written there), waiting for a checkpoint
 * when the ring is full.  @obj is borrowed; the log takes a reference
 * until its next checkpoint.  Returns the LSN that a flush must reach
 * (> 0), or -errno (a failed log: nothing was appended).
 */
int64_t store__ilog_append(struct store_ilog *ilog, struct store_obj *obj,
			   uint64_t off_bytes, const void *buf, uint32_t count);

/*
 * As store__ilog_append, without blocking: -EAGAIN when the ring or the
 * batch is full (nothing appended).  Else 0: @done(@arg, err) is called
 * once, on the log's flush thread, when a flush covers the record (or the
 * log failed: its -errno); @w (borrowed until then) queues the call.
 */
int store__ilog_append_async(struct store_ilog *ilog, struct store_obj *obj,
			     uint64_t off_bytes, const void *buf,
			     uint32_t count, struct store_write_wait *w,
			     store_write_done_fn done, void *arg);

/* Waits until the log is stable up to @end_lsn, flushing it on this thread
 * when no flush is in flight.  Returns 0 or the log's -errno. */
int store__ilog_wait(struct store_ilog *ilog, int64_t end_lsn);

/*
 * Before a change that replay must not undo (COMMIT of newer bytes, a size
 * change): when @obj has records after the head, waits for a checkpoint
 * that covers them.  Returns 0 or the log's -errno.  Blocks.
 */
int store__ilog_settle(struct store_ilog *ilog, struct store_obj *obj);

/* Counters since open, for tests and the closing log line. */
struct store_ilog_stats {
	uint64_t records, flushes, checkpoints, full_waits;
	uint64_t replayed, replay_skipped;
};
void store__ilog_stats(struct store_ilog *ilog, struct store_ilog_stats *out);

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
