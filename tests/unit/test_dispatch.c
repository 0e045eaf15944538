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
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nfsd/rpc/dispatch.h"
#include "nfsd/rpc/msg.h"
#include "nfsd/rpc/pool.h"
#include "nfsd/proto/xdr_empty.h"
#include "nfsd/rpc/work.h"
#include "tests/lib/log_capture.h"
#include "tests/lib/rpc_test_prog.h"
#include "tests/lib/rpc_wire.h"

#define TEST_PROG 400000
#define TEST_PROG_CHARGED 400001
#define TEST_PROG_OFFLOADED 400002
#define TEST_SENT_MAX 8
#define TEST_QUEUE_MAX 4

enum test_proc {
	TEST_NULL = 0,
	TEST_ECHO = 1,
	TEST_HOLE = 2,
	TEST_DROP = 3,
	TEST_CLOSE = 4,
	TEST_DEFER = 5,
	TEST_DEFER_RACE = 6,
	TEST_NPROCS
};

struct fake_transport {
	uint8_t *sent[TEST_SENT_MAX];
	size_t sent_len[TEST_SENT_MAX];
	size_t nsent;
	unsigned closes, refs, unrefs, releases;

	pthread_mutex_t lock; /* guards the two below (work threads) */
	pthread_cond_t cond;
	struct request *deferred;
	unsigned defer_dones;
};

/* The admission hook's side: what it was asked, what it keeps. */
struct fake_admission {
	enum rpc_admit_verdict verdict; /* what admit answers */
	unsigned admits, dones;
	uint64_t last_bytes;
	struct request *queue[TEST_QUEUE_MAX];
	size_t nqueued;
};

struct fixture {
	struct rpc_dispatcher d;
	struct fake_transport t;
	struct sockaddr_in peer;
	struct fake_admission adm;
	struct rpc_admission admission;
};

static void fake_send(void *transport, uint8_t *buf, size_t len)
{
	struct fake_transport *t = transport;

	assert_true(t->nsent < TEST_SENT_MAX);
	assert_true(len >= RPC_REPLY_MARK_ROOM);
	t->sent[t->nsent] = buf;
	t->sent_len[t->nsent] = len;
	t->nsent++;
}

static void fake_close(void *transport)
{
	((struct fake_transport *)transport)->closes++;
}

static void fake_ref(void *transport)
{
	((struct fake_transport *)transport)->refs++;
}

static void fake_unref(void *transport)
{
	struct fake_transport *t = transport;

	t->unrefs++;
	assert_true(t->unrefs <= t->refs);
}

static void fake_defer_done(void *transport, struct request *req)
{
	struct fake_transport *t = transport;

	pthread_mutex_lock(&t->lock);
	t->deferred = req;
	t->defer_dones++;
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
}

static const struct rpc_transport_ops fake_tops = {
	.send = fake_send,
	.close = fake_close,
	.ref = fake_ref,
	.unref = fake_unref,
	.defer_done = fake_defer_done,
};

/* Waits (no timeout: a hang is a failure the runner reports) until
 * deferred work was handed back; returns the request. */
static struct request *fake_wait_deferred(struct fake_transport *t)
{
	struct request *req;

	pthread_mutex_lock(&t->lock);
	while (!t->defer_dones)
		pthread_cond_wait(&t->cond, &t->lock);
	req = t->deferred;
	pthread_mutex_unlock(&t->lock);
	return req;
}

/* ---- the test program ---------------------------------------------- */

static enum rpc_disposition proc_drop(struct request *req, const void *args,
				      void *res)
{
	(void)req;
	(void)args;
	(void)res;
	return RPC_DROP;
}

static enum rpc_disposition proc_close(struct request *req, const void *args,
				       void *res)
{
	(void)req;
	(void)args;
	(void)res;
	return RPC_CLOSE;
}

/* Defers, then returns only once the work is done and handed back: the
 * order a preempted loop thread sees. */
static enum rpc_disposition proc_defer_race(struct request *req,
					    const void *args, void *res)
{
	enum rpc_disposition disp = request_defer(req, rpc_test_work_add_one);

	(void)args;
	(void)res;
	if (disp == RPC_PENDING)
		fake_wait_deferred(req->transport);
	return disp;
}

static void proc_release(struct request *req, void *res)
{
	(void)res;
	((struct fake_transport *)req->transport)->releases++;
}

