/*
 * ilog: the intent log's writer, flush (group commit) and checkpoints (see
 * ilog.h for the protocol).  One mutex guards the state; the batch write,
 * the fsyncs of a checkpoint and the superblock write run without it.
 * LSN l lives at file offset STORE_ILOG_DATA_OFF + l % ring_bytes.
 * Writers copy records into the batch being filled; two flush threads
 * take batches and write them, so that up to two writes are in flight (the
 * device answers two at once about as fast as one: perf/ilog/appendbench
 * and docs/bench.md); a batch counts as flushed only when every older one
 * is, so the stable LSN never skips a batch a crash may have torn.  A
 * batch always starts on a 4 KiB LSN, so the O_DIRECT write is aligned,
 * and ends with a PAD record up to the next one.  The flush threads also
 * call the done hooks of write_async, in LSN order.
 */
#include "nfsd/store/store_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "nfsd/log.h"

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
	struct store_obj *dirty; /* files with records since the head */
	size_t ndirty;
	int err; /* sticky: the first failure */

	struct store_ilog_super sb; /* the slot last written */
	uint8_t *super_block; /* STORE_ILOG_BLOCK, aligned: both slots */

	struct store_ilog_stats stats;
};

/* Worst case a record's batch still needs: its pad to the next block. */
#define STORE_ILOG_PAD_MAX (STORE_ILOG_BLOCK + STORE_ILOG_HEAD_BYTES)

static uint64_t store_ilog_off(const struct store_ilog *ilog, uint64_t lsn)
{
	return STORE_ILOG_DATA_OFF + lsn % ilog->ring_bytes;
}

static int store_ilog_pwrite(int fd, const void *buf, size_t len, uint64_t off)
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
	err = store_ilog_pwrite(ilog->fd, buf, first,
				store_ilog_off(ilog, lsn));
	if (!err && first < len) {
		err = store_ilog_pwrite(ilog->fd, buf + first, len - first,
					STORE_ILOG_DATA_OFF);
	}
	if (!err && !ilog->direct && fdatasync(ilog->fd) != 0) {
		err = -errno;
	}
	return err;
}

/* Keeps the first failure and wakes everyone who waits on the log. */
static void store_ilog_fail(struct store_ilog *ilog, int err, const char *what)
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
	/* The other flush thread may take the next batch meanwhile. */
	pthread_cond_signal(&ilog->flusher_cv);
	pthread_mutex_unlock(&ilog->lock);
	err = store_ilog_write_ring(ilog, b->buf, (size_t)(padded - start),
				    start);
	pthread_mutex_lock(&ilog->lock);
	if (err) {
		store_ilog_fail(ilog, err, "log write failed");
		return;
	}
	b->written = true;
	store_ilog_retire_locked(ilog);
	if (ilog->async_head) {
		pthread_cond_signal(&ilog->flusher_cv);
	}
}

/* Appends the record with the lock held; with @may_wait false returns
 * -EAGAIN where it would wait for space.  The end LSN, or -errno. */
static int64_t store_ilog_append_locked(struct store_ilog *ilog,
					struct store_obj *obj,
					uint64_t off_bytes, const void *buf,
					uint32_t count, bool may_wait)
{
	uint32_t rec_len = store__ilog_rec_len(obj->fh.len, count);
	uint64_t end;

	if (count > STORE_ILOG_DATA_MAX) {
		return -EFBIG;
	}
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
			break;
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
	store__ilog_rec_encode(
		ilog->batch[ilog->fill].buf + (ilog->tail_lsn - ilog->buf_lsn),
		ilog->sb.salt, ilog->tail_lsn, &obj->fh, off_bytes, buf, count);
	ilog->tail_lsn += rec_len;
	end = ilog->tail_lsn;
	atomic_store(&obj->ilog_lsn, end);
	if (!obj->ilog_dirty) {
		obj->ilog_dirty = true;
		store__obj_ref(obj);
		obj->ilog_next = ilog->dirty;
		ilog->dirty = obj;
		ilog->ndirty++;
	}
	ilog->stats.records++;
	/* Half full: checkpoint before writers have to wait for one. */
	if (ilog->tail_lsn - ilog->head_lsn > ilog->ring_bytes / 2) {
		pthread_cond_signal(&ilog->ckpt_cv);
	}
	return (int64_t)end;
}

