// SPDX-License-Identifier: Apache-2.0
/*
 * traffic: the shared objects of the admission hierarchy (hosts, volumes,
 * pools), their life times, and the live changes of their limits and of
 * the caps.  Admission itself is flow.c.
 */
#include "nfsd/traffic/traffic_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void traffic_caps_default(struct traffic_caps *caps)
{
	memset(caps, 0, sizeof(*caps));
	caps->scale = 1.0;
	caps->burst_ms = 10;
}

static bool traffic_caps_valid(const struct traffic_caps *caps)
{
	return caps->scale > 0 && isfinite(caps->scale) &&
	       caps->host_contention >= 0 && isfinite(caps->host_contention) &&
	       caps->volume_contention >= 0 &&
	       isfinite(caps->volume_contention) && caps->burst_ms > 0;
}

int64_t traffic_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

uint64_t traffic__scale(const struct traffic_caps *caps, uint64_t published)
{
	long double v;

	if (!published) {
		return 0;
	}
	v = roundl((long double)published * caps->scale);
	if (v < 1) {
		return 1;
	}
	if (v >= (long double)UINT64_MAX) {
		return UINT64_MAX;
	}
	return (uint64_t)v;
}

uint64_t traffic__burst(uint32_t burst_ms, uint64_t rate_per_s)
{
	unsigned __int128 b = (unsigned __int128)rate_per_s * burst_ms / 1000;

	if (b < 1) {
		return 1;
	}
	return b > UINT64_MAX ? UINT64_MAX : (uint64_t)b;
}

/* (Re)sets one bucket to @rate_per_s with the configured depth. */
static void traffic_bucket_set(struct token_bucket *b, uint32_t burst_ms,
			       uint64_t rate_per_s, int64_t now_ns)
{
	/* Cannot fail: the burst is never 0. */
	(void)token_bucket_set_rate(
		b, rate_per_s, traffic__burst(burst_ms, rate_per_s), now_ns);
}

int traffic_new(const struct traffic_caps *caps, struct traffic **out)
{
	struct traffic *t;

	if (!traffic_caps_valid(caps)) {
		return -EINVAL;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		return -ENOMEM;
	}
	pthread_mutex_init(&t->lock, NULL);
	t->caps = *caps;
	t->next_flow_id = 1;
	*out = t;
	return 0;
}

static void traffic_pool_free(struct traffic_pool *p)
{
	pthread_mutex_destroy(&p->lock);
	free(p);
}

static void traffic_volume_free(struct traffic_volume *v)
{
	pthread_mutex_destroy(&v->lock);
	free(v);
}

void traffic_free(struct traffic *t)
{
	if (!t) {
		return;
	}
	while (t->volumes) {
		struct traffic_volume *v = t->volumes;

		t->volumes = v->next;
		traffic_volume_free(v);
	}
	while (t->pools) {
		struct traffic_pool *p = t->pools;

		t->pools = p->next;
		traffic_pool_free(p);
	}
	while (t->hosts) {
		struct traffic_host *h = t->hosts;

		t->hosts = h->next;
		pthread_mutex_destroy(&h->lock);
		free(h);
	}
	pthread_mutex_destroy(&t->lock);
	free(t);
}

void traffic_caps_get(struct traffic *t, struct traffic_caps *out)
{
	pthread_mutex_lock(&t->lock);
	*out = t->caps;
	pthread_mutex_unlock(&t->lock);
}

/* Host buckets and the flow caps it hands its flows, under h->lock. */
static void traffic_host_apply(struct traffic *t, struct traffic_host *h,
			       int64_t now_ns)
{
	const struct traffic_caps *c = &t->caps;

	traffic_bucket_set(&h->bytes, c->burst_ms,
			   traffic__scale(c, c->host_bytes_per_s), now_ns);
	traffic_bucket_set(&h->ops, c->burst_ms,
			   traffic__scale(c, c->host_ops_per_s), now_ns);
	h->flow_bytes_per_s = traffic__scale(c, c->flow_bytes_per_s);
	h->flow_ops_per_s = traffic__scale(c, c->flow_ops_per_s);
	h->contention = c->host_contention;
	h->volume_contention = c->volume_contention;
	h->burst_ms = c->burst_ms;
	h->caps_gen = t->caps_gen;
}

static void traffic_volume_apply(struct traffic *t, struct traffic_volume *v,
				 int64_t now_ns)
{
	const struct traffic_caps *c = &t->caps;

	traffic_bucket_set(&v->bytes, c->burst_ms,
			   traffic__scale(c, v->limit_bytes_per_s), now_ns);
	traffic_bucket_set(&v->ops, c->burst_ms,
			   traffic__scale(c, c->volume_ops_per_s), now_ns);
}

static void traffic_pool_apply(struct traffic *t, struct traffic_pool *p,
			       int64_t now_ns)
{
	traffic_bucket_set(&p->bytes, t->caps.burst_ms,
			   traffic__scale(&t->caps, p->throughput_bytes_per_s),
			   now_ns);
}

