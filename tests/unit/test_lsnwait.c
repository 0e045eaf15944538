// SPDX-License-Identifier: Apache-2.0
/*
 * test_lsnwait: waiting for a log's durable LSN without a mutex
 * (nfsd/base/lsnwait.c): a waiter returns at once when its record is
 * durable, sleeps until its lane is woken after the LSN passed its end
 * (a wake of the other lane leaves it asleep), a failure wakes every
 * lane and answers false unless the record was durable first, the LSN
 * never goes back, and no wake-up is lost with many waiters and a waker
 * racing them.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "nfsd/base/lsnwait.h"

struct waiter {
	struct lsnwait *w;
	unsigned lane;
	uint64_t end;
	_Atomic int done; /* 0 waiting, 1 true, 2 false */
	pthread_t t;
};

static void *waiter_main(void *arg)
{
	struct waiter *wt = arg;

	atomic_store(&wt->done, lsnwait_wait(wt->w, wt->lane, wt->end) ? 1 : 2);
	return NULL;
}

static void waiter_start(struct waiter *wt, struct lsnwait *w, unsigned lane,
			 uint64_t end)
{
	wt->w = w;
	wt->lane = lane;
	wt->end = end;
	atomic_store(&wt->done, 0);
	assert_int_equal(pthread_create(&wt->t, NULL, waiter_main, wt), 0);
}

/* Up to 2 s for @wt to be done; its verdict (0: still waiting). */
static int waiter_verdict(struct waiter *wt, unsigned ms)
{
	for (unsigned i = 0; i < ms / 5 && !atomic_load(&wt->done); i++) {
		usleep(5000);
	}
	return atomic_load(&wt->done);
}

static void test_durable_already_returns_at_once(void **state)
{
	struct lsnwait w;

	(void)state;
	lsnwait_init(&w);
	assert_true(lsnwait_wait(&w, 0, 0));
	lsnwait_advance(&w, 4096);
	assert_true(lsnwait_wait(&w, 1, 4096));
	assert_true(lsnwait_wait(&w, 0, 100));
}

static void test_lane_woken_only_by_its_own_wake(void **state)
{
	struct lsnwait w;
	struct waiter a, b;

	(void)state;
	lsnwait_init(&w);
	waiter_start(&a, &w, 0, 1000);
	waiter_start(&b, &w, 1, 2000);
	/* Neither durable yet: both sleep. */
	assert_int_equal(waiter_verdict(&a, 100), 0);
	lsnwait_advance(&w, 2000);
	lsnwait_wake(&w, 0);
	assert_int_equal(waiter_verdict(&a, 2000), 1);
	/* Lane 1 was not woken: its writer stays asleep though its LSN
	 * passed (its buffer's write wakes it). */
	assert_int_equal(waiter_verdict(&b, 100), 0);
	lsnwait_wake(&w, 1);
	assert_int_equal(waiter_verdict(&b, 2000), 1);
	pthread_join(a.t, NULL);
	pthread_join(b.t, NULL);
}

static void test_wake_all_reaches_both_lanes(void **state)
{
	struct lsnwait w;
	struct waiter a, b;

	(void)state;
	lsnwait_init(&w);
	waiter_start(&a, &w, 0, 10);
	waiter_start(&b, &w, 1, 20);
	assert_int_equal(waiter_verdict(&a, 50), 0);
	lsnwait_advance(&w, 20);
	lsnwait_wake_all(&w);
	assert_int_equal(waiter_verdict(&a, 2000), 1);
	assert_int_equal(waiter_verdict(&b, 2000), 1);
	pthread_join(a.t, NULL);
	pthread_join(b.t, NULL);
}

static void test_fail_wakes_everyone_durable_wins(void **state)
{
	struct lsnwait w;
	struct waiter a, b;

	(void)state;
	lsnwait_init(&w);
	lsnwait_advance(&w, 500);
	waiter_start(&a, &w, 0, 1000);
	waiter_start(&b, &w, 1, 1000);
	assert_int_equal(waiter_verdict(&a, 50), 0);
	lsnwait_fail(&w);
	assert_int_equal(waiter_verdict(&a, 2000), 2);
	assert_int_equal(waiter_verdict(&b, 2000), 2);
	pthread_join(a.t, NULL);
	pthread_join(b.t, NULL);
	/* A record durable before the failure stays acknowledged. */
	assert_true(lsnwait_wait(&w, 0, 500));
	assert_false(lsnwait_wait(&w, 1, 501));
}

static void test_advance_never_goes_back(void **state)
{
	struct lsnwait w;

	(void)state;
	lsnwait_init(&w);
	lsnwait_advance(&w, 9000);
	lsnwait_advance(&w, 100); /* a checkpoint behind a flush */
	assert_int_equal(atomic_load(&w.durable_lsn), 9000);
	assert_true(lsnwait_wait(&w, 0, 9000));
}

#define RACERS 16
#define STEPS 2000

/* The log's pattern: buffers alternate lanes; a waiter of step i (lane
 * i % 2) waits for LSN i + 1, the waker advances and wakes that lane. */
static void test_no_lost_wakeup_under_race(void **state)
{
	static struct waiter wt[RACERS];
	struct lsnwait w;

	(void)state;
	lsnwait_init(&w);
	for (unsigned round = 0; round < STEPS / RACERS; round++) {
		uint64_t base = (uint64_t)round * RACERS;

		for (unsigned i = 0; i < RACERS; i++) {
			waiter_start(&wt[i], &w, (unsigned)(base + i) % 2,
				     base + i + 1);
		}
		for (unsigned i = 0; i < RACERS; i++) {
			lsnwait_advance(&w, base + i + 1);
			lsnwait_wake(&w, (unsigned)(base + i) % 2);
		}
		for (unsigned i = 0; i < RACERS; i++) {
			pthread_join(wt[i].t, NULL);
			assert_int_equal(atomic_load(&wt[i].done), 1);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_durable_already_returns_at_once),
		cmocka_unit_test(test_lane_woken_only_by_its_own_wake),
		cmocka_unit_test(test_wake_all_reaches_both_lanes),
		cmocka_unit_test(test_fail_wakes_everyone_durable_wins),
		cmocka_unit_test(test_advance_never_goes_back),
		cmocka_unit_test(test_no_lost_wakeup_under_race),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
