// SPDX-License-Identifier: Apache-2.0
/*
 * vaai: the VAAI-NAS primitives that change a datastore, storage-side,
 * through the admin API: Full File Clone and Fast File Clone (POST
 * /volumes/NAME/clones: full, linked, native) and Reserve Space (POST
 * /volumes/NAME/reserve); Extended Statistics are stats.c.  Paths are
 * relative to the datastore's root; a name with "..", "." or an empty
 * part is refused before any file is touched (paths.c), and every file
 * is then opened through the store's tree (store/store_tree.h: openat2
 * RESOLVE_BENEATH on a local datastore, a walk of the store's lookups on
 * a cephfs one; no symlink followed), so neither the request nor a
 * descriptor's extent or parent names can reach outside.  What is
 * checked before an operation starts is answered with its status at
 * once; a full clone and an eager reservation then run on a thread
 * (ops.c), the others on this one.  The datastore's quota is reserved
 * for the bytes the operation can allocate, before it starts.
 */
#include "nfsd/admin/admin_int.h"
#include "nfsd/admin/ops.h"
#include "nfsd/admin/paths.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nfsd/export/export.h"
#include "nfsd/quota/quota.h"
#include "nfsd/store/store_tree.h"
#include "vmdk/vmdk.h"

#define VAAI_ERR_MAX 512

/* Counts a file the operation made in the datastore's quota (its
 * allocation as it is now). */
struct vaai_measure {
	uint64_t used_bytes;
};

static int vaai_measure_cb(void *arg, uint64_t *used_bytes)
{
	*used_bytes = ((struct vaai_measure *)arg)->used_bytes;
	return 0;
}

static void vaai_quota_count(const struct export *exp,
			     const struct store_tree *b, const char *abs)
{
	struct vaai_measure m;
	struct stat st;
	int fd = -1;

	/* Only a regular file is counted (or opened: a FIFO or a device
	 * named by a disk is not). */
	if (!exp->quota || b->io.ops->stat(b->io.ctx, abs, &st) ||
	    !S_ISREG(st.st_mode) ||
	    b->io.ops->open(b->io.ctx, abs, O_RDONLY | O_NONBLOCK, 0, &fd)) {
		return;
	}
	if (!b->io.ops->fstat(b->io.ctx, fd, &st) && S_ISREG(st.st_mode)) {
		m.used_bytes = (uint64_t)st.st_blocks * 512;
		(void)quota_file_update(exp->quota, (uint64_t)st.st_ino,
					vaai_measure_cb, &m);
	}
	b->io.ops->close(b->io.ctx, fd);
}

/* Counts the descriptor and every extent file of the disk at @abs. */
static void vaai_quota_count_disk(const struct export *exp,
				  const struct store_tree *b, const char *abs)
{
	struct vmdk_info in;
	struct vmdk *v;
	int rc;

	if (!exp->quota || vmdk_open(&b->io, abs, 0, &v, NULL, 0)) {
		return;
	}
	vaai_quota_count(exp, b, abs);
	rc = vmdk_info_get(v, &in);
	if (!rc || rc == -EOPNOTSUPP) {
		for (unsigned i = 0; i < in.n_extents; i++) {
			struct vmdk_extent_info e;

			if (!vmdk_extent_info_get(v, i, &e) && e.file &&
			    strcmp(e.file, abs)) {
				vaai_quota_count(exp, b, e.file);
			}
		}
	}
	vmdk_close(v);
}

/* What a disk holds: its logical size and the bytes its files allocate
 * through the whole chain. */
struct vaai_disk {
	uint64_t size_bytes;
	uint64_t allocated_bytes;
	/* Why space cannot be reserved in it ("" for a flat disk). */
	char not_flat[160];
};

static int vaai_disk_measure(const struct store_tree *b, const char *abs,
			     struct vaai_disk *out, char *errbuf, size_t errlen)
{
	const struct vmdk *l;
	struct vmdk *v;
	int err;

