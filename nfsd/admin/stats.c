// SPDX-License-Identifier: Apache-2.0
/*
 * stats: Extended Statistics of one file of a datastore (GET
 * /volumes/NAME/stats?path=P): a disk's logical size, provisioning,
 * allocated and shared bytes (FIEMAP_EXTENT_SHARED) and nb / tbz, per
 * extent file too; a file that is not a disk, its own figures.  Opened
 * through the store's tree (store/store_tree.h), as every operation.
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
#include "nfsd/store/store_tree.h"
#include "vmdk/vmdk.h"

#define STATS_ERR_MAX 512

/* The allocation members of a stats reply. */
static void stats_alloc_set(json_t *o, const struct vmdk_alloc *a)
{
	json_object_set_new(o, "allocated_bytes",
			    json_integer((json_int_t)a->allocated_bytes));
	json_object_set_new(o, "shared_bytes",
			    json_integer((json_int_t)a->shared_bytes));
	json_object_set_new(o, "nb", json_integer((json_int_t)a->nb));
	json_object_set_new(o, "tbz", json_integer((json_int_t)a->tbz));
}

/* Stats of a file that is not a disk: its size and allocation. */
static json_t *stats_file(const struct store_tree *b, const char *abs,
			  const char *rel, int *err)
{
	struct vmdk_alloc a;
	json_t *o;
	int fd = -1;

	*err = b->io.ops->open(b->io.ctx, abs, O_RDONLY | O_NONBLOCK, 0, &fd);
	if (*err) {
		return NULL;
	}
	*err = vmdk_alloc_get(&b->io, fd, &a);
	b->io.ops->close(b->io.ctx, fd);
	if (*err && *err != -EOPNOTSUPP) {
		return NULL;
	}
	o = json_pack("{s:s, s:s, s:I, s:I, s:b}", "path", rel, "kind", "file",
		      "size_bytes", (json_int_t)a.file_bytes, "block_bytes",
		      (json_int_t)VMDK_ALLOC_BLOCK_BYTES, "fiemap", !*err);
	*err = 0;
	if (o) {
		stats_alloc_set(o, &a);
	}
	return o;
}

static json_t *stats_disk(const struct store_tree *b, struct vmdk *v,
			  const char *rel)
{
	struct vmdk_info in;
	int ferr = vmdk_info_get(v, &in);
	int depth = 0;
	json_t *o, *files;

	for (const struct vmdk *p = vmdk_parent(v); p; p = vmdk_parent(p)) {
		depth++;
	}
	o = json_pack("{s:s, s:s, s:I, s:s, s:I, s:b, s:i}", "path", rel,
		      "kind", "vmdk", "size_bytes", (json_int_t)in.size_bytes,
		      "provisioning",
		      in.provisioning ? in.provisioning : "unknown",
		      "block_bytes", (json_int_t)VMDK_ALLOC_BLOCK_BYTES,
		      "fiemap", ferr == 0, "parents", depth);
	files = json_array();
	if (!o || !files) {
		json_decref(o);
		json_decref(files);
		return NULL;
	}
	stats_alloc_set(o, &in.alloc);
	if (in.parent_hint) {
		json_object_set_new(o, "parent", json_string(in.parent_hint));
	}
	for (unsigned i = 0; i < in.n_extents; i++) {
		struct vmdk_extent_info e;
		json_t *f;

		if (vmdk_extent_info_get(v, i, &e) || !e.file) {
			continue;
		}
		f = json_pack("{s:s, s:s, s:I}", "file",
			      admin__path_rel(b, e.file), "type", e.type,
			      "file_bytes", (json_int_t)e.alloc.file_bytes);
		if (f) {
			stats_alloc_set(f, &e.alloc);
			json_array_append_new(files, f);
		}
	}
	json_object_set_new(o, "files", files);
	return o;
}

void admin__stats_get(struct admin_api *api, const struct admin_request *req,
		      struct admin_reply *reply)
{
	const char *rel = admin__request_arg(req, "path");
	char err[STATS_ERR_MAX] = "";
	struct store_tree *b;
	const struct export *exp;
	struct vmdk *v = NULL;
	json_t *doc = NULL;
	char *abs = NULL;
	int rc;

	exp = admin__export_live(api, req->name, reply);
	if (!exp) {
		return;
	}
	if (!rel) {
		admin__reply_error(reply, 400,
				   "stats: the query argument path= names the "
				   "file");
		return;
	}
	if (admin__path_check("path", rel, err, sizeof(err))) {
		admin__reply_error(reply, 400, "%s", err);
		return;
	}
	rc = admin__tree_open(exp, &b, err, sizeof(err));
	if (rc) {
		admin__reply_error(reply, admin__tree_status(rc), "%s", err);
		return;
	}
	abs = admin__path_abs(b, rel);
	rc = abs ? admin__file_regular(b, abs, err, sizeof(err)) : -ENOMEM;
	if (rc == -EINVAL) {
		admin__file_refused(reply, "path", rel, -EINVAL, err);
		free(abs);
		b->close(b);
		return;
	}
	if (!rc) {
		rc = vmdk_open(&b->io, abs, 0, &v, err, sizeof(err));
	}
	if (!rc) {
		doc = stats_disk(b, v, rel);
		vmdk_close(v);
	} else if (rc == -EINVAL || rc == -ENOENT) {
		/* Not a disk (a -flat.vmdk, a log): the file's own figures;
		 * a missing file fails here too. */
		doc = abs ? stats_file(b, abs, rel, &rc) : NULL;
	}
	if (rc == -EXDEV || rc == -ELOOP || rc == -ENOENT) {
		admin__file_refused(reply, "path", rel, rc, "");
	} else if (!doc) {
		admin__msg_relative(b, err);
		admin__reply_error(reply,
				   rc ? admin__op_status_from_err(rc) : 500,
				   "path '%.300s': %s", rel,
				   err[0] ? err : strerror(rc ? -rc : ENOMEM));
	} else {
		admin__reply_json(reply, 200, doc);
	}
	free(abs);
	b->close(b);
}
