// SPDX-License-Identifier: Apache-2.0
/*
 * service: the replication relations of a running dsnfsd (service.h).
 */
#include "nfsd/repl/service.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nfsd/base/errbuf.h"
#include "nfsd/base/log.h"
#include "nfsd/export/export.h"
#include "nfsd/repl/client.h"
#include "nfsd/repl/repl_int.h"
#include "nfsd/repl/reverse.h"
#include "nfsd/repl/src.h"

static int64_t service_now(void)
{
	return (int64_t)time(NULL);
}

static struct export *service_export(struct export_table *t, const char *name)
{
	size_t n = export_table_count(t);

	for (size_t i = 0; i < n; i++) {
		struct export *e = &t->exports[i];

		if (!strcmp(e->name, name) && export_is_live(e)) {
			return e;
		}
	}
	return NULL;
}

/* The snapshot manifest of local datastore @name, where the store keeps
 * it (store/local.c: STATE_DIR/snapshots-NAME.manifest). */
static int service_manifest(const char *state_dir, const char *name, char *out,
			    size_t len)
{
	return snprintf(out, len, "%s/snapshots-%s.manifest", state_dir,
			name) >= (int)len
		       ? -ENAMETOOLONG
		       : 0;
}

/* Whether @e is served through its store (CephFS), not a local tree. */
static bool service_store_backed(const struct export *e)
{
	return e->remote_store || !e->dir[0];
}

/* The datastore of relation @c: live, and local unless this end is the
 * source (a CephFS datastore is a source only: the destination's side,
 * dst_local.c, writes a local tree and reverts it with reflink
 * snapshots). */
static struct export *service_datastore(struct repl_service *s,
					const struct repl_rel_config *c,
					char *errbuf, size_t errlen)
{
	struct export *e = service_export(s->exports, c->datastore);

	if (!e) {
		errbuf_printf(errbuf, errlen, -EINVAL,
			      "[replication %s]: datastore %s: no such "
			      "datastore",
			      c->name,
			      c->datastore[0] ? c->datastore : "(none)");
	} else if (service_store_backed(e) &&
		   (c->role != REPL_ROLE_SOURCE ||
		    repl_reversed_load(s->state_dir, c->name))) {
		errbuf_printf(errbuf, errlen, -EOPNOTSUPP,
			      "[replication %s]: datastore %s is on CephFS: "
			      "it can be a replication source only (a "
			      "destination, or a reversed relation, on CephFS "
			      "is not built)",
			      c->name, c->datastore);
		e = NULL;
	}
	return e;
}

/* The read-only switch of @x's datastore after its end changed: on while
 * it is the destination now and not broken. */
static void service_sync_replica(struct repl_service *s, struct repl_item *x)
{
	bool on = repl_peers_feeding(&s->peers, x->cfg.name);

	if (on != __atomic_load_n(&x->exp->replica, __ATOMIC_ACQUIRE)) {
		log_info("replication: %s: datastore %s %s", x->cfg.name,
			 x->cfg.datastore,
			 on ? "is a replica again: read-only to NFS clients"
			    : "broken off: writable by its clients");
		repl__item_replica(x, on);
	}
}

/* The client to the other end of @x, when its URL is known. */
static int service_client(struct repl_item *x, char *errbuf, size_t errlen)
{
	const struct repl_rel_config *c = &x->cfg;
	const char *url, *ds;
	int err;

	repl__other(c, &url, &ds);
	if (c->role == REPL_ROLE_SOURCE &&
	    (!c->url[0] || !c->dst_datastore[0] || !c->key_file[0])) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "[replication %s]: a source needs "
				     "destination_url, destination_datastore "
				     "and key_file",
				     c->name);
	}
	if (!url[0] && !ds[0]) {
		return 0; /* a destination that cannot be reversed */
	}
	if (!url[0] || !ds[0]) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "[replication %s]: source_url and "
				     "source_datastore go together",
				     c->name);
	}
	/* A CephFS source is never a local destination's datastore: a name
	 * of its own, which no destination's identity equals. */
	err = x->src ? (snprintf(x->hello, sizeof(x->hello), "store:%s %s",
				 c->datastore, ds) >= (int)sizeof(x->hello)
				? -ENAMETOOLONG
				: 0)
		     : repl_hello_arg(x->root, ds, x->hello, sizeof(x->hello));
	if (err) {
		return errbuf_printf(errbuf, errlen, err,
				     "[replication %s]: %s: %s", c->name,
				     x->root, strerror(-err));
	}
	return repl_client_new(url, c->name, c->key_file, c->ca_file,
			       c->timeout_s, &x->cancel, &x->client, errbuf,
			       errlen);
}

