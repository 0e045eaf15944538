// SPDX-License-Identifier: Apache-2.0
/*
 * repl_api: replication through the admin API (docs/replication.md,
 * nfsd/repl/service.h):
 *
 *   GET  /volumes/NAME/replication             its relations, their state
 *                                              and figures
 *   POST /volumes/NAME/replication/transfer    {}: a transfer now (202;
 *                                              the relation's thread runs
 *                                              it)
 *   POST /volumes/NAME/replication/break       {}: break (on the source:
 *                                              tells the destination; on
 *                                              the destination: the
 *                                              failover, writable at once)
 *   POST /volumes/NAME/replication/resync      {}: on the source: the
 *                                              destination back to the
 *                                              last common snapshot
 *   POST /volumes/NAME/replication/reverse     {}: on the destination,
 *                                              after its break: it
 *                                              becomes the source, the
 *                                              old source the destination
 *                                              (nfsd/repl/reverse.h)
 *
 * (?relation=NAME: that relation only; else every relation of the
 * datastore) and the dsnfs_replication_* families of /metrics.  The admin token
 * guards these as every route (/replications itself: replications.c);
 * the destination's own route
 * (/replications/NAME/peer, the relation's key) is http.c's.
 */
#include "nfsd/admin/admin_int.h"
#include "nfsd/admin/paths.h"
#include "nfsd/admin/view.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/repl/service.h"

#define REPL_API_MAX 8

json_t *admin__repl_json(const struct repl_status *st)
{
	const struct repl_xfer_stats *l = &st->last_stats;
	bool src = st->role == REPL_ROLE_SOURCE;
	json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:b, s:b, s:b}", "name",
			      st->name, "role", src ? "source" : "destination",
			      "volume", st->datastore, "state", st->state,
			      "running", st->running, "broken", st->broken,
			      "reversed", st->reversed);
	const char *ename = st->last_err ? strerrorname_np(-st->last_err) : "";

	if (!o) {
		return NULL;
	}
	json_object_set_new(o, "origin",
			    json_string(st->api ? "api" : "config"));
	json_object_set_new(o, "last_snapshot", json_string(st->last));
	if (!src) {
		json_object_set_new(o, "source_url", json_string(st->url));
		json_object_set_new(o, "source_volume",
				    json_string(st->dst_datastore));
		return o;
	}
	json_object_set_new(o, "destination_url", json_string(st->url));
	json_object_set_new(o, "destination_volume",
			    json_string(st->dst_datastore));
	json_object_set_new(o, "schedule", json_string(st->schedule));
	json_object_set_new(o, "schedule_seconds",
			    json_integer(st->schedule_seconds));
	json_object_set_new(o, "last_transfer_s", json_integer(st->last_ok_s));
	json_object_set_new(o, "last_attempt_s",
			    json_integer(st->last_attempt_s));
	json_object_set_new(o, "lag_s", json_integer(st->lag_s));
	json_object_set_new(o, "bytes_sent_total",
			    json_integer((json_int_t)st->bytes_total));
	json_object_set_new(o, "transfers_ok",
			    json_integer((json_int_t)st->transfers_ok));
	json_object_set_new(o, "transfers_failed",
			    json_integer((json_int_t)st->transfers_failed));
	json_object_set_new(o, "runs_skipped",
			    json_integer((json_int_t)st->skipped));
	json_object_set_new(
		o, "last",
		json_pack("{s:I, s:I, s:I, s:I, s:I, s:b, s:I, s:I}", "files",
			  (json_int_t)l->files, "files_resumed",
			  (json_int_t)l->files_resumed, "candidate_bytes",
			  (json_int_t)l->candidate_bytes, "sent_bytes",
			  (json_int_t)l->sent_bytes, "removed",
			  (json_int_t)l->removed, "restarted", l->restarted,
			  "snapshots", (json_int_t)st->last_snapshots,
			  "snapshots_deleted",
			  (json_int_t)st->last_snapshots_deleted));
	json_object_set_new(o, "snapshots_total",
			    json_integer((json_int_t)st->snapshots_total));
	json_object_set_new(o, "error", json_string(st->error));
	json_object_set_new(o, "last_error", json_string(ename ? ename : ""));
	json_object_set_new(o, "last_error_s", json_integer(st->last_err_s));
	json_object_set_new(o, "alarm", json_string(st->alarm));
	return o;
}

