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

#include "nfsd/base/errbuf.h"
#include "nfsd/base/log.h"
#include "nfsd/export/export.h"
#include "nfsd/repl/client.h"

/* A source relation and its thread. */
struct repl_src {
	struct repl_service *svc;
	struct repl_rel_config cfg;
	struct repl_relation rel; /* the thread's while @running */
	struct repl_client *client;
	char src_root[4096];
	char src_manifest[PATH_MAX + 64];
	char hello[REPL_IDENTITY_MAX + 80];
	pthread_t thread;
	bool thread_ok;
	bool want; /* a transfer asked for (the clock or by hand) */
	bool running; /* a transfer, a break or a resync under way */
	struct repl_sched_state sched;
	int64_t last_attempt_s;
	char error[512];
	char alarm[320];
	struct repl_relation shown; /* @rel as of its last change */
};

/* A destination relation: its datastore's read-only switch. */
struct repl_dst_export {
	char name[64];
	char datastore[64];
	struct export *exp;
};

struct repl_service {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop; /* also cancels the clients' calls */
	struct export_table *exports;
	char state_dir[PATH_MAX];
	struct repl_peers peers;
	struct repl_dst_export dst[REPL_PEERS_MAX];
	size_t ndst;
	struct repl_src *src[REPL_PEERS_MAX];
	size_t nsrc;
	pthread_t clock;
	bool clock_ok;
};

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

/* The datastore of relation @c: live and local. */
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
	} else if (e->remote_store || !e->dir[0]) {
		errbuf_printf(errbuf, errlen, -EOPNOTSUPP,
			      "[replication %s]: datastore %s: not a local "
			      "datastore (replication of CephFS datastores "
			      "is not built)",
			      c->name, c->datastore);
		e = NULL;
	}
	return e;
}

static void service_set_replica(struct repl_dst_export *d, bool on)
{
	if (on) {
		__atomic_store_n(&d->exp->replica_logged, false,
				 __ATOMIC_RELAXED);
	}
	__atomic_store_n(&d->exp->replica, on, __ATOMIC_RELEASE);
}

static int service_add_dst(struct repl_service *s,
			   const struct repl_rel_config *c, char *errbuf,
			   size_t errlen)
{
	struct export *e = service_datastore(s, c, errbuf, errlen);
	char manifest[PATH_MAX + 64];
	struct repl_dst_export *d;
	int err;

	if (!e) {
		return -EINVAL;
	}
	if (service_manifest(s->state_dir, c->datastore, manifest,
			     sizeof(manifest))) {
		return -ENAMETOOLONG;
	}
	err = repl_peers_add(&s->peers, c->name, c->datastore, e->dir, manifest,
			     s->state_dir, c->key_file, errbuf, errlen);
	if (err) {
		return err;
	}
	d = &s->dst[s->ndst++];
	snprintf(d->name, sizeof(d->name), "%s", c->name);
	snprintf(d->datastore, sizeof(d->datastore), "%s", c->datastore);
	d->exp = e;
	service_set_replica(d, repl_peers_feeding(&s->peers, c->name));
	log_info("replication: %s: destination of datastore %s%s", c->name,
		 c->datastore,
		 d->exp->replica ? " (read-only to NFS clients until the "
				   "break)"
				 : " (broken: writable)");
	return 0;
}

