// SPDX-License-Identifier: Apache-2.0
/*
 * dst_local: the replication operations on a datastore of this process
 * (dst.h), every path resolved beneath its root: what the destination
 * dsnfsd runs for each message a source sends, so a path of a message
 * (data from the network) never leaves the datastore.
 */
#include "nfsd/repl/dst.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "nfsd/base/errbuf.h"
#include "nfsd/repl/guard.h"
#include "nfsd/repl/undo.h"
#include "nfsd/snap/snap.h"

#define LOCAL_RESOLVE                                                          \
	(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV |             \
	 RESOLVE_NO_MAGICLINKS)
/* A tree removed below this many levels is refused (the snapshots'). */
#define LOCAL_RM_DEPTH (SNAP_MAX_DEPTH + 1)

int repl_dst_call(struct repl_dst *d, const struct repl_msg *m,
		  struct repl_result *r, char *errbuf, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	d->call(d, m, r);
	if (r->err) {
		snprintf(errbuf, errlen, "destination %s %s: %s",
			 repl_op_name(m->op), *m->path ? m->path : "/",
			 r->reason[0] ? r->reason : strerror(-r->err));
	}
	return r->err;
}

int repl_path_check(const char *rel, bool root_ok, char *errbuf, size_t errlen)
{
	const char *p = rel;

	if (!*rel) {
		return root_ok ? 0
			       : errbuf_printf(errbuf, errlen, -EINVAL,
					       "an empty path");
	}
	if (!strncmp(rel, SNAP_DIR_NAME, strlen(SNAP_DIR_NAME)) &&
	    (rel[strlen(SNAP_DIR_NAME)] == '/' ||
	     !rel[strlen(SNAP_DIR_NAME)])) {
		return errbuf_printf(errbuf, errlen, -EPERM,
				     "'%s': the snapshots are not written by "
				     "a transfer",
				     rel);
	}
	for (;;) {
		size_t n = strcspn(p, "/");

		if (!n || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.')) {
			return errbuf_printf(errbuf, errlen, -EINVAL,
					     "'%.200s': outside the datastore "
					     "(an empty, '.' or '..' name, or "
					     "an absolute path)",
					     rel);
		}
		if (!p[n]) {
			return 0;
		}
		p += n + 1;
	}
}

static int local_openat2(int dirfd, const char *rel, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.resolve = LOCAL_RESOLVE,
	};
	long fd = syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));

	return fd < 0 ? -errno : (int)fd;
}

static void local_call(struct repl_dst *d, const struct repl_msg *m,
		       struct repl_result *r)
{
	repl_local_apply((struct repl_local *)d, m, r);
}

void repl_open_init(struct repl_open *o)
{
	o->fd = -1;
	o->path[0] = '\0';
}

void repl_open_close(struct repl_open *o)
{
	if (o->fd >= 0) {
		close(o->fd);
	}
	repl_open_init(o);
}

int repl_local_open(struct repl_local *l, const char *root,
		    const char *manifest, char *errbuf, size_t errlen)
{
	memset(l, 0, sizeof(*l));
	l->pub.call = local_call;
	repl_open_init(&l->own);
	l->open = &l->own;
	if (snprintf(l->root, sizeof(l->root), "%s", root) >=
	    (int)sizeof(l->root)) {
		return errbuf_printf(errbuf, errlen, -ENAMETOOLONG,
				     "%s: path too long", root);
	}
	l->rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (l->rootfd < 0) {
		return errbuf_printf(errbuf, errlen, -errno, "%s: %s", root,
				     strerror(errno));
	}
	l->manifest = manifest;
	return 0;
}

void repl_local_close(struct repl_local *l)
{
	repl_open_close(&l->own);
	if (l->rootfd > 0) {
		close(l->rootfd);
	}
	l->rootfd = -1;
}

/* The directory holding @rel (O_PATH, beneath the root) and its last
 * name into @leaf.  Returns the descriptor or -errno. */
static int local_parent(struct repl_local *l, const char *rel,
			const char **leaf)
{
	const char *slash = strrchr(rel, '/');
	char dir[REPL_PATH_MAX];

	if (!slash) {
		*leaf = rel;
		return local_openat2(l->rootfd, ".", O_PATH | O_DIRECTORY);
	}
	memcpy(dir, rel, (size_t)(slash - rel));
	dir[slash - rel] = '\0';
	*leaf = slash + 1;
	return local_openat2(l->rootfd, dir, O_PATH | O_DIRECTORY);
}

/* Removes @name of directory @dfd, a tree with it, never following a
 * symlink. */
