// SPDX-License-Identifier: Apache-2.0
/*
 * vmdkbench: random reads of a virtual disk as a hypervisor host does them
 * over NFS: the host, not the server, walks the disk's VMDK chain (a
 * linked clone's redo log, then its parent's flat file), so every read of
 * a delta costs the host a grain-table lookup and a read of whichever file
 * holds the grain.  libvmdk (vmdk/) does the walking, through a struct
 * vmdk_io whose calls are libnfs's synchronous ones; DEPTH workers, each
 * with its own NFS connection and its own open disk, keep DEPTH reads in
 * flight.  QEMU 7.2 cannot do this (it cannot open a flat extent over
 * nfs://: docs/mounting.md), hence this tool, for `make lab-clone-reads`.
 *
 *   vmdkbench read URL [-d DEPTH] [-s BYTES] [-t SECONDS] [-S SEED]
 *   vmdkbench fill URL PERCENT [-s BYTES] [-S SEED]
 *
 * URL is nfs://HOST/EXPORT/PATH.vmdk?nfsport=N&mountport=M.  `read`
 * prints IOPS, MiB/s and the median and 99th-percentile latency; `fill`
 * writes PERCENT of the disk in 64 KiB pieces at seeded random places
 * (one worker: a struct vmdk is written by one thread), then flushes.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <nfsc/libnfs.h>

#include "vmdk/vmdk.h"

#define MAX_FDS 64
#define MAX_DEPTH 64
#define FILL_PIECE (64u << 10)
#define LAT_BUCKETS 4096 /* 10 us each: up to 40.96 ms, then the last */
#define LAT_BUCKET_NS 10000u

/* One NFS connection, mounted on the export, and its open files. */
struct nfs_io {
	struct nfs_context *nfs;
	struct nfsfh *fh[MAX_FDS];
	struct vmdk_io io;
};

static int io_open(void *ctx, const char *path, int flags, mode_t mode,
		   int *fd_out)
{
	struct nfs_io *n = ctx;
	int err;

	for (int fd = 0; fd < MAX_FDS; fd++) {
		if (n->fh[fd]) {
			continue;
		}
		/* O_CREAT: the library rewrites a descriptor by a new file. */
		err = nfs_open2(
			n->nfs, path,
			flags & (O_ACCMODE | O_CREAT | O_EXCL | O_TRUNC),
			(int)mode, &n->fh[fd]);
		if (err) {
			return err < 0 ? err : -EIO;
		}
		*fd_out = fd;
		return 0;
	}
	return -EMFILE;
}

static int io_close(void *ctx, int fd)
{
	struct nfs_io *n = ctx;
	int err = nfs_close(n->nfs, n->fh[fd]);

	n->fh[fd] = NULL;
	return err;
}

static ssize_t io_pread(void *ctx, int fd, void *buf, size_t len, uint64_t off)
{
	struct nfs_io *n = ctx;

	return nfs_pread(n->nfs, n->fh[fd], off, len, buf);
}

static ssize_t io_pwrite(void *ctx, int fd, const void *buf, size_t len,
			 uint64_t off)
{
	struct nfs_io *n = ctx;

	return nfs_pwrite(n->nfs, n->fh[fd], off, len, buf);
}

static void stat_from_nfs(const struct nfs_stat_64 *s, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_dev = (dev_t)s->nfs_dev;
	st->st_ino = (ino_t)s->nfs_ino;
	st->st_mode = (mode_t)s->nfs_mode;
	st->st_nlink = (nlink_t)s->nfs_nlink;
	st->st_size = (off_t)s->nfs_size;
	st->st_blocks = (blkcnt_t)(s->nfs_used / 512);
	st->st_blksize = 4096;
}

static int io_fstat(void *ctx, int fd, struct stat *st)
{
	struct nfs_io *n = ctx;
	struct nfs_stat_64 s;
	int err = nfs_fstat64(n->nfs, n->fh[fd], &s);

	if (!err) {
		stat_from_nfs(&s, st);
	}
	return err;
}

static int io_stat(void *ctx, const char *path, struct stat *st)
{
	struct nfs_io *n = ctx;
	struct nfs_stat_64 s;
	int err = nfs_stat64(n->nfs, path, &s);

	if (!err) {
		stat_from_nfs(&s, st);
	}
	return err;
}

static int io_ftruncate(void *ctx, int fd, uint64_t len)
{
	struct nfs_io *n = ctx;

	return nfs_ftruncate(n->nfs, n->fh[fd], len);
}

static int io_fsync(void *ctx, int fd)
{
	struct nfs_io *n = ctx;

	return nfs_fsync(n->nfs, n->fh[fd]);
}

/* What NFSv3 cannot do: the library falls back or reports it. */
static int io_fallocate(void *ctx, int fd, int mode, uint64_t off, uint64_t len)
{
	(void)ctx, (void)fd, (void)mode, (void)off, (void)len;
	return -EOPNOTSUPP;
}

