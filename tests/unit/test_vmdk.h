/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_vmdk.h: fixtures shared by the tests/unit/test_vmdk_*.c files: a
 * scratch directory per test, small file helpers, and a struct vmdk_io that
 * records writes and fails the Nth counted call once or from then on
 * (SQLite src/test_vfs.c; FAULTSIM transient / persistent).
 */
#ifndef DSNFS_TEST_VMDK_H
#define DSNFS_TEST_VMDK_H

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "vmdk/vmdk.h"

#define TV_UNUSED __attribute__((unused))

struct tdir {
	char path[256];
	char buf[8][512]; /* rotating results of tp() */
	unsigned next;
};

static TV_UNUSED int tdir_setup(void **state)
{
	struct tdir *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	snprintf(t->path, sizeof(t->path), "/tmp/test_vmdk.XXXXXX");
	assert_non_null(mkdtemp(t->path));
	*state = t;
	return 0;
}

static int tdir_rm_cb(const char *p, const struct stat *st, int flag,
		      struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static TV_UNUSED int tdir_teardown(void **state)
{
	struct tdir *t = *state;

	nftw(t->path, tdir_rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	free(t);
	return 0;
}

/* "<scratch>/<name>"; valid for the next 7 calls. */
static TV_UNUSED const char *tp(struct tdir *t, const char *name)
{
	char *b = t->buf[t->next++ % 8];
	size_t n = strlen(t->path);
	size_t m = strlen(name);

	assert_true(n + 1 + m < 512);
	memcpy(b, t->path, n);
	b[n] = '/';
	memmove(b + n + 1, name, m + 1);
	return b;
}

static TV_UNUSED void fill_pattern(uint8_t *buf, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++) {
		buf[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 9));
	}
}

static TV_UNUSED uint64_t file_size(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return (uint64_t)st.st_size;
}

/* Overwrites @len bytes at @off of @path. */
static TV_UNUSED void poke(const char *path, uint64_t off, const void *p,
			   size_t len)
{
	int fd = open(path, O_WRONLY);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, p, len, (off_t)off), (ssize_t)len);
	close(fd);
}

static TV_UNUSED void poke32(const char *path, uint64_t off, uint32_t v)
{
	poke(path, off, &v, sizeof(v)); /* tests run on little endian */
}

static TV_UNUSED void poke64(const char *path, uint64_t off, uint64_t v)
{
	poke(path, off, &v, sizeof(v));
}

