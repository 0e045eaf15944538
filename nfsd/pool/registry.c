// SPDX-License-Identifier: Apache-2.0
/*
 * registry: the live pools and volumes behind one mutex.  Every operation
 * edits a scratch copy, checks every rule on it (qos.c), writes the capacity
 * events it implies to the ledger (fsync'd), and only then swaps the copy in:
 * a refused or unrecorded operation changes nothing.  Operations are rare
 * (admin API, config reload); the per-request path never takes this lock.
 */
#include "nfsd/pool/pool.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nfsd/base/errbuf.h"
#include "nfsd/pool/ledger.h"

/* Enough for any diff of two states: a delete and a create, or up to three
 * changes, per pool of either side. */
#define REGISTRY_MAX_EVENTS (3 * 2 * POOL_MAX_POOLS)

struct pool_registry {
	pthread_mutex_t lock;
	struct pool_state *live;
	struct pool_state *scratch;
	struct pool_event *events; /* REGISTRY_MAX_EVENTS, scratch */
	pool_clock_fn clock;
	void *clock_arg;
	struct pool_ledger *ledger; /* borrowed, may be NULL */
};

int64_t pool_clock_realtime(void *arg)
{
	(void)arg;
	return (int64_t)time(NULL);
}

int pool_registry_new(pool_clock_fn clock, void *clock_arg,
		      struct pool_registry **out)
{
	struct pool_registry *reg = calloc(1, sizeof(*reg));

	if (!reg) {
		return -ENOMEM;
	}
	pthread_mutex_init(&reg->lock, NULL);
	reg->live = calloc(1, sizeof(*reg->live));
	reg->scratch = calloc(1, sizeof(*reg->scratch));
	reg->events = calloc(REGISTRY_MAX_EVENTS, sizeof(*reg->events));
	if (!reg->live || !reg->scratch || !reg->events) {
		pool_registry_free(reg);
		return -ENOMEM;
	}
	reg->clock = clock ? clock : pool_clock_realtime;
	reg->clock_arg = clock_arg;
	*out = reg;
	return 0;
}

void pool_registry_free(struct pool_registry *reg)
{
	if (!reg) {
		return;
	}
	pthread_mutex_destroy(&reg->lock);
	free(reg->events);
	free(reg->scratch);
	free(reg->live);
	free(reg);
}

/* Starts an operation: lock, and a scratch copy of the live state. */
static struct pool_state *registry_begin(struct pool_registry *reg)
{
	pthread_mutex_lock(&reg->lock);
	memcpy(reg->scratch, reg->live, sizeof(*reg->scratch));
	return reg->scratch;
}

/* Ends a refused operation: nothing changed. */
static int registry_abort(struct pool_registry *reg, int err)
{
	pthread_mutex_unlock(&reg->lock);
	return err;
}

/* Writes the events between two pool lists, stamped now. */
static int registry_record(struct pool_registry *reg, const struct pool *from,
			   size_t nfrom, const struct pool *to, size_t nto,
			   char *errbuf, size_t errlen)
{
	size_t n = 0;
	int err;

	if (!reg->ledger) {
		return 0;
	}
	err = pool_events_diff(from, nfrom, to, nto, reg->clock(reg->clock_arg),
			       reg->events, REGISTRY_MAX_EVENTS, &n);
	if (err) {
		return errbuf_printf(errbuf, errlen, err,
				     "ledger: too many events at once");
	}
	return pool_ledger_append(reg->ledger, reg->events, n, errbuf, errlen);
}

/* Ends an operation: check the scratch state, record, swap it in. */
static int registry_commit(struct pool_registry *reg,
			   struct pool_limits *limits, char *errbuf,
			   size_t errlen)
{
	struct pool_state *st = reg->scratch;
	int err;

	err = pool_state_check(st, errbuf, errlen);
	if (!err) {
		err = registry_record(reg, reg->live->pools, reg->live->npools,
				      st->pools, st->npools, errbuf, errlen);
	}
	if (!err) {
		reg->scratch = reg->live;
		reg->live = st;
		if (limits) {
			pool_state_limits(reg->live, limits);
		}
	}
	pthread_mutex_unlock(&reg->lock);
	return err;
}

