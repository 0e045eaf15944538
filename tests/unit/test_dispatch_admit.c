// SPDX-License-Identifier: Apache-2.0
/*
 * test_dispatch_admit: the dispatcher's edges around a call
 * (nfsd/rpc/dispatch.c): --trace lines, the table of programs, and
 * admission by a fake hook for program 400001, whose calls are charged
 * to a datastore: run at once, kept until the test runs or cancels them,
 * or deferred while queued.  The fixture is test_dispatch_fixture.h.
 */

#include "tests/unit/test_dispatch_fixture.h"

static void test_dispatch_trace_logs_the_call(void **state)
{
	struct fixture *f = *state;
	struct rpc_wire w;

	f->d.trace = true;
	rpc_wire_call(&w, 0x22, 2, TEST_PROG, 1, TEST_ECHO, 0);
	rpc_wire_u32(&w, 5);
	dispatch(f, &w);
	assert_true(log_capture_contains(
		"trace: 127.0.0.1:811 xid=0x22 test ECHO value=5 -> "));
	rpc_wire_call(&w, 0x23, 2, TEST_PROG, 2, TEST_NULL, 0);
	dispatch(f, &w);
	assert_true(log_capture_contains("trace: 127.0.0.1:811 xid=0x23 "
					 "prog=400000 vers=2 proc=0 -> "
					 "PROG_MISMATCH"));
}

static void test_dispatcher_add_refuses_past_max(void **state)
{
	struct rpc_dispatcher d = { 0 };

	(void)state;
	for (size_t i = 0; i < RPC_MAX_PROGRAMS; i++) {
		assert_int_equal(rpc_dispatcher_add(&d, &test_prog_v1), 0);
	}
	assert_int_equal(rpc_dispatcher_add(&d, &test_prog_v1), -ENOSPC);
}

/* A call of the charged program with one u_int argument. */
static void wire_charged(struct rpc_wire *w, uint32_t xid, uint32_t proc,
			 uint32_t arg)
{
	rpc_wire_call(w, xid, 2, TEST_PROG_CHARGED, 1, proc, 0);
	rpc_wire_u32(w, arg);
}

static void test_dispatch_admitted_call_runs_at_once(void **state)
{
	struct fixture *f = *state;
	const uint32_t want[] = { 30, RPC_MSG_REPLY,	  0,   RPC_AUTH_NONE,
				  0,  RPC_ACCEPT_SUCCESS, 4096 };
	struct rpc_wire w;

	f->d.admission = &f->admission;
	f->adm.verdict = RPC_ADMIT_RUN;
	wire_charged(&w, 30, TEST_ECHO, 4096);
	dispatch(f, &w);
	assert_int_equal(f->adm.admits, 1);
	assert_int_equal(f->adm.last_bytes, 4096);
	assert_reply(f, 0, want, 7);
	assert_int_equal(f->adm.dones, 1);
	assert_int_equal(f->t.releases, 1);
}

static void test_dispatch_queued_call_runs_later(void **state)
{
	struct fixture *f = *state;
	const uint32_t want[] = { 31, RPC_MSG_REPLY,	  0, RPC_AUTH_NONE,
				  0,  RPC_ACCEPT_SUCCESS, 7 };
	struct rpc_wire w;

	f->d.admission = &f->admission;
	f->adm.verdict = RPC_ADMIT_QUEUED;
	wire_charged(&w, 31, TEST_ECHO, 7);
	dispatch(f, &w);
	/* Kept: decoded, holding its transport reference, not run. */
	assert_int_equal(f->adm.nqueued, 1);
	assert_int_equal(f->t.nsent, 0);
	assert_int_equal(f->t.refs, 1);
	assert_int_equal(f->t.unrefs, 0);
	assert_int_equal(f->t.releases, 0);
	rpc_call_run(f->adm.queue[0]);
	assert_reply(f, 0, want, 7);
	assert_int_equal(f->adm.dones, 1);
	assert_int_equal(f->t.unrefs, 1);
}

static void test_dispatch_cancelled_call_gives_everything_back(void **state)
{
	struct fixture *f = *state;
	struct rpc_wire w;

	f->d.admission = &f->admission;
	f->adm.verdict = RPC_ADMIT_QUEUED;
	wire_charged(&w, 32, TEST_ECHO, 7);
	dispatch(f, &w);
	wire_charged(&w, 33, TEST_DEFER, 9);
	dispatch(f, &w);
	assert_int_equal(f->adm.nqueued, 2);
	rpc_call_cancel(f->adm.queue[1]);
	rpc_call_cancel(f->adm.queue[0]);
	/* No reply, no release hook (no handler ran), no done; the
	 * references are back (teardown checks) and ASan sees no leak. */
	assert_int_equal(f->t.nsent, 0);
	assert_int_equal(f->t.releases, 0);
	assert_int_equal(f->adm.dones, 0);
	assert_int_equal(f->t.unrefs, 2);
}

static void test_dispatch_uncharged_calls_skip_admission(void **state)
{
	struct fixture *f = *state;
	struct rpc_wire w;

	f->d.admission = &f->admission;
	f->adm.verdict = RPC_ADMIT_QUEUED;
	/* The charged program's NULL, and a program with no charge hook. */
	wire_charged(&w, 34, TEST_NULL, 0);
	w.len -= 4;
	dispatch(f, &w);
	rpc_wire_call(&w, 35, 2, TEST_PROG, 1, TEST_ECHO, 0);
	rpc_wire_u32(&w, 5);
	dispatch(f, &w);
	assert_int_equal(f->adm.admits, 0);
	assert_int_equal(f->t.nsent, 2);
	assert_int_equal(f->adm.dones, 0);
}

static void test_dispatch_queued_deferred_call_finishes(void **state)
{
	struct fixture *f = *state;
	const uint32_t want[] = { 36, RPC_MSG_REPLY,	  0, RPC_AUTH_NONE,
				  0,  RPC_ACCEPT_SUCCESS, 42 };
	struct rpc_wire w;

	/* Without a work pool the work runs inline, from rpc_call_run. */
	f->d.admission = &f->admission;
	f->adm.verdict = RPC_ADMIT_QUEUED;
	wire_charged(&w, 36, TEST_DEFER, 41);
	dispatch(f, &w);
	assert_int_equal(f->t.nsent, 0);
	rpc_call_run(f->adm.queue[0]);
	assert_reply(f, 0, want, 7);
	assert_int_equal(f->adm.dones, 1);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_dispatch_trace_logs_the_call),
		T(test_dispatch_admitted_call_runs_at_once),
		T(test_dispatch_queued_call_runs_later),
		T(test_dispatch_cancelled_call_gives_everything_back),
		T(test_dispatch_uncharged_calls_skip_admission),
		T(test_dispatch_queued_deferred_call_finishes),
		cmocka_unit_test(test_dispatcher_add_refuses_past_max),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
