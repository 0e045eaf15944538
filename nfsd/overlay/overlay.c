// SPDX-License-Identifier: Apache-2.0
/*
 * overlay: the difference between the config's state and the live one
 * (overlay_diff), and that difference laid over a config again
 * (overlay_apply), checked by the pool rules as a whole.
 */
#include "nfsd/overlay/overlay.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/base/errbuf.h"

void overlay_clear(struct overlay *ov)
{
	ov->npools = 0;
	ov->nvolumes = 0;
	ov->caps_fields = 0;
	memset(&ov->caps, 0, sizeof(ov->caps));
}

bool overlay_empty(const struct overlay *ov)
{
	return !ov->npools && !ov->nvolumes && !ov->caps_fields;
}

/* The fields in which @a and @b differ. */
static unsigned overlay_pool_fields(const struct pool *a, const struct pool *b)
{
	return (a->level != b->level ? OVERLAY_POOL_LEVEL : 0) |
	       (a->qos != b->qos ? OVERLAY_POOL_QOS : 0) |
	       (a->size_tib != b->size_tib ? OVERLAY_POOL_SIZE : 0) |
	       (a->purchased_mibps != b->purchased_mibps
			? OVERLAY_POOL_PURCHASED
			: 0);
}

static unsigned overlay_volume_fields(const struct pool_volume *a,
				      const struct pool_volume *b)
{
	return (strcmp(a->pool, b->pool) ? OVERLAY_VOLUME_POOL : 0) |
	       (a->quota_bytes != b->quota_bytes ? OVERLAY_VOLUME_QUOTA : 0) |
	       (a->manual_mibps != b->manual_mibps ? OVERLAY_VOLUME_LIMIT : 0);
}

static unsigned overlay_caps_fields(const struct traffic_caps *a,
				    const struct traffic_caps *b)
{
	return (a->scale != b->scale ? OVERLAY_CAPS_SCALE : 0) |
	       (a->flow_bytes_per_s != b->flow_bytes_per_s
			? OVERLAY_CAPS_FLOW_BYTES
			: 0) |
	       (a->flow_ops_per_s != b->flow_ops_per_s ? OVERLAY_CAPS_FLOW_OPS
						       : 0) |
	       (a->host_bytes_per_s != b->host_bytes_per_s
			? OVERLAY_CAPS_HOST_BYTES
			: 0) |
	       (a->host_ops_per_s != b->host_ops_per_s ? OVERLAY_CAPS_HOST_OPS
						       : 0) |
	       (a->volume_ops_per_s != b->volume_ops_per_s
			? OVERLAY_CAPS_VOLUME_OPS
			: 0) |
	       (a->host_contention != b->host_contention
			? OVERLAY_CAPS_CONTENTION
			: 0) |
	       (a->volume_contention != b->volume_contention
			? OVERLAY_CAPS_VOLUME_CONTENTION
			: 0) |
	       (a->burst_ms != b->burst_ms ? OVERLAY_CAPS_BURST : 0);
}

static void overlay_pool_add(struct overlay *ov, enum overlay_change change,
			     unsigned fields, const struct pool *p)
{
	struct overlay_pool *e = &ov->pools[ov->npools++];

	memset(e, 0, sizeof(*e));
	e->change = change;
	e->fields = fields;
	snprintf(e->pool.name, sizeof(e->pool.name), "%s", p->name);
	if (change != OVERLAY_DELETED) {
		e->pool.level = p->level;
		e->pool.qos = p->qos;
		e->pool.size_tib = p->size_tib;
		e->pool.purchased_mibps = p->purchased_mibps;
	}
}

static void overlay_volume_add(struct overlay *ov, enum overlay_change change,
			       unsigned fields, const struct pool_volume *v)
{
	struct overlay_volume *e = &ov->volumes[ov->nvolumes++];

	memset(e, 0, sizeof(*e));
	e->change = change;
	e->fields = fields;
	snprintf(e->volume.name, sizeof(e->volume.name), "%s", v->name);
	if (change != OVERLAY_DELETED) {
		snprintf(e->volume.pool, sizeof(e->volume.pool), "%s", v->pool);
		e->volume.quota_bytes = v->quota_bytes;
		e->volume.manual_mibps = v->manual_mibps;
	}
}