static int local_rm_at(int dfd, const char *name, int depth)
{
	struct dirent *de;
	struct stat sb;
	int fd, err = 0;
	DIR *d;

	if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0) {
		return errno == ENOENT ? 0 : -errno;
	}
	if (!S_ISDIR(sb.st_mode)) {
		return unlinkat(dfd, name, 0) < 0 && errno != ENOENT ? -errno
								     : 0;
	}
	if (depth > LOCAL_RM_DEPTH) {
		return -ELOOP;
	}
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		return -errno;
	}
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while (!err && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			err = local_rm_at(dirfd(d), de->d_name, depth + 1);
		}
	}
	closedir(d);
	if (!err && unlinkat(dfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT) {
		err = -errno;
	}
	return err;
}

static uint8_t local_type(mode_t m)
{
	return S_ISREG(m)   ? REPL_TYPE_REG
	       : S_ISDIR(m) ? REPL_TYPE_DIR
	       : S_ISLNK(m) ? REPL_TYPE_LNK
			    : REPL_TYPE_OTHER;
}

/* Opens regular file @leaf of @pfd for writing (creating it with
 * O_CREAT), never a FIFO, a device or a symlink. */
static int local_open_reg(int pfd, const char *leaf, int flags)
{
	int fd = openat(pfd, leaf,
			O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | flags,
			0600);
	struct stat sb;

	if (fd < 0) {
		return -errno;
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

/* Keeps @fd open for @l's file @path (the one kept before closed). */
static void local_keep(struct repl_local *l, const char *path, int fd)
{
	repl_open_close(l->open);
	l->open->fd = fd;
	snprintf(l->open->path, sizeof(l->open->path), "%s", path);
}

/* The descriptor kept for @path, or -1. */
static int local_kept(const struct repl_local *l, const char *path)
{
	return l->open->fd >= 0 && !strcmp(l->open->path, path) ? l->open->fd
								: -1;
}

/*
 * WRITE @m to @fd.  The check is on the bytes received, before they are
 * written: their xxh64 must be the source's of the snapshot's bytes, so
 * what the network, the HTTP layers or the decoder changed is refused;
 * the same buffer then goes to pwrite (a disk that corrupts a write
 * silently is not caught: docs/replication.md, "End-to-end check").
 */
static int local_write(int fd, const struct repl_msg *m, struct repl_result *r)
{
	size_t done = 0;

	if (repl_write_hash(m->data, m->len) != m->xxh) {
		return errbuf_printf(r->reason, sizeof(r->reason), -EIO,
				     "the %zu bytes at %llu came other than "
				     "the snapshot's the source read (hash)",
				     m->len, (unsigned long long)m->off);
	}
	while (done < m->len) {
		ssize_t n = pwrite(fd, (const char *)m->data + done,
				   m->len - done, (off_t)(m->off + done));

		if (n < 0 && errno != EINTR) {
			return -errno;
		}
		if (n > 0) {
			done += (size_t)n;
		}
	}
	return 0;
}

static int local_attrs(struct repl_local *l, int pfd, const char *leaf,
		       const struct repl_msg *m)
{
	const struct timespec t[2] = {
		{ .tv_sec = m->atime_s, .tv_nsec = m->atime_ns },
		{ .tv_sec = m->mtime_s, .tv_nsec = m->mtime_ns },
	};
	struct stat sb;
	int fd = -1;

	if (fstatat(pfd, leaf, &sb, AT_SYMLINK_NOFOLLOW) < 0) {
		return -errno;
	}
	if ((m->flags & (REPL_FLAG_SYNC | REPL_FLAG_SIZE)) &&
	    S_ISREG(sb.st_mode)) {
		/* The file's end: its descriptor, if kept, sized first (the
		 * times come after), synced last and closed (the caller
		 * closes it on an error). */
		fd = local_kept(l, m->path);
		if (fd < 0) {
			fd = local_open_reg(pfd, leaf, 0);
			if (fd < 0) {
				return fd;
			}
			local_keep(l, m->path, fd);
		}
		if ((m->flags & REPL_FLAG_SIZE) &&
		    ftruncate(fd, (off_t)m->size) < 0) {
			return -errno;
		}
	}
	if (fchownat(pfd, leaf, m->uid, m->gid, AT_SYMLINK_NOFOLLOW) < 0 ||
	    (!S_ISLNK(sb.st_mode) &&
	     fchmodat(pfd, leaf, m->mode & 07777, 0) < 0) ||
	    utimensat(pfd, leaf, t, AT_SYMLINK_NOFOLLOW) < 0) {
		return -errno;
	}
	if (fd >= 0) {
		if ((m->flags & REPL_FLAG_SYNC) && fsync(fd) < 0) {
			return -errno;
		}
		repl_open_close(l->open);
	}
	return 0;
}

/* Directory @rel of the datastore (beneath its root) into *out. */
static int local_opendir(struct repl_local *l, const char *rel, DIR **out)
{
	int fd = local_openat2(l->rootfd, rel, O_RDONLY | O_DIRECTORY);

	if (fd < 0) {
		return fd;
	}
	*out = fdopendir(fd);
	if (!*out) {
		int err = -errno;

		close(fd);
		return err;
	}
	return 0;
}

/* Whether @name is one of @m's NUL-separated names. */
static bool local_listed(const struct repl_msg *m, const char *name)
{
	const char *p = m->arg, *end = m->arg + m->arg_len;

	while (p < end) {
		if (!strcmp(p, name)) {
			return true;
		}
		p += strlen(p) + 1;
	}
	return false;
}

static int local_prune(struct repl_local *l, const struct repl_msg *m,
		       struct repl_result *r)
{
	struct dirent *de;
	int err = 0;
	DIR *d;

	err = local_opendir(l, *m->path ? m->path : ".", &d);
	if (err) {
		return err;
	}
	while (!err && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    (!*m->path && !strcmp(de->d_name, SNAP_DIR_NAME)) ||
		    local_listed(m, de->d_name)) {
			continue;
		}
		err = local_rm_at(dirfd(d), de->d_name, 0);
		r->value += !err;
	}
	closedir(d);
	return err;
}

/* Whether the datastore holds anything but .snapshot. */
static int local_empty(struct repl_local *l, struct repl_result *r)
{
	struct dirent *de;
	DIR *d;
	int err = local_opendir(l, ".", &d);

	if (err) {
		return err;
	}
	r->value = 1;
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    strcmp(de->d_name, SNAP_DIR_NAME)) {
			r->value = 0;
			break;
		}
	}
	closedir(d);
	return 0;
}

