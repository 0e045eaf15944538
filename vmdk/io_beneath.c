// SPDX-License-Identifier: Apache-2.0
/*
 * vmdk/io_beneath.c: a struct vmdk_io confined to one directory tree.  The
 * library names files by path (a descriptor's directory joined with the
 * extent or parent names it holds), and those names are data: a disk
 * written by a client may name "../../etc/shadow".  Every path-taking call
 * here resolves the part below the root from the root's descriptor with
 * openat2(2) RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV |
 * RESOLVE_NO_MAGICLINKS, so no name and no symlink can leave the tree;
 * calls on descriptors are the POSIX ones.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "vmdk/vmdk_int.h"

#define BENEATH_RESOLVE                                                        \
	(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV |             \
	 RESOLVE_NO_MAGICLINKS)

static int beneath_openat2(int dirfd, const char *rel, int flags, mode_t mode)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0,
		.resolve = BENEATH_RESOLVE,
	};
	long fd;

	do {
		fd = syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));
	} while (fd < 0 && (errno == EINTR || errno == EAGAIN));
	return fd < 0 ? -errno : (int)fd;
}

/* The part of @path below the root: "" for the root itself, or -EXDEV
 * when @path is not under it. */
static int beneath_rel(const struct vmdk_io_beneath *b, const char *path,
		       const char **rel)
{
	const char *p = path;

	if (strncmp(p, b->root, b->root_len)) {
		return -EXDEV;
	}
	p += b->root_len;
	if (*p == '\0') {
		*rel = ".";
		return 0;
	}
	if (*p != '/') {
		return -EXDEV; /* "/srv/ds10" is not under "/srv/ds1" */
	}
	while (*p == '/') {
		p++;
	}
	*rel = *p ? p : ".";
	return 0;
}

/* The directory holding @path, opened O_PATH, and its last name (borrowed
 * from @path).  A last name "." or ".." is -EINVAL. */
static int beneath_parent(const struct vmdk_io_beneath *b, const char *path,
			  int *dirfd, const char **name)
{
	const char *rel, *slash;
	char *dir;
	int err, fd;

	err = beneath_rel(b, path, &rel);
	if (err) {
		return err;
	}
	slash = strrchr(rel, '/');
	*name = slash ? slash + 1 : rel;
	if (!**name || !strcmp(*name, ".") || !strcmp(*name, "..")) {
		return -EINVAL;
	}
	dir = slash ? strndup(rel, (size_t)(slash - rel)) : strdup(".");
	if (!dir) {
		return -ENOMEM;
	}
	fd = beneath_openat2(b->root_fd, dir, O_PATH | O_DIRECTORY, 0);
	free(dir);
	if (fd < 0) {
		return fd;
	}
	*dirfd = fd;
	return 0;
}

static int beneath_open(void *ctx, const char *path, int flags, mode_t mode,
			int *fd_out)
{
	const struct vmdk_io_beneath *b = ctx;
	const char *rel;
	int err = beneath_rel(b, path, &rel);
	int fd;

	if (err) {
		return err;
	}
	fd = beneath_openat2(b->root_fd, rel, flags, mode);
	if (fd < 0) {
		return fd;
	}
	*fd_out = fd;
	return 0;
}

static int beneath_stat(void *ctx, const char *path, struct stat *st)
{
	const struct vmdk_io_beneath *b = ctx;
	const char *rel;
	int err = beneath_rel(b, path, &rel);
	int fd;

	if (err) {
		return err;
	}
	fd = beneath_openat2(b->root_fd, rel, O_PATH, 0);
	if (fd < 0) {
		return fd;
	}
	err = fstat(fd, st) ? -errno : 0;
	close(fd);
	return err;
}

static int beneath_rename(void *ctx, const char *from, const char *to)
{
	const struct vmdk_io_beneath *b = ctx;
	const char *fname, *tname;
	int fdir = -1, tdir = -1;
	int err;

	err = beneath_parent(b, from, &fdir, &fname);
	if (err) {
		return err;
	}
	err = beneath_parent(b, to, &tdir, &tname);
	if (!err) {
		err = renameat(fdir, fname, tdir, tname) ? -errno : 0;
		close(tdir);
	}
	close(fdir);
	return err;
}

static int beneath_unlink(void *ctx, const char *path)
{
	const struct vmdk_io_beneath *b = ctx;
	const char *name;
	int dir, err;

	err = beneath_parent(b, path, &dir, &name);
	if (err) {
		return err;
	}
	err = unlinkat(dir, name, 0) ? -errno : 0;
	close(dir);
	return err;
}

static int beneath_chmod(void *ctx, const char *path, mode_t mode)
{
	const struct vmdk_io_beneath *b = ctx;
	const char *rel;
	int err = beneath_rel(b, path, &rel);
	int fd;

	if (err) {
		return err;
	}
	/* fchmodat() follows a symlink at the end; an open file does not. */
	fd = beneath_openat2(b->root_fd, rel, O_RDONLY | O_NONBLOCK, 0);
	if (fd < 0) {
		return fd;
	}
	err = fchmod(fd, mode) ? -errno : 0;
	close(fd);
	return err;
}

int vmdk_io_beneath_init(struct vmdk_io_beneath *b, const char *root)
{
	const struct vmdk_io_ops *posix = vmdk_io_posix()->ops;
	size_t len = strlen(root);
	int err;

	memset(b, 0, sizeof(*b));
	b->root_fd = -1;
	while (len > 1 && root[len - 1] == '/') {
		len--;
	}
	b->root = strndup(root, len);
	if (!b->root) {
		return -ENOMEM;
	}
	b->root_len = len;
	/* The root itself is the caller's (a datastore's configured path,
	 * which may be a symlink); only what lies below it is confined. */
	b->root_fd = open(b->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (b->root_fd < 0) {
		err = -errno;
		free(b->root);
		b->root = NULL;
		return err;
	}
	b->ops = *posix;
	b->ops.open = beneath_open;
	b->ops.stat = beneath_stat;
	b->ops.rename = beneath_rename;
	b->ops.unlink = beneath_unlink;
	b->ops.chmod = beneath_chmod;
	b->io.ops = &b->ops;
	b->io.ctx = b;
	return 0;
}

void vmdk_io_beneath_fini(struct vmdk_io_beneath *b)
{
	if (b->root_fd >= 0) {
		close(b->root_fd);
	}
	free(b->root);
	memset(b, 0, sizeof(*b));
	b->root_fd = -1;
}
