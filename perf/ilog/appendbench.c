// SPDX-License-Identifier: Apache-2.0
/*
 * appendbench: how the intent log should reach stable storage, measured
 * (docs/bench.md, "Intent log").  T threads each append N
 * records of BS bytes to one preallocated log file and wait until theirs
 * is durable, two ways:
 *
 *   dsync     O_DIRECT|O_DSYNC: every append is its own durable write
 *             (a 4 KiB-aligned pwrite; no grouping possible without a
 *             buffer of our own)
 *   fdatasync buffered pwrite under a lock, then one fdatasync(2) run by
 *             whichever waiter finds none in flight, covering every
 *             append before it (group commit)
 *   batch     records copied into a buffer under a lock; whichever waiter
 *             finds no write in flight writes every record appended so
 *             far in one O_DIRECT|O_DSYNC pwrite (group commit without
 *             the page cache: what nfsd/store/ilog/ilog.c does)
 *
 * Prints appends/s and flushes per append for each, and the ratio.
 * Usage: appendbench [-t THREADS] [-n PER_THREAD] [-b BYTES] FILE
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct bench {
	int fd;
	size_t bs;
	unsigned per_thread;
	pthread_mutex_t lock;
	pthread_cond_t cv;
	uint64_t tail, flushed;
	bool flushing;
	uint64_t flushes;
	uint64_t ring_bytes;
	bool direct; /* group mode, batches written O_DIRECT|O_DSYNC */
	char *batch, *batch2; /* the batch being filled, the one in flight */
	uint64_t flushed_base; /* log offset of batch[0] */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *dsync_thread(void *arg)
{
	struct bench *b = arg;
	void *buf;

	if (posix_memalign(&buf, 4096, b->bs) != 0) {
		abort();
	}
	memset(buf, 0xa5, b->bs);
	for (unsigned i = 0; i < b->per_thread; i++) {
		uint64_t off;

		pthread_mutex_lock(&b->lock);
		off = b->tail % b->ring_bytes;
		b->tail += b->bs;
		b->flushes++;
		pthread_mutex_unlock(&b->lock);
		if (pwrite(b->fd, buf, b->bs, (off_t)off) != (ssize_t)b->bs) {
			perror("pwrite");
			exit(1);
		}
	}
	free(buf);
	return NULL;
}

static void *group_thread(void *arg)
{
	struct bench *b = arg;
	char *buf = malloc(b->bs);

	memset(buf, 0x5a, b->bs);
	for (unsigned i = 0; i < b->per_thread; i++) {
		uint64_t end;

		pthread_mutex_lock(&b->lock);
		/* dsync batches: the record goes into the batch buffer (a
		 * copy, as the log's writers make), written by the leader. */
		if (b->direct) {
			memcpy(b->batch + (b->tail - b->flushed_base), buf,
			       b->bs);
		} else if (pwrite(b->fd, buf, b->bs,
				  (off_t)(b->tail % b->ring_bytes)) !=
			   (ssize_t)b->bs) {
			perror("pwrite");
			exit(1);
		}
		b->tail += b->bs;
		end = b->tail;
		while (b->flushed < end) {
			if (!b->flushing) {
				uint64_t target = b->tail;
				uint64_t base = b->flushed_base;
				char *w = b->batch;

				b->flushing = true;
				if (b->direct) {
					/* Writers fill the other buffer. */
					b->batch = b->batch2;
					b->batch2 = w;
					b->flushed_base = target;
				}
				pthread_mutex_unlock(&b->lock);
				if (b->direct) {
					if (pwrite(b->fd, w, target - base,
						   (off_t)(base %
							   b->ring_bytes)) !=
					    (ssize_t)(target - base)) {
						perror("pwrite");
						exit(1);
					}
				} else if (fdatasync(b->fd) != 0) {
					perror("fdatasync");
					exit(1);
				}
				pthread_mutex_lock(&b->lock);
				b->flushing = false;
				b->flushed = target;
				b->flushes++;
				pthread_cond_broadcast(&b->cv);
			} else {
				pthread_cond_wait(&b->cv, &b->lock);
			}
		}
		pthread_mutex_unlock(&b->lock);
	}
	free(buf);
	return NULL;
}

