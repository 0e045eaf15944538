// SPDX-License-Identifier: Apache-2.0
/*
 * cephfs_ns: LOOKUP and the namespace ops of the cephfs backend: CREATE,
 * MKDIR, SYMLINK, MKNOD, REMOVE, RMDIR, RENAME and LINK (RFC 1813 3.3.3,
 * 3.3.8 - 3.3.15), as ceph_ll_* calls on the directory's inode.  The rules
 * for names, "." and "..", ownership (the caller, unless sattr sets it),
 * default modes and the CREATE modes are those of the local backend
 * (local_ns.c); EXCLUSIVE keeps its verifier in the xattr
 * STORE_CEPHFS_VERF_XATTR.  CephFS's snapshot directory (".snap") is not
 * served: its inodes need a snapshot id our handles do not carry.
 */
#include "nfsd/store/cephfs/cephfs_int.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#define STORE_CEPHFS_FILE_MODE 0644
#define STORE_CEPHFS_DIR_MODE 0755

static int store_cephfs_dir_name(const struct cephfs_obj *dir, const char *name,
				 int dot_err)
{
	int err;

	if (dir->type != STORE_DIR) {
		return -ENOTDIR;
	}
	if (dir->snapid != CEPH_NOSNAP) {
		return -EROFS; /* a snapshot (or .snapshot itself) */
	}
	err = store__name_check(name);
	if (err) {
		return err;
	}
	if (strcmp(name, STORE_CEPHFS_SNAPDIR) == 0) {
		return -EACCES;
	}
	return store__name_is_dot(name) ? dot_err : 0;
}

static mode_t store_cephfs_mode(const struct store_sattr *sattr, mode_t dflt)
{
	return sattr != NULL && sattr->set_mode ? sattr->mode & 07777 : dflt;
}

int store__cephfs_lookup(struct store *st, struct store_obj *dirp,
			 const char *name, struct store_obj **out)
{
	struct store_cephfs *sc = store__cephfs(st);
	struct cephfs_obj *dir = store__cephfs_obj(dirp);
	struct cephfs_obj *o;
	struct ceph_statx stx;
	Inode *in;
	int rc;

	if (dir->type != STORE_DIR) {
		return -ENOTDIR;
	}
	rc = store__name_check(name);
	if (rc) {
		return rc;
	}
	if (strcmp(name, ".") == 0 ||
	    (strcmp(name, "..") == 0 && store__cephfs_is_root(sc, dir))) {
		store__cephfs_obj_ref(dirp);
		*out = dirp;
		return 0;
	}
	if (strcmp(name, STORE_CEPHFS_SNAPDIR) == 0) {
		return -ENOENT;
	}
	/* The root's .snapshot is CephFS's snapshots (the nfs3 layer hides
	 * it where the datastore says so). */
	if (strcmp(name, STORE_CEPHFS_NFS_SNAPDIR) == 0 &&
	    store__cephfs_is_root(sc, dir)) {
		name = STORE_CEPHFS_SNAPDIR;
	}
	rc = ceph_ll_lookup(sc->cm, dir->in, name, &in, &stx, STORE_CEPHFS_WANT,
			    AT_SYMLINK_NOFOLLOW, sc->root_perms);
	if (rc) {
		return store__cephfs_err(rc);
	}
	rc = store__cephfs_obj_get(sc, in, &stx, &o);
	if (rc) {
		return rc;
	}
	*out = store__cephfs_pub(o);
	return 0;
}

/* Gives a new object its owner (the caller unless @sattr sets it), then
 * the rest of @sattr (may be NULL; a size only for a regular file). */
static int store_cephfs_init_attrs(struct store_cephfs *sc,
				   struct cephfs_obj *o,
				   const struct store_sattr *sattr,
				   const struct store_cred *cred)
{
	struct store_sattr s;

	store__new_obj_sattr(sattr, cred, o->type, &s);
	/* The mode was given at creation: no second change of it. */
	s.set_mode = false;
	return store__cephfs_sattr_apply(sc, o, &s);
}

