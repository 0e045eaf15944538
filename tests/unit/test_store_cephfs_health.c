// SPDX-License-Identifier: Apache-2.0
/*
 * test_store_cephfs_health: the health state of a cephfs store
 * (nfsd/store/cephfs/cephfs_health.c) without a cluster: the cap on the calls
 * in libcephfs, a connection error that marks the store down, calls refused at
 * once while it is down, the way back up (only once the calls that waited came
 * back and the probe answers), and an eviction, after which the store asks for
 * a new mount instead; calls waiting for a place get one each as places
 * come back, and are answered at once when the store goes down; an
 * eviction without a blocklist, found by asking the mount's admin socket
 * for its session, after which the calls that still wait are kicked out
 * of the dead mount and answer -EAGAIN whatever they return.  The probe,
 * the session's state, the blocklist and the kick are the test's (the
 * socket itself: test_store_cephfs_asok).
 */
#include "nfsd/store/cephfs/cephfs_int.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/lib/log_capture.h"

struct fixture {
	struct store_cephfs sc;
	_Atomic int probe_rc;
	_Atomic int probes;
	_Atomic int listed_rc; /* what the MDS says of the session */
	_Atomic int asks;
	_Atomic int blocklist_rc;
	_Atomic int blocklists;
	_Atomic int kicks;
};

static int fake_probe(struct store_cephfs *sc)
{
	struct fixture *f = (struct fixture *)sc; /* sc is the first member */

	atomic_fetch_add(&f->probes, 1);
	return atomic_load(&f->probe_rc);
}

static int fake_session_listed(struct store_cephfs *sc)
{
	struct fixture *f = (struct fixture *)sc;

	atomic_fetch_add(&f->asks, 1);
	return atomic_load(&f->listed_rc);
}

static int fake_blocklist_self(struct store_cephfs *sc)
{
	struct fixture *f = (struct fixture *)sc;

	atomic_fetch_add(&f->blocklists, 1);
	return atomic_load(&f->blocklist_rc);
}

static int fake_kick_stale(struct store_cephfs *sc)
{
	struct fixture *f = (struct fixture *)sc;

	atomic_fetch_add(&f->kicks, 1);
	return 0;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f) {
		return -1;
	}
	snprintf(f->sc.base.name, sizeof(f->sc.base.name), "c1");
	snprintf(f->sc.cluster, sizeof(f->sc.cluster), "test.conf");
	f->sc.health.probe = fake_probe;
	f->sc.health.session_listed = fake_session_listed;
	f->sc.health.blocklist_self = fake_blocklist_self;
	f->sc.health.kick_stale = fake_kick_stale;
	atomic_store(&f->probe_rc, -ENOTCONN);
	atomic_store(&f->listed_rc, 1);
	if (store__cephfs_health_start(&f->sc, 2)) {
		free(f);
		return -1;
	}
	log_capture_reset();
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	store__cephfs_health_stop(&f->sc);
	free(f);
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Waits up to @s seconds for the store's state to be @down. */
static bool wait_state(struct fixture *f, bool down, double s)
{
	double until = now_s() + s;

	while (now_s() < until) {
		if (atomic_load(&f->sc.base.unavailable) == down) {
			return true;
		}
		usleep(10000);
	}
	return false;
}

static void test_health_cap_refuses_past_it_when_calls_stall(void **state)
{
	struct fixture *f = *state;
	unsigned a, b, c;
	double t0;

	assert_int_equal(store__cephfs_call_enter(&f->sc, &a), 0);
	assert_int_equal(store__cephfs_call_enter(&f->sc, &b), 0);
	assert_int_not_equal(a, b);
	/* Two calls in libcephfs that do not come back: the third waits
	 * until the oldest is SLOW_MS old, then gives up. */
	t0 = now_s();
	assert_int_equal(store__cephfs_call_enter(&f->sc, &c), -EAGAIN);
	assert_true(now_s() - t0 < STORE_CEPHFS_SLOW_MS / 1000.0 + 0.5);
	/* Not down for that: the cap is not the health. */
	assert_false(atomic_load(&f->sc.base.unavailable));
	assert_int_equal(store__cephfs_call_leave(&f->sc, a, 0), 0);
	assert_int_equal(store__cephfs_call_enter(&f->sc, &c), 0);
	assert_int_equal(store__cephfs_call_leave(&f->sc, b, 0), 0);
	assert_int_equal(store__cephfs_call_leave(&f->sc, c, -ENOENT), -ENOENT);
}

