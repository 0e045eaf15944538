// SPDX-License-Identifier: Apache-2.0
/*
 * test_store_syncgroup: group commit (nfsd/store/syncgroup.c) with real
 * threads and an injected sync that counts its calls.  The first round can
 * be held in flight (a gate), so the tests know, without sleeping, that the
 * other callers entered while it ran: they must all share the one round
 * after it, at the highest level asked, and all get its error.  A failed
 * round's error sticks to every later caller without another sync.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "nfsd/store/syncgroup.h"

#define MAX_CALLS 64
#define NTHREADS 8

/* The injected sync: counts calls, records levels, fails on request and
 * holds the first call until the gate opens. */
struct fake_sync {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool gate_closed;
	unsigned calls;
	enum store_stable levels[MAX_CALLS];
	int results[MAX_CALLS]; /* what call i returns */
};

static int fake_sync_fn(void *arg, enum store_stable level)
{
	struct fake_sync *fs = arg;
	unsigned i;
	int rc;

	pthread_mutex_lock(&fs->lock);
	i = fs->calls++;
	if (i < MAX_CALLS) {
		fs->levels[i] = level;
	}
	pthread_cond_broadcast(&fs->cond);
	while (i == 0 && fs->gate_closed) {
		pthread_cond_wait(&fs->cond, &fs->lock);
	}
	rc = i < MAX_CALLS ? fs->results[i] : -E2BIG;
	pthread_mutex_unlock(&fs->lock);
	return rc;
}

struct fixture {
	struct store_syncgroup sg;
	struct fake_sync fs;
};

static int setup(void **state)
{
	struct fixture *f = test_calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(store__syncgroup_init(&f->sg), 0);
	pthread_mutex_init(&f->fs.lock, NULL);
	pthread_cond_init(&f->fs.cond, NULL);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	pthread_cond_destroy(&f->fs.cond);
	pthread_mutex_destroy(&f->fs.lock);
	store__syncgroup_fini(&f->sg);
	test_free(f);
	return 0;
}

static unsigned fake_calls(struct fake_sync *fs)
{
	unsigned n;

	pthread_mutex_lock(&fs->lock);
	n = fs->calls;
	pthread_mutex_unlock(&fs->lock);
	return n;
}

/* One caller on its own thread. */
struct caller {
	pthread_t thread;
	struct fixture *f;
	enum store_stable level;
	bool grouped;
	int result;
};

static void *caller_run(void *arg)
{
	struct caller *c = arg;

	c->result = store__syncgroup_sync(&c->f->sg, c->level, c->grouped,
					  fake_sync_fn, &c->f->fs);
	return NULL;
}

static void caller_start(struct caller *c, struct fixture *f,
			 enum store_stable level, bool grouped)
{
	c->f = f;
	c->level = level;
	c->grouped = grouped;
	c->result = 1;
	assert_int_equal(pthread_create(&c->thread, NULL, caller_run, c), 0);
}

static void caller_join(struct caller *c)
{
	assert_int_equal(pthread_join(c->thread, NULL), 0);
}

/* Starts a leader whose round 1 stays in flight until gate_open(). */
static void leader_start_held(struct fixture *f, struct caller *leader)
{
	f->fs.gate_closed = true;
	caller_start(leader, f, STORE_DATA_SYNC, true);
	pthread_mutex_lock(&f->fs.lock);
	while (f->fs.calls == 0) {
		pthread_cond_wait(&f->fs.cond, &f->fs.lock);
	}
	pthread_mutex_unlock(&f->fs.lock);
}

static void gate_open(struct fixture *f)
{
	pthread_mutex_lock(&f->fs.lock);
	f->fs.gate_closed = false;
	pthread_cond_broadcast(&f->fs.cond);
	pthread_mutex_unlock(&f->fs.lock);
}

/* Waits (without a clock) until @n callers wait for the next round. */
static void waiters_wait(struct fixture *f, uint32_t n)
{
	while (store__syncgroup_waiters(&f->sg) < n) {
		sched_yield();
	}
}

/* Leader in round 1; @n callers at @levels enter meanwhile; all joined. */
static void run_behind_held_round(struct fixture *f, struct caller *leader,
				  struct caller *c, const enum store_stable *l,
				  size_t n)
{
	leader_start_held(f, leader);
	for (size_t i = 0; i < n; i++) {
		caller_start(&c[i], f, l[i], true);
	}
	waiters_wait(f, (uint32_t)n);
	gate_open(f);
	caller_join(leader);
	for (size_t i = 0; i < n; i++) {
		caller_join(&c[i]);
	}
}

static void test_syncgroup_writers_behind_a_round_share_the_next(void **state)
{
	struct fixture *f = *state;
	enum store_stable l[NTHREADS];
	struct caller c[NTHREADS], leader;

	for (size_t i = 0; i < NTHREADS; i++) {
		l[i] = STORE_DATA_SYNC;
	}
	run_behind_held_round(f, &leader, c, l, NTHREADS);
	/* 1 + 8 callers, 2 syncs: the in-flight one covered none of them. */
	assert_int_equal(fake_calls(&f->fs), 2);
	assert_int_equal(f->fs.levels[1], STORE_DATA_SYNC);
	assert_int_equal(leader.result, 0);
	for (size_t i = 0; i < NTHREADS; i++) {
		assert_int_equal(c[i].result, 0);
	}
}