static int io_fiemap(void *ctx, int fd, struct fiemap *fm)
{
	(void)ctx, (void)fd, (void)fm;
	return -EOPNOTSUPP;
}

static int64_t io_seek(void *ctx, int fd, uint64_t off, int whence)
{
	(void)ctx, (void)fd, (void)off, (void)whence;
	return -EINVAL;
}

static ssize_t io_copy_range(void *ctx, int in, uint64_t oi, int out,
			     uint64_t oo, size_t len)
{
	(void)ctx, (void)in, (void)oi, (void)out, (void)oo, (void)len;
	return -EOPNOTSUPP;
}

static int io_clone_file(void *ctx, int in, int out)
{
	(void)ctx, (void)in, (void)out;
	return -EOPNOTSUPP;
}

static int io_rename(void *ctx, const char *a, const char *b)
{
	struct nfs_io *n = ctx;

	return nfs_rename(n->nfs, a, b);
}

static int io_unlink(void *ctx, const char *path)
{
	struct nfs_io *n = ctx;

	return nfs_unlink(n->nfs, path);
}

static int io_chmod(void *ctx, const char *path, mode_t mode)
{
	struct nfs_io *n = ctx;

	return nfs_chmod(n->nfs, path, (int)mode);
}

static const struct vmdk_io_ops nfs_ops = {
	.open = io_open,
	.close = io_close,
	.pread = io_pread,
	.pwrite = io_pwrite,
	.fstat = io_fstat,
	.stat = io_stat,
	.ftruncate = io_ftruncate,
	.fallocate = io_fallocate,
	.fsync = io_fsync,
	.fiemap = io_fiemap,
	.seek = io_seek,
	.copy_range = io_copy_range,
	.clone_file = io_clone_file,
	.rename = io_rename,
	.unlink = io_unlink,
	.chmod = io_chmod,
};

/* Connects @n to @url's server and export; *file is the disk's path in
 * the export (owned). */
static int nfs_io_connect(struct nfs_io *n, const char *url, char **file)
{
	struct nfs_url *u;
	int err;

	memset(n, 0, sizeof(*n));
	n->nfs = nfs_init_context();
	if (!n->nfs) {
		return -ENOMEM;
	}
	u = nfs_parse_url_full(n->nfs, url);
	if (!u) {
		fprintf(stderr, "vmdkbench: %s: %s\n", url,
			nfs_get_error(n->nfs));
		return -EINVAL;
	}
	err = nfs_mount(n->nfs, u->server, u->path);
	if (err) {
		fprintf(stderr, "vmdkbench: mount %s:%s: %s\n", u->server,
			u->path, nfs_get_error(n->nfs));
	}
	*file = strdup(u->file);
	nfs_destroy_url(u);
	n->io = (struct vmdk_io){ &nfs_ops, n };
	return err ? err : *file ? 0 : -ENOMEM;
}