	memset(out, 0, sizeof(*out));
	err = vmdk_open(&b->io, abs, 0, &v, errbuf, errlen);
	if (err) {
		return err;
	}
	out->size_bytes = vmdk_size_bytes(v);
	if (vmdk_parent(v)) {
		snprintf(out->not_flat, sizeof(out->not_flat),
			 "a delta: space is reserved for flat disks; "
			 "consolidate it first");
	}
	for (unsigned i = 0; !out->not_flat[0]; i++) {
		struct vmdk_extent_info e;

		if (vmdk_extent_info_get(v, i, &e)) {
			break;
		}
		if (strcmp(e.type, "FLAT") && strcmp(e.type, "VMFS")) {
			snprintf(out->not_flat, sizeof(out->not_flat),
				 "extent %u is %s: space is reserved for flat "
				 "disks",
				 i, e.type);
		}
	}
	for (l = v; l; l = vmdk_parent(l)) {
		struct vmdk_info in;

		/* Without FIEMAP the byte counts are still filled. */
		(void)vmdk_info_get(l, &in);
		out->allocated_bytes += in.alloc.allocated_bytes;
	}
	vmdk_close(v);
	return 0;
}

/* "-flat.vmdk" beside a target "x.vmdk": a flat disk's data file. */
static int vaai_target_free(const struct store_tree *b, const char *abs,
			    const char *rel, char *errbuf, size_t errlen)
{
	struct stat st;
	size_t len = strlen(abs);
	char *flat;
	int err;

	if (len <= 5 || strcmp(abs + len - 5, ".vmdk")) {
		snprintf(errbuf, errlen, "target '%.300s': must end in .vmdk",
			 rel);
		return -EINVAL;
	}
	err = b->io.ops->stat(b->io.ctx, abs, &st);
	if (err == -EXDEV || err == -ELOOP) {
		snprintf(errbuf, errlen,
			 "target '%.300s': outside the export (a symlink or "
			 "a name leads out of it)",
			 rel);
		return -EXDEV;
	}
	if (!err) {
		snprintf(errbuf, errlen, "target '%.300s': exists", rel);
		return -EEXIST;
	}
	if (asprintf(&flat, "%.*s-flat.vmdk", (int)(len - 5), abs) < 0) {
		return -ENOMEM;
	}
	err = b->io.ops->stat(b->io.ctx, flat, &st);
	free(flat);
	if (!err) {
		snprintf(errbuf, errlen,
			 "target '%.300s': its data file %.*s-flat.vmdk "
			 "exists",
			 rel, (int)strlen(rel) - 5, rel);
		return -EEXIST;
	}
	return 0;
}

/* Reserves @bytes of the datastore's quota: 0, or -ENOSPC with why. */
static int vaai_quota_reserve(const struct export *exp, uint64_t bytes,
			      char *errbuf, size_t errlen)
{
	struct quota_usage u;

	if (!exp->quota || !bytes || !quota_reserve(exp->quota, bytes)) {
		return 0;
	}
	quota_get(exp->quota, &u);
	snprintf(errbuf, errlen,
		 "volume %s: the operation may allocate %llu bytes; its quota "
		 "of %llu bytes leaves %llu",
		 exp->name, (unsigned long long)bytes,
		 (unsigned long long)u.limit_bytes,
		 (unsigned long long)(u.limit_bytes > u.used_bytes +
							      u.reserved_bytes
					      ? u.limit_bytes - u.used_bytes -
							u.reserved_bytes
					      : 0));
	return -ENOSPC;
}

/* ---- the runs (ops.c calls them, on a thread or here) ----------------- */

static int vaai_progress_cb(void *arg, uint64_t done, uint64_t total)
{
	return admin__op_progress(arg, done, total);
}

static int vaai_clone_run(struct admin_op *op, char *errbuf, size_t errlen)
{
	struct admin_op_args a;
	struct store_tree *b;
	char *src = NULL, *dst = NULL;
	int err;

	admin__op_args(op, &a);
	err = admin__tree_open(a.export, &b, errbuf, errlen);
	if (err) {
		return err;
	}
	src = admin__path_abs(b, a.source);
	dst = admin__path_abs(b, a.target);
	if (!src || !dst) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (!strcmp(a.mode, "full")) {
		struct vmdk_clone_opts o = { .keep_type = true,
					     .no_reflink = true,
					     .progress = vaai_progress_cb,
					     .progress_arg = op };

		err = vmdk_clone_full(&b->io, src, dst, &o, NULL, errbuf,
				      errlen);
	} else if (!strcmp(a.mode, "linked")) {
		err = vmdk_clone_linked(&b->io, src, dst, errbuf, errlen);
	} else {
		err = vmdk_clone_native(&b->io, src, dst, errbuf, errlen);
	}
	if (!err) {
		vaai_quota_count_disk(a.export, b, dst);
	}
	admin__msg_relative(b, errbuf);
cleanup:
	free(dst);
	free(src);
	b->close(b);
	return err;
}

