// SPDX-License-Identifier: Apache-2.0
/*
 * local: the datastore backend for a directory of the server's disk: its
 * open and close, handle resolution, LOOKUP (RFC 1813 3.3.3) and the ops
 * table; the other ops live in local_attr.c, local_io.c, local_ns.c and
 * local_dir.c.
 *
 * Privilege: handles are resolved with open_by_handle_at(2), which needs
 * CAP_DAC_READ_SEARCH (dsnfsd runs as root).  The store acts with the
 * server's privileges and checks no permission of the caller: the cred
 * passed to the create ops only sets the new object's owner, and the nfs3
 * layer checks access (and squashing) before it calls an op.
 *
 * Export boundary.  Every name is resolved with *at() calls relative to an
 * O_PATH directory descriptor, with O_NOFOLLOW / AT_SYMLINK_NOFOLLOW: the
 * store never follows a symlink; ".." of the export root is the root; a
 * mount point inside the export is not crossed (-EACCES).  A handle must
 * carry a valid MAC and this export's id, and the object it names must be
 * on the root's filesystem (st_dev).  A directory must moreover reach the
 * root by walking ".." (at most STORE_LOCAL_DEPTH_MAX steps).  A
 * non-directory has no "..": when the kernel knows a path for it
 * (/proc/self/fd/N names a connected dentry) that path must lie under the
 * root's; a disconnected one (cold dcache after a restart) is accepted on
 * the strength of its MAC.  To make the boundary absolute regardless of the
 * MAC, give each datastore its own filesystem.  An object that fails these
 * checks, a deleted file and an unknown inode all give -ESTALE.
 *
 * Names: empty or containing '/' -> -EACCES (what Linux's lookup_one_len()
 * and hence knfsd answer; NFS3ERR_ACCES is a legal reply of every
 * procedure that takes a name), longer than STORE_NAME_MAX ->
 * -ENAMETOOLONG.  "." and ".." as the target of a change: see local_ns.c.
 */
#include "nfsd/store/local/local_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nfsd/base/log.h"
#include "nfsd/store/ilog/ilog.h"

int store__local_obj_from_fd(struct store_local *sl, int fd, bool io_fd_rw,
			     struct local_obj **out)
{
	struct store_kfh kfh;
	struct local_obj *obj;
	struct store_fh fh;
	struct stat st;
	int err;

	if (fstat(fd, &st) != 0) {
		err = -errno;
		goto out_close;
	}
	if (st.st_dev != sl->root_dev) {
		err = -EACCES;
		goto out_close;
	}
	err = store__kfh_get(fd, "", AT_EMPTY_PATH, &kfh);
	if (err) {
		goto out_close;
	}
	store__fh_encode(&sl->secret, sl->base.export_id, &kfh, &fh);
	/* Already cached (a LOOKUP of a known name): the cached object, as
	 * store__fcache_put() would return, without allocating a new one
	 * only to drop it (no allocation per call in steady state). */
	obj = store__fcache_get(sl->fc, &fh);
	if (obj) {
		close(fd);
		*out = obj;
		return 0;
	}
	err = store__obj_new(fd, io_fd_rw, &st, &fh, &obj);
	if (err) {
		return err;
	}
	*out = store__fcache_put(sl->fc, obj);
	return 0;

out_close:
	close(fd);
	return err;
}

/* 0 when directory @fd reaches the export root by "..", else -ESTALE. */
static int store_local_dir_inside(struct store_local *sl, int fd)
{
	struct stat cur_st, up_st;
	int cur = fd;
	int err = -ESTALE;
	int depth;
	int up;

	if (fstat(cur, &cur_st) != 0) {
		return -errno;
	}
	for (depth = 0; depth < STORE_LOCAL_DEPTH_MAX; depth++) {
		if (cur_st.st_dev != sl->root_dev) {
			break;
		}
		if (cur_st.st_ino == sl->root_ino) {
			err = 0;
			break;
		}
		up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (up < 0) {
			err = -errno;
			break;
		}
		if (fstat(up, &up_st) != 0) {
			err = -errno;
			close(up);
			break;
		}
		if (cur != fd) {
			close(cur);
		}
		cur = up;
		/* ".." of a filesystem's root is itself: we left the tree. */
		if (up_st.st_dev == cur_st.st_dev &&
		    up_st.st_ino == cur_st.st_ino) {
			break;
		}
		cur_st = up_st;
	}
	if (cur != fd) {
		close(cur);
	}
	return err;
}

