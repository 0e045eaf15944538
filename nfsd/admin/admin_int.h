/* SPDX-License-Identifier: Apache-2.0 */
/*
 * admin_int: the admin module's core declarations: text buffers (buf.c),
 * requests and replies (api.c, reply.c), the resources' handlers
 * (resource.c pools.c volumes.c traffic_api.c changes.c ...), the
 * dashboard and the login.  The rest, by concern, beside it: view.h (one
 * consistent picture of pools, volumes, traffic and alarms for a GET, as
 * JSON and as Prometheus text), patch.h (request bodies and multi-field
 * changes), ops.h (long operations) and paths.h (a datastore's files).
 * The layers, bottom up: buf.c, view.c, json_out.c / json_in.c,
 * metrics.c, the resources, patch.c, api.c (routing, replies), admin_config.c
 * ([admin]) and http.c (libmicrohttpd).  Nothing below http.c knows about
 * HTTP connections, so the tests drive api.c directly.
 */
#ifndef DSNFS_ADMIN_INT_H
#define DSNFS_ADMIN_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "nfsd/admin/admin.h"

/* ---- text buffer (buf.c) ----------------------------------------------- */

/* Replies are built in memory; /metrics of thousands of flows stays far
 * below this. */
#define ADMIN_BUF_MAX_BYTES (64u << 20)

/* A growing string.  A failed append (-ENOMEM, -E2BIG past
 * ADMIN_BUF_MAX_BYTES) is remembered in err and later appends do nothing,
 * so a writer checks once, at the end. */
struct admin_buf {
	char *data; /* owned; NUL-terminated when not NULL */
	size_t len;
	size_t cap;
	int err;
};