/* Whether relation @name's transfer marker is there (undo.h). */
static bool service_applying(const struct repl_service *s, const char *name)
{
	char p[PATH_MAX];

	return snprintf(p, sizeof(p), "%s/repl-%s.applying", s->state_dir,
			name) < (int)sizeof(p) &&
	       access(p, F_OK) == 0;
}

int repl__service_add(struct repl_service *s, const struct repl_rel_config *c,
		      bool api, char *errbuf, size_t errlen)
{
	struct export *e = service_datastore(s, c, errbuf, errlen);
	struct repl_item *x;
	bool undo;
	int err;

	if (!e) {
		return -EINVAL;
	}
	x = calloc(1, sizeof(*x));
	if (!x) {
		return -ENOMEM;
	}
	x->svc = s;
	x->cfg = *c;
	x->api = api;
	x->exp = e;
	x->guard.ops = s->ops;
	x->guard.export = e;
	x->guard.wait_ms = REPL_GUARD_WAIT_MS;
	x->reversed = repl_reversed_load(s->state_dir, c->name);
	s->item[s->n++] = x;
	if (snprintf(x->root, sizeof(x->root), "%s", e->dir) >=
		    (int)sizeof(x->root) ||
	    service_manifest(s->state_dir, c->datastore, x->manifest,
			     sizeof(x->manifest))) {
		return errbuf_printf(errbuf, errlen, -ENAMETOOLONG,
				     "[replication %s]: a path too long",
				     c->name);
	}
	undo = service_applying(s, c->name);
	if (service_store_backed(e)) {
		/* A source only: its peers entry (below, once the
		 * section is known whole) says so to a REVERSE from the
		 * other end, and never makes it a replica. */
		undo = false;
		err = repl_src_store_new(e, &x->guard, &x->src);
		if (err) {
			return errbuf_printf(errbuf, errlen, err,
					     "[replication %s]: datastore %s: "
					     "its store has no snapshots",
					     c->name, c->datastore);
		}
	} else {
		err = repl_peers_add(&s->peers, c->name, c->datastore, x->root,
				     x->manifest, s->state_dir, c->key_file,
				     &x->guard, !repl__item_sends(x), errbuf,
				     errlen);
	}
	if (!err && undo) {
		log_info("replication: %s: a transfer was applied in part when "
			 "the server stopped: undone, datastore %s is back at "
			 "its last replica",
			 c->name, c->datastore);
	}
	if (!err) {
		err = service_client(x, errbuf, errlen);
	}
	if (!err && x->src) {
		err = repl_peers_add_source_only(&s->peers, c->name,
						 c->datastore, c->key_file,
						 errbuf, errlen);
	}
	if (err) {
		return err;
	}
	x->rel.name = x->cfg.name;
	x->rel.src_root = x->root;
	x->rel.src_manifest = x->manifest;
	x->rel.src = x->src;
	x->rel.to = x->client ? repl_client_dst(x->client) : NULL;
	x->rel.hello = x->hello;
	x->rel.state_dir = s->state_dir;
	x->rel.schedule = c->schedule;
	x->rel.src_guard = &x->guard;
	if (x->client) {
		err = repl_relation_open(&x->rel, errbuf, errlen);
		if (err) {
			return err;
		}
	}
	x->shown = x->rel;
	repl__item_replica(x, repl_peers_feeding(&s->peers, c->name));
	if (repl__item_sends(x)) {
		const char *url, *ds;
		char sched[32];

		repl__other(c, &url, &ds);
		log_info("replication: %s: source of datastore %s to %s "
			 "datastore %s%s, schedule %s, %u s a message",
			 c->name, c->datastore, url, ds,
			 x->reversed ? " (reversed)" : "",
			 repl_sched_text(repl_sched_name(c->schedule),
					 c->schedule_seconds, sched,
					 sizeof(sched)),
			 c->timeout_s ? c->timeout_s : REPL_TIMEOUT_DEFAULT_S);
	} else {
		log_info("replication: %s: destination of datastore %s%s%s",
			 c->name, c->datastore,
			 x->reversed ? " (reversed)" : "",
			 x->exp->replica ? " (read-only to NFS clients until "
					   "the break)"
					 : " (broken: writable)");
	}
	return 0;
}

