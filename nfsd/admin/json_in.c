// SPDX-License-Identifier: Apache-2.0
/*
 * json_in: request bodies into plain structs, strictly: one object, no
 * duplicate or unknown keys, each value of its one type and in its type's
 * range.  What a value means for pools (sizes, levels, sums) is the
 * registry's to check, so that its message names the rule.
 */
#include "nfsd/admin/admin_int.h"
#include "nfsd/admin/patch.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nfsd/base/base.h"
#include "nfsd/base/errbuf.h"

/* A rate far above any link, as the [traffic] config allows. */
#define JSON_RATE_MAX 1e12

int admin__json_parse(const char *body, size_t len, json_t **out, char *errbuf,
		      size_t errlen)
{
	json_error_t e;
	json_t *doc;

	if (!body || len == 0) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "body: a JSON object is required");
	}
	doc = json_loadb(body, len, JSON_REJECT_DUPLICATES, &e);
	if (!doc) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "body: line %d column %d: %s", e.line,
				     e.column, e.text);
	}
	if (!json_is_object(doc)) {
		json_decref(doc);
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "body: a JSON object is expected");
	}
	*out = doc;
	return 0;
}

int admin__json_keys_check(const json_t *in, const char *const *known,
			   char *errbuf, size_t errlen)
{
	char list[256] = "";
	const char *key;
	json_t *value;
	size_t used = 0;

	for (size_t i = 0; known[i]; i++) {
		used += (size_t)snprintf(list + used, sizeof(list) - used,
					 "%s%s", i ? ", " : "", known[i]);
	}
	if (json_object_size(in) == 0) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "body: no field given (known: %s)", list);
	}
	json_object_foreach((json_t *)in, key, value)
	{
		size_t i = 0;

		while (known[i] && strcmp(known[i], key)) {
			i++;
		}
		if (!known[i]) {
			return errbuf_printf(errbuf, errlen, -EINVAL,
					     "body: unknown field '%.64s' "
					     "(known: %s)",
					     key, list);
		}
	}
	return 0;
}

static int json_missing(const char *key, bool required, bool *present,
			char *errbuf, size_t errlen)
{
	if (present) {
		*present = false;
	}
	if (required) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "body: field '%s' is missing", key);
	}
	return 0;
}

/* A whole number in [0, max]. */
static int json_get_uint(const json_t *in, const char *key, uint64_t max,
			 bool required, uint64_t *out, bool *present,
			 char *errbuf, size_t errlen)
{
	const json_t *v = json_object_get(in, key);
	json_int_t i;

	if (!v) {
		return json_missing(key, required, present, errbuf, errlen);
	}
	i = json_is_integer(v) ? json_integer_value(v) : -1;
	if (i < 0 || (uint64_t)i > max) {
		return errbuf_printf(
			errbuf, errlen, -EINVAL,
			"body: '%s' must be a whole number from 0 to "
			"%llu",
			key, (unsigned long long)max);
	}
	*out = (uint64_t)i;
	if (present) {
		*present = true;
	}
	return 0;
}

static int json_get_u32(const json_t *in, const char *key, bool required,
			uint32_t *out, bool *present, char *errbuf,
			size_t errlen)
{
	uint64_t v = 0;
	int err = json_get_uint(in, key, UINT32_MAX, required, &v, present,
				errbuf, errlen);

	*out = (uint32_t)v;
	return err;
}

/* A pool or volume name. */
static int json_get_name(const json_t *in, const char *key, bool required,
			 char *out, bool *present, char *errbuf, size_t errlen)
{
	const json_t *v = json_object_get(in, key);
	const char *s;

	if (!v) {
		return json_missing(key, required, present, errbuf, errlen);
	}
	s = json_is_string(v) ? json_string_value(v) : NULL;
	if (!s || !pool_name_valid(s)) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "body: '%s' must be a name of 1 to 63 "
				     "letters, digits, '-', '_' or '.'",
				     key);
	}
	snprintf(out, POOL_NAME_MAX, "%s", s);
	if (present) {
		*present = true;
	}
	return 0;
}