/* 0 unless the kernel's path of non-directory @fd lies outside the root. */
static int store_local_path_inside(struct store_local *sl, int fd)
{
	char link[32];
	char path[sizeof(sl->root_path)];
	ssize_t n;

	if (sl->root_path_len == 0 || strcmp(sl->root_path, "/") == 0) {
		return 0;
	}
	store__proc_fd_path(fd, link, sizeof(link));
	n = readlink(link, path, sizeof(path));
	/* "/" is what a disconnected dentry shows: it tells nothing. */
	if (n <= 0 || (n == 1 && path[0] == '/')) {
		return 0;
	}
	if ((size_t)n > sl->root_path_len &&
	    memcmp(path, sl->root_path, sl->root_path_len) == 0 &&
	    path[sl->root_path_len] == '/') {
		return 0;
	}
	return -ESTALE;
}

/* The kernel's name for the object, less the datastore's root. */
static int store_local_path(struct store *st, const struct store_obj *sobj,
			    char *buf, size_t len)
{
	const struct local_obj *obj = local_obj_const(sobj);
	struct store_local *sl = store__local(st);
	char link[32];
	char path[sizeof(sl->root_path)];
	ssize_t n;

	store__proc_fd_path(obj->fd, link, sizeof(link));
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0 || len == 0) {
		return -ENOENT;
	}
	path[n] = '\0';
	if ((size_t)n == sl->root_path_len &&
	    memcmp(path, sl->root_path, (size_t)n) == 0) {
		snprintf(buf, len, "/");
		return 0;
	}
	if ((size_t)n <= sl->root_path_len ||
	    memcmp(path, sl->root_path, sl->root_path_len) != 0 ||
	    path[sl->root_path_len] != '/') {
		return -ENOENT;
	}
	snprintf(buf, len, "%s", path + sl->root_path_len);
	return 0;
}

/* Checks a freshly opened @fd of a handle of this export. */
static int store_local_check_new(struct store_local *sl, int fd,
				 struct stat *st)
{
	int err;

	if (fstat(fd, st) != 0) {
		return -errno;
	}
	if (st->st_nlink == 0) {
		return -ESTALE;
	}
	if (st->st_dev != sl->root_dev) {
		err = -ESTALE;
	} else if (S_ISDIR(st->st_mode)) {
		err = store_local_dir_inside(sl, fd);
	} else {
		err = store_local_path_inside(sl, fd);
	}
	if (err == -ESTALE) {
		log_warn("store: %s: a signed handle names a file outside the "
			 "export; refused",
			 sl->base.name);
	}
	return err;
}

/*
 * An open_by_handle_at() error as the store's.  The kernel answers ESTALE
 * for every handle it cannot decode (a deleted file too) except when it
 * ran out of memory; it may also run out of descriptors (EMFILE, ENFILE:
 * fcache.c has evicted and retried, and logs).  Those three are not an
 * answer about the file, so the call answers NFS3ERR_JUKEBOX and the
 * client asks again; the log says which, once a second at most, so that
 * a JUKEBOX for a deleted file can be traced to its cause.
 */
static int store_local_open_err(const struct store_local *sl, int err)
{
	static _Atomic time_t logged;
	time_t now;

	switch (err) {
	case -ENOMEM:
	case -EMFILE:
	case -ENFILE:
		now = time(NULL);
		if (atomic_exchange(&logged, now) != now) {
			log_warn("store: %s: open_by_handle_at: %s; answering "
				 "NFS3ERR_JUKEBOX (the client retries)",
				 sl->base.name, strerror(-err));
		}
		return err;
	case -EPERM:
		return err;
	default:
		return -ESTALE;
	}
}

