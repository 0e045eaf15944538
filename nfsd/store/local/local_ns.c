// SPDX-License-Identifier: Apache-2.0
/*
 * local_ns: the namespace ops of the local backend: CREATE, MKDIR,
 * SYMLINK, MKNOD, REMOVE, RMDIR, RENAME and LINK (RFC 1813 3.3.8 - 3.3.15),
 * as openat/mkdirat/symlinkat/mknodat/unlinkat/renameat/linkat relative to
 * the directory's O_PATH descriptor.
 *
 * A new object belongs to the caller (cred uid/gid, unless sattr sets
 * them), then gets the sattr mode (explicitly, so the process umask does
 * not matter), size and times.  Without a mode: 0644 for files and nodes,
 * 0755 for directories.
 *
 * CREATE: UNCHECKED opens an existing regular file and applies only a
 * size from sattr (knfsd does the same), GUARDED gives -EEXIST for any
 * existing name, EXCLUSIVE keeps the verifier in the xattr
 * STORE_LOCAL_VERF_XATTR: a retry with the same verifier returns the file,
 * another verifier or an existing name without one gives -EEXIST.  A
 * filesystem without xattrs (or a server without CAP_SYS_ADMIN, which the
 * trusted namespace needs) gives -STORE_ENOTSUPP (clients then fall back
 * to GUARDED).  An existing non-regular name gives -EEXIST in every mode.
 *
 * Every change is durable before the call returns (local_sync.c): the
 * directory it changed is synced, and a new file or directory too.
 *
 * "." and ".." as the name to change: -EEXIST for the create ops and
 * LINK, -EACCES for REMOVE (as knfsd), -EINVAL for RMDIR and RENAME (both
 * list NFS3ERR_INVAL).  A removed or replaced name's object is dropped from
 * the fcache so that its descriptors close and its space is freed.
 */
#include "nfsd/store/local/local_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#define STORE_LOCAL_FILE_MODE 0644
#define STORE_LOCAL_DIR_MODE 0755

/* Checks @dir and @name for a change; @dot_err is the answer for "."/"..". */
static int store_local_dir_name(const struct local_obj *dir, const char *name,
				int dot_err)
{
	int err;

	if (dir->type != STORE_DIR) {
		return -ENOTDIR;
	}
	err = store__name_check(name);
	if (err) {
		return err;
	}
	return store__name_is_dot(name) ? dot_err : 0;
}

static mode_t store_local_mode(const struct store_sattr *sattr, mode_t dflt)
{
	return sattr != NULL && sattr->set_mode ? sattr->mode & 07777 : dflt;
}

/* Gives a new @obj its owner, then the rest of @sattr (may be NULL). */
static int store_local_init_attrs(struct store *st, struct local_obj *obj,
				  const struct store_sattr *sattr,
				  const struct store_cred *cred)
{
	struct store_sattr s;

	store__new_obj_sattr(sattr, cred, obj->type, &s);
	return store__local_sattr_apply(st, obj, &s);
}

/* Makes the object of the new file open as @fd (takes it; @io_fd_rw as in
 * store__local_obj_from_fd()) and gives it its attributes. */
static int store_local_obj_init(struct store_local *sl, int fd, bool io_fd_rw,
				const struct store_sattr *sattr,
				const struct store_cred *cred,
				struct local_obj **out)
{
	struct local_obj *obj;
	int err;

	err = store__local_obj_from_fd(sl, fd, io_fd_rw, &obj);
	if (err) {
		return err;
	}
	err = store_local_init_attrs(&sl->base, obj, sattr, cred);
	if (err) {
		store__obj_unref(obj);
		return err;
	}
	*out = obj;
	return 0;
}

/* Makes the object of a new @name in @dir and gives it its attributes. */
static int store_local_new_obj(struct store_local *sl, struct local_obj *dir,
			       const char *name,
			       const struct store_sattr *sattr,
			       const struct store_cred *cred,
			       struct local_obj **out)
{
	int fd;

	fd = store__local_openat(sl, dir->fd, name,
				 O_PATH | O_NOFOLLOW | O_CLOEXEC, 0);
	if (fd < 0) {
		return fd;
	}
	return store_local_obj_init(sl, fd, false, sattr, cred, out);
}

/*
 * After a call made @out (or an error, @err) in @dir: the new object (a
 * file or directory) and the directory's new entry durable before the
 * reply (local_sync.c).  Drops *out when that fails.
 */
static int store_local_made_durable(struct store_local *sl,
				    struct local_obj *dir, int err,
				    struct local_obj **out)
{
	if (err) {
		return err;
	}
	if ((*out)->type == STORE_REG || (*out)->type == STORE_DIR) {
		err = store__local_sync_obj(sl, *out);
	}
	if (!err) {
		err = store__local_sync_dir(dir);
	}
	if (err) {
		store__obj_unref(*out);
		*out = NULL;
	}
	return err;
}

