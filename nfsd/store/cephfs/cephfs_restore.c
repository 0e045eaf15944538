// SPDX-License-Identifier: Apache-2.0
/*
 * cephfs_restore: reverts a cephfs datastore to one of its snapshots.
 * CephFS has no rollback, so the snapshot (read-only, "/.snap/NAME") is
 * copied back into the live tree, in place, through the store's own ops
 * (so its object cache and used-byte maps stay right):
 *
 * - a regular file in both keeps its inode, so an NFS client's handle
 *   stays valid and reads the snapshot's data: unless it is unchanged
 *   since (same ctime and size: nothing written, nothing set), it is
 *   truncated to 0 and the snapshot's data written back, all-zero 4 MiB
 *   pieces left as holes, then its size, mode, owner and times set back;
 * - what was made after the snapshot is removed (its handle is STALE);
 * - what was removed since is made again (a new inode: a new handle);
 * - directories likewise, symlinks re-made; other special files are left
 *   out (a datastore holds none).
 *
 * It is a copy of what changed: its time is the bytes of the files that
 * changed since the snapshot, reported through @progress.
 */
#include "nfsd/store/cephfs/cephfs_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nfsd/store/store_tree.h"

#define RESTORE_PIECE_BYTES (4u << 20)

struct restore {
	struct store_cephfs *sc;
	struct store *st;
	struct snap_stats *stats;
	uint64_t done_bytes, total_bytes;
	vmdk_progress_fn progress;
	void *progress_arg;
	uint8_t *buf;
	char *errbuf;
	size_t errlen;
};

static int restore_fail(struct restore *r, int err, const char *what,
			const char *path)
{
	snprintf(r->errbuf, r->errlen, "volume %s: restore: %s %s: %s",
		 r->st->name, what, path, strerror(-err));
	return err;
}

static enum store_ftype type_of(uint16_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return STORE_REG;
	case S_IFDIR:
		return STORE_DIR;
	case S_IFLNK:
		return STORE_LNK;
	default:
		return STORE_FIFO; /* special: left out */
	}
}

/* ---- the live side ------------------------------------------------------ */

struct names {
	char **v;
	size_t n;
};

static int names_cb(void *arg, const char *name, uint64_t fileid,
		    uint64_t cookie)
{
	struct names *ns = arg;
	char **grown;

	(void)fileid;
	(void)cookie;
	if (!strcmp(name, ".") || !strcmp(name, "..")) {
		return 0;
	}
	grown = realloc(ns->v, (ns->n + 1) * sizeof(*grown));
	if (!grown || !(grown[ns->n] = strdup(name))) {
		if (grown) {
			ns->v = grown;
		}
		return -ENOMEM;
	}
	ns->v = grown;
	ns->n++;
	return 0;
}

static void names_free(struct names *ns)
{
	for (size_t i = 0; i < ns->n; i++) {
		free(ns->v[i]);
	}
	free(ns->v);
}

/* Removes @name of @dir, a whole tree if it is a directory. */
static int live_remove(struct restore *r, struct store_obj *dir,
		       const char *name, int depth)
{
	const struct store_ops *ops = r->st->ops;
	struct names ns = { 0 };
	struct store_obj *o;
	struct store_attr a;
	int err;

	err = ops->lookup(r->st, dir, name, &o);
	if (!err) {
		err = ops->getattr(r->st, o, &a);
	}
	if (err) {
		return err == -ENOENT ? 0 : err;
	}
	if (a.type != STORE_DIR) {
		ops->obj_unref(o);
		r->stats->removed++;
		return ops->remove(r->st, dir, name);
	}
	err = depth > SNAP_MAX_DEPTH ? -ELOOP
				     : ops->readdir(r->st, o, 0, names_cb, &ns);
	for (size_t i = 0; i < ns.n && !err; i++) {
		err = live_remove(r, o, ns.v[i], depth + 1);
	}
	names_free(&ns);
	ops->obj_unref(o);
	if (!err) {
		r->stats->removed++;
		err = ops->rmdir(r->st, dir, name);
	}
	return err;
}

/* Sets @o's mode, owner, times (and size, for a file) to @stx's. */
static int live_set(struct restore *r, struct store_obj *o,
		    const struct ceph_statx *stx, bool size)
{
	struct store_sattr sa = {
		.set_mode = true,
		.mode = stx->stx_mode & 07777,
		.set_uid = true,
		.uid = stx->stx_uid,
		.set_gid = true,
		.gid = stx->stx_gid,
		.set_size = size,
		.size_bytes = stx->stx_size,
		.atime_how = STORE_TIME_CLIENT,
		.atime = stx->stx_atime,
		.mtime_how = STORE_TIME_CLIENT,
		.mtime = stx->stx_mtime,
	};

	return r->st->ops->setattr(r->st, o, &sa, NULL);
}