int traffic_caps_set(struct traffic *t, const struct traffic_caps *caps,
		     int64_t now_ns)
{
	if (!traffic_caps_valid(caps)) {
		return -EINVAL;
	}
	pthread_mutex_lock(&t->lock);
	t->caps = *caps;
	t->caps_gen++;
	for (struct traffic_host *h = t->hosts; h; h = h->next) {
		pthread_mutex_lock(&h->lock);
		traffic_host_apply(t, h, now_ns);
		pthread_mutex_unlock(&h->lock);
	}
	for (struct traffic_volume *v = t->volumes; v; v = v->next) {
		pthread_mutex_lock(&v->lock);
		traffic_volume_apply(t, v, now_ns);
		pthread_mutex_unlock(&v->lock);
	}
	for (struct traffic_pool *p = t->pools; p; p = p->next) {
		pthread_mutex_lock(&p->lock);
		traffic_pool_apply(t, p, now_ns);
		pthread_mutex_unlock(&p->lock);
	}
	pthread_mutex_unlock(&t->lock);
	return 0;
}

struct traffic_host *traffic__host_get(struct traffic *t, const char *addr,
				       int64_t now_ns)
{
	struct traffic_host *h;

	for (h = t->hosts; h; h = h->next) {
		if (!strcmp(h->addr, addr)) {
			return h;
		}
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		return NULL;
	}
	snprintf(h->addr, sizeof(h->addr), "%s", addr);
	pthread_mutex_init(&h->lock, NULL);
	token_bucket_init(&h->bytes, 0, 0, now_ns);
	token_bucket_init(&h->ops, 0, 0, now_ns);
	traffic_host_apply(t, h, now_ns);
	h->next = t->hosts;
	t->hosts = h;
	return h;
}

void traffic__host_unref(struct traffic *t, struct traffic_host *h)
{
	struct traffic_host **pp;

	if (--h->refs) {
		return;
	}
	for (pp = &t->hosts; *pp != h; pp = &(*pp)->next)
		;
	*pp = h->next;
	pthread_mutex_destroy(&h->lock);
	free(h);
}

struct traffic_volume *traffic__volume_get(struct traffic *t, const char *name,
					   int64_t now_ns)
{
	struct traffic_volume *v;

	for (v = t->volumes; v; v = v->next) {
		if (!strcmp(v->name, name)) {
			return v;
		}
	}
	v = calloc(1, sizeof(*v));
	if (!v) {
		return NULL;
	}
	snprintf(v->name, sizeof(v->name), "%s", name);
	pthread_mutex_init(&v->lock, NULL);
	token_bucket_init(&v->bytes, 0, 0, now_ns);
	token_bucket_init(&v->ops, 0, 0, now_ns);
	traffic_volume_apply(t, v, now_ns);
	v->next = t->volumes;
	t->volumes = v;
	return v;
}

/* Drops a pool nobody uses or configures any more, under t->lock. */
static void traffic_pool_release(struct traffic *t, struct traffic_pool *p)
{
	struct traffic_pool **pp;

	if (p->refs || p->configured) {
		return;
	}
	for (pp = &t->pools; *pp != p; pp = &(*pp)->next)
		;
	*pp = p->next;
	traffic_pool_free(p);
}

/* Points @v at @p (may be NULL), under t->lock. */
static void traffic_volume_repoint(struct traffic *t, struct traffic_volume *v,
				   struct traffic_pool *p)
{
	struct traffic_pool *old;

	if (v->pool == p) {
		return;
	}
	if (p) {
		p->refs++;
	}
	pthread_mutex_lock(&v->lock);
	old = v->pool;
	v->pool = p;
	pthread_mutex_unlock(&v->lock);
	if (old) {
		old->refs--;
		traffic_pool_release(t, old);
	}
}

/* Drops a volume no flow uses and nobody configures, under t->lock. */
static void traffic_volume_release(struct traffic *t, struct traffic_volume *v)
{
	struct traffic_volume **pp;

	if (v->refs || v->configured || v->kept) {
		return;
	}
	traffic_volume_repoint(t, v, NULL);
	for (pp = &t->volumes; *pp != v; pp = &(*pp)->next)
		;
	*pp = v->next;
	traffic_volume_free(v);
}

void traffic__volume_unref(struct traffic *t, struct traffic_volume *v)
{
	v->refs--;
	traffic_volume_release(t, v);
}

static struct traffic_pool *traffic_pool_get(struct traffic *t,
					     const char *name, int64_t now_ns)
{
	struct traffic_pool *p;

	for (p = t->pools; p; p = p->next) {
		if (!strcmp(p->name, name)) {
			return p;
		}
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		return NULL;
	}
	snprintf(p->name, sizeof(p->name), "%s", name);
	pthread_mutex_init(&p->lock, NULL);
	token_bucket_init(&p->bytes, 0, 0, now_ns);
	p->next = t->pools;
	t->pools = p;
	return p;
}

static bool traffic_name_valid(const char *name)
{
	return name && strnlen(name, TRAFFIC_NAME_MAX) < TRAFFIC_NAME_MAX &&
	       name[0];
}

