// SPDX-License-Identifier: Apache-2.0
/*
 * pool_config: the pool keys of dsnfsd.conf ([pool NAME] sections, and the
 * pool, quota and throughput_mibps keys of [datastore NAME]) into a plain
 * struct pool_state, checked as a whole once the file is read.  Called key
 * by key through config.h's section hook.
 */
#include "nfsd/pool/pool.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nfsd/base/base.h"
#include "nfsd/base/errbuf.h"

#define POOL_SECTION "pool "
#define DATASTORE_SECTION "datastore "

enum {
	KEY_LEVEL = 1 << 0,
	KEY_SIZE = 1 << 1,
	KEY_QOS = 1 << 2,
	KEY_POOL = 1 << 3,
	KEY_QUOTA = 1 << 4,
};

int pool_config_init(struct pool_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->state = calloc(1, sizeof(*cfg->state));
	return cfg->state ? 0 : -ENOMEM;
}

void pool_config_fini(struct pool_config *cfg)
{
	free(cfg->state);
	cfg->state = NULL;
}

int pool_size_parse(const char *text, uint64_t *bytes)
{
	static const struct {
		const char *suffix;
		unsigned shift;
	} units[] = {
		{ "", 0 },     { "k", 10 },   { "kib", 10 },
		{ "m", 20 },   { "mib", 20 }, { "g", 30 },
		{ "gib", 30 }, { "t", 40 },   { "tib", 40 },
	};
	unsigned long long v;
	char *end;

	if (*text < '0' || *text > '9') {
		return -EINVAL;
	}
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno == ERANGE) {
		return -ERANGE;
	}
	while (*end == ' ') {
		end++;
	}
	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		if (strcasecmp(end, units[i].suffix)) {
			continue;
		}
		if (v == 0) {
			return -EINVAL;
		}
		if (v > (UINT64_MAX >> units[i].shift)) {
			return -ERANGE;
		}
		*bytes = (uint64_t)v << units[i].shift;
		return 0;
	}
	return -EINVAL;
}

static int config_u32(const char *text, uint32_t *out)
{
	unsigned long long v;
	char *end;

	if (*text < '0' || *text > '9') {
		return -EINVAL;
	}
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno || *end || v > UINT32_MAX) {
		return -EINVAL;
	}
	*out = (uint32_t)v;
	return 0;
}

/* Ends one key: notes @key_bit (0 for an optional key) in *keys for
 * pool_config_finish() and turns a failed parse, @parse_err, into @why. */
static int config_key_end(unsigned *keys, unsigned key_bit, int parse_err,
			  const char *why, char *errbuf, size_t errlen)
{
	*keys |= key_bit;
	return parse_err ? errbuf_printf(errbuf, errlen, -EINVAL, "%s", why)
			 : 0;
}

static struct pool *config_pool_get(struct pool_config *cfg, const char *name,
				    unsigned **keys)
{
	struct pool_state *st = cfg->state;
	struct pool *p = pool_state_find_pool(st, name);

	if (!p) {
		if (st->npools == POOL_MAX_POOLS || !pool_name_valid(name)) {
			return NULL;
		}
		p = &st->pools[st->npools++];
		memset(p, 0, sizeof(*p));
		snprintf(p->name, sizeof(p->name), "%s", name);
	}
	*keys = &cfg->pool_keys[p - st->pools];
	return p;
}

static struct pool_volume *config_volume_get(struct pool_config *cfg,
					     const char *name, unsigned **keys)
{
	struct pool_state *st = cfg->state;
	struct pool_volume *v = pool_state_find_volume(st, name);

	if (!v) {
		if (st->nvolumes == POOL_MAX_VOLUMES ||
		    !pool_name_valid(name)) {
			return NULL;
		}
		v = &st->volumes[st->nvolumes++];
		memset(v, 0, sizeof(*v));
		snprintf(v->name, sizeof(v->name), "%s", name);
	}
	*keys = &cfg->volume_keys[v - st->volumes];
	return v;
}

