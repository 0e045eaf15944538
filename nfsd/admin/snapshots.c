// SPDX-License-Identifier: Apache-2.0
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
 * else run on a thread of their own and answered at once with 202 and
 * the operation to follow (GET /operations/ID).  The store makes them
 * (store_ops.snap, store/store_tree.h): FICLONE of the tree on a local
 * datastore, CephFS's own snapshots on a cephfs one.
 */
#include "nfsd/admin/admin_int.h"
#include "nfsd/admin/ops.h"
#include "nfsd/admin/paths.h"
#include "nfsd/admin/snap_policy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/export/export.h"
#include "nfsd/snap/snap.h"
#include "nfsd/store/store_tree.h"

static int snapshots_progress_cb(void *arg, uint64_t done, uint64_t total)
{
	return admin__op_progress(arg, done, total);
}

/* The snapshot ops of @exp's store, or NULL with the reason. */
static const struct store_snap_ops *snapshots_ops(const struct export *exp,
						  unsigned *status,
						  char *errbuf, size_t errlen)
{
	struct store *st = admin__store_live(exp, errbuf, errlen);

	if (!st) {
		*status = 503;
		return NULL;
	}
	if (!store_snap(st)) {
		snprintf(errbuf, errlen,
			 "volume %s: its backend has no native snapshots",
			 exp->name);
		*status = 422;
		return NULL;
	}
	return store_snap(st);
}

static int snapshots_run(struct admin_op *op, char *errbuf, size_t errlen)
{
	const struct store_snap_ops *so;
	struct admin_op_args a;
	struct snap_stats st;
	unsigned status;
	struct store *s;
	int err;

	admin__op_args(op, &a);
	so = snapshots_ops(a.export, &status, errbuf, errlen);
	if (!so) {
		return -EAGAIN;
	}
	s = a.export->store;
	if (!strcmp(a.mode, "create")) {
		err = so->create(s, a.target, &st, errbuf, errlen);
	} else if (!strcmp(a.mode, "restore")) {
		err = so->restore(s, a.target, &st, snapshots_progress_cb, op,
				  errbuf, errlen);
	} else {
		memset(&st, 0, sizeof(st));
		err = so->remove(s, a.target, errbuf, errlen);
	}
	if (!err) {
		(void)admin__op_progress(op, st.bytes, st.bytes);
	}
	return err;
}

/* -ENOSPC with 409 in *status when @exp holds SNAP_POLICY_MAX_SNAPSHOTS
 * snapshots already (ANF's 255 a volume, by hand and by policy). */
static int snapshots_room(const struct store_snap_ops *so,
			  const struct export *exp, unsigned *status,
			  char *errbuf, size_t errlen)
{
	struct snap_entry *list = NULL;
	size_t n = 0;
	int rc = so->list(export_store(exp), &list, &n);

	free(list);
	if (rc) {
		*status = 500;
		snprintf(errbuf, errlen, "volume %s: snapshots: %s", exp->name,
			 strerror(-rc));
		return rc;
	}
	if (n >= SNAP_POLICY_MAX_SNAPSHOTS) {
		*status = 409;
		snprintf(errbuf, errlen,
			 "volume %s: it holds %zu snapshots, the most a "
			 "datastore may (%d): delete one first",
			 exp->name, n, SNAP_POLICY_MAX_SNAPSHOTS);
		return -ENOSPC;
	}
	return 0;
}

/*
 * Checks and starts @mode on snapshot @snap of @exp: what would refuse it
 * at once (a bad name, no reflink, a snapshot that exists or does not, one
 * a volume made from it holds) is returned before anything starts, with
 * its HTTP status in *status; else *status is 0 and the operation's JSON
 * is in *doc (owned), and the result is the operation's (@background: on
 * a thread of its own, 0 once started; else run here).
 */
static int snapshots_start(struct admin_api *api, const struct export *exp,
			   const char *mode, const char *snap, bool background,
			   json_t **doc, unsigned *status, char *errbuf,
			   size_t errlen)
{
	struct admin_op_spec spec = { .kind = "snapshot",
				      .mode = mode,
				      .export = exp,
				      .source = SNAP_DIR_NAME,
				      .target = snap,
				      .exclusive = true,
				      .run = snapshots_run };
	const struct store_snap_ops *so;
	int rc;

	*doc = NULL;
	*status = 500;
	if (!api->ops) {
		snprintf(errbuf, errlen, "operations are not available");
		return -ENOTSUP;
	}
	so = snapshots_ops(exp, status, errbuf, errlen);
	if (!so) {
		return *status == 503 ? -EAGAIN : -EOPNOTSUPP;
	}
	rc = so->check(export_store(exp), snap, strcmp(mode, "create") != 0,
		       errbuf, errlen);
	*status = rc ? admin__op_status_from_err(rc) : 0;
	if (!rc && !strcmp(mode, "create")) {
		rc = snapshots_room(so, exp, status, errbuf, errlen);
	}
	if (!rc && !strcmp(mode, "delete")) {
		rc = admin__snapshot_pinned(api, exp->name, snap, errbuf,
					    errlen);
		/* Held: refused for as long as the volume holds it, not a
		 * busy datastore to try again. */
		*status = rc == -EBUSY ? 409 : rc ? 500 : 0;
		rc = rc == -EBUSY ? -EPERM : rc;
	}
	if (rc) {
		return rc;
	}
	return admin__op_start(api->ops, &spec, background, doc, errbuf,
			       errlen);
}

/* Starts @mode on snapshot @snap of @exp in the background (a snapshot
 * copies or reverts a whole tree: the admin thread must not wait for it)
 * and replies 202 with the operation, or the refusal. */
static void snapshots_op(struct admin_api *api, const struct export *exp,
			 const char *mode, const char *snap,
			 struct admin_reply *reply)
{
	char err[512] = "";
	json_t *doc;
	unsigned status;
	int rc;

	rc = snapshots_start(api, exp, mode, snap, true, &doc, &status, err,
			     sizeof(err));
	if (status) {
		admin__reply_error(reply, status, "%s", err);
		json_decref(doc);
		return;
	}
	admin__op_reply(reply, rc, true, doc, err);
}

int admin__snapshot_sync(struct admin_api *api, const struct export *exp,
			 const char *mode, const char *snap, char *errbuf,
			 size_t errlen)
{
	unsigned status;
	json_t *doc;
	int rc;

	rc = snapshots_start(api, exp, mode, snap, false, &doc, &status, errbuf,
			     errlen);
	json_decref(doc);
	return rc;
}

void admin__snapshots_list(struct admin_api *api,
			   const struct admin_request *req,
			   struct admin_reply *reply)
{
	const struct export *exp = admin__export_live(api, req->name, reply);
	const struct store_snap_ops *so;
	struct snap_entry *list;
	char err[256];
	unsigned status;
	json_t *arr;
	size_t n;
	int rc;

	if (!exp) {
		return;
	}
	so = snapshots_ops(exp, &status, err, sizeof(err));
	if (!so) {
		admin__reply_error(reply, status, "%s", err);
		return;
	}
	rc = so->list(export_store(exp), &list, &n);
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
