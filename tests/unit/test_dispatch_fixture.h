/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_dispatch_fixture: what test_dispatch.c and test_dispatch_admit.c
 * share: the fake transport and admission hook, the test programs
 * (400000 v1 and v3, 400001 charged, 400002 offloaded), one call in, and
 * the checks of a reply.  Include once, in place of the test's own
 * fixture.
 */
#ifndef DSNFS_TEST_DISPATCH_FIXTURE_H
#define DSNFS_TEST_DISPATCH_FIXTURE_H

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
	struct rpc_call *deferred;
	unsigned defer_dones;
};

/* The admission hook's side: what it was asked, what it keeps. */
struct fake_admission {
	enum rpc_admit_verdict verdict; /* what admit answers */
	unsigned admits, dones;
	uint64_t last_bytes;
	struct rpc_call *queue[TEST_QUEUE_MAX];
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

static void fake_defer_done(void *transport, struct rpc_call *call)
{
	struct fake_transport *t = transport;

	pthread_mutex_lock(&t->lock);
	t->deferred = call;
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
 * deferred work was handed back; returns the call. */
static struct rpc_call *fake_wait_deferred(struct fake_transport *t)
{
	struct rpc_call *call;

	pthread_mutex_lock(&t->lock);
	while (!t->defer_dones) {
		pthread_cond_wait(&t->cond, &t->lock);
	}
	call = t->deferred;
	pthread_mutex_unlock(&t->lock);
	return call;
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
	if (disp == RPC_PENDING) {
		fake_wait_deferred(rpc_call_of(req)->transport);
	}
	return disp;
}

static void proc_release(struct request *req, void *res)
{
	(void)res;
	((struct fake_transport *)rpc_call_of(req)->transport)->releases++;
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

static enum rpc_admit_verdict fake_admit(void *arg, struct rpc_call *call)
{
	struct fake_admission *a = arg;

	a->admits++;
	a->last_bytes = call->req.cost.bytes;
	assert_string_equal(call->req.export_name, "ds-test");
	call->admit_ctx = a;
	if (a->verdict == RPC_ADMIT_QUEUED) {
		assert_true(a->nqueued < TEST_QUEUE_MAX);
		a->queue[a->nqueued++] = call;
	}
	return a->verdict;
}

static void fake_done(void *arg, struct rpc_call *call)
{
	struct fake_admission *a = arg;

	assert_ptr_equal(call->admit_ctx, a);
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
	for (size_t k = 0; k < nwords; k++) {
		assert_int_equal(rpc_wire_get_u32(f->t.sent[i] +
						  RPC_REPLY_MARK_ROOM + 4 * k),
				 want[k]);
	}
}

/* ---- fixture ----------------------------------------------------------- */

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f) {
		return -1;
	}
	pthread_mutex_init(&f->t.lock, NULL);
	pthread_cond_init(&f->t.cond, NULL);
	if (rpc_dispatcher_add(&f->d, &test_prog_v1) ||
	    rpc_dispatcher_add(&f->d, &test_prog_v3) ||
	    rpc_dispatcher_add(&f->d, &test_prog_charged) ||
	    rpc_dispatcher_add(&f->d, &test_prog_offloaded)) {
		return -1;
	}
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
	for (size_t i = 0; i < f->t.nsent; i++) {
		rpc_buf_unref(f->t.sent[i]);
	}
	pthread_cond_destroy(&f->t.cond);
	pthread_mutex_destroy(&f->t.lock);
	free(f);
	return 0;
}

/* ---- tests ----------------------------------------------------------- */

#endif
