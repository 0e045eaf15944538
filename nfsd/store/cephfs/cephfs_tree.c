// SPDX-License-Identifier: Apache-2.0
/*
 * cephfs_tree: the storage-side operations' file I/O on a cephfs
 * datastore (store/store_tree.h): vmdk/'s io table over this backend's
 * own ops, so that a clone, a reservation or the stats of a disk go
 * through the same objects (and used-byte bitmaps) as the NFS calls, and
 * no data leaves the cluster's client in this gateway.
 *
 * - Paths are "cephfs:NAME/" and a relative path, walked name by name
 *   with the store's lookup from the root (no symlink followed: -ELOOP;
 *   ".." above the root or an absolute name: -EXDEV; ".snap" is not
 *   reachable: the lookup refuses it).
 * - A descriptor is an index into this tree's table of objects.
 * - FIEMAP is the file's RADOS objects (cephfs_used.c): one extent per
 *   run of objects that exist, after the file is flushed, so holes stay
 *   holes in a copy and nb / tbz count what the pool holds.  SEEK_DATA /
 *   SEEK_HOLE read the same map.
 * - Pacific's libcephfs has no copy_file_range and no reflink (the kernel
 *   client's copy_file_range uses RADOS copy-from; libcephfs 16.2 does
 *   not): copy_range and clone_file are -EOPNOTSUPP, so a full clone is
 *   read and written here in 1 MiB pieces and a native clone is refused.
 * - fallocate mode 0 writes zeros into every object of the range not yet
 *   in the pool: RADOS allocates by writing, and ceph_fallocate(0) would
 *   only change the size.
 */
#include "nfsd/store/cephfs/cephfs_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nfsd/store/store_tree.h"

#define TREE_ROOT_PREFIX "cephfs:"
#define TREE_DEPTH_MAX 64
/* One store write at most: the ops take a 32-bit count. */
#define TREE_IO_MAX_BYTES (64u << 20)
#define TREE_ZERO_BYTES (1u << 20)

struct tree_fd {
	struct cephfs_obj *o; /* NULL: a free slot */
	bool flushed; /* synced once before its map was read */
};

struct cephfs_tree {
	struct store_tree pub;
	struct vmdk_io_ops ops;
	struct store_cephfs *sc;
	char root[96];
	size_t root_len;
	pthread_mutex_t lock; /* the table */
	struct tree_fd *fds;
	size_t nfds;
};

static struct cephfs_tree *tree_of(void *ctx)
{
	return ctx;
}

static struct store *tree_st(const struct cephfs_tree *t)
{
	return &t->sc->base;
}

/* ---- names ------------------------------------------------------------ */

struct tree_walk {
	struct cephfs_obj *stack[TREE_DEPTH_MAX + 1];
	size_t depth; /* stack[depth] is the current directory */
};

static void walk_fini(struct tree_walk *w)
{
	for (size_t i = 0; i <= w->depth; i++) {
		store__cephfs_obj_unref(store__cephfs_pub(w->stack[i]));
	}
}

/* Steps into @name from the current directory of @w: a directory is
 * pushed; *leaf gets any other object (owned). */
static int walk_step(struct cephfs_tree *t, struct tree_walk *w,
		     const char *name, bool last, struct cephfs_obj **leaf)
{
	struct store_obj *next;
	struct cephfs_obj *o;
	int err;

	if (!strcmp(name, ".")) {
		return last ? -EINVAL : 0;
	}
	if (!strcmp(name, "..")) {
		if (w->depth == 0) {
			return -EXDEV;
		}
		store__cephfs_obj_unref(store__cephfs_pub(w->stack[w->depth]));
		w->depth--;
		return last ? -EINVAL : 0;
	}
	err = store__cephfs_lookup(
		tree_st(t), store__cephfs_pub(w->stack[w->depth]), name, &next);
	if (err) {
		return err;
	}
	o = store__cephfs_obj(next);
	if (o->type == STORE_LNK) {
		store__cephfs_obj_unref(next);
		return -ELOOP;
	}
	if (o->type == STORE_DIR && w->depth < TREE_DEPTH_MAX) {
		w->stack[++w->depth] = o;
		return 0;
	}
	if (!last) {
		store__cephfs_obj_unref(next);
		return o->type == STORE_DIR ? -ELOOP : -ENOTDIR;
	}
	*leaf = o;
	return 0;
}

