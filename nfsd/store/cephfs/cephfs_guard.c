// SPDX-License-Identifier: Apache-2.0
/*
 * cephfs_guard: the ops table of the cephfs backend.  Each op that may
 * reach the cluster runs between store__cephfs_call_enter() and _leave()
 * (cephfs_health.c): a store whose cluster does not answer answers -EAGAIN
 * at once, and no store holds more than its cap of work threads.  root,
 * obj_fh and the references touch only what the gateway holds; fsstat
 * asks the mon with a bound of its own (cephfs_statfs.c); the admin API's
 * trees and snapshots run on its own threads, not guarded.
 */
#include "nfsd/store/cephfs/cephfs_int.h"

/* A call into libcephfs begins: 0 with its slot, or -EAGAIN (the cluster
 * does not answer, or the store's calls hold their cap of threads). */
static int guard_enter(struct store *st, unsigned *slot)
{
	return store__cephfs_call_enter(store__cephfs(st), slot);
}

/* It returned @rc: the slot goes back; a connection error marks the store
 * down and comes back as -EAGAIN. */
static int guard_leave(struct store *st, unsigned slot, int rc)
{
	return store__cephfs_call_leave(store__cephfs(st), slot, rc);
}

static int guard_resolve(struct store *st, const struct store_fh *fh,
			 struct store_obj **out)
{
	unsigned slot;
	int rc = guard_enter(st, &slot);

	return rc ? rc
		  : guard_leave(st, slot, store__cephfs_resolve(st, fh, out));
}

static int guard_resolve_attr(struct store *st, const struct store_fh *fh,
			      struct store_obj **out, struct store_attr *attr)
{
	unsigned slot;
	int rc = guard_enter(st, &slot);

	return rc ? rc
		  : guard_leave(st, slot,
				store__cephfs_resolve_attr(st, fh, out, attr));
}

static int guard_getattr(struct store *st, struct store_obj *obj,
			 struct store_attr *attr)
{
	unsigned slot;
	int rc = guard_enter(st, &slot);

	return rc ? rc
		  : guard_leave(st, slot, store__cephfs_getattr(st, obj, attr));
}

static int guard_setattr(struct store *st, struct store_obj *obj,
			 const struct store_sattr *sattr,
			 const struct store_cred *cred)
{
	unsigned slot;
	int rc = guard_enter(st, &slot);

	return rc ? rc
		  : guard_leave(st, slot,
				store__cephfs_setattr(st, obj, sattr, cred));
}

static int guard_lookup(struct store *st, struct store_obj *dir,
			const char *name, struct store_obj **out)
{
	unsigned slot;
	int rc = guard_enter(st, &slot);

	return rc ? rc
		  : guard_leave(st, slot,
				store__cephfs_lookup(st, dir, name, out));
}

static int guard_readlink(struct store *st, struct store_obj *obj, char *buf,
			  size_t buflen, size_t *len)
{
	unsigned slot;
	int rc = guard_enter(st, &slot);

	return rc ? rc
		  : guard_leave(
			    st, slot,
			    store__cephfs_readlink(st, obj, buf, buflen, len));
}

static int guard_read(struct store *st, struct store_obj *obj,
		      uint64_t off_bytes, void *buf, uint32_t count,
		      uint32_t *nread, bool *eof)
{
	unsigned slot;
	int rc = guard_enter(st, &slot);

	return rc ? rc
		  : guard_leave(st, slot,
				store__cephfs_read(st, obj, off_bytes, buf,
						   count, nread, eof));
}

static int guard_read_sized(struct store *st, struct store_obj *obj,
			    uint64_t size_bytes, uint64_t off_bytes, void *buf,
			    uint32_t count, uint32_t *nread, bool *eof)
{
	unsigned slot;
	int rc = guard_enter(st, &slot);

	return rc ? rc
		  : guard_leave(st, slot,
				store__cephfs_read_sized(st, obj, size_bytes,
							 off_bytes, buf, count,
							 nread, eof));
}

static int guard_write(struct store *st, struct store_obj *obj,
		       uint64_t off_bytes, const void *buf, uint32_t count,
		       enum store_stable stable, bool *sync_failed)
{
	unsigned slot;
	int rc = guard_enter(st, &slot);

	return rc ? rc
		  : guard_leave(st, slot,
				store__cephfs_write(st, obj, off_bytes, buf,
						    count, stable,
						    sync_failed));
}

static int guard_commit(struct store *st, struct store_obj *obj,
			uint64_t off_bytes, uint32_t count, bool *sync_failed)
{
	unsigned slot;
	int rc = guard_enter(st, &slot);

	return rc ? rc
		  : guard_leave(st, slot,
				store__cephfs_commit(st, obj, off_bytes, count,
						     sync_failed));
}