static void test_syncgroup_one_file_sync_makes_the_round_fsync(void **state)
{
	struct fixture *f = *state;
	enum store_stable l[NTHREADS];
	struct caller c[NTHREADS], leader;

	for (size_t i = 0; i < NTHREADS; i++) {
		l[i] = i == 5 ? STORE_FILE_SYNC : STORE_DATA_SYNC;
	}
	run_behind_held_round(f, &leader, c, l, NTHREADS);
	assert_int_equal(fake_calls(&f->fs), 2);
	assert_int_equal(f->fs.levels[0], STORE_DATA_SYNC);
	assert_int_equal(f->fs.levels[1], STORE_FILE_SYNC);
}

static void test_syncgroup_round_in_flight_never_covers_a_newcomer(void **state)
{
	struct fixture *f = *state;
	enum store_stable l[1] = { STORE_DATA_SYNC };
	struct caller c[1], leader;

	run_behind_held_round(f, &leader, c, l, 1);
	assert_int_equal(fake_calls(&f->fs), 2);
	assert_int_equal(c[0].result, 0);
}

static void test_syncgroup_failed_round_fails_everyone_it_covered(void **state)
{
	struct fixture *f = *state;
	enum store_stable l[NTHREADS];
	struct caller c[NTHREADS], leader;

	for (size_t i = 0; i < NTHREADS; i++) {
		l[i] = STORE_FILE_SYNC;
	}
	f->fs.results[1] = -EIO;
	run_behind_held_round(f, &leader, c, l, NTHREADS);
	assert_int_equal(fake_calls(&f->fs), 2);
	assert_int_equal(leader.result, 0);
	for (size_t i = 0; i < NTHREADS; i++) {
		assert_int_equal(c[i].result, -EIO);
	}
}

static void test_syncgroup_error_sticks_without_another_sync(void **state)
{
	struct fixture *f = *state;
	enum store_stable l[NTHREADS];
	struct caller c[NTHREADS], leader;

	/* Round 1 fails while 8 wait for round 2: they were written before
	 * the failure was seen, so they fail too, and nobody syncs again
	 * (a second fsync would find the error consumed and say 0). */
	for (size_t i = 0; i < NTHREADS; i++) {
		l[i] = STORE_DATA_SYNC;
	}
	f->fs.results[0] = -ENOSPC;
	run_behind_held_round(f, &leader, c, l, NTHREADS);
	assert_int_equal(leader.result, -ENOSPC);
	for (size_t i = 0; i < NTHREADS; i++) {
		assert_int_equal(c[i].result, -ENOSPC);
	}
	assert_int_equal(fake_calls(&f->fs), 1);
	assert_int_equal(store__syncgroup_sync(&f->sg, STORE_FILE_SYNC, true,
					       fake_sync_fn, &f->fs),
			 -ENOSPC);
	assert_int_equal(fake_calls(&f->fs), 1);
}

static void test_syncgroup_sequential_callers_each_sync(void **state)
{
	struct fixture *f = *state;

	for (int i = 0; i < 3; i++) {
		assert_int_equal(store__syncgroup_sync(&f->sg, STORE_DATA_SYNC,
						       true, fake_sync_fn,
						       &f->fs),
				 0);
	}
	assert_int_equal(fake_calls(&f->fs), 3);
	assert_int_equal(store__syncgroup_waiters(&f->sg), 0);
}

static void test_syncgroup_ungrouped_syncs_alone_with_sticky_error(void **state)
{
	struct fixture *f = *state;
	struct caller c[NTHREADS];

	/* Group commit off: one sync per caller, concurrent or not. */
	for (size_t i = 0; i < NTHREADS; i++) {
		caller_start(&c[i], f, STORE_FILE_SYNC, false);
	}
	for (size_t i = 0; i < NTHREADS; i++) {
		caller_join(&c[i]);
		assert_int_equal(c[i].result, 0);
	}
	assert_int_equal(fake_calls(&f->fs), NTHREADS);
	assert_int_equal(f->fs.levels[NTHREADS - 1], STORE_FILE_SYNC);
	f->fs.results[NTHREADS] = -EIO;
	assert_int_equal(store__syncgroup_sync(&f->sg, STORE_DATA_SYNC, false,
					       fake_sync_fn, &f->fs),
			 -EIO);
	assert_int_equal(store__syncgroup_sync(&f->sg, STORE_DATA_SYNC, false,
					       fake_sync_fn, &f->fs),
			 -EIO);
	assert_int_equal(fake_calls(&f->fs), NTHREADS + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_syncgroup_writers_behind_a_round_share_the_next,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_syncgroup_one_file_sync_makes_the_round_fsync,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_syncgroup_round_in_flight_never_covers_a_newcomer,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_syncgroup_failed_round_fails_everyone_it_covered,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_syncgroup_error_sticks_without_another_sync, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_syncgroup_sequential_callers_each_sync, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_syncgroup_ungrouped_syncs_alone_with_sticky_error,
			setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
