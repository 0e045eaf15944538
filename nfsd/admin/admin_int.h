/* SPDX-License-Identifier: Apache-2.0 */
/*
 * admin_int: the admin module's own declarations.  The layers, bottom up:
 * buf.c (text), view.c (one
 * consistent picture of pools, volumes, traffic and alarms for a GET),
 * json_out.c / json_in.c (the JSON shapes), metrics.c (Prometheus text),
 * resource.c pools.c volumes.c traffic_api.c changes.c (the resources),
 * patch.c
 * (multi-field changes), api.c (routing, replies), config.c ([admin]) and
 * http.c (libmicrohttpd).  Nothing
 * below http.c knows about HTTP connections, so the tests drive api.c
 * directly.
 */
#ifndef DSNFS_ADMIN_INT_H
#define DSNFS_ADMIN_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "nfsd/admin/admin.h"
#include "nfsd/alarm/alarm.h"

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

/* The alarms of ctx->exports, with ctx's pools, usage callback and [admin]
 * thresholds (alarm_set_new() on them).  Returns 0 and *out (owned:
 * alarm_set_free()), or -ENOMEM. */
int admin__alarms_new(const struct admin_ctx *ctx, struct alarm_set **out);

/* ---- one picture for a GET (view.c) ------------------------------------ */

struct admin_api;

/* A datastore or pool volume: exported, pooled, or both. */
struct admin_volume_view {
	char name[POOL_NAME_MAX];
	const struct export *export; /* borrowed from ctx; NULL: none */
	const struct pool_volume *pooled; /* into view->state; NULL: none */
	uint64_t limit_bytes_per_s; /* QoS limit as configured; 0: none */
	bool used_known;
	uint64_t used_bytes;
	const struct alarm_view *alarm; /* NULL: not watched */
	const struct traffic_volume_stats *traffic; /* NULL: no traffic */
};

struct admin_view {
	struct pool_state *state; /* owned */
	struct pool_limits *limits; /* owned; of state */
	struct traffic_stats traffic; /* owned */
	struct traffic_caps caps;
	struct admin_config config;
	struct alarm_view *alarms; /* owned */
	size_t nalarms;
	struct admin_volume_view *volumes; /* owned; exports, then others */
	size_t nvolumes;
	uint32_t *loop_conns; /* owned; TCP connections per event loop */
	unsigned nloops;
};

/* Gathers the registry, traffic and alarms at once.  Returns 0 and fills
 * @out (owned: admin__view_fini()), or -ENOMEM. */
int admin__view_get(struct admin_api *api, struct admin_view *out);
void admin__view_fini(struct admin_view *view);

/* The sums over @pool's volumes: quotas, limits, used bytes. */
struct admin_pool_sums {
	uint64_t quota_bytes;
	uint64_t limit_bytes_per_s;
	uint64_t used_bytes;
	size_t volumes;
};
void admin__view_pool_sums(const struct admin_view *view, const char *pool,
			   struct admin_pool_sums *out);

/* The traffic stats of pool @name, or NULL.  Borrowed from @view. */
const struct traffic_pool_stats *
admin__view_traffic_pool(const struct admin_view *view, const char *name);

/* ---- JSON out (json_out.c) --------------------------------------------- */

/* Each returns a new reference (owned: json_decref()), or NULL on
 * allocation failure.  Arguments are borrowed. */
json_t *admin__json_counters(const struct traffic_counters *c);
json_t *admin__json_pool(const struct admin_view *view, const struct pool *p);
json_t *admin__json_volume(const struct admin_view *view,
			   const struct admin_volume_view *vol);
json_t *admin__json_flow(const struct traffic_flow_stats *f);
json_t *admin__json_host(const struct traffic_host_stats *h);
json_t *admin__json_caps(const struct traffic_caps *caps);
json_t *admin__json_alarm(const struct admin_view *view,
			  const struct alarm_view *a);

/* ---- JSON in (json_in.c) ----------------------------------------------- */

/* A PATCH /pools/NAME body: which fields it sets. */
struct admin_pool_patch {
	bool has_size, has_level, has_throughput, has_qos;
	uint32_t size_tib;
	enum pool_level level;
	uint32_t purchased_mibps;
	enum pool_qos qos;
};

/* A PATCH /volumes/NAME body. */
struct admin_volume_patch {
	bool has_pool, has_quota, has_limit;
	char pool[POOL_NAME_MAX];
	uint64_t quota_bytes;
	uint32_t limit_mibps;
};

/*
 * Parses a request body: one JSON object, no duplicate keys, no NUL in
 * strings, nothing after it.  Returns 0 and *out (owned: json_decref()),
 * or -EINVAL with "body: line L column C: why" in errbuf.
 */
int admin__json_parse(const char *body, size_t len, json_t **out, char *errbuf,
		      size_t errlen);

