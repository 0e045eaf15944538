// SPDX-License-Identifier: Apache-2.0
/*
 * codec: the overlay as JSON (jansson), and back, strictly and within
 * stated bounds: the file is ours, but a torn disk, an editor or a bad
 * restore can put anything there, and what we read decides what is billed.
 */
#include "nfsd/overlay/overlay.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/base/base.h"
#include "nfsd/base/errbuf.h"

/* A rate far above any link, as the admin API allows. */
#define CODEC_RATE_MAX UINT64_C(1000000000000)
#define CODEC_SCALE_MAX 1e6
#define CODEC_CONTENTION_MAX 1e6
#define CODEC_BURST_MAX_MS 60000

static const char *const codec_change_names[] = {
	[OVERLAY_CREATED] = "created",
	[OVERLAY_CHANGED] = "changed",
	[OVERLAY_DELETED] = "deleted",
};

/* The caps fields: their keys, offsets and kinds. */
enum codec_kind { CODEC_U64, CODEC_U32, CODEC_REAL };

static const struct codec_caps_key {
	const char *key;
	unsigned field;
	size_t offset;
	enum codec_kind kind;
	double max;
	double min_excl; /* the value must be above this (-1: >= 0) */
} codec_caps_keys[] = {
	{ "scale", OVERLAY_CAPS_SCALE, offsetof(struct traffic_caps, scale),
	  CODEC_REAL, CODEC_SCALE_MAX, 0 },
	{ "flow_bytes_per_s", OVERLAY_CAPS_FLOW_BYTES,
	  offsetof(struct traffic_caps, flow_bytes_per_s), CODEC_U64,
	  (double)CODEC_RATE_MAX, -1 },
	{ "flow_ops_per_s", OVERLAY_CAPS_FLOW_OPS,
	  offsetof(struct traffic_caps, flow_ops_per_s), CODEC_U64,
	  (double)CODEC_RATE_MAX, -1 },
	{ "host_bytes_per_s", OVERLAY_CAPS_HOST_BYTES,
	  offsetof(struct traffic_caps, host_bytes_per_s), CODEC_U64,
	  (double)CODEC_RATE_MAX, -1 },
	{ "host_ops_per_s", OVERLAY_CAPS_HOST_OPS,
	  offsetof(struct traffic_caps, host_ops_per_s), CODEC_U64,
	  (double)CODEC_RATE_MAX, -1 },
	{ "volume_ops_per_s", OVERLAY_CAPS_VOLUME_OPS,
	  offsetof(struct traffic_caps, volume_ops_per_s), CODEC_U64,
	  (double)CODEC_RATE_MAX, -1 },
	{ "host_contention", OVERLAY_CAPS_CONTENTION,
	  offsetof(struct traffic_caps, host_contention), CODEC_REAL,
	  CODEC_CONTENTION_MAX, -1 },
	{ "volume_contention", OVERLAY_CAPS_VOLUME_CONTENTION,
	  offsetof(struct traffic_caps, volume_contention), CODEC_REAL,
	  CODEC_CONTENTION_MAX, -1 },
	{ "burst_ms", OVERLAY_CAPS_BURST,
	  offsetof(struct traffic_caps, burst_ms), CODEC_U32,
	  CODEC_BURST_MAX_MS, 0 },
};

#define CODEC_NCAPS ARRAY_SIZE(codec_caps_keys)

/* ---- out --------------------------------------------------------------- */

/* Sets @key of @obj to @v (taken); false when out of memory. */
static bool codec_set(json_t *obj, const char *key, json_t *v)
{
	return v && !json_object_set_new(obj, key, v);
}

