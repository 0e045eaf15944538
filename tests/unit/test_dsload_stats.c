// SPDX-License-Identifier: Apache-2.0
/*
 * test_dsload_stats: per-job counters and their sums by VM, host,
 * datastore and in total (perf/dsload/stats.c): every group holds
 * exactly its jobs, totals equal the sum of any level, and rates divide
 * by the window.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "perf/dsload/stats.h"

#define NJOBS 8

struct fixture {
	struct dstats jobs[NJOBS];
	struct dstats_key keys[NJOBS];
};

/* 2 hosts x 2 VMs x 2 VMDKs; VMDK k on datastore k; job i did i + 1
 * reads of 8 KiB at (i + 1) ms and 10 x (i + 1) writes. */
static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f) {
		return -1;
	}
	for (unsigned i = 0; i < NJOBS; i++) {
		dstats_init(&f->jobs[i]);
		f->keys[i] = (struct dstats_key){ .host = i / 4,
						  .vm = i / 2,
						  .datastore = i % 2 };
		for (unsigned n = 0; n <= i; n++) {
			f->jobs[i].ops[DSTATS_READ]++;
			f->jobs[i].bytes[DSTATS_READ] += 8192;
			lat_hist_add(&f->jobs[i].lat[DSTATS_READ],
				     (i + 1) * 1000000ull);
		}
		f->jobs[i].ops[DSTATS_WRITE] = 10 * (i + 1);
		f->jobs[i].errors = i == 5;
		f->jobs[i].mismatches = i == 6 ? 3 : 0;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	free(*state);
	return 0;
}

static uint64_t level_reads(struct fixture *f, enum dstats_level level,
			    size_t *ngroups)
{
	struct dstats_group *g;
	uint64_t sum = 0;

	assert_int_equal(
		dstats_aggregate(f->jobs, f->keys, NJOBS, level, &g, ngroups),
		0);
	for (size_t i = 0; i < *ngroups; i++) {
		sum += g[i].s.ops[DSTATS_READ];
		assert_int_equal(g[i].level, level);
	}
	free(g);
	return sum;
}

static void test_stats_every_level_sums_to_the_total(void **state)
{
	struct fixture *f = *state;
	size_t n;

	assert_int_equal(level_reads(f, DSTATS_LEVEL_TOTAL, &n), 36);
	assert_int_equal(n, 1);
	assert_int_equal(level_reads(f, DSTATS_LEVEL_DATASTORE, &n), 36);
	assert_int_equal(n, 2);
	assert_int_equal(level_reads(f, DSTATS_LEVEL_HOST, &n), 36);
	assert_int_equal(n, 2);
	assert_int_equal(level_reads(f, DSTATS_LEVEL_VM, &n), 36);
	assert_int_equal(n, 4);
	assert_int_equal(level_reads(f, DSTATS_LEVEL_JOB, &n), 36);
	assert_int_equal(n, NJOBS);
}

static void test_stats_groups_hold_their_own_jobs(void **state)
{
	struct fixture *f = *state;
	struct dstats_group *g;
	size_t n;

	assert_int_equal(dstats_aggregate(f->jobs, f->keys, NJOBS,
					  DSTATS_LEVEL_DATASTORE, &g, &n),
			 0);
	/* datastore 0: jobs 0 2 4 6 -> 1 + 3 + 5 + 7 reads */
	assert_int_equal(g[0].id, 0);
	assert_int_equal(g[0].njobs, 4);
	assert_int_equal(g[0].s.ops[DSTATS_READ], 16);
	assert_int_equal(g[0].s.mismatches, 3);
	assert_int_equal(g[1].s.ops[DSTATS_READ], 20);
	assert_int_equal(g[1].s.errors, 1);
	/* latencies merge too: datastore 1 holds 2, 4, 6, 8 ms */
	assert_int_equal(g[1].s.lat[DSTATS_READ].count, 20);
	assert_int_equal(g[1].s.lat[DSTATS_READ].min_ns, 2000000);
	assert_int_equal(g[1].s.lat[DSTATS_READ].max_ns, 8000000);
	free(g);
	assert_int_equal(dstats_aggregate(f->jobs, f->keys, NJOBS,
					  DSTATS_LEVEL_HOST, &g, &n),
			 0);
	assert_int_equal(g[1].s.ops[DSTATS_WRITE], 10 * (5 + 6 + 7 + 8));
	free(g);
}

static void test_stats_sparse_ids_give_no_empty_groups(void **state)
{
	struct fixture *f = *state;
	struct dstats_group *g;
	size_t n;

	(void)f;
	f->keys[0].datastore = 5; /* datastores 2..4 hold nothing */
	assert_int_equal(dstats_aggregate(f->jobs, f->keys, NJOBS,
					  DSTATS_LEVEL_DATASTORE, &g, &n),
			 0);
	assert_int_equal(n, 3);
	assert_int_equal(g[2].id, 5);
	assert_int_equal(g[2].njobs, 1);
	free(g);
}

static void test_stats_no_jobs_gives_an_empty_total(void **state)
{
	struct dstats_group *g;
	size_t n;

	(void)state;
	assert_int_equal(
		dstats_aggregate(NULL, NULL, 0, DSTATS_LEVEL_TOTAL, &g, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(g[0].s.ops[DSTATS_READ], 0);
	free(g);
}

static void test_stats_rates_divide_by_the_window(void **state)
{
	struct fixture *f = *state;
	struct dstats *s = &f->jobs[3];

	/* 4 reads of 8 KiB and 40 writes of no bytes, over 2 s */
	assert_true(dstats_iops(s, DSTATS_READ, 2.0) == 2.0);
	assert_true(dstats_iops(s, DSTATS_DIRS, 2.0) == 22.0);
	assert_true(dstats_mibps(s, DSTATS_READ, 0.5) ==
		    4 * 8192 / 0.5 / (1024.0 * 1024.0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_stats_every_level_sums_to_the_total, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_stats_groups_hold_their_own_jobs, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_stats_sparse_ids_give_no_empty_groups, setup,
			teardown),
		cmocka_unit_test(test_stats_no_jobs_gives_an_empty_total),
		cmocka_unit_test_setup_teardown(
			test_stats_rates_divide_by_the_window, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
