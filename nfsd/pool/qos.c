// SPDX-License-Identifier: Apache-2.0
/*
 * qos: the rules a pool state must keep, each refusal naming the rule it
 * breaks (Azure NetApp Files: "Service levels", "Performance considerations",
 * "Manual QoS capacity pools", "Flexible service level"; docs/pools.md).
 */
#include "nfsd/pool/pool.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "nfsd/base/errbuf.h"

/* "4 TiB", "500 GiB", "1.5 TiB" or "123 bytes": sizes as people read them. */
static void qos_bytes_format(uint64_t bytes, char *buf, size_t len)
{
	const uint64_t gib = POOL_TIB_BYTES / POOL_GIB_PER_TIB;

	if (bytes % POOL_TIB_BYTES == 0) {
		snprintf(buf, len, "%" PRIu64 " TiB", bytes / POOL_TIB_BYTES);
	} else if (bytes % gib == 0) {
		snprintf(buf, len, "%" PRIu64 " GiB", bytes / gib);
	} else {
		snprintf(buf, len, "%" PRIu64 " bytes", bytes);
	}
}

static int qos_check_pool(const struct pool_state *st, size_t idx, char *errbuf,
			  size_t errlen)
{
	const struct pool *p = &st->pools[idx];
	uint64_t max_mibps;

	if (!pool_name_valid(p->name)) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "pool '%.63s': a name is 1 to 63 letters, "
				     "digits, '-', '_' or '.'",
				     p->name);
	}
	for (size_t j = 0; j < idx; j++) {
		if (!strcmp(st->pools[j].name, p->name)) {
			return errbuf_printf(errbuf, errlen, -EINVAL,
					     "pool %s: the name is used twice",
					     p->name);
		}
	}
	if ((unsigned)p->level >= POOL_LEVEL_COUNT) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "pool %s: unknown service level", p->name);
	}
	if (p->qos != POOL_QOS_AUTO && p->qos != POOL_QOS_MANUAL) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "pool %s: unknown QoS type", p->name);
	}
	if (p->size_tib < POOL_SIZE_MIN_TIB) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "pool %s: size %" PRIu32
				     " TiB is below the %d TiB minimum",
				     p->name, p->size_tib, POOL_SIZE_MIN_TIB);
	}
	if (p->size_tib > POOL_SIZE_MAX_TIB) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "pool %s: size %" PRIu32
				     " TiB is above the %d TiB maximum",
				     p->name, p->size_tib, POOL_SIZE_MAX_TIB);
	}
	if (p->level != POOL_LEVEL_FLEXIBLE) {
		if (p->purchased_mibps) {
			return errbuf_printf(errbuf, errlen, -EINVAL,
					     "pool %s: purchased throughput is "
					     "for Flexible pools only, not %s",
					     p->name,
					     pool_level_name(p->level));
		}
		return 0;
	}
	if (p->qos != POOL_QOS_MANUAL) {
		return errbuf_printf(
			errbuf, errlen, -EINVAL,
			"pool %s: the Flexible service level needs "
			"manual QoS",
			p->name);
	}
	max_mibps = (uint64_t)POOL_FLEX_MAX_MIBPS_PER_TIB * p->size_tib;
	if (pool_throughput_mibps(p) > max_mibps) {
		return errbuf_printf(
			errbuf, errlen, -EINVAL,
			"pool %s: Flexible throughput %d + %" PRIu32
			" MiB/s is above %d MiB/s per TiB x %" PRIu32
			" TiB = %" PRIu64 " MiB/s",
			p->name, POOL_FLEX_BASELINE_MIBPS, p->purchased_mibps,
			POOL_FLEX_MAX_MIBPS_PER_TIB, p->size_tib, max_mibps);
	}
	return 0;
}

