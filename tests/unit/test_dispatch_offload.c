// SPDX-License-Identifier: Apache-2.0
/*
 * test_dispatch_offload: [server] io_offload = auto (else one
 * connection = one CPU).  READ and UNSTABLE WRITE of a connection that
 * reports more than RPC_IO_OFFLOAD_BACKLOG calls go to work threads; the
 * replies must carry the same results and bytes as when the loop runs
 * them, and the work must not touch the loop's pool (pool.h: no locks).
 * Calls go as a connection sends them (record.c, rpc_dispatch_pooled)
 * to the NFSv3 program over the real local store, with a DRC; deferred
 * requests come back through defer_done to the "loop" (this thread).
 * Nothing waits on time: a gate request holds the work thread until the
 * test opens it.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "nfsd/nfs3/nfs3_int.h"
#include "nfsd/rpc/msg.h"
#include "nfsd/rpc/pool.h"
#include "nfsd/rpc/work.h"
#include "tests/lib/nfs3_fixture.h"
#include "tests/lib/nfs3_pooled_fixture.h"
#include "tests/lib/rpc_wire.h"

#define OFF_BLOCK 8192
#define OFF_NWRITES 16
#define OFF_FILE_BYTES (OFF_NWRITES * OFF_BLOCK)
#define OFF_MAX_CALLS 64

/* ---- a transport that behaves like conn.c --------------------------- */

/* One reply as the client would read it: head, then payload bytes. */
struct off_reply {
	uint8_t *bytes;
	size_t len;
};

struct off_transport {
	unsigned backlog; /* what the backlog op reports */
	unsigned refs, unrefs, replies;
	uint32_t xid_base;
	struct off_reply reply[OFF_MAX_CALLS];
	pthread_mutex_t lock; /* guards the rest (work threads) */
	pthread_cond_t cond;
	struct rpc_call *done[OFF_MAX_CALLS];
	unsigned ndone;
	bool gate_open;
	bool gate_out; /* the gate request is with the work pool */
	/* Pool stats the loop left before opening the gate, and whether a
	 * work thread ever saw them change. */
	struct rpc_pool *pool;
	struct rpc_pool_stats loop_stats;
	bool pool_touched;
};

/* Keeps the whole reply, its payload read from its buffer or its file
 * (as sendfile would), and gives the buffers back as conn.c does. */
static void off_send_payload(void *transport, uint8_t *buf, size_t len,
			     struct rpc_payload *payload)
{
	struct off_transport *t = transport;
	size_t head = len - RPC_REPLY_MARK_ROOM;
	size_t plen = payload ? payload->len : 0;
	size_t pad = (4 - plen % 4) % 4;
	uint32_t xid = rpc_wire_get_u32(buf + RPC_REPLY_MARK_ROOM);
	struct off_reply *r;
	uint8_t *out;

	assert_true(xid >= t->xid_base && xid < t->xid_base + OFF_MAX_CALLS);
	r = &t->reply[xid - t->xid_base];
	assert_null(r->bytes);
	out = calloc(1, head + plen + pad);
	assert_non_null(out);
	memcpy(out, buf + RPC_REPLY_MARK_ROOM, head);
	if (payload && payload->buf) {
		memcpy(out + head, payload->buf, plen);
	} else if (plen) {
		assert_int_equal(pread(payload->fd, out + head, plen,
				       (off_t)payload->off_bytes),
				 (ssize_t)plen);
	}
	r->bytes = out;
	r->len = head + plen + pad;
	t->replies++;
	rpc_buf_unref(buf);
	if (payload) {
		rpc_payload_release(payload);
	}
}

static void off_send(void *transport, uint8_t *buf, size_t len)
{
	off_send_payload(transport, buf, len, NULL);
}

static void off_close(void *transport)
{
	(void)transport;
	fail_msg("a call closed the connection");
}

static void off_ref(void *transport)
{
	((struct off_transport *)transport)->refs++;
}

static void off_unref(void *transport)
{
	((struct off_transport *)transport)->unrefs++;
}

static unsigned off_backlog(void *transport)
{
	return ((struct off_transport *)transport)->backlog;
}

