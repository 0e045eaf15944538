// SPDX-License-Identifier: Apache-2.0
/*
 * volclone: a new datastore from a snapshot, as ANF makes a volume from
 * one (docs/admin-api.md):
 *
 *   POST /volumes {"name": "NEW", "snapshot": {"volume": "SRC",
 *                                               "name": "SNAP"}}
 *   POST /volumes/NEW/split {}    the snapshot no longer held by NEW
 *
 * The new datastore's directory is DIR/NEW beside the source's DIR/SRC,
 * on the same file system; its files are FICLONEs of the snapshot's
 * (snap_clone_tree(): every block shared until one side writes).  It has
 * the source datastore's rules (clients, squash, secure, ...), is kept in
 * STATE_DIR/volume-clones and served at once: the server reads its config
 * again as a SIGHUP does (server_clones_merge() adds the record), and the
 * reply waits until the new export is live (201).
 *
 * The source snapshot is held: a DELETE of it is refused (409) while a
 * volume made from it has not been split, and a policy's retention skips
 * it.  On XFS and btrfs the new files never read through the snapshot
 * (the file system counts each shared extent's references), so a split
 * copies nothing: it only lets the snapshot go.  A cephfs datastore
 * is refused (422): the store's public interface has no snapshot clone.
 */
#include "nfsd/admin/admin_int.h"
#include "nfsd/admin/ops.h"
#include "nfsd/admin/paths.h"
#include "nfsd/admin/snap_policy.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nfsd/base/log.h"
#include "nfsd/export/export.h"
#include "nfsd/snap/volclone.h"
#include "nfsd/store/store_tree.h"

/* How long the reply waits for the reload to serve the new datastore. */
#define VOLCLONE_SERVE_WAIT_MS 10000

/* One change of the record at a time. */
static pthread_mutex_t volclone_lock = PTHREAD_MUTEX_INITIALIZER;

/* A datastore name: [A-Za-z0-9_-][A-Za-z0-9._-]*, at most 63. */
static bool volclone_name_ok(const char *name)
{
	size_t len = strlen(name);

	if (!len || len > 63 || name[0] == '.') {
		return false;
	}
	for (size_t i = 0; i < len; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		      c == '-')) {
			return false;
		}
	}
	return true;
}

int admin__snapshot_pinned(struct admin_api *api, const char *volume,
			   const char *snap, char *errbuf, size_t errlen)
{
	const struct snap_volclone *v;
	struct snap_volclones c;
	int err;

	if (!api->ctx.state_dir) {
		return 0;
	}
	pthread_mutex_lock(&volclone_lock);
	err = snap_volclones_load(api->ctx.state_dir, &c, errbuf, errlen);
	if (!err) {
		v = snap_volclones_pinning(&c, volume, snap);
		if (v) {
			snprintf(errbuf, errlen,
				 "snapshot '%s' of %s: volume %s was made from "
				 "it and holds it (POST /volumes/%s/split lets "
				 "it go)",
				 snap, volume, v->name, v->name);
			err = -EBUSY;
		}
		snap_volclones_free(&c);
	}
	pthread_mutex_unlock(&volclone_lock);
	return err;
}

/* DIR/NAME beside the source's DIR/SRC, on its file system: the path,
 * or -errno with the reason. */
static int volclone_dir(const struct export *src, const char *name, char *out,
			size_t len, char *errbuf, size_t errlen)
{
	char parent[PATH_MAX];
	const char *slash = strrchr(src->dir, '/');
	struct stat ps, ss;

	if (!slash || slash == src->dir ||
	    (size_t)(slash - src->dir) >= sizeof(parent)) {
		snprintf(errbuf, errlen,
			 "volume %s: its directory has no parent to put a new "
			 "datastore in",
			 src->name);
		return -EINVAL;
	}
	memcpy(parent, src->dir, (size_t)(slash - src->dir));
	parent[slash - src->dir] = '\0';
	if (stat(parent, &ps) || stat(src->dir, &ss)) {
		snprintf(errbuf, errlen, "volume %s: %s", src->name,
			 strerror(errno));
		return -EIO;
	}
	if (ps.st_dev != ss.st_dev) {
		snprintf(errbuf, errlen,
			 "volume %s: its directory is the root of its file "
			 "system, so the new datastore (made beside it, "
			 "sharing its blocks) has no place on it: serve a "
			 "directory of that file system instead",
			 src->name);
		return -EXDEV;
	}
	if ((size_t)snprintf(out, len, "%s/%s", parent, name) >= len) {
		snprintf(errbuf, errlen,
			 "the new directory's path is too long");
		return -ENAMETOOLONG;
	}
	if (!access(out, F_OK)) {
		snprintf(errbuf, errlen,
			 "volume %s: a file or directory of that name is "
			 "beside %s already",
			 name, src->name);
		return -EEXIST;
	}
	return 0;
}