struct leave_later {
	struct store_cephfs *sc;
	unsigned slot;
	unsigned after_ms;
};

static void *leave_later_thread(void *arg)
{
	struct leave_later *l = arg;

	usleep(l->after_ms * 1000);
	store__cephfs_call_leave(l->sc, l->slot, 0);
	return NULL;
}

/* A call older than SLOW_MS beside others that come back (a COMMIT that
 * flushes much, on a busy cluster) is load, not a stall: one past the
 * cap waits for the next place instead of answering JUKEBOX.  Seen with
 * 64 KiB UNSTABLE writes at depth 16 on a loaded machine (bench-ceph):
 * 9 JUKEBOX and no outage, when the oldest call's age alone decided. */
static void test_health_cap_waits_while_others_come_back(void **state)
{
	struct fixture *f = *state;
	struct leave_later l = { .sc = &f->sc, .after_ms = 300 };
	unsigned a, b, c;
	pthread_t t;

	assert_int_equal(store__cephfs_call_enter(&f->sc, &a), 0);
	usleep((STORE_CEPHFS_SLOW_MS + 100) * 1000);
	/* Another call comes and goes: the calls move. */
	assert_int_equal(store__cephfs_call_enter(&f->sc, &b), 0);
	assert_int_equal(store__cephfs_call_leave(&f->sc, b, 0), 0);
	/* Full again (a, old, and l.slot); l.slot comes back in 300 ms. */
	assert_int_equal(store__cephfs_call_enter(&f->sc, &l.slot), 0);
	assert_int_equal(pthread_create(&t, NULL, leave_later_thread, &l), 0);
	assert_int_equal(store__cephfs_call_enter(&f->sc, &c), 0);
	pthread_join(t, NULL);
	assert_int_equal(store__cephfs_call_leave(&f->sc, c, 0), 0);
	assert_int_equal(store__cephfs_call_leave(&f->sc, a, 0), 0);
	assert_int_equal(atomic_load(&f->sc.health.refused), 0);
}

struct enter_waiter {
	struct store_cephfs *sc;
	unsigned slot;
	_Atomic int rc; /* 1 while waiting */
	pthread_t t;
};

static void *enter_waiter_thread(void *arg)
{
	struct enter_waiter *w = arg;

	atomic_store(&w->rc, store__cephfs_call_enter(w->sc, &w->slot));
	return NULL;
}

static unsigned entered(struct enter_waiter *w, unsigned n)
{
	unsigned in = 0;

	for (unsigned i = 0; i < n; i++) {
		in += atomic_load(&w[i].rc) == 0;
	}
	return in;
}

/* Up to 2 s for @want of @n waiters to be in. */
static bool wait_entered(struct enter_waiter *w, unsigned n, unsigned want)
{
	for (int i = 0; i < 200 && entered(w, n) < want; i++) {
		usleep(10000);
	}
	return entered(w, n) == want;
}

/* Calls waiting for a place get one each as places come back (a leave
 * wakes one of them, not all), well before SLOW_MS. */
static void test_health_each_place_freed_lets_one_in(void **state)
{
	struct fixture *f = *state;
	struct enter_waiter w[4];
	unsigned a, b;
	double t0 = now_s();

	assert_int_equal(store__cephfs_call_enter(&f->sc, &a), 0);
	assert_int_equal(store__cephfs_call_enter(&f->sc, &b), 0);
	for (unsigned i = 0; i < 4; i++) {
		w[i].sc = &f->sc;
		atomic_store(&w[i].rc, 1);
		assert_int_equal(pthread_create(&w[i].t, NULL,
						enter_waiter_thread, &w[i]),
				 0);
	}
	usleep(100000);
	assert_int_equal(entered(w, 4), 0);
	assert_int_equal(store__cephfs_call_leave(&f->sc, a, 0), 0);
	assert_true(wait_entered(w, 4, 1));
	assert_int_equal(store__cephfs_call_leave(&f->sc, b, 0), 0);
	assert_true(wait_entered(w, 4, 2));
	/* The two in leave: the last two get their places. */
	for (unsigned i = 0, left = 0; i < 4 && left < 2; i++) {
		if (atomic_load(&w[i].rc) == 0) {
			pthread_join(w[i].t, NULL);
			assert_int_equal(
				store__cephfs_call_leave(&f->sc, w[i].slot, 0),
				0);
			atomic_store(&w[i].rc, 2); /* left */
			left++;
		}
	}
	for (unsigned i = 0; i < 4; i++) {
		if (atomic_load(&w[i].rc) != 2) {
			pthread_join(w[i].t, NULL);
			assert_int_equal(atomic_load(&w[i].rc), 0);
			assert_int_equal(
				store__cephfs_call_leave(&f->sc, w[i].slot, 0),
				0);
		}
	}
	assert_true(now_s() - t0 < STORE_CEPHFS_SLOW_MS / 1000.0);
	assert_int_equal(atomic_load(&f->sc.health.refused), 0);
	assert_int_equal(f->sc.health.inflight, 0);
	assert_int_equal(f->sc.health.waiting, 0);
}

