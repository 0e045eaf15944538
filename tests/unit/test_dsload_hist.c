// SPDX-License-Identifier: Apache-2.0
/*
 * test_dsload_hist: the latency histogram of perf/dsload (hist.c).  Every
 * value lands in a bucket that contains it; percentiles stay within the
 * stated relative error (LAT_HIST_REL_ERROR) of the exact ones, for
 * uniform and heavy-tailed samples; merging equals adding; the memory is
 * the same whatever the count.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nfsd/base/base.h"
#include "perf/dsload/hist.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The exact percentile by the same rank rule as lat_hist. */
static uint64_t exact_pct(const uint64_t *sorted, size_t n, double pct)
{
	double want = pct / 100.0 * (double)n;
	size_t rank = (size_t)want;

	if ((double)rank < want) {
		rank++;
	}
	if (rank == 0) {
		rank = 1;
	}
	return sorted[rank - 1];
}

static uint64_t lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 11;
}

static void test_hist_every_value_in_its_bucket(void **state)
{
	(void)state;
	for (uint64_t v = 0; v < 5000; v++) {
		uint64_t lo, hi;

		lat_hist_bucket_range(lat_hist_index(v), &lo, &hi);
		assert_true(lo <= v && v <= hi);
	}
	for (uint64_t v = 5000; v < (1ull << 36); v = v * 3 / 2 + 7) {
		uint64_t lo, hi;

		lat_hist_bucket_range(lat_hist_index(v), &lo, &hi);
		assert_true(lo <= v && v <= hi);
		/* no bucket wider than 1/128 of its lower bound */
		assert_true((double)(hi - lo + 1) <= (double)lo / LAT_HIST_SUB);
	}
}

static void test_hist_small_values_exact(void **state)
{
	struct lat_hist *h = malloc(sizeof(*h));

	(void)state;
	lat_hist_init(h);
	for (uint64_t v = 1; v <= 100; v++) {
		lat_hist_add(h, v);
	}
	assert_int_equal(lat_hist_percentile_ns(h, 50.0), 50);
	assert_int_equal(lat_hist_percentile_ns(h, 99.0), 99);
	assert_int_equal(lat_hist_percentile_ns(h, 100.0), 100);
	assert_int_equal(h->min_ns, 1);
	assert_true(fabs(lat_hist_mean_ns(h) - 50.5) < 1e-9);
	free(h);
}

static void check_percentiles(uint64_t *v, size_t n)
{
	struct lat_hist *h = malloc(sizeof(*h));
	const double pcts[] = { 1, 10, 50, 90, 99, 99.9, 99.99 };

	lat_hist_init(h);
	for (size_t i = 0; i < n; i++) {
		lat_hist_add(h, v[i]);
	}
	qsort(v, n, sizeof(*v), cmp_u64);
	for (size_t i = 0; i < ARRAY_SIZE(pcts); i++) {
		uint64_t want = exact_pct(v, n, pcts[i]);
		uint64_t got = lat_hist_percentile_ns(h, pcts[i]);
		double err = fabs((double)got - (double)want) / (double)want;

		assert_true(err <= LAT_HIST_REL_ERROR);
	}
	assert_int_equal(h->count, n);
	assert_int_equal(h->max_ns, v[n - 1]);
	free(h);
}

static void test_hist_percentiles_uniform_within_error(void **state)
{
	size_t n = 200000;
	uint64_t *v = malloc(n * sizeof(*v)), s = 42;

	(void)state;
	for (size_t i = 0; i < n; i++) {
		v[i] = 20000 + lcg(&s) % 5000000; /* 20 us .. 5 ms */
	}
	check_percentiles(v, n);
	free(v);
}

static void test_hist_percentiles_heavy_tail_within_error(void **state)
{
	size_t n = 100000;
	uint64_t *v = malloc(n * sizeof(*v)), s = 7;

	(void)state;
	for (size_t i = 0; i < n; i++) {
		/* log-uniform over 1 us .. 10 s */
		double e = 3.0 + 7.0 * (double)(lcg(&s) % 1000000) / 1e6;

		v[i] = (uint64_t)pow(10.0, e);
	}
	check_percentiles(v, n);
	free(v);
}

static void test_hist_merge_equals_adding(void **state)
{
	struct lat_hist *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	struct lat_hist *all = malloc(sizeof(*all));
	uint64_t s = 3;

	(void)state;
	lat_hist_init(a);
	lat_hist_init(b);
	lat_hist_init(all);
	for (int i = 0; i < 10000; i++) {
		uint64_t v = lcg(&s) % 100000000;

		lat_hist_add(i % 3 ? a : b, v);
		lat_hist_add(all, v);
	}
	lat_hist_merge(a, b);
	assert_int_equal(a->count, all->count);
	assert_int_equal(a->sum_ns, all->sum_ns);
	assert_int_equal(a->min_ns, all->min_ns);
	assert_int_equal(a->max_ns, all->max_ns);
	assert_memory_equal(a->buckets, all->buckets, sizeof(a->buckets));
	free(a);
	free(b);
	free(all);
}

static void test_hist_huge_values_clamp_to_last_bucket(void **state)
{
	struct lat_hist *h = malloc(sizeof(*h));

	(void)state;
	lat_hist_init(h);
	lat_hist_add(h, UINT64_MAX / 2);
	assert_int_equal(lat_hist_index(UINT64_MAX), LAT_HIST_BUCKETS - 1);
	assert_int_equal(h->buckets[LAT_HIST_BUCKETS - 1], 1);
	/* the answer is still the true maximum, not the bucket's middle */
	assert_int_equal(lat_hist_percentile_ns(h, 50.0), UINT64_MAX / 2);
	free(h);
}

static void test_hist_empty_is_zero(void **state)
{
	struct lat_hist *h = malloc(sizeof(*h));

	(void)state;
	lat_hist_init(h);
	assert_int_equal(lat_hist_percentile_ns(h, 99.0), 0);
	assert_true(lat_hist_mean_ns(h) == 0.0);
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hist_every_value_in_its_bucket),
		cmocka_unit_test(test_hist_small_values_exact),
		cmocka_unit_test(test_hist_percentiles_uniform_within_error),
		cmocka_unit_test(test_hist_percentiles_heavy_tail_within_error),
		cmocka_unit_test(test_hist_merge_equals_adding),
		cmocka_unit_test(test_hist_huge_values_clamp_to_last_bucket),
		cmocka_unit_test(test_hist_empty_is_zero),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
