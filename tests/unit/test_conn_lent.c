// SPDX-License-Identifier: Apache-2.0
/*
 * test_conn_lent: records dispatched from the loop's lent read buffers
 * (nfsd/net/lent.c, conn.c) over real loopback TCP.  SUM calls (their
 * data borrowed from the record, as a WRITE's) answer the hash of their
 * data, so a byte read over, dropped or moved one place off fails the
 * test.  Pipelined calls of many sizes (large ones among them, which
 * are read in place into their own buffers), a record that straddles two
 * buffers, bytes trickled a few at a time, a call in fragments between
 * others, a record of odd length (the next ones off a word boundary), a
 * SUM parked on a work thread, or off the work pool as a WRITE waits
 * for the intent log's flush, while hundreds of KiB of calls arrive
 * after it, a waiting SUM whose connection the server closes, a
 * retransmission of a waiting SUM (dropped by the duplicate request
 * cache, then replayed from it), and more parked calls than the loop
 * has buffers (the rest read the old way, copied) are all answered
 * right; at rest the connection holds no buffer, and every reference a
 * call took on one is given back.
 */
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "nfsd/net/net_int.h"
#include "nfsd/rpc/drc.h"
#include "nfsd/rpc/pool.h"
#include "nfsd/rpc/record.h"
#include "tests/lib/conn_fixture.h"
#include "tests/lib/log_capture.h"

#define TEST_OUT_LIMIT (256 * 1024)
#define TEST_CALL_MAX (CONN_FIXTURE_CALL_LEN + 8 + 256 * 1024)

static int setup(void **state)
{
	return conn_fixture_setup(state, TEST_OUT_LIMIT, 0, false, 0);
}

static int setup_drc(void **state)
{
	return conn_fixture_setup_drc(state);
}

/* Fills @p with @len bytes that differ per @seed. */
static void pattern(uint8_t *p, size_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (uint8_t)(x >> 16);
	}
}

/* A stream of @n SUM calls, xids @base.., of the lengths @lens (data
 * from pattern(xid)), answered as @how says; *sums gets each call's expected
 * answer.  Returns the stream (owned) and its length in *len. */
static uint8_t *sum_stream(uint32_t base, const uint32_t *lens, unsigned n,
			   uint32_t how, uint32_t *sums, size_t *len)
{
	size_t cap = 0, pos = 0;
	uint8_t *wire, *data = malloc(TEST_CALL_MAX);

	assert_non_null(data);
	for (unsigned i = 0; i < n; i++) {
		cap += CONN_FIXTURE_CALL_LEN + 12 + lens[i];
	}
	wire = malloc(cap);
	assert_non_null(wire);
	for (unsigned i = 0; i < n; i++) {
		pattern(data, lens[i], base + i);
		sums[i] = conn_fixture_sum(data, lens[i]);
		pos += conn_fixture_sum_build(wire + pos, base + i, how, data,
					      lens[i]);
	}
	free(data);
	*len = pos;
	return wire;
}

/* Reads @n replies (any order) of xids @base.. and checks each answer. */
static void read_sums(int fd, uint32_t base, const uint32_t *sums, unsigned n)
{
	bool *seen = calloc(n, sizeof(*seen));

	assert_non_null(seen);
	for (unsigned i = 0; i < n; i++) {
		uint32_t xid = 0, v = conn_fixture_read_echo(fd, &xid);

		assert_true(xid >= base && xid < base + n);
		assert_false(seen[xid - base]);
		seen[xid - base] = true;
		assert_int_equal(v, sums[xid - base]);
	}
	free(seen);
}

static uint64_t lent_records(struct conn_fixture *s)
{
	return __atomic_load_n(&s->net.workers[0].lent_records,
			       __ATOMIC_RELAXED);
}

/* Sends @n SUM calls of @lens in one write (or in chunks of @chunk
 * bytes, 0: one write) and checks every answer. */
static void sums_roundtrip(struct conn_fixture *s, int fd, uint32_t base,
			   const uint32_t *lens, unsigned n, size_t chunk)
{
	uint32_t *sums = calloc(n, sizeof(*sums));
	size_t len;
	uint8_t *wire;

	assert_non_null(sums);
	wire = sum_stream(base, lens, n, CONN_FIXTURE_SUM_INLINE, sums, &len);
	if (!chunk) {
		conn_fixture_write_all(fd, wire, len);
	}
	for (size_t off = 0; chunk && off < len; off += chunk) {
		conn_fixture_write_all(fd, wire + off,
				       len - off < chunk ? len - off : chunk);
	}
	read_sums(fd, base, sums, n);
	(void)s;
	free(wire);
	free(sums);
}

