// SPDX-License-Identifier: Apache-2.0
/*
 * ilog: the intent log's writer and flushes (group commit; ilog.h has the
 * protocol).  One mutex guards the state; the batch writes, the fsyncs of
 * a checkpoint (ilog_checkpoint.c) and the superblock write run without
 * it.  LSN l lives at file offset STORE_ILOG_DATA_OFF + l % ring_bytes.
 * Writers copy records into the batch being filled; two flush threads
 * take batches and write them, so that up to two writes are in flight (the
 * device answers two at once about as fast as one: perf/ilog/appendbench
 * and docs/bench.md); a batch counts as flushed only when every older one
 * is, so the stable LSN never skips a batch a crash may have torn.  A
 * batch always starts on a 4 KiB LSN, so the O_DIRECT write is aligned,
 * and ends with a PAD record up to the next one.  The flush threads also
 * call the done hooks of write_async, in LSN order.  A large write synced
 * in place (large, or a sequential stream: store__ilog_inplace_rule)
 * appends at most a SYNCED record (store__ilog_append_synced).
 * Every call local*.c makes (ilog.h) is here, store__ilog_settle too,
 * which asks the checkpoint thread (ilog_checkpoint.c) for a checkpoint.
 * Opening, replay's call and closing are ilog_open.c's.
 */
#include "nfsd/store/ilog/ilog_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "nfsd/base/log.h"
#include "nfsd/store/dring.h"

static uint64_t store_ilog_off(const struct store_ilog *ilog, uint64_t lsn)
{
	return STORE_ILOG_DATA_OFF + lsn % ilog->ring_bytes;
}

int store__ilog_pwrite(int fd, const void *buf, size_t len, uint64_t off)
{
	return store__pwrite_full(fd, buf, len, off);
}

/* Writes @len bytes of the ring from @lsn (split at the ring's end) and,
 * buffered, flushes them. */
static int store_ilog_write_ring(struct store_ilog *ilog, const uint8_t *buf,
				 size_t len, uint64_t lsn)
{
	uint64_t room = ilog->ring_bytes - lsn % ilog->ring_bytes;
	size_t first = len < room ? len : (size_t)room;
	int err;

	if (ilog->write_fn) {
		return ilog->write_fn(ilog->write_arg, ilog->fd, buf, len,
				      store_ilog_off(ilog, lsn));
	}
	err = store__ilog_pwrite(ilog->fd, buf, first,
				 store_ilog_off(ilog, lsn));
	if (!err && first < len) {
		err = store__ilog_pwrite(ilog->fd, buf + first, len - first,
					 STORE_ILOG_DATA_OFF);
	}
	if (!err && !ilog->direct && fdatasync(ilog->fd) != 0) {
		err = -errno;
	}
	return err;
}

/* Keeps the first failure and wakes everyone who waits on the log. */
void store__ilog_fail(struct store_ilog *ilog, int err, const char *what)
{
	if (!ilog->err) {
		ilog->err = err;
		log_error("ilog: %s: %s: %s; stable writes through this log "
			  "fail from now on (its records stay for the next "
			  "start)",
			  ilog->path, what, strerror(-err));
	}
	pthread_cond_broadcast(&ilog->flush_cv);
	pthread_cond_broadcast(&ilog->space_cv);
	pthread_cond_broadcast(&ilog->flusher_cv);
}

/* Retires the written batches at the old end, in order: the stable LSN
 * moves past a batch only when every older one is written too. */
static void store_ilog_retire_locked(struct store_ilog *ilog)
{
	bool moved = false;

	while (!ilog->err && ilog->inflight &&
	       ilog->batch[ilog->oldest].written) {
		struct store_ilog_batch *b = &ilog->batch[ilog->oldest];

		ilog->flushed_lsn = b->end_lsn;
		b->written = false;
		ilog->oldest = (ilog->oldest + 1) % STORE_ILOG_NBATCH;
		ilog->inflight--;
		ilog->stats.flushes++;
		moved = true;
	}
	if (moved && (ilog->waiters || ilog->full_waiters)) {
		pthread_cond_broadcast(&ilog->flush_cv);
	}
}

/* Takes the batch being filled and writes it; called and returns with the
 * lock held (a flush thread, inflight < STORE_ILOG_FLUSHERS), drops it for
 * the write.  Records appended meanwhile go to the next buffer, from the
 * block after this batch. */