static int config_pool_key(struct pool_config *cfg, const char *name,
			   const char *key, const char *value, char *errbuf,
			   size_t errlen)
{
	unsigned *keys;
	struct pool *p = config_pool_get(cfg, name, &keys);

	if (!p) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "bad pool name (1 to 63 letters, digits, "
				     "'-', '_', '.') or too many pools");
	}
	if (!strcmp(key, "level")) {
		return config_key_end(keys, KEY_LEVEL,
				      pool_level_parse(value, &p->level),
				      "level is standard, premium, ultra or "
				      "flexible",
				      errbuf, errlen);
	}
	if (!strcmp(key, "size_tib")) {
		return config_key_end(
			keys, KEY_SIZE, config_u32(value, &p->size_tib),
			"size_tib is a whole number of TiB", errbuf, errlen);
	}
	if (!strcmp(key, "qos")) {
		return config_key_end(keys, KEY_QOS,
				      pool_qos_parse(value, &p->qos),
				      "qos is auto or manual", errbuf, errlen);
	}
	if (!strcmp(key, "purchased_mibps")) {
		return config_key_end(keys, 0,
				      config_u32(value, &p->purchased_mibps),
				      "purchased_mibps is a whole number of "
				      "MiB/s",
				      errbuf, errlen);
	}
	return -ENOENT;
}

static bool config_is_volume_key(const char *key)
{
	return !strcmp(key, "pool") || !strcmp(key, "quota") ||
	       !strcmp(key, "throughput_mibps");
}

static int config_volume_key(struct pool_config *cfg, const char *name,
			     const char *key, const char *value, char *errbuf,
			     size_t errlen)
{
	struct pool_volume *v;
	unsigned *keys;

	if (!config_is_volume_key(key)) {
		return -ENOENT;
	}
	v = config_volume_get(cfg, name, &keys);
	if (!v) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "bad datastore name or too many pooled "
				     "datastores");
	}
	if (!strcmp(key, "pool")) {
		*keys |= KEY_POOL;
		if (!pool_name_valid(value)) {
			return errbuf_printf(errbuf, errlen, -EINVAL,
					     "bad pool name");
		}
		snprintf(v->pool, sizeof(v->pool), "%s", value);
		return 0;
	}
	if (!strcmp(key, "quota")) {
		return config_key_end(keys, KEY_QUOTA,
				      pool_size_parse(value, &v->quota_bytes),
				      "quota is a size above 0: bytes, or N "
				      "with KiB, MiB, GiB or TiB",
				      errbuf, errlen);
	}
	if (config_u32(value, &v->manual_mibps) || v->manual_mibps == 0) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "throughput_mibps is a whole number of "
				     "MiB/s above 0");
	}
	return 0;
}

int pool_config_section(void *arg, const char *section, const char *key,
			const char *value, char *errbuf, size_t errlen)
{
	struct pool_config *cfg = arg;

	if (!strncmp(section, POOL_SECTION, strlen(POOL_SECTION))) {
		return config_pool_key(cfg, section + strlen(POOL_SECTION), key,
				       value, errbuf, errlen);
	}
	if (!strncmp(section, DATASTORE_SECTION, strlen(DATASTORE_SECTION))) {
		return config_volume_key(cfg,
					 section + strlen(DATASTORE_SECTION),
					 key, value, errbuf, errlen);
	}
	return -ENOENT;
}

int pool_config_finish(struct pool_config *cfg, const struct pool_state **out,
		       char *errbuf, size_t errlen)
{
	struct pool_state *st = cfg->state;
	int err;

	for (size_t i = 0; i < st->npools; i++) {
		struct pool *p = &st->pools[i];
		unsigned keys = cfg->pool_keys[i];

		if (!(keys & KEY_LEVEL) || !(keys & KEY_SIZE)) {
			snprintf(errbuf, errlen,
				 "[pool %s]: level and size_tib are required",
				 p->name);
			return -EINVAL;
		}
		/* Flexible exists only with manual QoS: default to it. */
		if (p->level == POOL_LEVEL_FLEXIBLE && !(keys & KEY_QOS)) {
			p->qos = POOL_QOS_MANUAL;
		}
	}
	for (size_t i = 0; i < st->nvolumes; i++) {
		unsigned keys = cfg->volume_keys[i];

		if (!(keys & KEY_POOL) || !(keys & KEY_QUOTA)) {
			snprintf(errbuf, errlen,
				 "[datastore %s]: a pooled datastore needs "
				 "both pool and quota",
				 st->volumes[i].name);
			return -EINVAL;
		}
	}
	err = pool_state_check(st, errbuf, errlen);
	if (err) {
		return err;
	}
	*out = st;
	return 0;
}
