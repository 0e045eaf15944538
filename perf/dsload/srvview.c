// SPDX-License-Identifier: Apache-2.0
/*
 * srvview: samples of dsnfsd's /volumes and /hosts counters and the rates
 * between two of them (see srvview.h).  The JSON shape, per entry:
 * {"name"|"host": ..., "counters": {"read"|"write"|"other": {"ops",
 * "bytes", "done", "latency_ns"}, ...}}.
 */
#include "perf/dsload/srvview.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

static const char *const srv_dir_names[SRV_DIRS] = { "read", "write", "other" };

static int srv_u64(json_t *obj, const char *key, uint64_t *out)
{
	json_t *v = json_object_get(obj, key);

	if (!json_is_integer(v) || json_integer_value(v) < 0) {
		return -EBADMSG;
	}
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

static int srv_counters_parse(json_t *counters, struct srv_counters *c)
{
	for (int d = 0; d < SRV_DIRS; d++) {
		json_t *o = json_object_get(counters, srv_dir_names[d]);

		if (!json_is_object(o) || srv_u64(o, "ops", &c->ops[d]) ||
		    srv_u64(o, "bytes", &c->bytes[d]) ||
		    srv_u64(o, "done", &c->done[d]) ||
		    srv_u64(o, "latency_ns", &c->latency_ns[d])) {
			return -EBADMSG;
		}
	}
	return 0;
}

/* Parses the array @key of @text into @out; names under @name_key. */
static int srv_list_parse(const char *text, const char *key,
			  const char *name_key, struct srv_entry *out,
			  size_t *n, char *errbuf, size_t errlen)
{
	json_error_t jerr;
	json_t *root = json_loads(text, 0, &jerr), *arr, *e;
	size_t i;
	int err = 0;

	*n = 0;
	if (!root) {
		snprintf(errbuf, errlen, "/%s: %s", key, jerr.text);
		return -EBADMSG;
	}
	arr = json_object_get(root, key);
	if (!json_is_array(arr)) {
		snprintf(errbuf, errlen, "/%s: no \"%s\" array", key, key);
		err = -EBADMSG;
		goto out;
	}
	json_array_foreach(arr, i, e)
	{
		json_t *name = json_object_get(e, name_key);

		if (*n == SRV_ENTRIES_MAX) {
			break;
		}
		if (!json_is_string(name) ||
		    srv_counters_parse(json_object_get(e, "counters"),
				       &out[*n].c)) {
			snprintf(errbuf, errlen, "/%s: entry %zu malformed",
				 key, i);
			err = -EBADMSG;
			goto out;
		}
		snprintf(out[*n].name, SRV_NAME_MAX, "%s",
			 json_string_value(name));
		(*n)++;
	}
out:
	json_decref(root);
	return err;
}

int srv_sample_parse(const char *volumes_json, const char *hosts_json,
		     int64_t at_ns, struct srv_sample *s, char *errbuf,
		     size_t errlen)
{
	s->at_ns = at_ns;
	if (srv_list_parse(volumes_json, "volumes", "name", s->vol, &s->nvol,
			   errbuf, errlen) ||
	    srv_list_parse(hosts_json, "hosts", "host", s->host, &s->nhost,
			   errbuf, errlen)) {
		return -EBADMSG;
	}
	return 0;
}

static const struct srv_entry *srv_find(const struct srv_entry *list, size_t n,
					const char *name)
{
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(list[i].name, name)) {
			return &list[i];
		}
	}
	return NULL;
}

/* @out (zeroed by the caller) += @b - @a; false when a counter went
 * backwards.  An entry missing from @a counts from zero. */
static bool srv_delta_add(const struct srv_entry *a, const struct srv_entry *b,
			  struct srv_counters *out)
{
	static const struct srv_counters zero;
	const struct srv_counters *x = a ? &a->c : &zero, *y = &b->c;

	for (int d = 0; d < SRV_DIRS; d++) {
		if (y->ops[d] < x->ops[d] || y->bytes[d] < x->bytes[d] ||
		    y->done[d] < x->done[d] ||
		    y->latency_ns[d] < x->latency_ns[d]) {
			return false;
		}
		out->ops[d] += y->ops[d] - x->ops[d];
		out->bytes[d] += y->bytes[d] - x->bytes[d];
		out->done[d] += y->done[d] - x->done[d];
		out->latency_ns[d] += y->latency_ns[d] - x->latency_ns[d];
	}
	return true;
}

static void srv_counters_add(struct srv_counters *sum,
			     const struct srv_counters *c)
{
	for (int d = 0; d < SRV_DIRS; d++) {
		sum->ops[d] += c->ops[d];
		sum->bytes[d] += c->bytes[d];
		sum->done[d] += c->done[d];
		sum->latency_ns[d] += c->latency_ns[d];
	}
}

static void srv_rate_set(struct srv_rate *r, const char *name,
			 const struct srv_counters *c, double seconds)
{
	snprintf(r->name, sizeof(r->name), "%s", name);
	for (int d = 0; d < SRV_DIRS; d++) {
		r->iops[d] = (double)c->ops[d] / seconds;
		r->mibps[d] = (double)c->bytes[d] / (1024.0 * 1024.0) / seconds;
		r->lat_ms[d] = c->done[d] ? (double)c->latency_ns[d] /
						    (double)c->done[d] / 1e6
					  : 0.0;
	}
}

void srv_view_compute(const struct srv_sample *a, const struct srv_sample *b,
		      const char (*vols)[SRV_NAME_MAX], size_t nvols,
		      const char *host_prefix, struct srv_view *v)
{
	struct srv_counters total = { 0 };
	size_t plen = strlen(host_prefix);

	memset(v, 0, sizeof(*v));
	v->sampled = true;
	v->seconds = (double)(b->at_ns - a->at_ns) / 1e9;
	if (v->seconds <= 0) {
		snprintf(v->why, sizeof(v->why), "samples out of order");
		return;
	}
	for (size_t i = 0; i < nvols && v->nvol < SRV_ENTRIES_MAX; i++) {
		const struct srv_entry *eb = srv_find(b->vol, b->nvol, vols[i]);
		struct srv_counters c = { 0 };

		if (!eb) {
			continue;
		}
		if (!srv_delta_add(srv_find(a->vol, a->nvol, vols[i]), eb,
				   &c)) {
			snprintf(v->why, sizeof(v->why),
				 "volume %s: counters went backwards (a "
				 "restart?)",
				 vols[i]);
			return;
		}
		srv_counters_add(&total, &c);
		srv_rate_set(&v->vol[v->nvol++], vols[i], &c, v->seconds);
	}
	for (size_t i = 0; i < b->nhost && v->nhost < SRV_ENTRIES_MAX; i++) {
		struct srv_counters c = { 0 };

		if (strncmp(b->host[i].name, host_prefix, plen)) {
			continue;
		}
		if (!srv_delta_add(srv_find(a->host, a->nhost, b->host[i].name),
				   &b->host[i], &c)) {
			snprintf(v->why, sizeof(v->why),
				 "host %s: counters went backwards (a "
				 "restart?)",
				 b->host[i].name);
			return;
		}
		srv_rate_set(&v->host[v->nhost++], b->host[i].name, &c,
			     v->seconds);
	}
	srv_rate_set(&v->total, "all", &total, v->seconds);
	v->ok = true;
}