static int vaai_reserve_run(struct admin_op *op, char *errbuf, size_t errlen)
{
	struct admin_op_args a;
	struct store_tree *b;
	char *path;
	int err;

	admin__op_args(op, &a);
	err = admin__tree_open(a.export, &b, errbuf, errlen);
	if (err) {
		return err;
	}
	path = admin__path_abs(b, a.source);
	if (!path) {
		err = -ENOMEM;
	} else {
		err = vmdk_reserve(&b->io, path,
				   !strcmp(a.mode, "eagerzeroedthick"),
				   vaai_progress_cb, op, errbuf, errlen);
		/* A failed reservation keeps what it allocated: count it. */
		vaai_quota_count_disk(a.export, b, path);
		admin__msg_relative(b, errbuf);
	}
	free(path);
	b->close(b);
	return err;
}

/* ---- the handlers ------------------------------------------------------ */

/* Replies the outcome of admin__op_start(): 202 while it runs, 201 when
 * done here, or its error's status with the operation's JSON (@doc
 * taken). */
/* The checks every operation shares, once its body is read: the datastore
 * live, its operations possible, @rel a safe path whose disk opens.
 * Returns the export with @b open and @d filled, or NULL after a reply. */
static const struct export *
vaai_prepare(struct admin_api *api, const struct admin_request *req,
	     const char *what, const char *rel, struct store_tree **bp,
	     struct vaai_disk *d, struct admin_reply *reply)
{
	char err[VAAI_ERR_MAX] = "";
	const struct export *exp;
	char *abs;
	int rc;

	exp = admin__export_live(api, req->name, reply);
	if (!exp) {
		return NULL;
	}
	if (!api->ops) {
		admin__reply_error(reply, 500, "operations are not available");
		return NULL;
	}
	if (admin__path_check(what, rel, err, sizeof(err))) {
		admin__reply_error(reply, 400, "%s", err);
		return NULL;
	}
	rc = admin__tree_open(exp, bp, err, sizeof(err));
	if (rc) {
		admin__reply_error(reply, admin__tree_status(rc), "%s", err);
		return NULL;
	}
	abs = admin__path_abs(*bp, rel);
	rc = abs ? admin__file_regular(*bp, abs, err, sizeof(err)) : -ENOMEM;
	if (!rc) {
		rc = vaai_disk_measure(*bp, abs, d, err, sizeof(err));
	}
	free(abs);
	if (rc) {
		admin__msg_relative(*bp, err);
		admin__file_refused(reply, what, rel, rc,
				    rc == -ENOENT ? "" : err);
		(*bp)->close(*bp);
		return NULL;
	}
	return exp;
}

void admin__clone_create(struct admin_api *api, const struct admin_request *req,
			 struct admin_reply *reply)
{
	const char *source, *target, *mode;
	char err[VAAI_ERR_MAX] = "";
	struct admin_op_spec spec = { .kind = "clone" };
	struct store_tree *b;
	const struct export *exp;
	struct vaai_disk d;
	json_error_t je;
	json_t *doc;
	char *abs;
	bool background;
	int rc;

