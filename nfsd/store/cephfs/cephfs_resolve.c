// SPDX-License-Identifier: Apache-2.0
/*
 * cephfs_resolve: a handle back to its object (ops->resolve and
 * ops->resolve_attr): the MAC and export id checked, the object found in
 * the cache (cephfs_obj.c) or looked up by inode number on the cluster,
 * and a newly found inode checked to lie under the directory served.
 * Kept apart from the cache so that the cache needs no attributes
 * (cephfs_attr.c) and the attributes need no handles.
 */
#include "nfsd/store/cephfs/cephfs_int.h"

#include <errno.h>
#include <stdint.h>

#include "nfsd/base/log.h"

/* The inode number and snapid in @fh, after its MAC and our export id
 * are checked. */
static int store_cephfs_fh_ino(struct store_cephfs *sc,
			       const struct store_fh *fh, uint64_t *ino,
			       uint64_t *snapid)
{
	struct store_kfh kfh;
	uint32_t export_id;
	int err;

	err = store__fh_decode(&sc->secret, fh, &export_id, &kfh);
	if (err) {
		return err;
	}
	if (export_id != sc->base.export_id ||
	    kfh.type != STORE_CEPHFS_FH_TYPE ||
	    (kfh.len != 8 && kfh.len != 16)) {
		return -STORE_EBADHANDLE;
	}
	*ino = 0;
	*snapid = kfh.len == 8 ? CEPH_NOSNAP : 0;
	for (int i = 0; i < 8; i++) {
		*ino = *ino << 8 | kfh.f_handle[i];
		if (kfh.len == 16) {
			*snapid = *snapid << 8 | kfh.f_handle[8 + i];
		}
	}
	return 0;
}

/* The deepest directory tree the subtree check walks. */
#define STORE_CEPHFS_DEPTH_MAX 4096

/*
 * Whether @in (@stx) lies under the directory served: its ".." chain
 * reaches the root's inode (in the same snapshot, for a snapshot's
 * inode).  A signed handle names an inode number, and libcephfs finds any
 * inode of the file system by number (the cephx user may see all of it):
 * without this check a handle whose MAC was forged or leaked would reach
 * any file or snapshot of the cluster.  0, or -ESTALE.
 */
static int store_cephfs_under_root(struct store_cephfs *sc, Inode *in,
				   const struct ceph_statx *stx)
{
	struct ceph_statx pstx;
	uint64_t ino = stx->stx_ino;
	Inode *cur = in;
	Inode *parent;
	int rc = -ESTALE;

	if (ino == sc->root_ino) {
		return 0;
	}
	for (int depth = 0; depth < STORE_CEPHFS_DEPTH_MAX; depth++) {
		parent = NULL;
		rc = ceph_ll_lookup(sc->cm, cur, "..", &parent, &pstx,
				    CEPH_STATX_INO, 0, sc->root_perms);
		if (cur != in) {
			ceph_ll_put(sc->cm, cur);
		}
		if (rc || parent == NULL) {
			return -ESTALE;
		}
		if (pstx.stx_ino == sc->root_ino) {
			ceph_ll_put(sc->cm, parent);
			return 0;
		}
		if (pstx.stx_ino == ino) {
			/* The file system's root: its ".." is itself. */
			ceph_ll_put(sc->cm, parent);
			return -ESTALE;
		}
		cur = parent;
		ino = pstx.stx_ino;
	}
	if (cur != in) {
		ceph_ll_put(sc->cm, cur);
	}
	return -ESTALE;
}

int store__cephfs_resolve_attr(struct store *st, const struct store_fh *fh,
			       struct store_obj **out, struct store_attr *attr)
{
	struct store_cephfs *sc = store__cephfs(st);
	struct cephfs_obj *o;
	struct ceph_statx stx;
	vinodeno_t vino;
	inodeno_t ino;
	Inode *in;
	int rc;

	rc = store_cephfs_fh_ino(sc, fh, &ino.val, &vino.snapid.val);
	if (rc) {
		return rc;
	}
	vino.ino = ino;
	pthread_mutex_lock(&sc->cache_lock);
	o = store__cephfs_cache_find(sc, ino.val, vino.snapid.val);
	pthread_mutex_unlock(&sc->cache_lock);
	if (o == NULL) {
		rc = vino.snapid.val == CEPH_NOSNAP
			     ? ceph_ll_lookup_inode(sc->cm, ino, &in)
			     : ceph_ll_lookup_vino(sc->cm, vino, &in);
		if (rc) {
			/* A signed handle whose inode is gone. */
			return rc == -ENOENT || rc == -ESTALE
				       ? -ESTALE
				       : store__cephfs_err(rc);
		}
		rc = ceph_ll_getattr(sc->cm, in, &stx, STORE_CEPHFS_WANT, 0,
				     sc->root_perms);
		if (rc) {
			ceph_ll_put(sc->cm, in);
			return rc == -ENOENT ? -ESTALE : store__cephfs_err(rc);
		}
		if (stx.stx_nlink == 0) {
			ceph_ll_put(sc->cm, in);
			return -ESTALE;
		}
		rc = store_cephfs_under_root(sc, in, &stx);
		if (rc) {
			ceph_ll_put(sc->cm, in);
			log_error("cephfs: %s: a handle with a valid MAC names "
				  "inode %#llx (snapid %#llx), not under the "
				  "directory served: refused (stale)",
				  sc->base.name,
				  (unsigned long long)stx.stx_ino,
				  (unsigned long long)stx.stx_dev);
			return rc;
		}
		rc = store__cephfs_obj_get(sc, in, &stx, &o);
		if (rc) {
			return rc;
		}
		if (attr != NULL) {
			store__cephfs_attr_from_statx(sc, o, &stx, attr);
		}
		*out = store__cephfs_pub(o);
		return 0;
	}
	if (attr != NULL) {
		rc = store__cephfs_getattr(st, store__cephfs_pub(o), attr);
		if (rc) {
			store__cephfs_obj_unref(store__cephfs_pub(o));
			return rc;
		}
		if (attr->nlink == 0) {
			/* Removed through another gateway: forget it. */
			store__cephfs_obj_unref(store__cephfs_pub(o));
			if (vino.snapid.val == CEPH_NOSNAP) {
				store__cephfs_cache_drop(sc, ino.val);
			}
			return -ESTALE;
		}
	}
	*out = store__cephfs_pub(o);
	return 0;
}

int store__cephfs_resolve(struct store *st, const struct store_fh *fh,
			  struct store_obj **out)
{
	struct store_attr a;

	/* The attributes tell a removed file (nlink 0) from a live one. */
	return store__cephfs_resolve_attr(st, fh, out, &a);
}
