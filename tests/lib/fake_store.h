/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fake_store: an in-memory datastore behind the store_ops vtable, for unit
 * tests of code above the store (nfsd/nfs3).  It holds regular files,
 * directories, symlinks and special files with POSIX namespace rules,
 * stable readdir cookies and handles in the layout of store/handle.c (so
 * store_fh_export_id() reads them), tagged with its own key.  It checks no
 * permissions (the NFS layer does).  A test can count live object
 * references, see what reached the store (stable level of the last write,
 * commits) and make the next call of one op fail.
 */
#ifndef DSNFS_TESTS_FAKE_STORE_H
#define DSNFS_TESTS_FAKE_STORE_H

#include <stdint.h>

#include "nfsd/store/store.h"

/*
 * Creates an empty store named @name whose handles carry @export_id.  Its
 * root directory is mode 0777, owned by @root_uid/@root_gid.  *out returns
 * owned: free with (*out)->ops->close(*out).  Returns 0 or -ENOMEM.
 */
int fake_store_new(const char *name, uint32_t export_id, uint32_t root_uid,
		   uint32_t root_gid, struct store **out);

/* Objects handed out (resolve, root, lookup, create...) not yet unref'd. */
int fake_store_refs(const struct store *st);

/* Makes the next call of op @op ("write", "commit", "create", "readdir",
 * ... as named in struct store_ops) return @err (negative errno), once. */
void fake_store_fail_next(struct store *st, const char *op, int err);

/* The stable level of the last write that reached the store. */
enum store_stable fake_store_last_stable(const struct store *st);

/* Number of writes and commits that reached the store. */
unsigned fake_store_writes(const struct store *st);
unsigned fake_store_commits(const struct store *st);

/* Number of getattr calls (what a real store pays a stat for). */
unsigned fake_store_getattrs(const struct store *st);

#endif