static int qos_check_volume(const struct pool_state *st, size_t idx,
			    char *errbuf, size_t errlen)
{
	const struct pool_volume *v = &st->volumes[idx];
	const struct pool *p;
	uint32_t cap;
	char q[48];

	if (!pool_name_valid(v->name)) {
		return errbuf_printf(
			errbuf, errlen, -EINVAL,
			"volume '%.63s': a name is 1 to 63 letters, "
			"digits, '-', '_' or '.'",
			v->name);
	}
	for (size_t j = 0; j < idx; j++) {
		if (!strcmp(st->volumes[j].name, v->name)) {
			return errbuf_printf(
				errbuf, errlen, -EINVAL,
				"volume %s: the name is used twice", v->name);
		}
	}
	p = pool_state_pool(st, v->pool);
	if (!p) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "volume %s: pool '%.63s' does not exist",
				     v->name, v->pool);
	}
	if (v->quota_bytes == 0) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "volume %s: a quota must be above 0 bytes",
				     v->name);
	}
	if (v->quota_bytes > POOL_VOLUME_QUOTA_MAX_BYTES) {
		qos_bytes_format(v->quota_bytes, q, sizeof(q));
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "volume %s: quota %s is above the 100 TiB "
				     "regular volume maximum",
				     v->name, q);
	}
	if (p->qos == POOL_QOS_AUTO) {
		if (v->manual_mibps) {
			return errbuf_printf(
				errbuf, errlen, -EINVAL,
				"volume %s: pool %s has auto QoS; "
				"a throughput limit is set only in "
				"manual QoS pools",
				v->name, p->name);
		}
		return 0;
	}
	if (v->manual_mibps == 0) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "volume %s: manual QoS pool %s needs a "
				     "throughput limit of at least 1 MiB/s",
				     v->name, p->name);
	}
	cap = pool_level_volume_cap_mibps(p->level);
	if (v->manual_mibps > cap) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "volume %s: %" PRIu32
				     " MiB/s is above the %" PRIu32
				     " MiB/s regular volume cap at %s",
				     v->name, v->manual_mibps, cap,
				     pool_level_name(p->level));
	}
	return 0;
}

/* The sums over the volumes of one pool. */
static int qos_check_sums(const struct pool_state *st, const struct pool *p,
			  char *errbuf, size_t errlen)
{
	uint64_t quota = 0, manual = 0, size = p->size_tib * POOL_TIB_BYTES;
	char q[48], s[48];

	for (size_t i = 0; i < st->nvolumes; i++) {
		const struct pool_volume *v = &st->volumes[i];

		if (strcmp(v->pool, p->name)) {
			continue;
		}
		quota += v->quota_bytes;
		manual += v->manual_mibps;
	}
	if (quota > size) {
		qos_bytes_format(quota, q, sizeof(q));
		qos_bytes_format(size, s, sizeof(s));
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "pool %s: volume quotas sum to %s, more "
				     "than the pool's %s",
				     p->name, q, s);
	}
	if (p->qos == POOL_QOS_MANUAL && manual > pool_throughput_mibps(p)) {
		return errbuf_printf(
			errbuf, errlen, -EINVAL,
			"pool %s: manual volume limits sum to %" PRIu64
			" MiB/s, more than the pool's %" PRIu64 " MiB/s",
			p->name, manual, pool_throughput_mibps(p));
	}
	return 0;
}

int pool_state_check(const struct pool_state *st, char *errbuf, size_t errlen)
{
	int err;

	if (st->npools > POOL_MAX_POOLS) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "more than %d pools", POOL_MAX_POOLS);
	}
	if (st->nvolumes > POOL_MAX_VOLUMES) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "more than %d volumes", POOL_MAX_VOLUMES);
	}
	for (size_t i = 0; i < st->npools; i++) {
		err = qos_check_pool(st, i, errbuf, errlen);
		if (err) {
			return err;
		}
	}
	for (size_t i = 0; i < st->nvolumes; i++) {
		err = qos_check_volume(st, i, errbuf, errlen);
		if (err) {
			return err;
		}
	}
	for (size_t i = 0; i < st->npools; i++) {
		err = qos_check_sums(st, &st->pools[i], errbuf, errlen);
		if (err) {
			return err;
		}
	}
	return 0;
}