/* The store going down answers the calls waiting for a place at once. */
static void test_health_down_answers_waiters_at_once(void **state)
{
	struct fixture *f = *state;
	struct enter_waiter w = { .sc = &f->sc };
	unsigned a, b;
	double t0;

	assert_int_equal(store__cephfs_call_enter(&f->sc, &a), 0);
	assert_int_equal(store__cephfs_call_enter(&f->sc, &b), 0);
	atomic_store(&w.rc, 1);
	assert_int_equal(pthread_create(&w.t, NULL, enter_waiter_thread, &w),
			 0);
	usleep(100000);
	t0 = now_s();
	assert_int_equal(store__cephfs_call_leave(&f->sc, a, -ENOTCONN),
			 -EAGAIN);
	pthread_join(w.t, NULL);
	assert_int_equal(atomic_load(&w.rc), -EAGAIN);
	assert_true(now_s() - t0 < 0.5);
	assert_int_equal(store__cephfs_call_leave(&f->sc, b, 0), 0);
}

static void test_health_connection_error_marks_down(void **state)
{
	struct fixture *f = *state;
	unsigned a, b;

	assert_int_equal(store__cephfs_call_enter(&f->sc, &a), 0);
	assert_int_equal(store__cephfs_call_leave(&f->sc, a, -ESHUTDOWN),
			 -EAGAIN);
	assert_true(atomic_load(&f->sc.base.unavailable));
	assert_true(log_capture_contains(
		"cephfs: c1: cluster test.conf does not answer"));
	/* Refused at once while down, whatever the errno was. */
	assert_int_equal(store__cephfs_call_enter(&f->sc, &b), -EAGAIN);
	assert_true(store__cephfs_conn_err(-ENOTCONN));
	assert_true(store__cephfs_conn_err(-ETIMEDOUT));
	assert_true(store__cephfs_conn_err(-ECONNREFUSED));
	assert_false(store__cephfs_conn_err(-EIO));
	assert_false(store__cephfs_conn_err(-ENOENT));
}

static void test_health_up_again_once_probe_answers(void **state)
{
	struct fixture *f = *state;
	unsigned a;

	assert_int_equal(store__cephfs_call_enter(&f->sc, &a), 0);
	assert_int_equal(store__cephfs_call_leave(&f->sc, a, -ENOTCONN),
			 -EAGAIN);
	/* The probe fails: down it stays. */
	assert_false(wait_state(f, false, 1.5));
	assert_true(atomic_load(&f->probes) >= 1);
	atomic_store(&f->probe_rc, 0);
	assert_true(wait_state(f, false, 3.0));
	assert_true(log_capture_contains("cephfs: c1: cluster test.conf "
					 "answers again after"));
	assert_int_equal(store__cephfs_call_enter(&f->sc, &a), 0);
	assert_int_equal(store__cephfs_call_leave(&f->sc, a, 0), 0);
}

static void test_health_no_probe_while_a_call_still_waits(void **state)
{
	struct fixture *f = *state;
	unsigned stuck, a;

	atomic_store(&f->probe_rc, 0);
	assert_int_equal(store__cephfs_call_enter(&f->sc, &stuck), 0);
	assert_int_equal(store__cephfs_call_enter(&f->sc, &a), 0);
	assert_int_equal(store__cephfs_call_leave(&f->sc, a, -ETIMEDOUT),
			 -EAGAIN);
	/* A call still in libcephfs: it holds what it was given, and the
	 * store is not up before it came back. */
	assert_false(wait_state(f, false, 1.5));
	assert_int_equal(atomic_load(&f->probes), 0);
	assert_int_equal(store__cephfs_call_leave(&f->sc, stuck, 0), 0);
	assert_true(wait_state(f, false, 3.0));
}

