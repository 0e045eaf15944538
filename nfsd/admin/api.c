// SPDX-License-Identifier: Apache-2.0
/*
 * api: routes a request to its resource's handler (the replies are
 * reply.c's, what the handlers ask of the server ctx.c's).  A path is
 * /COLLECTION or /COLLECTION/NAME; an unknown one is 404, a known one with a
 * method it does not take 405 with Allow.  A request body is parsed here, once,
 * for the handlers.
 */
#include "nfsd/admin/admin_int.h"
#include "nfsd/admin/patch.h"
#include "nfsd/admin/snap_policy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "nfsd/base/base.h"

#define API_CONTENT_JSON "application/json"

/* A path is up to API_SEGMENTS_MAX names; a "*" in a pattern takes any
 * name: the first is the request's name, the second its sub_name. */
#define API_SEGMENTS_MAX 5

struct api_route {
	const char *pattern; /* names and "*", joined by "/" */
	/* Changes nothing the overlay records (files, operations): runs
	 * without the changes' lock, which a long request would hold. */
	bool no_changes;
	admin_handler_fn *handlers[ADMIN_METHOD_COUNT];
};

static const struct api_route api_routes[] = {
	{ .pattern = "pools",
	  .handlers = { [ADMIN_METHOD_GET] = admin__pools_list,
			[ADMIN_METHOD_POST] = admin__pool_create } },
	{ .pattern = "pools/*",
	  .handlers = { [ADMIN_METHOD_GET] = admin__pool_get,
			[ADMIN_METHOD_PATCH] = admin__pool_patch,
			[ADMIN_METHOD_DELETE] = admin__pool_delete } },
	{ .pattern = "volumes",
	  .handlers = { [ADMIN_METHOD_GET] = admin__volumes_list,
			[ADMIN_METHOD_POST] = admin__volume_create } },
	{ .pattern = "volumes/*",
	  .handlers = { [ADMIN_METHOD_GET] = admin__volume_get,
			[ADMIN_METHOD_PATCH] = admin__volume_patch,
			[ADMIN_METHOD_DELETE] = admin__volume_delete } },
	{ .pattern = "volumes/*/clones",
	  .no_changes = true,
	  .handlers = { [ADMIN_METHOD_POST] = admin__clone_create } },
	{ .pattern = "volumes/*/reserve",
	  .no_changes = true,
	  .handlers = { [ADMIN_METHOD_POST] = admin__reserve_create } },
	{ .pattern = "volumes/*/stats",
	  .no_changes = true,
	  .handlers = { [ADMIN_METHOD_GET] = admin__stats_get } },
	{ .pattern = "volumes/*/snapshots",
	  .no_changes = true,
	  .handlers = { [ADMIN_METHOD_GET] = admin__snapshots_list,
			[ADMIN_METHOD_POST] = admin__snapshot_create } },
	{ .pattern = "volumes/*/snapshots/*",
	  .no_changes = true,
	  .handlers = { [ADMIN_METHOD_DELETE] = admin__snapshot_delete } },
	{ .pattern = "volumes/*/split",
	  .no_changes = true,
	  .handlers = { [ADMIN_METHOD_POST] = admin__volume_split } },
	{ .pattern = "volumes/*/snapshot-policy",
	  .no_changes = true,
	  .handlers = { [ADMIN_METHOD_GET] = admin__policy_get,
			[ADMIN_METHOD_PUT] = admin__policy_put,
			[ADMIN_METHOD_DELETE] = admin__policy_delete } },
	{ .pattern = "volumes/*/snapshots/*/restore",
	  .no_changes = true,
	  .handlers = { [ADMIN_METHOD_POST] = admin__snapshot_restore } },
	{ .pattern = "volumes/*/replication",
	  .no_changes = true,
	  .handlers = { [ADMIN_METHOD_GET] = admin__replication_get } },
	{ .pattern = "volumes/*/replication/*",
	  .no_changes = true,
	  .handlers = { [ADMIN_METHOD_POST] = admin__replication_action } },
	{ .pattern = "replications",
	  .no_changes = true,
	  .handlers = { [ADMIN_METHOD_GET] = admin__replications_list,
			[ADMIN_METHOD_POST] = admin__replication_create } },
	{ .pattern = "replications/*",
	  .no_changes = true,
	  .handlers = { [ADMIN_METHOD_DELETE] = admin__replication_delete } },
	{ .pattern = "operations",
	  .no_changes = true,
	  .handlers = { [ADMIN_METHOD_GET] = admin__operations_list } },
	{ .pattern = "operations/*",
	  .no_changes = true,
	  .handlers = { [ADMIN_METHOD_GET] = admin__operation_get } },
	{ .pattern = "flows",
	  .handlers = { [ADMIN_METHOD_GET] = admin__flows_list } },
	{ .pattern = "hosts",
	  .handlers = { [ADMIN_METHOD_GET] = admin__hosts_list } },
	{ .pattern = "caps",
	  .handlers = { [ADMIN_METHOD_GET] = admin__caps_get,
			[ADMIN_METHOD_PATCH] = admin__caps_patch } },
	{ .pattern = "alarms",
	  .handlers = { [ADMIN_METHOD_GET] = admin__alarms_list } },
	{ .pattern = "metrics",
	  .handlers = { [ADMIN_METHOD_GET] = admin__metrics_get } },
	{ .pattern = "changes",
	  .handlers = { [ADMIN_METHOD_GET] = admin__changes_get,
			[ADMIN_METHOD_DELETE] = admin__changes_revert } },
};