/*
 * Resolves @fh; *sb returns the object's stat.  A cached object is looked
 * at once (fstat of its O_PATH descriptor): an unlinked file must not be
 * served from the cache (-ESTALE, as a fresh open_by_handle_at() would
 * say), and the same stat gives the caller its attributes, so a cached
 * file costs one stat per call.
 */
/* @obj, found in the cache under @fh (a reference taken), if its file
 * is still there: 0 with its attributes in @sb, or -ESTALE (dropped). */
static int store_local_cached(struct store_local *sl, const struct store_fh *fh,
			      struct local_obj *obj, struct local_obj **out,
			      struct stat *sb)
{
	if (fstat(obj->fd, sb) == 0 && sb->st_nlink > 0) {
		*out = obj;
		return 0;
	}
	store__fcache_drop(sl->fc, fh);
	store__obj_unref(obj);
	return -ESTALE;
}

static int store_local_resolve_stat(struct store *st, const struct store_fh *fh,
				    struct local_obj **out, struct stat *sb)
{
	struct store_local *sl = store__local(st);
	struct store_fh canon;
	struct store_kfh kfh;
	struct local_obj *obj;
	uint32_t export_id;
	int err;
	int fd;

	/* A handle in the cache is one this server issued or checked: the
	 * cache compares every byte, the MAC included, so the MAC (two
	 * SHA-256 blocks) is not computed again.  Version-1 handles are
	 * cached under their version-2 form, never under their own bytes. */
	if (!store__fh_is_legacy(fh) &&
	    store_fh_export_id(fh, &export_id) == 0 &&
	    export_id == st->export_id) {
		obj = store__fcache_get(sl->fc, fh);
		if (obj != NULL) {
			return store_local_cached(sl, fh, obj, out, sb);
		}
	}
	err = store__fh_decode(&sl->secret, fh, &export_id, &kfh);
	if (err) {
		return err;
	}
	if (export_id != st->export_id) {
		return -STORE_EBADHANDLE;
	}
	if (store__fh_is_legacy(fh)) {
		/* One object per file: the cache is keyed by the handle we
		 * issue today for the same kernel handle. */
		store__fh_encode(&sl->secret, export_id, &kfh, &canon);
		fh = &canon;
	}
	obj = store__fcache_get(sl->fc, fh);
	if (obj != NULL) {
		return store_local_cached(sl, fh, obj, out, sb);
	}
	/* Evicted while the log holds records of it: that object, not a
	 * new one that knows none of them (ilog.h, store__ilog_held). */
	obj = st->ilog ? store__ilog_held(st->ilog, fh) : NULL;
	if (obj != NULL) {
		return store_local_cached(
			sl, fh, store__fcache_put(sl->fc, obj), out, sb);
	}
	fd = store__local_kfh_open(sl, &kfh, O_PATH | O_NOFOLLOW);
	if (fd == -ENOMEM) {
		/* A kernel allocation that failed under pressure often
		 * succeeds a moment later; one more try is one syscall. */
		fd = store__local_kfh_open(sl, &kfh, O_PATH | O_NOFOLLOW);
	}
	if (fd < 0) {
		return store_local_open_err(sl, fd);
	}
	err = store_local_check_new(sl, fd, sb);
	if (err) {
		close(fd);
		return err;
	}
	err = store__obj_new(fd, false, sb, fh, &obj);
	if (err) {
		return err;
	}
	*out = store__fcache_put(sl->fc, obj);
	return 0;
}

static int store_local_resolve(struct store *st, const struct store_fh *fh,
			       struct store_obj **out)
{
	struct local_obj *obj;
	struct stat sb;
	int err;

	err = store_local_resolve_stat(st, fh, &obj, &sb);
	if (!err) {
		*out = &obj->base;
	}
	return err;
}

static int store_local_resolve_attr(struct store *st, const struct store_fh *fh,
				    struct store_obj **out,
				    struct store_attr *attr)
{
	struct local_obj *obj;
	struct stat sb;
	int err;

	err = store_local_resolve_stat(st, fh, &obj, &sb);
	if (err) {
		return err;
	}
	*out = &obj->base;
	store__local_attr_from_stat(st, &sb, attr);
	return 0;
}