static int guard_create(struct store *st, struct store_obj *dir,
			const char *name, enum store_create_how how,
			const struct store_sattr *sattr, const uint8_t verf[8],
			const struct store_cred *cred, struct store_obj **out)
{
	unsigned slot;
	int rc = guard_enter(st, &slot);

	return rc ? rc
		  : guard_leave(st, slot,
				store__cephfs_create(st, dir, name, how, sattr,
						     verf, cred, out));
}

static int guard_mkdir(struct store *st, struct store_obj *dir,
		       const char *name, const struct store_sattr *sattr,
		       const struct store_cred *cred, struct store_obj **out)
{
	unsigned slot;
	int rc = guard_enter(st, &slot);

	return rc ? rc
		  : guard_leave(st, slot,
				store__cephfs_mkdir(st, dir, name, sattr, cred,
						    out));
}

static int guard_symlink(struct store *st, struct store_obj *dir,
			 const char *name, const char *target,
			 const struct store_sattr *sattr,
			 const struct store_cred *cred, struct store_obj **out)
{
	unsigned slot;
	int rc = guard_enter(st, &slot);

	return rc ? rc
		  : guard_leave(st, slot,
				store__cephfs_symlink(st, dir, name, target,
						      sattr, cred, out));
}

static int guard_mknod(struct store *st, struct store_obj *dir,
		       const char *name, enum store_ftype type,
		       uint32_t rdev_major, uint32_t rdev_minor,
		       const struct store_sattr *sattr,
		       const struct store_cred *cred, struct store_obj **out)
{
	unsigned slot;
	int rc = guard_enter(st, &slot);

	return rc ? rc
		  : guard_leave(st, slot,
				store__cephfs_mknod(st, dir, name, type,
						    rdev_major, rdev_minor,
						    sattr, cred, out));
}

static int guard_remove(struct store *st, struct store_obj *dir,
			const char *name)
{
	unsigned slot;
	int rc = guard_enter(st, &slot);

	return rc ? rc
		  : guard_leave(st, slot, store__cephfs_remove(st, dir, name));
}

static int guard_rmdir(struct store *st, struct store_obj *dir,
		       const char *name)
{
	unsigned slot;
	int rc = guard_enter(st, &slot);

	return rc ? rc
		  : guard_leave(st, slot, store__cephfs_rmdir(st, dir, name));
}

static int guard_rename(struct store *st, struct store_obj *from_dir,
			const char *from_name, struct store_obj *to_dir,
			const char *to_name)
{
	unsigned slot;
	int rc = guard_enter(st, &slot);

	return rc ? rc
		  : guard_leave(st, slot,
				store__cephfs_rename(st, from_dir, from_name,
						     to_dir, to_name));
}

static int guard_link(struct store *st, struct store_obj *obj,
		      struct store_obj *dir, const char *name)
{
	unsigned slot;
	int rc = guard_enter(st, &slot);

	return rc ? rc
		  : guard_leave(st, slot,
				store__cephfs_link(st, obj, dir, name));
}

static int guard_readdir(struct store *st, struct store_obj *dir,
			 uint64_t cookie, store_readdir_fn cb, void *arg)
{
	unsigned slot;
	int rc = guard_enter(st, &slot);

	return rc ? rc
		  : guard_leave(
			    st, slot,
			    store__cephfs_readdir(st, dir, cookie, cb, arg));
}

const struct store_ops store__cephfs_ops = {
	.resolve = guard_resolve,
	.obj_ref = store__cephfs_obj_ref,
	.obj_unref = store__cephfs_obj_unref,
	.obj_fh = store__cephfs_obj_fh,
	.root = store__cephfs_root,
	.getattr = guard_getattr,
	.setattr = guard_setattr,
	.lookup = guard_lookup,
	.readlink = guard_readlink,
	.read = guard_read,
	.write = guard_write,
	.commit = guard_commit,
	.create = guard_create,
	.mkdir = guard_mkdir,
	.symlink = guard_symlink,
	.mknod = guard_mknod,
	.remove = guard_remove,
	.rmdir = guard_rmdir,
	.rename = guard_rename,
	.link = guard_link,
	.readdir = guard_readdir,
	.fsstat = store__cephfs_fsstat, /* asks the mon: its own bound */
	.close = store__cephfs_close,
	.resolve_attr = guard_resolve_attr,
	.read_sized = guard_read_sized,
	/* The admin API's (clones, reservations, snapshots), on its own
	 * threads rather than the NFS work threads: not guarded. */
	.tree_open = store__cephfs_tree_open,
	.snap = &store__cephfs_snap_ops,
};