static void test_lent_pipelined_calls_of_many_sizes(void **state)
{
	struct conn_fixture *s = *state;
	enum { N = 300 };
	uint32_t lens[N];
	int fd = conn_fixture_connect(s, 0);

	/* 0 .. ~9 KiB, odd lengths too (their XDR padding), and a 40 KB one
	 * now and then (read in place into its own buffer): ~1.7 MiB, so
	 * records straddle buffer ends many times. */
	for (unsigned i = 0; i < N; i++) {
		lens[i] = i % 37 == 5 ? 40000 + i : (i * 7919u) % 9300u;
	}
	sums_roundtrip(s, fd, 1000, lens, N, 0);
	assert_true(lent_records(s) > 0);
	close(fd);
}

static void test_lent_record_straddling_two_buffers(void **state)
{
	struct conn_fixture *s = *state;
	/* Lent-sized (under NET_DIRECT_MIN): eight fit in the first
	 * buffer, the ninth crosses its end and moves to the next. */
	const uint32_t lens[] = { 30000, 30000, 30000, 30000, 30000, 30000,
				  30000, 30000, 30000, 30000, 30000, 7 };
	int fd = conn_fixture_connect(s, 0);

	sums_roundtrip(s, fd, 2000, lens, 12, 0);
	assert_true(lent_records(s) > 0);
	close(fd);
}

static void test_lent_trickled_bytes(void **state)
{
	struct conn_fixture *s = *state;
	enum { N = 20 };
	uint32_t lens[N];
	int fd = conn_fixture_connect(s, 0);

	for (unsigned i = 0; i < N; i++) {
		lens[i] = 3 + i * 151;
	}
	sums_roundtrip(s, fd, 3000, lens, N, 7);
	sums_roundtrip(s, fd, 3100, lens, 3, 1);
	close(fd);
}

/* A SUM call of @len bytes in three fragments, to @wire; its length. */
static size_t sum_in_fragments(uint8_t *wire, uint32_t xid, uint32_t len,
			       uint32_t *sum)
{
	uint8_t *one = malloc(TEST_CALL_MAX), *data = malloc(len + 1);
	size_t n, body, a, b;

	assert_non_null(one);
	assert_non_null(data);
	pattern(data, len, xid);
	*sum = conn_fixture_sum(data, len);
	n = conn_fixture_sum_build(one, xid, CONN_FIXTURE_SUM_INLINE, data,
				   len);
	body = n - 4;
	a = body / 3;
	b = body / 3;
	wire[0] = (uint8_t)(a >> 24);
	wire[1] = (uint8_t)(a >> 16);
	wire[2] = (uint8_t)(a >> 8);
	wire[3] = (uint8_t)a;
	memcpy(wire + 4, one + 4, a);
	wire[4 + a] = (uint8_t)(b >> 24);
	wire[5 + a] = (uint8_t)(b >> 16);
	wire[6 + a] = (uint8_t)(b >> 8);
	wire[7 + a] = (uint8_t)b;
	memcpy(wire + 8 + a, one + 4 + a, b);
	rpc_record_mark_encode(wire + 8 + a + b, (uint32_t)(body - a - b));
	memcpy(wire + 12 + a + b, one + 4 + a + b, body - a - b);
	free(one);
	free(data);
	return body + 12;
}

static void test_lent_call_in_fragments_between_others(void **state)
{
	struct conn_fixture *s = *state;
	const uint32_t lens[] = { 5000, 6000 };
	uint32_t sums[5];
	uint8_t *wire = malloc(4 * TEST_CALL_MAX);
	size_t pos = 0, len;
	uint8_t *part;
	int fd = conn_fixture_connect(s, 0);

	assert_non_null(wire);
	part = sum_stream(4000, lens, 2, CONN_FIXTURE_SUM_INLINE, sums, &len);
	memcpy(wire, part, len);
	pos = len;
	free(part);
	pos += sum_in_fragments(wire + pos, 4002, 9000, &sums[2]);
	part = sum_stream(4003, lens, 2, CONN_FIXTURE_SUM_INLINE, sums + 3,
			  &len);
	memcpy(wire + pos, part, len);
	pos += len;
	free(part);
	conn_fixture_write_all(fd, wire, pos);
	read_sums(fd, 4000, sums, 5);
	free(wire);
	close(fd);
}

static void test_lent_record_of_odd_length(void **state)
{
	struct conn_fixture *s = *state;
	const uint32_t lens[] = { 4000, 12, 4001 };
	uint32_t sums[4];
	uint8_t *wire = malloc(4 * TEST_CALL_MAX), *part;
	size_t len, first;
	int fd = conn_fixture_connect(s, 0);

	assert_non_null(wire);
	part = sum_stream(5000, lens, 1, CONN_FIXTURE_SUM_INLINE, sums, &first);
	/* One byte past its padding: the record is 4n + 1 bytes long, and
	 * every record after it starts off a word boundary. */
	memcpy(wire, part, first);
	wire[first] = 0xee;
	rpc_record_mark_encode(wire, (uint32_t)(first + 1 - 4));
	free(part);
	part = sum_stream(5001, lens, 3, CONN_FIXTURE_SUM_INLINE, sums + 1,
			  &len);
	memcpy(wire + first + 1, part, len);
	free(part);
	conn_fixture_write_all(fd, wire, first + 1 + len);
	read_sums(fd, 5000, sums, 4);
	free(wire);
	close(fd);
}