void admin__buf_init(struct admin_buf *b);
void admin__buf_fini(struct admin_buf *b);
void admin__buf_append(struct admin_buf *b, const char *s, size_t n);
void admin__buf_puts(struct admin_buf *b, const char *s);
void admin__buf_printf(struct admin_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---- thin-provisioning alarms (nfsd/alarm/, view.c) ------------------- */

struct alarm_set;

/* The alarms of ctx->exports, with ctx's pools, usage callback and [admin]
 * thresholds (alarm_set_new() on them).  Returns 0 and *out (owned:
 * alarm_set_free()), or -ENOMEM. */
int admin__alarms_new(const struct admin_ctx *ctx, struct alarm_set **out);

/* ---- requests and replies (api.c) -------------------------------------- */

enum admin_method {
	ADMIN_METHOD_GET = 0,
	ADMIN_METHOD_POST,
	ADMIN_METHOD_PATCH,
	ADMIN_METHOD_DELETE,
	ADMIN_METHOD_PUT,
	ADMIN_METHOD_COUNT,
};

struct admin_ops;
struct admin_policies;

struct admin_api {
	struct admin_ctx ctx;
	struct alarm_set *alarms; /* borrowed; may be NULL */
	struct admin_ops *ops; /* borrowed; may be NULL: no operations */
	/* borrowed; may be NULL: no snapshot policies (snap_policy.h) */
	struct admin_policies *policies;
};

struct admin_reply {
	unsigned status;
	const char *content_type; /* static */
	char *body; /* owned */
	size_t len;
	char location[96]; /* "" or the Location of a 201 */
	char allow[48]; /* "" or the Allow of a 405 */
	char set_cookie[192]; /* "" or a Set-Cookie (the login's) */
	bool bearer_challenge; /* a 401: WWW-Authenticate: Bearer */
};

/* One argument of the query string, percent-decoded (borrowed). */
struct admin_arg {
	const char *key;
	const char *value;
};

/* Arguments of a query string kept; more are ignored. */
#define ADMIN_ARGS_MAX 8

/* One routed request: the resource's NAME (borrowed, NULL for a
 * collection), the NAME of its sub-resource (/volumes/NAME/snapshots/SUB,
 * else NULL), its query arguments and its parsed body (borrowed, NULL
 * without one). */
struct admin_request {
	enum admin_method method;
	const char *name;
	const char *sub_name;
	const struct admin_arg *args;
	size_t nargs;
	const json_t *body;
};

/* The value of query argument @key of @req (borrowed), or NULL. */
const char *admin__request_arg(const struct admin_request *req,
			       const char *key);

typedef void admin_handler_fn(struct admin_api *api,
			      const struct admin_request *req,
			      struct admin_reply *reply);

/*
 * Serves one request: @method and @url (borrowed; the path, already
 * percent-decoded) with @body (borrowed, @len bytes, may be NULL) of type
 * @content_type (borrowed, may be NULL).  A body must be
 * application/json: a browser cannot send that cross-site without asking
 * first (CORS), which this endpoint never allows.  Always fills @reply
 * (release: admin__reply_fini()); a reply that could not be built is a
 * 500 with an empty body.
 */
void admin__api_handle(struct admin_api *api, const char *method,
		       const char *url, const char *content_type,
		       const char *body, size_t len, struct admin_reply *reply);

/* admin__api_handle() with the query string's arguments (@args borrowed,
 * @nargs of them). */
void admin__api_handle_args(struct admin_api *api, const char *method,
			    const char *url, const struct admin_arg *args,
			    size_t nargs, const char *content_type,
			    const char *body, size_t len,
			    struct admin_reply *reply);

void admin__reply_fini(struct admin_reply *reply);

/* Chart.js 3 as Debian's libjs-chart.js installs it; the dashboard's
 * charts load it from GET /chart.js. */
#define ADMIN_CHARTJS_PATH "/usr/share/javascript/chart.js/chart.min.js"
#define ADMIN_CHARTJS_MAX_BYTES (4 << 20)

/*
 * The dashboard (dashboard.c): answers GET and HEAD of /, /index.html,
 * /dashboard.js and /chart.js into @reply (release: admin__reply_fini())
 * and returns true; false for any other request, @reply untouched.  / is
 * the login page (login.html) unless the request is @authenticated.
 */
bool admin__dashboard_handle(const char *method, const char *url,
			     bool authenticated, struct admin_reply *reply);

struct admin_auth;
/*
 * POST /login and /logout (login.c): answers them into @reply (release:
 * admin__reply_fini()) and returns true; false for any other URL.  A
 * login with the token of @auth sets a session cookie (Secure when @tls):
 * 303 to / for a form, 204 for JSON; a wrong token is 401.
 */
bool admin__login_handle(struct admin_auth *auth, bool tls, const char *method,
			 const char *url, const char *content_type,
			 const char *cookie, const char *body, size_t len,
			 time_t now, struct admin_reply *reply);

/* {"error": "..."} with @status. */
void admin__reply_error(struct admin_reply *reply, unsigned status,
			const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* @doc (takes) as the body, with @status. */
void admin__reply_json(struct admin_reply *reply, unsigned status, json_t *doc);

/* @text's data (taken: @text is left empty) as the body; a buffer that
 * failed is a 500. */
void admin__reply_text(struct admin_reply *reply, unsigned status,
		       const char *content_type, struct admin_buf *text);

/* No body (204). */
void admin__reply_empty(struct admin_reply *reply, unsigned status);

/* A copy of the registry's state (owned: free()), or NULL. */
struct pool_state *admin__state_get(struct admin_api *api);

/* A registry error (-EINVAL, -ENOENT, ...) as 400/404/409/500. */
unsigned admin__status_from_err(int err);

/* Makes @limits (borrowed) effective: ctx->limits_apply or the traffic
 * buckets.  Returns 0 or -errno. */
int admin__limits_apply(struct admin_api *api,
			const struct pool_limits *limits);

/* ---- resources (resource.c; pools.c volumes.c traffic_api.c) ----------- */

struct admin_view;

/* A collection as seen in a view: its items, their names and JSON. */
struct admin_resource {
	const char *what; /* "pool": for messages */
	const char *key; /* "pools": the list's key and the URL's */
	size_t (*count)(const struct admin_view *view);
	const char *(*name)(const struct admin_view *view, size_t i);
	json_t *(*item)(const struct admin_view *view, size_t i);
};

/* Replies {"KEY": [every item]} of a fresh view. */
void admin__reply_list(struct admin_api *api, const struct admin_resource *r,
		       struct admin_reply *reply);

/* Replies item @name (borrowed) of a fresh view with @status, or 404. */
void admin__reply_one(struct admin_api *api, const struct admin_resource *r,
		      const char *name, unsigned status,
		      struct admin_reply *reply);

/*
 * After the registry took a change of item @name: applies @limits
 * (borrowed) and replies @status: 204 without a body, or the item as it
 * is now (201 with its Location).  A failure to apply is a 500 saying
 * that the change was made but is not in effect.
 */
void admin__reply_changed(struct admin_api *api, const struct admin_resource *r,
			  const char *name, const struct pool_limits *limits,
			  unsigned status, struct admin_reply *reply);

admin_handler_fn admin__pools_list, admin__pool_get, admin__pool_create,
	admin__pool_patch, admin__pool_delete;
admin_handler_fn admin__volumes_list, admin__volume_get, admin__volume_create,
	admin__volume_patch, admin__volume_delete;
admin_handler_fn admin__flows_list, admin__hosts_list, admin__caps_get,
	admin__caps_patch, admin__alarms_list, admin__metrics_get;
admin_handler_fn admin__changes_get, admin__changes_revert;
admin_handler_fn admin__operations_list, admin__operation_get;
admin_handler_fn admin__clone_create, admin__reserve_create, admin__stats_get;
admin_handler_fn admin__snapshots_list, admin__snapshot_create,
	admin__snapshot_delete, admin__snapshot_restore;
/* Replication (repl_api.c): GET /volumes/NAME/replication and POST
 * /volumes/NAME/replication/{transfer,break,resync}. */
admin_handler_fn admin__replication_get, admin__replication_action;
/* /replications (replications.c). */
admin_handler_fn admin__replications_list, admin__replication_create,
	admin__replication_delete;
struct repl_status;
/* One relation as GET shows it (repl_api.c): a new reference, NULL when
 * out of memory. */
json_t *admin__repl_json(const struct repl_status *st);
/* The destination's route POST /replications/NAME/peer (repl_api.c;
 * docs/security.md, "Replication"): whether @url is one, its NAME into
 * @name; a refusal before the body (@status: 401, 404, 405, 413, 415) as
 * a replication result; the message applied (the relation's key, not the
 * admin token, decides), its result in @reply. */
bool admin__repl_peer_url(const char *url, char *name, size_t len);
void admin__repl_peer_refuse(struct admin_reply *reply, unsigned status,
			     const char *name, const char *why);
void admin__repl_peer_handle(struct admin_api *api, const char *name,
			     const char *authorization, const char *ctype,
			     const char *body, size_t len,
			     struct admin_reply *reply);
/* The replication families of /metrics, appended to @out. */
void admin__replication_metrics(struct admin_api *api, struct admin_buf *out);

/* ---- changes over the config (changes.c) ------------------------------- */

/*
 * After a request that may have changed the live state (the store locked
 * by the caller): records the overlay of the live state in ctx.changes'
 * file (written only when it changed).  A failure turns a 2xx @reply into
 * a 500 saying that the change is live but not saved.
 */
void admin__changes_record(struct admin_api *api, struct admin_reply *reply);

#endif
