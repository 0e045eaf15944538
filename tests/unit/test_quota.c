// SPDX-License-Identifier: Apache-2.0
/*
 * test_quota: a datastore's allocation figure and quota (nfsd/quota).  The
 * worst-case growth of a write, reservations that never pass the limit
 * (also from several threads at once), per-file records that count a
 * change once however many calls report it, forgetting a removed file,
 * and a scan of a real directory (hard links once, symlinks not followed).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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

#include "nfsd/quota/quota.h"

#define MIB (UINT64_C(1) << 20)

struct fixture {
	struct quota q;
	char dir[64];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f) {
		return -1;
	}
	quota_init(&f->q);
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_quota_XXXXXX");
	if (!mkdtemp(f->dir)) {
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	quota_fini(&f->q);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0) {
		return -1;
	}
	free(f);
	return 0;
}

static uint64_t used(struct quota *q)
{
	struct quota_usage u;

	quota_get(q, &u);
	return u.used_bytes;
}

static uint64_t reserved(struct quota *q)
{
	struct quota_usage u;

	quota_get(q, &u);
	return u.reserved_bytes;
}

static void test_quota_write_growth(void **state)
{
	(void)state;
	/* Into an empty file: every block touched. */
	assert_int_equal(quota_write_growth(0, 0, 0, 1), 4096);
	assert_int_equal(quota_write_growth(0, 0, 4095, 2), 8192);
	assert_int_equal(quota_write_growth(0, 0, 8192, 65536), 65536);
	/* Overwriting a file without holes allocates nothing. */
	assert_int_equal(quota_write_growth(MIB, MIB, 4096, 4096), 0);
	assert_int_equal(quota_write_growth(MIB - 1, MIB, 0, MIB - 1), 0);
	/* ... unless it goes past the end, or the file has holes. */
	assert_int_equal(quota_write_growth(MIB, MIB, MIB - 4096, 8192), 8192);
	assert_int_equal(quota_write_growth(MIB, 4096, 4096, 4096), 4096);
	assert_int_equal(quota_write_growth(MIB, MIB, 0, 0), 0);
	/* No overflow at the top of the range. */
	assert_true(quota_write_growth(0, 0, UINT64_MAX - 10, 100) > 0);
}

static void test_quota_reserve_stops_at_the_limit(void **state)
{
	struct fixture *f = *state;

	/* No limit: anything goes, and is counted as reserved. */
	assert_int_equal(quota_reserve(&f->q, 100 * MIB), 0);
	quota_release(&f->q, 100 * MIB);
	assert_int_equal(reserved(&f->q), 0);

	quota_set_limit(&f->q, 10 * MIB);
	assert_int_equal(quota_reserve(&f->q, 6 * MIB), 0);
	assert_int_equal(quota_reserve(&f->q, 4 * MIB + 1), -ENOSPC);
	assert_int_equal(quota_reserve(&f->q, 4 * MIB), 0);
	assert_int_equal(quota_reserve(&f->q, 1), -ENOSPC);
	assert_int_equal(reserved(&f->q), 10 * MIB);
	quota_release(&f->q, 4 * MIB);
	quota_release(&f->q, 6 * MIB);
	assert_int_equal(reserved(&f->q), 0);
	/* A smaller limit than what is used refuses every growth. */
	quota_set_limit(&f->q, 1);
	assert_int_equal(quota_reserve(&f->q, 2), -ENOSPC);
	assert_int_equal(quota_reserve(&f->q, 0), 0);
}

struct measure {
	uint64_t bytes;
	int err;
	unsigned calls;
};

static int measure_cb(void *arg, uint64_t *used_bytes)
{
	struct measure *m = arg;

	m->calls++;
	if (m->err) {
		return m->err;
	}
	*used_bytes = m->bytes;
	return 0;
}

static void test_quota_file_change_counts_once(void **state)
{
	struct fixture *f = *state;
	struct measure m = { .bytes = 8192 };

	/* A new file counts all it holds; a second report of the same
	 * state (another call about the same file) adds nothing. */
	assert_int_equal(quota_file_update(&f->q, 7, measure_cb, &m), 0);
	assert_int_equal(used(&f->q), 8192);
	assert_int_equal(quota_file_update(&f->q, 7, measure_cb, &m), 0);
	assert_int_equal(used(&f->q), 8192);
	m.bytes = 4096; /* truncated */
	assert_int_equal(quota_file_update(&f->q, 7, measure_cb, &m), 0);
	assert_int_equal(used(&f->q), 4096);
	m.bytes = 3 * MIB;
	assert_int_equal(quota_file_update(&f->q, 8, measure_cb, &m), 0);
	assert_int_equal(used(&f->q), 3 * MIB + 4096);
	/* A failed measure changes nothing. */
	m.err = -ESTALE;
	assert_int_equal(quota_file_update(&f->q, 7, measure_cb, &m), -ESTALE);
	assert_int_equal(used(&f->q), 3 * MIB + 4096);
	assert_int_equal(m.calls, 5);
	quota_file_forget(&f->q, 8);
	assert_int_equal(used(&f->q), 4096);
	quota_file_forget(&f->q, 8); /* twice, or never recorded: nothing */
	quota_file_forget(&f->q, 99);
	assert_int_equal(used(&f->q), 4096);
}

