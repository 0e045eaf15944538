// SPDX-License-Identifier: Apache-2.0
/*
 * cephfs_rlog: the RADOS intent log's writers, its flush thread (group
 * commit) and its checkpoints (cephfs_rlog.h has the protocol; opening,
 * replay and closing are cephfs_rlog_open.c's).  One mutex guards the
 * state; the RADOS writes and the fsyncs run without it.  LSN l lives at
 * object offset STORE_RLOG_HEADER_BYTES + l % ring_bytes.  A RADOS write
 * op is atomic, so a batch needs no padding: records follow each other.
 */
#include "nfsd/store/cephfs/cephfs_rlog.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nfsd/base/log.h"

/* A write of the log returned @rc.  ESHUTDOWN is Ceph's EBLOCKLISTED,
 * and only a gateway taking the log over blocklists the log's own client
 * (an MDS eviction blocklists the mount's): this gateway is fenced. */
static void store_rlog_put_done(struct store_rlog *rl, int rc)
{
	if (rc == -ESHUTDOWN) {
		store__cephfs_fenced(rl->sc,
				     "its RADOS log's client is blocklisted");
	}
}

void store__cephfs_rlog_wake_failed(struct store_rlog *rl)
{
	lsnwait_fail(&rl->durable);
	pthread_cond_broadcast(&rl->flush_cv);
	pthread_cond_broadcast(&rl->space_cv);
	pthread_cond_broadcast(&rl->flusher_cv);
}

int store__cephfs_rlog_put(struct store_rlog *rl, const uint8_t *buf,
			   size_t len, uint64_t lsn)
{
	rados_write_op_t op = rados_create_write_op();
	uint64_t pos = lsn % rl->ring_bytes;
	size_t first = len;
	int rc;

	if (!op) {
		return -ENOMEM;
	}
	if (pos + len > rl->ring_bytes) {
		first = (size_t)(rl->ring_bytes - pos);
	}
	rados_write_op_write(op, (const char *)buf, first,
			     STORE_RLOG_HEADER_BYTES + pos);
	/* The wrapped part in the same op: both or neither land. */
	if (first < len) {
		rados_write_op_write(op, (const char *)buf + first, len - first,
				     STORE_RLOG_HEADER_BYTES);
	}
	rc = rados_write_op_operate(op, rl->io, rl->oid, NULL, 0);
	rados_release_write_op(op);
	store_rlog_put_done(rl, rc);
	return rc < 0 ? rc : 0;
}

int store__cephfs_rlog_put_header(struct store_rlog *rl, const uint8_t *hdr)
{
	int rc = rados_write(rl->io, rl->oid, (const char *)hdr,
			     STORE_RLOG_HEADER_BYTES, 0);

	store_rlog_put_done(rl, rc);
	return rc < 0 ? rc : 0;
}

void store__cephfs_rlog_fail(struct store_rlog *rl, int err, const char *what)
{
	/* Fenced: cephfs_fence.c's line says it (once). */
	if (!rl->err && err == -ESHUTDOWN &&
	    atomic_load(&rl->sc->base.fenced)) {
		rl->err = err;
	} else if (!rl->err) {
		rl->err = err;
		log_error("rlog: %s: %s/%s: %s: %s; stable writes of this "
			  "datastore fail from now on (its records stay for "
			  "the next start)",
			  rl->sc->base.name, rl->pool, rl->oid, what,
			  strerror(-err));
	}
	store__cephfs_rlog_wake_failed(rl);
}

/* Waits until the ring and the batch being filled take @rec_len bytes;
 * lock held.  0 or the log's -errno. */
