// SPDX-License-Identifier: Apache-2.0
/*
 * test_dispatch: one call in, one reply out (nfsd/rpc/dispatch.c, RFC 5531
 * 9 and 10), through a fake transport that keeps what is sent and counts
 * close/ref/unref, and a tiny test program (400000 v1: NULL, ECHO, a hole,
 * DROP, CLOSE, DEFER, DEFER_RACE; and v3 with NULL only).  Every RPC-level
 * error is checked word by word; deferred work runs inline without a pool
 * and on a real rpc_work_pool otherwise.  Program 400001 charges its calls
 * to a datastore: a fake admission hook runs them, or keeps them until the
 * test runs or cancels them.  Program 400002 has its ECHO and DEFER calls
 * run whole on a work thread (rpc_offload_fn), as a blocking store's are.
 */
#include "tests/unit/test_dispatch_fixture.h"

static void test_dispatch_null_call_gets_success(void **state)
{
	struct fixture *f = *state;
	struct rpc_wire w;
	const uint32_t want[] = { 0x101, RPC_MSG_REPLY,	    0, RPC_AUTH_NONE,
				  0,	 RPC_ACCEPT_SUCCESS };

	rpc_wire_call(&w, 0x101, 2, TEST_PROG, 1, TEST_NULL, 0);
	dispatch(f, &w);
	assert_int_equal(f->t.nsent, 1);
	assert_reply(f, 0, want, 6);
	assert_int_equal(f->t.refs, 1);
	assert_int_equal(f->t.closes, 0);
}

static void test_dispatch_echo_reply_bytes(void **state)
{
	struct fixture *f = *state;
	struct rpc_wire w;
	const uint32_t want[] = { 0x102,     RPC_MSG_REPLY,
				  0,	     RPC_AUTH_NONE,
				  0,	     RPC_ACCEPT_SUCCESS,
				  0xfeedf00d };

	rpc_wire_call(&w, 0x102, 2, TEST_PROG, 1, TEST_ECHO, 3);
	rpc_wire_u32(&w, 0xfeedf00d);
	dispatch(f, &w);
	assert_int_equal(f->t.nsent, 1);
	assert_reply(f, 0, want, 7);
	assert_int_equal(f->t.releases, 1);
}

static void test_dispatch_unknown_program_is_prog_unavail(void **state)
{
	struct fixture *f = *state;
	struct rpc_wire w;
	const uint32_t want[] = { 7, RPC_MSG_REPLY,	     0, RPC_AUTH_NONE,
				  0, RPC_ACCEPT_PROG_UNAVAIL };

	rpc_wire_call(&w, 7, 2, TEST_PROG, 1, TEST_NULL, 0);
	w.buf[12] = 0x7f; /* prog 0x7f061a80 */
	dispatch(f, &w);
	assert_reply(f, 0, want, 6);
	assert_int_equal(f->t.refs, 0);
}

static void test_dispatch_unknown_version_is_prog_mismatch(void **state)
{
	struct fixture *f = *state;
	struct rpc_wire w;
	const uint32_t want[] = { 8, RPC_MSG_REPLY,
				  0, RPC_AUTH_NONE,
				  0, RPC_ACCEPT_PROG_MISMATCH,
				  1, /* low */
				  3 /* high */ };

	rpc_wire_call(&w, 8, 2, TEST_PROG, 2, TEST_NULL, 0);
	dispatch(f, &w);
	assert_reply(f, 0, want, 8);
	rpc_wire_call(&w, 9, 2, TEST_PROG, 3, TEST_NULL, 0);
	dispatch(f, &w);
	assert_int_equal(
		rpc_wire_get_u32(f->t.sent[1] + RPC_REPLY_MARK_ROOM + 20),
		RPC_ACCEPT_SUCCESS);
}

static void test_dispatch_proc_past_table_is_proc_unavail(void **state)
{
	struct fixture *f = *state;
	struct rpc_wire w;
	const uint32_t want[] = { 10, RPC_MSG_REPLY,	      0, RPC_AUTH_NONE,
				  0,  RPC_ACCEPT_PROC_UNAVAIL };

	rpc_wire_call(&w, 10, 2, TEST_PROG, 1, TEST_NPROCS, 0);
	dispatch(f, &w);
	assert_reply(f, 0, want, 6);
	rpc_wire_call(&w, 10, 2, TEST_PROG, 3, 1, 0);
	dispatch(f, &w);
	assert_reply(f, 1, want, 6);
}

static void test_dispatch_null_handler_row_is_proc_unavail(void **state)
{
	struct fixture *f = *state;
	struct rpc_wire w;
	const uint32_t want[] = { 11, RPC_MSG_REPLY,	      0, RPC_AUTH_NONE,
				  0,  RPC_ACCEPT_PROC_UNAVAIL };

	rpc_wire_call(&w, 11, 2, TEST_PROG, 1, TEST_HOLE, 0);
	dispatch(f, &w);
	assert_reply(f, 0, want, 6);
	assert_int_equal(f->t.refs, 0);
}

