// SPDX-License-Identifier: Apache-2.0
/*
 * events: the life cycle of a pool as the ledger tells it.  Replay turns
 * events into the pools alive after them; diff turns two pool lists into the
 * events between them (how the registry writes the ledger).
 */
#include "nfsd/pool/ledger.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "nfsd/base/base.h"

static const char *const pool_event_names[] = {
	[POOL_EVENT_CREATED] = "created",
	[POOL_EVENT_RESIZED] = "resized",
	[POOL_EVENT_LEVEL_CHANGED] = "level-changed",
	[POOL_EVENT_THROUGHPUT_CHANGED] = "throughput-changed",
	[POOL_EVENT_DELETED] = "deleted",
};

const char *pool_event_type_name(enum pool_event_type type)
{
	if ((unsigned)type >= ARRAY_SIZE(pool_event_names) ||
	    !pool_event_names[type]) {
		return "?";
	}
	return pool_event_names[type];
}

int pool_event_apply(const struct pool_event *ev, bool *alive,
		     struct pool *state, char *errbuf, size_t errlen)
{
	const char *why = NULL;

	if (ev->type == POOL_EVENT_CREATED && *alive) {
		why = "while it already exists";
	} else if (ev->type != POOL_EVENT_CREATED && !*alive) {
		why = "while it does not exist";
	}
	if (why) {
		if (errbuf && errlen) {
			snprintf(errbuf, errlen, "pool %s: %s %s", ev->pool,
				 pool_event_type_name(ev->type), why);
		}
		return -EINVAL;
	}
	if (ev->type == POOL_EVENT_DELETED) {
		*alive = false;
		return 0;
	}
	*alive = true;
	memcpy(state->name, ev->pool, sizeof(state->name));
	state->level = ev->level;
	state->size_tib = ev->size_tib;
	state->purchased_mibps = ev->purchased_mibps;
	if (ev->type == POOL_EVENT_CREATED) {
		state->qos = POOL_QOS_AUTO;
	}
	return 0;
}

static struct pool *events_find(struct pool *pools, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(pools[i].name, name)) {
			return &pools[i];
		}
	}
	return NULL;
}

int pool_events_replay(const struct pool_event *events, size_t n,
		       struct pool *out, size_t max, size_t *nout, char *errbuf,
		       size_t errlen)
{
	size_t count = 0;
	char why[160];

	for (size_t i = 0; i < n; i++) {
		const struct pool_event *ev = &events[i];
		struct pool *p = events_find(out, count, ev->pool);
		struct pool fresh;
		bool alive = p != NULL;
		int err;

		memset(&fresh, 0, sizeof(fresh));
		err = pool_event_apply(ev, &alive, p ? p : &fresh, why,
				       sizeof(why));
		if (err) {
			if (errbuf && errlen) {
				snprintf(errbuf, errlen, "event %zu: %s", i,
					 why);
			}
			return err;
		}
		if (!p && alive) {
			if (count == max) {
				if (errbuf && errlen) {
					snprintf(errbuf, errlen,
						 "event %zu: more than %zu "
						 "pools",
						 i, max);
				}
				return -ENOSPC;
			}
			out[count++] = fresh;
		} else if (p && !alive) {
			/* Keep creation order: close the gap. */
			memmove(p, p + 1,
				(size_t)(out + count - (p + 1)) * sizeof(*p));
			count--;
		}
	}
	*nout = count;
	return 0;
}

static int events_push(struct pool_event *out, size_t max, size_t *nout,
		       enum pool_event_type type, const struct pool *state,
		       int64_t now_s)
{
	struct pool_event *ev;

	if (*nout == max) {
		return -ENOSPC;
	}
	ev = &out[(*nout)++];
	memset(ev, 0, sizeof(*ev));
	ev->type = type;
	ev->time_s = now_s;
	memcpy(ev->pool, state->name, sizeof(ev->pool));
	ev->level = state->level;
	ev->size_tib = state->size_tib;
	ev->purchased_mibps = state->purchased_mibps;
	return 0;
}

static const struct pool *events_find_const(const struct pool *pools, size_t n,
					    const char *name)
{
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(pools[i].name, name)) {
			return &pools[i];
		}
	}
	return NULL;
}

/* One event per changed field, each carrying the state so far. */
static int events_diff_one(const struct pool *a, const struct pool *b,
			   int64_t now_s, struct pool_event *out, size_t max,
			   size_t *nout)
{
	struct pool cur = *a;
	int err = 0;

	if (cur.level != b->level) {
		cur.level = b->level;
		cur.purchased_mibps = b->purchased_mibps;
		err = events_push(out, max, nout, POOL_EVENT_LEVEL_CHANGED,
				  &cur, now_s);
	}
	if (!err && cur.size_tib != b->size_tib) {
		cur.size_tib = b->size_tib;
		err = events_push(out, max, nout, POOL_EVENT_RESIZED, &cur,
				  now_s);
	}
	if (!err && cur.purchased_mibps != b->purchased_mibps) {
		cur.purchased_mibps = b->purchased_mibps;
		err = events_push(out, max, nout, POOL_EVENT_THROUGHPUT_CHANGED,
				  &cur, now_s);
	}
	return err;
}

int pool_events_diff(const struct pool *from, size_t nfrom,
		     const struct pool *to, size_t nto, int64_t now_s,
		     struct pool_event *out, size_t max, size_t *nout)
{
	int err = 0;

	*nout = 0;
	for (size_t i = 0; i < nfrom && !err; i++) {
		if (!events_find_const(to, nto, from[i].name)) {
			err = events_push(out, max, nout, POOL_EVENT_DELETED,
					  &from[i], now_s);
		}
	}
	for (size_t i = 0; i < nto && !err; i++) {
		const struct pool *a =
			events_find_const(from, nfrom, to[i].name);

		if (!a) {
			err = events_push(out, max, nout, POOL_EVENT_CREATED,
					  &to[i], now_s);
		} else {
			err = events_diff_one(a, &to[i], now_s, out, max, nout);
		}
	}
	return err;
}
