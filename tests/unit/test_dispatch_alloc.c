// SPDX-License-Identifier: Apache-2.0
/*
 * test_dispatch_alloc: the hot path allocates nothing.  Calls of
 * NULL, GETATTR, ACCESS, LOOKUP, READ, WRITE (UNSTABLE and FILE_SYNC) and
 * COMMIT go as a connection sends them: bytes with a record mark fed to
 * rpc/record.c, the record to rpc_dispatch_pooled() with the NFSv3 program
 * over the real local store (a mkdtemp() directory) and a duplicate
 * request cache, and every reply handed back to the pool as conn.c does
 * once written.  After a warm-up, N more calls of each must not reach
 * malloc at all: counted process-wide with the sanitizer's allocation
 * hooks in ASan builds, and by replacing malloc (over glibc's __libc_*)
 * in the others.  Deferred work (FILE_SYNC, COMMIT) runs on a real work
 * pool and comes back through defer_done to the "loop" (this thread),
 * which finishes it: its memory returns to the loop's pool.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nfsd/nfs3/nfs3_int.h"
#include "nfsd/rpc/msg.h"
#include "nfsd/rpc/pool.h"
#include "nfsd/rpc/work.h"
#include "tests/lib/nfs3_fixture.h"
#include "tests/lib/nfs3_pooled_fixture.h"
#include "tests/lib/rpc_wire.h"

#define ALLOC_WARMUP_CALLS 200
#define ALLOC_COUNTED_CALLS 1000
#define ALLOC_DATA_BYTES 8192

/* ---- counting allocations ------------------------------------------- */

static atomic_bool alloc_counting;
static atomic_ulong alloc_count;

static void alloc_note(void)
{
	if (atomic_load_explicit(&alloc_counting, memory_order_relaxed)) {
		atomic_fetch_add_explicit(&alloc_count, 1,
					  memory_order_relaxed);
	}
}

#if defined(__SANITIZE_ADDRESS__)
/* compiler-rt's sanitizer/allocator_interface.h, which GCC 12 does not
 * ship: called on every malloc/calloc/realloc/free of the process. */
int __sanitizer_install_malloc_and_free_hooks(
	void (*malloc_hook)(const volatile void *, size_t),
	void (*free_hook)(const volatile void *));

static void alloc_malloc_hook(const volatile void *p, size_t size)
{
	(void)p;
	(void)size;
	alloc_note();
}

static void alloc_free_hook(const volatile void *p)
{
	(void)p;
}

static void alloc_hooks_install(void)
{
	assert_int_not_equal(__sanitizer_install_malloc_and_free_hooks(
				     alloc_malloc_hook, alloc_free_hook),
			     0);
}
#else
/* Without ASan: this binary's malloc replaces glibc's for every library
 * (glibc documents replacing malloc, free, calloc and realloc), counting
 * and handing over to glibc's own. */
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);
void __libc_free(void *p);

void *malloc(size_t size)
{
	alloc_note();
	return __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
	alloc_note();
	return __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
	alloc_note();
	return __libc_realloc(p, size);
}

void free(void *p)
{
	__libc_free(p);
}

static void alloc_hooks_install(void)
{
}
#endif

static void alloc_count_start(void)
{
	atomic_store(&alloc_count, 0);
	atomic_store(&alloc_counting, true);
}

static unsigned long alloc_count_stop(void)
{
	atomic_store(&alloc_counting, false);
	return atomic_load(&alloc_count);
}

/* ---- a transport that behaves like conn.c --------------------------- */

struct alloc_transport {
	unsigned replies, refs, unrefs;
	uint32_t last_xid;
	uint32_t last_status; /* the nfsstat3 word of the last reply */
	uint8_t last_payload[16]; /* its first payload bytes (READ data) */
	pthread_mutex_t lock; /* guards done (work threads) */
	pthread_cond_t cond;
	struct rpc_call *done;
};