static void trace_u_int(const struct request *req, const void *args,
			const void *res, char *buf, size_t len)
{
	(void)req;
	(void)res;
	snprintf(buf, len, "value=%u", *(const u_int *)args);
}

static const struct rpc_proc test_procs_v1[TEST_NPROCS] = {
	[TEST_NULL] = { .name = "NULL",
			.handler = rpc_test_proc_null,
			.decode = (xdrproc_t)xdr_empty,
			.encode = (xdrproc_t)xdr_empty },
	[TEST_ECHO] = { .name = "ECHO",
			.handler = rpc_test_proc_echo,
			.release = proc_release,
			.decode = (xdrproc_t)xdr_u_int,
			.encode = (xdrproc_t)xdr_u_int,
			.args_size = sizeof(u_int),
			.res_size = sizeof(u_int),
			.trace_args = trace_u_int },
	[TEST_HOLE] = { .name = "HOLE" },
	[TEST_DROP] = { .name = "DROP",
			.handler = proc_drop,
			.release = proc_release,
			.decode = (xdrproc_t)xdr_empty,
			.encode = (xdrproc_t)xdr_empty },
	[TEST_CLOSE] = { .name = "CLOSE",
			 .handler = proc_close,
			 .release = proc_release,
			 .decode = (xdrproc_t)xdr_empty,
			 .encode = (xdrproc_t)xdr_empty },
	[TEST_DEFER] = { .name = "DEFER",
			 .handler = rpc_test_proc_defer,
			 .release = proc_release,
			 .decode = (xdrproc_t)xdr_u_int,
			 .encode = (xdrproc_t)xdr_u_int,
			 .args_size = sizeof(u_int),
			 .res_size = sizeof(u_int) },
	[TEST_DEFER_RACE] = { .name = "DEFER_RACE",
			      .handler = proc_defer_race,
			      .release = proc_release,
			      .decode = (xdrproc_t)xdr_u_int,
			      .encode = (xdrproc_t)xdr_u_int,
			      .args_size = sizeof(u_int),
			      .res_size = sizeof(u_int) },
};

static const struct rpc_proc test_procs_v3[] = {
	{ .name = "NULL",
	  .handler = rpc_test_proc_null,
	  .decode = (xdrproc_t)xdr_empty,
	  .encode = (xdrproc_t)xdr_empty },
};

static const struct rpc_program test_prog_v1 = {
	.name = "test",
	.prog = TEST_PROG,
	.vers = 1,
	.procs = test_procs_v1,
	.nprocs = TEST_NPROCS,
};

/* Charges ECHO and DEFER (rpc_test_charge), with their argument as the
 * bytes. */
static const struct rpc_program test_prog_charged = {
	.name = "charged",
	.prog = TEST_PROG_CHARGED,
	.vers = 1,
	.procs = test_procs_v1,
	.nprocs = TEST_NPROCS,
	.charge = rpc_test_charge,
};

/* ECHO and DEFER block (as every call of a cephfs datastore may). */
static bool test_offload(struct request *req, const void *args)
{
	(void)args;
	return req->proc == TEST_ECHO || req->proc == TEST_DEFER;
}

static const struct rpc_program test_prog_offloaded = {
	.name = "offloaded",
	.prog = TEST_PROG_OFFLOADED,
	.vers = 1,
	.procs = test_procs_v1,
	.nprocs = TEST_NPROCS,
	.offload = test_offload,
};

static enum rpc_admit_verdict fake_admit(void *arg, struct request *req)
{
	struct fake_admission *a = arg;

	a->admits++;
	a->last_bytes = req->tr.bytes;
	assert_string_equal(req->export_name, "ds-test");
	req->admit_ctx = a;
	if (a->verdict == RPC_ADMIT_QUEUED) {
		assert_true(a->nqueued < TEST_QUEUE_MAX);
		a->queue[a->nqueued++] = req;
	}
	return a->verdict;
}

static void fake_done(void *arg, struct request *req)
{
	struct fake_admission *a = arg;

	assert_ptr_equal(req->admit_ctx, a);
	a->dones++;
}

static const struct rpc_program test_prog_v3 = {
	.name = "test",
	.prog = TEST_PROG,
	.vers = 3,
	.procs = test_procs_v3,
	.nprocs = 1,
};

/* ---- wire helpers ---------------------------------------------------- */