/*
 * Walks @path.  With @parent, stops before the last name: *dir the
 * directory (owned), @name its last name.  Else *out is the object
 * itself (owned; a directory too).
 */
static int tree_walk(struct cephfs_tree *t, const char *path, bool parent,
		     struct cephfs_obj **out, char name[STORE_NAME_MAX + 1])
{
	struct tree_walk w = { .depth = 0 };
	struct cephfs_obj *leaf = NULL;
	const char *p;
	int err = 0;

	if (strncmp(path, t->root, t->root_len) || path[t->root_len] != '/') {
		return -EXDEV;
	}
	p = path + t->root_len;
	w.stack[0] = t->sc->root;
	store__cephfs_obj_ref(store__cephfs_pub(t->sc->root));
	while (*p == '/') {
		p++;
	}
	while (*p && !err) {
		size_t n = strcspn(p, "/");
		char comp[STORE_NAME_MAX + 1];
		bool last;

		if (n > STORE_NAME_MAX) {
			err = -ENAMETOOLONG;
			break;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		p += n;
		while (*p == '/') {
			p++;
		}
		last = *p == '\0';
		if (last && parent) {
			if (!strcmp(comp, ".") || !strcmp(comp, "..")) {
				err = -EINVAL;
				break;
			}
			strcpy(name, comp);
			break;
		}
		err = walk_step(t, &w, comp, last, &leaf);
	}
	if (!err && parent && !name[0]) {
		err = -EINVAL; /* the root itself has no parent here */
	}
	if (err) {
		walk_fini(&w);
		return err;
	}
	if (leaf) {
		walk_fini(&w);
		*out = leaf;
		return 0;
	}
	*out = w.stack[w.depth]; /* its reference goes to the caller */
	for (size_t i = 0; i < w.depth; i++) {
		store__cephfs_obj_unref(store__cephfs_pub(w.stack[i]));
	}
	return 0;
}

/* ---- descriptors ------------------------------------------------------- */

static int fd_put(struct cephfs_tree *t, struct cephfs_obj *o)
{
	struct tree_fd *grown;
	int fd = -1;

	pthread_mutex_lock(&t->lock);
	for (size_t i = 0; i < t->nfds && fd < 0; i++) {
		if (!t->fds[i].o) {
			fd = (int)i;
		}
	}
	if (fd < 0) {
		grown = realloc(t->fds, (t->nfds + 8) * sizeof(*grown));
		if (grown) {
			memset(grown + t->nfds, 0, 8 * sizeof(*grown));
			t->fds = grown;
			fd = (int)t->nfds;
			t->nfds += 8;
		}
	}
	if (fd >= 0) {
		t->fds[fd].o = o;
		t->fds[fd].flushed = false;
	}
	pthread_mutex_unlock(&t->lock);
	return fd < 0 ? -ENOMEM : fd;
}

/* The object of @fd (borrowed while open), or NULL. */
static struct cephfs_obj *fd_get(struct cephfs_tree *t, int fd)
{
	struct cephfs_obj *o = NULL;

