// SPDX-License-Identifier: Apache-2.0
/*
 * status: what GET /volumes/NAME/replication, GET /replications and
 * /metrics show of the relations (service.h repl_service_status()).
 */
#include "nfsd/repl/service.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "nfsd/repl/repl_int.h"

/* @x's figures as the sending end (the lock held). */
static void status_src(const struct repl_item *x, int64_t now,
		       struct repl_status *o)
{
	const struct repl_relation *r = &x->shown;

	o->running = x->running;
	o->broken = r->broken;
	o->state = r->broken	 ? "broken"
		   : x->running	 ? "transferring"
		   : !r->last[0] ? "uninitialized"
				 : "idle";
	snprintf(o->last, sizeof(o->last), "%s", r->last);
	o->last_ok_s = r->last_ok_s;
	o->last_attempt_s = x->last_attempt_s;
	o->lag_s = repl_relation_lag(r, now);
	o->bytes_total = r->bytes_total;
	o->transfers_ok = r->transfers_ok;
	o->transfers_failed = r->transfers_failed;
	o->skipped = x->sched.skipped;
	o->last_stats = r->last_stats;
	o->last_snapshots = r->last_snapshots;
	o->last_snapshots_deleted = r->last_snapshots_deleted;
	o->snapshots_total = r->snapshots_total;
	o->last_err = r->last_err;
	o->last_err_s = r->last_err_s;
	snprintf(o->error, sizeof(o->error), "%s", x->error);
	snprintf(o->alarm, sizeof(o->alarm), "%s", x->alarm);
}

size_t repl_service_status(struct repl_service *s, const char *volume,
			   struct repl_status *out, size_t max)
{
	int64_t now = (int64_t)time(NULL);
	size_t n = 0;

	if (!s) {
		return 0;
	}
	pthread_rwlock_rdlock(&s->list);
	for (size_t i = 0; i < s->n && n < max; i++) {
		struct repl_item *x = s->item[i];
		struct repl_status *o = &out[n];
		const char *url, *ds;
		bool applying = false;

		if (volume && strcmp(volume, x->cfg.datastore)) {
			continue;
		}
		memset(o, 0, sizeof(*o));
		snprintf(o->name, sizeof(o->name), "%s", x->cfg.name);
		o->api = x->api;
		snprintf(o->datastore, sizeof(o->datastore), "%s",
			 x->cfg.datastore);
		repl__other(&x->cfg, &url, &ds);
		snprintf(o->url, sizeof(o->url), "%s", url);
		snprintf(o->dst_datastore, sizeof(o->dst_datastore), "%s", ds);
		o->schedule = repl_sched_name(x->cfg.schedule);
		o->schedule_seconds = x->cfg.schedule_seconds;
		/* The peers' state first: never under the service's lock. */
		(void)repl_peers_state(&s->peers, x->cfg.name, &o->broken,
				       &applying, o->last);
		pthread_mutex_lock(&s->lock);
		o->reversed = x->reversed;
		o->role = repl__item_sends(x) ? REPL_ROLE_SOURCE
					      : REPL_ROLE_DESTINATION;
		if (o->role == REPL_ROLE_SOURCE) {
			status_src(x, now, o);
		} else {
			o->running = applying;
			o->state = o->broken  ? "broken"
				   : applying ? "applying"
					      : "idle";
			o->lag_s = -1;
		}
		pthread_mutex_unlock(&s->lock);
		n++;
	}
	pthread_rwlock_unlock(&s->list);
	return n;
}