/* On a work thread, right after the work: the loop is blocked waiting for
 * all of them, so its pool must look as the loop left it. */
static void off_defer_done(void *transport, struct rpc_call *call)
{
	struct off_transport *t = transport;
	struct rpc_pool_stats now;

	pthread_mutex_lock(&t->lock);
	if (call->req.xid == 0) { /* the gate: the test may reuse it now */
		t->gate_out = false;
		pthread_cond_broadcast(&t->cond);
		pthread_mutex_unlock(&t->lock);
		return;
	}
	rpc_pool_stats_get(t->pool, &now);
	if (now.allocs != t->loop_stats.allocs ||
	    now.heap_frees != t->loop_stats.heap_frees ||
	    now.kept_blocks != t->loop_stats.kept_blocks ||
	    now.outstanding != t->loop_stats.outstanding) {
		t->pool_touched = true;
	}
	assert_true(t->ndone < OFF_MAX_CALLS);
	t->done[t->ndone++] = call;
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
}

static const struct rpc_transport_ops off_tops = {
	.send = off_send,
	.send_payload = off_send_payload,
	.close = off_close,
	.ref = off_ref,
	.unref = off_unref,
	.defer_done = off_defer_done,
	.backlog = off_backlog,
};

/* The same without backlog (UDP, or a transport that cannot say). */
static const struct rpc_transport_ops off_tops_blind = {
	.send = off_send,
	.send_payload = off_send_payload,
	.close = off_close,
	.ref = off_ref,
	.unref = off_unref,
	.defer_done = off_defer_done,
};

/* ---- fixture -------------------------------------------------------- */

struct off_fixture {
	struct nfs3_pooled_fixture pf;
	struct off_transport t;
	const struct rpc_transport_ops *tops;
	struct rpc_call gate;
};

static int off_setup(void **state)
{
	struct off_fixture *of = calloc(1, sizeof(*of));

	assert_non_null(of);
	nfs3_pooled_fixture_open(&of->pf, "offload");
	of->pf.d.io_offload = RPC_IO_OFFLOAD_AUTO;
	pthread_mutex_init(&of->t.lock, NULL);
	pthread_cond_init(&of->t.cond, NULL);
	of->t.pool = of->pf.pool;
	of->t.gate_open = true;
	of->tops = &off_tops;
	*state = of;
	return 0;
}

static void off_replies_forget(struct off_transport *t)
{
	for (unsigned i = 0; i < OFF_MAX_CALLS; i++) {
		free(t->reply[i].bytes);
		t->reply[i].bytes = NULL;
		t->reply[i].len = 0;
	}
}

static int off_teardown(void **state)
{
	struct off_fixture *of = *state;

	assert_int_equal(of->t.refs, of->t.unrefs);
	nfs3_pooled_fixture_close(&of->pf);
	off_replies_forget(&of->t);
	pthread_cond_destroy(&of->t.cond);
	pthread_mutex_destroy(&of->t.lock);
	free(of);
	return 0;
}

/* ---- the gate: holds the (one) work thread until opened ------------- */

static void off_gate_work(struct request *req)
{
	struct off_transport *t = rpc_call_of(req)->transport;

	pthread_mutex_lock(&t->lock);
	while (!t->gate_open) {
		pthread_cond_wait(&t->cond, &t->lock);
	}
	pthread_mutex_unlock(&t->lock);
}

static void off_gate_close(struct off_fixture *of)
{
	pthread_mutex_lock(&of->t.lock);
	while (of->t.gate_out) {
		pthread_cond_wait(&of->t.cond, &of->t.lock);
	}
	of->t.gate_out = true;
	of->t.gate_open = false;
	pthread_mutex_unlock(&of->t.lock);
	memset(&of->gate, 0, sizeof(of->gate));
	of->gate.req.xid = 0;
	of->gate.work = off_gate_work;
	of->gate.tops = &off_tops;
	of->gate.transport = &of->t;
	rpc_work_pool_submit(of->pf.d.work_pool, &of->gate);
}