static int store_rlog_reserve_locked(struct store_rlog *rl, uint32_t rec_len)
{
	for (;;) {
		if (rl->err) {
			return rl->err;
		}
		/* Everything after the head stays until a checkpoint. */
		if (rl->tail_lsn + rec_len > rl->head_lsn + rl->ring_bytes) {
			rl->stats.full_waits++;
			if (rl->ckpt_want < rl->tail_lsn) {
				rl->ckpt_want = rl->tail_lsn;
			}
			pthread_cond_signal(&rl->ckpt_cv);
			pthread_cond_wait(&rl->space_cv, &rl->lock);
			continue;
		}
		if (rl->tail_lsn - rl->buf_lsn + rec_len <=
		    STORE_ILOG_BATCH_BYTES) {
			return 0;
		}
		/* This batch is full: the flush thread takes it. */
		pthread_cond_signal(&rl->flusher_cv);
		pthread_cond_wait(&rl->flush_cv, &rl->lock);
	}
}

/* The stripe of @o's inode (cephfs_rlog.h): Fibonacci hashing. */
static unsigned store_rlog_stripe(const struct cephfs_obj *o)
{
	return (unsigned)((o->ino * UINT64_C(0x9e3779b97f4a7c15)) >> 56) %
	       STORE_RLOG_STRIPES;
}

/* Appends the record of a write of @o's file; lock held.  Its end LSN, or
 * -errno. */
static int64_t store_rlog_append_locked(struct store_rlog *rl,
					struct cephfs_obj *o,
					uint64_t off_bytes, const void *buf,
					uint32_t count)
{
	uint32_t rec_len = store__ilog_rec_len(o->base.fh.len, count);
	int err;

	if (count > STORE_ILOG_DATA_MAX) {
		return -EFBIG;
	}
	err = store_rlog_reserve_locked(rl, rec_len);
	if (err) {
		return err;
	}
	store__ilog_rec_encode(rl->buf[rl->fill] + (rl->tail_lsn - rl->buf_lsn),
			       rl->sb.salt, rl->tail_lsn, &o->base.fh,
			       off_bytes, buf, count);
	rl->tail_lsn += rec_len;
	rl->stats.records++;
	rl->stripe_lsn[store_rlog_stripe(o)] = rl->tail_lsn;
	if (!o->rlog_dirty) {
		o->rlog_dirty = true;
		store__cephfs_obj_ref(store__cephfs_pub(o));
		o->rlog_next = rl->dirty;
		rl->dirty = o;
		rl->ndirty++;
	}
	/* Half full: checkpoint before writers have to wait for one. */
	if (rl->tail_lsn - rl->head_lsn > rl->ring_bytes / 2) {
		pthread_cond_signal(&rl->ckpt_cv);
	}
	pthread_cond_signal(&rl->flusher_cv);
	return (int64_t)rl->tail_lsn;
}

/* Waits until the write of buffer @b (or a checkpoint) made the log
 * durable up to @end; without the lock.  0 or the log's -errno. */
static int store_rlog_wait(struct store_rlog *rl, unsigned b, uint64_t end)
{
	int err;

	if (lsnwait_wait(&rl->durable, b, end)) {
		return 0;
	}
	pthread_mutex_lock(&rl->lock);
	err = rl->err;
	pthread_mutex_unlock(&rl->lock);
	return err;
}

int store__cephfs_rlog_write(struct store_rlog *rl, struct cephfs_obj *o,
			     struct Fh *fh, uint64_t off_bytes, const void *buf,
			     uint32_t count, bool *sync_failed)
{
	pthread_mutex_t *order = &rl->order[store_rlog_stripe(o)];
	unsigned b;
	int64_t end;
	int err;

	/* The file and the log see a file's writes in the same order:
	 * replay puts them back in the order they were acknowledged. */
	pthread_mutex_lock(order);
	err = store__cephfs_write_all(rl->sc, fh, off_bytes, buf, count);
	if (err) {
		pthread_mutex_unlock(order);
		return err;
	}
	pthread_mutex_lock(&rl->lock);
	end = store_rlog_append_locked(rl, o, off_bytes, buf, count);
	b = rl->fill; /* the buffer that took the record */
	pthread_mutex_unlock(order);
	pthread_mutex_unlock(&rl->lock);
	err = end < 0 ? (int)end : store_rlog_wait(rl, b, (uint64_t)end);
	*sync_failed = err != 0;
	return err;
}

