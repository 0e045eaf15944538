// SPDX-License-Identifier: Apache-2.0
/*
 * ilog_checkpoint: the intent log's checkpoints (ilog.h): at half the
 * ring, every checkpoint_ms, or when a caller needs one (a full ring, a
 * COMMIT or a size change of a file with records: store__ilog_settle), the
 * checkpoint thread fsyncs every file with records since the last one,
 * through the file's sync group (its sticky error rule holds), then writes
 * the superblock slot with the new head: the ring before it is free.
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

/* Writes the superblock slot for @sb (seq % 2), keeping the other. */
int store__ilog_super_write(struct store_ilog *ilog,
			    const struct store_ilog_super *sb)
{
	int err;

	store__ilog_super_encode(
		ilog->super_block + (sb->seq % 2) * STORE_ILOG_SUPER_SLOT, sb);
	err = store__ilog_pwrite(ilog->fd, ilog->super_block, STORE_ILOG_BLOCK,
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

/* Fsyncs the @n files of @files (the list keeps its references). */
static int store_ilog_sync_files(struct store_ilog *ilog,
				 struct local_obj **files, size_t n)
{
	int first = 0;

	for (size_t i = 0; i < n; i++) {
		struct local_obj *obj = files[i];
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
	}
	return first;
}

/* Ends the checkpoint in flight: its list and references go; lock held. */
static void store_ilog_ckpt_release(struct store_ilog *ilog)
{
	struct local_obj **files = ilog->ckpt_files;

	for (size_t i = 0; i < ilog->nckpt; i++) {
		store__obj_unref(files[i]);
	}
	free(files);
	ilog->ckpt_files = NULL;
	ilog->nckpt = 0;
}

/* One checkpoint up to the current tail; called and returns with the lock
 * held. */
void store__ilog_checkpoint_locked(struct store_ilog *ilog)
{
	struct store_ilog_super sb = ilog->sb;
	uint64_t upto = ilog->tail_lsn;
	struct local_obj **files;
	size_t n = 0;
	int err;

	/* Taken out of the list now: a file written from here on goes on a
	 * new one (its ilog_next changes), its records lie after @upto. */
	files = malloc((ilog->ndirty ? ilog->ndirty : 1) * sizeof(*files));
	if (!files) {
		store__ilog_fail(ilog, -ENOMEM, "checkpoint failed");
		return;
	}
	for (struct local_obj *o = ilog->dirty; o; o = o->ilog_next) {
		o->ilog_dirty = false;
		files[n++] = o;
	}
	ilog->dirty = NULL;
	ilog->ndirty = 0;
	/* Held until the new head is written: until then their records are
	 * replayed, and a file evicted from the cache meanwhile must come
	 * back as the object that knows them (store__ilog_held). */
	ilog->ckpt_files = files;
	ilog->nckpt = n;
	pthread_mutex_unlock(&ilog->lock);
	err = store_ilog_sync_files(ilog, files, n);
	sb.head_lsn = upto;
	sb.seq++;
	if (!err) {
		err = store__ilog_super_write(ilog, &sb);
	}
	pthread_mutex_lock(&ilog->lock);
	if (err) {
		store_ilog_ckpt_release(ilog);
		store__ilog_fail(ilog, err, "checkpoint failed");
		return;
	}
	ilog->sb = sb;
	if (upto > ilog->head_lsn) {
		ilog->head_lsn = upto;
	}
	store_ilog_ckpt_release(ilog);
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

void *store__ilog_checkpoint_main(void *arg)
{
	struct store_ilog *ilog = arg;
	struct timespec deadline;
	bool timed_out = false;

	pthread_mutex_lock(&ilog->lock);
	while (!ilog->stop) {
		if (store_ilog_ckpt_due(ilog, timed_out)) {
			store__ilog_checkpoint_locked(ilog);
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