/* HASSNAP: whether the datastore holds snapshot arg (value 1). */
static int local_hassnap(struct repl_local *l, const struct repl_msg *m,
			 struct repl_result *r)
{
	if (snap_name_check(m->arg ? m->arg : "", r->reason,
			    sizeof(r->reason))) {
		return -EINVAL;
	}
	r->value = l->manifest &&
		   !snap_check(l->root, l->manifest, m->arg, true, NULL, 0);
	return 0;
}

/* The operations on the snapshots of the datastore and on the transfer
 * being applied (undo.h). */
static int local_snap(struct repl_local *l, const struct repl_msg *m,
		      struct repl_result *r)
{
	int err;

	switch (m->op) {
	case REPL_OP_BEGIN:
		return repl_undo_begin(l, m, r);
	case REPL_OP_ABORT:
	case REPL_OP_BREAK:
		return repl_undo_run(l, r->reason, sizeof(r->reason));
	case REPL_OP_COMMIT:
		return repl_undo_commit(l, m, r);
	default:
		break;
	}
	if (m->op == REPL_OP_RESYNC) {
		err = repl_undo_run(l, r->reason, sizeof(r->reason));
		if (err || !l->manifest || !m->arg_len) {
			return err;
		}
	}
	if (!l->manifest) {
		return 0;
	}
	if (snap_name_check(m->arg, r->reason, sizeof(r->reason))) {
		return -EINVAL;
	}
	return repl_guard_snap(l->guard,
			       m->op == REPL_OP_DELSNAP ? REPL_GUARD_DELETE
							: REPL_GUARD_RESTORE,
			       l->root, l->manifest, m->arg, r->reason,
			       sizeof(r->reason));
}

/* The operations on one entry: PATH's parent resolved beneath the root. */
static int local_entry(struct repl_local *l, const struct repl_msg *m,
		       struct repl_result *r)
{
	const char *leaf;
	struct stat sb;
	int pfd, fd, err = 0;