/* Notes the loop's pool as it is now, then lets the work thread go. */
static void off_gate_open(struct off_fixture *of)
{
	pthread_mutex_lock(&of->t.lock);
	rpc_pool_stats_get(of->pf.pool, &of->t.loop_stats);
	of->t.gate_open = true;
	pthread_cond_broadcast(&of->t.cond);
	pthread_mutex_unlock(&of->t.lock);
}

/* ---- calls ---------------------------------------------------------- */

typedef bool_t (*off_encode_fn)(XDR *xdrs, void *args);

/* Sends one call as a connection delivers it; returns its index. */
static unsigned off_call(struct off_fixture *of, uint32_t proc,
			 off_encode_fn encode, void *args)
{
	nfs3_pooled_fixture_send(&of->pf, proc, encode, args, of->tops, &of->t);
	return of->pf.xid - of->t.xid_base;
}

/* Waits until @n deferred requests are back, then finishes them all on
 * this thread, last first (replies may leave in any order). */
static void off_finish_deferred(struct off_fixture *of, unsigned n)
{
	struct off_transport *t = &of->t;
	unsigned got;

	pthread_mutex_lock(&t->lock);
	while (t->ndone < n) {
		pthread_cond_wait(&t->cond, &t->lock);
	}
	got = t->ndone;
	t->ndone = 0;
	pthread_mutex_unlock(&t->lock);
	assert_int_equal(got, n);
	while (got > 0) {
		rpc_call_finish(t->done[--got]);
	}
}

static void off_fill(uint8_t *p, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++) {
		p[i] = (uint8_t)(seed * 131u + i * 7u + (i >> 9));
	}
}

/* What one run of calls got back, decoded. */
struct off_result {
	nfsstat3 status;
	uint32_t count;
	bool eof;
	int committed;
	uint8_t verf[NFS3_WRITEVERFSIZE];
	uint8_t *data; /* READ: owned copy */
	uint32_t data_len;
};

struct off_run {
	struct off_result r[OFF_MAX_CALLS];
	unsigned ncalls;
	unsigned deferred; /* calls that had not replied on return */
};

static void off_decode(const struct off_reply *rep, uint32_t proc,
		       struct off_result *out)
{
	const size_t acc = RPC_REPLY_ACCEPTED_LEN;
	XDR xdrs;

	assert_non_null(rep->bytes);
	assert_true(rep->len > acc);
	assert_int_equal(rpc_wire_get_u32(rep->bytes + 20), 0); /* SUCCESS */
	xdrmem_create(&xdrs, (char *)rep->bytes + acc, (u_int)(rep->len - acc),
		      XDR_DECODE);
	if (proc == NFSPROC3_READ) {
		READ3res res;

		memset(&res, 0, sizeof(res));
		assert_true(xdr_READ3res(&xdrs, &res));
		out->status = res.status;
		if (res.status == NFS3_OK) {
			READ3resok *ok = &res.READ3res_u.resok;

			out->count = ok->count;
			out->eof = ok->eof;
			out->data_len = ok->data.data_len;
			out->data = malloc(ok->data.data_len + 1);
			assert_non_null(out->data);
			if (ok->data.data_len) {
				memcpy(out->data, ok->data.data_val,
				       ok->data.data_len);
			}
		}
		xdr_free((xdrproc_t)xdr_READ3res, (char *)&res);
	} else {
		WRITE3res res;

		memset(&res, 0, sizeof(res));
		assert_true(xdr_WRITE3res(&xdrs, &res));
		out->status = res.status;
		if (res.status == NFS3_OK) {
			out->count = res.WRITE3res_u.resok.count;
			out->committed = res.WRITE3res_u.resok.committed;
			memcpy(out->verf, res.WRITE3res_u.resok.verf,
			       sizeof(out->verf));
		}
		xdr_free((xdrproc_t)xdr_WRITE3res, (char *)&res);
	}
	xdr_destroy(&xdrs);
}

/*
 * One batch as a pipelining client sends it: OFF_NWRITES UNSTABLE 8 KiB
 * WRITEs of distinct bytes to a new file, then READs of it: every block
 * (8 KiB: copied), two 64 KiB halves (zero copy), a short one across the
 * end (64 KiB asked, 8 KiB there: copied into a work-thread buffer when
 * deferred) and one past the end.  With a gated work pool, everything
 * dispatched first, then the gate opened and the replies finished.
 */