/* The object of new inode @in (taken) and its attributes. */
static int store_cephfs_new_obj(struct store_cephfs *sc, Inode *in,
				const struct ceph_statx *stx,
				const struct store_sattr *sattr,
				const struct store_cred *cred,
				struct store_obj **out)
{
	struct cephfs_obj *o;
	int err;

	err = store__cephfs_obj_get(sc, in, stx, &o);
	if (err) {
		return err;
	}
	err = store_cephfs_init_attrs(sc, o, sattr, cred);
	if (err) {
		store__cephfs_obj_unref(store__cephfs_pub(o));
		return err;
	}
	*out = store__cephfs_pub(o);
	return 0;
}

/* CREATE of a name that exists: the UNCHECKED and EXCLUSIVE retry cases. */
static int
store_cephfs_create_existing(struct store_cephfs *sc, struct cephfs_obj *dir,
			     const char *name, enum store_create_how how,
			     const struct store_sattr *sattr,
			     const uint8_t verf[8], struct store_obj **out)
{
	struct store_sattr size_only = { 0 };
	struct store_obj *obj;
	struct cephfs_obj *o;
	uint8_t have[8];
	int rc;

	if (how == STORE_CREATE_GUARDED) {
		return -EEXIST;
	}
	rc = store__cephfs_lookup(&sc->base, store__cephfs_pub(dir), name,
				  &obj);
	if (rc) {
		return rc;
	}
	o = store__cephfs_obj(obj);
	if (o->type != STORE_REG) {
		store__cephfs_obj_unref(obj);
		return -EEXIST;
	}
	if (how == STORE_CREATE_EXCLUSIVE) {
		rc = ceph_ll_getxattr(sc->cm, o->in, STORE_CEPHFS_VERF_XATTR,
				      have, sizeof(have), sc->root_perms);
		if (rc != (int)sizeof(have) ||
		    memcmp(have, verf, sizeof(have)) != 0) {
			store__cephfs_obj_unref(obj);
			return -EEXIST;
		}
	}
	if (how == STORE_CREATE_UNCHECKED && sattr != NULL && sattr->set_size) {
		size_only.set_size = true;
		size_only.size_bytes = sattr->size_bytes;
		rc = store__cephfs_sattr_apply(sc, o, &size_only);
		if (rc) {
			store__cephfs_obj_unref(obj);
			return rc;
		}
	}
	*out = obj;
	return 0;
}

int store__cephfs_create(struct store *st, struct store_obj *dirp,
			 const char *name, enum store_create_how how,
			 const struct store_sattr *sattr, const uint8_t verf[8],
			 const struct store_cred *cred, struct store_obj **out)
{
	struct store_cephfs *sc = store__cephfs(st);
	struct cephfs_obj *dir = store__cephfs_obj(dirp);
	struct ceph_statx stx;
	struct Fh *fh = NULL;
	Inode *in;
	int rc;

	rc = store_cephfs_dir_name(dir, name, -EEXIST);
	if (rc) {
		return rc;
	}
	rc = ceph_ll_create(sc->cm, dir->in, name,
			    store_cephfs_mode(sattr, STORE_CEPHFS_FILE_MODE),
			    O_RDWR | O_CREAT | O_EXCL, &in, &fh, &stx,
			    STORE_CEPHFS_WANT, AT_SYMLINK_NOFOLLOW,
			    sc->root_perms);
	if (rc == -EEXIST) {
		return store_cephfs_create_existing(sc, dir, name, how, sattr,
						    verf, out);
	}
	if (rc) {
		return store__cephfs_err(rc);
	}
	ceph_ll_close(sc->cm, fh);
	if (how == STORE_CREATE_EXCLUSIVE) {
		rc = ceph_ll_setxattr(sc->cm, in, STORE_CEPHFS_VERF_XATTR, verf,
				      8, 0, sc->root_perms);
		if (rc) {
			ceph_ll_put(sc->cm, in);
			ceph_ll_unlink(sc->cm, dir->in, name, sc->root_perms);
			return rc == -EOPNOTSUPP ? -STORE_ENOTSUPP
						 : store__cephfs_err(rc);
		}
	}
	return store_cephfs_new_obj(sc, in, &stx, sattr, cred, out);
}

