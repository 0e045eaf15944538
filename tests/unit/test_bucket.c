// SPDX-License-Identifier: Apache-2.0
/*
 * test_bucket: token bucket arithmetic on an injected clock
 * (nfsd/traffic/bucket.h): rates held over a simulated 10 s, bursts, debt
 * for requests larger than the burst, live rate changes.
 */
#include "nfsd/traffic/bucket.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#define MS INT64_C(1000000)
#define S INT64_C(1000000000)
#define MIB UINT64_C(1048576)

/* Takes @req-token requests as fast as the bucket allows from @start for
 * @span ns; returns the tokens taken. */
static uint64_t drain(struct token_bucket *b, uint64_t req, int64_t start,
		      int64_t span)
{
	int64_t now = start;
	uint64_t taken = 0;

	while (now < start + span) {
		uint64_t w = token_bucket_time_until(b, req, now);

		if (w) {
			now += (int64_t)w;
			continue;
		}
		token_bucket_take(b, req, now);
		taken += req;
	}
	return taken;
}

static void assert_within(uint64_t got, uint64_t want, double tolerance)
{
	double ratio = (double)got / (double)want;

	if (ratio < 1 - tolerance || ratio > 1 + tolerance) {
		fail_msg("got %llu, want %llu +- %.0f%%",
			 (unsigned long long)got, (unsigned long long)want,
			 tolerance * 100);
	}
}

static void test_rate_held_over_ten_seconds(void **state)
{
	struct token_bucket b;
	uint64_t taken;

	(void)state;
	/* 100 MiB/s, 10 ms burst, 64 KiB requests. */
	assert_int_equal(token_bucket_init(&b, 100 * MIB, MIB, 0), 0);
	taken = drain(&b, 65536, 0, 10 * S);
	/* The burst plus 10 s of rate, to within one request. */
	assert_true(taken <= MIB + 1000 * MIB + 65536);
	assert_within(taken, 1000 * MIB, 0.05);

	/* 76,000 ops/s one at a time. */
	assert_int_equal(token_bucket_init(&b, 76000, 760, 0), 0);
	assert_within(drain(&b, 1, 0, 10 * S), 760000, 0.01);
}

static void test_burst_passes_at_once_then_the_rate(void **state)
{
	struct token_bucket b;
	int n = 0;

	(void)state;
	assert_int_equal(token_bucket_init(&b, 1000, 100, 0), 0);
	while (token_bucket_try_take(&b, 10, 0)) {
		n++;
	}
	/* 100 tokens of burst in 10-token requests. */
	assert_int_equal(n, 10);
	/* Empty: the next request starts once the level is above zero, one
	 * nanosecond later, and leaves a debt (the one-request overshoot). */
	assert_int_equal(token_bucket_time_until(&b, 10, 0), 1);
	assert_true(token_bucket_try_take(&b, 10, 1));
	/* 10 taken with 1e-6 in hand: 9.999999 tokens of debt, repaid at one
	 * token per millisecond. */
	assert_int_equal(token_bucket_tokens(&b, 1), -9);
	assert_int_equal(token_bucket_time_until(&b, 1, 1), 10 * MS);
	assert_false(token_bucket_try_take(&b, 10, 10 * MS));
	assert_true(token_bucket_try_take(&b, 10, 10 * MS + 1));
}

static void test_idle_bucket_fills_to_burst_only(void **state)
{
	struct token_bucket b;

	(void)state;
	assert_int_equal(token_bucket_init(&b, UINT64_MAX / 2, 1000, 0), 0);
	token_bucket_take(&b, 1000, 0);
	/* A long idle span at a huge rate: no overflow, the level stops at
	 * the burst. */
	assert_int_equal(token_bucket_tokens(&b, INT64_MAX), 1000);
}

static void test_request_larger_than_burst_passes_with_debt(void **state)
{
	struct token_bucket b;

	(void)state;
	assert_int_equal(token_bucket_init(&b, 1000, 100, 0), 0);
	/* 1,000 tokens through a 100-token bucket: passes when the level is
	 * above zero, then the debt is repaid at the rate. */
	assert_true(token_bucket_try_take(&b, 1000, 0));
	assert_int_equal(token_bucket_tokens(&b, 0), -900);
	assert_int_equal(token_bucket_time_until(&b, 1, 0), 900 * MS + 1);
	assert_false(token_bucket_try_take(&b, 1, 900 * MS));
	assert_true(token_bucket_try_take(&b, 1, 900 * MS + 1));
}