static void off_batch(struct off_fixture *of, const char *name,
		      struct off_run *run)
{
	static uint8_t data[OFF_NWRITES][OFF_BLOCK];
	uint32_t procs[OFF_MAX_CALLS];
	bool gated = of->pf.d.work_pool != NULL;
	unsigned n = 0, before, first, deferred, replies0 = of->t.replies;
	nfs_fh3 fh;
	char fh_bytes[STORE_FH_MAX];

	fh = nfs3_fixture_mkfile(of->pf.local.fx, NFS3_FIXTURE_DS1,
				 &of->pf.root, name, "", 0, 0666);
	memcpy(fh_bytes, fh.data.data_val, fh.data.data_len);
	fh.data.data_val = fh_bytes;
	off_replies_forget(&of->t);
	of->t.xid_base = of->pf.xid + 1;
	memset(run, 0, sizeof(*run));

	for (int phase = 0; phase < 2; phase++) {
		if (gated) {
			off_gate_close(of);
		}
		before = of->t.replies;
		first = n;

		if (phase == 0) {
			for (unsigned i = 0; i < OFF_NWRITES; i++) {
				WRITE3args w = {
					.file = fh,
					.offset = (uint64_t)i * OFF_BLOCK,
					.count = OFF_BLOCK,
					.stable = UNSTABLE,
					.data = { .data_len = OFF_BLOCK,
						  .data_val = (char *)data[i] },
				};

				off_fill(data[i], OFF_BLOCK, i + 1);
				procs[n++] = NFSPROC3_WRITE;
				off_call(of, NFSPROC3_WRITE,
					 (off_encode_fn)xdr_WRITE3args, &w);
			}
		} else {
			static const struct {
				uint64_t off;
				uint32_t count;
			} reads[] = {
				{ 0, 65536 },
				{ 65536, 65536 },
				{ OFF_FILE_BYTES - OFF_BLOCK, 65536 },
				{ OFF_FILE_BYTES + OFF_BLOCK, 4096 },
			};

			for (unsigned i = 0; i < OFF_NWRITES; i++) {
				READ3args r = { .file = fh,
						.offset =
							(uint64_t)i * OFF_BLOCK,
						.count = OFF_BLOCK };

				procs[n++] = NFSPROC3_READ;
				off_call(of, NFSPROC3_READ,
					 (off_encode_fn)xdr_READ3args, &r);
			}
			for (unsigned i = 0; i < 4; i++) {
				READ3args r = { .file = fh,
						.offset = reads[i].off,
						.count = reads[i].count };

				procs[n++] = NFSPROC3_READ;
				off_call(of, NFSPROC3_READ,
					 (off_encode_fn)xdr_READ3args, &r);
			}
		}
		deferred = n - first - (of->t.replies - before);
		run->deferred += deferred;
		if (gated) {
			off_gate_open(of);
			off_finish_deferred(of, deferred);
			/* Checked first: a work thread on the pool is what
			 * the rest would fail of. */
			assert_false(of->t.pool_touched);
		}
	}
	assert_int_equal(of->t.replies - replies0, n);
	run->ncalls = n;
	for (unsigned i = 0; i < n; i++) {
		off_decode(&of->t.reply[i], procs[i], &run->r[i]);
	}

	/* The bytes are the ones written, whoever did the I/O. */
	for (unsigned i = 0; i < OFF_NWRITES; i++) {
		struct off_result *r = &run->r[OFF_NWRITES + i];

		assert_int_equal(run->r[i].status, NFS3_OK);
		assert_int_equal(run->r[i].count, OFF_BLOCK);
		assert_int_equal(run->r[i].committed, UNSTABLE);
		assert_int_equal(r->status, NFS3_OK);
		assert_int_equal(r->data_len, OFF_BLOCK);
		assert_memory_equal(r->data, data[i], OFF_BLOCK);
	}
	for (unsigned h = 0; h < 2; h++) {
		struct off_result *r = &run->r[2 * OFF_NWRITES + h];

		assert_int_equal(r->data_len, 65536);
		for (unsigned b = 0; b < 8; b++) {
			assert_memory_equal(r->data + b * OFF_BLOCK,
					    data[h * 8 + b], OFF_BLOCK);
		}
	}
	assert_int_equal(run->r[2 * OFF_NWRITES + 2].data_len, OFF_BLOCK);
	assert_true(run->r[2 * OFF_NWRITES + 2].eof);
	assert_memory_equal(run->r[2 * OFF_NWRITES + 2].data,
			    data[OFF_NWRITES - 1], OFF_BLOCK);
	assert_int_equal(run->r[2 * OFF_NWRITES + 3].data_len, 0);
	assert_true(run->r[2 * OFF_NWRITES + 3].eof);
}