/* Checks the accepted header, notes the status, and gives the buffers
 * back as conn.c does after writev. */
static void alloc_send_payload(void *transport, uint8_t *buf, size_t len,
			       struct rpc_payload *payload)
{
	struct alloc_transport *t = transport;
	const uint8_t *p = buf + RPC_REPLY_MARK_ROOM;

	assert_true(len >= RPC_REPLY_MARK_ROOM + RPC_REPLY_ACCEPTED_LEN);
	t->last_xid = rpc_wire_get_u32(p);
	assert_int_equal(rpc_wire_get_u32(p + 4), 1); /* REPLY */
	assert_int_equal(rpc_wire_get_u32(p + 8), 0); /* MSG_ACCEPTED */
	assert_int_equal(rpc_wire_get_u32(p + 20), 0); /* SUCCESS */
	t->last_status = len > RPC_REPLY_MARK_ROOM + RPC_REPLY_ACCEPTED_LEN
				 ? rpc_wire_get_u32(p + RPC_REPLY_ACCEPTED_LEN)
				 : 0;
	if (payload && payload->buf) {
		memcpy(t->last_payload, payload->buf,
		       payload->len < sizeof(t->last_payload)
			       ? payload->len
			       : sizeof(t->last_payload));
	}
	t->replies++;
	rpc_buf_unref(buf);
	if (payload) {
		rpc_payload_release(payload);
	}
}

static void alloc_send(void *transport, uint8_t *buf, size_t len)
{
	alloc_send_payload(transport, buf, len, NULL);
}

static void alloc_close(void *transport)
{
	(void)transport;
	fail_msg("a call closed the connection");
}

static void alloc_ref(void *transport)
{
	((struct alloc_transport *)transport)->refs++;
}

static void alloc_unref(void *transport)
{
	((struct alloc_transport *)transport)->unrefs++;
}

/* On a work thread: hands the request to the "loop" (the test thread). */
static void alloc_defer_done(void *transport, struct rpc_call *call)
{
	struct alloc_transport *t = transport;

	pthread_mutex_lock(&t->lock);
	assert_null(t->done);
	t->done = call;
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
}

static const struct rpc_transport_ops alloc_tops = {
	.send = alloc_send,
	.send_payload = alloc_send_payload,
	.close = alloc_close,
	.ref = alloc_ref,
	.unref = alloc_unref,
	.defer_done = alloc_defer_done,
};

/* ---- fixture -------------------------------------------------------- */

struct alloc_fixture {
	struct nfs3_pooled_fixture pf;
	struct alloc_transport t;
	nfs_fh3 file;
	char file_fh[STORE_FH_MAX];
	uint8_t data[ALLOC_DATA_BYTES];
};

static int alloc_setup(void **state)
{
	struct alloc_fixture *af = calloc(1, sizeof(*af));

	assert_non_null(af);
	nfs3_pooled_fixture_open(&af->pf, "alloc");
	af->file = nfs3_fixture_mkfile(af->pf.local.fx, NFS3_FIXTURE_DS1,
				       &af->pf.root, "disk-flat.vmdk", "x", 1,
				       0666);
	memcpy(af->file_fh, af->file.data.data_val, af->file.data.data_len);
	af->file.data.data_val = af->file_fh;
	memset(af->data, 0xa5, sizeof(af->data));
	pthread_mutex_init(&af->t.lock, NULL);
	pthread_cond_init(&af->t.cond, NULL);
	af->pf.xid = 0x1000;
	alloc_hooks_install();
	*state = af;
	return 0;
}

static int alloc_teardown(void **state)
{
	struct alloc_fixture *af = *state;

	assert_int_equal(af->t.refs, af->t.unrefs);
	nfs3_pooled_fixture_close(&af->pf);
	pthread_cond_destroy(&af->t.cond);
	pthread_mutex_destroy(&af->t.lock);
	free(af);
	return 0;
}