	if (json_unpack_ex((json_t *)req->body, &je, JSON_STRICT,
			   "{s:s, s:s, s:s}", "source", &source, "target",
			   &target, "mode", &mode)) {
		admin__reply_error(reply, 400,
				   "body: {\"source\", \"target\", \"mode\"} "
				   "are needed, all strings, nothing else: %s",
				   je.text);
		return;
	}
	if (!strcmp(mode, "full") || !strcmp(mode, "linked") ||
	    !strcmp(mode, "native")) {
		spec.mode = !strcmp(mode, "full")     ? "full"
			    : !strcmp(mode, "linked") ? "linked"
						      : "native";
	} else {
		admin__reply_error(reply, 400,
				   "body: mode '%.64s' is not full, linked or "
				   "native",
				   mode);
		return;
	}
	if (admin__path_check("target", target, err, sizeof(err))) {
		admin__reply_error(reply, 400, "%s", err);
		return;
	}
	exp = vaai_prepare(api, req, "source", source, &b, &d, reply);
	if (!exp) {
		return;
	}
	abs = admin__path_abs(b, target);
	rc = abs ? vaai_target_free(b, abs, target, err, sizeof(err)) : -ENOMEM;
	free(abs);
	b->close(b);
	if (rc) {
		admin__reply_error(reply, rc == -EEXIST ? 409 : 400, "%s", err);
		return;
	}
	spec.export = exp;
	spec.source = source;
	spec.target = target;
	spec.total_bytes = d.size_bytes;
	spec.run = vaai_clone_run;
	/* A full copy may allocate what the source does; a linked or
	 * native clone shares it. */
	spec.quota_bytes = !strcmp(spec.mode, "full") ? d.allocated_bytes : 0;
	if (vaai_quota_reserve(exp, spec.quota_bytes, err, sizeof(err))) {
		admin__reply_error(reply, 507, "%s", err);
		return;
	}
	background = !strcmp(spec.mode, "full");
	rc = admin__op_start(api->ops, &spec, background, &doc, err,
			     sizeof(err));
	if (rc && !doc && spec.quota_bytes && exp->quota) {
		quota_release(exp->quota, spec.quota_bytes); /* never ran */
	}
	admin__op_reply(reply, rc, background, doc, err);
}

void admin__reserve_create(struct admin_api *api,
			   const struct admin_request *req,
			   struct admin_reply *reply)
{
	struct admin_op_spec spec = { .kind = "reserve", .target = "" };
	char err[VAAI_ERR_MAX] = "";
	struct store_tree *b;
	const struct export *exp;
	const char *path, *type;
	struct vaai_disk d;
	json_error_t je;
	json_t *doc;
	bool eager, background;
	int rc;

	if (json_unpack_ex((json_t *)req->body, &je, JSON_STRICT, "{s:s, s:s}",
			   "path", &path, "type", &type)) {
		admin__reply_error(reply, 400,
				   "body: {\"path\", \"type\"} are needed, "
				   "both strings, nothing else: %s",
				   je.text);
		return;
	}
	if (strcmp(type, "zeroedthick") && strcmp(type, "eagerzeroedthick")) {
		admin__reply_error(reply, 400,
				   "body: type '%.64s' is not zeroedthick or "
				   "eagerzeroedthick",
				   type);
		return;
	}
	eager = !strcmp(type, "eagerzeroedthick");
	exp = vaai_prepare(api, req, "path", path, &b, &d, reply);
	if (!exp) {
		return;
	}
	/* Where allocating is writing (CephFS), any reservation takes the
	 * time of writing the disk: a thread's work. */
	background = eager || b->alloc_writes;
	b->close(b);
	if (d.not_flat[0]) {
		admin__reply_error(reply, 400, "path '%.300s': %s", path,
				   d.not_flat);
		return;
	}
	spec.mode = eager ? "eagerzeroedthick" : "zeroedthick";
	spec.export = exp;
	spec.source = path;
	spec.total_bytes = d.size_bytes;
	spec.run = vaai_reserve_run;
	spec.quota_bytes = d.size_bytes > d.allocated_bytes
				   ? d.size_bytes - d.allocated_bytes
				   : 0;
	if (vaai_quota_reserve(exp, spec.quota_bytes, err, sizeof(err))) {
		admin__reply_error(reply, 507, "%s", err);
		return;
	}
	rc = admin__op_start(api->ops, &spec, background, &doc, err,
			     sizeof(err));
	if (rc && !doc && spec.quota_bytes && exp->quota) {
		quota_release(exp->quota, spec.quota_bytes);
	}
	admin__op_reply(reply, rc, background, doc, err);
}