static void test_dispatch_truncated_args_are_garbage(void **state)
{
	struct fixture *f = *state;
	struct rpc_wire w;
	const uint32_t want[] = { 12, RPC_MSG_REPLY,	      0, RPC_AUTH_NONE,
				  0,  RPC_ACCEPT_GARBAGE_ARGS };

	rpc_wire_call(&w, 12, 2, TEST_PROG, 1, TEST_ECHO, 0);
	w.buf[w.len++] = 0x01; /* one byte of a four-byte u_int */
	dispatch(f, &w);
	assert_reply(f, 0, want, 6);
	assert_int_equal(f->t.refs, 0);
	assert_int_equal(f->t.releases, 0);
}

static void test_dispatch_rpcvers_3_is_rpc_mismatch(void **state)
{
	struct fixture *f = *state;
	struct rpc_wire w;
	const uint32_t want[] = { 13, RPC_MSG_REPLY,
				  1,  RPC_REJECT_RPC_MISMATCH,
				  2,  2 };

	rpc_wire_call(&w, 13, 3, TEST_PROG, 1, TEST_NULL, 0);
	dispatch(f, &w);
	assert_reply(f, 0, want, 6);
}

static void test_dispatch_bad_auth_sys_is_auth_error(void **state)
{
	struct fixture *f = *state;
	struct rpc_wire w;
	const uint32_t want[] = { 14, RPC_MSG_REPLY, 1, RPC_REJECT_AUTH_ERROR,
				  RPC_AUTH_BADCRED };

	rpc_wire_call(&w, 14, 2, TEST_PROG, 1, TEST_NULL, 17);
	dispatch(f, &w);
	assert_reply(f, 0, want, 5);
	assert_int_equal(f->t.refs, 0);
}

static void test_dispatch_drop_sends_nothing(void **state)
{
	struct fixture *f = *state;
	struct rpc_wire w;

	rpc_wire_call(&w, 15, 2, TEST_PROG, 1, TEST_DROP, 0);
	dispatch(f, &w);
	assert_int_equal(f->t.nsent, 0);
	assert_int_equal(f->t.closes, 0);
	assert_int_equal(f->t.refs, 1);
	assert_int_equal(f->t.releases, 1);
}

static void test_dispatch_close_closes_and_sends_nothing(void **state)
{
	struct fixture *f = *state;
	struct rpc_wire w;

	rpc_wire_call(&w, 16, 2, TEST_PROG, 1, TEST_CLOSE, 0);
	dispatch(f, &w);
	assert_int_equal(f->t.nsent, 0);
	assert_int_equal(f->t.closes, 1);
	assert_int_equal(f->t.releases, 1);
}

static void test_dispatch_garbage_record_closes(void **state)
{
	struct fixture *f = *state;
	struct rpc_wire w = { .buf = { 1, 2, 3, 4, 5 }, .len = 5 };

	dispatch(f, &w);
	assert_int_equal(f->t.closes, 1);
	assert_int_equal(f->t.nsent, 0);
	assert_true(log_capture_contains("rpc: 127.0.0.1:811: record of 5 "
					 "bytes is not an RPC call; closing"));

	/* A CALL whose header stops inside the credential. */
	rpc_wire_call(&w, 17, 2, TEST_PROG, 1, TEST_NULL, 0);
	w.len = 30;
	dispatch(f, &w);
	assert_int_equal(f->t.closes, 2);
	assert_int_equal(f->t.nsent, 0);
}

static void test_dispatch_reply_message_is_ignored(void **state)
{
	struct fixture *f = *state;
	struct rpc_wire w;

	rpc_wire_call(&w, 18, 2, TEST_PROG, 1, TEST_NULL, 0);
	w.buf[7] = RPC_MSG_REPLY;
	dispatch(f, &w);
	assert_int_equal(f->t.closes, 0);
	assert_int_equal(f->t.nsent, 0);
}

static void test_dispatch_defer_without_pool_runs_inline(void **state)
{
	struct fixture *f = *state;
	struct rpc_wire w;
	const uint32_t want[] = { 19, RPC_MSG_REPLY,	  0, RPC_AUTH_NONE,
				  0,  RPC_ACCEPT_SUCCESS, 42 };

	rpc_wire_call(&w, 19, 2, TEST_PROG, 1, TEST_DEFER, 0);
	rpc_wire_u32(&w, 41);
	dispatch(f, &w);
	assert_reply(f, 0, want, 7);
	assert_int_equal(f->t.defer_dones, 0);
	assert_int_equal(f->t.releases, 1);
}

/* Dispatches @proc(41) on a two-thread pool and finishes the request on
 * this thread once the work handed it back. */