/* Waits until @name is a live export (the reload served it). */
static bool volclone_served(struct admin_api *api, const char *name)
{
	struct timespec ts = { 0, 50 * 1000000L };

	for (int i = 0; i < VOLCLONE_SERVE_WAIT_MS / 50; i++) {
		if (admin__export_find(api, name)) {
			return true;
		}
		nanosleep(&ts, NULL);
	}
	return false;
}

/* The checks of a request, before anything is made: the source's
 * snapshot exists (its store says, as for a restore). */
static const struct export *
volclone_check(struct admin_api *api, const char *name, const char *srcname,
	       const char *snap, unsigned *status, char *errbuf, size_t errlen)
{
	const struct export *src;
	struct store *st;
	int rc;

	*status = 400;
	if (!volclone_name_ok(name)) {
		snprintf(errbuf, errlen,
			 "name '%.64s': letters, digits, '.', '_' and '-', at "
			 "most 63, not starting with '.'",
			 name);
		return NULL;
	}
	*status = 409;
	if (admin__export_find(api, name)) {
		snprintf(errbuf, errlen, "volume %s: exists", name);
		return NULL;
	}
	*status = 404;
	src = admin__export_find(api, srcname);
	if (!src) {
		snprintf(errbuf, errlen,
			 "volume '%.64s': no datastore of that "
			 "name",
			 srcname);
		return NULL;
	}
	st = admin__store_live(src, errbuf, errlen);
	if (!st) {
		*status = 503;
		return NULL;
	}
	*status = 422;
	if (src->remote_store || !src->dir[0]) {
		snprintf(errbuf, errlen,
			 "volume %s: a volume from a snapshot of a cephfs "
			 "datastore is not made: the store's interface has no "
			 "snapshot clone (CephFS's own needs the mgr's "
			 "subvolumes)",
			 src->name);
		return NULL;
	}
	if (!store_snap(st)) {
		snprintf(errbuf, errlen, "volume %s: no native snapshots",
			 src->name);
		return NULL;
	}
	rc = store_snap(st)->check(st, snap, true, errbuf, errlen);
	if (rc) {
		*status = admin__op_status_from_err(rc);
		return NULL;
	}
	return src;
}

static int volclone_make(struct admin_api *api, const struct export *src,
			 const char *name, const char *snap,
			 struct snap_stats *stats, unsigned *status,
			 char *errbuf, size_t errlen)
{
	struct snap_volclone v = { .pinned = true };
	struct snap_volclones c;
	int rc;

	snprintf(v.name, sizeof(v.name), "%s", name);
	snprintf(v.source, sizeof(v.source), "%s", src->name);
	snprintf(v.snap, sizeof(v.snap), "%s", snap);
	rc = volclone_dir(src, name, v.dir, sizeof(v.dir), errbuf, errlen);
	if (rc) {
		*status = rc == -EEXIST ? 409 : 422;
		return rc;
	}
	pthread_mutex_lock(&volclone_lock);
	rc = snap_volclones_load(api->ctx.state_dir, &c, errbuf, errlen);
	if (!rc && snap_volclones_find(&c, name)) {
		snprintf(errbuf, errlen,
			 "volume %s: exists (a volume from a "
			 "snapshot not served now)",
			 name);
		rc = -EEXIST;
	}
	if (!rc) {
		rc = snap_clone_tree(src->dir, snap, v.dir, stats, errbuf,
				     errlen);
	}
	if (!rc) {
		rc = snap_volclones_add(&c, &v);
		if (!rc) {
			rc = snap_volclones_save(api->ctx.state_dir, &c, errbuf,
						 errlen);
		} else {
			snprintf(errbuf, errlen, "volume %s: %s", name,
				 strerror(-rc));
		}
		if (rc) {
			/* Not recorded: it would never be served. */
			(void)snap_clone_remove(v.dir);
		}
	}
	snap_volclones_free(&c);
	pthread_mutex_unlock(&volclone_lock);
	*status = rc == -EEXIST			      ? 409
		  : rc == -EOPNOTSUPP || rc == -EXDEV ? 422
		  : rc == -ENOSPC		      ? 507
						      : 500;
	return rc;
}