/* ---- calls ---------------------------------------------------------- */

typedef bool_t (*alloc_encode_fn)(XDR *xdrs, void *args);

/* Waits for the deferred request, if any, and finishes it on this thread,
 * as the loop does when its ev_async fires. */
static void alloc_finish_deferred(struct alloc_fixture *af, unsigned before)
{
	struct rpc_call *call;

	if (af->t.replies != before || !af->pf.d.work_pool) {
		return;
	}
	pthread_mutex_lock(&af->t.lock);
	while (!af->t.done) {
		pthread_cond_wait(&af->t.cond, &af->t.lock);
	}
	call = af->t.done;
	af->t.done = NULL;
	pthread_mutex_unlock(&af->t.lock);
	rpc_call_finish(call);
}

/*
 * Sends one call of @proc with @args encoded by @encode (NULL: none) the
 * way a connection delivers it, and asserts one reply with status
 * NFS3_OK.
 */
static void alloc_call(struct alloc_fixture *af, uint32_t proc,
		       alloc_encode_fn encode, void *args)
{
	unsigned before = af->t.replies;

	nfs3_pooled_fixture_send(&af->pf, proc, encode, args, &alloc_tops,
				 &af->t);
	alloc_finish_deferred(af, before);
	assert_int_equal(af->t.replies, before + 1);
	assert_int_equal(af->t.last_xid, af->pf.xid);
	if (proc != NFSPROC3_NULL) {
		assert_int_equal(af->t.last_status, NFS3_OK);
	}
}

/* One round: every common procedure once; WRITE as @stable. */
static void alloc_round(struct alloc_fixture *af, stable_how stable)
{
	GETATTR3args getattr = { .object = af->file };
	ACCESS3args access = { .object = af->file, .access = ACCESS3_READ };
	LOOKUP3args lookup = { .what = { .dir = af->pf.root,
					 .name = (char *)"disk-flat.vmdk" } };
	READ3args read = { .file = af->file, .offset = 0, .count = 4096 };
	WRITE3args write = {
		.file = af->file,
		.offset = 8192,
		.count = ALLOC_DATA_BYTES,
		.stable = stable,
		.data = { .data_len = ALLOC_DATA_BYTES,
			  .data_val = (char *)af->data },
	};
	COMMIT3args commit = { .file = af->file };

	alloc_call(af, NFSPROC3_NULL, NULL, NULL);
	alloc_call(af, NFSPROC3_GETATTR, (alloc_encode_fn)xdr_GETATTR3args,
		   &getattr);
	alloc_call(af, NFSPROC3_ACCESS, (alloc_encode_fn)xdr_ACCESS3args,
		   &access);
	alloc_call(af, NFSPROC3_LOOKUP, (alloc_encode_fn)xdr_LOOKUP3args,
		   &lookup);
	alloc_call(af, NFSPROC3_READ, (alloc_encode_fn)xdr_READ3args, &read);
	alloc_call(af, NFSPROC3_WRITE, (alloc_encode_fn)xdr_WRITE3args, &write);
	alloc_call(af, NFSPROC3_COMMIT, (alloc_encode_fn)xdr_COMMIT3args,
		   &commit);
}

/* Warms up, then asserts that ALLOC_COUNTED_CALLS rounds allocate
 * nothing and leave the pool as they found it. */
static void
alloc_assert_steady_state_allocates_nothing(struct alloc_fixture *af,
					    stable_how stable)
{
	struct rpc_pool_stats before, after;
	unsigned long n;

	for (int i = 0; i < ALLOC_WARMUP_CALLS; i++) {
		alloc_round(af, stable);
	}
	rpc_pool_stats_get(af->pf.pool, &before);
	alloc_count_start();
	for (int i = 0; i < ALLOC_COUNTED_CALLS; i++) {
		alloc_round(af, stable);
	}
	n = alloc_count_stop();
	rpc_pool_stats_get(af->pf.pool, &after);
	assert_int_equal(n, 0);
	assert_int_equal(after.heap_allocs, before.heap_allocs);
	assert_int_equal(after.outstanding, before.outstanding);
	/* Every call took at least its request and its reply. */
	assert_true(after.allocs - before.allocs >=
		    2 * 7 * ALLOC_COUNTED_CALLS);
}