static json_t *codec_pool(const struct overlay_pool *e)
{
	json_t *o = json_object();
	const struct pool *p = &e->pool;
	bool ok = o && codec_set(o, "name", json_string(p->name)) &&
		  codec_set(o, "change",
			    json_string(codec_change_names[e->change]));

	if (ok && (e->fields & OVERLAY_POOL_LEVEL)) {
		ok = codec_set(o, "level",
			       json_string(pool_level_name(p->level)));
	}
	if (ok && (e->fields & OVERLAY_POOL_QOS)) {
		ok = codec_set(o, "qos", json_string(pool_qos_name(p->qos)));
	}
	if (ok && (e->fields & OVERLAY_POOL_SIZE)) {
		ok = codec_set(o, "size_tib", json_integer(p->size_tib));
	}
	if (ok && (e->fields & OVERLAY_POOL_PURCHASED)) {
		ok = codec_set(o, "purchased_mibps",
			       json_integer(p->purchased_mibps));
	}
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *codec_volume(const struct overlay_volume *e)
{
	json_t *o = json_object();
	const struct pool_volume *v = &e->volume;
	bool ok = o && codec_set(o, "name", json_string(v->name)) &&
		  codec_set(o, "change",
			    json_string(codec_change_names[e->change]));

	if (ok && (e->fields & OVERLAY_VOLUME_POOL)) {
		ok = codec_set(o, "pool", json_string(v->pool));
	}
	if (ok && (e->fields & OVERLAY_VOLUME_QUOTA)) {
		ok = codec_set(o, "quota_bytes",
			       json_integer((json_int_t)v->quota_bytes));
	}
	if (ok && (e->fields & OVERLAY_VOLUME_LIMIT)) {
		ok = codec_set(o, "limit_mibps", json_integer(v->manual_mibps));
	}
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *codec_caps(const struct overlay *ov)
{
	json_t *o = json_object();
	bool ok = o != NULL;

	for (size_t i = 0; ok && i < CODEC_NCAPS; i++) {
		const struct codec_caps_key *k = &codec_caps_keys[i];
		const char *at = (const char *)&ov->caps + k->offset;
		json_t *v;

		if (!(ov->caps_fields & k->field)) {
			continue;
		}
		if (k->kind == CODEC_REAL) {
			v = json_real(*(const double *)at);
		} else if (k->kind == CODEC_U64) {
			v = json_integer((json_int_t) * (const uint64_t *)at);
		} else {
			v = json_integer(*(const uint32_t *)at);
		}
		ok = codec_set(o, k->key, v);
	}
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *overlay_to_json(const struct overlay *ov)
{
	json_t *doc = json_object(), *pools = json_array(),
	       *volumes = json_array();
	bool ok = doc && pools && volumes;

	for (size_t i = 0; ok && i < ov->npools; i++) {
		ok = !json_array_append_new(pools, codec_pool(&ov->pools[i]));
	}
	for (size_t i = 0; ok && i < ov->nvolumes; i++) {
		ok = !json_array_append_new(volumes,
					    codec_volume(&ov->volumes[i]));
	}
	ok = ok && codec_set(doc, "format", json_string(OVERLAY_FORMAT)) &&
	     codec_set(doc, "version", json_integer(OVERLAY_VERSION)) &&
	     codec_set(doc, "pools", json_incref(pools)) &&
	     codec_set(doc, "volumes", json_incref(volumes)) &&
	     codec_set(doc, "caps", codec_caps(ov));
	json_decref(pools);
	json_decref(volumes);
	if (!ok) {
		json_decref(doc);
		return NULL;
	}
	return doc;
}

int overlay_encode(const struct overlay *ov, char **out, size_t *len)
{
	json_t *doc = overlay_to_json(ov);
	char *text;
	size_t n;

	/* Keys in insertion order, two spaces of indent: one entry's fields
	 * per line is not jansson's, but this is readable and diffable. */
	text = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
					     JSON_REAL_PRECISION(17))
		   : NULL;
	json_decref(doc);
	if (!text) {
		return -ENOMEM;
	}
	n = strlen(text);
	*out = realloc(text, n + 2);
	if (!*out) {
		free(text);
		return -ENOMEM;
	}
	(*out)[n++] = '\n';
	(*out)[n] = '\0';
	*len = n;
	return 0;
}

/* ---- in ---------------------------------------------------------------- */

/* Refuses a key of @obj not in @known (NULL-terminated). */
static int codec_keys(const json_t *obj, const char *const *known,
		      const char *where, char *errbuf, size_t errlen)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)obj, key, v)
	{
		size_t i = 0;

		while (known[i] && strcmp(known[i], key)) {
			i++;
		}
		if (!known[i]) {
			return errbuf_printf(errbuf, errlen, -EINVAL,
					     "%s: unknown field '%.64s'", where,
					     key);
		}
	}
	return 0;
}