static void store_ilog_flush_locked(struct store_ilog *ilog)
{
	struct store_ilog_batch *b = &ilog->batch[ilog->fill];
	uint64_t start = ilog->buf_lsn;
	uint64_t end = ilog->tail_lsn;
	uint64_t padded = (end + STORE_ILOG_BLOCK - 1) &
			  ~(uint64_t)(STORE_ILOG_BLOCK - 1);
	int err;

	if (padded != end && padded - end < STORE_ILOG_HEAD_BYTES) {
		padded += STORE_ILOG_BLOCK;
	}
	if (padded != end) {
		store__ilog_pad_encode(b->buf + (end - start), ilog->sb.salt,
				       end, (uint32_t)(padded - end));
	}
	b->end_lsn = padded;
	b->written = false;
	if (!ilog->inflight) {
		ilog->oldest = ilog->fill;
	}
	ilog->inflight++;
	ilog->fill = (ilog->fill + 1) % STORE_ILOG_NBATCH;
	ilog->buf_lsn = padded;
	ilog->tail_lsn = padded;
	/* No wake-up for the other flush thread: the batch just taken is
	 * all there is, and the next append signals (a wake-up for nothing
	 * cost a context switch per batch). */
	pthread_mutex_unlock(&ilog->lock);
	err = store_ilog_write_ring(ilog, b->buf, (size_t)(padded - start),
				    start);
	pthread_mutex_lock(&ilog->lock);
	if (err) {
		store__ilog_fail(ilog, err, "log write failed");
		return;
	}
	b->written = true;
	ilog->stats.bytes += padded - start;
	store_ilog_retire_locked(ilog);
	/* This thread calls the done hooks next (flusher_main), or the one
	 * calling them now finds these when it is done: no wake-up. */
}

/* Waits until the ring and the batch being filled have room for a record
 * of @rec_len bytes, lock held; with @may_wait false returns -EAGAIN where
 * it would wait.  0 or -errno (a failed log). */
static int store_ilog_reserve_locked(struct store_ilog *ilog, uint32_t rec_len,
				     bool may_wait)
{
	for (;;) {
		if (ilog->err) {
			return ilog->err;
		}
		/* The ring keeps everything after the head until the next
		 * checkpoint: full, that checkpoint frees it. */
		if (ilog->tail_lsn + rec_len + STORE_ILOG_PAD_MAX >
		    ilog->head_lsn + ilog->ring_bytes) {
			ilog->stats.full_waits++;
			if (ilog->ckpt_want < ilog->tail_lsn) {
				ilog->ckpt_want = ilog->tail_lsn;
			}
			pthread_cond_signal(&ilog->ckpt_cv);
			if (!may_wait) {
				return -EAGAIN;
			}
			pthread_cond_wait(&ilog->space_cv, &ilog->lock);
			continue;
		}
		if (ilog->tail_lsn - ilog->buf_lsn + rec_len +
			    STORE_ILOG_PAD_MAX <=
		    STORE_ILOG_BATCH_BYTES) {
			return 0;
		}
		/* This batch is full: the flush threads take it when a
		 * buffer is free. */
		pthread_cond_signal(&ilog->flusher_cv);
		if (!may_wait) {
			return -EAGAIN;
		}
		ilog->full_waiters++;
		pthread_cond_wait(&ilog->flush_cv, &ilog->lock);
		ilog->full_waiters--;
	}
}

/* Where the next record goes in the batch being filled. */
static uint8_t *store_ilog_tail_buf(struct store_ilog *ilog)
{
	return ilog->batch[ilog->fill].buf + (ilog->tail_lsn - ilog->buf_lsn);
}

/* Counts the record of @rec_len just encoded at the tail and moves the
 * tail past it; lock held.  Its end LSN. */
static uint64_t store_ilog_advance_locked(struct store_ilog *ilog,
					  uint32_t rec_len)
{
	ilog->tail_lsn += rec_len;
	ilog->stats.records++;
	/* Half full: checkpoint before writers have to wait for one. */
	if (ilog->tail_lsn - ilog->head_lsn > ilog->ring_bytes / 2) {
		pthread_cond_signal(&ilog->ckpt_cv);
	}
	return ilog->tail_lsn;
}

/* Appends the record with the lock held; with @may_wait false returns
 * -EAGAIN where it would wait for space.  The end LSN, or -errno. */