static void dispatch(struct fixture *f, const struct rpc_wire *w)
{
	rpc_dispatch_record(&f->d, w->buf, w->len, &fake_tops, &f->t,
			    (const struct sockaddr *)&f->peer, sizeof(f->peer));
}

/* Asserts reply @i (after the mark room) is exactly the words @want. */
static void assert_reply(const struct fixture *f, size_t i,
			 const uint32_t *want, size_t nwords)
{
	assert_true(i < f->t.nsent);
	assert_int_equal(f->t.sent_len[i], RPC_REPLY_MARK_ROOM + 4 * nwords);
	for (size_t k = 0; k < nwords; k++)
		assert_int_equal(rpc_wire_get_u32(f->t.sent[i] +
						  RPC_REPLY_MARK_ROOM + 4 * k),
				 want[k]);
}

/* ---- fixture ----------------------------------------------------------- */

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	pthread_mutex_init(&f->t.lock, NULL);
	pthread_cond_init(&f->t.cond, NULL);
	if (rpc_dispatcher_add(&f->d, &test_prog_v1) ||
	    rpc_dispatcher_add(&f->d, &test_prog_v3) ||
	    rpc_dispatcher_add(&f->d, &test_prog_charged) ||
	    rpc_dispatcher_add(&f->d, &test_prog_offloaded))
		return -1;
	f->admission.admit = fake_admit;
	f->admission.done = fake_done;
	f->admission.arg = &f->adm;
	f->peer.sin_family = AF_INET;
	f->peer.sin_port = htons(811);
	f->peer.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	log_capture_reset();
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	/* Every request gave back the reference it took. */
	assert_int_equal(f->t.refs, f->t.unrefs);
	for (size_t i = 0; i < f->t.nsent; i++)
		rpc_buf_unref(f->t.sent[i]);
	pthread_cond_destroy(&f->t.cond);
	pthread_mutex_destroy(&f->t.lock);
	free(f);
	return 0;
}

/* ---- tests ----------------------------------------------------------- */

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
	struct request *req;
	struct rpc_wire w;

	assert_int_equal(rpc_work_pool_new(2, &pool), 0);
	f->d.work_pool = pool;
	rpc_wire_call(&w, xid, 2, TEST_PROG, 1, proc, 0);
	rpc_wire_u32(&w, 41);
	dispatch(f, &w);
	/* Nothing is sent until the loop thread finishes the request. */
	assert_int_equal(f->t.nsent, 0);
	assert_int_equal(f->t.refs, 1);
	req = fake_wait_deferred(&f->t);
	assert_non_null(req);
	assert_int_equal(req->xid, xid);
	assert_int_equal(f->t.unrefs, 0);
	rpc_request_finish(req);
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
	const uint32_t want[] = { xid, RPC_MSG_REPLY,	   0, RPC_AUTH_NONE,
				  0,   RPC_ACCEPT_SUCCESS, want_value };
	struct rpc_work_pool *pool = NULL;
	struct request *req;
	struct rpc_wire w;

	assert_int_equal(rpc_work_pool_new(2, &pool), 0);
	f->d.work_pool = pool;
	rpc_wire_call(&w, xid, 2, TEST_PROG_OFFLOADED, 1, proc, 0);
	rpc_wire_u32(&w, 41);
	dispatch(f, &w);
	req = fake_wait_deferred(&f->t);
	assert_non_null(req);
	assert_int_equal(f->t.nsent, 0);
	rpc_request_finish(req);
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
	for (size_t i = 0; i < RPC_MAX_PROGRAMS; i++)
		assert_int_equal(rpc_dispatcher_add(&d, &test_prog_v1), 0);
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
	rpc_request_run(f->adm.queue[0]);
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
	rpc_request_cancel(f->adm.queue[1]);
	rpc_request_cancel(f->adm.queue[0]);
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

	/* Without a work pool the work runs inline, from rpc_request_run. */
	f->d.admission = &f->admission;
	f->adm.verdict = RPC_ADMIT_QUEUED;
	wire_charged(&w, 36, TEST_DEFER, 41);
	dispatch(f, &w);
	assert_int_equal(f->t.nsent, 0);
	rpc_request_run(f->adm.queue[0]);
	assert_reply(f, 0, want, 7);
	assert_int_equal(f->adm.dones, 1);
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