/* CREATE of a name that exists: the UNCHECKED and EXCLUSIVE retry cases. */
static int store_local_create_existing(struct store_local *sl,
				       struct local_obj *dir, const char *name,
				       enum store_create_how how,
				       const struct store_sattr *sattr,
				       const uint8_t verf[8],
				       struct local_obj **out)
{
	struct store_sattr size_only = { 0 };
	struct local_obj *obj;
	uint8_t have[8];
	char path[32];
	struct stat sb;
	ssize_t n;
	int err;
	int fd;

	if (how == STORE_CREATE_GUARDED) {
		return -EEXIST;
	}
	fd = store__local_openat(sl, dir->fd, name,
				 O_PATH | O_NOFOLLOW | O_CLOEXEC, 0);
	if (fd < 0) {
		return fd;
	}
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return -EEXIST;
	}
	if (how == STORE_CREATE_EXCLUSIVE) {
		store__proc_fd_path(fd, path, sizeof(path));
		n = getxattr(path, STORE_LOCAL_VERF_XATTR, have, sizeof(have));
		if (n != sizeof(have) ||
		    memcmp(have, verf, sizeof(have)) != 0) {
			close(fd);
			return -EEXIST;
		}
	}
	err = store__local_obj_from_fd(sl, fd, false, &obj);
	if (err) {
		return err;
	}
	if (how == STORE_CREATE_UNCHECKED && sattr != NULL && sattr->set_size) {
		size_only.set_size = true;
		size_only.size_bytes = sattr->size_bytes;
		err = store__local_sattr_apply(&sl->base, obj, &size_only);
		if (!err) {
			err = store__local_sync_obj(sl, obj);
		}
		if (err) {
			store__obj_unref(obj);
			return err;
		}
	}
	*out = obj;
	return 0;
}

/* Hands the new object @made out as its head in *out, after
 * store_local_made_durable() returned @err. */
static int store_local_made_pub(int err, struct local_obj *made,
				struct store_obj **out)
{
	if (!err) {
		*out = &made->base;
	}
	return err;
}

int store__local_create(struct store *st, struct store_obj *sdir,
			const char *name, enum store_create_how how,
			const struct store_sattr *sattr, const uint8_t verf[8],
			const struct store_cred *cred, struct store_obj **out)
{
	struct local_obj *dir = local_obj(sdir);
	struct local_obj *made = NULL;
	struct store_local *sl = store__local(st);
	int err;
	int fd;

	err = store_local_dir_name(dir, name, -EEXIST);
	if (err) {
		return err;
	}
	/* EMFILE comes before the file is made: the retry is safe. */
	fd = store__local_openat(
		sl, dir->fd, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
		store_local_mode(sattr, STORE_LOCAL_FILE_MODE));
	if (fd == -EEXIST) {
		err = store_local_create_existing(sl, dir, name, how, sattr,
						  verf, &made);
		return store_local_made_pub(err, made, out);
	}
	if (fd < 0) {
		return fd;
	}
	if (how == STORE_CREATE_EXCLUSIVE &&
	    fsetxattr(fd, STORE_LOCAL_VERF_XATTR, verf, 8, 0) != 0) {
		/* EPERM: no CAP_SYS_ADMIN for the trusted namespace. */
		err = errno == EOPNOTSUPP || errno == EPERM ? -STORE_ENOTSUPP
							    : -errno;
		close(fd);
		unlinkat(dir->fd, name, 0);
		return err;
	}
	err = store_local_obj_init(sl, fd, true, sattr, cred, &made);
	err = store_local_made_durable(sl, dir, err, &made);
	return store_local_made_pub(err, made, out);
}

int store__local_mkdir(struct store *st, struct store_obj *sdir,
		       const char *name, const struct store_sattr *sattr,
		       const struct store_cred *cred, struct store_obj **out)
{
	struct local_obj *dir = local_obj(sdir);
	struct local_obj *made = NULL;
	int err;

	err = store_local_dir_name(dir, name, -EEXIST);
	if (err) {
		return err;
	}
	if (mkdirat(dir->fd, name,
		    store_local_mode(sattr, STORE_LOCAL_DIR_MODE)) != 0) {
		return -errno;
	}
	err = store_local_new_obj(store__local(st), dir, name, sattr, cred,
				  &made);
	err = store_local_made_durable(store__local(st), dir, err, &made);
	return store_local_made_pub(err, made, out);
}