static int64_t store_ilog_append_locked(struct store_ilog *ilog,
					struct local_obj *obj,
					uint64_t off_bytes, const void *buf,
					uint32_t count, bool may_wait)
{
	uint32_t rec_len = store__ilog_rec_len(obj->base.fh.len, count);
	uint64_t end;
	int err;

	if (count > STORE_ILOG_DATA_MAX) {
		return -EFBIG;
	}
	err = store_ilog_reserve_locked(ilog, rec_len, may_wait);
	if (err) {
		return err;
	}
	store__ilog_rec_encode(store_ilog_tail_buf(ilog), ilog->sb.salt,
			       ilog->tail_lsn, &obj->base.fh, off_bytes, buf,
			       count);
	end = store_ilog_advance_locked(ilog, rec_len);
	atomic_store(&obj->ilog_lsn, end);
	if (!obj->ilog_dirty) {
		obj->ilog_dirty = true;
		store__obj_ref(obj);
		obj->ilog_next = ilog->dirty;
		ilog->dirty = obj;
		ilog->ndirty++;
	}
	return (int64_t)end;
}

/* Appends the SYNCED record when the file has records replay could
 * write over these bytes: its end LSN, 0 when none was needed, or the
 * log's -errno.  Called and returns with the lock. */
static int64_t store_ilog_synced_locked(struct store_ilog *ilog,
					struct local_obj *obj,
					uint64_t off_bytes, uint32_t len_bytes,
					uint64_t upto_lsn, bool direct)
{
	uint32_t rec_len = store__ilog_synced_len(obj->base.fh.len);
	int64_t end = 0;
	int err;

	ilog->stats.inplace_writes++;
	ilog->stats.direct_writes += direct;
	err = ilog->err;
	/* Records of the file before these bytes and after the head would
	 * be replayed over them: the record says they are older.  None
	 * (all checkpointed, or never logged): nothing to say. */
	if (!err && upto_lsn > ilog->head_lsn) {
		err = store_ilog_reserve_locked(ilog, rec_len, true);
	}
	if (!err && upto_lsn > ilog->head_lsn) {
		store__ilog_synced_encode(store_ilog_tail_buf(ilog),
					  ilog->sb.salt, ilog->tail_lsn,
					  &obj->base.fh, off_bytes, len_bytes,
					  upto_lsn);
		end = (int64_t)store_ilog_advance_locked(ilog, rec_len);
		ilog->stats.synced_records++;
		pthread_cond_signal(&ilog->flusher_cv);
	}
	return err ? err : end;
}

int64_t store__ilog_append_synced(struct store_ilog *ilog,
				  struct local_obj *obj, uint64_t off_bytes,
				  uint32_t len_bytes, uint64_t upto_lsn,
				  bool direct)
{
	int64_t end;

	pthread_mutex_lock(&ilog->lock);
	end = store_ilog_synced_locked(ilog, obj, off_bytes, len_bytes,
				       upto_lsn, direct);
	pthread_mutex_unlock(&ilog->lock);
	return end;
}

/* Queues @w to be done when a flush reaches @end.  With the lock. */
static void store_ilog_async_queue_locked(struct store_ilog *ilog, uint64_t end,
					  struct store_write_wait *w,
					  store_write_done_fn done, void *arg)
{
	w->next = NULL;
	w->end_lsn = end;
	w->done = done;
	w->arg = arg;
	if (ilog->async_tail) {
		ilog->async_tail->next = w;
	} else {
		ilog->async_head = w;
	}
	ilog->async_tail = w;
	pthread_cond_signal(&ilog->flusher_cv);
}

int store__ilog_append_synced_async(struct store_ilog *ilog,
				    struct local_obj *obj, uint64_t off_bytes,
				    uint32_t len_bytes, uint64_t upto_lsn,
				    bool direct, struct store_write_wait *w,
				    store_write_done_fn done, void *arg)
{
	int64_t end;

	pthread_mutex_lock(&ilog->lock);
	end = store_ilog_synced_locked(ilog, obj, off_bytes, len_bytes,
				       upto_lsn, direct);
	if (end > 0) {
		store_ilog_async_queue_locked(ilog, (uint64_t)end, w, done,
					      arg);
	}
	pthread_mutex_unlock(&ilog->lock);
	return end < 0 ? (int)end : end == 0;
}

void store_ilog_set_inplace_min(struct store_ilog *ilog, uint32_t min_bytes)
{
	atomic_store(&ilog->inplace_min, min_bytes);
}

void store_ilog_set_inplace(struct store_ilog *ilog, uint32_t min_bytes,
			    uint32_t seq_min_bytes)
{
	atomic_store(&ilog->inplace_min, min_bytes);
	atomic_store(&ilog->inplace_seq_min, seq_min_bytes);
}

void store_ilog_set_inplace_direct(struct store_ilog *ilog, bool on)
{
	atomic_store(&ilog->inplace_direct, on);
}

bool store__ilog_inplace_direct(const struct store_ilog *ilog)
{
	return atomic_load(&ilog->inplace_direct);
}