static void test_quota_many_files_grow_the_table(void **state)
{
	struct fixture *f = *state;
	struct measure m = { .bytes = 4096 };
	struct quota_usage u;

	for (uint64_t id = 1; id <= 5000; id++) {
		assert_int_equal(
			quota_file_update(&f->q, id * 4096, measure_cb, &m), 0);
	}
	quota_get(&f->q, &u);
	assert_int_equal(u.files, 5000);
	assert_int_equal(u.used_bytes, 5000 * 4096);
	for (uint64_t id = 1; id <= 5000; id += 2) {
		quota_file_forget(&f->q, id * 4096);
	}
	quota_get(&f->q, &u);
	assert_int_equal(u.files, 2500);
	assert_int_equal(u.used_bytes, 2500 * 4096);
}

/* Threads reserving 1 MiB at a time against an 8 MiB quota, each keeping
 * what it got: never more than 8 granted in all. */
struct racer {
	struct quota *q;
	unsigned granted;
};

static void *racer_main(void *arg)
{
	struct racer *r = arg;

	for (int i = 0; i < 1000; i++) {
		if (quota_reserve(r->q, MIB) == 0) {
			r->granted++;
		}
	}
	return NULL;
}

static void test_quota_concurrent_reservations_never_overshoot(void **state)
{
	struct fixture *f = *state;
	struct racer r[4];
	pthread_t t[4];
	unsigned total = 0;

	quota_set_limit(&f->q, 8 * MIB);
	for (int i = 0; i < 4; i++) {
		r[i] = (struct racer){ .q = &f->q };
		assert_int_equal(pthread_create(&t[i], NULL, racer_main, &r[i]),
				 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		total += r[i].granted;
	}
	assert_int_equal(total, 8);
	assert_int_equal(reserved(&f->q), 8 * MIB);
}

static uint64_t blocks_of(const char *path)
{
	struct stat st;

	assert_int_equal(lstat(path, &st), 0);
	return (uint64_t)st.st_blocks * 512;
}

static void write_file(const char *path, size_t len)
{
	char *buf = malloc(len);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_non_null(buf);
	assert_true(fd >= 0);
	memset(buf, 'x', len);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	assert_int_equal(fsync(fd), 0);
	close(fd);
	free(buf);
}

static void test_quota_scan_counts_each_inode_once(void **state)
{
	struct fixture *f = *state;
	char a[128], b[128], sub[128], c[128], sl[128], sparse[128], err[256];
	uint64_t want;
	int fd;

	snprintf(a, sizeof(a), "%s/a", f->dir);
	snprintf(b, sizeof(b), "%s/b", f->dir);
	snprintf(sub, sizeof(sub), "%s/sub", f->dir);
	snprintf(c, sizeof(c), "%s/sub/c", f->dir);
	snprintf(sl, sizeof(sl), "%s/sub/to-a", f->dir);
	snprintf(sparse, sizeof(sparse), "%s/thin", f->dir);
	write_file(a, 1 << 20);
	assert_int_equal(link(a, b), 0); /* the same MiB, twice named */
	assert_int_equal(mkdir(sub, 0755), 0);
	write_file(c, 10000);
	assert_int_equal(symlink(a, sl), 0);
	fd = open(sparse, O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 1 << 30), 0); /* a thin 1 GiB disk */
	close(fd);
	want = blocks_of(f->dir) + blocks_of(a) + blocks_of(sub) +
	       blocks_of(c) + blocks_of(sl) + blocks_of(sparse);
	quota_set_limit(&f->q, 5 * MIB);
	assert_int_equal(quota_scan(&f->q, f->dir, err, sizeof(err)), 0);
	assert_int_equal(used(&f->q), want);
	assert_true(want >= (1 << 20) + 10000 && want < 3 * MIB);
	/* The records are the scan's: removing the file forgets its MiB. */
	struct stat st;
	assert_int_equal(stat(a, &st), 0);
	quota_file_forget(&f->q, st.st_ino);
	assert_int_equal(used(&f->q), want - blocks_of(a));
}

static void test_quota_scan_of_missing_dir_names_it(void **state)
{
	struct fixture *f = *state;
	char path[128], err[256] = "";

	snprintf(path, sizeof(path), "%s/nope", f->dir);
	assert_int_equal(quota_scan(&f->q, path, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "nope"));
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_quota_write_growth),
		T(test_quota_reserve_stops_at_the_limit),
		T(test_quota_file_change_counts_once),
		T(test_quota_many_files_grow_the_table),
		T(test_quota_concurrent_reservations_never_overshoot),
		T(test_quota_scan_counts_each_inode_once),
		T(test_quota_scan_of_missing_dir_names_it),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