int pool_registry_load(struct pool_registry *reg, const struct pool_state *st,
		       struct pool_limits *limits, char *errbuf, size_t errlen)
{
	memcpy(registry_begin(reg), st, sizeof(*st));
	return registry_commit(reg, limits, errbuf, errlen);
}

int pool_registry_ledger_attach(struct pool_registry *reg,
				struct pool_ledger *ledger, char *errbuf,
				size_t errlen)
{
	struct pool_event *events = NULL;
	struct pool *known = NULL;
	size_t nevents = 0, nknown = 0;
	int err;

	pthread_mutex_lock(&reg->lock);
	reg->ledger = ledger;
	if (!ledger) {
		err = 0;
		goto out;
	}
	known = calloc(POOL_MAX_POOLS, sizeof(*known));
	err = known ? pool_ledger_events(ledger, &events, &nevents) : -ENOMEM;
	if (err) {
		errbuf_printf(errbuf, errlen, err, "ledger: out of memory");
		goto out;
	}
	err = pool_events_replay(events, nevents, known, POOL_MAX_POOLS,
				 &nknown, errbuf, errlen);
	if (!err) {
		err = registry_record(reg, known, nknown, reg->live->pools,
				      reg->live->npools, errbuf, errlen);
	}
out:
	if (err) {
		reg->ledger = NULL;
	}
	pthread_mutex_unlock(&reg->lock);
	free(events);
	free(known);
	return err;
}

void pool_registry_snapshot(struct pool_registry *reg, struct pool_state *out)
{
	pthread_mutex_lock(&reg->lock);
	memcpy(out, reg->live, sizeof(*out));
	pthread_mutex_unlock(&reg->lock);
}

void pool_registry_limits(struct pool_registry *reg, struct pool_limits *out)
{
	pthread_mutex_lock(&reg->lock);
	pool_state_limits(reg->live, out);
	pthread_mutex_unlock(&reg->lock);
}

/* Finds pool @name in the scratch copy, or says why not. */
static struct pool *registry_pool(struct pool_state *st, const char *name,
				  int *err, char *errbuf, size_t errlen)
{
	struct pool *p = pool_state_find_pool(st, name);

	if (!p) {
		*err = errbuf_printf(errbuf, errlen, -ENOENT,
				     "pool '%.63s' does not exist", name);
	}
	return p;
}

/* Starts an operation on pool @name: *st returns the scratch copy and *p
 * the pool in it.  Returns 0, or -ENOENT (the reason in errbuf) with the
 * operation over. */
static int registry_begin_pool(struct pool_registry *reg, const char *name,
			       struct pool_state **st, struct pool **p,
			       char *errbuf, size_t errlen)
{
	int err = 0;

	*st = registry_begin(reg);
	*p = registry_pool(*st, name, &err, errbuf, errlen);
	return *p ? 0 : registry_abort(reg, err);
}

/* As registry_begin_pool(), for volume @name. */
static int registry_begin_volume(struct pool_registry *reg, const char *name,
				 struct pool_state **st, struct pool_volume **v,
				 char *errbuf, size_t errlen)
{
	*st = registry_begin(reg);
	*v = pool_state_find_volume(*st, name);
	if (*v) {
		return 0;
	}
	return registry_abort(
		reg, errbuf_printf(errbuf, errlen, -ENOENT,
				   "volume '%.63s' does not exist", name));
}

int pool_registry_pool_create(struct pool_registry *reg,
			      const struct pool *spec,
			      struct pool_limits *limits, char *errbuf,
			      size_t errlen)
{
	struct pool_state *st = registry_begin(reg);

	if (pool_state_find_pool(st, spec->name)) {
		return registry_abort(reg,
				      errbuf_printf(errbuf, errlen, -EEXIST,
						    "pool %.63s already exists",
						    spec->name));
	}
	if (st->npools == POOL_MAX_POOLS) {
		return registry_abort(
			reg, errbuf_printf(errbuf, errlen, -ENOSPC,
					   "pool %.63s: already %d pools",
					   spec->name, POOL_MAX_POOLS));
	}
	st->pools[st->npools++] = *spec;
	return registry_commit(reg, limits, errbuf, errlen);
}

