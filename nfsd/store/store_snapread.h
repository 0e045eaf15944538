/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store_snapread: which ranges of a file in one native snapshot may
 * differ from the same file in an older snapshot, asked of the store
 * without reading the data (the replication source, nfsd/repl/src.h,
 * docs/replication.md "CephFS datastores").  The cephfs backend answers
 * from the file's RADOS objects (store/cephfs/cephfs_snapread.c); a
 * backend without it (store_snap_ops.changed NULL) has every byte a
 * candidate.
 */
#ifndef DSNFS_STORE_SNAPREAD_H
#define DSNFS_STORE_SNAPREAD_H

#include <stddef.h>
#include <stdint.h>

struct store;
struct store_obj;

struct store_range {
	uint64_t off;
	uint64_t len;
};

/*
 * The ranges of regular file @cur (@size bytes, in a snapshot of @st)
 * that may differ from @base (@base_size bytes, the same file in an older
 * snapshot; NULL: none, all of @cur's data is a candidate; a hole is
 * still left out), sorted and merged, each starting on a 64 KiB
 * boundary (CephFS: whole 4 MiB objects, or 64 KiB blocks of one and
 * the rest of the object past them).  What is left out is the same in
 * both (or a hole in both) without its data read: by the store's own
 * bookkeeping, or, on CephFS, by equal xxhash64 of a block.  *out owned
 * (free(); NULL when none).  Blocks (cluster round trips).  Returns 0,
 * -EOPNOTSUPP (the store cannot tell for this file: take it whole) or -errno.
 */
typedef int store_snap_changed_fn(struct store *st, struct store_obj *cur,
				  struct store_obj *base, uint64_t size,
				  uint64_t base_size, struct store_range **out,
				  size_t *n);

#endif