static void store_local_obj_fh(const struct store_obj *obj, struct store_fh *fh)
{
	*fh = obj->fh;
}

static void store_local_obj_ref(struct store_obj *obj)
{
	store__obj_ref(local_obj(obj));
}

static void store_local_obj_unref(struct store_obj *obj)
{
	store__obj_unref(obj ? local_obj(obj) : NULL);
}

static int store_local_root(struct store *st, struct store_obj **out)
{
	struct store_local *sl = store__local(st);

	store__obj_ref(sl->root);
	*out = &sl->root->base;
	return 0;
}

static bool store_local_is_root(const struct store_local *sl,
				const struct local_obj *obj)
{
	return obj->dev == sl->root_dev && obj->ino == sl->root_ino;
}

static int store_local_lookup(struct store *st, struct store_obj *sdir,
			      const char *name, struct store_obj **out)
{
	struct local_obj *dir = local_obj(sdir);
	struct store_local *sl = store__local(st);
	int err;
	int fd;

	if (dir->type != STORE_DIR) {
		return -ENOTDIR;
	}
	err = store__name_check(name);
	if (err) {
		return err;
	}
	if (strcmp(name, ".") == 0 ||
	    (strcmp(name, "..") == 0 && store_local_is_root(sl, dir))) {
		if (strcmp(name, ".") != 0) {
			dir = sl->root;
		}
		store__obj_ref(dir);
		*out = &dir->base;
		return 0;
	}
	fd = store__local_openat(sl, dir->fd, name,
				 O_PATH | O_NOFOLLOW | O_CLOEXEC, 0);
	if (fd < 0) {
		return fd;
	}
	err = store__local_obj_from_fd(sl, fd, false, &dir);
	if (!err) {
		*out = &dir->base;
	}
	return err;
}

static void store_local_close(struct store *st)
{
	struct store_local *sl = store__local(st);

	store__fcache_free(sl->fc);
	store__obj_unref(sl->root);
	close(sl->root_fd);
	explicit_bzero(&sl->secret, sizeof(sl->secret));
	free(sl);
}

static const struct store_ops store_local_ops = {
	.resolve = store_local_resolve,
	.obj_ref = store_local_obj_ref,
	.obj_unref = store_local_obj_unref,
	.obj_fh = store_local_obj_fh,
	.root = store_local_root,
	.getattr = store__local_getattr,
	.setattr = store__local_setattr,
	.lookup = store_local_lookup,
	.readlink = store__local_readlink,
	.read = store__local_read,
	.write = store__local_write,
	.write_async = store__local_write_async,
	.commit = store__local_commit,
	.create = store__local_create,
	.mkdir = store__local_mkdir,
	.symlink = store__local_symlink,
	.mknod = store__local_mknod,
	.remove = store__local_remove,
	.rmdir = store__local_rmdir,
	.rename = store__local_rename,
	.link = store__local_link,
	.readdir = store__local_readdir,
	.fsstat = store__local_fsstat,
	.path = store_local_path,
	.close = store_local_close,
	.resolve_attr = store_local_resolve_attr,
	.read_ref = store__local_read_ref,
	.ref_pread = store__local_ref_pread,
	.cache_resize = store_local_cache_resize,
	.tree_open = store__local_tree_open,
	.snap = &store__local_snap_ops,
};

static void store_local_err(char *errbuf, size_t errlen, const char *path,
			    const char *what, int err)
{
	if (errbuf != NULL && errlen > 0) {
		snprintf(errbuf, errlen, "%s: %s: %s", path, what,
			 strerror(-err));
	}
}

