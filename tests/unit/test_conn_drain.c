// SPDX-License-Identifier: Apache-2.0
/*
 * test_conn_drain: a client that shuts down its write side
 * (shutdown(SHUT_WR)) after its calls (nfsd/net/conn.c, CONN_DRAINING).
 * Over loopback TCP, as test_conn: pipelined calls, run inline or deferred
 * to the work pool, are all answered before the server's EOF; so are calls
 * waiting in a throttled flow's queue; a record left half-sent is dropped
 * and the calls before it answered; a half-closed client that never reads
 * its replies is closed by the idle timeout.  After a 1 MiB call the
 * conn's record holds no buffer.
 */
#include <arpa/inet.h>
#include <errno.h>
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
#include "nfsd/rpc/record.h"
#include "nfsd/traffic/traffic.h"
#include "tests/lib/conn_fixture.h"
#include "tests/lib/log_capture.h"
#include "tests/lib/rpc_test_prog.h"

#define TEST_CALL_LEN CONN_FIXTURE_CALL_LEN
#define TEST_FILL_BYTES (64 * 1024)
#define TEST_IDLE_MS 300
#define TEST_IO_TIMEOUT_S CONN_FIXTURE_IO_TIMEOUT_S
#define TEST_MIB (1024 * 1024)

/* No idle timeout: nothing here depends on how fast the client reads. */
static int setup(void **state)
{
	return conn_fixture_setup(state, 256 * 1024, 0, false, TEST_FILL_BYTES);
}

/* A short idle timeout, and room to queue every reply of the test. */
static int setup_idle(void **state)
{
	return conn_fixture_setup(state, 64 * TEST_MIB, TEST_IDLE_MS, false,
				  TEST_FILL_BYTES);
}

/* The server closes after the replies: EOF, not a reset. */
static void client_expect_eof(int fd)
{
	uint8_t byte;

	assert_int_equal(read(fd, &byte, 1), 0);
}

/* 50 inline and 50 deferred calls in one write, then SHUT_WR: 100
 * replies, then EOF. */
static void test_drain_pipelined_calls_are_all_answered(void **state)
{
	struct conn_fixture *s = *state;
	enum { N = 100 };
	uint8_t wire[N * TEST_CALL_LEN];
	bool seen[N] = { false };
	size_t pos = 0;
	int fd = conn_fixture_connect(s, 0);

	for (uint32_t i = 0; i < N; i++) {
		pos += conn_fixture_call_build(
			wire + pos, i,
			i % 2 ? CONN_FIXTURE_DEFER : CONN_FIXTURE_ECHO, i * 5);
	}
	conn_fixture_write_all(fd, wire, pos);
	assert_int_equal(shutdown(fd, SHUT_WR), 0);
	for (int i = 0; i < N; i++) {
		uint32_t xid = N, v = conn_fixture_read_echo(fd, &xid);

		assert_true(xid < N);
		assert_false(seen[xid]);
		seen[xid] = true;
		assert_int_equal(v, xid * 5 + (xid % 2));
	}
	client_expect_eof(fd);
	close(fd);
}

/* Calls waiting in a throttled flow's queue at the half-close come out
 * too, in order. */
static void test_drain_throttled_calls_are_answered(void **state)
{
	struct conn_fixture *s = *state;
	uint8_t wire[3 * TEST_CALL_LEN];
	struct timespec ts;
	size_t pos = 0;
	int fd = conn_fixture_connect(s, 0);

	clock_gettime(CLOCK_MONOTONIC, &ts);
	assert_int_equal(traffic_volume_set(s->traffic, RPC_TEST_VOLUME, NULL,
					    2 * TEST_MIB,
					    (int64_t)ts.tv_sec * 1000000000 +
						    ts.tv_nsec),
			 0);
	for (uint32_t i = 0; i < 3; i++) {
		pos += conn_fixture_call_build(wire + pos, 10 + i,
					       CONN_FIXTURE_ECHO, TEST_MIB + i);
	}
	conn_fixture_write_all(fd, wire, pos);
	assert_int_equal(shutdown(fd, SHUT_WR), 0);
	for (uint32_t i = 0; i < 3; i++) {
		uint32_t xid = 0;

		assert_int_equal(conn_fixture_read_echo(fd, &xid),
				 TEST_MIB + i);
		assert_int_equal(xid, 10 + i);
	}
	client_expect_eof(fd);
	close(fd);
}

/* A call, then half of one, then SHUT_WR: one reply, then EOF. */
static void test_drain_half_sent_record_is_dropped(void **state)
{
	struct conn_fixture *s = *state;
	uint8_t wire[2 * TEST_CALL_LEN];
	size_t len = conn_fixture_call_build(wire, 7, CONN_FIXTURE_ECHO, 70);
	uint32_t xid = 0;
	int fd = conn_fixture_connect(s, 0);

	conn_fixture_call_build(wire + len, 8, CONN_FIXTURE_ECHO, 80);
	conn_fixture_write_all(fd, wire, len + 20);
	assert_int_equal(shutdown(fd, SHUT_WR), 0);
	assert_int_equal(conn_fixture_read_echo(fd, &xid), 70);
	assert_int_equal(xid, 7);
	client_expect_eof(fd);
	close(fd);
}