enum mode { MODE_DSYNC, MODE_FDATASYNC, MODE_GROUP_DSYNC };

static double run(const char *path, enum mode mode, unsigned threads,
		  unsigned per_thread, size_t bs, double *flushes_per)
{
	bool dsync = mode == MODE_DSYNC;
	struct bench b = { .bs = bs,
			   .per_thread = per_thread,
			   .ring_bytes = 64u << 20,
			   .direct = mode == MODE_GROUP_DSYNC };
	pthread_t tid[256];
	double t0, t1;

	/* A batch holds at most every thread's record: 256 x bs. */
	if (posix_memalign((void **)&b.batch, 4096, 256 * bs) ||
	    posix_memalign((void **)&b.batch2, 4096, 256 * bs)) {
		abort();
	}
	b.fd = open(path,
		    O_RDWR | (mode != MODE_FDATASYNC ? O_DIRECT | O_DSYNC : 0));
	if (b.fd < 0) {
		perror(path);
		exit(1);
	}
	pthread_mutex_init(&b.lock, NULL);
	pthread_cond_init(&b.cv, NULL);
	t0 = now_s();
	for (unsigned i = 0; i < threads; i++) {
		pthread_create(&tid[i], NULL,
			       dsync ? dsync_thread : group_thread, &b);
	}
	for (unsigned i = 0; i < threads; i++) {
		pthread_join(tid[i], NULL);
	}
	t1 = now_s();
	close(b.fd);
	free(b.batch);
	free(b.batch2);
	*flushes_per = (double)b.flushes / (threads * per_thread);
	return threads * per_thread / (t1 - t0);
}

int main(int argc, char **argv)
{
	unsigned threads = 16, per_thread = 500;
	size_t bs =
		8192 + 4096; /* an 8 KiB WRITE's record, rounded for O_DIRECT */
	double fa, fb, fc, a, b, c;
	char *zero;
	int opt, fd;

	while ((opt = getopt(argc, argv, "t:n:b:")) != -1) {
		if (opt == 't') {
			threads = (unsigned)atoi(optarg);
		} else if (opt == 'n') {
			per_thread = (unsigned)atoi(optarg);
		} else if (opt == 'b') {
			bs = (size_t)atol(optarg);
		} else {
			return 2;
		}
	}
	if (optind != argc - 1 || threads < 1 || threads > 256 || bs % 4096) {
		fprintf(stderr, "usage: appendbench [-t 1..256] [-n N] "
				"[-b BYTES, a multiple of 4096] FILE\n");
		return 2;
	}
	/* Preallocated and written once, as the log is: no extent changes. */
	fd = open(argv[optind], O_RDWR | O_CREAT | O_TRUNC, 0600);
	zero = calloc(1, 1 << 20);
	for (int i = 0; i < 64; i++) {
		if (write(fd, zero, 1 << 20) != 1 << 20) {
			perror("write");
			return 1;
		}
	}
	fsync(fd);
	close(fd);
	free(zero);
	a = run(argv[optind], MODE_DSYNC, threads, per_thread, bs, &fa);
	b = run(argv[optind], MODE_FDATASYNC, threads, per_thread, bs, &fb);
	c = run(argv[optind], MODE_GROUP_DSYNC, threads, per_thread, bs, &fc);
	printf("threads %u, %zu-byte appends, %u each\n", threads, bs,
	       per_thread);
	printf("O_DIRECT|O_DSYNC      %9.0f appends/s  %.3f flushes/append\n",
	       a, fa);
	printf("buffered + fdatasync  %9.0f appends/s  %.3f flushes/append\n",
	       b, fb);
	printf("batch O_DIRECT|O_DSYNC %8.0f appends/s  %.3f flushes/append\n",
	       c, fc);
	printf("ratio fdatasync/dsync %9.2f, batch-dsync/dsync %.2f, "
	       "batch-dsync/fdatasync %.2f\n",
	       b / a, c / a, c / b);
	unlink(argv[optind]);
	return 0;
}