static TV_UNUSED void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Opens @path with @flags (no io: the system's), failing the test with
 * vmdk_open()'s message when it fails. */
static TV_UNUSED struct vmdk *open_ok(const char *path, unsigned flags)
{
	struct vmdk *v = NULL;
	char err[512];
	int r = vmdk_open(NULL, path, flags, &v, err, sizeof(err));

	if (r) {
		fail_msg("open %s: %d %s", path, r, err);
	}
	return v;
}

/* ---- fault-injecting I/O ---------------------------------------------- */

enum fault_op {
	FAULT_OPEN = 1u << 0,
	FAULT_PREAD = 1u << 1,
	FAULT_PWRITE = 1u << 2,
	FAULT_FSYNC = 1u << 3,
	FAULT_FSTAT = 1u << 4,
	FAULT_OTHER = 1u << 5,
	FAULT_COPY = 1u << 6, /* copy_file_range, FICLONE */
};

#define FAULT_LOG_MAX 64

struct fault_io {
	struct vmdk_io io;
	unsigned mask; /* ops counted */
	unsigned long calls; /* counted calls so far */
	unsigned long fail_at; /* 0: never */
	bool persistent; /* fail every call from fail_at on */
	int err; /* errno to fail with */
	int64_t fstat_size; /* >= 0: report this st_size */
	unsigned n_log; /* pwrites recorded */
	uint64_t log_off[FAULT_LOG_MAX];
	size_t log_len[FAULT_LOG_MAX];
};

static bool fault_hit(void *ctx, unsigned op)
{
	struct fault_io *f = ctx;

	if (!(f->mask & op)) {
		return false;
	}
	f->calls++;
	return f->fail_at && (f->calls == f->fail_at ||
			      (f->persistent && f->calls > f->fail_at));
}

static const struct vmdk_io_ops *sys(void)
{
	return vmdk_io_posix()->ops;
}

static int f_open(void *c, const char *p, int fl, mode_t m, int *fd)
{
	return fault_hit(c, FAULT_OPEN) ? -((struct fault_io *)c)->err
					: sys()->open(NULL, p, fl, m, fd);
}

static int f_close(void *c, int fd)
{
	(void)c;
	return sys()->close(NULL, fd);
}

static ssize_t f_pread(void *c, int fd, void *b, size_t n, uint64_t o)
{
	return fault_hit(c, FAULT_PREAD) ? -((struct fault_io *)c)->err
					 : sys()->pread(NULL, fd, b, n, o);
}

static ssize_t f_pwrite(void *c, int fd, const void *b, size_t n, uint64_t o)
{
	struct fault_io *f = c;

	if (fault_hit(c, FAULT_PWRITE)) {
		return -f->err;
	}
	if (f->n_log < FAULT_LOG_MAX) {
		f->log_off[f->n_log] = o;
		f->log_len[f->n_log++] = n;
	}
	return sys()->pwrite(NULL, fd, b, n, o);
}

static int f_fstat(void *c, int fd, struct stat *st)
{
	struct fault_io *f = c;
	int err;

	if (fault_hit(c, FAULT_FSTAT)) {
		return -f->err;
	}
	err = sys()->fstat(NULL, fd, st);
	if (!err && f->fstat_size >= 0) {
		st->st_size = f->fstat_size;
	}
	return err;
}

static int f_stat(void *c, const char *p, struct stat *st)
{
	return fault_hit(c, FAULT_OTHER) ? -((struct fault_io *)c)->err
					 : sys()->stat(NULL, p, st);
}

static int f_ftruncate(void *c, int fd, uint64_t len)
{
	return fault_hit(c, FAULT_OTHER) ? -((struct fault_io *)c)->err
					 : sys()->ftruncate(NULL, fd, len);
}

static int f_fallocate(void *c, int fd, int mode, uint64_t o, uint64_t len)
{
	return fault_hit(c, FAULT_OTHER)
		       ? -((struct fault_io *)c)->err
		       : sys()->fallocate(NULL, fd, mode, o, len);
}

static int f_fsync(void *c, int fd)
{
	return fault_hit(c, FAULT_FSYNC) ? -((struct fault_io *)c)->err
					 : sys()->fsync(NULL, fd);
}

static int f_fiemap(void *c, int fd, struct fiemap *fm)
{
	return fault_hit(c, FAULT_OTHER) ? -((struct fault_io *)c)->err
					 : sys()->fiemap(NULL, fd, fm);
}

static int64_t f_seek(void *c, int fd, uint64_t o, int whence)
{
	return fault_hit(c, FAULT_OTHER) ? -((struct fault_io *)c)->err
					 : sys()->seek(NULL, fd, o, whence);
}

static ssize_t f_copy_range(void *c, int in, uint64_t oi, int out, uint64_t oo,
			    size_t len)
{
	return fault_hit(c, FAULT_COPY)
		       ? -((struct fault_io *)c)->err
		       : sys()->copy_range(NULL, in, oi, out, oo, len);
}

static int f_clone_file(void *c, int in, int out)
{
	return fault_hit(c, FAULT_COPY) ? -((struct fault_io *)c)->err
					: sys()->clone_file(NULL, in, out);
}

static int f_rename(void *c, const char *a, const char *b)
{
	return fault_hit(c, FAULT_OTHER) ? -((struct fault_io *)c)->err
					 : sys()->rename(NULL, a, b);
}

static int f_unlink(void *c, const char *p)
{
	(void)c;
	return sys()->unlink(NULL, p);
}

static int f_chmod(void *c, const char *p, mode_t m)
{
	return fault_hit(c, FAULT_OTHER) ? -((struct fault_io *)c)->err
					 : sys()->chmod(NULL, p, m);
}

static const struct vmdk_io_ops fault_ops = {
	.open = f_open,
	.close = f_close,
	.pread = f_pread,
	.pwrite = f_pwrite,
	.fstat = f_fstat,
	.stat = f_stat,
	.ftruncate = f_ftruncate,
	.fallocate = f_fallocate,
	.fsync = f_fsync,
	.fiemap = f_fiemap,
	.seek = f_seek,
	.copy_range = f_copy_range,
	.clone_file = f_clone_file,
	.rename = f_rename,
	.unlink = f_unlink,
	.chmod = f_chmod,
};

/* A fault_io that counts @mask calls and fails none yet. */
static TV_UNUSED void fault_init(struct fault_io *f, unsigned mask)
{
	memset(f, 0, sizeof(*f));
	f->io.ops = &fault_ops;
	f->io.ctx = f;
	f->mask = mask;
	f->err = EIO;
	f->fstat_size = -1;
}

/* Arms @f: fail counted call number @nth (from now), once or from then on. */
static TV_UNUSED void fault_arm(struct fault_io *f, unsigned long nth, int err,
				bool persistent)
{
	f->calls = 0;
	f->fail_at = nth;
	f->err = err;
	f->persistent = persistent;
	f->n_log = 0;
}

#endif