static void off_run_free(struct off_run *run)
{
	for (unsigned i = 0; i < run->ncalls; i++) {
		free(run->r[i].data);
	}
}

/* Decoded results must match call by call: status, counts, eof, what was
 * committed, the verifier and the data. */
static void off_runs_assert_equal(const struct off_run *a,
				  const struct off_run *b)
{
	assert_int_equal(a->ncalls, b->ncalls);
	for (unsigned i = 0; i < a->ncalls; i++) {
		const struct off_result *x = &a->r[i], *y = &b->r[i];

		assert_int_equal(x->status, y->status);
		assert_int_equal(x->count, y->count);
		assert_int_equal(x->eof, y->eof);
		assert_int_equal(x->committed, y->committed);
		assert_memory_equal(x->verf, y->verf, sizeof(x->verf));
		assert_int_equal(x->data_len, y->data_len);
		if (x->data_len) {
			assert_memory_equal(x->data, y->data, x->data_len);
		}
	}
}

/* ---- tests ---------------------------------------------------------- */

/* Under load (16 calls of one connection in flight), READ and UNSTABLE
 * WRITE run on the work thread, give the same results and bytes as on the
 * loop, and the work never touches the loop's pool. */
static void test_offloaded_read_write_match_the_loop(void **state)
{
	struct off_fixture *of = *state;
	struct off_run on_loop, offloaded;

	/* The loop: a connection with one call at a time. */
	of->t.backlog = 1;
	off_batch(of, "on-loop.vmdk", &on_loop);
	assert_int_equal(on_loop.deferred, 0);

	/* One work thread, held by the gate while the calls come in. */
	assert_int_equal(rpc_work_pool_new(1, &of->pf.d.work_pool), 0);
	of->t.backlog = 16;
	off_batch(of, "offloaded.vmdk", &offloaded);
	assert_int_equal(offloaded.deferred, offloaded.ncalls);
	assert_false(of->t.pool_touched);

	off_runs_assert_equal(&on_loop, &offloaded);
	off_run_free(&on_loop);
	off_run_free(&offloaded);
}

/* Nothing is offloaded with the switch off, at one call in flight, or
 * when the transport cannot tell (no backlog op). */
static void test_offload_only_when_auto_and_pipelined(void **state)
{
	struct off_fixture *of = *state;
	struct off_run run;

	assert_int_equal(rpc_work_pool_new(1, &of->pf.d.work_pool), 0);

	of->pf.d.io_offload = RPC_IO_OFFLOAD_OFF;
	of->t.backlog = 16;
	off_batch(of, "off.vmdk", &run);
	assert_int_equal(run.deferred, 0);
	off_run_free(&run);

	of->pf.d.io_offload = RPC_IO_OFFLOAD_AUTO;
	of->t.backlog = RPC_IO_OFFLOAD_BACKLOG;
	off_batch(of, "depth1.vmdk", &run);
	assert_int_equal(run.deferred, 0);
	off_run_free(&run);

	of->tops = &off_tops_blind;
	of->t.backlog = 16;
	off_batch(of, "blind.vmdk", &run);
	assert_int_equal(run.deferred, 0);
	off_run_free(&run);
	assert_false(of->t.pool_touched);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_offloaded_read_write_match_the_loop, off_setup,
			off_teardown),
		cmocka_unit_test_setup_teardown(
			test_offload_only_when_auto_and_pipelined, off_setup,
			off_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
