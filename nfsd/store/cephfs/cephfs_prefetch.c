// SPDX-License-Identifier: Apache-2.0
/*
 * cephfs_prefetch: reads a file that is being read in order ahead of its
 * readers, into libcephfs's object cacher (readahead.h says when and
 * why).  A prefetch is a plain ceph_ll_read of up to one object (4 MiB)
 * into a buffer of the prefetch thread's that is thrown away: the
 * object cacher keeps the data while the gateway holds the file's Fc
 * capability, so coherence with other clients stays CephFS's, and the
 * READs that follow are served from memory, without a round trip to an
 * OSD or a hand-off to libcephfs's messenger threads.
 *
 * Two threads per store take the files queued by READs; a file is
 * queued at most once, and read one piece at a time.  Each read goes
 * through the store's call guard (cephfs_health.c) like any op: a lost
 * cluster refuses it, and it counts against the call cap.
 */
#include "nfsd/store/cephfs/cephfs_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/base/log.h"

#define PREFETCH_THREADS 2

struct cephfs_prefetch {
	struct store_cephfs *sc;
	struct store_ra_params params;
	pthread_mutex_t lock; /* the queue and every file's store_ra */
	pthread_cond_t wake;
	struct cephfs_obj *head, *tail; /* queued, a reference each */
	bool stopping;
	struct store_cephfs_prefetch_stats stats;
	unsigned nthreads;
	pthread_t threads[PREFETCH_THREADS];
};

/* Reads [off, off + len) of @o into @buf: the bytes read, or -errno. */
static int64_t prefetch_read(struct cephfs_prefetch *pf, struct cephfs_obj *o,
			     uint64_t off, uint64_t len, char *buf)
{
	struct store_cephfs *sc = pf->sc;
	uint64_t done = 0;
	struct Fh *fh;
	unsigned slot;
	int rc;

	rc = store__cephfs_call_enter(sc, &slot);
	if (rc) {
		return rc;
	}
	rc = store__cephfs_obj_io(o, &fh);
	while (!rc && done < len) {
		rc = ceph_ll_read(sc->cm, fh, (int64_t)(off + done), len - done,
				  buf + done);
		if (rc <= 0) {
			rc = store__cephfs_err(rc);
			break;
		}
		done += (uint64_t)rc;
		rc = 0;
	}
	rc = store__cephfs_call_leave(sc, slot, rc);
	return rc ? rc : (int64_t)done;
}

/* Reads @o's run ahead, piece by piece, until it is far enough ahead. */
static void prefetch_file(struct cephfs_prefetch *pf, struct cephfs_obj *o,
			  char *buf)
{
	uint64_t off, len, run;

	pthread_mutex_lock(&pf->lock);
	while (!pf->stopping &&
	       store_ra_next(&o->ra, &pf->params, &off, &len, &run)) {
		bool was_stopped;
		int64_t got;

		pthread_mutex_unlock(&pf->lock);
		got = prefetch_read(pf, o, off, len, buf);
		pthread_mutex_lock(&pf->lock);
		if (got < 0) {
			log_debug("cephfs: %s: prefetch of inode %llx at %llu: "
				  "%s",
				  pf->sc->base.name, (unsigned long long)o->ino,
				  (unsigned long long)off, strerror((int)-got));
		}
		was_stopped = o->ra.stopped;
		store_ra_done(&o->ra, run, off, len,
			      got < 0 ? 0 : (uint64_t)got, got < 0);
		pf->stats.reads++;
		pf->stats.bytes += got < 0 ? 0 : (uint64_t)got;
		pf->stats.runs_stopped += !was_stopped && o->ra.stopped;
	}
	if (pf->stopping) {
		store_ra_cancel(&o->ra);
	}
	pthread_mutex_unlock(&pf->lock);
}

static void *prefetch_thread(void *arg)
{
	struct cephfs_prefetch *pf = arg;
	char *buf = malloc(pf->params.chunk_bytes);

	for (;;) {
		struct cephfs_obj *o;

		pthread_mutex_lock(&pf->lock);
		while (!pf->head && !pf->stopping) {
			pthread_cond_wait(&pf->wake, &pf->lock);
		}
		if (pf->stopping) {
			pthread_mutex_unlock(&pf->lock);
			break;
		}
		o = pf->head;
		pf->head = o->ra_next;
		if (!pf->head) {
			pf->tail = NULL;
		}
		o->ra_next = NULL;
		if (!buf) {
			store_ra_cancel(&o->ra);
			pthread_mutex_unlock(&pf->lock);
		} else {
			pthread_mutex_unlock(&pf->lock);
			prefetch_file(pf, o, buf);
		}
		store__cephfs_obj_unref(store__cephfs_pub(o));
	}
	free(buf);
	return NULL;
}