static void test_health_stalled_call_marks_down_after_bound(void **state)
{
	struct fixture *f = *state;
	unsigned a;
	double t0 = now_s();
	char want[64];

	assert_int_equal(store__cephfs_call_enter(&f->sc, &a), 0);
	assert_true(wait_state(f, true, STORE_CEPHFS_BOUND_MS / 1000.0 + 1));
	assert_true(now_s() - t0 >= STORE_CEPHFS_BOUND_MS / 1000.0 - 0.1);
	snprintf(want, sizeof(want), "a call waited %d ms",
		 STORE_CEPHFS_BOUND_MS);
	assert_true(log_capture_contains(want));
	assert_int_equal(store__cephfs_call_leave(&f->sc, a, 0), 0);
}

static void test_health_eviction_asks_for_a_new_mount(void **state)
{
	struct fixture *f = *state;
	unsigned a;

	atomic_store(&f->probe_rc, 0);
	assert_int_equal(store__cephfs_call_enter(&f->sc, &a), 0);
	assert_false(atomic_load(&f->sc.base.reopen));
	/* ESHUTDOWN is Ceph's EBLOCKLISTED: this mount is done for, so the
	 * store stays down and is not probed, whatever the probe says. */
	assert_int_equal(store__cephfs_call_leave(&f->sc, a, -ESHUTDOWN),
			 -EAGAIN);
	assert_true(atomic_load(&f->sc.base.reopen));
	assert_true(log_capture_contains("evicted this gateway's session"));
	assert_false(wait_state(f, false, 1.5));
	assert_int_equal(atomic_load(&f->probes), 0);
}

/* Waits up to @s seconds for @counter to reach @n. */
static bool wait_count(_Atomic int *counter, int n, double s)
{
	struct timespec tick = { 0, 20 * 1000000 };

	for (double t0 = now_s(); now_s() - t0 < s;) {
		if (atomic_load(counter) >= n) {
			return true;
		}
		nanosleep(&tick, NULL);
	}
	return atomic_load(counter) >= n;
}

/* Evicted without a blocklist (cephfs_evict.c): a call waits past the
 * bound; the MDS is asked for the session.  Listed (the call waits on an
 * OSD) or an MDS that cannot say: nothing is fenced.  Two answers in a
 * row without it: the mount blocklists itself once and asks for a new
 * mount, before the stuck call came back. */
static void test_health_unlisted_session_blocklists_itself(void **state)
{
	struct fixture *f = *state;
	double asked_every = STORE_CEPHFS_UNLISTED_MS / 1000.0;
	unsigned stuck;
	int asks;

	/* An ask in flight: looked at again each tick, counted as nothing. */
	atomic_store(&f->listed_rc, -EINPROGRESS);
	assert_int_equal(store__cephfs_call_enter(&f->sc, &stuck), 0);
	assert_true(wait_state(f, true, STORE_CEPHFS_BOUND_MS / 1000.0 + 1));
	assert_true(wait_count(&f->asks, 3, 1.0));
	atomic_store(&f->listed_rc, 1);
	asks = atomic_load(&f->asks);
	assert_true(wait_count(&f->asks, asks + 2, 2 * asked_every + 1));
	atomic_store(&f->listed_rc, -EACCES);
	assert_true(wait_count(&f->asks, 3, asked_every + 1));
	atomic_store(&f->listed_rc, 0);
	asks = atomic_load(&f->asks);

	assert_true(wait_count(&f->asks, asks + 1, asked_every + 1));
	assert_int_equal(atomic_load(&f->blocklists), 0);
	assert_false(atomic_load(&f->sc.base.reopen));
	/* The second answer without it. */
	assert_true(wait_count(&f->blocklists, 1, asked_every + 1));
	assert_true(atomic_load(&f->sc.base.reopen));
	assert_true(log_capture_contains(
		"cephfs: c1: cluster test.conf evicted this gateway's session "
		"without blocklisting it: blocklisted its own client"));
	/* Done for: never asked nor blocklisted again. */
	asks = atomic_load(&f->asks);
	assert_false(wait_count(&f->blocklists, 2, asked_every + 0.5));
	assert_int_equal(atomic_load(&f->asks), asks);
	/* The stuck call fails as a blocklisted client's do. */
	assert_int_equal(store__cephfs_call_leave(&f->sc, stuck, -ESHUTDOWN),
			 -EAGAIN);
	assert_false(wait_state(f, false, 1.0));
}

