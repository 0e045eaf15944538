/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store_tree: what the storage-side operations of a datastore (the admin
 * API's VAAI clones, Reserve Space, Extended Statistics, native
 * snapshots) reach the datastore through, for either backend, so that
 * admin/ never knows which one it talks to.
 *
 * A tree is vmdk/'s file-I/O table (struct vmdk_io) confined to the
 * datastore: every path is @root, "/" and a relative path, no symlink is
 * followed and nothing outside can be named (-EXDEV, -ELOOP).  The local
 * backend gives vmdk_io_beneath (openat2 RESOLVE_BENEATH on its
 * directory; copy_file_range, FICLONE); the cephfs backend a table over
 * its own ops (store/cephfs/cephfs_tree.c: libcephfs reads and writes, the
 * file's RADOS objects as its FIEMAP, no copy offload, no FICLONE).
 * @root is a name for the vmdk library only: it is never shown to a
 * client (admin strips it from messages).
 */
#ifndef DSNFS_STORE_TREE_H
#define DSNFS_STORE_TREE_H

#include <stdbool.h>
#include <stddef.h>

#include "nfsd/snap/snap.h"
#include "nfsd/store/store.h"
#include "nfsd/store/store_snapread.h"
#include "vmdk/vmdk.h"

struct store_tree {
	struct vmdk_io io; /* pass &t->io to vmdk_*() */
	const char *root; /* prefix of every path, no trailing slash */
	/* fallocate writes the zeros (no preallocation in the file
	 * system): a reservation then costs a write of the disk. */
	bool alloc_writes;
	void (*close)(struct store_tree *t); /* frees it */
};

/*
 * Native datastore snapshots of a store (store_ops.snap), each call
 * blocking (run it off the event loops), serialised per datastore by the
 * caller.  Names are checked by snap_name_check() (nfsd/snap/snap.h).
 * Every call returns 0 or -errno with the reason in @errbuf:
 * -EINVAL a bad name, -EOPNOTSUPP the file system cannot take one,
 * -EEXIST / -ENOENT the snapshot exists / does not.
 */
struct store_snap_ops {
	/* What create (@exists false), delete or restore (@exists true)
	 * would refuse at once; changes nothing. */
	int (*check)(struct store *st, const char *name, bool exists,
		     char *errbuf, size_t errlen);
	int (*create)(struct store *st, const char *name,
		      struct snap_stats *out, char *errbuf, size_t errlen);
	int (*remove)(struct store *st, const char *name, char *errbuf,
		      size_t errlen);
	/* Reverts the live tree to @name; @progress (may be NULL) sees the
	 * bytes copied back, and its error stops the restore. */
	int (*restore)(struct store *st, const char *name,
		       struct snap_stats *out, vmdk_progress_fn progress,
		       void *progress_arg, char *errbuf, size_t errlen);
	/* By name; *out owned (free()), NULL when none. */
	int (*list)(struct store *st, struct snap_entry **out, size_t *n);
	/* Optional (NULL: every byte of a file is a candidate): a file's
	 * changed ranges between two snapshots (store_snapread.h). */
	store_snap_changed_fn *changed;
};

#endif
