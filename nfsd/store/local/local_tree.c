// SPDX-License-Identifier: Apache-2.0
/*
 * local_tree: the storage-side operations of a local datastore
 * (store/store_tree.h): vmdk_io_beneath on the store's directory, and the
 * native snapshots of nfsd/snap/ (FICLONE of the tree) on it.
 */
#include "nfsd/store/local/local_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/store/local/local.h"
#include "nfsd/store/store_tree.h"

struct local_tree {
	struct store_tree pub;
	struct vmdk_io_beneath b;
};

static void local_tree_close(struct store_tree *t)
{
	struct local_tree *lt = container_of(t, struct local_tree, pub);

	vmdk_io_beneath_fini(&lt->b);
	free(lt);
}

/* The directory served, or NULL with the reason. */
static const char *local_tree_root(struct store *st, char *errbuf,
				   size_t errlen)
{
	const struct store_local *sl = store__local(st);

	if (sl->root_path_len == 0) {
		snprintf(errbuf, errlen,
			 "volume %s: its directory's name is "
			 "not known",
			 st->name);
		return NULL;
	}
	return sl->root_path;
}

int store__local_tree_open(struct store *st, struct store_tree **out,
			   char *errbuf, size_t errlen)
{
	const char *root = local_tree_root(st, errbuf, errlen);
	struct local_tree *lt;
	int err;

	if (!root) {
		return -ENOENT;
	}
	lt = calloc(1, sizeof(*lt));
	if (!lt) {
		return -ENOMEM;
	}
	err = vmdk_io_beneath_init(&lt->b, root);
	if (err) {
		snprintf(errbuf, errlen, "volume %s: %s", st->name,
			 strerror(-err));
		free(lt);
		return err;
	}
	lt->pub.io = lt->b.io;
	lt->pub.root = lt->b.root;
	lt->pub.close = local_tree_close;
	*out = &lt->pub;
	return 0;
}

/* The snapshot manifest of the store, or NULL with the reason. */
static const char *local_tree_manifest(struct store *st, char *errbuf,
				       size_t errlen)
{
	const struct store_local *sl = store__local(st);

	if (!sl->snap_manifest[0]) {
		snprintf(errbuf, errlen,
			 "volume %s: its snapshot manifest's path is too long",
			 st->name);
		return NULL;
	}
	return sl->snap_manifest;
}

static int local_snap_check(struct store *st, const char *name, bool exists,
			    char *errbuf, size_t errlen)
{
	const char *root = local_tree_root(st, errbuf, errlen);
	const char *m = local_tree_manifest(st, errbuf, errlen);

	return root && m ? snap_check(root, m, name, exists, errbuf, errlen)
			 : -ENOENT;
}

static int local_snap_create(struct store *st, const char *name,
			     struct snap_stats *out, char *errbuf,
			     size_t errlen)
{
	const char *root = local_tree_root(st, errbuf, errlen);
	const char *m = local_tree_manifest(st, errbuf, errlen);

	return root && m ? snap_create(root, m, name, out, errbuf, errlen)
			 : -ENOENT;
}

static int local_snap_remove(struct store *st, const char *name, char *errbuf,
			     size_t errlen)
{
	const char *root = local_tree_root(st, errbuf, errlen);
	const char *m = local_tree_manifest(st, errbuf, errlen);

	return root && m ? snap_delete(root, m, name, errbuf, errlen) : -ENOENT;
}

/* One FICLONE per file: no progress to report on the way. */
static int local_snap_restore(struct store *st, const char *name,
			      struct snap_stats *out, vmdk_progress_fn progress,
			      void *progress_arg, char *errbuf, size_t errlen)
{
	const char *root = local_tree_root(st, errbuf, errlen);
	const char *m = local_tree_manifest(st, errbuf, errlen);

	(void)progress;
	(void)progress_arg;
	return root && m ? snap_restore(root, m, name, out, errbuf, errlen)
			 : -ENOENT;
}

static int local_snap_list(struct store *st, struct snap_entry **out, size_t *n)
{
	char err[256];
	const char *root = local_tree_root(st, err, sizeof(err));
	const char *m = local_tree_manifest(st, err, sizeof(err));

	return root && m ? snap_list(root, m, out, n) : -ENOENT;
}

const struct store_snap_ops store__local_snap_ops = {
	.check = local_snap_check,
	.create = local_snap_create,
	.remove = local_snap_remove,
	.restore = local_snap_restore,
	.list = local_snap_list,
};