static const char *const api_method_names[ADMIN_METHOD_COUNT] = {
	[ADMIN_METHOD_GET] = "GET",	[ADMIN_METHOD_POST] = "POST",
	[ADMIN_METHOD_PATCH] = "PATCH", [ADMIN_METHOD_DELETE] = "DELETE",
	[ADMIN_METHOD_PUT] = "PUT",
};

static int api_method_parse(const char *method, enum admin_method *out)
{
	/* HEAD is a GET whose body libmicrohttpd leaves out. */
	if (!strcmp(method, "HEAD")) {
		*out = ADMIN_METHOD_GET;
		return 0;
	}
	for (int m = 0; m < ADMIN_METHOD_COUNT; m++) {
		if (!strcmp(method, api_method_names[m])) {
			*out = (enum admin_method)m;
			return 0;
		}
	}
	return -EINVAL;
}

/* The names of a path, in place in @buf: "/volumes/ds1/clones/" ->
 * "volumes", "ds1", "clones".  Returns how many, or -ENOENT for an empty
 * name inside, too many, or one too long. */
static int api_path_split(const char *url, char *buf, size_t blen,
			  char *seg[API_SEGMENTS_MAX])
{
	size_t len = strlen(url);
	int n = 0;
	char *p;

	if (url[0] != '/' || len >= blen) {
		return -ENOENT;
	}
	memcpy(buf, url + 1, len);
	if (len > 1 && buf[len - 2] == '/') {
		buf[len - 2] = '\0'; /* one trailing slash */
	}
	p = buf;
	while (*p || n == 0) {
		char *slash = strchr(p, '/');
		size_t slen = slash ? (size_t)(slash - p) : strlen(p);

		if (slen == 0 || slen > POOL_NAME_MAX ||
		    n == API_SEGMENTS_MAX) {
			return -ENOENT;
		}
		seg[n++] = p;
		if (!slash) {
			break;
		}
		*slash = '\0';
		p = slash + 1;
		if (!*p) {
			return -ENOENT;
		}
	}
	return n;
}

/* Whether @segs match @pattern; the names "*" takes go to @names. */
static bool api_route_match(const char *pattern, char *const *segs, int n,
			    const char **names)
{
	char pat[64];
	int i = 0, k = 0;

	snprintf(pat, sizeof(pat), "%s", pattern);
	for (char *save = NULL, *t = strtok_r(pat, "/", &save); t;
	     t = strtok_r(NULL, "/", &save), i++) {
		if (i >= n) {
			return false;
		}
		if (!strcmp(t, "*")) {
			if (k < 2) {
				names[k++] = segs[i];
			}
		} else if (strcmp(t, segs[i])) {
			return false;
		}
	}
	return i == n;
}

