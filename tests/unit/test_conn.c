// SPDX-License-Identifier: Apache-2.0
/*
 * test_conn: nfsd/net over real loopback TCP.  A server (net_start with one
 * worker, the main loop on its own thread, stopped through an ev_async)
 * serves a tiny test program on 127.0.0.1, port 0; the test is the client.
 * A call split across many writes is answered; 100 pipelined calls get 100
 * replies, and so do calls whose work is deferred to the work pool, and a
 * UDP datagram (answered inline on the main loop); a 2 GiB record mark
 * closes only its own connection; a client that never reads cannot make
 * the server queue more than one reply past its output limit.  ECHO and
 * DEFER are charged to datastore "ds-test" (their argument is the bytes)
 * and admitted by a real traffic model (net/call_queue.c): unlimited, they run
 * at once; throttled, they wait in their flow's queue and come out in
 * order; a connection closed with calls waiting gives them all back.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <ev.h>

#include "nfsd/net/net.h"
#include "nfsd/net/net_int.h"
#include "nfsd/rpc/msg.h"
#include "nfsd/rpc/record.h"
#include "nfsd/rpc/work.h"
#include "nfsd/traffic/traffic.h"
#include "tests/lib/conn_fixture.h"
#include "tests/lib/log_capture.h"
#include "tests/lib/rpc_test_prog.h"
#include "tests/lib/rpc_wire.h"

#define TEST_OUT_LIMIT (32 * 1024)
#define TEST_FILL_BYTES 4096
#define TEST_CALL_LEN CONN_FIXTURE_CALL_LEN
#define TEST_IO_TIMEOUT_S CONN_FIXTURE_IO_TIMEOUT_S
#define TEST_VOLUME RPC_TEST_VOLUME
#define TEST_MIB (1024 * 1024)

/* ---- the server ------------------------------------------------------ */

static int setup(void **state)
{
	return conn_fixture_setup(state, TEST_OUT_LIMIT, 0, true,
				  TEST_FILL_BYTES);
}

/* ---- tests ----------------------------------------------------------- */

static void test_conn_call_split_across_writes_is_answered(void **state)
{
	struct conn_fixture *s = *state;
	uint8_t call[TEST_CALL_LEN];
	size_t len = conn_fixture_call_build(call, 0x51, CONN_FIXTURE_ECHO,
					     0xc0ffee);
	int fd = conn_fixture_connect(s, 0);
	uint32_t xid = 0;

	for (size_t i = 0; i < len; i++) {
		conn_fixture_write_all(fd, call + i, 1);
	}
	assert_int_equal(conn_fixture_read_echo(fd, &xid), 0xc0ffee);
	assert_int_equal(xid, 0x51);
	close(fd);
}

static void test_conn_call_in_two_fragments_is_answered(void **state)
{
	struct conn_fixture *s = *state;
	uint8_t call[TEST_CALL_LEN], wire[TEST_CALL_LEN + 4];
	size_t len = conn_fixture_call_build(call, 0x52, CONN_FIXTURE_ECHO, 77);
	int fd = conn_fixture_connect(s, 0);
	uint32_t xid = 0;

	/* 10 body bytes in a first fragment, the rest in the last. */
	wire[0] = 0;
	wire[1] = 0;
	wire[2] = 0;
	wire[3] = 10;
	memcpy(wire + 4, call + 4, 10);
	rpc_record_mark_encode(wire + 14, (uint32_t)(len - 4 - 10));
	memcpy(wire + 18, call + 14, len - 14);
	conn_fixture_write_all(fd, wire, len + 4);
	assert_int_equal(conn_fixture_read_echo(fd, &xid), 77);
	assert_int_equal(xid, 0x52);
	close(fd);
}

static void test_conn_100_pipelined_calls_get_100_replies(void **state)
{
	struct conn_fixture *s = *state;
	enum { N = 100 };
	uint8_t wire[N * TEST_CALL_LEN];
	bool seen[N] = { false };
	size_t pos = 0;
	int fd = conn_fixture_connect(s, 0);

	for (uint32_t i = 0; i < N; i++) {
		pos += conn_fixture_call_build(wire + pos, 1000 + i,
					       CONN_FIXTURE_ECHO, i * 7);
	}
	conn_fixture_write_all(fd, wire, pos);
	for (int i = 0; i < N; i++) {
		uint32_t xid = 0, v = conn_fixture_read_echo(fd, &xid);

		assert_true(xid >= 1000 && xid < 1000 + N);
		assert_false(seen[xid - 1000]);
		seen[xid - 1000] = true;
		assert_int_equal(v, (xid - 1000) * 7);
	}
	close(fd);
}