static bool is_zero(const uint8_t *p, size_t len)
{
	return len == 0 || (p[0] == 0 && !memcmp(p, p + 1, len - 1));
}

/* Writes snapshot file @spath's data into live file @o. */
static int copy_back(struct restore *r, const char *spath, struct store_obj *o,
		     const struct ceph_statx *stx)
{
	struct store_sattr empty = { .set_size = true, .size_bytes = 0 };
	const struct store_ops *ops = r->st->ops;
	uint64_t off = 0;
	bool sync_failed;
	int fd, err;

	fd = ceph_open(r->sc->cm, spath, O_RDONLY | O_NOFOLLOW, 0);
	if (fd < 0) {
		return restore_fail(r, store__cephfs_err(fd), "open", spath);
	}
	err = ops->setattr(r->st, o, &empty, NULL);
	while (!err && off < stx->stx_size) {
		int n = ceph_read(r->sc->cm, fd, (char *)r->buf,
				  RESTORE_PIECE_BYTES, (int64_t)off);

		if (n <= 0) {
			err = n < 0 ? store__cephfs_err(n) : -EIO;
			break;
		}
		if (!is_zero(r->buf, (size_t)n)) {
			err = ops->write(r->st, o, off, r->buf, (uint32_t)n,
					 STORE_UNSTABLE, &sync_failed);
		}
		off += (uint64_t)n;
		r->done_bytes += (uint64_t)n;
		if (!err && r->progress) {
			err = r->progress(r->progress_arg, r->done_bytes,
					  r->total_bytes);
		}
	}
	ceph_close(r->sc->cm, fd);
	if (!err) {
		err = live_set(r, o, stx, true);
	}
	if (!err) {
		err = ops->commit(r->st, o, 0, 0, &sync_failed);
	}
	return err ? restore_fail(r, err, "copy back", spath) : 0;
}

/* ---- the walk ----------------------------------------------------------- */

static int restore_dir(struct restore *r, const char *spath,
		       struct store_obj *dir, int depth);

/* Restores entry @name of snapshot directory @spath into live @dir. */
static int restore_entry(struct restore *r, const char *spath,
			 struct store_obj *dir, const char *name, int depth)
{
	const struct store_ops *ops = r->st->ops;
	const uint8_t verf[8] = { 0 };
	struct ceph_statx stx;
	struct store_obj *o = NULL;
	struct store_attr a;
	enum store_ftype t;
	char target[STORE_PATH_MAX + 1];
	char *p;
	int err;

	if (asprintf(&p, "%s/%s", spath, name) < 0) {
		return -ENOMEM;
	}
	err = store__cephfs_err(ceph_statx(r->sc->cm, p, &stx,
					   CEPH_STATX_BASIC_STATS,
					   AT_SYMLINK_NOFOLLOW));
	t = err ? STORE_FIFO : type_of(stx.stx_mode);
	if (err || t == STORE_FIFO) {
		if (err) {
			restore_fail(r, err, "stat", p);
		}
		free(p);
		return err;
	}
	err = ops->lookup(r->st, dir, name, &o);
	if (!err &&
	    (ops->getattr(r->st, o, &a) || a.type != t || t == STORE_LNK)) {
		/* Another kind of file now, or a symlink: made again. */
		ops->obj_unref(o);
		o = NULL;
		err = live_remove(r, dir, name, depth);
		if (!err) {
			r->stats->removed--; /* replaced, not removed */
			err = -ENOENT;
		}
	}
	if (err == -ENOENT) {
		if (t == STORE_DIR) {
			err = ops->mkdir(r->st, dir, name, NULL, NULL, &o);
		} else if (t == STORE_REG) {
			err = ops->create(r->st, dir, name,
					  STORE_CREATE_GUARDED, NULL, verf,
					  NULL, &o);
		} else {
			int n = ceph_readlink(r->sc->cm, p, target,
					      sizeof(target) - 1);

			err = n < 0 ? store__cephfs_err(n) : 0;
			if (!err) {
				target[n] = '\0';
				err = ops->symlink(r->st, dir, name, target,
						   NULL, NULL, &o);
			}
		}
		a.ctime.tv_sec = -1; /* new: copy it whatever the times */
	}
	if (!err && t == STORE_DIR) {
		r->stats->dirs++;
		err = restore_dir(r, p, o, depth + 1);
		if (!err) {
			err = live_set(r, o, &stx, false);
		}
	} else if (!err && t == STORE_REG) {
		r->stats->files++;
		r->stats->bytes += stx.stx_size;
		if (a.ctime.tv_sec != stx.stx_ctime.tv_sec ||
		    a.ctime.tv_nsec != stx.stx_ctime.tv_nsec ||
		    a.size_bytes != stx.stx_size) {
			err = copy_back(r, p, o, &stx);
		}
	}
	if (o) {
		ops->obj_unref(o);
	}
	if (err && !r->errbuf[0]) {
		restore_fail(r, err, "restore", p);
	}
	free(p);
	return err;
}