int store_ilog_set_inplace_uring(struct store_ilog *ilog, bool on)
{
	if (!on) {
		store_dring_free(ilog->dring);
		ilog->dring = NULL;
		return 0;
	}
	return ilog->dring ? 0 : store_dring_new(&ilog->dring);
}

struct store_dring *store__ilog_dring(const struct store_ilog *ilog)
{
	return atomic_load(&ilog->inplace_direct) ? ilog->dring : NULL;
}

bool store__ilog_inplace_rule(uint32_t min_bytes, uint32_t seq_min_bytes,
			      uint64_t last_end, uint64_t off_bytes,
			      uint32_t count)
{
	if (min_bytes && count >= min_bytes) {
		return true;
	}
	/* Near where the last ended, not exactly: a stream's WRITEs in
	 * flight reach the file out of order (loops, work threads). */
	return seq_min_bytes && count >= seq_min_bytes &&
	       off_bytes + STORE_ILOG_SEQ_WINDOW >= last_end &&
	       off_bytes <= last_end + STORE_ILOG_SEQ_WINDOW;
}

bool store__ilog_inplace(const struct store_ilog *ilog, uint64_t last_end,
			 uint64_t off_bytes, uint32_t count)
{
	return store__ilog_inplace_rule(atomic_load(&ilog->inplace_min),
					atomic_load(&ilog->inplace_seq_min),
					last_end, off_bytes, count);
}

int64_t store__ilog_append(struct store_ilog *ilog, struct local_obj *obj,
			   uint64_t off_bytes, const void *buf, uint32_t count)
{
	int64_t end;

	pthread_mutex_lock(&ilog->lock);
	end = store_ilog_append_locked(ilog, obj, off_bytes, buf, count, true);
	if (end > 0) {
		pthread_cond_signal(&ilog->flusher_cv);
	}
	pthread_mutex_unlock(&ilog->lock);
	return end;
}

int store__ilog_append_async(struct store_ilog *ilog, struct local_obj *obj,
			     uint64_t off_bytes, const void *buf,
			     uint32_t count, struct store_write_wait *w,
			     store_write_done_fn done, void *arg)
{
	int64_t end;

	pthread_mutex_lock(&ilog->lock);
	end = store_ilog_append_locked(ilog, obj, off_bytes, buf, count, false);
	if (end < 0) {
		pthread_mutex_unlock(&ilog->lock);
		return (int)end;
	}
	store_ilog_async_queue_locked(ilog, (uint64_t)end, w, done, arg);
	pthread_mutex_unlock(&ilog->lock);
	return 0;
}

int store__ilog_wait(struct store_ilog *ilog, int64_t end_lsn)
{
	uint64_t end = (uint64_t)end_lsn;
	int err;

	pthread_mutex_lock(&ilog->lock);
	ilog->waiters++;
	/* A checkpoint past the record made it stable in its file. */
	while (!ilog->err && ilog->flushed_lsn < end && ilog->head_lsn < end) {
		pthread_cond_signal(&ilog->flusher_cv);
		pthread_cond_wait(&ilog->flush_cv, &ilog->lock);
	}
	ilog->waiters--;
	err = ilog->flushed_lsn >= end || ilog->head_lsn >= end ? 0 : ilog->err;
	pthread_mutex_unlock(&ilog->lock);
	return err;
}

static bool store_ilog_fh_equal(const struct store_fh *a,
				const struct store_fh *b)
{
	return a->len == b->len && memcmp(a->data, b->data, a->len) == 0;
}

struct local_obj *store__ilog_held(struct store_ilog *ilog,
				   const struct store_fh *fh)
{
	struct local_obj *found = NULL;

	pthread_mutex_lock(&ilog->lock);
	for (struct local_obj *o = ilog->dirty; o && !found; o = o->ilog_next) {
		if (store_ilog_fh_equal(&o->base.fh, fh)) {
			found = o;
		}
	}
	for (size_t i = 0; i < ilog->nckpt && !found; i++) {
		if (store_ilog_fh_equal(&ilog->ckpt_files[i]->base.fh, fh)) {
			found = ilog->ckpt_files[i];
		}
	}
	if (found) {
		store__obj_ref(found);
	}
	pthread_mutex_unlock(&ilog->lock);
	return found;
}

int store__ilog_settle(struct store_ilog *ilog, struct local_obj *obj)
{
	uint64_t end = atomic_load(&obj->ilog_lsn);
	int err = 0;

	pthread_mutex_lock(&ilog->lock);
	if (end > ilog->head_lsn && ilog->ckpt_want < end) {
		ilog->ckpt_want = end;
		pthread_cond_signal(&ilog->ckpt_cv);
	}
	while (!ilog->err && end > ilog->head_lsn) {
		pthread_cond_wait(&ilog->space_cv, &ilog->lock);
	}
	if (end > ilog->head_lsn) {
		err = ilog->err;
	}
	pthread_mutex_unlock(&ilog->lock);
	return err;
}