static void test_unlimited_and_empty_takes_never_wait(void **state)
{
	struct token_bucket b;

	(void)state;
	assert_int_equal(token_bucket_init(&b, 0, 0, 0), 0);
	for (int i = 0; i < 1000; i++) {
		assert_true(token_bucket_try_take(&b, UINT64_MAX / 4, 0));
	}
	assert_int_equal(token_bucket_init(&b, 10, 1, 0), 0);
	token_bucket_take(&b, 100, 0);
	assert_int_equal(token_bucket_time_until(&b, 0, 0), 0);
	assert_int_equal(token_bucket_init(&b, 10, 0, 0), -EINVAL);
}

static void test_clock_going_back_is_ignored(void **state)
{
	struct token_bucket b;

	(void)state;
	assert_int_equal(token_bucket_init(&b, 1000, 10, 5 * S), 0);
	token_bucket_take(&b, 10, 5 * S);
	/* A reading from another thread's older clock changes nothing. */
	assert_int_equal(token_bucket_tokens(&b, 4 * S), 0);
	assert_int_equal(token_bucket_time_until(&b, 1, 4 * S), 1);
	assert_int_equal(token_bucket_tokens(&b, 5 * S + 5 * MS), 5);
}

static void test_live_rate_change(void **state)
{
	struct token_bucket b;
	uint64_t first, second;

	(void)state;
	assert_int_equal(token_bucket_init(&b, 100 * MIB, MIB, 0), 0);
	first = drain(&b, 65536, 0, 5 * S);
	assert_int_equal(token_bucket_set_rate(&b, 20 * MIB, MIB / 5, 5 * S),
			 0);
	second = drain(&b, 65536, 5 * S, 5 * S);
	assert_within(first, 500 * MIB, 0.05);
	assert_within(second, 100 * MIB, 0.05);

	/* Unlimited -> limited starts full. */
	assert_int_equal(token_bucket_init(&b, 0, 0, 0), 0);
	assert_int_equal(token_bucket_set_rate(&b, 1000, 50, 0), 0);
	assert_int_equal(token_bucket_tokens(&b, 0), 50);
	/* A lower burst trims what was saved. */
	assert_int_equal(token_bucket_set_rate(&b, 1000, 20, 0), 0);
	assert_int_equal(token_bucket_tokens(&b, 0), 20);
}

/* A waiter whose loop runs late (a busy machine) gets the tokens its
 * lateness earned, up to the catch-up: 100 requests of 1 MiB at 100 MiB/s,
 * each coming back 40 ms after it was told to, still take about 1 s; an
 * on-time waiter finds what it found before, and an idle bucket still
 * holds no more than its burst. */
static void test_late_waiter_loses_no_tokens(void **state)
{
	struct token_bucket b;
	const uint64_t rate = 100 * MIB, burst = MIB;
	int64_t now = 0;
	uint64_t taken = 0;

	(void)state;
	assert_int_equal(token_bucket_init(&b, rate, burst, now), 0);
	while (taken < 100 * MIB) {
		uint64_t w = token_bucket_time_until(&b, MIB, now);

		if (w) {
			now += (int64_t)w + 40 * MS; /* woken 40 ms late */
			continue;
		}
		token_bucket_take(&b, MIB, now);
		taken += MIB;
	}
	/* Without the catch-up each wake-up loses its 40 ms: 3.96 s. */
	assert_true(now < 1100 * MS);
	assert_true(now > 900 * MS);

	/* Late by more than the catch-up: what is past it is lost. */
	assert_int_equal(token_bucket_init(&b, rate, burst, 0), 0);
	token_bucket_take(&b, 20 * MIB, 0);
	assert_true(token_bucket_time_until(&b, MIB, 0) > 0);
	assert_int_equal(
		token_bucket_tokens(&b, 10 * S),
		(int64_t)(burst + rate * TOKEN_BUCKET_CATCHUP_MS / 1000));
	/* Spent down to the burst, the bucket owes nothing: idle, it fills
	 * to its burst only. */
	token_bucket_take(&b, rate * TOKEN_BUCKET_CATCHUP_MS / 1000, 10 * S);
	assert_int_equal(token_bucket_tokens(&b, 20 * S), (int64_t)burst);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rate_held_over_ten_seconds),
		cmocka_unit_test(test_burst_passes_at_once_then_the_rate),
		cmocka_unit_test(test_idle_bucket_fills_to_burst_only),
		cmocka_unit_test(
			test_request_larger_than_burst_passes_with_debt),
		cmocka_unit_test(test_unlimited_and_empty_takes_never_wait),
		cmocka_unit_test(test_clock_going_back_is_ignored),
		cmocka_unit_test(test_live_rate_change),
		cmocka_unit_test(test_late_waiter_loses_no_tokens),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
