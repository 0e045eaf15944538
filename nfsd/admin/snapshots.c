/*
 * snapshots: native datastore snapshots through the admin API (snap.h):
 *
 *   GET    /volumes/NAME/snapshots               the list
 *   POST   /volumes/NAME/snapshots {"name"}      take one
 *   DELETE /volumes/NAME/snapshots/SNAP          delete one
 *   POST   /volumes/NAME/snapshots/SNAP/restore  {}: revert the datastore
 *                                                to it
 *
 * The last three are operations of the whole datastore (ops.c,
 * exclusive): refused with 409 while a clone or reservation of it runs,
 * else run on a thread of their own (one FICLONE or unlink per file of
 * the tree) and answered at once with 202 and the operation to follow
 * (GET /operations/ID).
 */
#include "nfsd/admin/admin_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/export/export.h"
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

/*
 * Starts @mode on snapshot @snap of @exp in the background (a snapshot
 * copies or reverts a whole tree: the admin thread must not wait for it)
 * and replies 202 with the operation; what it would refuse at once (a bad
 * name, no reflink, a snapshot that exists or does not) is refused here,
 * with its status, before anything starts.
 */
static void snapshots_op(struct admin_api *api, const struct export *exp,
			 const char *mode, const char *snap,
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

	if (!api->ops) {
		admin__reply_error(reply, 500, "operations are not available");
		return;
	}
	rc = snap_check(exp->dir, snap, strcmp(mode, "create") != 0, err,
			sizeof(err));
	if (rc) {
		admin__reply_error(reply, admin__op_status_from_err(rc), "%s",
				   err);
		return;
	}
	rc = admin__op_start(api->ops, &spec, true, &doc, err, sizeof(err));
	admin__op_reply(reply, rc, true, doc, err);
}

void admin__snapshots_list(struct admin_api *api,
			   const struct admin_request *req,
			   struct admin_reply *reply)
{
	const struct export *exp = admin__export_live(api, req->name, reply);
	struct snap_entry *list;
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
		snapshots_op(api, exp, "create", name, reply);
	}
}

void admin__snapshot_delete(struct admin_api *api,
			    const struct admin_request *req,
			    struct admin_reply *reply)
{
	const struct export *exp = admin__export_live(api, req->name, reply);

	if (exp) {
		snapshots_op(api, exp, "delete", req->sub_name, reply);
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
		snapshots_op(api, exp, "restore", req->sub_name, reply);
	}
}