void admin__volume_from_snapshot(struct admin_api *api,
				 const struct admin_request *req,
				 struct admin_reply *reply)
{
	const char *name, *srcname, *snap;
	const struct export *src;
	struct snap_stats stats;
	char err[600];
	json_error_t je;
	unsigned status;
	bool served;

	if (json_unpack_ex((json_t *)req->body, &je, JSON_STRICT,
			   "{s:s, s:{s:s, s:s}}", "name", &name, "snapshot",
			   "volume", &srcname, "name", &snap)) {
		admin__reply_error(
			reply, 400,
			"body: {\"name\", \"snapshot\": {\"volume\", "
			"\"name\"}} is needed, strings, nothing "
			"else: %s",
			je.text);
		return;
	}
	if (!api->ctx.state_dir) {
		admin__reply_error(reply, 500, "no state directory");
		return;
	}
	src = volclone_check(api, name, srcname, snap, &status, err,
			     sizeof(err));
	if (!src || volclone_make(api, src, name, snap, &stats, &status, err,
				  sizeof(err))) {
		log_warn("admin: volume %s from snapshot %s of %s refused: %s",
			 name, snap, srcname, err);
		admin__reply_error(reply, status, "%s", err);
		return;
	}
	log_info("admin: volume %s made from snapshot %s of %s (%llu files, "
		 "%llu bytes shared); serving it (a reload of the config)",
		 name, snap, srcname, (unsigned long long)stats.files,
		 (unsigned long long)stats.bytes);
	(void)kill(getpid(), SIGHUP);
	/* The reload takes the changes' lock, which a POST /volumes holds
	 * (api.c): let it go while the reload runs. */
	if (api->ctx.changes) {
		overlay_store_unlock(api->ctx.changes);
	}
	served = volclone_served(api, name);
	if (api->ctx.changes) {
		overlay_store_lock(api->ctx.changes);
	}
	if (!served) {
		admin__reply_error(reply, 500,
				   "volume %s: made (kept in the state "
				   "directory) but not served: the config's "
				   "reload failed (see the log); the next "
				   "SIGHUP serves it",
				   name);
		return;
	}
	admin__reply_json(reply, 201,
			  json_pack("{s:s, s:{s:s, s:s}, s:b, s:I, s:I}",
				    "name", name, "snapshot", "volume", srcname,
				    "name", snap, "holds", 1, "files",
				    (json_int_t)stats.files, "bytes",
				    (json_int_t)stats.bytes));
}

void admin__volume_split(struct admin_api *api, const struct admin_request *req,
			 struct admin_reply *reply)
{
	struct snap_volclone *v;
	struct snap_volclones c;
	char err[400];
	int rc;

	if (json_object_size(req->body)) {
		admin__reply_error(reply, 400, "body: split takes {}");
		return;
	}
	pthread_mutex_lock(&volclone_lock);
	rc = snap_volclones_load(api->ctx.state_dir, &c, err, sizeof(err));
	v = rc ? NULL : snap_volclones_find(&c, req->name);
	if (!rc && !v) {
		snprintf(err, sizeof(err),
			 "volume '%.64s': not a volume made from a snapshot",
			 req->name);
		rc = -ENOENT;
	}
	if (!rc && v->pinned) {
		v->pinned = false;
		rc = snap_volclones_save(api->ctx.state_dir, &c, err,
					 sizeof(err));
		if (!rc) {
			log_info("admin: volume %s split from snapshot %s of "
				 "%s: the snapshot may go",
				 v->name, v->snap, v->source);
		}
	}
	snap_volclones_free(&c);
	pthread_mutex_unlock(&volclone_lock);
	if (rc) {
		admin__reply_error(reply, rc == -ENOENT ? 404 : 500, "%s", err);
		return;
	}
	admin__reply_json(
		reply, 200,
		json_pack("{s:s, s:b}", "name", req->name, "holds", 0));
}