int store__cephfs_prefetch_start(struct store_cephfs *sc, uint64_t ahead_bytes)
{
	struct cephfs_prefetch *pf;
	int err;

	if (!ahead_bytes) {
		return 0;
	}
	pf = calloc(1, sizeof(*pf));
	if (!pf) {
		return -ENOMEM;
	}
	pf->sc = sc;
	pf->params = (struct store_ra_params){
		.near_bytes = STORE_CEPHFS_PREFETCH_NEAR,
		.streak = STORE_CEPHFS_PREFETCH_STREAK,
		.start_bytes = STORE_CEPHFS_PREFETCH_START,
		.ahead_bytes = ahead_bytes,
		.chunk_bytes = STORE_CEPHFS_PREFETCH_CHUNK,
		.hit_ns = STORE_CEPHFS_PREFETCH_HIT_US * 1000ull,
	};
	pthread_mutex_init(&pf->lock, NULL);
	pthread_cond_init(&pf->wake, NULL);
	for (unsigned i = 0; i < PREFETCH_THREADS; i++) {
		err = pthread_create(&pf->threads[i], NULL, prefetch_thread,
				     pf);
		if (err) {
			sc->prefetch = pf;
			store__cephfs_prefetch_stop(sc);
			return -err;
		}
		pf->nthreads++;
	}
	sc->prefetch = pf;
	return 0;
}

void store__cephfs_prefetch_stop(struct store_cephfs *sc)
{
	struct cephfs_prefetch *pf = sc->prefetch;

	if (!pf) {
		return;
	}
	pthread_mutex_lock(&pf->lock);
	pf->stopping = true;
	pthread_cond_broadcast(&pf->wake);
	pthread_mutex_unlock(&pf->lock);
	for (unsigned i = 0; i < pf->nthreads; i++) {
		pthread_join(pf->threads[i], NULL);
	}
	if (pf->stats.reads) {
		log_info("cephfs: %s: read ahead %llu MiB in %llu reads; %llu "
			 "runs stopped (no faster)",
			 sc->base.name,
			 (unsigned long long)(pf->stats.bytes >> 20),
			 (unsigned long long)pf->stats.reads,
			 (unsigned long long)pf->stats.runs_stopped);
	}
	while (pf->head) {
		struct cephfs_obj *o = pf->head;

		pf->head = o->ra_next;
		o->ra_next = NULL;
		store_ra_cancel(&o->ra);
		store__cephfs_obj_unref(store__cephfs_pub(o));
	}
	pthread_cond_destroy(&pf->wake);
	pthread_mutex_destroy(&pf->lock);
	free(pf);
	sc->prefetch = NULL;
}

int store_cephfs_readahead(struct store *st, uint64_t ahead_bytes)
{
	struct store_cephfs *sc = store__cephfs(st);

	store__cephfs_prefetch_stop(sc);
	return store__cephfs_prefetch_start(sc, ahead_bytes);
}

void store__cephfs_prefetch_stats(struct store_cephfs *sc,
				  struct store_cephfs_prefetch_stats *out)
{
	struct cephfs_prefetch *pf = sc->prefetch;

	memset(out, 0, sizeof(*out));
	if (pf) {
		pthread_mutex_lock(&pf->lock);
		*out = pf->stats;
		pthread_mutex_unlock(&pf->lock);
	}
}

void store__cephfs_prefetch_note(struct cephfs_obj *o, uint64_t off, uint32_t n,
				 uint64_t took_ns)
{
	struct cephfs_prefetch *pf = o->sc->prefetch;
	bool was_stopped, queue;

	/* A snapshot's files do not change: their reads need no cache
	 * capability, and stay plain. */
	if (!pf || o->snapid != CEPH_NOSNAP || !n) {
		return;
	}
	pthread_mutex_lock(&pf->lock);
	was_stopped = o->ra.stopped;
	queue = !pf->stopping &&
		store_ra_note(&o->ra, &pf->params, off, n, took_ns);
	pf->stats.runs_stopped += !was_stopped && o->ra.stopped;
	if (queue) {
		store__cephfs_obj_ref(store__cephfs_pub(o));
		if (pf->tail) {
			pf->tail->ra_next = o;
		} else {
			pf->head = o;
		}
		pf->tail = o;
		pthread_cond_signal(&pf->wake);
	}
	pthread_mutex_unlock(&pf->lock);
}
