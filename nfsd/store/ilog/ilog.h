/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ilog: the intent log of stable writes, the local backend's journal and
 * its public face: what local*.c call (the writer below); the bytes it
 * writes are in ilog_record.h, its state and threads in ilog_int.h (ilog*.c
 * only), the server's calls in store_ilog.h (store_ilog_open,
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
 * - Large writes (at least inplace_min bytes; ZFS's WR_INDIRECT) and the
 *   writes of a sequential stream (at least inplace_seq_min bytes, starting
 *   where the file's last write ended: store__ilog_inplace_rule) are not
 *   copied into the log: on one disk that would write every byte twice,
 *   and a stream's bytes fill the ring and force checkpoints.  They go to
 *   the file and are made stable there by an fdatasync shared through the
 *   file's sync group; then, only when the file has records after the
 *   head, a SYNCED record (handle, range, and upto: the end LSN of the
 *   file's newest record when the bytes were written) is logged and waited
 *   for.  Replay does not write the bytes of an older record (LSN below
 *   upto) of that file that the range covers,
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

#include "nfsd/store/ilog/ilog_record.h"
#include "nfsd/store/store_ilog.h"

struct local_obj;

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

/* A write starting this near its file's last write's end continues the
 * stream: 16 WRITEs of 64 KiB in flight arrive in any order. */
#define STORE_ILOG_SEQ_WINDOW (1u << 20)

/*
 * After a write of @len_bytes at @off_bytes of @obj's file was made stable
 * in place (ilog.h, large writes; @direct: written O_DIRECT, counted
 * apart): when the file has records after the head that end at or below
 * @upto_lsn (its ilog_lsn read when the bytes were written, under its
 * ilog_order, or before a direct write began), appends a SYNCED record, waiting
 * for ring space, and returns the LSN a flush must reach (> 0); else 0
 * (nothing to log).  -errno: a failed log (sticky).
 */
int64_t store__ilog_append_synced(struct store_ilog *ilog,
				  struct local_obj *obj, uint64_t off_bytes,
				  uint32_t len_bytes, uint64_t upto_lsn,
				  bool direct);

/*
 * store__ilog_append_synced for a write_async (the caller's done hook
 * pending): 1 when nothing needed logging (the caller calls @done now);
 * 0 when a SYNCED record was appended: @done(@arg, err) is then called
 * once on the log's flush thread when a flush covers it, @w queued as by
 * store__ilog_append_async.  -errno: a failed log.  May wait for ring
 * space, as store__ilog_append_synced.
 */
int store__ilog_append_synced_async(struct store_ilog *ilog,
				    struct local_obj *obj, uint64_t off_bytes,
				    uint32_t len_bytes, uint64_t upto_lsn,
				    bool direct, struct store_write_wait *w,
				    store_write_done_fn done, void *arg);

/* The ring direct writes of parked WRITEs go through, or NULL: in-place
 * direct writes off, or no ring (store_ilog_set_inplace_uring). */
struct store_dring *store__ilog_dring(const struct store_ilog *ilog);

/* Whether in-place writes may go O_DIRECT (store_ilog_set_inplace_direct). */
bool store__ilog_inplace_direct(const struct store_ilog *ilog);

/* Waits until the log is stable up to @end_lsn, flushing it on this thread
 * when no flush is in flight.  Returns 0 or the log's -errno. */
int store__ilog_wait(struct store_ilog *ilog, int64_t end_lsn);

/*
 * Before a change that replay must not undo (COMMIT of newer bytes, a size
 * change): when @obj has records after the head, waits for a checkpoint
 * that covers them.  Returns 0 or the log's -errno.  Blocks.
 */
int store__ilog_settle(struct store_ilog *ilog, struct local_obj *obj);

/*
 * The object of the file with handle @fh that the log holds (records after
 * the head: on its dirty list or in the checkpoint in flight), with a
 * reference for the caller; NULL when it holds none.  A file evicted from
 * the cache while it has such records must come back as this object: a new
 * one knows none of them (ilog_lsn 0), so an in-place write through it
 * logs no SYNCED record and replay writes the older records over it.
 */
struct local_obj *store__ilog_held(struct store_ilog *ilog,
				   const struct store_fh *fh);

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

/*
 * The log's choice for a stable write of @count bytes at @off_bytes of a
 * file whose last write ended at @last_end (0 before any): in place (true)
 * when @count reaches @min_bytes, or reaches @seq_min_bytes and the write
 * starts within STORE_ILOG_SEQ_WINDOW of @last_end (a sequential stream,
 * its WRITEs in flight a little out of order); else logged.  A rule at 0
 * is off.  Small random writes stay in the log, where one flush covers
 * those of every file.  Either choice is safe (SYNCED records, above).
 */
bool store__ilog_inplace_rule(uint32_t min_bytes, uint32_t seq_min_bytes,
			      uint64_t last_end, uint64_t off_bytes,
			      uint32_t count);

/* store__ilog_inplace_rule with the log's own rules (inplace_min and
 * inplace_seq_min: store_ilog_set_inplace). */
bool store__ilog_inplace(const struct store_ilog *ilog, uint64_t last_end,
			 uint64_t off_bytes, uint32_t count);

#endif