static void defer_on_pool(struct fixture *f, uint32_t xid, uint32_t proc)
{
	const uint32_t want[] = { xid, RPC_MSG_REPLY,	   0, RPC_AUTH_NONE,
				  0,   RPC_ACCEPT_SUCCESS, 42 };
	struct rpc_work_pool *pool = NULL;
	struct rpc_call *call;
	struct rpc_wire w;

	assert_int_equal(rpc_work_pool_new(2, &pool), 0);
	f->d.work_pool = pool;
	rpc_wire_call(&w, xid, 2, TEST_PROG, 1, proc, 0);
	rpc_wire_u32(&w, 41);
	dispatch(f, &w);
	/* Nothing is sent until the loop thread finishes the request. */
	assert_int_equal(f->t.nsent, 0);
	assert_int_equal(f->t.refs, 1);
	call = fake_wait_deferred(&f->t);
	assert_non_null(call);
	assert_int_equal(call->req.xid, xid);
	assert_int_equal(f->t.unrefs, 0);
	rpc_call_finish(call);
	assert_reply(f, 0, want, 7);
	assert_int_equal(f->t.defer_dones, 1);
	assert_int_equal(f->t.releases, 1);
	rpc_work_pool_free(pool);
	f->d.work_pool = NULL;
}

static void test_dispatch_defer_on_pool_calls_defer_done(void **state)
{
	defer_on_pool(*state, 20, TEST_DEFER);
}

/* The work can finish (and the request come back) before the handler
 * has returned RPC_PENDING; the disposition the work set must stand. */
static void test_dispatch_defer_done_before_handler_returns(void **state)
{
	defer_on_pool(*state, 21, TEST_DEFER_RACE);
}

/* An offloaded call (rpc_offload_fn) runs its handler on the pool: nothing
 * is sent until the loop finishes it; a defer inside it runs there too,
 * so the request comes back once.  @want_value: the reply's u_int. */
static void offload_on_pool(struct fixture *f, uint32_t xid, uint32_t proc,
			    uint32_t want_value)
{
	const uint32_t want[] = { xid,	     RPC_MSG_REPLY,
				  0,	     RPC_AUTH_NONE,
				  0,	     RPC_ACCEPT_SUCCESS,
				  want_value };
	struct rpc_work_pool *pool = NULL;
	struct rpc_call *call;
	struct rpc_wire w;

	assert_int_equal(rpc_work_pool_new(2, &pool), 0);
	f->d.work_pool = pool;
	rpc_wire_call(&w, xid, 2, TEST_PROG_OFFLOADED, 1, proc, 0);
	rpc_wire_u32(&w, 41);
	dispatch(f, &w);
	call = fake_wait_deferred(&f->t);
	assert_non_null(call);
	assert_int_equal(f->t.nsent, 0);
	rpc_call_finish(call);
	assert_reply(f, 0, want, 7);
	assert_int_equal(f->t.defer_dones, 1);
	assert_int_equal(f->t.releases, 1);
	rpc_work_pool_free(pool);
	f->d.work_pool = NULL;
}

static void test_dispatch_offloaded_call_runs_on_the_pool(void **state)
{
	offload_on_pool(*state, 30, TEST_ECHO, 41);
}

static void test_dispatch_defer_inside_offloaded_call_runs_inline(void **state)
{
	offload_on_pool(*state, 31, TEST_DEFER, 42);
}

/* Without a work pool (UDP, tests) an offloaded program's call runs on
 * the loop as any other. */
static void test_dispatch_offload_without_pool_runs_inline(void **state)
{
	struct fixture *f = *state;
	struct rpc_wire w;
	const uint32_t want[] = { 32, RPC_MSG_REPLY,	  0, RPC_AUTH_NONE,
				  0,  RPC_ACCEPT_SUCCESS, 41 };

	rpc_wire_call(&w, 32, 2, TEST_PROG_OFFLOADED, 1, TEST_ECHO, 0);
	rpc_wire_u32(&w, 41);
	dispatch(f, &w);
	assert_reply(f, 0, want, 7);
	assert_int_equal(f->t.defer_dones, 0);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_dispatch_null_call_gets_success),
		T(test_dispatch_echo_reply_bytes),
		T(test_dispatch_unknown_program_is_prog_unavail),
		T(test_dispatch_unknown_version_is_prog_mismatch),
		T(test_dispatch_proc_past_table_is_proc_unavail),
		T(test_dispatch_null_handler_row_is_proc_unavail),
		T(test_dispatch_truncated_args_are_garbage),
		T(test_dispatch_rpcvers_3_is_rpc_mismatch),
		T(test_dispatch_bad_auth_sys_is_auth_error),
		T(test_dispatch_drop_sends_nothing),
		T(test_dispatch_close_closes_and_sends_nothing),
		T(test_dispatch_garbage_record_closes),
		T(test_dispatch_reply_message_is_ignored),
		T(test_dispatch_defer_without_pool_runs_inline),
		T(test_dispatch_defer_on_pool_calls_defer_done),
		T(test_dispatch_defer_done_before_handler_returns),
		T(test_dispatch_offloaded_call_runs_on_the_pool),
		T(test_dispatch_defer_inside_offloaded_call_runs_inline),
		T(test_dispatch_offload_without_pool_runs_inline),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