void admin__replication_get(struct admin_api *api,
			    const struct admin_request *req,
			    struct admin_reply *reply)
{
	struct repl_status *st;
	json_t *doc, *list;
	size_t n;

	if (!admin__export_live(api, req->name, reply)) {
		return;
	}
	st = calloc(REPL_API_MAX, sizeof(*st));
	if (!st) {
		admin__reply_error(reply, 500, "out of memory");
		return;
	}
	n = repl_service_status(api->ctx.repl, req->name, st, REPL_API_MAX);
	if (!n) {
		free(st);
		admin__reply_error(reply, 404,
				   "volume %s: no replication relation (see "
				   "[replication NAME] in dsnfsd.conf(5) and "
				   "POST /replications)",
				   req->name);
		return;
	}
	list = json_array();
	for (size_t i = 0; list && i < n; i++) {
		json_array_append_new(list, admin__repl_json(&st[i]));
	}
	free(st);
	doc = json_pack("{s:s, s:o}", "volume", req->name, "relations", list);
	if (!doc) {
		admin__reply_error(reply, 500, "out of memory");
		return;
	}
	admin__reply_json(reply, 200, doc);
}

void admin__replication_action(struct admin_api *api,
			       const struct admin_request *req,
			       struct admin_reply *reply)
{
	const char *a = req->sub_name;
	char err[600];
	int rc;

	if (!admin__export_live(api, req->name, reply)) {
		return;
	}
	if (strcmp(a, "transfer") && strcmp(a, "break") &&
	    strcmp(a, "resync") && strcmp(a, "reverse")) {
		admin__reply_error(reply, 404,
				   "replication: '%.64s' is not transfer, "
				   "break, resync or reverse",
				   a);
		return;
	}
	rc = repl_service_action(api->ctx.repl, req->name,
				 admin__request_arg(req, "relation"), a, err,
				 sizeof(err));
	if (rc) {
		admin__reply_error(
			reply,
			rc == -ENOENT					? 404
			: rc == -EBUSY || rc == -EPERM || rc == -EINVAL ? 409
									: 502,
			"%s", err);
		return;
	}
	if (!strcmp(a, "transfer")) {
		admin__reply_json(reply, 202,
				  json_pack("{s:s, s:s}", "volume", req->name,
					    "transfer", "queued"));
		return;
	}
	admin__replication_get(api, req, reply);
}

static void repl_api_family(struct admin_buf *out, const char *name,
			    const char *type, const char *help)
{
	admin__buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name,
			  type);
}

static void repl_api_sample(struct admin_buf *out, const char *name,
			    const struct repl_status *st, int64_t v)
{
	admin__buf_printf(out, "%s{relation=\"", name);
	admin__metrics_label_escape(out, st->name);
	admin__buf_puts(out, "\",volume=\"");
	admin__metrics_label_escape(out, st->datastore);
	admin__buf_printf(out, "\"} %" PRId64 "\n", v);
}