static int json_get_level(const json_t *in, bool required, enum pool_level *out,
			  bool *present, char *errbuf, size_t errlen)
{
	const json_t *v = json_object_get(in, "level");

	if (!v) {
		return json_missing("level", required, present, errbuf, errlen);
	}
	if (!json_is_string(v) || pool_level_parse(json_string_value(v), out)) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "body: 'level' must be standard, premium, "
				     "ultra or flexible");
	}
	if (present) {
		*present = true;
	}
	return 0;
}

static int json_get_qos(const json_t *in, enum pool_qos *out, bool *present,
			char *errbuf, size_t errlen)
{
	const json_t *v = json_object_get(in, "qos");

	if (!v) {
		return json_missing("qos", false, present, errbuf, errlen);
	}
	if (!json_is_string(v) || pool_qos_parse(json_string_value(v), out)) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "body: 'qos' must be auto or manual");
	}
	*present = true;
	return 0;
}

int admin__json_pool_spec(const json_t *in, struct pool *out, char *errbuf,
			  size_t errlen)
{
	static const char *const known[] = {
		"name", "level", "size_tib", "qos", "purchased_mibps", NULL
	};
	bool has_qos = false;
	int err;

	memset(out, 0, sizeof(*out));
	err = admin__json_keys_check(in, known, errbuf, errlen);
	if (!err) {
		err = json_get_name(in, "name", true, out->name, NULL, errbuf,
				    errlen);
	}
	if (!err) {
		err = json_get_level(in, true, &out->level, NULL, errbuf,
				     errlen);
	}
	if (!err) {
		err = json_get_u32(in, "size_tib", true, &out->size_tib, NULL,
				   errbuf, errlen);
	}
	if (!err) {
		err = json_get_qos(in, &out->qos, &has_qos, errbuf, errlen);
	}
	if (!err) {
		err = json_get_u32(in, "purchased_mibps", false,
				   &out->purchased_mibps, NULL, errbuf, errlen);
	}
	/* As in the config: Flexible exists only with manual QoS. */
	if (!err && !has_qos) {
		out->qos = out->level == POOL_LEVEL_FLEXIBLE ? POOL_QOS_MANUAL
							     : POOL_QOS_AUTO;
	}
	return err;
}

int admin__json_pool_patch(const json_t *in, struct admin_pool_patch *out,
			   char *errbuf, size_t errlen)
{
	static const char *const known[] = { "size_tib", "level",
					     "purchased_mibps", "qos", NULL };
	int err;

	memset(out, 0, sizeof(*out));
	err = admin__json_keys_check(in, known, errbuf, errlen);
	if (!err) {
		err = json_get_u32(in, "size_tib", false, &out->size_tib,
				   &out->has_size, errbuf, errlen);
	}
	if (!err) {
		err = json_get_level(in, false, &out->level, &out->has_level,
				     errbuf, errlen);
	}
	if (!err) {
		err = json_get_u32(in, "purchased_mibps", false,
				   &out->purchased_mibps, &out->has_throughput,
				   errbuf, errlen);
	}
	if (!err) {
		err = json_get_qos(in, &out->qos, &out->has_qos, errbuf,
				   errlen);
	}
	return err;
}

int admin__json_volume_spec(const json_t *in, struct pool_volume *out,
			    char *errbuf, size_t errlen)
{
	static const char *const known[] = { "name", "pool", "quota_bytes",
					     "limit_mibps", NULL };
	int err;

	memset(out, 0, sizeof(*out));
	err = admin__json_keys_check(in, known, errbuf, errlen);
	if (!err) {
		err = json_get_name(in, "name", true, out->name, NULL, errbuf,
				    errlen);
	}
	if (!err) {
		err = json_get_name(in, "pool", true, out->pool, NULL, errbuf,
				    errlen);
	}
	if (!err) {
		err = json_get_uint(in, "quota_bytes", INT64_MAX, true,
				    &out->quota_bytes, NULL, errbuf, errlen);
	}
	if (!err) {
		err = json_get_u32(in, "limit_mibps", false, &out->manual_mibps,
				   NULL, errbuf, errlen);
	}
	return err;
}