int pool_registry_pool_resize(struct pool_registry *reg, const char *name,
			      uint32_t size_tib, struct pool_limits *limits,
			      char *errbuf, size_t errlen)
{
	struct pool_state *st;
	struct pool *p;
	int err;

	err = registry_begin_pool(reg, name, &st, &p, errbuf, errlen);
	if (err) {
		return err;
	}
	p->size_tib = size_tib;
	return registry_commit(reg, limits, errbuf, errlen);
}

int pool_registry_pool_set_level(struct pool_registry *reg, const char *name,
				 enum pool_level level,
				 struct pool_limits *limits, char *errbuf,
				 size_t errlen)
{
	struct pool_state *st;
	struct pool *p;
	int err;

	err = registry_begin_pool(reg, name, &st, &p, errbuf, errlen);
	if (err) {
		return err;
	}
	if (level != POOL_LEVEL_FLEXIBLE) {
		p->purchased_mibps = 0;
	}
	p->level = level;
	return registry_commit(reg, limits, errbuf, errlen);
}

int pool_registry_pool_set_throughput(struct pool_registry *reg,
				      const char *name,
				      uint32_t purchased_mibps,
				      struct pool_limits *limits, char *errbuf,
				      size_t errlen)
{
	struct pool_state *st;
	struct pool *p;
	int err;

	err = registry_begin_pool(reg, name, &st, &p, errbuf, errlen);
	if (err) {
		return err;
	}
	p->purchased_mibps = purchased_mibps;
	return registry_commit(reg, limits, errbuf, errlen);
}

/* A volume's current limit as a manual one: whole MiB/s, at least 1. */
static uint32_t registry_manual_from(const struct pool *p,
				     const struct pool_volume *v)
{
	uint64_t mibps = pool_volume_limit_bytes_per_s(p, v) / POOL_MIB_BYTES;

	return mibps ? (uint32_t)mibps : 1;
}

int pool_registry_pool_set_qos(struct pool_registry *reg, const char *name,
			       enum pool_qos qos, struct pool_limits *limits,
			       char *errbuf, size_t errlen)
{
	struct pool_state *st;
	struct pool *p;
	int err;

	err = registry_begin_pool(reg, name, &st, &p, errbuf, errlen);
	if (err) {
		return err;
	}
	if (p->qos == qos) {
		return registry_commit(reg, limits, errbuf, errlen);
	}
	if (qos != POOL_QOS_MANUAL) {
		return registry_abort(
			reg, errbuf_printf(errbuf, errlen, -EINVAL,
					   "pool %s: QoS changes only from "
					   "auto to manual",
					   name));
	}
	for (size_t i = 0; i < st->nvolumes; i++) {
		struct pool_volume *v = &st->volumes[i];

		if (!strcmp(v->pool, p->name)) {
			v->manual_mibps = registry_manual_from(p, v);
		}
	}
	p->qos = qos;
	return registry_commit(reg, limits, errbuf, errlen);
}

int pool_registry_pool_delete(struct pool_registry *reg, const char *name,
			      struct pool_limits *limits, char *errbuf,
			      size_t errlen)
{
	struct pool_state *st;
	struct pool *p;
	size_t held = 0;
	int err;

	err = registry_begin_pool(reg, name, &st, &p, errbuf, errlen);
	if (err) {
		return err;
	}
	for (size_t i = 0; i < st->nvolumes; i++) {
		held += !strcmp(st->volumes[i].pool, name);
	}
	if (held) {
		return registry_abort(
			reg, errbuf_printf(errbuf, errlen, -EINVAL,
					   "pool %s: still holds %zu "
					   "volume(s); delete or move them "
					   "first",
					   name, held));
	}
	memmove(p, p + 1,
		(size_t)(st->pools + st->npools - (p + 1)) * sizeof(*p));
	st->npools--;
	return registry_commit(reg, limits, errbuf, errlen);
}