void admin__replication_metrics(struct admin_api *api, struct admin_buf *out)
{
	static const struct {
		const char *name, *type, *help;
	} fam[] = {
		{ "dsnfs_replication_last_transfer_seconds", "gauge",
		  "UTC time the last transfer ended well (0: never)" },
		{ "dsnfs_replication_lag_seconds", "gauge",
		  "Age of the destination's replica (-1: no baseline yet)" },
		{ "dsnfs_replication_sent_bytes_total", "counter",
		  "Bytes of blocks written to the destination" },
		{ "dsnfs_replication_last_sent_bytes", "gauge",
		  "Bytes the last transfer sent" },
		{ "dsnfs_replication_transfers_total", "counter",
		  "Transfers that ended well" },
		{ "dsnfs_replication_transfers_failed_total", "counter",
		  "Transfers that failed (resumed by the next)" },
		{ "dsnfs_replication_runs_skipped_total", "counter",
		  "Scheduled runs skipped: the last transfer still ran" },
		{ "dsnfs_replication_broken", "gauge",
		  "The relation is broken off (1) or runs (0)" },
		{ "dsnfs_replication_last_snapshots", "gauge",
		  "Source snapshots the last transfer carried besides its "
		  "replica" },
		{ "dsnfs_replication_snapshots_total", "counter",
		  "Source snapshots carried to the destination" },
	};
	struct repl_status *st;
	size_t n;

	if (!api->ctx.repl) {
		return;
	}
	st = calloc(REPL_PEERS_MAX, sizeof(*st));
	if (!st) {
		out->err = -ENOMEM;
		return;
	}
	n = repl_service_status(api->ctx.repl, NULL, st, REPL_PEERS_MAX);
	if (!n) {
		free(st); /* no family without a relation, as before any */
		return;
	}
	for (size_t f = 0; f < sizeof(fam) / sizeof(fam[0]); f++) {
		repl_api_family(out, fam[f].name, fam[f].type, fam[f].help);
		for (size_t i = 0; i < n; i++) {
			const struct repl_status *s = &st[i];
			int64_t v[] = {
				s->last_ok_s,
				s->lag_s,
				(int64_t)s->bytes_total,
				(int64_t)s->last_stats.sent_bytes,
				(int64_t)s->transfers_ok,
				(int64_t)s->transfers_failed,
				(int64_t)s->skipped,
				s->broken,
				(int64_t)s->last_snapshots,
				(int64_t)s->snapshots_total,
			};

			if (s->role == REPL_ROLE_SOURCE || f == 7) {
				repl_api_sample(out, fam[f].name, s, v[f]);
			}
		}
	}
	free(st);
}

bool admin__repl_peer_url(const char *url, char *name, size_t len)
{
	static const char pre[] = "/replications/", post[] = "/peer";
	const char *n = url + sizeof(pre) - 1, *slash;

	if (strncmp(url, pre, sizeof(pre) - 1)) {
		return false;
	}
	slash = strchr(n, '/');
	if (!slash || slash == n || (size_t)(slash - n) >= len ||
	    strcmp(slash, post)) {
		return false;
	}
	memcpy(name, n, (size_t)(slash - n));
	name[slash - n] = '\0';
	return true;
}

/* A result body of -@err and @why, with @status. */
static void repl_peer_reply(struct admin_reply *reply, unsigned status,
			    const struct repl_result *r)
{
	unsigned char *b = malloc(REPL_RESULT_HEAD + REPL_REASON_MAX);

	memset(reply, 0, sizeof(*reply));
	if (!b) {
		reply->status = 500;
		return;
	}
	reply->status = status;
	reply->len = repl_result_encode(r, b);
	reply->body = (char *)b;
	reply->content_type = "application/octet-stream";
}

void admin__repl_peer_refuse(struct admin_reply *reply, unsigned status,
			     const char *name, const char *why)
{
	struct repl_result r = { .err = status == 401	? -EACCES
					: status == 404 ? -ENOENT
					: status == 413 ? -E2BIG
							: -EINVAL };

	snprintf(r.reason, sizeof(r.reason), "relation %.64s: %s", name, why);
	repl_peer_reply(reply, status, &r);
}

void admin__repl_peer_handle(struct admin_api *api, const char *name,
			     const char *authorization, const char *ctype,
			     const char *body, size_t len,
			     struct admin_reply *reply)
{
	unsigned char out[REPL_RESULT_HEAD + REPL_REASON_MAX];
	struct repl_result r;
	size_t n = 0;
	unsigned status;

	if (!ctype || strcmp(ctype, "application/octet-stream")) {
		admin__repl_peer_refuse(reply, 415, name,
					"the body must be "
					"application/octet-stream");
		return;
	}
	status = repl_service_peer(api->ctx.repl, name, authorization,
				   (const unsigned char *)body, len, out, &n);
	if (repl_result_decode(out, n, &r) < 0) {
		memset(&r, 0, sizeof(r));
		r.err = -EIO;
	}
	repl_peer_reply(reply, status, &r);
}