/* Opens the root, learns its identity and makes the root object. */
static int store_local_root_open(struct store_local *sl, const char *path,
				 char *errbuf, size_t errlen)
{
	struct store_kfh kfh;
	struct store_fh fh;
	struct stat st;
	char link[32];
	ssize_t n;
	int err;
	int fd;

	sl->root_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sl->root_fd < 0) {
		err = -errno;
		store_local_err(errbuf, errlen, path, "cannot open", err);
		return err;
	}
	if (fstat(sl->root_fd, &st) != 0) {
		err = -errno;
		store_local_err(errbuf, errlen, path, "stat", err);
		return err;
	}
	sl->root_dev = st.st_dev;
	sl->root_ino = st.st_ino;
	store__proc_fd_path(sl->root_fd, link, sizeof(link));
	n = readlink(link, sl->root_path, sizeof(sl->root_path) - 1);
	if (n <= 0 || (size_t)n >= sizeof(sl->root_path) - 1) {
		err = n < 0 ? -errno : -ENAMETOOLONG;
		store_local_err(errbuf, errlen, path,
				"needs /proc/self/fd (is /proc mounted?)", err);
		return err;
	}
	sl->root_path[n] = '\0';
	sl->root_path_len = (size_t)n;
	err = store__kfh_get(sl->root_fd, "", AT_EMPTY_PATH, &kfh);
	if (err) {
		store_local_err(errbuf, errlen, path,
				err == -EOVERFLOW
					? "file handles too long for 56 bytes"
					: "filesystem gives no file handles",
				err);
		return err;
	}
	fd = store__kfh_open(sl->root_fd, &kfh, O_PATH | O_NOFOLLOW);
	if (fd < 0) {
		store_local_err(errbuf, errlen, path,
				"open_by_handle_at (needs CAP_DAC_READ_SEARCH)",
				fd);
		return fd;
	}
	store__fh_encode(&sl->secret, sl->base.export_id, &kfh, &fh);
	err = store__obj_new(fd, false, &st, &fh, &sl->root);
	if (err) {
		store_local_err(errbuf, errlen, path, "root", err);
		return err;
	}
	store__obj_ref(sl->root);
	store__obj_unref(store__fcache_put(sl->fc, sl->root));
	return 0;
}

/* Where the snapshot manifest of datastore @name is: the state directory
 * as an absolute path when it can be had (the server does not change
 * directory, but a manifest's name should not depend on it). */
static void store_local_manifest_name(struct store_local *sl,
				      const char *state_dir, const char *name)
{
	char *abs = realpath(state_dir, NULL);
	int n;

	n = snprintf(sl->snap_manifest, sizeof(sl->snap_manifest),
		     "%s/snapshots-%s.manifest", abs ? abs : state_dir, name);
	if (n < 0 || (size_t)n >= sizeof(sl->snap_manifest)) {
		sl->snap_manifest[0] = '\0';
	}
	free(abs);
}

int store_local_open(const char *name, const char *path, uint32_t export_id,
		     const char *state_dir, struct store **out, char *errbuf,
		     size_t errlen)
{
	struct store_local *sl;
	int err;

	sl = calloc(1, sizeof(*sl));
	if (sl == NULL) {
		store_local_err(errbuf, errlen, path, "store", -ENOMEM);
		return -ENOMEM;
	}
	sl->root_fd = -1;
	sl->base.ops = &store_local_ops;
	sl->base.export_id = export_id;
	sl->base.group_commit = true;
	if (strlen(name) >= sizeof(sl->base.name)) {
		err = -ENAMETOOLONG;
		store_local_err(errbuf, errlen, path, "datastore name", err);
		goto out_free;
	}
	strcpy(sl->base.name, name);
	store_local_manifest_name(sl, state_dir, name);
	err = store__secret_load(state_dir, &sl->secret, errbuf, errlen);
	if (err) {
		goto out_free;
	}
	err = store__fcache_new(STORE_FCACHE_DEFAULT_ENTRIES, &sl->fc);
	if (err) {
		store_local_err(errbuf, errlen, path, "file cache", err);
		goto out_secret;
	}
	err = store_local_root_open(sl, path, errbuf, errlen);
	if (err) {
		goto out_fcache;
	}
	*out = &sl->base;
	return 0;

out_fcache:
	store__fcache_free(sl->fc);
	if (sl->root_fd >= 0) {
		close(sl->root_fd);
	}
out_secret:
	explicit_bzero(&sl->secret, sizeof(sl->secret));
out_free:
	free(sl);
	return err;
}
