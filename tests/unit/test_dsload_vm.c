// SPDX-License-Identifier: Apache-2.0
/*
 * test_dsload_vm: one emulated VM's ceiling (perf/dsload/vm.c).  Its
 * bucket grants its rate, and a loop that comes back late (dsload
 * descheduled on a busy machine) gets the tokens of the time it was away,
 * up to the catch-up, so the ceiling holds.
 */
#include <ev.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "perf/dsload/clock.h"
#include "perf/dsload/fleet_int.h"

#define MS DSLOAD_NS_PER_MS

static unsigned wakes;

/* The VM's wake-up (job.c's job_vm_wake_cb in dsload): counted. */
static void count_wake(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)w;
	(void)revents;
	wakes++;
}

struct vm_fixture {
	struct dloop lp;
	struct host host;
	struct dvm vm;
};

static int vm_setup(void **state)
{
	struct vm_fixture *fx = calloc(1, sizeof(*fx));

	if (!fx) {
		return -1;
	}
	fx->lp.loop = ev_loop_new(EVFLAG_AUTO);
	fx->host.lp = &fx->lp;
	fx->vm.host = &fx->host;
	*state = fx;
	return fx->lp.loop ? 0 : -1;
}

static int vm_teardown(void **state)
{
	struct vm_fixture *fx = *state;

	vm_phase_stop(&fx->vm);
	ev_loop_destroy(fx->lp.loop);
	free(fx);
	return 0;
}

/* Asks every 1 ms for 10 s, but is away 40 ms in every 100: the I/Os it
 * could start. */
static unsigned vm_run(struct dvm *vm, int64_t away_ms)
{
	unsigned started = 0;

	for (int64_t t = 0; t < 10000 * MS; t += MS) {
		if (t % (100 * MS) >= (100 - away_ms) * MS) {
			continue;
		}
		while (vm_admit(vm, t)) {
			started++;
		}
	}
	return started;
}

static void test_vm_ceiling_is_its_rate(void **state)
{
	struct vm_fixture *fx = *state;
	unsigned n;

	vm_phase_start(&fx->vm, 200, 0, count_wake);
	n = vm_run(&fx->vm, 0);
	assert_true(n >= 1990 && n <= 2010);
}

static void test_vm_loop_back_late_keeps_its_ceiling(void **state)
{
	struct vm_fixture *fx = *state;
	unsigned n;

	/* 200 IOPS: 10 ms of rate is 2 tokens; away 40 ms in 100 lost 30%
	 * of them with a 10 ms bucket. */
	vm_phase_start(&fx->vm, 200, 0, count_wake);
	n = vm_run(&fx->vm, 40);
	assert_true(n >= 1960 && n <= 2030);
}

static void test_vm_without_ceiling_admits_all(void **state)
{
	struct vm_fixture *fx = *state;

	vm_phase_start(&fx->vm, 0, 0, count_wake);
	for (int i = 0; i < 1000; i++) {
		assert_true(vm_admit(&fx->vm, 0));
	}
}

/* An empty bucket arms its timer once, and the timer calls the VM's
 * wake-up when the next token is due (1 ms at 1000 IOPS). */
static void test_vm_empty_bucket_wakes_its_caller(void **state)
{
	struct vm_fixture *fx = *state;
	int64_t now = dsload_now_ns();
	unsigned granted = 0;

	wakes = 0;
	vm_phase_start(&fx->vm, 1000, now, count_wake);
	while (vm_admit(&fx->vm, now)) {
		granted++;
	}
	assert_true(granted >= 1 && granted <= 10);
	assert_false(vm_admit(&fx->vm, now));
	assert_true(ev_is_active(&fx->vm.wake));
	assert_int_equal(wakes, 0);
	ev_run(fx->lp.loop, EVRUN_ONCE);
	assert_int_equal(wakes, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_vm_ceiling_is_its_rate,
						vm_setup, vm_teardown),
		cmocka_unit_test_setup_teardown(
			test_vm_loop_back_late_keeps_its_ceiling, vm_setup,
			vm_teardown),
		cmocka_unit_test_setup_teardown(
			test_vm_empty_bucket_wakes_its_caller, vm_setup,
			vm_teardown),
		cmocka_unit_test_setup_teardown(
			test_vm_without_ceiling_admits_all, vm_setup,
			vm_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