int64_t store__ilog_append(struct store_ilog *ilog, struct store_obj *obj,
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

int store__ilog_append_async(struct store_ilog *ilog, struct store_obj *obj,
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
	w->next = NULL;
	w->end_lsn = (uint64_t)end;
	w->done = done;
	w->arg = arg;
	if (ilog->async_tail) {
		ilog->async_tail->next = w;
	} else {
		ilog->async_head = w;
	}
	ilog->async_tail = w;
	pthread_cond_signal(&ilog->flusher_cv);
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

int store__ilog_settle(struct store_ilog *ilog, struct store_obj *obj)
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

/* Writes the superblock slot for @sb (seq % 2), keeping the other. */
static int store_ilog_super_write(struct store_ilog *ilog,
				  const struct store_ilog_super *sb)
{
	int err;

	store__ilog_super_encode(
		ilog->super_block + (sb->seq % 2) * STORE_ILOG_SUPER_SLOT, sb);
	err = store_ilog_pwrite(ilog->fd, ilog->super_block, STORE_ILOG_BLOCK,
				0);
	if (!err && !ilog->direct && fdatasync(ilog->fd) != 0) {
		err = -errno;
	}
	return err;
}

/* store_sync_fn of a checkpoint: fsync, so a size a write grew is stable. */
static int store_ilog_sync_fd(void *arg, enum store_stable level)
{
	(void)level;
	return fsync((int)(intptr_t)arg) != 0 ? -errno : 0;
}

/* Fsyncs the @n files of @files and drops the list's references. */
static int store_ilog_sync_files(struct store_ilog *ilog,
				 struct store_obj **files, size_t n)
{
	int first = 0;

	for (size_t i = 0; i < n; i++) {
		struct store_obj *obj = files[i];
		int fd = atomic_load(&obj->io_fd);
		int err;

		/* Through the file's group: its sticky error rule holds. */
		err = store__syncgroup_sync(&obj->sync, STORE_FILE_SYNC, true,
					    store_ilog_sync_fd,
					    (void *)(intptr_t)fd);
		if (err && !first) {
			first = err;
			log_error("ilog: %s: checkpoint: fsync of inode %ju "
				  "failed: %s",
				  ilog->path, (uintmax_t)obj->ino,
				  strerror(-err));
		}
		store__obj_unref(obj);
	}
	return first;
}

/* One checkpoint up to the current tail; called and returns with the lock
 * held. */
static void store_ilog_checkpoint_locked(struct store_ilog *ilog)
{
	struct store_ilog_super sb = ilog->sb;
	uint64_t upto = ilog->tail_lsn;
	struct store_obj **files;
	size_t n = 0;
	int err;

	/* Taken out of the list now: a file written from here on goes on a
	 * new one (its ilog_next changes), its records lie after @upto. */
	files = malloc((ilog->ndirty ? ilog->ndirty : 1) * sizeof(*files));
	if (!files) {
		store_ilog_fail(ilog, -ENOMEM, "checkpoint failed");
		return;
	}
	for (struct store_obj *o = ilog->dirty; o; o = o->ilog_next) {
		o->ilog_dirty = false;
		files[n++] = o;
	}
	ilog->dirty = NULL;
	ilog->ndirty = 0;
	pthread_mutex_unlock(&ilog->lock);
	err = store_ilog_sync_files(ilog, files, n);
	free(files);
	sb.head_lsn = upto;
	sb.seq++;
	if (!err) {
		err = store_ilog_super_write(ilog, &sb);
	}
	pthread_mutex_lock(&ilog->lock);
	if (err) {
		store_ilog_fail(ilog, err, "checkpoint failed");
		return;
	}
	ilog->sb = sb;
	if (upto > ilog->head_lsn) {
		ilog->head_lsn = upto;
	}
	ilog->stats.checkpoints++;
	pthread_cond_broadcast(&ilog->space_cv);
	if (ilog->waiters) {
		pthread_cond_broadcast(&ilog->flush_cv);
	}
	if (ilog->async_head) {
		pthread_cond_signal(&ilog->flusher_cv);
	}
}

static bool store_ilog_ckpt_due(const struct store_ilog *ilog, bool timed_out)
{
	if (ilog->err || ilog->tail_lsn == ilog->head_lsn) {
		return false;
	}
	return timed_out || ilog->ckpt_want > ilog->head_lsn ||
	       ilog->tail_lsn - ilog->head_lsn > ilog->ring_bytes / 2;
}

static void *store_ilog_thread(void *arg)
{
	struct store_ilog *ilog = arg;
	struct timespec deadline;
	bool timed_out = false;

	pthread_mutex_lock(&ilog->lock);
	while (!ilog->stop) {
		if (store_ilog_ckpt_due(ilog, timed_out)) {
			store_ilog_checkpoint_locked(ilog);
			timed_out = false;
			continue;
		}
		if (!ilog->checkpoint_ms) {
			pthread_cond_wait(&ilog->ckpt_cv, &ilog->lock);
			continue;
		}
		clock_gettime(CLOCK_REALTIME, &deadline);
		deadline.tv_sec += ilog->checkpoint_ms / 1000;
		deadline.tv_nsec +=
			(long)(ilog->checkpoint_ms % 1000) * 1000000;
		if (deadline.tv_nsec >= 1000000000) {
			deadline.tv_sec++;
			deadline.tv_nsec -= 1000000000;
		}
		timed_out = pthread_cond_timedwait(&ilog->ckpt_cv, &ilog->lock,
						   &deadline) == ETIMEDOUT;
	}
	pthread_mutex_unlock(&ilog->lock);
	return NULL;
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

static void *store_ilog_flusher(void *arg)
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
	pthread_mutex_lock(&ilog->lock);
	while (ilog->async_head || ilog->async_calling) {
		pthread_cond_signal(&ilog->flusher_cv);
		pthread_cond_wait(&ilog->idle_cv, &ilog->lock);
	}
	pthread_mutex_unlock(&ilog->lock);
}

void store__ilog_stats(struct store_ilog *ilog, struct store_ilog_stats *out)
{
	pthread_mutex_lock(&ilog->lock);
	*out = ilog->stats;
	pthread_mutex_unlock(&ilog->lock);
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

/* ---- open and close ------------------------------------------------------ */

/* Stops both threads; the flusher first answers every queued write. */
static void store_ilog_thread_stop(struct store_ilog *ilog)
{
	pthread_mutex_lock(&ilog->lock);
	ilog->stop = true;
	pthread_cond_signal(&ilog->ckpt_cv);
	pthread_cond_broadcast(&ilog->flusher_cv);
	pthread_mutex_unlock(&ilog->lock);
	for (unsigned i = 0; i < ilog->nflushers; i++) {
		pthread_join(ilog->flusher[i], NULL);
	}
	ilog->nflushers = 0;
	if (ilog->thread_started) {
		pthread_join(ilog->thread, NULL);
		ilog->thread_started = false;
	}
}

static void store_ilog_err(char *errbuf, size_t errlen, const char *path,
			   const char *what, int err)
{
	if (errbuf && errlen) {
		snprintf(errbuf, errlen, "intent_log %s: %s: %s", path, what,
			 strerror(-err));
	}
}

/* Reads the better of the two superblock slots: 0, or -ENOENT (neither
 * is valid: a new or foreign file). */
static int store_ilog_super_read(int fd, struct store_ilog_super *out)
{
	uint8_t block[STORE_ILOG_BLOCK];
	struct store_ilog_super s[2];
	bool ok[2];
	size_t done = 0;
	int err;

	err = store__pread_full(fd, block, sizeof(block), 0, &done);
	if (err) {
		return err;
	}
	if (done < sizeof(block)) {
		return -ENOENT;
	}
	for (int i = 0; i < 2; i++) {
		ok[i] = store__ilog_super_decode(
				block + i * STORE_ILOG_SUPER_SLOT,
				STORE_ILOG_SUPER_BYTES, &s[i]) == 0;
	}
	if (!ok[0] && !ok[1]) {
		return -ENOENT;
	}
	*out = ok[0] && (!ok[1] || s[0].seq > s[1].seq) ? s[0] : s[1];
	return 0;
}

/* Sizes the file for a ring of ilog->ring_bytes and writes it once with
 * zeros, so that later O_DIRECT writes change no extent (no journal). */
static int store_ilog_format(struct store_ilog *ilog, int fd)
{
	uint64_t total = STORE_ILOG_DATA_OFF + ilog->ring_bytes;
	struct stat sb;
	uint8_t *zero;
	int err = 0;

	if (fstat(fd, &sb) != 0) {
		return -errno;
	}
	if ((uint64_t)sb.st_size == total) {
		return 0;
	}
	if (ftruncate(fd, 0) != 0) {
		return -errno;
	}
	zero = calloc(1, 1u << 20);
	if (!zero) {
		return -ENOMEM;
	}
	for (uint64_t off = 0; off < total && !err; off += 1u << 20) {
		size_t n = total - off < (1u << 20) ? (size_t)(total - off)
						    : (1u << 20);

		err = store__pwrite_full(fd, zero, n, off);
	}
	free(zero);
	if (!err && fsync(fd) != 0) {
		err = -errno;
	}
	return err;
}

static void store_ilog_free(struct store_ilog *ilog)
{
	if (ilog->fd >= 0) {
		close(ilog->fd);
	}
	for (int i = 0; i < STORE_ILOG_NBATCH; i++) {
		free(ilog->batch[i].buf);
	}
	free(ilog->super_block);
	pthread_cond_destroy(&ilog->idle_cv);
	pthread_cond_destroy(&ilog->flusher_cv);
	pthread_cond_destroy(&ilog->ckpt_cv);
	pthread_cond_destroy(&ilog->space_cv);
	pthread_cond_destroy(&ilog->flush_cv);
	pthread_mutex_destroy(&ilog->lock);
	free(ilog);
}

static int store_ilog_alloc(const char *path, uint64_t ring_bytes,
			    uint32_t checkpoint_ms, struct store_ilog **out)
{
	struct store_ilog *ilog = calloc(1, sizeof(*ilog));

	if (!ilog) {
		return -ENOMEM;
	}
	ilog->fd = -1;
	snprintf(ilog->path, sizeof(ilog->path), "%s", path);
	ilog->ring_bytes = ring_bytes;
	ilog->checkpoint_ms = checkpoint_ms;
	pthread_mutex_init(&ilog->lock, NULL);
	pthread_cond_init(&ilog->flush_cv, NULL);
	pthread_cond_init(&ilog->space_cv, NULL);
	pthread_cond_init(&ilog->ckpt_cv, NULL);
	pthread_cond_init(&ilog->flusher_cv, NULL);
	pthread_cond_init(&ilog->idle_cv, NULL);
	for (int i = 0; i < STORE_ILOG_NBATCH; i++) {
		if (posix_memalign((void **)&ilog->batch[i].buf,
				   STORE_ILOG_BLOCK, STORE_ILOG_BATCH_BYTES)) {
			store_ilog_free(ilog);
			return -ENOMEM;
		}
	}
	if (posix_memalign((void **)&ilog->super_block, STORE_ILOG_BLOCK,
			   STORE_ILOG_BLOCK)) {
		store_ilog_free(ilog);
		return -ENOMEM;
	}
	memset(ilog->super_block, 0, STORE_ILOG_BLOCK);
	*out = ilog;
	return 0;
}

/* Replays what @fd holds after its checkpoint, if it is a log. */
static int store_ilog_recover(struct store_ilog *ilog, int fd,
			      struct store_ilog_super *old,
			      struct store *const *stores, size_t nstores)
{
	int err = store_ilog_super_read(fd, old);

	if (err == -ENOENT) {
		old->seq = 0;
		return 0;
	}
	if (err) {
		return err;
	}
	return store__ilog_replay(ilog->path, fd, old, stores, nstores,
				  &ilog->stats.replayed,
				  &ilog->stats.replay_skipped);
}

int store_ilog_open(const char *path, uint64_t ring_bytes,
		    uint32_t checkpoint_ms, struct store *const *stores,
		    size_t nstores, struct store_ilog **out, char *errbuf,
		    size_t errlen)
{
	struct store_ilog_super old;
	struct store_ilog *ilog;
	int rfd;
	int err;

	if (ring_bytes < STORE_ILOG_RING_MIN ||
	    ring_bytes > STORE_ILOG_RING_MAX || ring_bytes % STORE_ILOG_BLOCK) {
		store_ilog_err(errbuf, errlen, path, "ring size", -EINVAL);
		return -EINVAL;
	}
	err = store_ilog_alloc(path, ring_bytes, checkpoint_ms, &ilog);
	if (err) {
		store_ilog_err(errbuf, errlen, path, "alloc", err);
		return err;
	}
	/* Replay reads through the page cache: O_DIRECT wants aligned
	 * buffers and records are not. */
	rfd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (rfd < 0) {
		err = -errno;
		store_ilog_err(errbuf, errlen, path, "open", err);
		goto out_free;
	}
	err = store_ilog_recover(ilog, rfd, &old, stores, nstores);
	if (err) {
		store_ilog_err(errbuf, errlen, path, "replay", err);
		goto out_rfd;
	}
	err = store_ilog_format(ilog, rfd);
	if (err) {
		store_ilog_err(errbuf, errlen, path, "format", err);
		goto out_rfd;
	}
	ilog->fd = open(path, O_RDWR | O_CLOEXEC | O_DIRECT | O_DSYNC);
	ilog->direct = ilog->fd >= 0;
	if (ilog->fd < 0) {
		/* tmpfs and some others refuse O_DIRECT. */
		ilog->fd = open(path, O_RDWR | O_CLOEXEC);
	}
	if (ilog->fd < 0) {
		err = -errno;
		store_ilog_err(errbuf, errlen, path, "open", err);
		goto out_rfd;
	}
	/* A new salt: nothing of this or an older run matches it, so the
	 * ring needs no clearing. */
	if (getrandom(&ilog->sb.salt, sizeof(ilog->sb.salt), 0) !=
	    sizeof(ilog->sb.salt)) {
		err = -EIO;
		store_ilog_err(errbuf, errlen, path, "getrandom", err);
		goto out_rfd;
	}
	ilog->sb.head_lsn = 0;
	ilog->sb.seq = old.seq + 1;
	ilog->sb.ring_bytes = ring_bytes;
	err = store_ilog_super_write(ilog, &ilog->sb);
	if (!err && ilog->direct) {
		/* The zeros and the superblock went through the page cache
		 * of rfd too; make them stable before the ring is used. */
		err = fsync(rfd) != 0 ? -errno : 0;
	}
	if (err) {
		store_ilog_err(errbuf, errlen, path, "superblock", err);
		goto out_rfd;
	}
	close(rfd);
	err = pthread_create(&ilog->thread, NULL, store_ilog_thread, ilog);
	if (err) {
		err = -err;
		store_ilog_err(errbuf, errlen, path, "thread", err);
		goto out_free;
	}
	ilog->thread_started = true;
	for (int i = 0; i < STORE_ILOG_FLUSHERS; i++) {
		err = pthread_create(&ilog->flusher[i], NULL,
				     store_ilog_flusher, ilog);
		if (err) {
			err = -err;
			store_ilog_err(errbuf, errlen, path, "thread", err);
			store_ilog_thread_stop(ilog);
			store_ilog_free(ilog);
			return err;
		}
		ilog->nflushers++;
	}
	log_info("ilog: %s: %" PRIu64 " MiB ring, %s, checkpoint every %u ms; "
		 "replayed %" PRIu64 " records (%" PRIu64 " skipped)",
		 path, ring_bytes >> 20,
		 ilog->direct ? "O_DIRECT|O_DSYNC batches, 2 in flight"
			      : "buffered batches + fdatasync, 2 in flight",
		 checkpoint_ms, ilog->stats.replayed,
		 ilog->stats.replay_skipped);
	for (size_t i = 0; i < nstores; i++) {
		stores[i]->ilog = ilog;
	}
	*out = ilog;
	return 0;

out_rfd:
	close(rfd);
out_free:
	store_ilog_free(ilog);
	return err;
}

/* Drops the dirty list's references without syncing. */
static void store_ilog_dirty_drop(struct store_ilog *ilog)
{
	while (ilog->dirty) {
		struct store_obj *obj = ilog->dirty;

		ilog->dirty = obj->ilog_next;
		obj->ilog_dirty = false;
		store__obj_unref(obj);
	}
	ilog->ndirty = 0;
}

void store_ilog_close(struct store_ilog *ilog)
{
	if (!ilog) {
		return;
	}
	store_ilog_thread_stop(ilog);
	pthread_mutex_lock(&ilog->lock);
	if (!ilog->err && ilog->tail_lsn != ilog->head_lsn) {
		store_ilog_checkpoint_locked(ilog);
	}
	store_ilog_dirty_drop(ilog);
	log_info("ilog: %s: closed: %" PRIu64 " records, %" PRIu64
		 " flushes, %" PRIu64 " checkpoints, %" PRIu64
		 " waits for a full ring",
		 ilog->path, ilog->stats.records, ilog->stats.flushes,
		 ilog->stats.checkpoints, ilog->stats.full_waits);
	pthread_mutex_unlock(&ilog->lock);
	store_ilog_free(ilog);
}

void store__ilog_abandon(struct store_ilog *ilog)
{
	store_ilog_thread_stop(ilog);
	store_ilog_dirty_drop(ilog);
	store_ilog_free(ilog);
}