/*
 * Each reads one body (borrowed) into its struct: unknown fields, missing
 * required ones, wrong types and values out of the type's range are
 * -EINVAL with the field named in errbuf.  The rules of pools (sizes,
 * levels, sums) are left to the registry.
 *
 *   pool spec     {"name", "level", "size_tib", ["qos"], ["purchased_mibps"]}
 *                 (qos defaults to auto, and to manual for Flexible)
 *   pool patch    any of {"size_tib", "level", "purchased_mibps", "qos"}
 *   volume spec   {"name", "pool", "quota_bytes", ["limit_mibps"]}
 *   volume patch  any of {"pool", "quota_bytes", "limit_mibps"}
 *   caps patch    any of {"scale", "flow_mibps", "flow_iops", "host_mibps",
 *                 "host_iops", "volume_iops", "host_contention",
 *                 "volume_contention", "burst_ms"}, applied to *caps
 *                 (in and out; on an error it may be partly changed:
 *                 pass a copy)
 */
int admin__json_pool_spec(const json_t *in, struct pool *out, char *errbuf,
			  size_t errlen);
int admin__json_pool_patch(const json_t *in, struct admin_pool_patch *out,
			   char *errbuf, size_t errlen);
int admin__json_volume_spec(const json_t *in, struct pool_volume *out,
			    char *errbuf, size_t errlen);
int admin__json_volume_patch(const json_t *in, struct admin_volume_patch *out,
			     char *errbuf, size_t errlen);
int admin__json_caps_patch(const json_t *in, struct traffic_caps *caps,
			   char *errbuf, size_t errlen);

/* ---- Prometheus text (metrics.c) --------------------------------------- */

#define ADMIN_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* Appends the exposition of @view (borrowed) to @out.  Returns 0 or the
 * buffer's error. */
int admin__metrics_write(const struct admin_view *view, struct admin_buf *out);

/* Appends @value as a label value: backslash, double quote and newline
 * escaped. */
void admin__metrics_label_escape(struct admin_buf *out, const char *value);

/* ---- requests and replies (api.c) -------------------------------------- */

enum admin_method {
	ADMIN_METHOD_GET = 0,
	ADMIN_METHOD_POST,
	ADMIN_METHOD_PATCH,
	ADMIN_METHOD_DELETE,
	ADMIN_METHOD_COUNT,
};

struct admin_ops;