static int service_add_src(struct repl_service *s,
			   const struct repl_rel_config *c, char *errbuf,
			   size_t errlen)
{
	struct export *e = service_datastore(s, c, errbuf, errlen);
	struct repl_src *x;
	int err;

	if (!e) {
		return -EINVAL;
	}
	if (!c->url[0] || !c->dst_datastore[0] || !c->key_file[0]) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "[replication %s]: a source needs "
				     "destination_url, destination_datastore "
				     "and key_file",
				     c->name);
	}
	x = calloc(1, sizeof(*x));
	if (!x) {
		return -ENOMEM;
	}
	x->svc = s;
	x->cfg = *c;
	snprintf(x->src_root, sizeof(x->src_root), "%s", e->dir);
	err = service_manifest(s->state_dir, c->datastore, x->src_manifest,
			       sizeof(x->src_manifest));
	if (!err) {
		err = repl_hello_arg(x->src_root, c->dst_datastore, x->hello,
				     sizeof(x->hello));
	}
	if (!err) {
		err = repl_client_new(c->url, c->name, c->key_file, c->ca_file,
				      &s->stop, &x->client, errbuf, errlen);
	}
	if (err) {
		free(x);
		return err == -ENAMETOOLONG
			       ? errbuf_printf(errbuf, errlen, err,
					       "[replication %s]: a path too "
					       "long",
					       c->name)
			       : err;
	}
	x->rel.name = x->cfg.name;
	x->rel.src_root = x->src_root;
	x->rel.src_manifest = x->src_manifest;
	x->rel.to = repl_client_dst(x->client);
	x->rel.hello = x->hello;
	x->rel.state_dir = s->state_dir;
	x->rel.schedule = c->schedule;
	s->src[s->nsrc++] = x;
	err = repl_relation_open(&x->rel, errbuf, errlen);
	if (err) {
		return err;
	}
	x->shown = x->rel;
	log_info("replication: %s: source of datastore %s to %s datastore "
		 "%s, schedule %s (every %" PRId64 " s)",
		 c->name, c->datastore, c->url, c->dst_datastore,
		 c->schedule_seconds ? "seconds" : repl_sched_name(c->schedule),
		 c->schedule_seconds ? (int64_t)c->schedule_seconds
				     : repl_sched_interval(c->schedule));
	return 0;
}

/* One transfer of @x, the lock held on entry and on return. */
static void service_transfer(struct repl_src *x)
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
			 " s: %" PRIu64 " files (%" PRIu64 " resumed), %" PRIu64
			 " bytes sent of %" PRIu64 " candidate, %" PRIu64
			 " removed",
			 x->cfg.name, x->rel.last, service_now() - t0,
			 x->rel.last_stats.files,
			 x->rel.last_stats.files_resumed,
			 x->rel.last_stats.sent_bytes,
			 x->rel.last_stats.candidate_bytes,
			 x->rel.last_stats.removed);
	}
	pthread_mutex_lock(&s->lock);
	x->running = false;
	snprintf(x->error, sizeof(x->error), "%s", rc ? err : "");
	x->shown = x->rel;
	pthread_cond_broadcast(&s->wake);
}

