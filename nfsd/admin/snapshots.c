/*
 * snapshots: native datastore snapshots through the admin API (snap.h):
 *
 *   GET    /volumes/NAME/snapshots               the list
 *   POST   /volumes/NAME/snapshots {"name"}      take one (201)
 *   DELETE /volumes/NAME/snapshots/SNAP          (204)
 *   POST   /volumes/NAME/snapshots/SNAP/restore  {} (200): revert the
 *                                                datastore to it
 *
 * Each is an operation of the whole datastore (ops.c, exclusive): refused
 * with 409 while a clone or reservation of it runs, and run here, on the
 * HTTP thread (one FICLONE or unlink per file).
 */
#include "nfsd/admin/admin_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/export.h"
#include "nfsd/snap/snap.h"

static int snapshots_run(struct admin_op *op, char *errbuf, size_t errlen)
{
	struct admin_op_args a;
	struct snap_stats st;
	int err;

	admin__op_args(op, &a);
	if (!strcmp(a.mode, "create")) {
		err = snap_create(a.export->dir, a.target, &st, errbuf, errlen);
	} else if (!strcmp(a.mode, "restore")) {
		err = snap_restore(a.export->dir, a.target, &st, errbuf,
				   errlen);
	} else {
		memset(&st, 0, sizeof(st));
		err = snap_delete(a.export->dir, a.target, errbuf, errlen);
	}
	if (!err) {
		(void)admin__op_progress(op, st.bytes, st.bytes);
	}
	return err;
}

/* Runs @mode on snapshot @snap of @exp and replies: the operation's JSON
 * with @status, or its error's status. */
static void snapshots_op(struct admin_api *api, const struct export *exp,
			 const char *mode, const char *snap, unsigned status,
			 struct admin_reply *reply)
{
	struct admin_op_spec spec = { .kind = "snapshot",
				      .mode = mode,
				      .export = exp,
				      .source = SNAP_DIR_NAME,
				      .target = snap,
				      .exclusive = true,
				      .run = snapshots_run };
	char err[512] = "";
	json_t *doc = NULL;
	int rc;

	if (snap_name_check(snap, err, sizeof(err))) {
		admin__reply_error(reply, 400, "%s", err);
		return;
	}
	if (!api->ops) {
		admin__reply_error(reply, 500, "operations are not available");
		return;
	}
	rc = admin__op_start(api->ops, &spec, false, &doc, err, sizeof(err));
	if (rc) {
		json_decref(doc);
		admin__reply_error(reply, admin__op_status_from_err(rc), "%s",
				   err);
		return;
	}
	if (status == 204) {
		json_decref(doc);
		admin__reply_empty(reply, 204);
		return;
	}
	admin__reply_json(reply, status, doc);
	if (status == 201) {
		snprintf(reply->location, sizeof(reply->location),
			 "/volumes/%.32s/snapshots/%.40s", exp->name, snap);
	}
}

void admin__snapshots_list(struct admin_api *api,
			   const struct admin_request *req,
			   struct admin_reply *reply)
{
	const struct export *exp = admin__export_live(api, req->name, reply);
	struct snap_info *list;
	json_t *arr;
	size_t n;
	int rc;

	if (!exp) {
		return;
	}
	rc = snap_list(exp->dir, &list, &n);
	if (rc) {
		admin__reply_error(reply, 500, "volume %s: snapshots: %s",
				   exp->name, strerror(-rc));
		return;
	}
	arr = json_array();
	for (size_t i = 0; arr && i < n; i++) {
		json_array_append_new(arr,
				      json_pack("{s:s, s:I}", "name",
						list[i].name, "created_s",
						(json_int_t)list[i].created_s));
	}
	free(list);
	admin__reply_json(reply, 200,
			  arr ? json_pack("{s:s, s:o}", "volume", exp->name,
					  "snapshots", arr)
			      : NULL);
}

void admin__snapshot_create(struct admin_api *api,
			    const struct admin_request *req,
			    struct admin_reply *reply)
{
	const struct export *exp;
	const char *name;
	json_error_t je;

	if (json_unpack_ex((json_t *)req->body, &je, JSON_STRICT, "{s:s}",
			   "name", &name)) {
		admin__reply_error(reply, 400,
				   "body: {\"name\"} is needed, a string, "
				   "nothing else: %s",
				   je.text);
		return;
	}
	exp = admin__export_live(api, req->name, reply);
	if (exp) {
		snapshots_op(api, exp, "create", name, 201, reply);
	}
}

void admin__snapshot_delete(struct admin_api *api,
			    const struct admin_request *req,
			    struct admin_reply *reply)
{
	const struct export *exp = admin__export_live(api, req->name, reply);

	if (exp) {
		snapshots_op(api, exp, "delete", req->sub_name, 204, reply);
	}
}

void admin__snapshot_restore(struct admin_api *api,
			     const struct admin_request *req,
			     struct admin_reply *reply)
{
	const struct export *exp;

	if (json_object_size(req->body)) {
		admin__reply_error(reply, 400, "body: restore takes {}");
		return;
	}
	exp = admin__export_live(api, req->name, reply);
	if (exp) {
		snapshots_op(api, exp, "restore", req->sub_name, 200, reply);
	}
}