	pfd = local_parent(l, m->path, &leaf);
	if (pfd < 0) {
		return pfd == -ENOENT && m->op == REPL_OP_STAT ? 0 : pfd;
	}
	switch (m->op) {
	case REPL_OP_STAT:
		if (fstatat(pfd, leaf, &sb, AT_SYMLINK_NOFOLLOW) == 0) {
			r->type = local_type(sb.st_mode);
			r->value = (uint64_t)sb.st_size;
		} else if (errno != ENOENT) {
			err = -errno;
		}
		break;
	case REPL_OP_REMOVE:
		err = local_rm_at(pfd, leaf, 0);
		break;
	case REPL_OP_MKDIR:
		if (fstatat(pfd, leaf, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
		    !S_ISDIR(sb.st_mode)) {
			err = local_rm_at(pfd, leaf, 0);
		}
		if (!err && mkdirat(pfd, leaf, 0700) < 0 && errno != EEXIST) {
			err = -errno;
		}
		break;
	case REPL_OP_SYMLINK:
		err = local_rm_at(pfd, leaf, 0);
		if (!err && symlinkat(m->arg, pfd, leaf) < 0) {
			err = -errno;
		}
		break;
	case REPL_OP_OPEN:
		if (fstatat(pfd, leaf, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
		    !S_ISREG(sb.st_mode)) {
			err = local_rm_at(pfd, leaf, 0);
		}
		fd = err ? err : local_open_reg(pfd, leaf, O_CREAT);
		if (fd < 0) {
			err = fd;
			break;
		}
		if ((m->flags & REPL_FLAG_WHOLE)
			    ? ftruncate(fd, 0) < 0
			    : ftruncate(fd, (off_t)m->size) < 0) {
			err = -errno;
			close(fd);
			break;
		}
		local_keep(l, m->path, fd); /* for the file's WRITEs */
		break;
	case REPL_OP_WRITE:
		/* The file was not kept (another server took the OPEN, a
		 * transfer taken up after a cut): opened once here. */
		fd = local_open_reg(pfd, leaf, 0);
		if (fd < 0) {
			err = fd;
			break;
		}
		local_keep(l, m->path, fd);
		err = local_write(fd, m, r);
		break;
	case REPL_OP_ATTRS:
		err = local_attrs(l, pfd, leaf, m);
		break;
	default:
		err = -EINVAL;
	}
	close(pfd);
	return err;
}

void repl_local_apply(struct repl_local *l, const struct repl_msg *m,
		      struct repl_result *r)
{
	bool root_ok = m->op == REPL_OP_PRUNE || m->op == REPL_OP_EMPTY ||
		       m->op >= REPL_OP_COMMIT || m->op == REPL_OP_HELLO;
	int err;

	memset(r, 0, sizeof(*r));
	err = repl_path_check(m->path, root_ok, r->reason, sizeof(r->reason));
	if (!err && root_ok && *m->path && m->op != REPL_OP_PRUNE) {
		err = errbuf_printf(r->reason, sizeof(r->reason), -EINVAL,
				    "%s takes no path", repl_op_name(m->op));
	}
	if (!err && m->op == REPL_OP_SYMLINK &&
	    (!m->arg_len || strlen(m->arg) != m->arg_len)) {
		err = errbuf_printf(r->reason, sizeof(r->reason), -EINVAL,
				    "a symlink's target: empty or a NUL in it");
	}
	if (!err && m->op == REPL_OP_PRUNE && m->arg_len &&
	    m->arg[m->arg_len - 1] != '\0') {
		err = errbuf_printf(r->reason, sizeof(r->reason), -EINVAL,
				    "prune: names not NUL-terminated");
	}
	if (!err && (m->op == REPL_OP_PRUNE || !root_ok)) {
		err = repl_undo_check(l, r);
	}
	/* Only the file's own WRITEs and ATTRS find it kept. */
	if (err || (m->op != REPL_OP_WRITE && m->op != REPL_OP_ATTRS) ||
	    local_kept(l, m->path) < 0) {
		repl_open_close(l->open);
	}
	if (!err && m->op == REPL_OP_WRITE && local_kept(l, m->path) >= 0) {
		err = local_write(l->open->fd, m, r);
	} else if (!err) {
		switch (m->op) {
		case REPL_OP_HELLO:
			break;
		case REPL_OP_REVERSE:
			err = errbuf_printf(r->reason, sizeof(r->reason),
					    -EOPNOTSUPP,
					    "reverse is the service's "
					    "(reverse.h)");
			break;
		case REPL_OP_EMPTY:
			err = local_empty(l, r);
			break;
		case REPL_OP_HASSNAP:
			err = local_hassnap(l, m, r);
			break;
		case REPL_OP_PRUNE:
			err = local_prune(l, m, r);
			break;
		case REPL_OP_COMMIT:
		case REPL_OP_DELSNAP:
		case REPL_OP_RESYNC:
		case REPL_OP_BREAK:
		case REPL_OP_BEGIN:
		case REPL_OP_ABORT:
			err = local_snap(l, m, r);
			break;
		default:
			err = local_entry(l, m, r);
		}
	}
	if (err) {
		repl_open_close(l->open);
	}
	r->err = err;
	if (err && !r->reason[0]) {
		snprintf(r->reason, sizeof(r->reason), "%s",
			 err == -ELOOP || err == -EXDEV
				 ? "the path leaves the datastore (a symlink "
				   "or another file system on the way)"
				 : strerror(-err));
	}
}