/* One transfer of @x, the lock held on entry and on return. */
static void service_transfer(struct repl_item *x)
{
	struct repl_service *s = x->svc;
	char err[512] = "";
	int64_t t0 = service_now();
	int rc;

	x->want = false;
	x->running = true;
	x->last_attempt_s = t0;
	pthread_mutex_unlock(&s->lock);
	rc = repl_relation_transfer(&x->rel, t0, err, sizeof(err));
	if (rc) {
		log_warn("replication: %s: transfer failed: %s "
			 "(the destination's last replica %s stays)",
			 x->cfg.name, err,
			 x->rel.last[0] ? x->rel.last : "(none yet)");
	} else {
		log_info("replication: %s: transfer %s done in %" PRId64
			 " s: %" PRIu64 " files (%" PRIu64
			 " resumed%s), %" PRIu64 " bytes sent of %" PRIu64
			 " candidate, %" PRIu64 " removed; %" PRIu64
			 " snapshots carried, %" PRIu64 " deleted",
			 x->cfg.name, x->rel.last, service_now() - t0,
			 x->rel.last_stats.files,
			 x->rel.last_stats.files_resumed,
			 x->rel.last_stats.restarted
				 ? "; restarted: the destination had undone it"
				 : "",
			 x->rel.last_stats.sent_bytes,
			 x->rel.last_stats.candidate_bytes,
			 x->rel.last_stats.removed, x->rel.last_snapshots,
			 x->rel.last_snapshots_deleted);
	}
	pthread_mutex_lock(&s->lock);
	if (rc) {
		/* When it failed (GET last_error_s): the relation stamps the
		 * failure with the transfer's start, @t0, which says nothing
		 * of how long a cut connection took to fail it. */
		x->rel.last_err_s = service_now();
	}
	x->running = false;
	snprintf(x->error, sizeof(x->error), "%s", rc ? err : "");
	x->shown = x->rel;
	pthread_cond_broadcast(&s->wake);
}

/* Whether @x's thread may transfer now (the lock held). */
static bool service_may_send(const struct repl_item *x)
{
	return x->client && repl__item_sends(x) && !x->shown.broken;
}