static void api_allow(const struct api_route *r, struct admin_reply *reply)
{
	size_t used = 0;

	reply->allow[0] = '\0';
	for (int m = 0; m < ADMIN_METHOD_COUNT; m++) {
		if (!r->handlers[m]) {
			continue;
		}
		used += (size_t)snprintf(reply->allow + used,
					 sizeof(reply->allow) - used, "%s%s",
					 used ? ", " : "", api_method_names[m]);
	}
}

static bool api_content_json(const char *content_type)
{
	size_t n = strlen(API_CONTENT_JSON);

	return content_type &&
	       !strncasecmp(content_type, API_CONTENT_JSON, n) &&
	       (content_type[n] == '\0' || content_type[n] == ';' ||
		content_type[n] == ' ');
}

/* Runs @handler; a change of the live state holds the changes' lock from
 * before it reads the state until its overlay is recorded, so that two
 * changes, or a change and a SIGHUP, never interleave.  The overlay is
 * recorded after every request that may change something, whatever its
 * status: a multi-field PATCH can fail after some steps stayed, and an
 * unchanged overlay is not written again. */
static void api_serve(struct admin_api *api, admin_handler_fn *handler,
		      bool no_changes, const struct admin_request *req,
		      struct admin_reply *reply)
{
	struct overlay_store *changes = api->ctx.changes;

	if (req->method == ADMIN_METHOD_GET || !changes || no_changes) {
		handler(api, req, reply);
		return;
	}
	overlay_store_lock(changes);
	handler(api, req, reply);
	admin__changes_record(api, reply);
	overlay_store_unlock(changes);
}

const char *admin__request_arg(const struct admin_request *req, const char *key)
{
	for (size_t i = 0; i < req->nargs; i++) {
		if (!strcmp(req->args[i].key, key)) {
			return req->args[i].value;
		}
	}
	return NULL;
}

void admin__api_handle(struct admin_api *api, const char *method,
		       const char *url, const char *content_type,
		       const char *body, size_t len, struct admin_reply *reply)
{
	admin__api_handle_args(api, method, url, NULL, 0, content_type, body,
			       len, reply);
}

void admin__api_handle_args(struct admin_api *api, const char *method,
			    const char *url, const struct admin_arg *args,
			    size_t nargs, const char *content_type,
			    const char *body, size_t len,
			    struct admin_reply *reply)
{
	char buf[API_SEGMENTS_MAX * (POOL_NAME_MAX + 1) + 2], err[300];
	char *segs[API_SEGMENTS_MAX];
	const char *names[2] = { NULL, NULL };
	const struct api_route *route = NULL;
	struct admin_request req = { 0 };
	json_t *doc = NULL;
	int n;

	memset(reply, 0, sizeof(*reply));
	n = api_path_split(url, buf, sizeof(buf), segs);
	if (n < 0) {
		admin__reply_error(reply, 404, "no resource %.200s", url);
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(api_routes) && !route; i++) {
		names[0] = names[1] = NULL;
		if (api_route_match(api_routes[i].pattern, segs, n, names)) {
			route = &api_routes[i];
		}
	}
	if (!route) {
		admin__reply_error(reply, 404, "no resource %.200s", url);
		return;
	}
	if (api_method_parse(method, &req.method) ||
	    !route->handlers[req.method]) {
		api_allow(route, reply);
		admin__reply_error(reply, 405, "%.16s is not allowed on %.200s",
				   method, url);
		return;
	}
	if (req.method == ADMIN_METHOD_POST ||
	    req.method == ADMIN_METHOD_PATCH ||
	    req.method == ADMIN_METHOD_PUT) {
		if (!api_content_json(content_type)) {
			admin__reply_error(reply, 415,
					   "body: Content-Type must be %s",
					   API_CONTENT_JSON);
			return;
		}
		if (admin__json_parse(body, len, &doc, err, sizeof(err))) {
			admin__reply_error(reply, 400, "%s", err);
			return;
		}
	} else if (len) {
		admin__reply_error(reply, 400, "body: %s takes no body",
				   api_method_names[req.method]);
		return;
	}
	req.name = names[0];
	req.sub_name = names[1];
	req.args = args;
	req.nargs = nargs;
	req.body = doc;
	api_serve(api, route->handlers[req.method], route->no_changes, &req,
		  reply);
	json_decref(doc);
}