/* A call of 1 MiB (its argument, then zeros: still answered), then a
 * small one: once the small one is answered the conn is at rest, and its
 * record holds no buffer. */
static void test_drain_conn_at_rest_holds_no_record_buffer(void **state)
{
	struct conn_fixture *s = *state;
	const size_t big = TEST_MIB;
	uint8_t *wire = calloc(1, big + TEST_CALL_LEN);
	const struct conn *c;
	uint32_t xid = 0;
	int fd = conn_fixture_connect(s, 0);

	assert_non_null(wire);
	conn_fixture_call_build(wire, 21, CONN_FIXTURE_ECHO, 21);
	rpc_record_mark_encode(wire, (uint32_t)(big - 4));
	conn_fixture_call_build(wire + big, 22, CONN_FIXTURE_ECHO, 22);
	conn_fixture_write_all(fd, wire, big + TEST_CALL_LEN);
	assert_int_equal(conn_fixture_read_echo(fd, &xid), 21);
	assert_int_equal(conn_fixture_read_echo(fd, &xid), 22);
	/* The worker trimmed before it sent the last reply, and is idle. */
	c = s->net.workers[0].conns;
	assert_non_null(c);
	assert_null(c->record.buf);
	assert_null(c->in_held);
	assert_null(c->lent);
	close(fd);
	free(wire);
}

static uint32_t server_nconns(struct conn_fixture *s)
{
	uint32_t n;

	pthread_mutex_lock(&s->net.admit_lock);
	n = s->net.nconns;
	pthread_mutex_unlock(&s->net.admit_lock);
	return n;
}

/* 200 replies of 64 KiB (more than the sockets hold) for a client that
 * never reads (after it half-closes, when @half_close): once its queue has
 * not moved for the idle timeout, the server closes, with @why in the log;
 * the client then finds fewer replies than it asked for, then the end of
 * the stream. */
static void peer_never_reads(void **state, bool half_close, const char *why)
{
	struct conn_fixture *s = *state;
	enum { N = 200 };
	uint8_t *wire = malloc(N * TEST_CALL_LEN);
	uint8_t *buf = malloc(TEST_MIB);
	size_t pos = 0, got = 0;
	int fd = conn_fixture_connect(s, 4096);
	ssize_t n;

	uint32_t xid = 0;

	assert_non_null(wire);
	assert_non_null(buf);
	/* Answered: the server has accepted the conn and counts it. */
	conn_fixture_write_all(
		fd, wire,
		conn_fixture_call_build(wire, N, CONN_FIXTURE_ECHO, 1));
	assert_int_equal(conn_fixture_read_echo(fd, &xid), 1);
	for (uint32_t i = 0; i < N; i++) {
		pos += conn_fixture_call_build(wire + pos, i, CONN_FIXTURE_FILL,
					       0);
	}
	conn_fixture_write_all(fd, wire, pos);
	if (half_close) {
		assert_int_equal(shutdown(fd, SHUT_WR), 0);
	}
	/* Waits for the server's decision, not for a guessed time. */
	for (int i = 0; server_nconns(s) > 0; i++) {
		assert_true(i < TEST_IO_TIMEOUT_S * 100);
		poll(NULL, 0, 10);
	}
	while ((n = read(fd, buf, TEST_MIB)) > 0) {
		got += (size_t)n;
	}
	/* EOF, or a reset when the close dropped unsent bytes. */
	assert_true(n == 0 || errno == ECONNRESET);
	assert_true(got < (size_t)N * TEST_FILL_BYTES);
	close(fd);
	conn_fixture_stop(s);
	assert_true(log_capture_contains(why));
	free(wire);
	free(buf);
}

/* Whether the server saw the FIN before back-pressure paused its reads
 * is timing (on a loaded machine it often has not), so the log may or may
 * not say "half-closed": the close is what is checked. */
static void test_drain_peer_that_never_reads_is_closed(void **state)
{
	peer_never_reads(state, true, "read no reply for 300 ms; closing");
}

/* Not half-closed: busy with replies it never takes is not "not idle". */
static void test_open_peer_that_never_reads_is_closed(void **state)
{
	peer_never_reads(state, false, "read no reply for 300 ms; closing");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_drain_pipelined_calls_are_all_answered, setup,
			conn_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_drain_throttled_calls_are_answered, setup,
			conn_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_drain_half_sent_record_is_dropped, setup,
			conn_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_drain_conn_at_rest_holds_no_record_buffer, setup,
			conn_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_drain_peer_that_never_reads_is_closed, setup_idle,
			conn_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_open_peer_that_never_reads_is_closed, setup_idle,
			conn_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
