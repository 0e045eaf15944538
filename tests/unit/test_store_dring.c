// SPDX-License-Identifier: Apache-2.0
/*
 * test_store_dring: the io_uring writer of direct writes
 * (nfsd/store/dring.c) on a real O_DIRECT file: every byte lands and
 * each write's hook runs once with 0; writes of one file that meet go
 * down as one writev (counted), writes that do not meet (a gap, another
 * file) do not merge; bytes at any address (copied to an aligned buffer)
 * and at an aligned one; more writes than the ring's depth at once; a bad
 * descriptor and an unaligned length each fail their own write only; a
 * short writev's rest goes again; drain waits for the hooks; free with
 * nothing queued.
 */
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmocka.h>

#include "nfsd/store/dring.h"

#define BLK 4096u
#define NW 300 /* more than STORE_DRING_DEPTH writevs' worth when apart */

struct fix {
	char dir[64];
	char path[2][96];
	int fd[2]; /* O_DIRECT */
	struct store_dring *r;
};

struct my_write {
	struct store_dring_write w;
	char *mem; /* what src points into */
	int err;
	int calls;
};

static void my_done(struct store_dring_write *w, int err)
{
	struct my_write *m = (struct my_write *)w;

	m->err = err;
	m->calls++;
}

static int setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));
	int err;

	strcpy(f->dir, "/var/tmp/test_dring.XXXXXX");
	if (!mkdtemp(f->dir)) {
		return -1;
	}
	for (int i = 0; i < 2; i++) {
		snprintf(f->path[i], sizeof(f->path[i]), "%s/f%d", f->dir, i);
		f->fd[i] = open(f->path[i], O_RDWR | O_CREAT | O_DIRECT, 0600);
		if (f->fd[i] < 0) {
			return -1;
		}
	}
	err = store_dring_new(&f->r);
	if (err) {
		print_message("no io_uring here: %s\n", strerror(-err));
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fix *f = *state;

	store_dring_free(f->r);
	for (int i = 0; i < 2; i++) {
		close(f->fd[i]);
		unlink(f->path[i]);
	}
	rmdir(f->dir);
	free(f);
	return 0;
}

/* A write of @nblk blocks of @byte at block @blk of file @i, its bytes
 * at @skew past an aligned address. */
static struct my_write *mk(struct fix *f, int i, uint64_t blk, unsigned nblk,
			   int byte, size_t skew)
{
	struct my_write *m = calloc(1, sizeof(*m));

	assert_int_equal(
		posix_memalign((void **)&m->mem, BLK, nblk * BLK + BLK), 0);
	memset(m->mem + skew, byte, nblk * BLK);
	m->w.fd = f->fd[i];
	m->w.off = blk * BLK;
	m->w.len = nblk * BLK;
	m->w.src = m->mem + skew;
	m->w.done = my_done;
	m->err = 1;
	return m;
}

static void drop(struct my_write *m)
{
	free(m->mem);
	free(m);
}

/* File @i holds @byte in blocks [@blk, @blk + @nblk). */
static void expect_bytes(struct fix *f, int i, uint64_t blk, unsigned nblk,
			 int byte)
{
	char *buf = malloc(nblk * BLK);
	int fd = open(f->path[i], O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, nblk * BLK, (off_t)(blk * BLK)),
			 (ssize_t)(nblk * BLK));
	for (size_t k = 0; k < nblk * BLK; k++) {
		if ((unsigned char)buf[k] != byte) {
			fail_msg("file %d byte %zu: %d, not %d", i,
				 (size_t)(blk * BLK + k), buf[k], byte);
		}
	}
	close(fd);
	free(buf);
}

static struct store_dring_stats stats(struct fix *f)
{
	struct store_dring_stats s;

	store_dring_stats(f->r, &s);
	return s;
}

static void meeting_writes_land_as_one(void **state)
{
	struct fix *f = *state;
	struct my_write *m[8];
	struct store_dring_stats before = stats(f), after;

	/* Queued in a shuffled order; the ring sorts them.  The submits
	 * race with the thread, so at least one writev, at most eight. */
	for (int k = 0; k < 8; k++) {
		int blk = (k * 5) % 8;

		m[k] = mk(f, 0, (uint64_t)blk * 16, 16, 'a' + blk,
			  k % 2 ? 3 : 0);
	}
	for (int k = 0; k < 8; k++) {
		store_dring_submit(f->r, &m[k]->w);
	}
	store_dring_drain(f->r);
	for (int k = 0; k < 8; k++) {
		assert_int_equal(m[k]->calls, 1);
		assert_int_equal(m[k]->err, 0);
		drop(m[k]);
	}
	for (int blk = 0; blk < 8; blk++) {
		expect_bytes(f, 0, (uint64_t)blk * 16, 16, 'a' + blk);
	}
	after = stats(f);
	assert_int_equal(after.writes - before.writes, 8);
	assert_int_equal(after.bytes - before.bytes, 8 * 16 * BLK);
	assert_true(after.writevs - before.writevs >= 1);
	assert_true(after.writevs - before.writevs <= 8);
}

