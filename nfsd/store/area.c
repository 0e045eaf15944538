// SPDX-License-Identifier: Apache-2.0
/*
 * area: whether an object lies in a top-level directory of its datastore
 * (the snapshot area, for the calls that would change it: nfs3/fh.c).
 *
 * The answer comes from the object's path (ops->path: on the local
 * backend one readlink of /proc/self/fd/N, the costliest system call of
 * an 8 KiB WRITE), so a "no" is kept on the object and every later call
 * costs none.  A "no" stays true for the object's life: no file moves
 * into the snapshot area.  NFS calls that would put one there are
 * refused by this very check, and the snapshot engine fills the area
 * with new inodes (FICLONE into new files; a file with a second link
 * fails the snapshot, nfsd/snap/snap.c).  A "yes" and an unknown (a
 * handle the kernel has not reconnected to a name yet) are asked again.
 */
#include "nfsd/store/store_obj.h"

#include <errno.h>
#include <string.h>

int store_in_area(struct store *st, struct store_obj *obj, const char *area)
{
	size_t n = strlen(area);
	char path[4096];
	int err;

	if (atomic_load_explicit(&obj->outside_area, memory_order_relaxed) ==
	    area) {
		return 0;
	}
	err = store_path(st, obj, path, sizeof(path));
	if (err) {
		return -ENOENT;
	}
	if (strncmp(path, area, n) == 0 &&
	    (path[n] == '\0' || path[n] == '/')) {
		return 1;
	}
	atomic_store_explicit(&obj->outside_area, area, memory_order_relaxed);
	return 0;
}