static void test_conn_deferred_calls_are_answered(void **state)
{
	struct conn_fixture *s = *state;
	enum { N = 50 };
	uint8_t wire[N * TEST_CALL_LEN];
	bool seen[N] = { false };
	size_t pos = 0;
	int fd = conn_fixture_connect(s, 0);

	for (uint32_t i = 0; i < N; i++) {
		pos += conn_fixture_call_build(wire + pos, 2000 + i,
					       CONN_FIXTURE_DEFER, i * 3);
	}
	conn_fixture_write_all(fd, wire, pos);
	for (int i = 0; i < N; i++) {
		uint32_t xid = 0, v = conn_fixture_read_echo(fd, &xid);

		assert_true(xid >= 2000 && xid < 2000 + N);
		assert_false(seen[xid - 2000]);
		seen[xid - 2000] = true;
		assert_int_equal(v, (xid - 2000) * 3 + 1);
	}
	close(fd);
}

static void test_conn_udp_call_is_answered_inline(void **state)
{
	struct conn_fixture *s = *state;
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons((uint16_t)s->udp_port) };
	struct timeval tv = { .tv_sec = TEST_IO_TIMEOUT_S };
	uint8_t call[TEST_CALL_LEN], rep[64];
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	uint32_t xid = 0, stat = 99;
	size_t off = 0;
	ssize_t n;

	assert_true(fd >= 0);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	conn_fixture_call_build(call, 0x55, CONN_FIXTURE_DEFER, 9);
	/* A datagram is one record, without a record mark. */
	assert_int_equal(sendto(fd, call + 4, TEST_CALL_LEN - 4, 0,
				(struct sockaddr *)&sin, sizeof(sin)),
			 TEST_CALL_LEN - 4);
	n = recv(fd, rep, sizeof(rep), 0);
	assert_true(n > 0);
	assert_int_equal(rpc_reply_decode(rep, (size_t)n, &xid, &stat, &off),
			 0);
	assert_int_equal(xid, 0x55);
	assert_int_equal(stat, RPC_ACCEPT_SUCCESS);
	assert_int_equal(rpc_wire_get_u32(rep + off), 10);
	close(fd);
}

static void test_conn_2gib_mark_closes_only_that_conn(void **state)
{
	struct conn_fixture *s = *state;
	const uint8_t mark[4] = { 0xff, 0xff, 0xff, 0xff };
	uint8_t call[TEST_CALL_LEN], byte;
	size_t len = conn_fixture_call_build(call, 0x53, CONN_FIXTURE_ECHO, 5);
	int bad = conn_fixture_connect(s, 0), good = conn_fixture_connect(s, 0);
	uint32_t xid = 0;
	ssize_t n;

	conn_fixture_write_all(bad, mark, sizeof(mark));
	/* The server closes: EOF, or a reset if it had unread bytes. */
	n = read(bad, &byte, 1);
	assert_true(n == 0 || (n < 0 && errno == ECONNRESET));
	close(bad);

	conn_fixture_write_all(good, call, len);
	assert_int_equal(conn_fixture_read_echo(good, &xid), 5);
	close(good);

	good = conn_fixture_connect(s, 0);
	conn_fixture_write_all(good, call, len);
	assert_int_equal(conn_fixture_read_echo(good, &xid), 5);
	close(good);

	conn_fixture_stop(s); /* the worker has logged; now the log is ours */
	assert_true(log_capture_contains("record too large (limit 1052672 "
					 "bytes); closing"));
}

/* A client sending FILL calls in batches, on a non-blocking socket. */
struct flood {
	int fd;
	uint8_t wire[64 * TEST_CALL_LEN];
	size_t len, off; /* the batch, and how much of it is written */
	uint32_t calls; /* calls written or in the batch being written */
};

/* Writes what is left of the batch; returns false when the socket is
 * full. */
static bool flood_write(struct flood *f)
{
	while (f->off < f->len) {
		ssize_t n = write(f->fd, f->wire + f->off, f->len - f->off);

		if (n < 0) {
			assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
			return false;
		}
		f->off += (size_t)n;
	}
	return true;
}