static void nfs_io_close(struct nfs_io *n)
{
	if (n->nfs) {
		nfs_destroy_context(n->nfs);
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* xorshift64*: a seeded, per-worker stream of offsets. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

struct worker {
	const char *url;
	size_t bs;
	double seconds;
	uint64_t seed;
	uint64_t ops;
	uint64_t lat[LAT_BUCKETS];
	int err;
	char msg[512];
};

static void *reader(void *arg)
{
	struct worker *w = arg;
	struct nfs_io n;
	struct vmdk *v = NULL;
	uint64_t blocks, s = w->seed | 1;
	char *file = NULL;
	double end;
	void *buf;

	w->err = nfs_io_connect(&n, w->url, &file);
	if (!w->err) {
		w->err = vmdk_open(&n.io, file, 0, &v, w->msg, sizeof(w->msg));
	}
	buf = malloc(w->bs);
	if (!w->err && !buf) {
		w->err = -ENOMEM;
	}
	if (w->err) {
		goto out;
	}
	blocks = vmdk_size_bytes(v) / w->bs;
	end = now_s() + w->seconds;
	for (double t = now_s(); t < end;) {
		uint64_t off = rnd(&s) % blocks * w->bs;
		double t1;
		uint64_t b;

		w->err = vmdk_pread(v, buf, w->bs, off);
		if (w->err) {
			break;
		}
		t1 = now_s();
		b = (uint64_t)((t1 - t) * 1e9) / LAT_BUCKET_NS;
		w->lat[b < LAT_BUCKETS ? b : LAT_BUCKETS - 1]++;
		w->ops++;
		t = t1;
	}
out:
	free(buf);
	vmdk_close(v);
	free(file);
	nfs_io_close(&n);
	return NULL;
}

/* The latency (us) below which @frac of the reads finished. */
static double percentile(const uint64_t *lat, uint64_t total, double frac)
{
	uint64_t want = (uint64_t)((double)total * frac), seen = 0;

	for (unsigned b = 0; b < LAT_BUCKETS; b++) {
		seen += lat[b];
		if (seen > want) {
			return (b + 1) * (LAT_BUCKET_NS / 1000.0);
		}
	}
	return LAT_BUCKETS * (LAT_BUCKET_NS / 1000.0);
}

static int cmd_read(const char *url, unsigned depth, size_t bs, double secs,
		    uint64_t seed)
{
	static struct worker w[MAX_DEPTH];
	pthread_t t[MAX_DEPTH];
	uint64_t ops = 0, lat[LAT_BUCKETS] = { 0 };
	double t0 = now_s(), el;

	for (unsigned i = 0; i < depth; i++) {
		w[i] = (struct worker){ .url = url,
					.bs = bs,
					.seconds = secs,
					.seed = seed * 1000003u + i };
		pthread_create(&t[i], NULL, reader, &w[i]);
	}
	for (unsigned i = 0; i < depth; i++) {
		pthread_join(t[i], NULL);
		if (w[i].err) {
			fprintf(stderr, "vmdkbench: %s: %s\n", url,
				w[i].msg[0] ? w[i].msg : strerror(-w[i].err));
			return 1;
		}
		ops += w[i].ops;
		for (unsigned b = 0; b < LAT_BUCKETS; b++) {
			lat[b] += w[i].lat[b];
		}
	}
	el = now_s() - t0;
	printf("read %zu B x %u deep, %.1f s: %.0f IOPS, %.1f MiB/s, "
	       "p50 %.0f us, p99 %.0f us\n",
	       bs, depth, el, (double)ops / el,
	       (double)ops * (double)bs / el / 1048576.0,
	       percentile(lat, ops, 0.50), percentile(lat, ops, 0.99));
	return 0;
}

static int cmd_fill(const char *url, unsigned percent, uint64_t seed)
{
	static uint8_t piece[FILL_PIECE];
	struct nfs_io n;
	struct vmdk *v = NULL;
	uint64_t s = seed | 1, pieces, n_write;
	char *file = NULL, msg[512] = "";
	int err;

	err = nfs_io_connect(&n, url, &file);
	if (!err) {
		err = vmdk_open(&n.io, file, VMDK_OPEN_RDWR, &v, msg,
				sizeof(msg));
	}
	if (!err) {
		pieces = vmdk_size_bytes(v) / FILL_PIECE;
		n_write = pieces * percent / 100;
		for (uint64_t i = 0; i < n_write && !err; i++) {
			uint64_t off = rnd(&s) % pieces * FILL_PIECE;

			memset(piece, (int)(0x41 + i % 26), sizeof(piece));
			err = vmdk_pwrite(v, piece, sizeof(piece), off);
		}
		if (!err) {
			err = vmdk_flush(v);
		}
		if (!err) {
			printf("filled %u%% of %s: %" PRIu64
			       " pieces of 64 KiB\n",
			       percent, url, n_write);
		}
	}
	if (err) {
		fprintf(stderr, "vmdkbench: %s: %s\n", url,
			msg[0] ? msg : strerror(-err));
	}
	vmdk_close(v);
	free(file);
	nfs_io_close(&n);
	return err ? 1 : 0;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: vmdkbench read URL [-d DEPTH] [-s BYTES] [-t SECONDS] "
		"[-S SEED]\n"
		"       vmdkbench fill URL PERCENT [-S SEED]\n");
	return 2;
}

int main(int argc, char **argv)
{
	unsigned depth = 16, percent = 0;
	size_t bs = 8192;
	double secs = 10;
	uint64_t seed = 1;
	int i = 3;

	if (argc < 3) {
		return usage();
	}
	if (!strcmp(argv[1], "fill")) {
		if (argc < 4) {
			return usage();
		}
		percent = (unsigned)strtoul(argv[3], NULL, 10);
		i = 4;
	} else if (strcmp(argv[1], "read")) {
		return usage();
	}
	for (; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "-d")) {
			depth = (unsigned)strtoul(argv[i + 1], NULL, 10);
		} else if (!strcmp(argv[i], "-s")) {
			bs = strtoul(argv[i + 1], NULL, 10);
		} else if (!strcmp(argv[i], "-t")) {
			secs = strtod(argv[i + 1], NULL);
		} else if (!strcmp(argv[i], "-S")) {
			seed = strtoull(argv[i + 1], NULL, 10);
		} else {
			return usage();
		}
	}
	if (i != argc || depth == 0 || depth > MAX_DEPTH || bs == 0 ||
	    bs > (1u << 20) || percent > 100 || secs <= 0) {
		return usage();
	}
	if (!strcmp(argv[1], "fill")) {
		return cmd_fill(argv[2], percent, seed);
	}
	return cmd_read(argv[2], depth, bs, secs, seed);
}