struct admin_api {
	struct admin_ctx ctx;
	struct alarm_set *alarms; /* borrowed; may be NULL */
	struct admin_ops *ops; /* borrowed; may be NULL: no operations */
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

/* ---- files of a datastore (paths.c) ----------------------------------- */

/* The live export @name (borrowed; slots never move), or NULL after a
 * 404 in @reply. */
const struct export *admin__export_live(struct admin_api *api, const char *name,
					struct admin_reply *reply);

/* @rel (borrowed) is a relative path of names, none empty, "." or "..",
 * shorter than ADMIN_OP_PATH_MAX - 16.  Returns 0 or -EINVAL with the
 * reason ("WHAT 'REL': outside the export: ..."). */
int admin__path_check(const char *what, const char *rel, char *errbuf,
		      size_t errlen);

struct store_tree;
/* The storage-side tree of @exp's store (store/store_tree.h): 0 and
 * *out (owned: (*out)->close()), or -EAGAIN (the store is down),
 * -EOPNOTSUPP (no such operations) or -errno, with the reason. */
int admin__tree_open(const struct export *exp, struct store_tree **out,
		     char *errbuf, size_t errlen);
/* The file @abs of @t is a regular file, checked without blocking (a
 * FIFO's open waits for a writer) and without following a symlink.
 * Returns 0, the open's -errno (-ENOENT, -ELOOP, -EXDEV), or -EINVAL
 * with the reason: a request then never opens a FIFO or a device. */
int admin__file_regular(const struct store_tree *t, const char *abs,
			char *errbuf, size_t errlen);

/* The HTTP status of admin__tree_open()'s error: 503, 422, 500. */
unsigned admin__tree_status(int err);
/* The tree's path of @rel (returns owned, free()), or NULL. */
char *admin__path_abs(const struct store_tree *t, const char *rel);

/* @abs relative to the datastore (borrowed from @abs; @abs itself when
 * it is not below it). */
const char *admin__path_rel(const struct store_tree *t, const char *abs);

/* Replies why the file @rel a request names is refused: outside the
 * export (-EXDEV, -ELOOP: 400), missing (404), or not a VMDK, with @why
 * (409). */
void admin__file_refused(struct admin_reply *reply, const char *what,
			 const char *rel, int err, const char *why);

/* Drops the datastore's directory from the paths in @msg (in place): a
 * client learns names inside its datastore, not where it lives. */
void admin__msg_relative(const struct store_tree *t, char *msg);

/* ---- long operations (ops.c) ------------------------------------------- */

/* Datastore-relative paths of an operation, bytes with the NUL. */
#define ADMIN_OP_PATH_MAX 1024
/* Operations running at once (each holds a thread); more are 409. */
#define ADMIN_OPS_RUNNING_MAX 4
/* Finished operations kept for GET /operations; the oldest go first. */
#define ADMIN_OPS_KEPT 64

enum admin_op_state {
	ADMIN_OP_RUNNING = 0,
	ADMIN_OP_DONE,
	ADMIN_OP_FAILED,
};

struct admin_op;

/* Runs @op: returns 0 or -errno with the reason in @errbuf.  Reports
 * progress with admin__op_progress(), whose error it must return. */
typedef int admin_op_run_fn(struct admin_op *op, char *errbuf, size_t errlen);

/* What an operation is, fixed when it starts (copied). */
struct admin_op_spec {
	const char *kind; /* "clone", "reserve" (static) */
	const char *mode; /* "full", "eagerzeroedthick", ... (static) */
	const struct export *export; /* borrowed; slots never move */
	const char *source; /* relative to the datastore's root */
	const char *target; /* "" for an operation on one file */
	uint64_t total_bytes; /* 0 until the run says */
	uint64_t quota_bytes; /* reserved in the datastore's quota */
	/* The whole datastore (a snapshot): refused while any operation of
	 * it runs, and refuses them while it runs. */
	bool exclusive;
	admin_op_run_fn *run;
};

/* What a run reads of its operation: borrowed from @op, fixed. */
struct admin_op_args {
	const struct export *export;
	const char *source;
	const char *target;
	const char *mode;
};

void admin__op_args(const struct admin_op *op, struct admin_op_args *out);

/* Returns 0, or -ECANCELED once the server stops.  Thread-safe. */
int admin__op_progress(struct admin_op *op, uint64_t done_bytes,
		       uint64_t total_bytes);

/* The status of an operation's error: 400 (a path outside the export),
 * 404, 409 (exists, busy, read-only), 422 (the file system cannot: a
 * native clone without reflink), 507 (no space, a quota), else 500. */
unsigned admin__op_status_from_err(int err);

/* Returns 0 and *out (owned: admin__ops_free()) or -ENOMEM. */
int admin__ops_new(struct admin_ops **out);

/* Waits until no operation runs, without cancelling any: the tests,
 * which see the result through GET /operations then. */
void admin__ops_drain(struct admin_ops *ops);

/* Cancels the running operations, waits for them, frees @ops (takes;
 * NULL is fine). */
void admin__ops_free(struct admin_ops *ops);

/*
 * Starts an operation of @spec (borrowed): -EBUSY with the reason when a
 * running operation of the same datastore has the source or the target
 * as its source or target, or ADMIN_OPS_RUNNING_MAX run.  @background:
 * on a thread of its own, and 0 returned at once; else run here, and its
 * result returned.  Either way the operation is listed, and its JSON
 * (owned) is returned in *doc (may be NULL when out of memory).  The
 * quota reservation of the spec is given back when it ends.
 */
int admin__op_start(struct admin_ops *ops, const struct admin_op_spec *spec,
		    bool background, json_t **doc, char *errbuf, size_t errlen);

/*
 * The reply to a POST that started an operation: its JSON @doc (takes)
 * with 202 and Location /operations/ID when it runs in the @background,
 * 201 when it ran here; or, when @err, {"error": @errtext} with the
 * operation as it ended, and the status of @err.
 */
void admin__op_reply(struct admin_reply *reply, int err, bool background,
		     json_t *doc, const char *errtext);

/* ---- changes over the config (changes.c) ------------------------------- */

/*
 * After a request that may have changed the live state (the store locked
 * by the caller): records the overlay of the live state in ctx.changes'
 * file (written only when it changed).  A failure turns a 2xx @reply into
 * a 500 saying that the change is live but not saved.
 */
void admin__changes_record(struct admin_api *api, struct admin_reply *reply);

/* ---- multi-field changes (patch.c) ------------------------------------- */

/* One step of a change, applied to @reg (the live registry or a scratch
 * one).  Returns 0 or the registry's -errno with the reason in errbuf. */
typedef int admin_step_fn(struct pool_registry *reg, int step, void *arg,
			  struct pool_limits *limits, char *errbuf,
			  size_t errlen);

#define ADMIN_PATCH_MAX_STEPS 4

/*
 * Applies @n steps (distinct small integers, at most
 * ADMIN_PATCH_MAX_STEPS) as one change.  The registry checks each step on
 * its own, and some changes are valid only in one order (a pool becomes
 * Flexible before it buys throughput; it buys it before its volumes' limits
 * grow), so the steps are first tried, in each order, on a scratch copy of
 * the registry; the first order in which every step passes is applied to
 * the live one.  Returns 0 with @limits filled, or the first order's error
 * (nothing changed).  A live step that fails even so (the ledger) returns
 * its error with "(applied before: ...)" naming the steps that stayed.
 */
int admin__patch_apply(struct admin_api *api, const int *steps, size_t n,
		       admin_step_fn *fn, void *arg,
		       const char *const *step_names,
		       struct pool_limits *limits, char *errbuf, size_t errlen);

#endif
