// SPDX-License-Identifier: Apache-2.0
/*
 * level: the service levels and what they turn into: a pool's throughput,
 * and a volume's throughput limit under auto or manual QoS (Azure NetApp
 * Files "Service levels"; docs/pools.md).
 */
#include "nfsd/pool/pool.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

#include "nfsd/base/base.h"

struct pool_level_info {
	const char *name;
	uint32_t mibps_per_tib;
	uint32_t volume_cap_mibps;
};

static const struct pool_level_info pool_levels[POOL_LEVEL_COUNT] = {
	[POOL_LEVEL_STANDARD] = { .name = "Standard",
				  .mibps_per_tib = 16,
				  .volume_cap_mibps =
					  POOL_VOLUME_CAP_STANDARD_MIBPS },
	[POOL_LEVEL_PREMIUM] = { .name = "Premium",
				 .mibps_per_tib = 64,
				 .volume_cap_mibps = POOL_VOLUME_CAP_MIBPS },
	[POOL_LEVEL_ULTRA] = { .name = "Ultra",
			       .mibps_per_tib = 128,
			       .volume_cap_mibps = POOL_VOLUME_CAP_MIBPS },
	[POOL_LEVEL_FLEXIBLE] = { .name = "Flexible",
				  .mibps_per_tib = 0,
				  .volume_cap_mibps = POOL_VOLUME_CAP_MIBPS },
};

static const char *const pool_qos_names[] = {
	[POOL_QOS_AUTO] = "auto",
	[POOL_QOS_MANUAL] = "manual",
};

const char *pool_level_name(enum pool_level level)
{
	if ((unsigned)level >= POOL_LEVEL_COUNT) {
		return "?";
	}
	return pool_levels[level].name;
}

int pool_level_parse(const char *text, enum pool_level *out)
{
	for (size_t i = 0; i < POOL_LEVEL_COUNT; i++) {
		if (!strcasecmp(text, pool_levels[i].name)) {
			*out = (enum pool_level)i;
			return 0;
		}
	}
	return -EINVAL;
}

uint32_t pool_level_mibps_per_tib(enum pool_level level)
{
	if ((unsigned)level >= POOL_LEVEL_COUNT) {
		return 0;
	}
	return pool_levels[level].mibps_per_tib;
}

uint32_t pool_level_volume_cap_mibps(enum pool_level level)
{
	if ((unsigned)level >= POOL_LEVEL_COUNT) {
		return 0;
	}
	return pool_levels[level].volume_cap_mibps;
}

const char *pool_qos_name(enum pool_qos qos)
{
	if ((unsigned)qos >= ARRAY_SIZE(pool_qos_names)) {
		return "?";
	}
	return pool_qos_names[qos];
}

int pool_qos_parse(const char *text, enum pool_qos *out)
{
	for (size_t i = 0; i < ARRAY_SIZE(pool_qos_names); i++) {
		if (!strcasecmp(text, pool_qos_names[i])) {
			*out = (enum pool_qos)i;
			return 0;
		}
	}
	return -EINVAL;
}

bool pool_name_valid(const char *name)
{
	size_t len = strnlen(name, POOL_NAME_MAX);

	if (len == 0 || len >= POOL_NAME_MAX) {
		return false;
	}
	for (size_t i = 0; i < len; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '-' || c == '_' ||
		      c == '.')) {
			return false;
		}
	}
	return true;
}

uint64_t pool_throughput_mibps(const struct pool *pool)
{
	if (pool->level == POOL_LEVEL_FLEXIBLE) {
		return (uint64_t)POOL_FLEX_BASELINE_MIBPS +
		       pool->purchased_mibps;
	}
	return (uint64_t)pool->size_tib * pool_level_mibps_per_tib(pool->level);
}

uint64_t pool_volume_limit_bytes_per_s(const struct pool *pool,
				       const struct pool_volume *vol)
{
	uint64_t cap = (uint64_t)pool_level_volume_cap_mibps(pool->level) *
		       POOL_MIB_BYTES;
	uint64_t limit;

	if (pool->qos == POOL_QOS_MANUAL) {
		limit = (uint64_t)vol->manual_mibps * POOL_MIB_BYTES;
	} else {
		/* quota / 1 TiB x (MiB/s per TiB) x 1 MiB, exact to the
		 * byte: 2^40 / 2^20 leaves one division by 2^20.  The
		 * product fits 128 bits for any 64-bit quota. */
		unsigned __int128 p = (unsigned __int128)vol->quota_bytes *
				      pool_level_mibps_per_tib(pool->level);

		limit = (uint64_t)(p / POOL_MIB_BYTES);
	}
	return limit < cap ? limit : cap;
}