	pthread_mutex_lock(&t->lock);
	if (fd >= 0 && (size_t)fd < t->nfds) {
		o = t->fds[fd].o;
	}
	pthread_mutex_unlock(&t->lock);
	return o;
}

/* ---- the io table -------------------------------------------------------- */

static int tree_io_open(void *ctx, const char *path, int flags, mode_t mode,
			int *fd_out)
{
	struct cephfs_tree *t = tree_of(ctx);
	struct store_sattr sa = { .set_mode = true, .mode = mode & 07777 };
	const uint8_t verf[8] = { 0 };
	char name[STORE_NAME_MAX + 1] = "";
	struct cephfs_obj *dir, *o;
	struct store_obj *made;
	int fd, err;

	if (flags & O_CREAT) {
		err = tree_walk(t, path, true, &dir, name);
		if (err) {
			return err;
		}
		err = store__cephfs_create(
			tree_st(t), store__cephfs_pub(dir), name,
			(flags & O_EXCL) ? STORE_CREATE_GUARDED
					 : STORE_CREATE_UNCHECKED,
			&sa, verf, NULL, &made);
		store__cephfs_obj_unref(store__cephfs_pub(dir));
		if (err) {
			return err;
		}
		o = store__cephfs_obj(made);
	} else {
		err = tree_walk(t, path, false, &o, name);
		if (err) {
			return err;
		}
	}
	if ((flags & O_TRUNC) && o->type == STORE_REG) {
		struct store_sattr tr = { .set_size = true, .size_bytes = 0 };

		err = store__cephfs_setattr(tree_st(t), store__cephfs_pub(o),
					    &tr, NULL);
	}
	fd = err ? err : fd_put(t, o);
	if (fd < 0) {
		store__cephfs_obj_unref(store__cephfs_pub(o));
		return fd;
	}
	*fd_out = fd;
	return 0;
}

static int tree_io_close(void *ctx, int fd)
{
	struct cephfs_tree *t = tree_of(ctx);
	struct cephfs_obj *o = NULL;

	pthread_mutex_lock(&t->lock);
	if (fd >= 0 && (size_t)fd < t->nfds) {
		o = t->fds[fd].o;
		t->fds[fd].o = NULL;
	}
	pthread_mutex_unlock(&t->lock);
	if (!o) {
		return -EBADF;
	}
	store__cephfs_obj_unref(store__cephfs_pub(o));
	return 0;
}

static ssize_t tree_io_pread(void *ctx, int fd, void *buf, size_t len,
			     uint64_t off)
{
	struct cephfs_tree *t = tree_of(ctx);
	struct cephfs_obj *o = fd_get(t, fd);
	uint32_t n = 0;
	bool eof;
	int err;

	if (!o) {
		return -EBADF;
	}
	err = store__cephfs_read(tree_st(t), store__cephfs_pub(o), off, buf,
				 len < TREE_IO_MAX_BYTES ? (uint32_t)len
							 : TREE_IO_MAX_BYTES,
				 &n, &eof);
	return err ? err : (ssize_t)n;
}

static ssize_t tree_io_pwrite(void *ctx, int fd, const void *buf, size_t len,
			      uint64_t off)
{
	struct cephfs_tree *t = tree_of(ctx);
	struct cephfs_obj *o = fd_get(t, fd);
	uint32_t n =
		len < TREE_IO_MAX_BYTES ? (uint32_t)len : TREE_IO_MAX_BYTES;
	bool sync_failed;
	int err;

	if (!o) {
		return -EBADF;
	}
	err = store__cephfs_write(tree_st(t), store__cephfs_pub(o), off, buf, n,
				  STORE_UNSTABLE, &sync_failed);
	return err ? err : (ssize_t)n;
}

static void stat_from_attr(const struct store_attr *a, struct stat *st)
{
	static const mode_t types[] = {
		[STORE_REG] = S_IFREG,	[STORE_DIR] = S_IFDIR,
		[STORE_BLK] = S_IFBLK,	[STORE_CHR] = S_IFCHR,
		[STORE_LNK] = S_IFLNK,	[STORE_SOCK] = S_IFSOCK,
		[STORE_FIFO] = S_IFIFO,
	};

	memset(st, 0, sizeof(*st));
	st->st_mode = types[a->type] | a->mode;
	st->st_nlink = a->nlink;
	st->st_uid = a->uid;
	st->st_gid = a->gid;
	st->st_size = (off_t)a->size_bytes;
	/* RADOS objects that exist, as the backend's used bytes. */
	st->st_blocks = (blkcnt_t)(a->used_bytes / 512);
	st->st_blksize = 4096;
	st->st_ino = a->fileid;
	st->st_dev = (dev_t)a->fsid;
	st->st_atim = a->atime;
	st->st_mtim = a->mtime;
	st->st_ctim = a->ctime;
}

static int obj_stat(struct cephfs_tree *t, struct cephfs_obj *o,
		    struct stat *st)
{
	struct store_attr a;
	int err;