/* Blocklisted by the gateway, a mount whose calls still wait is told to
 * drop its stale session (at the next tick, then every ask's interval
 * while one waits, and no more once none does); what a call brings back
 * from it then, a 0 included (a sync whose caps were dropped), answers
 * -EAGAIN: never an OK under the verifier of the writes it lost. */
static void test_health_blocklisted_mount_kicks_its_waiting_calls(void **state)
{
	struct fixture *f = *state;
	double asked_every = STORE_CEPHFS_UNLISTED_MS / 1000.0;
	unsigned stuck, other;
	int kicks;

	atomic_store(&f->listed_rc, 0);
	assert_int_equal(store__cephfs_call_enter(&f->sc, &stuck), 0);
	assert_int_equal(store__cephfs_call_enter(&f->sc, &other), 0);
	assert_true(wait_count(&f->blocklists, 1,
			       STORE_CEPHFS_BOUND_MS / 1000.0 +
				       2 * asked_every + 1));
	assert_true(wait_count(&f->kicks, 1, 1.0));
	assert_true(log_capture_contains("telling it to drop its stale MDS "
					 "session"));
	assert_true(wait_count(&f->kicks, 2, asked_every + 1));
	/* A 0 from the dead mount, and an error that is no connection's. */
	assert_int_equal(store__cephfs_call_leave(&f->sc, other, 0), -EAGAIN);
	assert_int_equal(store__cephfs_call_leave(&f->sc, stuck, -EPERM),
			 -EAGAIN);
	kicks = atomic_load(&f->kicks);
	assert_false(wait_count(&f->kicks, kicks + 1, asked_every + 0.5));
	assert_true(atomic_load(&f->sc.base.reopen));
}

/* An evicted or fenced mount's late 0 is no answer either. */
static void test_health_dead_mount_answers_eagain(void **state)
{
	struct fixture *f = *state;
	unsigned a, b;

	assert_int_equal(store__cephfs_call_enter(&f->sc, &a), 0);
	assert_int_equal(store__cephfs_call_enter(&f->sc, &b), 0);
	assert_int_equal(store__cephfs_call_leave(&f->sc, a, -ESHUTDOWN),
			 -EAGAIN);
	assert_true(atomic_load(&f->sc.base.reopen));
	assert_int_equal(store__cephfs_call_leave(&f->sc, b, 0), -EAGAIN);
	assert_int_equal(atomic_load(&f->kicks), 0); /* not blocklisted here */
}

/* A blocklist the mon refuses leaves the store down, said, not reopened
 * (the old mount could still write behind a new one). */
static void test_health_unlisted_session_unfenced_stays_down(void **state)
{
	struct fixture *f = *state;
	double asked_every = STORE_CEPHFS_UNLISTED_MS / 1000.0;
	unsigned stuck;

	atomic_store(&f->listed_rc, 0);
	atomic_store(&f->blocklist_rc, -EACCES);
	assert_int_equal(store__cephfs_call_enter(&f->sc, &stuck), 0);
	assert_true(wait_count(&f->blocklists, 1,
			       STORE_CEPHFS_BOUND_MS / 1000.0 +
				       2 * asked_every + 1));
	assert_true(log_capture_contains("cannot blocklist itself"));
	assert_false(atomic_load(&f->sc.base.reopen));
	assert_true(atomic_load(&f->sc.base.unavailable));
	assert_int_equal(store__cephfs_call_leave(&f->sc, stuck, 0), 0);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_health_cap_refuses_past_it_when_calls_stall),
		T(test_health_cap_waits_while_others_come_back),
		T(test_health_each_place_freed_lets_one_in),
		T(test_health_down_answers_waiters_at_once),
		T(test_health_connection_error_marks_down),
		T(test_health_up_again_once_probe_answers),
		T(test_health_no_probe_while_a_call_still_waits),
		T(test_health_stalled_call_marks_down_after_bound),
		T(test_health_eviction_asks_for_a_new_mount),
		T(test_health_unlisted_session_blocklists_itself),
		T(test_health_unlisted_session_unfenced_stays_down),
		T(test_health_blocklisted_mount_kicks_its_waiting_calls),
		T(test_health_dead_mount_answers_eagain),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
