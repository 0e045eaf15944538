// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_vmdk_sparse: opens the input as a disk image (vmdk/chain.c, sparse.c,
 * cowd.c, sesparse.c, grain.c) through an in-memory struct vmdk_io, so the
 * KDMV, COWD and seSparse header decoders, embedded descriptors, grain
 * directories and tables all see hostile bytes without touching a file
 * system.  Whatever opens is read
 * at a few places and checked; nothing may crash, and nothing may be
 * written (the memory file refuses writes).  Parents and other extents do
 * not exist here: only "mem.vmdk" opens.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "vmdk/vmdk_int.h"

#define MEM_FD 42
#define MEM_PATH "mem.vmdk"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct mem_file {
	const uint8_t *data;
	size_t size;
};

static int m_open(void *c, const char *p, int fl, mode_t m, int *fd)
{
	(void)c;
	(void)m;
	if (strcmp(p, MEM_PATH)) {
		return -ENOENT;
	}
	if ((fl & O_ACCMODE) != O_RDONLY) {
		return -EROFS;
	}
	*fd = MEM_FD;
	return 0;
}

static int m_close(void *c, int fd)
{
	(void)c;
	(void)fd;
	return 0;
}

static ssize_t m_pread(void *c, int fd, void *b, size_t n, uint64_t o)
{
	struct mem_file *f = c;

	(void)fd;
	if (o >= f->size) {
		return 0;
	}
	if (n > f->size - o) {
		n = f->size - (size_t)o;
	}
	memcpy(b, f->data + o, n);
	return (ssize_t)n;
}

static ssize_t m_pwrite(void *c, int fd, const void *b, size_t n, uint64_t o)
{
	(void)c;
	(void)fd;
	(void)b;
	(void)n;
	(void)o;
	abort(); /* a read-only open must never write */
}

static int m_fstat(void *c, int fd, struct stat *st)
{
	struct mem_file *f = c;

	(void)fd;
	memset(st, 0, sizeof(*st));
	st->st_size = (off_t)f->size;
	st->st_mode = S_IFREG | 0644;
	st->st_ino = 1;
	return 0;
}

static int m_stat(void *c, const char *p, struct stat *st)
{
	return strcmp(p, MEM_PATH) ? -ENOENT : m_fstat(c, MEM_FD, st);
}

/* The calls a read-only open never needs. */
static int m_ftruncate(void *c, int fd, uint64_t len)
{
	(void)c;
	(void)fd;
	(void)len;
	return -ENOSYS;
}

static int m_fallocate(void *c, int fd, int mode, uint64_t o, uint64_t len)
{
	(void)c;
	(void)fd;
	(void)mode;
	(void)o;
	(void)len;
	return -ENOSYS;
}

static int m_fd_only(void *c, int fd)
{
	(void)c;
	(void)fd;
	return -ENOSYS;
}

static int m_fiemap(void *c, int fd, struct fiemap *fm)
{
	(void)c;
	(void)fd;
	(void)fm;
	return -EOPNOTSUPP;
}

static int64_t m_seek(void *c, int fd, uint64_t o, int whence)
{
	(void)c;
	(void)fd;
	(void)o;
	(void)whence;
	return -EINVAL;
}

static ssize_t m_copy_range(void *c, int in, uint64_t oi, int out, uint64_t oo,
			    size_t len)
{
	(void)c;
	(void)in;
	(void)oi;
	(void)out;
	(void)oo;
	(void)len;
	return -ENOSYS;
}

static int m_clone_file(void *c, int in, int out)
{
	(void)c;
	(void)in;
	(void)out;
	return -ENOSYS;
}

static int m_paths(void *c, const char *a, const char *b)
{
	(void)c;
	(void)a;
	(void)b;
	return -EROFS;
}

static int m_path(void *c, const char *a)
{
	(void)c;
	(void)a;
	return -EROFS;
}

static int m_chmod(void *c, const char *a, mode_t m)
{
	(void)c;
	(void)a;
	(void)m;
	return -EROFS;
}

static const struct vmdk_io_ops mem_ops = {
	.open = m_open,
	.close = m_close,
	.pread = m_pread,
	.pwrite = m_pwrite,
	.fstat = m_fstat,
	.stat = m_stat,
	.ftruncate = m_ftruncate,
	.fallocate = m_fallocate,
	.fsync = m_fd_only,
	.fiemap = m_fiemap,
	.seek = m_seek,
	.copy_range = m_copy_range,
	.clone_file = m_clone_file,
	.rename = m_paths,
	.unlink = m_path,
	.chmod = m_chmod,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mem_file f = { data, size };
	struct vmdk_io io = { &mem_ops, &f };
	struct vmdk_check_report rep;
	enum vmdk_block st;
	uint8_t buf[4096];
	uint64_t run, disk;
	struct vmdk *v;
	char err[512];

	if (vmdk_open(&io, MEM_PATH, 0, &v, err, sizeof(err)) == 0) {
		disk = vmdk_size_bytes(v);
		for (unsigned i = 0; i < 8; i++) {
			uint64_t off = disk / 8 * i;
			size_t n = disk - off < sizeof(buf)
					   ? (size_t)(disk - off)
					   : sizeof(buf);

			vmdk_pread(v, buf, n, off);
			if (n) {
				vmdk_block_status(v, off, disk - off, &st,
						  &run);
			}
		}
		vmdk_close(v);
	}
	vmdk_check(&io, MEM_PATH, NULL, NULL, &rep, err, sizeof(err));
	return 0;
}
