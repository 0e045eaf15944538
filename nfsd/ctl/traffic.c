// SPDX-License-Identifier: Apache-2.0
/*
 * traffic: the read-mostly commands over the admin API: `flows`, `hosts`,
 * `alarms`, `caps` (and `caps set`, live changes of the [traffic] caps),
 * and `metrics` (the Prometheus text as served).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/ctl/ctl.h"

/* A counter of counters.OP (read/write/other).FIELD as text. */
static const char *counter(const json_t *obj, const char *op, const char *field,
			   bool bytes, char *buf, size_t len)
{
	const json_t *c = json_object_get(json_object_get(obj, "counters"), op);

	return ctl_fmt_member(c, field, bytes, buf, len);
}

static void flow_row(struct ctl_table *t, const json_t *f)
{
	char id[24], q[24], cap[32], rops[24], wops[24], rb[32], wb[32],
		hit[24];
	const json_t *capv = json_object_get(f, "cap_bytes_per_s");

	ctl_fmt_rate(json_is_integer(capv) ? (uint64_t)json_integer_value(capv)
					   : 0,
		     cap, sizeof(cap));
	ctl_table_row(t, ctl_fmt_member(f, "id", false, id, sizeof(id)),
		      json_string_value(json_object_get(f, "host")),
		      json_string_value(json_object_get(f, "volume")),
		      ctl_fmt_member(f, "queued", false, q, sizeof(q)), cap,
		      counter(f, "read", "ops", false, rops, sizeof(rops)),
		      counter(f, "write", "ops", false, wops, sizeof(wops)),
		      counter(f, "read", "bytes", true, rb, sizeof(rb)),
		      counter(f, "write", "bytes", true, wb, sizeof(wb)),
		      ctl_fmt_member(json_object_get(f, "counters"),
				     "limit_reached", false, hit, sizeof(hit)));
}

int ctl_flows_main(const struct ctl_remote *r, int argc, char **argv)
{
	static const char *const header[] = { "ID",	   "HOST", "VOLUME",
					      "QUEUED",	   "CAP",  "READ OPS",
					      "WRITE OPS", "READ", "WRITTEN",
					      "LIMITED",   NULL };

	(void)argv;
	return ctl_list_main(r, argc, "/flows", "flows", header, flow_row);
}

static void host_row(struct ctl_table *t, const json_t *h)
{
	char n[24], busy[24], rops[24], wops[24], rb[32], wb[32], hit[24];

	ctl_table_row(
		t, json_string_value(json_object_get(h, "host")),
		ctl_fmt_member(h, "flows", false, n, sizeof(n)),
		ctl_fmt_member(h, "busy_flows", false, busy, sizeof(busy)),
		counter(h, "read", "ops", false, rops, sizeof(rops)),
		counter(h, "write", "ops", false, wops, sizeof(wops)),
		counter(h, "read", "bytes", true, rb, sizeof(rb)),
		counter(h, "write", "bytes", true, wb, sizeof(wb)),
		ctl_fmt_member(json_object_get(h, "counters"), "limit_reached",
			       false, hit, sizeof(hit)));
}

int ctl_hosts_main(const struct ctl_remote *r, int argc, char **argv)
{
	static const char *const header[] = { "HOST",	  "FLOWS",     "BUSY",
					      "READ OPS", "WRITE OPS", "READ",
					      "WRITTEN",  "LIMITED",   NULL };

	(void)argv;
	return ctl_list_main(r, argc, "/hosts", "hosts", header, host_row);
}

/* "87.9% (ALARM)" or "12.0%" or "-". */
static const char *alarm_cell(const json_t *a, const char *kind, char *buf,
			      size_t len)
{
	const json_t *k = json_object_get(a, kind);
	const json_t *pct = json_object_get(k, "percent");

	if (!json_is_number(pct)) {
		snprintf(buf, len, "-");
	} else {
		snprintf(buf, len, "%.1f%%%s", json_number_value(pct),
			 json_is_true(json_object_get(k, "raised")) ? " ALARM"
								    : "");
	}
	return buf;
}

static void alarm_row(struct ctl_table *t, const json_t *a)
{
	char quota[32], used[32], prov[32], thin[32], usage[32], over[32];

	ctl_table_row(
		t, json_string_value(json_object_get(a, "volume")),
		ctl_fmt_member(a, "quota_bytes", true, quota, sizeof(quota)),
		ctl_fmt_member(a, "used_bytes", true, used, sizeof(used)),
		alarm_cell(a, "usage", usage, sizeof(usage)),
		ctl_fmt_member(a, "provisioned_bytes", true, prov,
			       sizeof(prov)),
		ctl_fmt_member(a, "thin_disks", false, thin, sizeof(thin)),
		alarm_cell(a, "overallocation", over, sizeof(over)));
}