	err = store__cephfs_getattr(tree_st(t), store__cephfs_pub(o), &a);
	if (!err) {
		stat_from_attr(&a, st);
	}
	return err;
}

static int tree_io_fstat(void *ctx, int fd, struct stat *st)
{
	struct cephfs_tree *t = tree_of(ctx);
	struct cephfs_obj *o = fd_get(t, fd);

	return o ? obj_stat(t, o, st) : -EBADF;
}

static int tree_io_stat(void *ctx, const char *path, struct stat *st)
{
	struct cephfs_tree *t = tree_of(ctx);
	struct cephfs_obj *o;
	int err;

	err = tree_walk(t, path, false, &o, NULL);
	if (err) {
		return err;
	}
	err = obj_stat(t, o, st);
	store__cephfs_obj_unref(store__cephfs_pub(o));
	return err;
}

static int tree_io_ftruncate(void *ctx, int fd, uint64_t len)
{
	struct cephfs_tree *t = tree_of(ctx);
	struct cephfs_obj *o = fd_get(t, fd);
	struct store_sattr sa = { .set_size = true, .size_bytes = len };

	return o ? store__cephfs_setattr(tree_st(t), store__cephfs_pub(o), &sa,
					 NULL)
		 : -EBADF;
}

static int tree_io_fsync(void *ctx, int fd)
{
	struct cephfs_tree *t = tree_of(ctx);
	struct cephfs_obj *o = fd_get(t, fd);
	bool sync_failed;

	return o ? store__cephfs_commit(tree_st(t), store__cephfs_pub(o), 0, 0,
					&sync_failed)
		 : -EBADF;
}

/* The size of @fd's file, after it is flushed once (its map is what
 * the pool holds: buffered writes are not objects yet). */
static int fd_flushed_size(struct cephfs_tree *t, int fd, struct cephfs_obj **o,
			   uint64_t *size)
{
	struct store_attr a;
	bool flushed;
	int err;

	*o = fd_get(t, fd);
	if (!*o) {
		return -EBADF;
	}
	pthread_mutex_lock(&t->lock);
	flushed = t->fds[fd].flushed;
	pthread_mutex_unlock(&t->lock);
	if (!flushed) {
		err = tree_io_fsync(t, fd);
		if (err) {
			return err;
		}
		pthread_mutex_lock(&t->lock);
		t->fds[fd].flushed = true;
		pthread_mutex_unlock(&t->lock);
	}
	err = store__cephfs_getattr(tree_st(t), store__cephfs_pub(*o), &a);
	*size = a.size_bytes;
	return err;
}

/* Whether the object holding @off exists: 1, 0 or -errno; *obj_bytes. */
static int obj_exists(struct cephfs_tree *t, struct cephfs_obj *o,
		      uint64_t size, uint64_t off, uint32_t *obj_bytes)
{
	uint32_t ob = 0;
	int rc;

	/* The object size is the layout's: ask for object 0 first. */
	rc = store__cephfs_used_object(t->sc, o, size, 0, &ob);
	if (rc < 0 || off < ob) {
		*obj_bytes = ob;
		return rc;
	}
	*obj_bytes = ob;
	return store__cephfs_used_object(t->sc, o, size, off / ob, &ob);
}

/* Writes zeros over every object of [@off, @end) not in the pool. */
static int tree_zero_missing(struct cephfs_tree *t, int fd,
			     struct cephfs_obj *o, uint64_t off, uint64_t end)
{
	uint8_t *zeros = calloc(1, TREE_ZERO_BYTES);
	uint64_t size = end;
	uint32_t ob;
	int err = 0;