/* Many at once while the thread is busy: most merge. */
static void a_burst_merges(void **state)
{
	struct fix *f = *state;
	static struct my_write *m[NW];
	struct store_dring_stats before = stats(f), after;

	for (int k = 0; k < NW; k++) {
		m[k] = mk(f, 1, (uint64_t)k, 1, k % 250 + 1, 0);
	}
	for (int k = 0; k < NW; k++) {
		store_dring_submit(f->r, &m[k]->w);
	}
	store_dring_drain(f->r);
	after = stats(f);
	for (int k = 0; k < NW; k++) {
		assert_int_equal(m[k]->calls, 1);
		assert_int_equal(m[k]->err, 0);
		expect_bytes(f, 1, (uint64_t)k, 1, k % 250 + 1);
		drop(m[k]);
	}
	assert_int_equal(after.writes - before.writes, NW);
	/* 300 one-block writes that meet: far fewer writevs. */
	assert_true(after.writevs - before.writevs < NW / 2);
}

/* A gap, another file, more than the depth: none merge. */
static void apart_writes_do_not_merge(void **state)
{
	struct fix *f = *state;
	static struct my_write *m[NW];

	for (int k = 0; k < NW; k++) {
		m[k] = mk(f, k % 2, 1000 + (uint64_t)k * 2, 1, 'A' + k % 26, 5);
		store_dring_submit(f->r, &m[k]->w);
	}
	store_dring_drain(f->r);
	for (int k = 0; k < NW; k++) {
		assert_int_equal(m[k]->calls, 1);
		assert_int_equal(m[k]->err, 0);
		expect_bytes(f, k % 2, 1000 + (uint64_t)k * 2, 1, 'A' + k % 26);
		/* The gaps stay holes: nothing spilled past a write. */
		if (k + 2 < NW) {
			expect_bytes(f, k % 2, 1001 + (uint64_t)k * 2, 1, 0);
		}
		drop(m[k]);
	}
}

/* A descriptor that refuses, a length that is not whole blocks: each
 * fails its own write, not the one beside it. */
static void failures_stay_their_own(void **state)
{
	struct fix *f = *state;
	struct my_write *good = mk(f, 0, 4000, 2, 'g', 0);
	struct my_write *badfd = mk(f, 0, 4002, 2, 'b', 0);
	struct my_write *unaligned = mk(f, 1, 4000, 2, 'u', 0);
	int plain = open(f->path[0], O_RDONLY);

	assert_true(plain >= 0);
	badfd->w.fd = plain; /* not open for writing */
	unaligned->w.len = 2 * BLK - 100; /* not even in sectors */
	store_dring_submit(f->r, &good->w);
	store_dring_submit(f->r, &badfd->w);
	store_dring_submit(f->r, &unaligned->w);
	store_dring_drain(f->r);
	assert_int_equal(good->calls, 1);
	assert_int_equal(good->err, 0);
	expect_bytes(f, 0, 4000, 2, 'g');
	assert_int_equal(badfd->calls, 1);
	assert_int_equal(badfd->err, -EBADF);
	assert_int_equal(unaligned->calls, 1);
	assert_int_equal(unaligned->err, -EINVAL);
	close(plain);
	drop(good);
	drop(badfd);
	drop(unaligned);
}

/* A writev that writes less than asked (RLIMIT_FSIZE cuts it at the
 * limit): the writes it covered are done, the rest goes again and ends
 * with the error the next try meets (EFBIG), each hook once. */
static void a_short_writev_goes_again(void **state)
{
	struct fix *f = *state;
	const uint64_t limit_blk = 256; /* 1 MiB */
	struct rlimit old, lim;
	struct my_write *a = mk(f, 0, limit_blk - 2, 2, 'a', 0);
	struct my_write *b = mk(f, 0, limit_blk, 4, 'b', 0);
	struct my_write *c = mk(f, 0, limit_blk - 4, 2, 'c', 0);
	void (*old_sig)(int) = signal(SIGXFSZ, SIG_IGN);
	struct store_dring_stats before = stats(f);

	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = limit_blk * BLK + 2 * BLK;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	/* c, a, b meet: one writev of 8 blocks, cut after 6. */
	store_dring_submit(f->r, &c->w);
	store_dring_submit(f->r, &a->w);
	store_dring_submit(f->r, &b->w);
	store_dring_drain(f->r);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, old_sig);
	assert_int_equal(c->calls, 1);
	assert_int_equal(c->err, 0);
	assert_int_equal(a->calls, 1);
	assert_int_equal(a->err, 0);
	assert_int_equal(b->calls, 1);
	assert_int_equal(b->err, -EFBIG);
	expect_bytes(f, 0, limit_blk - 4, 2, 'c');
	expect_bytes(f, 0, limit_blk - 2, 2, 'a');
	expect_bytes(f, 0, limit_blk, 2, 'b'); /* what the cut let in */
	assert_true(stats(f).short_writes > before.short_writes);
	drop(a);
	drop(b);
	drop(c);
}

static void drain_with_nothing_queued(void **state)
{
	struct fix *f = *state;
	struct store_dring_stats s = stats(f);

	store_dring_drain(f->r);
	assert_true(s.writes == stats(f).writes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(meeting_writes_land_as_one,
						setup, teardown),
		cmocka_unit_test_setup_teardown(a_burst_merges, setup,
						teardown),
		cmocka_unit_test_setup_teardown(apart_writes_do_not_merge,
						setup, teardown),
		cmocka_unit_test_setup_teardown(failures_stay_their_own, setup,
						teardown),
		cmocka_unit_test_setup_teardown(a_short_writev_goes_again,
						setup, teardown),
		cmocka_unit_test_setup_teardown(drain_with_nothing_queued,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