static int restore_dir(struct restore *r, const char *spath,
		       struct store_obj *dir, int depth)
{
	struct ceph_dir_result *dirp;
	struct names live = { 0 }, snap = { 0 };
	struct dirent *de;
	int err;

	if (depth > SNAP_MAX_DEPTH) {
		return restore_fail(r, -ELOOP, "walk", spath);
	}
	err = store__cephfs_err(ceph_opendir(r->sc->cm, spath, &dirp));
	if (err) {
		return restore_fail(r, err, "opendir", spath);
	}
	while (!err && (de = ceph_readdir(r->sc->cm, dirp)) != NULL) {
		err = names_cb(&snap, de->d_name, 0, 0);
	}
	ceph_closedir(r->sc->cm, dirp);
	if (!err) {
		err = r->st->ops->readdir(r->st, dir, 0, names_cb, &live);
	}
	/* What the snapshot does not have goes first (room for the rest). */
	for (size_t i = 0; i < live.n && !err; i++) {
		bool keep = false;

		for (size_t j = 0; j < snap.n && !keep; j++) {
			keep = !strcmp(live.v[i], snap.v[j]);
		}
		if (!keep) {
			err = live_remove(r, dir, live.v[i], depth);
		}
	}
	for (size_t j = 0; j < snap.n && !err; j++) {
		err = restore_entry(r, spath, dir, snap.v[j], depth);
	}
	names_free(&live);
	names_free(&snap);
	if (err && !r->errbuf[0]) {
		restore_fail(r, err, "restore", spath);
	}
	return err;
}

/* The bytes of the snapshot's regular files: the progress's total. */
static uint64_t snap_bytes(struct store_cephfs *sc, const char *spath,
			   int depth)
{
	struct ceph_dir_result *dirp;
	struct dirent *de;
	uint64_t sum = 0;

	if (depth > SNAP_MAX_DEPTH || ceph_opendir(sc->cm, spath, &dirp)) {
		return 0;
	}
	while ((de = ceph_readdir(sc->cm, dirp)) != NULL) {
		struct ceph_statx stx;
		char *p;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    asprintf(&p, "%s/%s", spath, de->d_name) < 0) {
			continue;
		}
		if (ceph_statx(sc->cm, p, &stx, CEPH_STATX_BASIC_STATS,
			       AT_SYMLINK_NOFOLLOW) == 0) {
			if (S_ISDIR(stx.stx_mode)) {
				sum += snap_bytes(sc, p, depth + 1);
			} else if (S_ISREG(stx.stx_mode)) {
				sum += stx.stx_size;
			}
		}
		free(p);
	}
	ceph_closedir(sc->cm, dirp);
	return sum;
}

int store__cephfs_snap_restore(struct store *st, const char *name,
			       struct snap_stats *out,
			       vmdk_progress_fn progress, void *progress_arg,
			       char *errbuf, size_t errlen)
{
	struct snap_stats stats = { 0 };
	struct restore r = { .sc = store__cephfs(st),
			     .st = st,
			     .stats = &stats,
			     .progress = progress,
			     .progress_arg = progress_arg,
			     .errbuf = errbuf,
			     .errlen = errlen };
	char spath[SNAP_NAME_MAX + 16];
	struct store_obj *root;
	int err;

	errbuf[0] = '\0';
	err = st->ops->snap->check(st, name, true, errbuf, errlen);
	if (err) {
		return err;
	}
	r.buf = malloc(RESTORE_PIECE_BYTES);
	if (!r.buf) {
		return -ENOMEM;
	}
	snprintf(spath, sizeof(spath), "/.snap/%s", name);
	r.total_bytes = snap_bytes(r.sc, spath, 0);
	err = st->ops->root(st, &root);
	if (!err) {
		err = restore_dir(&r, spath, root, 0);
		st->ops->obj_unref(root);
	}
	free(r.buf);
	if (!err && progress) {
		(void)progress(progress_arg, r.total_bytes, r.total_bytes);
	}
	if (out) {
		*out = stats;
	}
	return err;
}