static void *service_worker(void *arg)
{
	struct repl_item *x = arg;
	struct repl_service *s = x->svc;

	pthread_mutex_lock(&s->lock);
	while (!s->stop && !x->cancel) {
		if (x->want && !x->running && service_may_send(x)) {
			service_transfer(x);
		} else {
			x->want = x->want && service_may_send(x);
			pthread_cond_wait(&s->wake, &s->lock);
		}
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* The clock's look at @x at @now (the lock held). */
static void service_tick(struct repl_item *x, int64_t now)
{
	enum repl_sched_action a;

	if (!service_may_send(x)) {
		return;
	}
	if (x->cfg.schedule_seconds) {
		if (!x->sched.next_s) {
			x->sched.next_s = now + x->cfg.schedule_seconds;
		}
		a = now < x->sched.next_s ? REPL_SCHED_WAIT
		    : x->running	  ? REPL_SCHED_SKIP
					  : REPL_SCHED_RUN;
		if (a != REPL_SCHED_WAIT) {
			x->sched.next_s = now + x->cfg.schedule_seconds;
			x->sched.skipped += a == REPL_SCHED_SKIP;
		}
	} else {
		a = repl_sched_decide(x->cfg.schedule, &x->sched, now,
				      x->running);
	}
	if (a == REPL_SCHED_RUN) {
		x->want = true;
		x->alarm[0] = '\0';
	} else if (a == REPL_SCHED_SKIP) {
		snprintf(x->alarm, sizeof(x->alarm),
			 "a transfer outlasted the schedule's interval: "
			 "%" PRIu64 " run(s) skipped; the lag grows past the "
			 "schedule's",
			 x->sched.skipped);
		log_warn("replication: %s: the last transfer still runs when "
			 "the next is due: run skipped (%" PRIu64
			 " so far; alarm raised)",
			 x->cfg.name, x->sched.skipped);
	}
}

static void *service_clock(void *arg)
{
	struct repl_service *s = arg;
	struct timespec t;

	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		int64_t now = service_now();

		pthread_rwlock_rdlock(&s->list);
		pthread_mutex_lock(&s->lock);
		for (size_t i = 0; i < s->n; i++) {
			service_tick(s->item[i], now);
		}
		pthread_cond_broadcast(&s->wake);
		pthread_rwlock_unlock(&s->list);
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_sec += 1;
		if (!s->stop) {
			pthread_cond_timedwait(&s->wake, &s->lock, &t);
		}
		pthread_mutex_unlock(&s->lock);
	}
	return NULL;
}

void repl__item_free(struct repl_item *x)
{
	struct repl_service *s = x->svc;

	pthread_mutex_lock(&s->lock);
	__atomic_store_n(&x->cancel, true, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&s->wake);
	pthread_mutex_unlock(&s->lock);
	if (x->thread_ok) {
		pthread_join(x->thread, NULL);
	}
	repl_client_free(x->client);
	repl_src_free(x->src);
	if (x->exp) {
		repl__item_replica(x, false);
	}
	free(x);
}

void repl_service_stop(struct repl_service *s)
{
	if (!s) {
		return;
	}
	pthread_mutex_lock(&s->lock);
	__atomic_store_n(&s->stop, true, __ATOMIC_RELEASE);
	for (size_t i = 0; i < s->n; i++) {
		__atomic_store_n(&s->item[i]->cancel, true, __ATOMIC_RELEASE);
	}
	pthread_cond_broadcast(&s->wake);
	pthread_mutex_unlock(&s->lock);
	if (s->clock_ok) {
		pthread_join(s->clock, NULL);
	}
	for (size_t i = 0; i < s->n; i++) {
		repl__item_free(s->item[i]);
	}
	repl_peers_fini(&s->peers);
	pthread_mutex_destroy(&s->peers.lock);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
	pthread_rwlock_destroy(&s->list);
	free(s);
}

int repl__check_pair(const struct repl_rel_config *a,
		     const struct repl_rel_config *b, char *errbuf,
		     size_t errlen)
{
	if (strcmp(a->datastore, b->datastore) ||
	    (a->role != REPL_ROLE_DESTINATION &&
	     b->role != REPL_ROLE_DESTINATION)) {
		return 0;
	}
	return errbuf_printf(errbuf, errlen, -EINVAL,
			     "[replication %s] and [replication %s]: "
			     "datastore %s is the destination of one: it "
			     "cannot be in another (the same datastore at "
			     "both ends, or fed twice)",
			     a->name, b->name, a->datastore);
}

/* No datastore is both ends here, and no two relations feed one. */
int repl__service_check(const struct repl_config *cfg, char *errbuf,
			size_t errlen)
{
	for (size_t i = 0; i < cfg->n; i++) {
		const struct repl_rel_config *a = &cfg->rel[i];

		if (!a->role) {
			return errbuf_printf(errbuf, errlen, -EINVAL,
					     "[replication %s]: role is "
					     "source or destination",
					     a->name);
		}
		for (size_t j = 0; j < cfg->n; j++) {
			if (i != j &&
			    repl__check_pair(a, &cfg->rel[j], errbuf, errlen)) {
				return -EINVAL;
			}
		}
	}
	return 0;
}

int repl__item_start(struct repl_item *x)
{
	int err;

	if (!x->client) {
		return 0;
	}
	err = -pthread_create(&x->thread, NULL, service_worker, x);
	x->thread_ok = !err;
	return err;
}

int repl__service_threads(struct repl_service *s, char *errbuf, size_t errlen)
{
	int err = 0;

	for (size_t i = 0; i < s->n && !err; i++) {
		err = repl__item_start(s->item[i]);
	}
	if (!err) {
		err = -pthread_create(&s->clock, NULL, service_clock, s);
		s->clock_ok = !err;
	}
	return err ? errbuf_printf(errbuf, errlen, err,
				   "replication: cannot start a thread: %s",
				   strerror(-err))
		   : 0;
}

static struct repl_item *service_find(struct repl_service *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++) {
		if (!strcmp(s->item[i]->cfg.name, name)) {
			return s->item[i];
		}
	}
	return NULL;
}

unsigned repl_service_peer_auth(struct repl_service *s, const char *name,
				const char *authorization)
{
	return s ? repl_peers_auth(&s->peers, name, authorization) : 404;
}

unsigned repl_service_peer(struct repl_service *s, const char *name,
			   const char *authorization, const unsigned char *b,
			   size_t n, unsigned char *out, size_t *outlen)
{
	struct repl_item *x;
	unsigned status;

	if (!s) {
		struct repl_result r = { .err = -ENOENT };

		snprintf(r.reason, sizeof(r.reason),
			 "this server has no replication relation");
		*outlen = repl_result_encode(&r, out);
		return 404;
	}
	/* The relation stays while its message is applied. */
	pthread_rwlock_rdlock(&s->list);
	status = repl_peers_handle(&s->peers, name, authorization, b, n, out,
				   outlen);
	x = service_find(s, name);
	if (x) {
		service_sync_replica(s, x);
	}
	pthread_rwlock_unlock(&s->list);
	return status;
}