bool store__cephfs_rlog_takes(struct store_rlog *rl, uint32_t count)
{
	if (rl->inplace_min_bytes == 0 || count < rl->inplace_min_bytes) {
		return true;
	}
	/* Not under rl->lock: the log's appends hold it. */
	atomic_fetch_add_explicit(&rl->inplace_writes, 1, memory_order_relaxed);
	return false;
}

int store__cephfs_rlog_settle(struct store_rlog *rl, struct cephfs_obj *o)
{
	uint64_t end;
	int err = 0;

	pthread_mutex_lock(&rl->lock);
	end = rl->stripe_lsn[store_rlog_stripe(o)];
	if (end > rl->head_lsn && rl->ckpt_want < end) {
		rl->ckpt_want = end;
		pthread_cond_signal(&rl->ckpt_cv);
	}
	while (!rl->err && end > rl->head_lsn) {
		pthread_cond_wait(&rl->space_cv, &rl->lock);
	}
	if (end > rl->head_lsn) {
		err = rl->err;
	}
	pthread_mutex_unlock(&rl->lock);
	return err;
}

int store__cephfs_rlog_size_begin(struct store_rlog *rl, struct cephfs_obj *o)
{
	pthread_mutex_t *order = &rl->order[store_rlog_stripe(o)];
	int err;

	/* A stable write of the file between the checkpoint and the size
	 * change would be replayed over it after a crash. */
	pthread_mutex_lock(order);
	err = store__cephfs_rlog_settle(rl, o);
	if (err) {
		pthread_mutex_unlock(order);
	}
	return err;
}

void store__cephfs_rlog_size_end(struct store_rlog *rl, struct cephfs_obj *o)
{
	pthread_mutex_unlock(&rl->order[store_rlog_stripe(o)]);
}

void *store__cephfs_rlog_flusher_main(void *arg)
{
	struct store_rlog *rl = arg;

	pthread_mutex_lock(&rl->lock);
	for (;;) {
		if (!rl->err && rl->tail_lsn > rl->buf_lsn) {
			unsigned b = rl->fill;
			uint64_t start = rl->buf_lsn;
			uint64_t end = rl->tail_lsn;
			int err;

			/* Records appended meanwhile go to the other buffer,
			 * free since the last write returned. */
			rl->fill = (rl->fill + 1) % STORE_RLOG_NBUF;
			rl->buf_lsn = end;
			pthread_mutex_unlock(&rl->lock);
			err = store__cephfs_rlog_put(rl, rl->buf[b],
						     end - start, start);
			pthread_mutex_lock(&rl->lock);
			if (err) {
				store__cephfs_rlog_fail(rl, err,
							"log write failed");
				continue;
			}
			rl->flushed_lsn = end;
			rl->stats.flushes++;
			lsnwait_advance(&rl->durable, end);
			/* Writers waiting for a place in a full batch. */
			pthread_cond_broadcast(&rl->flush_cv);
			pthread_mutex_unlock(&rl->lock);
			/* Only the writers of this buffer: those of the one
			 * filling wait for its own write. */
			lsnwait_wake(&rl->durable, b);
			pthread_mutex_lock(&rl->lock);
			continue;
		}
		if (rl->stop) {
			break;
		}
		pthread_cond_wait(&rl->flusher_cv, &rl->lock);
	}
	pthread_mutex_unlock(&rl->lock);
	return NULL;
}

/* Fsyncs the @n files of @files (through their sync groups: the sticky
 * error rule holds) and drops the list's references. */
static int store_rlog_sync_files(struct store_rlog *rl,
				 struct cephfs_obj **files, size_t n)
{
	int first = 0;

