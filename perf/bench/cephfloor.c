// SPDX-License-Identifier: Apache-2.0
/*
 * cephfloor: what libcephfs itself costs per I/O, with no NFS in front of
 * it: the floor under any gateway built on it (dsnfsd, nfs-ganesha's
 * FSAL_CEPH), measured on the same cluster as they are
 * (perf/bench/ceph.sh, server "libcephfs").
 *
 *   cephfloor CONF DIR MODE BS FILES DEPTH SECONDS FILE_MIB
 *
 * mounts DIR of the CephFS that CONF names (as client.admin, with the
 * libcephfs log levels dsnfsd sets: store/cephfs/cephfs.c), makes FILES
 * files of FILE_MIB each, and keeps DEPTH calls in flight on each (a
 * thread a call, as a gateway's work threads do) for SECONDS:
 *
 *   seq-read, rand-read       ceph_read of BS bytes (the files written
 *                             whole first)
 *   seq-write, rand-write     ceph_write of BS bytes, buffered, with a
 *                             ceph_fsync of the file after every 64 (the
 *                             COMMIT dsload sends)
 *   file-sync-write, -rand    ceph_write then ceph_fsync of the file
 *                             (a FILE_SYNC WRITE)
 *
 * Sequential offsets are shared by a file's threads (each takes the next
 * BS), random ones BS-aligned.  So that the caller can read the cluster's
 * CPU counters around the run alone, it says "cephfloor: ready" on
 * standard error once mounted (and filled), starts at a line on standard
 * input, prints one line on standard output when the time is up:
 *
 *   ops=N seconds=S mib_per_s=M iops=I cpu_us_per_op=C errors=E
 *
 * (C: this process's user + system CPU over the run, every thread), and
 * unmounts at the next line.
 */
#include <cephfs/libcephfs.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define COMMIT_EVERY 64

enum mode { SEQ_READ, RAND_READ, SEQ_WRITE, RAND_WRITE, SYNC_WRITE, SYNC_RAND };

struct file {
	int fd;
	_Atomic uint64_t next; /* the next sequential offset */
	_Atomic uint64_t written; /* buffered writes, for the COMMIT */
};

struct run {
	struct ceph_mount_info *cm;
	enum mode mode;
	uint64_t bs;
	uint64_t file_bytes;
	struct file *files;
	_Atomic bool stop;
	_Atomic uint64_t ops;
	_Atomic uint64_t errors;
};

struct worker {
	struct run *run;
	struct file *file;
	unsigned seed;
	pthread_t thread;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static uint64_t next_offset(struct worker *w)
{
	struct run *r = w->run;
	uint64_t blocks = r->file_bytes / r->bs;

	if (r->mode == SEQ_READ || r->mode == SEQ_WRITE ||
	    r->mode == SYNC_WRITE) {
		return atomic_fetch_add(&w->file->next, r->bs) % r->file_bytes;
	}
	return (uint64_t)rand_r(&w->seed) % blocks * r->bs;
}

/* One I/O of @w's file; false on an error. */
static bool one_io(struct worker *w, char *buf)
{
	struct run *r = w->run;
	int fd = w->file->fd;
	int64_t off = (int64_t)next_offset(w);
	int rc;

	switch (r->mode) {
	case SEQ_READ:
	case RAND_READ:
		rc = ceph_read(r->cm, fd, buf, (int64_t)r->bs, off);
		return rc == (int)r->bs;
	case SEQ_WRITE:
	case RAND_WRITE:
		rc = ceph_write(r->cm, fd, buf, (int64_t)r->bs, off);
		if (rc != (int)r->bs) {
			return false;
		}
		if (atomic_fetch_add(&w->file->written, 1) % COMMIT_EVERY ==
		    COMMIT_EVERY - 1) {
			return ceph_fsync(r->cm, fd, 0) == 0;
		}
		return true;
	case SYNC_WRITE:
	case SYNC_RAND:
		rc = ceph_write(r->cm, fd, buf, (int64_t)r->bs, off);
		return rc == (int)r->bs && ceph_fsync(r->cm, fd, 0) == 0;
	}
	return false;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	char *buf = malloc(w->run->bs);

	if (!buf) {
		atomic_fetch_add(&w->run->errors, 1);
		return NULL;
	}
	memset(buf, 0x5a, w->run->bs);
	while (!atomic_load(&w->run->stop)) {
		if (one_io(w, buf)) {
			atomic_fetch_add(&w->run->ops, 1);
		} else {
			atomic_fetch_add(&w->run->errors, 1);
		}
	}
	free(buf);
	return NULL;
}

static int parse_mode(const char *s, enum mode *out)
{
	static const char *const names[] = {
		"seq-read",   "rand-read",	 "seq-write",
		"rand-write", "file-sync-write", "file-sync-rand"
	};

	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(s, names[i])) {
			*out = (enum mode)i;
			return 0;
		}
	}
	return -1;
}

static struct ceph_mount_info *mount_dir(const char *conf, const char *dir)
{
	static const char *const quiet[] = { "debug_client",
					     "debug_objectcacher",
					     "debug_objecter" };
	struct ceph_mount_info *cm;
	int rc;

