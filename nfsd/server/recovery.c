// SPDX-License-Identifier: Apache-2.0
/*
 * recovery: opens, in the background, the cephfs datastores whose cluster
 * did not answer at start, and publishes each once its cluster answers, so
 * that it serves without a restart; and opens anew one whose session the
 * cluster evicted (store.reopen: that mount never answers again).  One
 * thread, off the event loops: an open may block up to the client mount
 * timeout.  A cluster lost and back under the same mount is the backend's
 * (store/cephfs/cephfs_health.c).
 *
 * A cephfs datastore a reload adds is watched the same way: one whose
 * cluster is down is added all the same and opened when it answers.
 * The table of watched datastores is made once at its full size
 * (CONFIG_MAX_DATASTORES), so the thread's pointer into it stays valid
 * while a reload appends under the lock.
 *
 * Publishing follows the export table's rule (export/export.h): readers
 * on the loops never see a half-made store.  The store is complete (root,
 * handle secret, monitor) and its quota scanned before its pointer is
 * stored with release order; export_store() loads it with acquire order;
 * store_down is cleared after, so a reader that still sees it finds either
 * no store (JUKEBOX) or the whole one.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nfsd/server/server_int.h"
#include "nfsd/traffic/traffic.h"
#include "nfsd/base/log.h"

int server__recovery_reserve(struct server *srv)
{
	struct server_recovery *r = &srv->recovery;

	if (!r->revive) {
		r->revive = calloc(CONFIG_MAX_DATASTORES, sizeof(*r->revive));
	}
	return r->revive ? 0 : -ENOMEM;
}

int server__recovery_add(struct server *srv, size_t slot,
			 const struct config_datastore *ds)
{
	struct server_recovery *r = &srv->recovery;
	struct server_revive *v;
	int err = server__recovery_reserve(srv);

	if (err) {
		return err;
	}
	if (r->running) {
		pthread_mutex_lock(&r->lock);
	}
	v = &r->revive[r->nrevive];
	memset(v, 0, sizeof(*v));
	v->slot = slot;
	v->ds = *ds;
	v->done = srv->exports.exports[slot].store != NULL;
	v->since_ns = traffic_now_ns();
	r->nrevive++;
	if (r->running) {
		/* Tried at once, not at the next round. */
		pthread_cond_broadcast(&r->wake);
		pthread_mutex_unlock(&r->lock);
	}
	return 0;
}

/* Publishes @st as @exp's store (the table's rule: see the head). */
static void server_store_publish(struct server *srv, struct export *exp,
				 struct store *st, uint64_t root_fileid)
{
	/* Under the write lock: a SIGHUP's option change on the main
	 * thread reads exp->store too. */
	export_table_write_lock(&srv->exports);
	exp->root_fileid = root_fileid;
	__atomic_store_n(&exp->store, st, __ATOMIC_RELEASE);
	__atomic_store_n(&exp->store_down, false, __ATOMIC_RELEASE);
	export_table_write_unlock(&srv->exports);
}

/* One try at @v's store, down since start; true once it serves. */
static bool server_revive_try(struct server *srv, struct server_revive *v)
{
	struct export *exp = &srv->exports.exports[v->slot];
	char errbuf[512];
	uint64_t root_fileid;
	struct store *st;
	int err;

	err = server__export_store_open(srv, &v->ds, exp->id, &st, &root_fileid,
					errbuf, sizeof(errbuf));
	if (err) {
		log_debug("export: %s; retrying", errbuf);
		return false;
	}
	/* What it holds already (files made by other gateways, or before
	 * the outage), before any call can add to it. */
	if (exp->quota) {
		err = quota_scan_store(exp->quota, st, errbuf, sizeof(errbuf));
		if (err) {
			log_error("export: %s: quota scan: %s; retrying",
				  exp->name, errbuf);
			store_close(st);
			return false;
		}
	}
	server_store_publish(srv, exp, st, root_fileid);
	log_info("export: %s: cephfs cluster %s answers after %" PRId64
		 " ms: serving",
		 exp->name, v->ds.ceph_conf,
		 (traffic_now_ns() - v->since_ns) / 1000000);
	return true;
}

