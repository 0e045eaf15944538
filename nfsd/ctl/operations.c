// SPDX-License-Identifier: Apache-2.0
/*
 * operations: `dsnfsctl operations [ID]` (GET /operations, the admin
 * API's long operations with their progress), and the wait that the
 * commands starting one share: it polls GET /operations/ID until the
 * operation ends, drawing a progress bar on stderr when stderr is a
 * terminal (nothing otherwise, so scripts and logs stay quiet).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nfsd/ctl/ctl.h"

/* Between polls of a running operation. */
#define OP_POLL_MS 200
#define OP_BAR_COLS 40

static const char *const op_header[] = { "ID",	    "KIND",   "MODE",  "VOLUME",
					 "SOURCE",  "TARGET", "STATE", "DONE",
					 "SECONDS", NULL };

static void op_row(struct ctl_table *t, const json_t *o)
{
	char id[32], pct[32], secs[32];
	const char *target = json_string_value(json_object_get(o, "target"));

	ctl_table_row(t, ctl_fmt_member(o, "id", false, id, sizeof(id)),
		      json_string_value(json_object_get(o, "kind")),
		      json_string_value(json_object_get(o, "mode")),
		      json_string_value(json_object_get(o, "volume")),
		      json_string_value(json_object_get(o, "source")),
		      target && target[0] ? target : "-",
		      json_string_value(json_object_get(o, "state")),
		      ctl_fmt_percent(o, "percent", pct, sizeof(pct)),
		      ctl_fmt_member(o, "seconds", false, secs, sizeof(secs)));
}

int ctl_operations_main(const struct ctl_remote *r, int argc, char **argv)
{
	char path[64];
	json_t *doc;
	int rc;

	if (argc == 1) {
		return ctl_list_main(r, argc, "/operations", "operations",
				     op_header, op_row);
	}
	if (argc != 2 || strspn(argv[1], "0123456789") != strlen(argv[1])) {
		fprintf(stderr, "usage: dsnfsctl operations [ID]\n");
		return CTL_EXIT_USAGE;
	}
	snprintf(path, sizeof(path), "/operations/%s", argv[1]);
	if (ctl_api_call(r, "GET", path, NULL, &doc)) {
		return CTL_EXIT_FAIL;
	}
	rc = ctl_items_print(r, doc, NULL, op_header, op_row);
	json_decref(doc);
	return rc;
}

static uint64_t op_member_u64(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
}

static void op_bar_draw(const json_t *op)
{
	uint64_t done = op_member_u64(op, "done_bytes");
	uint64_t total = op_member_u64(op, "total_bytes");
	int fill =
		total ? (int)((double)done / (double)total * OP_BAR_COLS) : 0;
	char d[32], t[32];

	if (fill > OP_BAR_COLS) {
		fill = OP_BAR_COLS;
	}
	fprintf(stderr, "\r[%.*s%*s] %5.1f%% %s / %s ", fill,
		"########################################", OP_BAR_COLS - fill,
		"", total ? 100.0 * (double)done / (double)total : 0.0,
		ctl_fmt_bytes(done, d, sizeof(d)),
		ctl_fmt_bytes(total, t, sizeof(t)));
	fflush(stderr);
}

static void op_sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR) {
	}
}

int ctl_op_wait(const struct ctl_remote *r, json_t *op, json_t **out)
{
	bool bar = isatty(STDERR_FILENO) && !r->json;
	const char *state;
	char path[64];
	int rc = 0;

	*out = NULL;
	snprintf(path, sizeof(path), "/operations/%" PRIu64,
		 op_member_u64(op, "id"));
	for (;;) {
		state = json_string_value(json_object_get(op, "state"));
		if (bar) {
			op_bar_draw(op);
		}
		if (!state || strcmp(state, "running")) {
			break;
		}
		op_sleep_ms(OP_POLL_MS);
		json_decref(op);
		op = NULL;
		rc = ctl_api_call(r, "GET", path, NULL, &op);
		if (rc || !op) {
			rc = rc ? rc : -EPROTO;
			break;
		}
	}
	if (bar) {
		fputc('\n', stderr);
	}
	*out = op;
	if (rc) {
		return rc;
	}
	if (!state || strcmp(state, "done")) {
		const char *e = json_string_value(json_object_get(op, "error"));

		fprintf(stderr, "dsnfsctl: operation %" PRIu64 " failed: %s\n",
			op_member_u64(op, "id"), e ? e : "(no reason given)");
		return -EIO;
	}
	return 0;
}