int store__cephfs_mkdir(struct store *st, struct store_obj *dirp,
			const char *name, const struct store_sattr *sattr,
			const struct store_cred *cred, struct store_obj **out)
{
	struct store_cephfs *sc = store__cephfs(st);
	struct cephfs_obj *dir = store__cephfs_obj(dirp);
	struct ceph_statx stx;
	Inode *in;
	int rc;

	rc = store_cephfs_dir_name(dir, name, -EEXIST);
	if (rc) {
		return rc;
	}
	rc = ceph_ll_mkdir(sc->cm, dir->in, name,
			   store_cephfs_mode(sattr, STORE_CEPHFS_DIR_MODE), &in,
			   &stx, STORE_CEPHFS_WANT, AT_SYMLINK_NOFOLLOW,
			   sc->root_perms);
	if (rc) {
		return store__cephfs_err(rc);
	}
	return store_cephfs_new_obj(sc, in, &stx, sattr, cred, out);
}

int store__cephfs_symlink(struct store *st, struct store_obj *dirp,
			  const char *name, const char *target,
			  const struct store_sattr *sattr,
			  const struct store_cred *cred, struct store_obj **out)
{
	struct store_cephfs *sc = store__cephfs(st);
	struct cephfs_obj *dir = store__cephfs_obj(dirp);
	struct ceph_statx stx;
	Inode *in;
	int rc;

	rc = store_cephfs_dir_name(dir, name, -EEXIST);
	if (rc) {
		return rc;
	}
	if (strnlen(target, STORE_PATH_MAX + 1) > STORE_PATH_MAX) {
		return -ENAMETOOLONG;
	}
	rc = ceph_ll_symlink(sc->cm, dir->in, name, target, &in, &stx,
			     STORE_CEPHFS_WANT, AT_SYMLINK_NOFOLLOW,
			     sc->root_perms);
	if (rc) {
		return store__cephfs_err(rc);
	}
	return store_cephfs_new_obj(sc, in, &stx, sattr, cred, out);
}

int store__cephfs_mknod(struct store *st, struct store_obj *dirp,
			const char *name, enum store_ftype type,
			uint32_t rdev_major, uint32_t rdev_minor,
			const struct store_sattr *sattr,
			const struct store_cred *cred, struct store_obj **out)
{
	struct store_cephfs *sc = store__cephfs(st);
	struct cephfs_obj *dir = store__cephfs_obj(dirp);
	struct ceph_statx stx;
	dev_t rdev;
	mode_t fmt;
	Inode *in;
	int rc;

	rc = store__node_mode(type, rdev_major, rdev_minor, &fmt, &rdev);
	if (rc) {
		return rc;
	}
	rc = store_cephfs_dir_name(dir, name, -EEXIST);
	if (rc) {
		return rc;
	}
	rc = ceph_ll_mknod(
		sc->cm, dir->in, name,
		fmt | store_cephfs_mode(sattr, STORE_CEPHFS_FILE_MODE), rdev,
		&in, &stx, STORE_CEPHFS_WANT, AT_SYMLINK_NOFOLLOW,
		sc->root_perms);
	if (rc) {
		return store__cephfs_err(rc);
	}
	return store_cephfs_new_obj(sc, in, &stx, sattr, cred, out);
}

/* The inode number @name in @dir has now (0: none), to drop its object
 * from the cache once the name goes (its open file then closes), and
 * its mode in *mode (0: none; @mode may be NULL). */