/* @v's store was evicted: a new mount in its place (same handles: the
 * secret is the cluster's), the old one kept until the server closes.
 * Under r->lock, dropped for the open. */
static void server_revive_reopen(struct server *srv, struct server_revive *v)
{
	struct server_recovery *r = &srv->recovery;
	struct export *exp = &srv->exports.exports[v->slot];
	struct store *old = export_store(exp), *st, **retired;
	char errbuf[512];
	uint64_t root_fileid;
	int err;

	retired = realloc(r->retired, (r->nretired + 1) * sizeof(*retired));
	if (!retired) {
		return; /* tried again at the next round */
	}
	r->retired = retired;
	pthread_mutex_unlock(&r->lock);
	err = server__export_store_open(srv, &v->ds, exp->id, &st, &root_fileid,
					errbuf, sizeof(errbuf));
	pthread_mutex_lock(&r->lock);
	if (err) {
		log_debug("export: %s; retrying", errbuf);
		return;
	}
	server_store_publish(srv, exp, st, root_fileid);
	/* The evicted client's cache held UNSTABLE writes that are gone:
	 * a new verifier makes clients send them again. */
	atomic_fetch_add(&exp->write_verf_gen, 1);
	r->retired[r->nretired++] = old;
	log_info("export: %s: mounted anew after an eviction: serving",
		 exp->name);
}

static void *server_recovery_thread(void *arg)
{
	struct server *srv = arg;
	struct server_recovery *r = &srv->recovery;

	pthread_mutex_lock(&r->lock);
	while (!r->stopping) {
		struct timespec until;

		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += SERVER_RECOVERY_RETRY_MS / 1000;
		pthread_cond_timedwait(&r->wake, &r->lock, &until);
		for (size_t i = 0; i < r->nrevive && !r->stopping; i++) {
			struct server_revive *v = &r->revive[i];
			struct export *exp = &srv->exports.exports[v->slot];
			struct store *st = export_store(exp);

			if (v->done) {
				if (st && atomic_load(&st->reopen) &&
				    export_is_live(exp)) {
					server_revive_reopen(srv, v);
				}
				continue;
			}
			/* The open blocks: not under the lock that stop
			 * takes to wake us. */
			pthread_mutex_unlock(&r->lock);
			v->done = server_revive_try(srv, v);
			pthread_mutex_lock(&r->lock);
		}
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

int server__recovery_start(struct server *srv)
{
	struct server_recovery *r = &srv->recovery;
	pthread_condattr_t attr;
	int err;

	if (!r->nrevive || r->running) {
		return 0;
	}
	pthread_mutex_init(&r->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&r->wake, &attr);
	pthread_condattr_destroy(&attr);
	err = pthread_create(&r->thread, NULL, server_recovery_thread, srv);
	if (err) {
		pthread_cond_destroy(&r->wake);
		pthread_mutex_destroy(&r->lock);
		return -err;
	}
	r->running = true;
	return 0;
}

void server__recovery_stop(struct server *srv)
{
	struct server_recovery *r = &srv->recovery;

	if (r->running) {
		pthread_mutex_lock(&r->lock);
		r->stopping = true;
		pthread_cond_broadcast(&r->wake);
		pthread_mutex_unlock(&r->lock);
		pthread_join(r->thread, NULL);
		pthread_cond_destroy(&r->wake);
		pthread_mutex_destroy(&r->lock);
		r->running = false;
	}
	for (size_t i = 0; i < r->nretired; i++) {
		store_close(r->retired[i]);
	}
	free(r->retired);
	r->retired = NULL;
	r->nretired = 0;
	free(r->revive);
	r->revive = NULL;
	r->nrevive = 0;
}
