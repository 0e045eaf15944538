// SPDX-License-Identifier: Apache-2.0
/*
 * vmdk/io.c: every file access of vmdk/.  The POSIX implementation of
 * struct vmdk_io_ops, and the helpers the rest of the library calls: they
 * loop over short reads and writes once, here, and pass errors as values.
 * A test substitutes its own ops (one that fails the Nth call) through the
 * struct vmdk_io every entry point takes.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmdk/vmdk_int.h"

static int sys_open(void *ctx, const char *path, int flags, mode_t mode,
		    int *fd_out)
{
	int fd;

	(void)ctx;
	fd = open(path, flags | O_CLOEXEC, mode);
	if (fd < 0) {
		return -errno;
	}
	*fd_out = fd;
	return 0;
}

static int sys_close(void *ctx, int fd)
{
	(void)ctx;
	return close(fd) ? -errno : 0;
}

static ssize_t sys_pread(void *ctx, int fd, void *buf, size_t len, uint64_t off)
{
	ssize_t n;

	(void)ctx;
	do {
		n = pread(fd, buf, len, (off_t)off);
	} while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

static ssize_t sys_pwrite(void *ctx, int fd, const void *buf, size_t len,
			  uint64_t off)
{
	ssize_t n;

	(void)ctx;
	do {
		n = pwrite(fd, buf, len, (off_t)off);
	} while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

static int sys_fstat(void *ctx, int fd, struct stat *st)
{
	(void)ctx;
	return fstat(fd, st) ? -errno : 0;
}

static int sys_stat(void *ctx, const char *path, struct stat *st)
{
	(void)ctx;
	return stat(path, st) ? -errno : 0;
}

static int sys_ftruncate(void *ctx, int fd, uint64_t len)
{
	(void)ctx;
	return ftruncate(fd, (off_t)len) ? -errno : 0;
}

static int sys_fallocate(void *ctx, int fd, int mode, uint64_t off,
			 uint64_t len)
{
	(void)ctx;
	return fallocate(fd, mode, (off_t)off, (off_t)len) ? -errno : 0;
}

static int sys_fsync(void *ctx, int fd)
{
	(void)ctx;
	return fsync(fd) ? -errno : 0;
}

static int sys_fiemap(void *ctx, int fd, struct fiemap *fm)
{
	(void)ctx;
	return ioctl(fd, FS_IOC_FIEMAP, fm) ? -errno : 0;
}

static int64_t sys_seek(void *ctx, int fd, uint64_t off, int whence)
{
	off_t r;

	(void)ctx;
	r = lseek(fd, (off_t)off, whence);
	return r < 0 ? -errno : (int64_t)r;
}

static ssize_t sys_copy_range(void *ctx, int fd_in, uint64_t off_in, int fd_out,
			      uint64_t off_out, size_t len)
{
	loff_t in = (loff_t)off_in;
	loff_t out = (loff_t)off_out;
	ssize_t n;

	(void)ctx;
	n = copy_file_range(fd_in, &in, fd_out, &out, len, 0);
	return n < 0 ? -errno : n;
}

static int sys_clone_file(void *ctx, int fd_in, int fd_out)
{
	(void)ctx;
	return ioctl(fd_out, FICLONE, fd_in) ? -errno : 0;
}

static int sys_rename(void *ctx, const char *from, const char *to)
{
	(void)ctx;
	return rename(from, to) ? -errno : 0;
}

static int sys_unlink(void *ctx, const char *path)
{
	(void)ctx;
	return unlink(path) ? -errno : 0;
}

static int sys_chmod(void *ctx, const char *path, mode_t mode)
{
	(void)ctx;
	return chmod(path, mode) ? -errno : 0;
}

static const struct vmdk_io_ops sys_ops = {
	.open = sys_open,
	.close = sys_close,
	.pread = sys_pread,
	.pwrite = sys_pwrite,
	.fstat = sys_fstat,
	.stat = sys_stat,
	.ftruncate = sys_ftruncate,
	.fallocate = sys_fallocate,
	.fsync = sys_fsync,
	.fiemap = sys_fiemap,
	.seek = sys_seek,
	.copy_range = sys_copy_range,
	.clone_file = sys_clone_file,
	.rename = sys_rename,
	.unlink = sys_unlink,
	.chmod = sys_chmod,
};

static const struct vmdk_io sys_io = { .ops = &sys_ops, .ctx = NULL };

const struct vmdk_io *vmdk_io_posix(void)
{
	return &sys_io;
}

/* What a file that is not a regular one is, for the refusal. */
static const char *io_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFIFO:
		return "a FIFO";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFDIR:
		return "a directory";
	case S_IFSOCK:
		return "a socket";
	case S_IFLNK:
		return "a symlink";
	default:
		return "not a file";
	}
}

int vmdk__io_open(const struct vmdk_io *io, const char *path, int flags,
		  mode_t mode, int *fd_out, char *errbuf, size_t errlen)
{
	struct stat st;
	int fd = -1;
	int err;

	/* A descriptor's names are data a client wrote: a device, FIFO or
	 * directory is never a disk.  Looked at before the open, so that a
	 * device is not even opened (opening some has effects), and again
	 * on the open file, which a rename in between cannot change.  A
	 * FIFO must not block the opener: O_NONBLOCK, which a regular file
	 * ignores, so it stays set. */
	if (!(flags & O_CREAT) && !io->ops->stat(io->ctx, path, &st) &&
	    !S_ISREG(st.st_mode)) {
		return vmdk__errf(errbuf, errlen, -EINVAL,
				  "not a regular file: %s (%s)", path,
				  io_kind(st.st_mode));
	}
	err = io->ops->open(io->ctx, path, flags | O_NONBLOCK, mode, &fd);
	if (err) {
		return vmdk__errf(errbuf, errlen, err, "%s: %s", path,
				  strerror(-err));
	}
	err = io->ops->fstat(io->ctx, fd, &st);
	if (err) {
		vmdk__errf(errbuf, errlen, err, "%s: %s", path, strerror(-err));
	} else if (!S_ISREG(st.st_mode)) {
		err = vmdk__errf(errbuf, errlen, -EINVAL,
				 "not a regular file: %s (%s)", path,
				 io_kind(st.st_mode));
	}
	if (err) {
		io->ops->close(io->ctx, fd);
		return err;
	}
	*fd_out = fd;
	return 0;
}