int store__local_symlink(struct store *st, struct store_obj *sdir,
			 const char *name, const char *target,
			 const struct store_sattr *sattr,
			 const struct store_cred *cred, struct store_obj **out)
{
	struct local_obj *dir = local_obj(sdir);
	struct local_obj *made = NULL;
	int err;

	err = store_local_dir_name(dir, name, -EEXIST);
	if (err) {
		return err;
	}
	if (strnlen(target, STORE_PATH_MAX + 1) > STORE_PATH_MAX) {
		return -ENAMETOOLONG;
	}
	if (symlinkat(target, dir->fd, name) != 0) {
		return -errno;
	}
	err = store_local_new_obj(store__local(st), dir, name, sattr, cred,
				  &made);
	err = store_local_made_durable(store__local(st), dir, err, &made);
	return store_local_made_pub(err, made, out);
}

int store__local_mknod(struct store *st, struct store_obj *sdir,
		       const char *name, enum store_ftype type,
		       uint32_t rdev_major, uint32_t rdev_minor,
		       const struct store_sattr *sattr,
		       const struct store_cred *cred, struct store_obj **out)
{
	struct local_obj *dir = local_obj(sdir);
	struct local_obj *made = NULL;
	dev_t rdev;
	mode_t fmt;
	int err;

	err = store__node_mode(type, rdev_major, rdev_minor, &fmt, &rdev);
	if (err) {
		return err;
	}
	err = store_local_dir_name(dir, name, -EEXIST);
	if (err) {
		return err;
	}
	if (mknodat(dir->fd, name,
		    fmt | store_local_mode(sattr, STORE_LOCAL_FILE_MODE),
		    rdev) != 0) {
		return -errno;
	}
	err = store_local_new_obj(store__local(st), dir, name, sattr, cred,
				  &made);
	err = store_local_made_durable(store__local(st), dir, err, &made);
	return store_local_made_pub(err, made, out);
}

/* The handle @name in @dir has now, to drop from the cache once it goes.
 * Returns false when there is none (no such name, no handle). */
static bool store_local_name_fh(struct store_local *sl, struct local_obj *dir,
				const char *name, struct store_fh *fh)
{
	struct store_kfh kfh;

	if (store__kfh_get(dir->fd, name, 0, &kfh) != 0) {
		return false;
	}
	store__fh_encode(&sl->secret, sl->base.export_id, &kfh, fh);
	return true;
}

static int store_local_unlink(struct store *st, struct local_obj *dir,
			      const char *name, int flags, int dot_err)
{
	struct store_local *sl = store__local(st);
	struct store_fh fh;
	bool known;
	int err;

	err = store_local_dir_name(dir, name, dot_err);
	if (err) {
		return err;
	}
	known = store_local_name_fh(sl, dir, name, &fh);
	if (unlinkat(dir->fd, name, flags) != 0) {
		return -errno;
	}
	if (known) {
		store__fcache_drop_unlinked(sl->fc, &fh);
	}
	return store__local_sync_dir(dir);
}

int store__local_remove(struct store *st, struct store_obj *sdir,
			const char *name)
{
	struct local_obj *dir = local_obj(sdir);
	return store_local_unlink(st, dir, name, 0, -EACCES);
}

int store__local_rmdir(struct store *st, struct store_obj *sdir,
		       const char *name)
{
	struct local_obj *dir = local_obj(sdir);
	return store_local_unlink(st, dir, name, AT_REMOVEDIR, -EINVAL);
}

int store__local_rename(struct store *st, struct store_obj *sfrom_dir,
			const char *from_name, struct store_obj *sto_dir,
			const char *to_name)
{
	struct local_obj *from_dir = local_obj(sfrom_dir);
	struct local_obj *to_dir = local_obj(sto_dir);
	struct store_local *sl = store__local(st);
	struct store_fh fh;
	bool known;
	int err;

	err = store_local_dir_name(from_dir, from_name, -EINVAL);
	if (err) {
		return err;
	}
	err = store_local_dir_name(to_dir, to_name, -EINVAL);
	if (err) {
		return err;
	}
	known = store_local_name_fh(sl, to_dir, to_name, &fh);
	if (renameat(from_dir->fd, from_name, to_dir->fd, to_name) != 0) {
		return -errno;
	}
	/* A replaced target may be gone now; one still linked elsewhere
	 * (or renamed onto its own hard link) keeps its cached object. */
	if (known) {
		store__fcache_drop_unlinked(sl->fc, &fh);
	}
	err = store__local_sync_dir(to_dir);
	if (!err && from_dir != to_dir) {
		err = store__local_sync_dir(from_dir);
	}
	return err;
}

int store__local_link(struct store *st, struct store_obj *sobj,
		      struct store_obj *sdir, const char *name)
{
	struct local_obj *obj = local_obj(sobj);
	struct local_obj *dir = local_obj(sdir);
	int err;

	(void)st;
	err = store_local_dir_name(dir, name, -EEXIST);
	if (err) {
		return err;
	}
	if (obj->type == STORE_DIR) {
		return -EISDIR;
	}
	if (linkat(obj->fd, "", dir->fd, name, AT_EMPTY_PATH) != 0) {
		return -errno;
	}
	return store__local_sync_dir(dir);
}
