// SPDX-License-Identifier: Apache-2.0
/*
 * ilog_open: opening the intent log (ilog.h): read its superblock, replay
 * what follows the last checkpoint (ilog_replay.c), make a new file when
 * there is none or the ring size changed (ilog_file.c, which also refuses
 * a path that is not our log), start anew with a new salt and the flush and
 * checkpoint threads; and closing it: a last checkpoint, so the next start
 * replays nothing.
 */
#include "nfsd/store/ilog/ilog_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nfsd/base/log.h"
#include "nfsd/store/dring.h"

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
	struct stat sb;

	if (err == -ENOENT) {
		/* Not a log (or both slots gone): whatever it held is not
		 * replayed, so say so when it held anything. */
		if (fstat(fd, &sb) == 0 && sb.st_size > 0) {
			log_error("ilog: %s: no valid superblock in a file of "
				  "%jd bytes: not replayed; a new log is made "
				  "over it",
				  ilog->path, (intmax_t)sb.st_size);
		}
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
	uint64_t total = STORE_ILOG_DATA_OFF + ring_bytes;
	struct store_ilog_super old;
	struct store_ilog *ilog;
	char tmp[4200] = "";
	bool fresh, replace = false;
	struct stat sb;
	int rfd = -1, wfd = -1;
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
	err = store__ilog_file_open(path, &rfd, errbuf, errlen);
	if (err) {
		goto out_free;
	}
	old.seq = 0;
	if (rfd >= 0) {
		err = store_ilog_recover(ilog, rfd, &old, stores, nstores);
		if (err) {
			store_ilog_err(errbuf, errlen, path, "replay", err);
			goto out_rfd;
		}
		if (fstat(rfd, &sb) != 0) {
			err = -errno;
			store_ilog_err(errbuf, errlen, path, "stat", err);
			goto out_rfd;
		}
	}
	/* A new log, or a new ring size: built beside and renamed over. */
	fresh = rfd < 0 || (uint64_t)sb.st_size != total;
	if (fresh) {
		replace = rfd >= 0 || access(path, F_OK) == 0;
		err = store__ilog_file_make(path, total, &wfd, tmp,
					    sizeof(tmp));
		if (err) {
			store_ilog_err(errbuf, errlen, path, "create", err);
			goto out_rfd;
		}
	}
	ilog->fd = open(fresh ? tmp : path,
			O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_DIRECT | O_DSYNC);
	ilog->direct = ilog->fd >= 0;
	if (ilog->fd < 0) {
		/* tmpfs and some others refuse O_DIRECT. */
		ilog->fd = open(fresh ? tmp : path,
				O_RDWR | O_CLOEXEC | O_NOFOLLOW);
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
	err = store__ilog_super_write(ilog, &ilog->sb);
	if (!err && ilog->direct) {
		/* The zeros and the superblock went through the page cache
		 * of the other descriptor too; make them stable before the
		 * ring is used. */
		err = fsync(fresh ? wfd : rfd) != 0 ? -errno : 0;
	}
	if (err) {
		store_ilog_err(errbuf, errlen, path, "superblock", err);
		goto out_rfd;
	}
	if (fresh) {
		err = store__ilog_file_publish(tmp, path, replace);
		tmp[0] = '\0';
		if (err) {
			store_ilog_err(errbuf, errlen, path, "rename", err);
			goto out_rfd;
		}
		close(wfd);
		wfd = -1;
	}
	if (rfd >= 0) {
		close(rfd);
	}
	rfd = -1;
	err = pthread_create(&ilog->thread, NULL, store__ilog_checkpoint_main,
			     ilog);
	if (err) {
		err = -err;
		store_ilog_err(errbuf, errlen, path, "thread", err);
		goto out_free;
	}
	ilog->thread_started = true;
	for (int i = 0; i < STORE_ILOG_FLUSHERS; i++) {
		err = pthread_create(&ilog->flusher[i], NULL,
				     store__ilog_flusher_main, ilog);
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
	if (wfd >= 0) {
		close(wfd);
	}
	if (tmp[0]) {
		unlink(tmp);
	}
	if (rfd >= 0) {
		close(rfd);
	}
out_free:
	store_ilog_free(ilog);
	return err;
}

/* Drops the dirty list's references without syncing. */
static void store_ilog_dirty_drop(struct store_ilog *ilog)
{
	while (ilog->dirty) {
		struct local_obj *obj = ilog->dirty;

		ilog->dirty = obj->ilog_next;
		obj->ilog_dirty = false;
		store__obj_unref(obj);
	}
	ilog->ndirty = 0;
}

void store_ilog_close(struct store_ilog *ilog)
{
	struct store_ilog_stats ring;

	if (!ilog) {
		return;
	}
	/* Its writes' ends append to the log: before the log stops. */
	if (ilog->dring) {
		store_dring_drain(ilog->dring);
	}
	store_ilog_stats(ilog, &ring);
	store_dring_free(ilog->dring);
	ilog->dring = NULL;
	store_ilog_thread_stop(ilog);
	pthread_mutex_lock(&ilog->lock);
	if (!ilog->err && ilog->tail_lsn != ilog->head_lsn) {
		store__ilog_checkpoint_locked(ilog);
	}
	store_ilog_dirty_drop(ilog);
	log_info("ilog: %s: closed: %" PRIu64 " records, %" PRIu64
		 " flushes, %" PRIu64 " checkpoints, %" PRIu64
		 " waits for a full ring; %" PRIu64
		 " writes synced in place (%" PRIu64 " O_DIRECT, %" PRIu64
		 " of them through io_uring in %" PRIu64 " writevs; %" PRIu64
		 " SYNCED records); %" PRIu64 " bytes logged",
		 ilog->path, ilog->stats.records, ilog->stats.flushes,
		 ilog->stats.checkpoints, ilog->stats.full_waits,
		 ilog->stats.inplace_writes, ilog->stats.direct_writes,
		 ring.ring_writes, ring.ring_writevs,
		 ilog->stats.synced_records, ilog->stats.bytes);
	pthread_mutex_unlock(&ilog->lock);
	store_ilog_free(ilog);
}

void store__ilog_abandon(struct store_ilog *ilog)
{
	store_dring_free(ilog->dring);
	ilog->dring = NULL;
	store_ilog_thread_stop(ilog);
	store_ilog_dirty_drop(ilog);
	store_ilog_free(ilog);
}