static void *service_worker(void *arg)
{
	struct repl_src *x = arg;
	struct repl_service *s = x->svc;

	pthread_mutex_lock(&s->lock);
	while (!s->stop) {
		if (x->want && !x->running && !x->shown.broken) {
			service_transfer(x);
		} else {
			x->want = x->want && !x->shown.broken;
			pthread_cond_wait(&s->wake, &s->lock);
		}
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* The clock's look at @x at @now (the lock held). */
static void service_tick(struct repl_src *x, int64_t now)
{
	enum repl_sched_action a;

	if (x->shown.broken) {
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

	pthread_mutex_lock(&s->lock);
	while (!s->stop) {
		int64_t now = service_now();

		for (size_t i = 0; i < s->nsrc; i++) {
			service_tick(s->src[i], now);
		}
		pthread_cond_broadcast(&s->wake);
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_sec += 1;
		pthread_cond_timedwait(&s->wake, &s->lock, &t);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

void repl_service_stop(struct repl_service *s)
{
	if (!s) {
		return;
	}
	pthread_mutex_lock(&s->lock);
	__atomic_store_n(&s->stop, true, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&s->wake);
	pthread_mutex_unlock(&s->lock);
	if (s->clock_ok) {
		pthread_join(s->clock, NULL);
	}
	for (size_t i = 0; i < s->nsrc; i++) {
		if (s->src[i]->thread_ok) {
			pthread_join(s->src[i]->thread, NULL);
		}
		repl_client_free(s->src[i]->client);
		free(s->src[i]);
	}
	for (size_t i = 0; i < s->ndst; i++) {
		service_set_replica(&s->dst[i], false);
	}
	pthread_mutex_destroy(&s->peers.lock);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* No datastore is both ends here, and no two relations feed one. */
static int service_check(const struct repl_config *cfg, char *errbuf,
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
			const struct repl_rel_config *b = &cfg->rel[j];

			if (i != j && !strcmp(a->datastore, b->datastore) &&
			    (a->role == REPL_ROLE_DESTINATION ||
			     b->role == REPL_ROLE_DESTINATION)) {
				return errbuf_printf(
					errbuf, errlen, -EINVAL,
					"[replication %s] and [replication "
					"%s]: datastore %s is the destination "
					"of one: it cannot be in another "
					"(the same datastore at both ends, or "
					"fed twice)",
					a->name, b->name, a->datastore);
			}
		}
	}
	return 0;
}

static int service_threads(struct repl_service *s, char *errbuf, size_t errlen)
{
	int err = 0;

	for (size_t i = 0; i < s->nsrc && !err; i++) {
		err = -pthread_create(&s->src[i]->thread, NULL, service_worker,
				      s->src[i]);
		s->src[i]->thread_ok = !err;
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

int repl_service_start(const struct repl_config *cfg,
		       struct export_table *exports, const char *state_dir,
		       struct repl_service **out, char *errbuf, size_t errlen)
{
	struct repl_service *s;
	int err;

	*out = NULL;
	if (!cfg->n) {
		return 0;
	}
	err = service_check(cfg, errbuf, errlen);
	if (err) {
		return err;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		return -ENOMEM;
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->wake, NULL);
	pthread_mutex_init(&s->peers.lock, NULL);
	s->exports = exports;
	/* Absolute, as the store names the manifests (store/local.c). */
	if (!realpath(state_dir, s->state_dir)) {
		snprintf(s->state_dir, sizeof(s->state_dir), "%s", state_dir);
	}
	for (size_t i = 0; i < cfg->n && !err; i++) {
		err = cfg->rel[i].role == REPL_ROLE_SOURCE
			      ? service_add_src(s, &cfg->rel[i], errbuf, errlen)
			      : service_add_dst(s, &cfg->rel[i], errbuf,
						errlen);
	}
	if (!err) {
		err = service_threads(s, errbuf, errlen);
	}
	if (err) {
		repl_service_stop(s);
		return err;
	}
	*out = s;
	return 0;
}

static struct repl_dst_export *service_dst_find(struct repl_service *s,
						const char *name)
{
	for (size_t i = 0; i < s->ndst; i++) {
		if (!strcmp(s->dst[i].name, name)) {
			return &s->dst[i];
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
	struct repl_dst_export *d;
	unsigned status;

	if (!s) {
		struct repl_result r = { .err = -ENOENT };

		snprintf(r.reason, sizeof(r.reason),
			 "this server has no replication relation");
		*outlen = repl_result_encode(&r, out);
		return 404;
	}
	status = repl_peers_handle(&s->peers, name, authorization, b, n, out,
				   outlen);
	d = service_dst_find(s, name);
	if (d) {
		bool on = repl_peers_feeding(&s->peers, name);

		if (on != __atomic_load_n(&d->exp->replica, __ATOMIC_ACQUIRE)) {
			log_info("replication: %s: datastore %s %s", name,
				 d->datastore,
				 on ? "is a replica again: read-only to NFS "
				      "clients"
				    : "broken off: writable by its clients");
			service_set_replica(d, on);
		}
	}
	return status;
}

static void service_status_src(const struct repl_src *x, int64_t now,
			       struct repl_status *o)
{
	const struct repl_relation *r = &x->shown;

	snprintf(o->url, sizeof(o->url), "%s", x->cfg.url);
	snprintf(o->dst_datastore, sizeof(o->dst_datastore), "%s",
		 x->cfg.dst_datastore);
	o->schedule = repl_sched_name(x->cfg.schedule);
	o->schedule_seconds = x->cfg.schedule_seconds;
	o->running = x->running;
	o->broken = r->broken;
	snprintf(o->last, sizeof(o->last), "%s", r->last);
	o->last_ok_s = r->last_ok_s;
	o->last_attempt_s = x->last_attempt_s;
	o->lag_s = repl_relation_lag(r, now);
	o->bytes_total = r->bytes_total;
	o->transfers_ok = r->transfers_ok;
	o->transfers_failed = r->transfers_failed;
	o->skipped = x->sched.skipped;
	o->last_stats = r->last_stats;
	snprintf(o->error, sizeof(o->error), "%s", x->error);
	snprintf(o->alarm, sizeof(o->alarm), "%s", x->alarm);
}

size_t repl_service_status(struct repl_service *s, const char *volume,
			   struct repl_status *out, size_t max)
{
	int64_t now = service_now();
	size_t n = 0;

	if (!s) {
		return 0;
	}
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->nsrc && n < max; i++) {
		struct repl_src *x = s->src[i];

		if (volume && strcmp(volume, x->cfg.datastore)) {
			continue;
		}
		memset(&out[n], 0, sizeof(out[n]));
		snprintf(out[n].name, sizeof(out[n].name), "%s", x->cfg.name);
		snprintf(out[n].datastore, sizeof(out[n].datastore), "%s",
			 x->cfg.datastore);
		out[n].role = REPL_ROLE_SOURCE;
		service_status_src(x, now, &out[n++]);
	}
	pthread_mutex_unlock(&s->lock);
	for (size_t i = 0; i < s->ndst && n < max; i++) {
		if (volume && strcmp(volume, s->dst[i].datastore)) {
			continue;
		}
		memset(&out[n], 0, sizeof(out[n]));
		snprintf(out[n].name, sizeof(out[n].name), "%s",
			 s->dst[i].name);
		snprintf(out[n].datastore, sizeof(out[n].datastore), "%s",
			 s->dst[i].datastore);
		out[n].role = REPL_ROLE_DESTINATION;
		out[n].schedule = "none";
		out[n].lag_s = -1;
		out[n++].broken =
			!repl_peers_feeding(&s->peers, s->dst[i].name);
	}
	return n;
}

/* Break or resync of source relation @x (the lock held; dropped while
 * the destination is asked). */
static int service_src_action(struct repl_service *s, struct repl_src *x,
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

/* Break of destination relation @d, this side: the failover when the
 * source is gone. */
static int service_dst_break(struct repl_service *s, struct repl_dst_export *d,
			     const char *action, char *errbuf, size_t errlen)
{
	int err;

	if (strcmp(action, "break")) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "relation %s: this server is its "
				     "destination: %s is asked of the source's "
				     "server",
				     d->name, action);
	}
	err = repl_peers_break(&s->peers, d->name, errbuf, errlen);
	if (!err) {
		log_info("replication: %s: broken off on the destination: "
			 "datastore %s is writable by its clients",
			 d->name, d->datastore);
		service_set_replica(d, false);
	}
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
	for (size_t i = 0; i < s->ndst; i++) {
		if (!strcmp(s->dst[i].datastore, volume) &&
		    (!relation || !strcmp(relation, s->dst[i].name))) {
			return service_dst_break(s, &s->dst[i], action, errbuf,
						 errlen);
		}
	}
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->nsrc && !err; i++) {
		struct repl_src *x = s->src[i];

		if (strcmp(x->cfg.datastore, volume) ||
		    (relation && strcmp(relation, x->cfg.name))) {
			continue;
		}
		found = true;
		if (!strcmp(action, "transfer")) {
			err = x->shown.broken
				      ? errbuf_printf(errbuf, errlen, -EPERM,
						      "relation %s is broken: "
						      "resync it first",
						      x->cfg.name)
				      : 0;
			x->want = !err;
			pthread_cond_broadcast(&s->wake);
		} else {
			err = service_src_action(s, x, !strcmp(action, "break"),
						 errbuf, errlen);
		}
	}
	pthread_mutex_unlock(&s->lock);
	return !found ? errbuf_printf(errbuf, errlen, -ENOENT,
				      "volume %s: no replication relation%s%s",
				      volume, relation ? " " : "",
				      relation ? relation : "")
		      : err;
}