/* Break or resync of @x, the sending end (the lock held; dropped while
 * the destination is asked). */
static int service_src_action(struct repl_service *s, struct repl_item *x,
			      bool brk, char *errbuf, size_t errlen)
{
	int err;

	if (x->running) {
		return errbuf_printf(errbuf, errlen, -EBUSY,
				     "relation %s: a transfer runs: try again "
				     "when it ends",
				     x->cfg.name);
	}
	x->running = true;
	x->want = false;
	pthread_mutex_unlock(&s->lock);
	err = brk ? repl_relation_break(&x->rel, errbuf, errlen)
		  : repl_relation_resync(&x->rel, errbuf, errlen);
	pthread_mutex_lock(&s->lock);
	x->running = false;
	x->shown = x->rel;
	if (!err) {
		log_info("replication: %s: %s", x->cfg.name,
			 brk ? "broken off: no more transfers until a resync"
			     : "resynced: the destination is back at the last "
			       "common snapshot; transfers go on");
	}
	pthread_cond_broadcast(&s->wake);
	return err;
}

/* @action on @x, the receiving end now (no lock held): a break, the
 * failover when the source is gone; a reverse. */
static int service_dst_action(struct repl_service *s, struct repl_item *x,
			      const char *action, char *errbuf, size_t errlen)
{
	int err;

	if (!strcmp(action, "reverse")) {
		return repl__reverse_start(s, x, errbuf, errlen);
	}
	if (strcmp(action, "break")) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "relation %s: this server is its "
				     "destination: %s is asked of the source's "
				     "server",
				     x->cfg.name, action);
	}
	err = repl_peers_break(&s->peers, x->cfg.name, errbuf, errlen);
	if (!err) {
		log_info("replication: %s: broken off on the destination: "
			 "datastore %s is writable by its clients",
			 x->cfg.name, x->cfg.datastore);
		repl__item_replica(x, false);
	}
	return err;
}

/* @action on @x (no lock held). */
static int service_item_action(struct repl_service *s, struct repl_item *x,
			       const char *action, char *errbuf, size_t errlen)
{
	int err = 0;

	pthread_mutex_lock(&s->lock);
	if (!repl__item_sends(x)) {
		pthread_mutex_unlock(&s->lock);
		return service_dst_action(s, x, action, errbuf, errlen);
	}
	if (!strcmp(action, "reverse")) {
		err = errbuf_printf(errbuf, errlen, -EINVAL,
				    "relation %s: this server is its source: "
				    "a reverse is asked of the destination's "
				    "server, after its break",
				    x->cfg.name);
	} else if (!strcmp(action, "transfer")) {
		err = x->shown.broken ? errbuf_printf(errbuf, errlen, -EPERM,
						      "relation %s is broken: "
						      "resync it first",
						      x->cfg.name)
				      : 0;
		x->want = !err;
		pthread_cond_broadcast(&s->wake);
	} else {
		err = service_src_action(s, x, !strcmp(action, "break"), errbuf,
					 errlen);
	}
	pthread_mutex_unlock(&s->lock);
	return err;
}

int repl_service_action(struct repl_service *s, const char *volume,
			const char *relation, const char *action, char *errbuf,
			size_t errlen)
{
	bool found = false;
	int err = 0;

	if (!s) {
		return errbuf_printf(errbuf, errlen, -ENOENT,
				     "volume %s: no replication relation",
				     volume);
	}
	pthread_rwlock_rdlock(&s->list);
	for (size_t i = 0; i < s->n && !err; i++) {
		struct repl_item *x = s->item[i];

		if (strcmp(x->cfg.datastore, volume) ||
		    (relation && strcmp(relation, x->cfg.name))) {
			continue;
		}
		found = true;
		err = service_item_action(s, x, action, errbuf, errlen);
	}
	pthread_rwlock_unlock(&s->list);
	return !found ? errbuf_printf(errbuf, errlen, -ENOENT,
				      "volume %s: no replication relation%s%s",
				      volume, relation ? " " : "",
				      relation ? relation : "")
		      : err;
}