/* Sends calls without reading until the server stops reading: the socket
 * stays full for 500 ms.  The last batch may be partly written. */
static void flood_until_stalled(struct flood *f, uint32_t max_calls)
{
	fcntl(f->fd, F_SETFL, fcntl(f->fd, F_GETFL) | O_NONBLOCK);
	while (f->calls < max_calls) {
		struct pollfd p = { .fd = f->fd, .events = POLLOUT };

		if (f->off == f->len) {
			f->len = 0;
			f->off = 0;
			for (size_t i = 0; i < sizeof(f->wire) / TEST_CALL_LEN;
			     i++) {
				f->len += conn_fixture_call_build(
					f->wire + f->len, f->calls++,
					CONN_FIXTURE_FILL, 0);
			}
		}
		if (flood_write(f)) {
			continue;
		}
		if (poll(&p, 1, 500) == 0) {
			return;
		}
	}
}

/* Reads the replies to every call of @f, in order, while writing the rest
 * of its last batch. */
static void flood_read_replies(struct flood *f)
{
	struct rpc_record rec;
	uint8_t *buf = malloc(NET_READ_CHUNK);
	uint32_t next = 0;

	assert_non_null(buf);
	rpc_record_init(&rec, TEST_FILL_BYTES + 64);
	while (next < f->calls) {
		struct pollfd p = { .fd = f->fd, .events = POLLIN };
		size_t pos = 0;
		ssize_t n;

		if (f->off < f->len) {
			p.events |= POLLOUT;
		}
		assert_true(poll(&p, 1, TEST_IO_TIMEOUT_S * 1000) > 0);
		if (p.revents & POLLOUT) {
			flood_write(f);
		}
		if (!(p.revents & POLLIN)) {
			continue;
		}
		n = read(f->fd, buf, NET_READ_CHUNK);
		assert_true(n > 0);
		while (pos < (size_t)n) {
			const uint8_t *out;
			size_t used, out_len, off;
			uint32_t xid, stat;
			int rc = rpc_record_feed(&rec, buf + pos,
						 (size_t)n - pos, &used, &out,
						 &out_len);

			assert_true(rc >= 0);
			pos += used;
			if (rc == 0) {
				break;
			}
			assert_int_equal(rpc_reply_decode(out, out_len, &xid,
							  &stat, &off),
					 0);
			assert_int_equal(xid, next);
			assert_int_equal(stat, RPC_ACCEPT_SUCCESS);
			assert_int_equal(out_len - off, TEST_FILL_BYTES);
			next++;
		}
	}
	rpc_record_fini(&rec);
	free(buf);
}

static void test_conn_client_that_never_reads_is_bounded(void **state)
{
	struct conn_fixture *s = *state;
	const uint32_t max_calls = 400000;
	struct flood f = { .fd = conn_fixture_connect(s, 4096) };
	unsigned calls_at_stall;

	flood_until_stalled(&f, max_calls);
	pthread_mutex_lock(&s->fill.lock);
	calls_at_stall = s->fill.calls;
	pthread_mutex_unlock(&s->fill.lock);
	/* The server stopped reading long before the client ran out. */
	assert_true(f.calls < max_calls);
	assert_true(calls_at_stall < f.calls);

	/* Now read everything: every call is answered, in order. */
	flood_read_replies(&f);
	pthread_mutex_lock(&s->fill.lock);
	assert_int_equal(s->fill.calls, f.calls);
	/* A call is dispatched only while the queue is under the limit, so
	 * the queue never holds more than the limit plus one reply. */
	assert_true(s->fill.max_out_bytes < TEST_OUT_LIMIT);
	/* ... and the limit was reached: back-pressure was exercised. */
	assert_true(s->fill.max_out_bytes >=
		    TEST_OUT_LIMIT - 2 * (TEST_FILL_BYTES + 64));
	pthread_mutex_unlock(&s->fill.lock);
	close(f.fd);
}