static uint64_t store_cephfs_name_ino(struct store_cephfs *sc,
				      struct cephfs_obj *dir, const char *name,
				      mode_t *mode)
{
	struct ceph_statx stx;
	Inode *in;

	if (mode != NULL) {
		*mode = 0;
	}
	if (ceph_ll_lookup(sc->cm, dir->in, name, &in, &stx,
			   CEPH_STATX_INO | CEPH_STATX_MODE,
			   AT_SYMLINK_NOFOLLOW, sc->root_perms) != 0) {
		return 0;
	}
	ceph_ll_put(sc->cm, in);
	if (mode != NULL) {
		*mode = stx.stx_mode;
	}
	return stx.stx_ino;
}

/* REMOVE and RMDIR: @dot_err answers "." and "..". */
static int store_cephfs_unlink(struct store *st, struct store_obj *dirp,
			       const char *name, bool rmdir, int dot_err)
{
	struct store_cephfs *sc = store__cephfs(st);
	struct cephfs_obj *dir = store__cephfs_obj(dirp);
	uint64_t ino;
	int rc;

	rc = store_cephfs_dir_name(dir, name, dot_err);
	if (rc) {
		return rc;
	}
	ino = store_cephfs_name_ino(sc, dir, name, NULL);
	rc = rmdir ? ceph_ll_rmdir(sc->cm, dir->in, name, sc->root_perms)
		   : ceph_ll_unlink(sc->cm, dir->in, name, sc->root_perms);
	if (rc) {
		return store__cephfs_err(rc);
	}
	if (ino) {
		store__cephfs_cache_drop(sc, ino);
	}
	return 0;
}

int store__cephfs_remove(struct store *st, struct store_obj *dirp,
			 const char *name)
{
	return store_cephfs_unlink(st, dirp, name, false, -EACCES);
}

int store__cephfs_rmdir(struct store *st, struct store_obj *dirp,
			const char *name)
{
	return store_cephfs_unlink(st, dirp, name, true, -EINVAL);
}

int store__cephfs_rename(struct store *st, struct store_obj *from_dirp,
			 const char *from_name, struct store_obj *to_dirp,
			 const char *to_name)
{
	struct store_cephfs *sc = store__cephfs(st);
	struct cephfs_obj *from = store__cephfs_obj(from_dirp);
	struct cephfs_obj *to = store__cephfs_obj(to_dirp);
	mode_t from_mode, to_mode;
	uint64_t ino;
	int rc;

	rc = store_cephfs_dir_name(from, from_name, -EINVAL);
	if (rc) {
		return rc;
	}
	rc = store_cephfs_dir_name(to, to_name, -EINVAL);
	if (rc) {
		return rc;
	}
	ino = store_cephfs_name_ino(sc, to, to_name, &to_mode);
	/* rename(2)'s answers where CephFS would say ENOTEMPTY first: a
	 * file onto a directory, a directory onto a file. */
	if (ino && store_cephfs_name_ino(sc, from, from_name, &from_mode) &&
	    S_ISDIR(from_mode) != S_ISDIR(to_mode)) {
		return S_ISDIR(to_mode) ? -EISDIR : -ENOTDIR;
	}
	rc = ceph_ll_rename(sc->cm, from->in, from_name, to->in, to_name,
			    sc->root_perms);
	if (rc) {
		return store__cephfs_err(rc);
	}
	/* A replaced target may be gone now; a still linked one is only
	 * resolved again. */
	if (ino) {
		store__cephfs_cache_drop(sc, ino);
	}
	return 0;
}

int store__cephfs_link(struct store *st, struct store_obj *obj,
		       struct store_obj *dirp, const char *name)
{
	struct store_cephfs *sc = store__cephfs(st);
	struct cephfs_obj *o = store__cephfs_obj(obj);
	struct cephfs_obj *dir = store__cephfs_obj(dirp);
	int rc;

	rc = store_cephfs_dir_name(dir, name, -EEXIST);
	if (rc) {
		return rc;
	}
	if (o->type == STORE_DIR) {
		return -EISDIR;
	}
	if (o->snapid != CEPH_NOSNAP) {
		return -EXDEV; /* a snapshot's file into the live tree */
	}
	rc = ceph_ll_link(sc->cm, o->in, dir->in, name, sc->root_perms);
	return store__cephfs_err(rc);
}