void vmdk__io_close(const struct vmdk_io *io, int fd)
{
	if (fd >= 0) {
		io->ops->close(io->ctx, fd);
	}
}

int vmdk__io_read_full(const struct vmdk_io *io, int fd, void *buf, size_t len,
		       uint64_t off, size_t *done)
{
	uint8_t *p = buf;
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = io->ops->pread(io->ctx, fd, p + got, len - got, off + got);
		if (n < 0) {
			*done = got;
			return (int)n;
		}
		if (n == 0) {
			break;
		}
		got += (size_t)n;
	}
	*done = got;
	return 0;
}

int vmdk__io_read_zfill(const struct vmdk_io *io, int fd, void *buf, size_t len,
			uint64_t off)
{
	size_t done;
	int err;

	err = vmdk__io_read_full(io, fd, buf, len, off, &done);
	if (err) {
		return err;
	}
	memset((uint8_t *)buf + done, 0, len - done);
	return 0;
}

int vmdk__io_write_full(const struct vmdk_io *io, int fd, const void *buf,
			size_t len, uint64_t off)
{
	const uint8_t *p = buf;
	size_t put = 0;
	ssize_t n;

	while (put < len) {
		n = io->ops->pwrite(io->ctx, fd, p + put, len - put, off + put);
		if (n < 0) {
			return (int)n;
		}
		if (n == 0) {
			return -EIO;
		}
		put += (size_t)n;
	}
	return 0;
}

int vmdk__io_fstat(const struct vmdk_io *io, int fd, struct stat *st)
{
	return io->ops->fstat(io->ctx, fd, st);
}

int vmdk__io_stat(const struct vmdk_io *io, const char *path, struct stat *st)
{
	return io->ops->stat(io->ctx, path, st);
}

int vmdk__io_ftruncate(const struct vmdk_io *io, int fd, uint64_t len)
{
	return io->ops->ftruncate(io->ctx, fd, len);
}

int vmdk__io_fallocate(const struct vmdk_io *io, int fd, int mode, uint64_t off,
		       uint64_t len)
{
	return io->ops->fallocate(io->ctx, fd, mode, off, len);
}

int vmdk__io_fsync(const struct vmdk_io *io, int fd)
{
	return io->ops->fsync(io->ctx, fd);
}

int vmdk__io_fiemap(const struct vmdk_io *io, int fd, struct fiemap *fm)
{
	return io->ops->fiemap(io->ctx, fd, fm);
}

int64_t vmdk__io_seek(const struct vmdk_io *io, int fd, uint64_t off,
		      int whence)
{
	return io->ops->seek(io->ctx, fd, off, whence);
}

ssize_t vmdk__io_copy_range(const struct vmdk_io *io, int fd_in,
			    uint64_t off_in, int fd_out, uint64_t off_out,
			    size_t len)
{
	return io->ops->copy_range(io->ctx, fd_in, off_in, fd_out, off_out,
				   len);
}

int vmdk__io_clone_file(const struct vmdk_io *io, int fd_in, int fd_out)
{
	return io->ops->clone_file(io->ctx, fd_in, fd_out);
}

int vmdk__io_rename(const struct vmdk_io *io, const char *from, const char *to)
{
	return io->ops->rename(io->ctx, from, to);
}

int vmdk__io_unlink(const struct vmdk_io *io, const char *path)
{
	return io->ops->unlink(io->ctx, path);
}

int vmdk__io_chmod(const struct vmdk_io *io, const char *path, mode_t mode)
{
	return io->ops->chmod(io->ctx, path, mode);
}

int vmdk__io_write_new_file(const struct vmdk_io *io, const char *path,
			    const void *buf, size_t len, mode_t mode)
{
	int fd = -1;
	int err;

	err = vmdk__io_open(io, path, O_WRONLY | O_CREAT | O_EXCL, mode, &fd,
			    NULL, 0);
	if (err) {
		return err;
	}
	err = vmdk__io_write_full(io, fd, buf, len, 0);
	if (!err) {
		err = vmdk__io_fsync(io, fd);
	}
	vmdk__io_close(io, fd);
	if (err) {
		vmdk__io_unlink(io, path);
	}
	return err;
}

int vmdk__io_replace_file(const struct vmdk_io *io, const char *path,
			  const void *buf, size_t len)
{
	struct stat st;
	char *tmp;
	int err;

	err = vmdk__io_stat(io, path, &st);
	if (err) {
		return err;
	}
	if (asprintf(&tmp, "%s.tmp", path) < 0) {
		return -ENOMEM;
	}
	vmdk__io_unlink(io, tmp);
	err = vmdk__io_write_new_file(io, tmp, buf, len, st.st_mode & 07777);
	if (err) {
		goto out_free;
	}
	err = vmdk__io_rename(io, tmp, path);
	if (err) {
		vmdk__io_unlink(io, tmp);
	}
out_free:
	free(tmp);
	return err;
}