int ctl_alarms_main(const struct ctl_remote *r, int argc, char **argv)
{
	static const char *const header[] = { "VOLUME",		"QUOTA",
					      "USED",		"USAGE",
					      "PROVISIONED",	"THIN DISKS",
					      "OVERALLOCATION", NULL };

	(void)argv;
	return ctl_list_main(r, argc, "/alarms", "alarms", header, alarm_row);
}

static int caps_usage(void)
{
	fprintf(stderr, "usage: dsnfsctl caps [set [--scale X] "
			"[--flow-mibps N] [--flow-iops N] [--host-mibps N] "
			"[--host-iops N] [--volume-iops N] "
			"[--host-contention X] [--volume-contention X] "
			"[--burst-ms N]]\n");
	return CTL_EXIT_USAGE;
}

/* `caps set` options into a PATCH /caps body (NULL on bad usage). */
static json_t *caps_body(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "scale", required_argument, NULL, 0 },
		{ "flow-mibps", required_argument, NULL, 0 },
		{ "flow-iops", required_argument, NULL, 0 },
		{ "host-mibps", required_argument, NULL, 0 },
		{ "host-iops", required_argument, NULL, 0 },
		{ "volume-iops", required_argument, NULL, 0 },
		{ "host-contention", required_argument, NULL, 0 },
		{ "volume-contention", required_argument, NULL, 0 },
		{ "burst-ms", required_argument, NULL, 0 },
		{ NULL, 0, NULL, 0 },
	};
	json_t *b = json_object();
	int c, idx;

	optind = 0;
	while (b && (c = getopt_long(argc, argv, "", opts, &idx)) != -1) {
		char key[32], *end;
		double v;

		if (c != 0) {
			goto bad;
		}
		v = strtod(optarg, &end);
		if (!optarg[0] || *end) {
			goto bad;
		}
		snprintf(key, sizeof(key), "%s", opts[idx].name);
		for (char *p = key; *p; p++) {
			*p = *p == '-' ? '_' : *p;
		}
		/* Whole numbers go as integers: burst_ms takes no other. */
		json_object_set_new(b, key,
				    v == floor(v) && fabs(v) < 1e15
					    ? json_integer((json_int_t)v)
					    : json_real(v));
	}
	if (!b || optind != argc || json_object_size(b) == 0) {
		goto bad;
	}
	return b;
bad:
	json_decref(b);
	return NULL;
}

int ctl_caps_main(const struct ctl_remote *r, int argc, char **argv)
{
	const char *key;
	json_t *doc, *body = NULL, *v;
	char buf[48];

	if (argc > 1 && !strcmp(argv[1], "set")) {
		body = caps_body(argc - 1, argv + 1);
		if (!body) {
			return caps_usage();
		}
	} else if (argc != 1) {
		return caps_usage();
	}
	if (ctl_api_call(r, body ? "PATCH" : "GET", "/caps", body, &doc) ||
	    !doc) {
		return CTL_EXIT_FAIL;
	}
	if (r->json) {
		ctl_json_print(doc);
	} else {
		json_object_foreach(doc, key, v) printf(
			"%-16s %s\n", key,
			ctl_fmt_member(doc, key, false, buf, sizeof(buf)));
	}
	json_decref(doc);
	return CTL_EXIT_OK;
}

int ctl_metrics_main(const struct ctl_remote *r, int argc, char **argv)
{
	struct ctl_http_reply reply;
	char err[300];

	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "usage: dsnfsctl metrics\n");
		return CTL_EXIT_USAGE;
	}
	if (ctl_http_request(r, "GET", "/metrics", NULL, &reply, err,
			     sizeof(err))) {
		fprintf(stderr, "dsnfsctl: %s\n", err);
		return CTL_EXIT_FAIL;
	}
	if (reply.status != 200) {
		fprintf(stderr, "dsnfsctl: %u: %.200s\n", reply.status,
			reply.body);
		ctl_http_reply_fini(&reply);
		return CTL_EXIT_FAIL;
	}
	fwrite(reply.body, 1, reply.len, stdout);
	ctl_http_reply_fini(&reply);
	return CTL_EXIT_OK;
}