	for (size_t i = 0; i < n; i++) {
		struct cephfs_obj *o = files[i];
		struct Fh *fh;
		int err = store__cephfs_obj_io(o, &fh);

		if (!err) {
			err = store__syncgroup_sync(&o->sync, STORE_FILE_SYNC,
						    true, store__cephfs_sync_fh,
						    o);
		}
		if (err && !first) {
			first = err;
			log_error("rlog: %s: checkpoint: fsync of inode %ju "
				  "failed: %s",
				  rl->sc->base.name, (uintmax_t)o->ino,
				  strerror(-err));
		}
		store__cephfs_obj_unref(store__cephfs_pub(o));
	}
	return first;
}

void store__cephfs_rlog_checkpoint_locked(struct store_rlog *rl)
{
	struct store_ilog_super sb = rl->sb;
	uint64_t upto = rl->tail_lsn;
	uint8_t hdr[STORE_RLOG_HEADER_BYTES];
	struct cephfs_obj **files;
	size_t n = 0;
	int err;

	files = malloc((rl->ndirty ? rl->ndirty : 1) * sizeof(*files));
	if (!files) {
		store__cephfs_rlog_fail(rl, -ENOMEM, "checkpoint failed");
		return;
	}
	/* Files written from here on go on a new list: their records lie
	 * after @upto, and their data was written before their record. */
	for (struct cephfs_obj *o = rl->dirty; o; o = o->rlog_next) {
		o->rlog_dirty = false;
		files[n++] = o;
	}
	rl->dirty = NULL;
	rl->ndirty = 0;
	pthread_mutex_unlock(&rl->lock);
	err = store_rlog_sync_files(rl, files, n);
	free(files);
	sb.head_lsn = upto;
	sb.seq++;
	/* Only this thread writes the header once the log is open; the
	 * owner block is set at open and rides along unchanged. */
	if (!err) {
		store__rlog_header_encode(hdr, &sb, &rl->owner);
		err = store__cephfs_rlog_put_header(rl, hdr);
	}
	pthread_mutex_lock(&rl->lock);
	if (err) {
		store__cephfs_rlog_fail(rl, err, "checkpoint failed");
		return;
	}
	rl->sb = sb;
	if (upto > rl->head_lsn) {
		rl->head_lsn = upto;
	}
	rl->stats.checkpoints++;
	/* The records before @upto are in their files, fsynced: stable,
	 * flushed to the log or not. */
	lsnwait_advance(&rl->durable, upto);
	lsnwait_wake_all(&rl->durable);
	pthread_cond_broadcast(&rl->space_cv);
	pthread_cond_broadcast(&rl->flush_cv);
}

static bool store_rlog_ckpt_due(const struct store_rlog *rl, bool timed_out)
{
	if (rl->err || rl->tail_lsn == rl->head_lsn) {
		return false;
	}
	return timed_out || rl->ckpt_want > rl->head_lsn ||
	       rl->tail_lsn - rl->head_lsn > rl->ring_bytes / 2;
}

void *store__cephfs_rlog_ckpt_main(void *arg)
{
	struct store_rlog *rl = arg;
	struct timespec deadline;
	bool timed_out = false;

	pthread_mutex_lock(&rl->lock);
	while (!rl->stop) {
		if (store_rlog_ckpt_due(rl, timed_out)) {
			store__cephfs_rlog_checkpoint_locked(rl);
			timed_out = false;
			continue;
		}
		if (!rl->checkpoint_ms) {
			pthread_cond_wait(&rl->ckpt_cv, &rl->lock);
			continue;
		}
		clock_gettime(CLOCK_REALTIME, &deadline);
		deadline.tv_sec += rl->checkpoint_ms / 1000;
		deadline.tv_nsec += (long)(rl->checkpoint_ms % 1000) * 1000000;
		if (deadline.tv_nsec >= 1000000000) {
			deadline.tv_sec++;
			deadline.tv_nsec -= 1000000000;
		}
		timed_out = pthread_cond_timedwait(&rl->ckpt_cv, &rl->lock,
						   &deadline) == ETIMEDOUT;
	}
	pthread_mutex_unlock(&rl->lock);
	return NULL;
}
