// SPDX-License-Identifier: Apache-2.0
/*
 * test_dsload_iogen: the I/O sequence of one job (perf/dsload/iogen.c).
 * Sequential offsets follow each other and wrap; random ones are aligned,
 * inside the region and cover it; the read share and random share follow
 * the percentages; the same seed gives the same sequence; bad parameters
 * are refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nfsd/base/base.h"
#include "perf/dsload/iogen.h"

static void init(struct iogen *g, uint64_t region, uint32_t bs,
		 unsigned read_pct, unsigned random_pct, uint64_t seed)
{
	struct iogen_params p = { .region_bytes = region,
				  .bs_bytes = bs,
				  .read_pct = read_pct,
				  .random_pct = random_pct,
				  .seed = seed };

	assert_int_equal(iogen_init(g, &p), 0);
}

static void test_iogen_sequential_steps_and_wraps(void **state)
{
	struct iogen g;
	struct iogen_op op;

	(void)state;
	init(&g, 10 * 65536, 65536, 0, 0, 1);
	for (int round = 0; round < 3; round++) {
		for (uint64_t b = 0; b < 10; b++) {
			iogen_next(&g, &op);
			assert_false(op.is_read);
			assert_int_equal(op.off_bytes, b * 65536);
		}
	}
}

static void test_iogen_region_not_multiple_of_bs_stays_inside(void **state)
{
	struct iogen g;
	struct iogen_op op;

	(void)state;
	init(&g, 10 * 8192 + 4096, 8192, 100, 100, 5);
	for (int i = 0; i < 10000; i++) {
		iogen_next(&g, &op);
		assert_true(op.off_bytes + 8192 <= 10 * 8192 + 4096);
	}
}

static void test_iogen_random_aligned_inside_and_covering(void **state)
{
	struct iogen g;
	struct iogen_op op;
	uint64_t blocks = 64;
	unsigned seen[64] = { 0 };

	(void)state;
	init(&g, blocks * 8192, 8192, 100, 100, 9);
	for (int i = 0; i < 64000; i++) {
		iogen_next(&g, &op);
		assert_true(op.is_read);
		assert_int_equal(op.off_bytes % 8192, 0);
		assert_true(op.off_bytes < blocks * 8192);
		seen[op.off_bytes / 8192]++;
	}
	/* uniform: each block near 1000 of 64000 draws */
	for (uint64_t b = 0; b < blocks; b++) {
		assert_true(seen[b] > 800 && seen[b] < 1200);
	}
}

static void test_iogen_read_share_follows_read_pct(void **state)
{
	const unsigned pcts[] = { 0, 30, 50, 70, 100 };

	(void)state;
	for (size_t k = 0; k < ARRAY_SIZE(pcts); k++) {
		struct iogen g;
		struct iogen_op op;
		int reads = 0, n = 100000;

		init(&g, 1 << 30, 8192, pcts[k], 100, k + 1);
		for (int i = 0; i < n; i++) {
			iogen_next(&g, &op);
			reads += op.is_read;
		}
		/* within 1 point: 5 standard deviations at n = 100000 */
		assert_true(abs(reads - (int)(pcts[k] * n / 100)) <= n / 100);
	}
}

static void test_iogen_random_share_follows_random_pct(void **state)
{
	struct iogen g;
	struct iogen_op op;
	uint64_t prev = 0;
	int jumps = 0, n = 100000;

	(void)state;
	init(&g, 1ull << 36, 4096, 50, 25, 3);
	for (int i = 0; i < n; i++) {
		iogen_next(&g, &op);
		/* a random draw is almost never the next block */
		if (i > 0 && op.off_bytes != prev + 4096) {
			jumps++;
		}
		prev = op.off_bytes;
	}
	/* a random op breaks the chain (25 %), and so does a sequential op
	 * right after a random one, since it resumes the sequential cursor
	 * (75 % x 25 %): 43.75 % in all */
	assert_true(abs(jumps - 43750) <= 1000);
}

static void test_iogen_same_seed_same_sequence(void **state)
{
	struct iogen a, b, c;
	struct iogen_op x, y, z;
	int differ = 0;

	(void)state;
	init(&a, 1 << 28, 8192, 50, 100, 77);
	init(&b, 1 << 28, 8192, 50, 100, 77);
	init(&c, 1 << 28, 8192, 50, 100, 78);
	for (int i = 0; i < 1000; i++) {
		iogen_next(&a, &x);
		iogen_next(&b, &y);
		iogen_next(&c, &z);
		assert_int_equal(x.off_bytes, y.off_bytes);
		assert_int_equal(x.is_read, y.is_read);
		differ += x.off_bytes != z.off_bytes;
	}
	assert_true(differ > 900);
}

static void test_iogen_refuses_bad_params(void **state)
{
	struct iogen g;
	struct iogen_params p = { .region_bytes = 1 << 20,
				  .bs_bytes = 8192,
				  .read_pct = 50,
				  .random_pct = 50 };

	(void)state;
	p.bs_bytes = 0;
	assert_int_equal(iogen_init(&g, &p), -EINVAL);
	p.bs_bytes = 2 << 20;
	assert_int_equal(iogen_init(&g, &p), -EINVAL);
	p.bs_bytes = 8192;
	p.read_pct = 101;
	assert_int_equal(iogen_init(&g, &p), -EINVAL);
	p.read_pct = 50;
	p.random_pct = 101;
	assert_int_equal(iogen_init(&g, &p), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_iogen_sequential_steps_and_wraps),
		cmocka_unit_test(
			test_iogen_region_not_multiple_of_bs_stays_inside),
		cmocka_unit_test(test_iogen_random_aligned_inside_and_covering),
		cmocka_unit_test(test_iogen_read_share_follows_read_pct),
		cmocka_unit_test(test_iogen_random_share_follows_random_pct),
		cmocka_unit_test(test_iogen_same_seed_same_sequence),
		cmocka_unit_test(test_iogen_refuses_bad_params),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