/* A whole number in [0, max] at @key, if present (*has). */
static int codec_uint(const json_t *obj, const char *key, uint64_t max,
		      uint64_t *out, bool *has, const char *where, char *errbuf,
		      size_t errlen)
{
	const json_t *v = json_object_get(obj, key);
	json_int_t i;

	*has = v != NULL;
	if (!v) {
		return 0;
	}
	i = json_is_integer(v) ? json_integer_value(v) : -1;
	if (i < 0 || (uint64_t)i > max) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "%s: '%s' must be a whole number from 0 "
				     "to %llu",
				     where, key, (unsigned long long)max);
	}
	*out = (uint64_t)i;
	return 0;
}

/* A string at @key, if present. */
static int codec_string(const json_t *obj, const char *key, const char **out,
			bool *has, const char *where, char *errbuf,
			size_t errlen)
{
	const json_t *v = json_object_get(obj, key);

	*has = v != NULL;
	if (!v) {
		return 0;
	}
	if (!json_is_string(v)) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "%s: '%s' must be a string", where, key);
	}
	*out = json_string_value(v);
	return 0;
}

static int codec_name(const json_t *obj, const char *key, char *out, bool *has,
		      const char *where, char *errbuf, size_t errlen)
{
	const char *s = NULL;
	int err = codec_string(obj, key, &s, has, where, errbuf, errlen);

	if (err || !*has) {
		return err;
	}
	if (!pool_name_valid(s)) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "%s: '%s' must be a name of 1 to 63 "
				     "letters, digits, '-', '_' or '.'",
				     where, key);
	}
	snprintf(out, POOL_NAME_MAX, "%s", s);
	return 0;
}

/* "name" and "change" of an entry, and the rule on its fields. */
static int codec_entry_head(const json_t *obj, char *name,
			    enum overlay_change *change, const char *where,
			    char *errbuf, size_t errlen)
{
	const char *s = NULL;
	bool has;
	int err;

	if (!json_is_object(obj)) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "%s: an object is expected", where);
	}
	err = codec_name(obj, "name", name, &has, where, errbuf, errlen);
	if (!err && !has) {
		err = errbuf_printf(errbuf, errlen, -EINVAL,
				    "%s: 'name' is missing", where);
	}
	if (!err) {
		err = codec_string(obj, "change", &s, &has, where, errbuf,
				   errlen);
	}
	if (!err && !has) {
		err = errbuf_printf(errbuf, errlen, -EINVAL,
				    "%s: 'change' is missing", where);
	}
	if (err) {
		return err;
	}
	for (int c = OVERLAY_CREATED; c <= OVERLAY_DELETED; c++) {
		if (!strcmp(s, codec_change_names[c])) {
			*change = (enum overlay_change)c;
			return 0;
		}
	}
	return errbuf_printf(errbuf, errlen, -EINVAL,
			     "%s: 'change' must be created, changed or "
			     "deleted",
			     where);
}

/* The fields an entry of @change must carry, out of @all. */
static int codec_fields_check(enum overlay_change change, unsigned fields,
			      unsigned all, const char *where, char *errbuf,
			      size_t errlen)
{
	if (change == OVERLAY_CREATED && fields != all) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "%s: a created entry needs every field",
				     where);
	}
	if (change == OVERLAY_CHANGED && !fields) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "%s: a changed entry needs a field",
				     where);
	}
	if (change == OVERLAY_DELETED && fields) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "%s: a deleted entry has no fields",
				     where);
	}
	return 0;
}