int pool_registry_volume_create(struct pool_registry *reg,
				const struct pool_volume *spec,
				struct pool_limits *limits, char *errbuf,
				size_t errlen)
{
	struct pool_state *st = registry_begin(reg);

	if (pool_state_find_volume(st, spec->name)) {
		return registry_abort(
			reg, errbuf_printf(errbuf, errlen, -EEXIST,
					   "volume %.63s already exists",
					   spec->name));
	}
	if (!pool_state_find_pool(st, spec->pool)) {
		return registry_abort(
			reg, errbuf_printf(errbuf, errlen, -ENOENT,
					   "volume %.63s: pool '%.63s' does "
					   "not exist",
					   spec->name, spec->pool));
	}
	if (st->nvolumes == POOL_MAX_VOLUMES) {
		return registry_abort(
			reg, errbuf_printf(errbuf, errlen, -ENOSPC,
					   "volume %.63s: already %d volumes",
					   spec->name, POOL_MAX_VOLUMES));
	}
	st->volumes[st->nvolumes++] = *spec;
	return registry_commit(reg, limits, errbuf, errlen);
}

int pool_registry_volume_resize(struct pool_registry *reg, const char *name,
				uint64_t quota_bytes,
				struct pool_limits *limits, char *errbuf,
				size_t errlen)
{
	struct pool_state *st;
	struct pool_volume *v;
	int err;

	err = registry_begin_volume(reg, name, &st, &v, errbuf, errlen);
	if (err) {
		return err;
	}
	v->quota_bytes = quota_bytes;
	return registry_commit(reg, limits, errbuf, errlen);
}

int pool_registry_volume_delete(struct pool_registry *reg, const char *name,
				struct pool_limits *limits, char *errbuf,
				size_t errlen)
{
	struct pool_state *st;
	struct pool_volume *v;
	int err;

	err = registry_begin_volume(reg, name, &st, &v, errbuf, errlen);
	if (err) {
		return err;
	}
	memmove(v, v + 1,
		(size_t)(st->volumes + st->nvolumes - (v + 1)) * sizeof(*v));
	st->nvolumes--;
	return registry_commit(reg, limits, errbuf, errlen);
}

int pool_registry_volume_move(struct pool_registry *reg, const char *name,
			      const char *to, uint32_t manual_mibps,
			      struct pool_limits *limits, char *errbuf,
			      size_t errlen)
{
	struct pool_state *st;
	struct pool_volume *v;
	struct pool *from, *dest;
	int err;

	err = registry_begin_volume(reg, name, &st, &v, errbuf, errlen);
	if (err) {
		return err;
	}
	dest = registry_pool(st, to, &err, errbuf, errlen);
	if (!dest) {
		return registry_abort(reg, err);
	}
	from = pool_state_find_pool(st, v->pool);
	if (dest->qos == POOL_QOS_AUTO) {
		v->manual_mibps = 0;
	} else if (manual_mibps) {
		v->manual_mibps = manual_mibps;
	} else {
		v->manual_mibps = from ? registry_manual_from(from, v) : 1;
	}
	snprintf(v->pool, sizeof(v->pool), "%s", dest->name);
	return registry_commit(reg, limits, errbuf, errlen);
}

int pool_registry_volume_set_limit(struct pool_registry *reg, const char *name,
				   uint32_t manual_mibps,
				   struct pool_limits *limits, char *errbuf,
				   size_t errlen)
{
	struct pool_state *st;
	struct pool_volume *v;
	const struct pool *p;
	int err;

	err = registry_begin_volume(reg, name, &st, &v, errbuf, errlen);
	if (err) {
		return err;
	}
	p = pool_state_pool(st, v->pool);
	if (p && p->qos != POOL_QOS_MANUAL) {
		return registry_abort(
			reg, errbuf_printf(errbuf, errlen, -EINVAL,
					   "volume %s: pool %s has auto QoS; "
					   "a throughput limit is set only in "
					   "manual QoS pools",
					   name, p->name));
	}
	v->manual_mibps = manual_mibps;
	return registry_commit(reg, limits, errbuf, errlen);
}