/* ~800 KiB of SUMs (xids @base..) on @fd, answered, while a call waits:
 * every buffer of the loop is read into, none over the waiting call's
 * bytes. */
static void sums_while_one_waits(struct conn_fixture *s, int fd, uint32_t base)
{
	enum { N = 100 };
	uint32_t lens[N], sums[N];
	uint8_t *wire;
	size_t len;

	for (unsigned i = 0; i < N; i++) {
		lens[i] = 8192;
	}
	wire = sum_stream(base, lens, N, CONN_FIXTURE_SUM_INLINE, sums, &len);
	conn_fixture_write_all(fd, wire, len);
	free(wire);
	read_sums(fd, base, sums, N);
	(void)s;
}

/* Waits until no lent buffer of the loop is read into or held by a
 * call: every reference a call took was given back. */
static void wait_no_buffer_held(struct conn_fixture *s)
{
	const struct worker *w = &s->net.workers[0];

	/* The reply leaves before the call's memory goes: poll. */
	for (int i = 0;; i++) {
		bool busy = false;

		for (unsigned b = 0; b < NET_LENT_COUNT; b++) {
			busy |= w->lent[b].buf &&
				(w->lent[b].reading ||
				 rpc_buf_shared(w->lent[b].buf));
		}
		if (!busy) {
			break;
		}
		assert_true(i < CONN_FIXTURE_IO_TIMEOUT_S * 100);
		poll(NULL, 0, 10);
	}
}

/* A SUM that waits (@how) keeps its bytes while 800 KiB arrive after
 * it on the same connection. */
static void parked_call_keeps_its_bytes(struct conn_fixture *s, uint32_t how)
{
	const uint32_t big[] = { 8192 };
	uint32_t parked_sum;
	uint8_t *wire;
	size_t len;
	uint32_t xid = 0;
	int fd = conn_fixture_connect(s, 0);

	conn_fixture_gate(s, true);
	wire = sum_stream(6000, big, 1, how, &parked_sum, &len);
	conn_fixture_write_all(fd, wire, len);
	free(wire);
	conn_fixture_gate_wait(s, 1);
	sums_while_one_waits(s, fd, 6001);
	conn_fixture_gate(s, false);
	assert_int_equal(conn_fixture_read_echo(fd, &xid), parked_sum);
	assert_int_equal(xid, 6000);
	close(fd);
	wait_no_buffer_held(s);
}

static void test_lent_parked_call_keeps_its_bytes(void **state)
{
	parked_call_keeps_its_bytes(*state, CONN_FIXTURE_SUM_DEFER);
}

/* As a WRITE parked on the intent log (request_park()), handed back to
 * its loop from the log's flush thread. */
static void test_lent_call_parked_off_the_pool_keeps_its_bytes(void **state)
{
	parked_call_keeps_its_bytes(*state, CONN_FIXTURE_SUM_PARK);
}

/*
 * The server closes a connection (a record that is no RPC message, in
 * the same lent buffer) while a call of it waits: the call still hashes
 * its own bytes after another connection has read ~800 KiB through
 * every buffer of the loop, and its reference goes back though its
 * reply cannot go.
 */
static void test_lent_conn_closed_under_a_waiting_call(void **state)
{
	struct conn_fixture *s = *state;
	const uint32_t big[] = { 8192 };
	static const uint8_t not_a_call[] = { 0x80, 0, 0, 4, 0, 0, 0x23, 0x28 };
	uint32_t parked_sum;
	uint8_t *wire, *both;
	size_t len;
	int fd = conn_fixture_connect(s, 0), fd2;

	conn_fixture_gate(s, true);
	wire = sum_stream(6500, big, 1, CONN_FIXTURE_SUM_DEFER, &parked_sum,
			  &len);
	both = malloc(len + sizeof(not_a_call));
	assert_non_null(both);
	memcpy(both, wire, len);
	memcpy(both + len, not_a_call, sizeof(not_a_call));
	conn_fixture_write_all(fd, both, len + sizeof(not_a_call));
	free(both);
	free(wire);
	conn_fixture_gate_wait(s, 1);
	/* Closed by the server: EOF, no reply. */
	assert_false(conn_fixture_read_all(fd, (uint8_t[4]){ 0 }, 4));
	close(fd);
	assert_true(log_capture_contains("is not an RPC call; closing"));
	fd2 = conn_fixture_connect(s, 0);
	sums_while_one_waits(s, fd2, 6501);
	conn_fixture_gate(s, false);
	assert_int_equal(conn_fixture_sums_wait(s, 1), parked_sum);
	close(fd2);
	wait_no_buffer_held(s);
}

