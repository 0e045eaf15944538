/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cephfs_rlog: the RADOS intent log of a cephfs datastore (rlog.h has the
 * object's layout; docs/durability.md "RADOS intent log" the protocol).
 * A DATA_SYNC or FILE_SYNC WRITE goes to CephFS unstable (ceph_ll_write:
 * the gateway's client cache), then its record (the local log's, ilog.h)
 * into the batch being filled; one flush thread writes the batch with one
 * RADOS write op while the next one fills, so every write in flight shares
 * one round trip to the OSDs (group commit, as the local log's).  The
 * WRITE is acknowledged once a flush covers its record.  A checkpoint
 * thread, at half the ring, every checkpoint_ms, or when a caller needs
 * it, ceph_ll_fsyncs every file written since the last one and then
 * writes the header with the new head: the ring before it is free.
 * COMMIT and a size change of a file with records after the head wait for
 * a checkpoint first (store__cephfs_rlog_settle), so replay never puts
 * older bytes over newer stable ones.  Failures are sticky, as the local
 * log's: every later stable write fails (a new write verifier), and the
 * records stay for the next start.
 */
#ifndef DSNFS_STORE_CEPHFS_RLOG_H
#define DSNFS_STORE_CEPHFS_RLOG_H

/* cephfs_int.h first: it sets _FILE_OFFSET_BITS for libcephfs. */
#include "nfsd/store/cephfs/cephfs_int.h"

#include "nfsd/base/lsnwait.h"
#include "nfsd/store/cephfs/rlog.h"
#include "nfsd/store/store_ilog.h"

/* Buffers: one in flight, one filling; a waiting lane each. */
#define STORE_RLOG_NBUF LSNWAIT_LANES
/* A file's records are ordered and settled by its inode's stripe, not by
 * its cephfs_obj: the object cache (FIFO) may drop an object still in use
 * and make another for the same file. */
#define STORE_RLOG_STRIPES 256u

struct store_rlog {
	struct store_cephfs *sc; /* borrowed: the store owns the log */
	rados_t rados;
	rados_ioctx_t io;
	char oid[256];
	char pool[128];
	uint64_t ring_bytes;
	uint32_t checkpoint_ms;
	uint32_t inplace_min_bytes; /* store_rlog_params's */
	_Atomic uint64_t inplace_writes; /* stable writes it did not take */

	pthread_mutex_t lock;
	pthread_cond_t flush_cv; /* a batch written (room to fill), or err */
	/* A writer waits for its record here, without the lock: lane b is
	 * woken when buffer b's write returns (lsnwait.h says why). */
	struct lsnwait durable;
	pthread_cond_t space_cv; /* a checkpoint ended */
	pthread_cond_t flusher_cv; /* records to flush, or stop */
	pthread_cond_t ckpt_cv; /* the checkpoint thread has work */
	pthread_t flusher, ckpt;
	bool threads; /* both started */
	bool stop;

	uint8_t *buf[STORE_RLOG_NBUF]; /* STORE_ILOG_BATCH_BYTES each */
	unsigned fill; /* buf[fill] takes records */
	uint64_t buf_lsn; /* LSN of buf[fill][0] */
	uint64_t tail_lsn; /* the next record's LSN */
	uint64_t flushed_lsn; /* durable in RADOS below this */
	uint64_t head_lsn; /* checkpointed: replay starts here */
	uint64_t ckpt_want; /* a caller needs head_lsn >= this */
	struct cephfs_obj *dirty; /* files with records since the head */
	size_t ndirty;
	/* Held across a stable write's ceph_ll_write and its record, and
	 * across a size change's checkpoint and ceph_ll_setattr: a file's
	 * writes, size changes and records keep one order. */
	pthread_mutex_t order[STORE_RLOG_STRIPES];
	/* The end LSN of the newest record of a file of the stripe. */
	uint64_t stripe_lsn[STORE_RLOG_STRIPES];
	int err; /* sticky: the first failure */

	/* cephfs_fence.c's read of the header after an eviction (the
	 * monitor thread's only; cancelled when the log is freed). */
	rados_completion_t fence_read;
	uint8_t *fence_hdr;

	struct store_ilog_super sb; /* the header last written */
	struct store_rlog_owner owner; /* ours, set at open */
	struct store_ilog_stats stats;
};

/*
 * Opens the RADOS log of @sc (its object in the file system's default
 * data pool), fencing the old owner when it did not close cleanly, and
 * replays it into CephFS (written and ceph_ll_fsynced) before a fresh log
 * starts there; then sc->rlog is set and stable writes go through it.
 * Returns 0 or -errno with the reason in @errbuf (nothing served: a log
 * that cannot be replayed or fenced keeps the datastore closed).
 */
int store__cephfs_rlog_open(struct store_cephfs *sc,
			    const struct store_rlog_params *p, char *errbuf,
			    size_t errlen);
/* Checkpoints everything, marks the log clean (the next owner fences no
 * one) and frees it; after the last write.  Skipped on a failed log (its
 * records stay for the next start). */
void store__cephfs_rlog_close(struct store_rlog *rl);
/* Cancels cephfs_rlog_fence.c's read of the header, if any; before the
 * librados client goes. */
void store__cephfs_rlog_fence_drop(struct store_rlog *rl);
/* Tests: stops as a crash would (no checkpoint, not marked clean). */
void store__cephfs_rlog_abandon(struct store_rlog *rl);

/*
 * A stable write of @count bytes of @buf at @off_bytes of @o (open file
 * @fh): written to CephFS, logged, and waited for.  Returns 0 or -errno;
 * *sync_failed for a failure of the log (the bytes may be in the file,
 * not acknowledged).
 */
int store__cephfs_rlog_write(struct store_rlog *rl, struct cephfs_obj *o,
			     struct Fh *fh, uint64_t off_bytes, const void *buf,
			     uint32_t count, bool *sync_failed);
/*
 * Whether the log takes a stable write of @count bytes.  One of
 * inplace_min_bytes or more goes in place instead (counted, for the close
 * line), as an UNSTABLE write and a COMMIT at its level (cephfs_io.c):
 * its bytes go once, not twice (the log, then the file at the
 * checkpoint), and one fsync is shared by the file's stable writes in
 * flight.  The local log's rule, at the same size; measured with the
 * RADOS log, 64 KiB FILE_SYNC at 1.30x logging it (docs/ceph-rlog.md).
 */
bool store__cephfs_rlog_takes(struct store_rlog *rl, uint32_t count);

/* Before COMMIT of @o: waits for a checkpoint covering its file's
 * records (those of its inode's stripe), when any lie after the head.
 * 0 or the log's -errno. */
int store__cephfs_rlog_settle(struct store_rlog *rl, struct cephfs_obj *o);
/* Around a size change of @o: begin holds the file's order (no stable
 * write of it lands in between) and settles; end lets go.  Begin returns
 * 0 (end must follow) or the log's -errno (nothing held). */
int store__cephfs_rlog_size_begin(struct store_rlog *rl, struct cephfs_obj *o);
void store__cephfs_rlog_size_end(struct store_rlog *rl, struct cephfs_obj *o);

/* Writes @len bytes of @buf at ring LSN @lsn (split at the ring's end, in
 * one atomic write op). */
int store__cephfs_rlog_put(struct store_rlog *rl, const uint8_t *buf,
			   size_t len, uint64_t lsn);
/* Writes the header @hdr (STORE_RLOG_HEADER_BYTES) at the object's
 * start. */
int store__cephfs_rlog_put_header(struct store_rlog *rl, const uint8_t *hdr);
/* Keeps the first failure (logged with @what) and wakes every waiter;
 * lock held. */
void store__cephfs_rlog_fail(struct store_rlog *rl, int err, const char *what);
/* rl->err is set (fenced, abandoned): wakes every waiter; lock held. */
void store__cephfs_rlog_wake_failed(struct store_rlog *rl);
/* The threads' bodies (@arg: the log). */
void *store__cephfs_rlog_flusher_main(void *arg);
void *store__cephfs_rlog_ckpt_main(void *arg);
/* One checkpoint up to the tail; lock held (dropped for the fsyncs). */
void store__cephfs_rlog_checkpoint_locked(struct store_rlog *rl);

#endif