static void test_common_calls_allocate_nothing_after_warmup(void **state)
{
	struct alloc_fixture *af = *state;

	alloc_assert_steady_state_allocates_nothing(af, UNSTABLE);
}

/* FILE_SYNC WRITE and COMMIT go to a work thread and come back through
 * defer_done: their memory still returns to the loop's pool. */
static void test_deferred_calls_allocate_nothing_after_warmup(void **state)
{
	struct alloc_fixture *af = *state;

	assert_int_equal(rpc_work_pool_new(2, &af->pf.d.work_pool), 0);
	alloc_assert_steady_state_allocates_nothing(af, FILE_SYNC);
}

/*
 * A transport whose records are not rpc_bufs (UDP, rpc_dispatch_record):
 * a deferred WRITE keeps a copy of its record, so the caller may reuse
 * its buffer at once.
 */
static void test_write_from_a_plain_buffer_keeps_a_copy(void **state)
{
	struct alloc_fixture *af = *state;
	WRITE3args write = {
		.file = af->file,
		.offset = 0,
		.count = 16,
		.stable = FILE_SYNC,
		.data = { .data_len = 16,
			  .data_val = (char *)"0123456789abcdef" },
	};
	READ3args read = { .file = af->file, .offset = 0, .count = 16 };
	unsigned before;
	struct rpc_wire w;
	size_t len;
	XDR xdrs;

	assert_int_equal(rpc_work_pool_new(1, &af->pf.d.work_pool), 0);
	rpc_wire_call(&w, ++af->pf.xid, 2, NFS3_SERVICE_PROG, NFS3_SERVICE_VERS,
		      NFSPROC3_WRITE, 0);
	memcpy(af->pf.msg, w.buf, w.len);
	xdrmem_create(&xdrs, (char *)af->pf.msg + w.len,
		      (u_int)(sizeof(af->pf.msg) - w.len), XDR_ENCODE);
	assert_true(xdr_WRITE3args(&xdrs, &write));
	len = w.len + xdr_getpos(&xdrs);
	xdr_destroy(&xdrs);
	before = af->t.replies;
	rpc_dispatch_record(&af->pf.d, af->pf.msg, len, &alloc_tops, &af->t,
			    (const struct sockaddr *)&af->pf.peer,
			    sizeof(af->pf.peer));
	/* The caller's buffer is its own again: the data must not change. */
	memset(af->pf.msg, 'X', len);
	alloc_finish_deferred(af, before);
	assert_int_equal(af->t.last_status, NFS3_OK);
	alloc_call(af, NFSPROC3_READ, (alloc_encode_fn)xdr_READ3args, &read);
	assert_memory_equal(af->t.last_payload, "0123456789abcdef", 16);
}

/* The counter itself works: a malloc in the window is seen. */
static void test_alloc_counter_sees_a_malloc(void **state)
{
	void *volatile p;

	(void)state;
	alloc_hooks_install();
	alloc_count_start();
	p = malloc(100);
	assert_true(alloc_count_stop() >= 1);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alloc_counter_sees_a_malloc),
		cmocka_unit_test_setup_teardown(
			test_common_calls_allocate_nothing_after_warmup,
			alloc_setup, alloc_teardown),
		cmocka_unit_test_setup_teardown(
			test_deferred_calls_allocate_nothing_after_warmup,
			alloc_setup, alloc_teardown),
		cmocka_unit_test_setup_teardown(
			test_write_from_a_plain_buffer_keeps_a_copy,
			alloc_setup, alloc_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