/*
 * With a duplicate request cache: a retransmission of a call that still
 * waits is dropped (it takes no reference on the buffer its copy lies
 * in), the original answers from its own bytes after 800 KiB more, and a
 * retransmission after that is answered from the cache.
 */
static void test_lent_retransmission_of_a_waiting_call(void **state)
{
	struct conn_fixture *s = *state;
	const uint32_t big[] = { 8192 };
	struct drc_stats st;
	uint32_t parked_sum, xid = 0;
	uint8_t *wire;
	size_t len;
	int fd = conn_fixture_connect(s, 0);

	conn_fixture_gate(s, true);
	wire = sum_stream(6600, big, 1, CONN_FIXTURE_SUM_DEFER, &parked_sum,
			  &len);
	conn_fixture_write_all(fd, wire, len);
	conn_fixture_gate_wait(s, 1);
	conn_fixture_write_all(fd, wire, len);
	/* read_sums fails on any reply of xid 6600 among these. */
	sums_while_one_waits(s, fd, 6601);
	drc_stats_get(s->drc, &st);
	assert_int_equal(st.in_progress, 1);
	conn_fixture_gate(s, false);
	assert_int_equal(conn_fixture_read_echo(fd, &xid), parked_sum);
	assert_int_equal(xid, 6600);
	conn_fixture_write_all(fd, wire, len);
	assert_int_equal(conn_fixture_read_echo(fd, &xid), parked_sum);
	assert_int_equal(xid, 6600);
	drc_stats_get(s->drc, &st);
	assert_int_equal(st.hits, 1);
	assert_int_equal(conn_fixture_sums_wait(s, 1), parked_sum);
	free(wire);
	close(fd);
	wait_no_buffer_held(s);
}

static void test_lent_buffers_all_held_falls_back(void **state)
{
	struct conn_fixture *s = *state;
	/* Records just under NET_DIRECT_MIN (larger ones are read in place
	 * into their own buffers): eight to a lent buffer, whose rest is
	 * then less than NET_LENT_MIN_ROOM; all parked, they hold every
	 * buffer, and the calls after them are read the old way. */
	enum { N = NET_LENT_COUNT * 8 + 6 };
	uint32_t lens[N], sums[N];
	uint64_t misses;
	uint8_t *wire;
	size_t len;
	int fd = conn_fixture_connect(s, 0);

	for (unsigned i = 0; i < N; i++) {
		lens[i] = 30000;
	}
	conn_fixture_gate(s, true);
	wire = sum_stream(7000, lens, N, CONN_FIXTURE_SUM_DEFER, sums, &len);
	conn_fixture_write_all(fd, wire, len);
	free(wire);
	for (int i = 0;; i++) {
		misses = __atomic_load_n(&s->net.workers[0].lent_misses,
					 __ATOMIC_RELAXED);
		if (misses > 0) {
			break;
		}
		assert_true(i < CONN_FIXTURE_IO_TIMEOUT_S * 100);
		poll(NULL, 0, 10);
	}
	conn_fixture_gate(s, false);
	read_sums(fd, 7000, sums, N);
	close(fd);
}

static void test_lent_conn_at_rest_holds_no_buffer(void **state)
{
	struct conn_fixture *s = *state;
	const uint32_t lens[] = { 30000, 5, 70000 };
	const struct worker *w = &s->net.workers[0];
	int fd = conn_fixture_connect(s, 0);

	sums_roundtrip(s, fd, 8000, lens, 3, 0);
	wait_no_buffer_held(s);
	assert_non_null(w->conns);
	assert_null(w->conns->lent);
	close(fd);
}

#define T(name)                                                                \
	cmocka_unit_test_setup_teardown(name, setup, conn_fixture_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_lent_pipelined_calls_of_many_sizes),
		T(test_lent_record_straddling_two_buffers),
		T(test_lent_trickled_bytes),
		T(test_lent_call_in_fragments_between_others),
		T(test_lent_record_of_odd_length),
		T(test_lent_parked_call_keeps_its_bytes),
		T(test_lent_call_parked_off_the_pool_keeps_its_bytes),
		T(test_lent_conn_closed_under_a_waiting_call),
		cmocka_unit_test_setup_teardown(
			test_lent_retransmission_of_a_waiting_call, setup_drc,
			conn_fixture_teardown),
		T(test_lent_buffers_all_held_falls_back),
		T(test_lent_conn_at_rest_holds_no_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