static int codec_pool_in(const json_t *obj, struct overlay_pool *e,
			 const char *where, char *errbuf, size_t errlen)
{
	static const char *const known[] = { "name",	 "change",
					     "level",	 "qos",
					     "size_tib", "purchased_mibps",
					     NULL };
	const char *s = NULL;
	uint64_t n = 0;
	bool has;
	int err;

	memset(e, 0, sizeof(*e));
	err = codec_entry_head(obj, e->pool.name, &e->change, where, errbuf,
			       errlen);
	if (!err) {
		err = codec_keys(obj, known, where, errbuf, errlen);
	}
	if (!err) {
		err = codec_string(obj, "level", &s, &has, where, errbuf,
				   errlen);
	}
	if (!err && has && pool_level_parse(s, &e->pool.level)) {
		err = errbuf_printf(errbuf, errlen, -EINVAL,
				    "%s: 'level' must be standard, premium, "
				    "ultra or flexible",
				    where);
	}
	e->fields |= !err && has ? OVERLAY_POOL_LEVEL : 0;
	if (!err) {
		err = codec_string(obj, "qos", &s, &has, where, errbuf, errlen);
	}
	if (!err && has && pool_qos_parse(s, &e->pool.qos)) {
		err = errbuf_printf(errbuf, errlen, -EINVAL,
				    "%s: 'qos' must be auto or manual", where);
	}
	e->fields |= !err && has ? OVERLAY_POOL_QOS : 0;
	if (!err) {
		err = codec_uint(obj, "size_tib", UINT32_MAX, &n, &has, where,
				 errbuf, errlen);
	}
	e->pool.size_tib = (uint32_t)n;
	e->fields |= !err && has ? OVERLAY_POOL_SIZE : 0;
	n = 0;
	if (!err) {
		err = codec_uint(obj, "purchased_mibps", UINT32_MAX, &n, &has,
				 where, errbuf, errlen);
	}
	e->pool.purchased_mibps = (uint32_t)n;
	e->fields |= !err && has ? OVERLAY_POOL_PURCHASED : 0;
	if (!err) {
		err = codec_fields_check(e->change, e->fields, OVERLAY_POOL_ALL,
					 where, errbuf, errlen);
	}
	return err;
}

static int codec_volume_in(const json_t *obj, struct overlay_volume *e,
			   const char *where, char *errbuf, size_t errlen)
{
	static const char *const known[] = { "name",	    "change",
					     "pool",	    "quota_bytes",
					     "limit_mibps", NULL };
	uint64_t n = 0;
	bool has;
	int err;

	memset(e, 0, sizeof(*e));
	err = codec_entry_head(obj, e->volume.name, &e->change, where, errbuf,
			       errlen);
	if (!err) {
		err = codec_keys(obj, known, where, errbuf, errlen);
	}
	if (!err) {
		err = codec_name(obj, "pool", e->volume.pool, &has, where,
				 errbuf, errlen);
	}
	e->fields |= !err && has ? OVERLAY_VOLUME_POOL : 0;
	if (!err) {
		err = codec_uint(obj, "quota_bytes", INT64_MAX, &n, &has, where,
				 errbuf, errlen);
	}
	e->volume.quota_bytes = n;
	e->fields |= !err && has ? OVERLAY_VOLUME_QUOTA : 0;
	n = 0;
	if (!err) {
		err = codec_uint(obj, "limit_mibps", UINT32_MAX, &n, &has,
				 where, errbuf, errlen);
	}
	e->volume.manual_mibps = (uint32_t)n;
	e->fields |= !err && has ? OVERLAY_VOLUME_LIMIT : 0;
	if (!err) {
		err = codec_fields_check(e->change, e->fields,
					 OVERLAY_VOLUME_ALL, where, errbuf,
					 errlen);
	}
	return err;
}

/* The caps key named @key, or NULL. */
static const struct codec_caps_key *codec_caps_key(const char *key)
{
	for (size_t i = 0; i < CODEC_NCAPS; i++) {
		if (!strcmp(codec_caps_keys[i].key, key)) {
			return &codec_caps_keys[i];
		}
	}
	return NULL;
}

static int codec_caps_in(const json_t *obj, struct overlay *ov, char *errbuf,
			 size_t errlen)
{
	const char *key;
	json_t *v;

	if (!json_is_object(obj)) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "caps: an object is expected");
	}
	json_object_foreach((json_t *)obj, key, v)
	{
		const struct codec_caps_key *k = codec_caps_key(key);
		bool whole = k && k->kind != CODEC_REAL;
		double d;
		char *at;

		if (!k) {
			return errbuf_printf(errbuf, errlen, -EINVAL,
					     "caps: unknown field '%.64s'",
					     key);
		}
		d = json_is_number(v) ? json_number_value(v) : NAN;
		if (whole && !json_is_integer(v)) {
			d = NAN;
		}
		if (!isfinite(d) || d > k->max ||
		    (k->min_excl < 0 ? d < 0 : d <= k->min_excl)) {
			return errbuf_printf(errbuf, errlen, -EINVAL,
					     "caps: '%s' must be a%s number "
					     "%s 0 and at most %g",
					     k->key, whole ? " whole" : "",
					     k->min_excl < 0 ? "from" : "above",
					     k->max);
		}
		at = (char *)&ov->caps + k->offset;
		if (k->kind == CODEC_REAL) {
			*(double *)at = d;
		} else if (k->kind == CODEC_U64) {
			*(uint64_t *)at = (uint64_t)json_integer_value(v);
		} else {
			*(uint32_t *)at = (uint32_t)json_integer_value(v);
		}
		ov->caps_fields |= k->field;
	}
	return 0;
}