/* Whether the first queued write_async is done: flushed, checkpointed, or
 * failed. */
static bool store_ilog_async_due(const struct store_ilog *ilog)
{
	const struct store_write_wait *w = ilog->async_head;

	return w && (ilog->err || w->end_lsn <= ilog->flushed_lsn ||
		     w->end_lsn <= ilog->head_lsn);
}

/* Calls the done hooks of the queued writes that are done, without the
 * lock (they hand replies to the loops); called and returns with it. */
static void store_ilog_async_finish(struct store_ilog *ilog)
{
	struct store_write_wait *list = NULL, **tailp = &list;

	while (store_ilog_async_due(ilog)) {
		struct store_write_wait *w = ilog->async_head;
		bool ok = w->end_lsn <= ilog->flushed_lsn ||
			  w->end_lsn <= ilog->head_lsn;

		ilog->async_head = w->next;
		if (!ilog->async_head) {
			ilog->async_tail = NULL;
		}
		/* The outcome travels in end_lsn: 0 stable, else the error. */
		w->end_lsn = ok ? 0 : (uint64_t)(-ilog->err);
		w->next = NULL;
		*tailp = w;
		tailp = &w->next;
	}
	ilog->async_calling = true;
	pthread_mutex_unlock(&ilog->lock);
	while (list) {
		struct store_write_wait *w = list;
		int err = -(int)w->end_lsn;

		list = w->next;
		w->done(w->arg, err);
	}
	pthread_mutex_lock(&ilog->lock);
	ilog->async_calling = false;
	if (!ilog->async_head) {
		pthread_cond_broadcast(&ilog->idle_cv);
	}
}

void *store__ilog_flusher_main(void *arg)
{
	struct store_ilog *ilog = arg;

	pthread_mutex_lock(&ilog->lock);
	for (;;) {
		/* One thread calls done hooks at a time: they stay in order. */
		if (!ilog->async_calling && store_ilog_async_due(ilog)) {
			store_ilog_async_finish(ilog);
			continue;
		}
		/* Every record has a writer waiting: flush what there is. */
		if (!ilog->err && ilog->tail_lsn > ilog->buf_lsn &&
		    ilog->inflight < STORE_ILOG_FLUSHERS) {
			store_ilog_flush_locked(ilog);
			continue;
		}
		if (ilog->stop && (!ilog->inflight || ilog->err) &&
		    !ilog->async_calling && (!ilog->async_head || ilog->err) &&
		    (ilog->tail_lsn == ilog->buf_lsn || ilog->err)) {
			break;
		}
		pthread_cond_wait(&ilog->flusher_cv, &ilog->lock);
	}
	/* The other one may be waiting for the same end. */
	pthread_cond_broadcast(&ilog->flusher_cv);
	pthread_mutex_unlock(&ilog->lock);
	return NULL;
}

void store_ilog_drain(struct store_ilog *ilog)
{
	if (!ilog) {
		return;
	}
	/* A direct write's end may queue a SYNCED record's wait. */
	if (ilog->dring) {
		store_dring_drain(ilog->dring);
	}
	pthread_mutex_lock(&ilog->lock);
	while (ilog->async_head || ilog->async_calling) {
		pthread_cond_signal(&ilog->flusher_cv);
		pthread_cond_wait(&ilog->idle_cv, &ilog->lock);
	}
	pthread_mutex_unlock(&ilog->lock);
}

void store_ilog_stats(struct store_ilog *ilog, struct store_ilog_stats *out)
{
	pthread_mutex_lock(&ilog->lock);
	*out = ilog->stats;
	pthread_mutex_unlock(&ilog->lock);
	if (ilog->dring) {
		struct store_dring_stats rs;

		store_dring_stats(ilog->dring, &rs);
		out->ring_writes = rs.writes;
		out->ring_writevs = rs.writevs;
	}
}

const char *store_ilog_path(const struct store_ilog *ilog)
{
	return ilog->path;
}

uint32_t store__ilog_waiters(struct store_ilog *ilog)
{
	uint32_t n;

	pthread_mutex_lock(&ilog->lock);
	n = ilog->waiters;
	pthread_mutex_unlock(&ilog->lock);
	return n;
}

void store__ilog_write_hook(struct store_ilog *ilog, store_ilog_write_fn fn,
			    void *arg)
{
	ilog->write_fn = fn;
	ilog->write_arg = arg;
}
