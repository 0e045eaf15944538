// SPDX-License-Identifier: Apache-2.0
/*
 * state: lookups in a plain struct pool_state, and the effective limits it
 * implies.
 */
#include "nfsd/pool/pool.h"

#include <string.h>

struct pool *pool_state_find_pool(struct pool_state *st, const char *name)
{
	for (size_t i = 0; i < st->npools; i++) {
		if (!strcmp(st->pools[i].name, name)) {
			return &st->pools[i];
		}
	}
	return NULL;
}

const struct pool *pool_state_pool(const struct pool_state *st,
				   const char *name)
{
	for (size_t i = 0; i < st->npools; i++) {
		if (!strcmp(st->pools[i].name, name)) {
			return &st->pools[i];
		}
	}
	return NULL;
}

struct pool_volume *pool_state_find_volume(struct pool_state *st,
					   const char *name)
{
	for (size_t i = 0; i < st->nvolumes; i++) {
		if (!strcmp(st->volumes[i].name, name)) {
			return &st->volumes[i];
		}
	}
	return NULL;
}

void pool_state_limits(const struct pool_state *st, struct pool_limits *out)
{
	out->npools = 0;
	for (size_t i = 0; i < st->npools && i < POOL_MAX_POOLS; i++) {
		const struct pool *p = &st->pools[i];
		struct pool_limit_pool *lp = &out->pools[out->npools++];

		memcpy(lp->name, p->name, sizeof(lp->name));
		lp->throughput_bytes_per_s =
			pool_throughput_mibps(p) * POOL_MIB_BYTES;
	}
	out->nvolumes = 0;
	for (size_t i = 0; i < st->nvolumes && i < POOL_MAX_VOLUMES; i++) {
		const struct pool_volume *v = &st->volumes[i];
		const struct pool *p = pool_state_pool(st, v->pool);
		struct pool_limit_volume *lv;

		if (!p) {
			continue;
		}
		lv = &out->volumes[out->nvolumes++];
		memcpy(lv->name, v->name, sizeof(lv->name));
		memcpy(lv->pool, v->pool, sizeof(lv->pool));
		lv->limit_bytes_per_s = pool_volume_limit_bytes_per_s(p, v);
		lv->quota_bytes = v->quota_bytes;
	}
}