void overlay_diff(const struct pool_state *base,
		  const struct traffic_caps *base_caps,
		  const struct pool_state *live,
		  const struct traffic_caps *live_caps, struct overlay *out)
{
	struct pool_state *b = (struct pool_state *)base;
	struct pool_state *l = (struct pool_state *)live;

	overlay_clear(out);
	for (size_t i = 0; i < live->npools; i++) {
		const struct pool *p = &live->pools[i];
		const struct pool *was = pool_state_pool(base, p->name);
		unsigned f = was ? overlay_pool_fields(was, p) : 0;

		if (!was) {
			overlay_pool_add(out, OVERLAY_CREATED, OVERLAY_POOL_ALL,
					 p);
		} else if (f) {
			overlay_pool_add(out, OVERLAY_CHANGED, f, p);
		}
	}
	for (size_t i = 0; i < base->npools; i++) {
		if (!pool_state_pool(live, base->pools[i].name)) {
			overlay_pool_add(out, OVERLAY_DELETED, 0,
					 &base->pools[i]);
		}
	}
	for (size_t i = 0; i < live->nvolumes; i++) {
		const struct pool_volume *v = &live->volumes[i];
		const struct pool_volume *was =
			pool_state_find_volume(b, v->name);
		unsigned f = was ? overlay_volume_fields(was, v) : 0;

		if (!was) {
			overlay_volume_add(out, OVERLAY_CREATED,
					   OVERLAY_VOLUME_ALL, v);
		} else if (f) {
			overlay_volume_add(out, OVERLAY_CHANGED, f, v);
		}
	}
	for (size_t i = 0; i < base->nvolumes; i++) {
		if (!pool_state_find_volume(l, base->volumes[i].name)) {
			overlay_volume_add(out, OVERLAY_DELETED, 0,
					   &base->volumes[i]);
		}
	}
	out->caps_fields = overlay_caps_fields(base_caps, live_caps);
	out->caps = *live_caps;
}

/* ---- apply ------------------------------------------------------------- */

static void overlay_pool_set(struct pool *p, const struct overlay_pool *e)
{
	if (e->fields & OVERLAY_POOL_LEVEL) {
		p->level = e->pool.level;
	}
	if (e->fields & OVERLAY_POOL_QOS) {
		p->qos = e->pool.qos;
	}
	if (e->fields & OVERLAY_POOL_SIZE) {
		p->size_tib = e->pool.size_tib;
	}
	if (e->fields & OVERLAY_POOL_PURCHASED) {
		p->purchased_mibps = e->pool.purchased_mibps;
	}
}

static void overlay_volume_set(struct pool_volume *v,
			       const struct overlay_volume *e)
{
	if (e->fields & OVERLAY_VOLUME_POOL) {
		snprintf(v->pool, sizeof(v->pool), "%s", e->volume.pool);
	}
	if (e->fields & OVERLAY_VOLUME_QUOTA) {
		v->quota_bytes = e->volume.quota_bytes;
	}
	if (e->fields & OVERLAY_VOLUME_LIMIT) {
		v->manual_mibps = e->volume.manual_mibps;
	}
}

/* Lays pool entry @e over @st.  Returns 0, or -errno with the reason. */
static int overlay_pool_apply(struct pool_state *st,
			      const struct overlay_pool *e, char *errbuf,
			      size_t errlen)
{
	struct pool *p = pool_state_find_pool(st, e->pool.name);

	switch (e->change) {
	case OVERLAY_CREATED:
		if (!p && st->npools == POOL_MAX_POOLS) {
			return errbuf_printf(errbuf, errlen, -ENOSPC,
					     "already %d pools",
					     POOL_MAX_POOLS);
		}
		if (!p) {
			p = &st->pools[st->npools++];
			memset(p, 0, sizeof(*p));
			snprintf(p->name, sizeof(p->name), "%s", e->pool.name);
		}
		overlay_pool_set(p, e);
		return 0;
	case OVERLAY_CHANGED:
		if (!p) {
			return errbuf_printf(errbuf, errlen, -ENOENT,
					     "the config no longer declares "
					     "pool %s",
					     e->pool.name);
		}
		overlay_pool_set(p, e);
		return 0;
	case OVERLAY_DELETED:
		if (p) {
			memmove(p, p + 1,
				(size_t)(st->pools + st->npools - (p + 1)) *
					sizeof(*p));
			st->npools--;
		}
		return 0;
	}
	return -EINVAL;
}

static bool overlay_exported(const struct export_table *exports,
			     const char *name)
{
	if (!exports) {
		return true;
	}
	for (size_t i = 0; i < exports->count; i++) {
		if (!strcmp(exports->exports[i].name, name)) {
			return true;
		}
	}
	return false;
}