/* True when @name is used by an entry before @n of @ov's pools (@pools)
 * or volumes. */
static bool codec_seen(const struct overlay *ov, bool pools, size_t n,
		       const char *name)
{
	for (size_t i = 0; i < n; i++) {
		const char *other = pools ? ov->pools[i].pool.name
					  : ov->volumes[i].volume.name;

		if (!strcmp(other, name)) {
			return true;
		}
	}
	return false;
}

/* The array @key of @doc into @ov's pools or volumes. */
static int codec_list_in(const json_t *doc, const char *key, bool pools,
			 struct overlay *ov, char *errbuf, size_t errlen)
{
	const json_t *list = json_object_get(doc, key);
	size_t max = pools ? OVERLAY_MAX_POOLS : OVERLAY_MAX_VOLUMES;
	size_t n = json_array_size(list);
	char where[96];
	int err;

	if (!json_is_array(list)) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "'%s' must be an array", key);
	}
	if (n > max) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "'%s': %zu entries, more than %zu", key, n,
				     max);
	}
	for (size_t i = 0; i < n; i++) {
		const json_t *item = json_array_get(list, i);
		const char *name;

		snprintf(where, sizeof(where), "%s[%zu]", key, i);
		if (pools) {
			err = codec_pool_in(item, &ov->pools[i], where, errbuf,
					    errlen);
			name = ov->pools[i].pool.name;
		} else {
			err = codec_volume_in(item, &ov->volumes[i], where,
					      errbuf, errlen);
			name = ov->volumes[i].volume.name;
		}
		if (!err && codec_seen(ov, pools, i, name)) {
			err = errbuf_printf(errbuf, errlen, -EINVAL,
					    "%s (%s): the name is used twice",
					    where, name);
		}
		if (err) {
			return err;
		}
		if (pools) {
			ov->npools = i + 1;
		} else {
			ov->nvolumes = i + 1;
		}
	}
	return 0;
}

static int codec_doc_in(const json_t *doc, struct overlay *ov, char *errbuf,
			size_t errlen)
{
	static const char *const known[] = { "format",	"version", "pools",
					     "volumes", "caps",	   NULL };
	const json_t *format = json_object_get(doc, "format");
	const json_t *version = json_object_get(doc, "version");
	int err;

	if (!json_is_object(doc)) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "a JSON object is expected");
	}
	err = codec_keys(doc, known, "document", errbuf, errlen);
	if (err) {
		return err;
	}
	if (!json_is_string(format) ||
	    strcmp(json_string_value(format), OVERLAY_FORMAT)) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "'format' must be \"%s\"", OVERLAY_FORMAT);
	}
	if (!json_is_integer(version) ||
	    json_integer_value(version) != OVERLAY_VERSION) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "'version' must be %d (this dsnfsd "
				     "reads no other)",
				     OVERLAY_VERSION);
	}
	err = codec_list_in(doc, "pools", true, ov, errbuf, errlen);
	if (!err) {
		err = codec_list_in(doc, "volumes", false, ov, errbuf, errlen);
	}
	if (!err) {
		err = codec_caps_in(json_object_get(doc, "caps"), ov, errbuf,
				    errlen);
	}
	return err;
}

int overlay_decode(const char *buf, size_t len, struct overlay *out,
		   char *errbuf, size_t errlen)
{
	json_error_t e;
	json_t *doc;
	int err;

	overlay_clear(out);
	if (len > OVERLAY_FILE_MAX_BYTES) {
		return errbuf_printf(errbuf, errlen, -E2BIG,
				     "%zu bytes, more than %u", len,
				     OVERLAY_FILE_MAX_BYTES);
	}
	doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &e);
	if (!doc) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "line %d column %d: %s", e.line, e.column,
				     e.text);
	}
	err = codec_doc_in(doc, out, errbuf, errlen);
	json_decref(doc);
	if (err) {
		overlay_clear(out);
	}
	return err;
}