/* traffic_volume_set() under t->lock. */
static int traffic_volume_set_locked(struct traffic *t, const char *volume,
				     const char *pool, uint64_t limit,
				     int64_t now_ns)
{
	struct traffic_volume *v;
	struct traffic_pool *p = NULL;

	if (!traffic_name_valid(volume) ||
	    (pool && pool[0] && !traffic_name_valid(pool))) {
		return -EINVAL;
	}
	if (pool && pool[0]) {
		p = traffic_pool_get(t, pool, now_ns);
		if (!p) {
			return -ENOMEM;
		}
	}
	v = traffic__volume_get(t, volume, now_ns);
	if (!v) {
		/* A pool created just now, with no user, goes away again. */
		if (p) {
			traffic_pool_release(t, p);
		}
		return -ENOMEM;
	}
	v->configured = true;
	pthread_mutex_lock(&v->lock);
	v->limit_bytes_per_s = limit;
	traffic_volume_apply(t, v, now_ns);
	pthread_mutex_unlock(&v->lock);
	traffic_volume_repoint(t, v, p);
	return 0;
}

int traffic_volume_set(struct traffic *t, const char *volume, const char *pool,
		       uint64_t limit_bytes_per_s, int64_t now_ns)
{
	int err;

	pthread_mutex_lock(&t->lock);
	err = traffic_volume_set_locked(t, volume, pool, limit_bytes_per_s,
					now_ns);
	pthread_mutex_unlock(&t->lock);
	return err;
}

static int traffic_pool_set_locked(struct traffic *t, const char *pool,
				   uint64_t throughput, int64_t now_ns)
{
	struct traffic_pool *p;

	if (!traffic_name_valid(pool)) {
		return -EINVAL;
	}
	p = traffic_pool_get(t, pool, now_ns);
	if (!p) {
		return -ENOMEM;
	}
	p->configured = true;
	pthread_mutex_lock(&p->lock);
	p->throughput_bytes_per_s = throughput;
	traffic_pool_apply(t, p, now_ns);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

int traffic_pool_set(struct traffic *t, const char *pool,
		     uint64_t throughput_bytes_per_s, int64_t now_ns)
{
	int err;

	pthread_mutex_lock(&t->lock);
	err = traffic_pool_set_locked(t, pool, throughput_bytes_per_s, now_ns);
	pthread_mutex_unlock(&t->lock);
	return err;
}

static bool traffic_limits_has_volume(const struct pool_limits *l,
				      const char *name)
{
	for (size_t i = 0; i < l->nvolumes; i++) {
		if (!strcmp(l->volumes[i].name, name)) {
			return true;
		}
	}
	return false;
}

static bool traffic_limits_has_pool(const struct pool_limits *l,
				    const char *name)
{
	for (size_t i = 0; i < l->npools; i++) {
		if (!strcmp(l->pools[i].name, name)) {
			return true;
		}
	}
	return false;
}

int traffic_volume_keep(struct traffic *t, const char *volume, int64_t now_ns)
{
	struct traffic_volume *v;

	if (!traffic_name_valid(volume)) {
		return -EINVAL;
	}
	pthread_mutex_lock(&t->lock);
	v = traffic__volume_get(t, volume, now_ns);
	if (v) {
		v->kept = true;
	}
	pthread_mutex_unlock(&t->lock);
	return v ? 0 : -ENOMEM;
}

int traffic_limits_apply(struct traffic *t, const struct pool_limits *limits,
			 int64_t now_ns)
{
	struct traffic_volume *v, *vnext;
	struct traffic_pool *p, *pnext;
	int err = 0;

	pthread_mutex_lock(&t->lock);
	for (size_t i = 0; i < limits->npools && !err; i++) {
		err = traffic_pool_set_locked(
			t, limits->pools[i].name,
			limits->pools[i].throughput_bytes_per_s, now_ns);
	}
	for (size_t i = 0; i < limits->nvolumes && !err; i++) {
		err = traffic_volume_set_locked(
			t, limits->volumes[i].name, limits->volumes[i].pool,
			limits->volumes[i].limit_bytes_per_s, now_ns);
	}
	for (v = t->volumes; v && !err; v = vnext) {
		vnext = v->next;
		if (!v->configured ||
		    traffic_limits_has_volume(limits, v->name)) {
			continue;
		}
		pthread_mutex_lock(&v->lock);
		v->limit_bytes_per_s = 0;
		traffic_volume_apply(t, v, now_ns);
		pthread_mutex_unlock(&v->lock);
		traffic_volume_repoint(t, v, NULL);
		v->configured = false;
		traffic_volume_release(t, v);
	}
	for (p = t->pools; p && !err; p = pnext) {
		pnext = p->next;
		if (traffic_limits_has_pool(limits, p->name)) {
			continue;
		}
		p->configured = false;
		traffic_pool_release(t, p);
	}
	pthread_mutex_unlock(&t->lock);
	return err;
}