static int overlay_volume_apply(struct pool_state *st,
				const struct overlay_volume *e,
				const struct export_table *exports,
				char *errbuf, size_t errlen)
{
	struct pool_volume *v = pool_state_find_volume(st, e->volume.name);

	switch (e->change) {
	case OVERLAY_CREATED:
		if (!overlay_exported(exports, e->volume.name)) {
			return errbuf_printf(errbuf, errlen, -ENOENT,
					     "the config no longer declares "
					     "datastore %s",
					     e->volume.name);
		}
		if (!v && st->nvolumes == POOL_MAX_VOLUMES) {
			return errbuf_printf(errbuf, errlen, -ENOSPC,
					     "already %d volumes",
					     POOL_MAX_VOLUMES);
		}
		if (!v) {
			v = &st->volumes[st->nvolumes++];
			memset(v, 0, sizeof(*v));
			snprintf(v->name, sizeof(v->name), "%s",
				 e->volume.name);
		}
		overlay_volume_set(v, e);
		return 0;
	case OVERLAY_CHANGED:
		if (!v) {
			return errbuf_printf(errbuf, errlen, -ENOENT,
					     "the config no longer puts "
					     "datastore %s in a pool",
					     e->volume.name);
		}
		overlay_volume_set(v, e);
		return 0;
	case OVERLAY_DELETED:
		if (v) {
			memmove(v, v + 1,
				(size_t)(st->volumes + st->nvolumes - (v + 1)) *
					sizeof(*v));
			st->nvolumes--;
		}
		return 0;
	}
	return -EINVAL;
}

/* Entry @i of @ov: pools first, then volumes. */
static int overlay_entry_apply(const struct overlay *ov, size_t i,
			       struct pool_state *st,
			       const struct export_table *exports, char *errbuf,
			       size_t errlen)
{
	if (i < ov->npools) {
		return overlay_pool_apply(st, &ov->pools[i], errbuf, errlen);
	}
	return overlay_volume_apply(st, &ov->volumes[i - ov->npools], exports,
				    errbuf, errlen);
}

static const char *const overlay_change_names[] = {
	[OVERLAY_CREATED] = "created",
	[OVERLAY_CHANGED] = "changed",
	[OVERLAY_DELETED] = "deleted",
};

/* Appends to @buf (@len bytes, *used of them taken), truncating. */
static void overlay_appendf(char *buf, size_t len, size_t *used,
			    const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*used >= len) {
		return;
	}
	va_start(ap, fmt);
	n = vsnprintf(buf + *used, len - *used, fmt, ap);
	va_end(ap);
	if (n > 0) {
		*used += (size_t)n;
	}
}

/* "pool gold (changed size_tib=2 level=Ultra)" into @buf. */
static void overlay_entry_describe(const struct overlay *ov, size_t i,
				   char *buf, size_t len)
{
	size_t used = 0;

	if (i < ov->npools) {
		const struct overlay_pool *e = &ov->pools[i];

		overlay_appendf(buf, len, &used, "pool %s (%s", e->pool.name,
				overlay_change_names[e->change]);
		if (e->fields & OVERLAY_POOL_LEVEL) {
			overlay_appendf(buf, len, &used, " level=%s",
					pool_level_name(e->pool.level));
		}
		if (e->fields & OVERLAY_POOL_QOS) {
			overlay_appendf(buf, len, &used, " qos=%s",
					pool_qos_name(e->pool.qos));
		}
		if (e->fields & OVERLAY_POOL_SIZE) {
			overlay_appendf(buf, len, &used, " size_tib=%u",
					e->pool.size_tib);
		}
		if (e->fields & OVERLAY_POOL_PURCHASED) {
			overlay_appendf(buf, len, &used, " purchased_mibps=%u",
					e->pool.purchased_mibps);
		}
	} else {
		const struct overlay_volume *e = &ov->volumes[i - ov->npools];

		overlay_appendf(buf, len, &used, "volume %s (%s",
				e->volume.name,
				overlay_change_names[e->change]);
		if (e->fields & OVERLAY_VOLUME_POOL) {
			overlay_appendf(buf, len, &used, " pool=%s",
					e->volume.pool);
		}
		if (e->fields & OVERLAY_VOLUME_QUOTA) {
			overlay_appendf(
				buf, len, &used, " quota_bytes=%llu",
				(unsigned long long)e->volume.quota_bytes);
		}
		if (e->fields & OVERLAY_VOLUME_LIMIT) {
			overlay_appendf(buf, len, &used, " limit_mibps=%u",
					e->volume.manual_mibps);
		}
	}
	overlay_appendf(buf, len, &used, ")");
}

/* Every entry at once: 0 when the result is valid. */
static int overlay_apply_all(const struct overlay *ov,
			     const struct export_table *exports,
			     struct pool_state *st)
{
	size_t n = ov->npools + ov->nvolumes;
	int err = 0;