static void test_conn_stop_with_open_conns_is_clean(void **state)
{
	struct conn_fixture *s = *state;
	uint8_t call[TEST_CALL_LEN], byte;
	size_t len = conn_fixture_call_build(call, 0x54, CONN_FIXTURE_NULL, 0);
	int a = conn_fixture_connect(s, 0), b = conn_fixture_connect(s, 0);
	uint8_t rep[64];
	ssize_t n;

	conn_fixture_write_all(a, call, len);
	assert_int_equal(conn_fixture_read_reply(a, rep, sizeof(rep)),
			 RPC_REPLY_ACCEPTED_LEN);
	/* b has half a call buffered in the server. */
	conn_fixture_write_all(b, call, 10);
	conn_fixture_stop(s);
	assert_int_equal(read(a, &byte, 1), 0);
	/* b's half call may still have been unread: then it is a reset. */
	n = read(b, &byte, 1);
	assert_true(n == 0 || (n < 0 && errno == ECONNRESET));
	close(a);
	close(b);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Sets TEST_VOLUME's limit (bytes/s; 0: none), live. */
static void volume_limit(struct conn_fixture *s, uint64_t bytes_per_s)
{
	assert_int_equal(traffic_volume_set(s->traffic, TEST_VOLUME, NULL,
					    bytes_per_s,
					    (int64_t)(now_s() * 1e9)),
			 0);
}

/* At 1 MiB/s, three calls of 512 KiB: the first starts at once (the
 * bucket may go into debt), the others wait in the flow's queue and come
 * out in order, the last one not before about a second. */
static void test_conn_throttled_calls_wait_in_order(void **state)
{
	struct conn_fixture *s = *state;
	uint8_t wire[3 * TEST_CALL_LEN];
	size_t pos = 0;
	int fd = conn_fixture_connect(s, 0);
	double start, last = 0;

	volume_limit(s, TEST_MIB);
	for (uint32_t i = 0; i < 3; i++) {
		pos += conn_fixture_call_build(wire + pos, 3000 + i,
					       CONN_FIXTURE_ECHO,
					       TEST_MIB / 2 + i);
	}
	start = now_s();
	conn_fixture_write_all(fd, wire, pos);
	for (uint32_t i = 0; i < 3; i++) {
		uint32_t xid = 0;

		assert_int_equal(conn_fixture_read_echo(fd, &xid),
				 TEST_MIB / 2 + i);
		assert_int_equal(xid, 3000 + i);
		last = now_s() - start;
	}
	/* 1.5 MiB paid for by 1 MiB of debt plus what a second earns: a
	 * bound from below only, which a loaded machine cannot break. */
	assert_true(last >= 0.9);
	close(fd);
}

/* A client goes away with calls waiting for admission: they are dropped
 * (ASan checks that nothing leaks), their references given back, and
 * the next connection is served once the limit is lifted. */
static void test_conn_close_with_queued_calls_is_clean(void **state)
{
	struct conn_fixture *s = *state;
	uint8_t wire[4 * TEST_CALL_LEN];
	size_t pos = 0;
	uint32_t xid = 0;
	int fd = conn_fixture_connect(s, 0);

	volume_limit(s, TEST_MIB);
	for (uint32_t i = 0; i < 4; i++) {
		pos += conn_fixture_call_build(wire + pos, 4000 + i,
					       CONN_FIXTURE_DEFER, TEST_MIB);
	}
	conn_fixture_write_all(fd, wire, pos);
	/* The first runs (deferred work) at once; three wait. */
	assert_int_equal(conn_fixture_read_echo(fd, &xid), TEST_MIB + 1);
	assert_int_equal(xid, 4000);
	close(fd);
	volume_limit(s, 0);
	fd = conn_fixture_connect(s, 0);
	pos = conn_fixture_call_build(wire, 4100, CONN_FIXTURE_ECHO, 5);
	conn_fixture_write_all(fd, wire, pos);
	assert_int_equal(conn_fixture_read_echo(fd, &xid), 5);
	close(fd);
}

#define T(name)                                                                \
	cmocka_unit_test_setup_teardown(name, setup, conn_fixture_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_conn_call_split_across_writes_is_answered),
		T(test_conn_call_in_two_fragments_is_answered),
		T(test_conn_100_pipelined_calls_get_100_replies),
		T(test_conn_deferred_calls_are_answered),
		T(test_conn_udp_call_is_answered_inline),
		T(test_conn_2gib_mark_closes_only_that_conn),
		T(test_conn_client_that_never_reads_is_bounded),
		T(test_conn_stop_with_open_conns_is_clean),
		T(test_conn_throttled_calls_wait_in_order),
		T(test_conn_close_with_queued_calls_is_clean),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