int admin__json_volume_patch(const json_t *in, struct admin_volume_patch *out,
			     char *errbuf, size_t errlen)
{
	static const char *const known[] = { "pool", "quota_bytes",
					     "limit_mibps", NULL };
	int err;

	memset(out, 0, sizeof(*out));
	err = admin__json_keys_check(in, known, errbuf, errlen);
	if (!err) {
		err = json_get_name(in, "pool", false, out->pool,
				    &out->has_pool, errbuf, errlen);
	}
	if (!err) {
		err = json_get_uint(in, "quota_bytes", INT64_MAX, false,
				    &out->quota_bytes, &out->has_quota, errbuf,
				    errlen);
	}
	if (!err) {
		err = json_get_u32(in, "limit_mibps", false, &out->limit_mibps,
				   &out->has_limit, errbuf, errlen);
	}
	return err;
}

/* A number (whole or not) in [0, max]. */
static int json_get_number(const json_t *in, const char *key, double max,
			   double *out, bool *present, char *errbuf,
			   size_t errlen)
{
	const json_t *v = json_object_get(in, key);
	double d;

	*present = false;
	if (!v) {
		return 0;
	}
	d = json_is_number(v) ? json_number_value(v) : -1;
	if (!isfinite(d) || d < 0 || d > max) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "body: '%s' must be a number from 0 to %g",
				     key, max);
	}
	*out = d;
	*present = true;
	return 0;
}

int admin__json_caps_patch(const json_t *in, struct traffic_caps *caps,
			   char *errbuf, size_t errlen)
{
	static const char *const known[] = {
		"scale",	   "flow_mibps",
		"flow_iops",	   "host_mibps",
		"host_iops",	   "volume_iops",
		"host_contention", "volume_contention",
		"burst_ms",	   NULL,
	};
	static const struct {
		const char *key;
		size_t offset;
		double unit;
	} rates[] = {
		{ "flow_mibps", offsetof(struct traffic_caps, flow_bytes_per_s),
		  (double)POOL_MIB_BYTES },
		{ "flow_iops", offsetof(struct traffic_caps, flow_ops_per_s),
		  1 },
		{ "host_mibps", offsetof(struct traffic_caps, host_bytes_per_s),
		  (double)POOL_MIB_BYTES },
		{ "host_iops", offsetof(struct traffic_caps, host_ops_per_s),
		  1 },
		{ "volume_iops",
		  offsetof(struct traffic_caps, volume_ops_per_s), 1 },
	};
	uint32_t burst = 0;
	bool present;
	double v = 0;
	int err;

	err = admin__json_keys_check(in, known, errbuf, errlen);
	for (size_t i = 0; !err && i < ARRAY_SIZE(rates); i++) {
		err = json_get_number(in, rates[i].key,
				      JSON_RATE_MAX / rates[i].unit, &v,
				      &present, errbuf, errlen);
		if (!err && present) {
			*(uint64_t *)((char *)caps + rates[i].offset) =
				(uint64_t)llround(v * rates[i].unit);
		}
	}
	if (!err) {
		err = json_get_number(in, "scale", 1e6, &v, &present, errbuf,
				      errlen);
	}
	if (!err && present && v <= 0) {
		err = errbuf_printf(errbuf, errlen, -EINVAL,
				    "body: 'scale' must be above 0");
	}
	if (!err && present) {
		caps->scale = v;
	}
	if (!err) {
		err = json_get_number(in, "host_contention", 1e6, &v, &present,
				      errbuf, errlen);
	}
	if (!err && present) {
		caps->host_contention = v;
	}
	if (!err) {
		err = json_get_number(in, "volume_contention", 1e6, &v,
				      &present, errbuf, errlen);
	}
	if (!err && present) {
		caps->volume_contention = v;
	}
	if (!err) {
		err = json_get_u32(in, "burst_ms", false, &burst, &present,
				   errbuf, errlen);
	}
	if (!err && present && (burst < 1 || burst > 60000)) {
		err = errbuf_printf(errbuf, errlen, -EINVAL,
				    "body: 'burst_ms' must be 1 to 60000");
	}
	if (!err && present) {
		caps->burst_ms = burst;
	}
	return err;
}