	for (size_t i = 0; i < n && !err; i++) {
		err = overlay_entry_apply(ov, i, st, exports, NULL, 0);
	}
	return err ? err : pool_state_check(st, NULL, 0);
}

/* One entry over @acc, kept only if the state stays valid: 0, or -errno
 * with the reason in errbuf and @acc as it was (@tmp is scratch). */
static int overlay_apply_one(const struct overlay *ov, size_t i,
			     const struct export_table *exports,
			     struct pool_state *acc, struct pool_state *tmp,
			     char *errbuf, size_t errlen)
{
	int err;

	memcpy(tmp, acc, sizeof(*tmp));
	err = overlay_entry_apply(ov, i, tmp, exports, errbuf, errlen);
	if (!err) {
		err = pool_state_check(tmp, errbuf, errlen);
	}
	if (!err) {
		memcpy(acc, tmp, sizeof(*acc));
	}
	return err;
}

/* Entries one at a time, refused ones retried after every pass that kept
 * one; @why[i] gets the last reason of each entry still pending. */
static size_t overlay_apply_greedy(const struct overlay *ov,
				   const struct export_table *exports,
				   struct pool_state *acc,
				   struct pool_state *tmp, bool *pending,
				   char (*why)[256])
{
	size_t n = ov->npools + ov->nvolumes, left = n;
	bool progress = true;

	for (size_t i = 0; i < n; i++) {
		pending[i] = true;
	}
	while (progress && left) {
		progress = false;
		for (size_t i = 0; i < n; i++) {
			if (!pending[i] ||
			    overlay_apply_one(ov, i, exports, acc, tmp, why[i],
					      sizeof(why[i]))) {
				continue;
			}
			pending[i] = false;
			left--;
			progress = true;
		}
	}
	return left;
}

static void overlay_caps_apply(const struct overlay *ov,
			       struct traffic_caps *caps)
{
	const struct traffic_caps *c = &ov->caps;
	unsigned f = ov->caps_fields;

	if (f & OVERLAY_CAPS_SCALE) {
		caps->scale = c->scale;
	}
	if (f & OVERLAY_CAPS_FLOW_BYTES) {
		caps->flow_bytes_per_s = c->flow_bytes_per_s;
	}
	if (f & OVERLAY_CAPS_FLOW_OPS) {
		caps->flow_ops_per_s = c->flow_ops_per_s;
	}
	if (f & OVERLAY_CAPS_HOST_BYTES) {
		caps->host_bytes_per_s = c->host_bytes_per_s;
	}
	if (f & OVERLAY_CAPS_HOST_OPS) {
		caps->host_ops_per_s = c->host_ops_per_s;
	}
	if (f & OVERLAY_CAPS_VOLUME_OPS) {
		caps->volume_ops_per_s = c->volume_ops_per_s;
	}
	if (f & OVERLAY_CAPS_CONTENTION) {
		caps->host_contention = c->host_contention;
	}
	if (f & OVERLAY_CAPS_VOLUME_CONTENTION) {
		caps->volume_contention = c->volume_contention;
	}
	if (f & OVERLAY_CAPS_BURST) {
		caps->burst_ms = c->burst_ms;
	}
}

int overlay_apply(const struct overlay *ov, const struct pool_state *base,
		  const struct traffic_caps *base_caps,
		  const struct export_table *exports, struct pool_state *out,
		  struct traffic_caps *caps_out, overlay_refused_fn *refused,
		  void *arg, size_t *ndropped)
{
	size_t n = ov->npools + ov->nvolumes, left = 0;
	struct pool_state *tmp = malloc(sizeof(*tmp));
	bool *pending = calloc(n ? n : 1, sizeof(*pending));
	char(*why)[256] = calloc(n ? n : 1, sizeof(*why));
	char entry[512];
	int err = -ENOMEM;

	if (!tmp || !pending || !why) {
		goto out;
	}
	*caps_out = *base_caps;
	overlay_caps_apply(ov, caps_out);
	memcpy(out, base, sizeof(*out));
	err = 0;
	if (!overlay_apply_all(ov, exports, out)) {
		goto out;
	}
	memcpy(out, base, sizeof(*out));
	left = overlay_apply_greedy(ov, exports, out, tmp, pending, why);
	for (size_t i = 0; i < n && refused; i++) {
		if (!pending[i]) {
			continue;
		}
		overlay_entry_describe(ov, i, entry, sizeof(entry));
		refused(arg, entry, why[i]);
	}
out:
	if (ndropped) {
		*ndropped = left;
	}
	free(why);
	free(pending);
	free(tmp);
	return err;
}