	if (!zeros) {
		return -ENOMEM;
	}
	while (off < end && !err) {
		uint64_t oend;
		int rc = obj_exists(t, o, size, off, &ob);

		if (rc < 0) {
			err = rc;
			break;
		}
		oend = (off / ob + 1) * ob;
		oend = oend < end ? oend : end;
		while (rc == 0 && off < oend && !err) {
			uint64_t n = oend - off < TREE_ZERO_BYTES
					     ? oend - off
					     : TREE_ZERO_BYTES;

			ssize_t put =
				tree_io_pwrite(t, fd, zeros, (size_t)n, off);

			err = put < 0 ? (int)put : 0;
			off += put > 0 ? (uint64_t)put : 0;
		}
		off = oend;
	}
	free(zeros);
	return err;
}

static int tree_io_fallocate(void *ctx, int fd, int mode, uint64_t off,
			     uint64_t len)
{
	struct cephfs_tree *t = tree_of(ctx);
	struct cephfs_obj *o;
	uint64_t size;
	int err;

	if (mode != 0) {
		return -EOPNOTSUPP;
	}
	err = fd_flushed_size(t, fd, &o, &size);
	if (err) {
		return err;
	}
	if (off + len > size) {
		err = tree_io_ftruncate(t, fd, off + len);
	}
	return err ? err : tree_zero_missing(t, fd, o, off, off + len);
}

static int tree_io_fiemap(void *ctx, int fd, struct fiemap *fm)
{
	struct cephfs_tree *t = tree_of(ctx);
	uint64_t end, size, pos;
	struct cephfs_obj *o;
	uint32_t ob, n = 0;
	int err;

	err = fd_flushed_size(t, fd, &o, &size);
	if (err) {
		return err;
	}
	pos = fm->fm_start;
	end = pos >= size || fm->fm_length >= size - pos ? size
							 : pos + fm->fm_length;
	fm->fm_mapped_extents = 0;
	while (pos < end) {
		uint64_t start;
		int rc = obj_exists(t, o, size, pos, &ob);

		if (rc < 0) {
			return rc;
		}
		start = pos / ob * ob;
		pos = start + ob;
		if (!rc) {
			continue;
		}
		while (pos < size && obj_exists(t, o, size, pos, &ob) == 1) {
			pos += ob;
		}
		if (fm->fm_extent_count && n == fm->fm_extent_count) {
			return 0; /* full: the caller asks again from here */
		}
		if (fm->fm_extent_count) {
			struct fiemap_extent *fe = &fm->fm_extents[n];

			memset(fe, 0, sizeof(*fe));
			fe->fe_logical = start;
			fe->fe_physical = start;
			fe->fe_length = (pos < size ? pos : size) - start;
		}
		n++;
		fm->fm_mapped_extents = n;
	}
	if (n && fm->fm_extent_count) {
		fm->fm_extents[n - 1].fe_flags |= FIEMAP_EXTENT_LAST;
	}
	return 0;
}

static int64_t tree_io_seek(void *ctx, int fd, uint64_t off, int whence)
{
	struct cephfs_tree *t = tree_of(ctx);
	struct cephfs_obj *o;
	uint64_t size;
	uint32_t ob;
	int err;

	if (whence != SEEK_DATA && whence != SEEK_HOLE) {
		return -EINVAL;
	}
	err = fd_flushed_size(t, fd, &o, &size);
	if (err) {
		return err;
	}
	while (off < size) {
		int rc = obj_exists(t, o, size, off, &ob);

		if (rc < 0) {
			return rc;
		}
		if ((rc == 1) == (whence == SEEK_DATA)) {
			return (int64_t)off;
		}
		off = (off / ob + 1) * ob;
	}
	return whence == SEEK_HOLE ? (int64_t)size : -ENXIO;
}

static ssize_t tree_io_copy_range(void *ctx, int fd_in, uint64_t off_in,
				  int fd_out, uint64_t off_out, size_t len)
{
	(void)ctx, (void)fd_in, (void)off_in, (void)fd_out, (void)off_out;
	(void)len;
	return -EOPNOTSUPP; /* no copy_file_range in libcephfs 16.2 */
}

static int tree_io_clone_file(void *ctx, int fd_in, int fd_out)
{
	(void)ctx, (void)fd_in, (void)fd_out;
	return -EOPNOTSUPP; /* CephFS snapshots are per directory */
}

static int tree_io_rename(void *ctx, const char *from, const char *to)
{
	struct cephfs_tree *t = tree_of(ctx);
	char fname[STORE_NAME_MAX + 1] = "", tname[STORE_NAME_MAX + 1] = "";
	struct cephfs_obj *fdir, *tdir;
	int err;

	err = tree_walk(t, from, true, &fdir, fname);
	if (err) {
		return err;
	}
	err = tree_walk(t, to, true, &tdir, tname);
	if (!err) {
		err = store__cephfs_rename(tree_st(t), store__cephfs_pub(fdir),
					   fname, store__cephfs_pub(tdir),
					   tname);
		store__cephfs_obj_unref(store__cephfs_pub(tdir));
	}
	store__cephfs_obj_unref(store__cephfs_pub(fdir));
	return err;
}

static int tree_io_unlink(void *ctx, const char *path)
{
	struct cephfs_tree *t = tree_of(ctx);
	char name[STORE_NAME_MAX + 1] = "";
	struct cephfs_obj *dir;
	int err;

	err = tree_walk(t, path, true, &dir, name);
	if (!err) {
		err = store__cephfs_remove(tree_st(t), store__cephfs_pub(dir),
					   name);
		store__cephfs_obj_unref(store__cephfs_pub(dir));
	}
	return err;
}

static int tree_io_chmod(void *ctx, const char *path, mode_t mode)
{
	struct cephfs_tree *t = tree_of(ctx);
	struct store_sattr sa = { .set_mode = true, .mode = mode & 07777 };
	struct cephfs_obj *o;
	int err;

	err = tree_walk(t, path, false, &o, NULL);
	if (!err) {
		err = store__cephfs_setattr(tree_st(t), store__cephfs_pub(o),
					    &sa, NULL);
		store__cephfs_obj_unref(store__cephfs_pub(o));
	}
	return err;
}

static const struct vmdk_io_ops tree_ops = {
	.open = tree_io_open,
	.close = tree_io_close,
	.pread = tree_io_pread,
	.pwrite = tree_io_pwrite,
	.fstat = tree_io_fstat,
	.stat = tree_io_stat,
	.ftruncate = tree_io_ftruncate,
	.fallocate = tree_io_fallocate,
	.fsync = tree_io_fsync,
	.fiemap = tree_io_fiemap,
	.seek = tree_io_seek,
	.copy_range = tree_io_copy_range,
	.clone_file = tree_io_clone_file,
	.rename = tree_io_rename,
	.unlink = tree_io_unlink,
	.chmod = tree_io_chmod,
};

static void tree_close(struct store_tree *pub)
{
	struct cephfs_tree *t = container_of(pub, struct cephfs_tree, pub);

	for (size_t i = 0; i < t->nfds; i++) {
		if (t->fds[i].o) {
			store__cephfs_obj_unref(store__cephfs_pub(t->fds[i].o));
		}
	}
	free(t->fds);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

int store__cephfs_tree_open(struct store *st, struct store_tree **out,
			    char *errbuf, size_t errlen)
{
	struct cephfs_tree *t = calloc(1, sizeof(*t));

	if (!t || pthread_mutex_init(&t->lock, NULL)) {
		free(t);
		snprintf(errbuf, errlen, "volume %s: out of memory", st->name);
		return -ENOMEM;
	}
	t->sc = store__cephfs(st);
	t->root_len = (size_t)snprintf(t->root, sizeof(t->root), "%s%s",
				       TREE_ROOT_PREFIX, st->name);
	t->pub.io.ops = &tree_ops;
	t->pub.io.ctx = t;
	t->pub.root = t->root;
	t->pub.alloc_writes = true;
	t->pub.close = tree_close;
	*out = &t->pub;
	return 0;
}