	if (ceph_create(&cm, NULL) != 0) {
		return NULL;
	}
	rc = ceph_conf_read_file(cm, conf);
	for (unsigned i = 0; !rc && i < sizeof(quiet) / sizeof(quiet[0]); i++) {
		rc = ceph_conf_set(cm, quiet[i], "0/0");
	}
	if (!rc) {
		rc = ceph_mount(cm, dir);
	}
	if (rc) {
		fprintf(stderr, "cephfloor: mount %s: %s\n", dir,
			strerror(-rc));
		ceph_release(cm);
		return NULL;
	}
	return cm;
}

/* Writes each file whole, in 4 MiB pieces, and syncs it. */
static int fill(struct run *r, unsigned nfiles)
{
	const uint64_t piece = 4u << 20;
	char *buf = malloc(piece);
	int rc = 0;

	if (!buf) {
		return -ENOMEM;
	}
	memset(buf, 0xa5, piece);
	for (unsigned f = 0; f < nfiles && !rc; f++) {
		for (uint64_t off = 0; off < r->file_bytes && !rc;
		     off += piece) {
			uint64_t n = r->file_bytes - off < piece
					     ? r->file_bytes - off
					     : piece;
			int w = ceph_write(r->cm, r->files[f].fd, buf,
					   (int64_t)n, (int64_t)off);
			rc = w < 0 ? w : (uint64_t)w != n ? -EIO : 0;
		}
		if (!rc) {
			rc = ceph_fsync(r->cm, r->files[f].fd, 0);
		}
	}
	free(buf);
	return rc;
}

int main(int argc, char **argv)
{
	struct run r = { 0 };
	unsigned nfiles, depth, nworkers;
	double secs, t0, c0, t1, c1;
	struct worker *workers;
	char line[16];
	uint64_t ops;

	if (argc != 9 || parse_mode(argv[3], &r.mode) != 0) {
		fprintf(stderr, "usage: cephfloor CONF DIR seq-read|rand-read|"
				"seq-write|rand-write|file-sync-write|"
				"file-sync-rand BS FILES DEPTH SECONDS "
				"FILE_MIB\n");
		return 2;
	}
	r.bs = strtoull(argv[4], NULL, 10);
	nfiles = (unsigned)strtoul(argv[5], NULL, 10);
	depth = (unsigned)strtoul(argv[6], NULL, 10);
	secs = strtod(argv[7], NULL);
	r.file_bytes = strtoull(argv[8], NULL, 10) << 20;
	if (!r.bs || !nfiles || !depth || secs <= 0 || r.file_bytes < r.bs) {
		fprintf(stderr, "cephfloor: BS, FILES, DEPTH, SECONDS and "
				"FILE_MIB must be positive, FILE_MIB >= BS\n");
		return 2;
	}
	r.cm = mount_dir(argv[1], argv[2]);
	r.files = calloc(nfiles, sizeof(*r.files));
	nworkers = nfiles * depth;
	workers = calloc(nworkers, sizeof(*workers));
	if (!r.cm || !r.files || !workers) {
		return 1;
	}
	for (unsigned f = 0; f < nfiles; f++) {
		char name[32];

		snprintf(name, sizeof(name), "floor-%u", f);
		r.files[f].fd = ceph_open(r.cm, name, O_RDWR | O_CREAT, 0644);
		if (r.files[f].fd < 0) {
			fprintf(stderr, "cephfloor: open %s: %s\n", name,
				strerror(-r.files[f].fd));
			return 1;
		}
	}
	if ((r.mode == SEQ_READ || r.mode == RAND_READ) && fill(&r, nfiles)) {
		fprintf(stderr, "cephfloor: cannot write the files\n");
		return 1;
	}
	fprintf(stderr, "cephfloor: ready\n");
	if (!fgets(line, sizeof(line), stdin)) {
		return 1;
	}
	t0 = now_s();
	c0 = cpu_s();
	for (unsigned i = 0; i < nworkers; i++) {
		workers[i] = (struct worker){ .run = &r,
					      .file = &r.files[i % nfiles],
					      .seed = 14 + i };
		if (pthread_create(&workers[i].thread, NULL, worker_main,
				   &workers[i])) {
			return 1;
		}
	}
	usleep((useconds_t)(secs * 1e6));
	atomic_store(&r.stop, true);
	for (unsigned i = 0; i < nworkers; i++) {
		pthread_join(workers[i].thread, NULL);
	}
	t1 = now_s();
	c1 = cpu_s();
	ops = atomic_load(&r.ops);
	printf("ops=%" PRIu64 " seconds=%.2f mib_per_s=%.1f iops=%.0f "
	       "cpu_us_per_op=%.0f errors=%" PRIu64 "\n",
	       ops, t1 - t0, (double)(ops * r.bs) / (t1 - t0) / 1048576.0,
	       (double)ops / (t1 - t0), ops ? (c1 - c0) * 1e6 / (double)ops : 0,
	       atomic_load(&r.errors));
	fflush(stdout);
	/* The unmount flushes what the writes left: after the caller's
	 * second look at the counters. */
	if (!fgets(line, sizeof(line), stdin)) {
		line[0] = '\0';
	}
	for (unsigned f = 0; f < nfiles; f++) {
		ceph_close(r.cm, r.files[f].fd);
	}
	ceph_unmount(r.cm);
	ceph_release(r.cm);
	return atomic_load(&r.errors) ? 1 : 0;
}
