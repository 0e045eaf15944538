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
#include "nfsd/proto/xdr_empty.h"
#include "nfsd/rpc/msg.h"
#include "nfsd/rpc/record.h"
#include "nfsd/rpc/work.h"
#include "nfsd/traffic/traffic.h"
#include "tests/lib/log_capture.h"
#include "tests/lib/rpc_test_prog.h"
#include "tests/lib/rpc_wire.h"

#define TEST_PROG 400001
#define TEST_CALL_LEN (4 + 40 + 4) /* mark, AUTH_NONE header, one u_int */
#define TEST_FILL_BYTES (64 * 1024)
#define TEST_IDLE_MS 300
#define TEST_IO_TIMEOUT_S 20
#define TEST_MIB (1024 * 1024)

enum test_proc { TEST_NULL, TEST_ECHO, TEST_FILL, TEST_DEFER, TEST_NPROCS };

struct server {
	struct ev_loop *main_loop;
	ev_async stop;
	pthread_t thread;
	struct rpc_dispatcher d;
	struct rpc_program prog;
	struct rpc_work_pool *pool;
	struct net net;
	struct traffic *traffic;
	int port;
};

/* FILL's result: TEST_FILL_BYTES of zeros. */
static bool_t xdr_fill_res(XDR *xdrs, void *res)
{
	(void)res;
	for (u_int i = 0; i < TEST_FILL_BYTES / 4; i++) {
		u_int zero = 0;

		if (!xdr_u_int(xdrs, &zero))
			return FALSE;
	}
	return TRUE;
}

static const struct rpc_proc test_procs[TEST_NPROCS] = {
	[TEST_NULL] = { .name = "NULL",
			.handler = rpc_test_proc_null,
			.decode = (xdrproc_t)xdr_empty,
			.encode = (xdrproc_t)xdr_empty },
	[TEST_ECHO] = { .name = "ECHO",
			.handler = rpc_test_proc_echo,
			.decode = (xdrproc_t)xdr_u_int,
			.encode = (xdrproc_t)xdr_u_int,
			.args_size = sizeof(u_int),
			.res_size = sizeof(u_int) },
	[TEST_FILL] = { .name = "FILL",
			.handler = rpc_test_proc_null,
			.decode = (xdrproc_t)xdr_u_int,
			.encode = (xdrproc_t)xdr_fill_res,
			.args_size = sizeof(u_int) },
	[TEST_DEFER] = { .name = "DEFER",
			 .handler = rpc_test_proc_defer,
			 .decode = (xdrproc_t)xdr_u_int,
			 .encode = (xdrproc_t)xdr_u_int,
			 .args_size = sizeof(u_int),
			 .res_size = sizeof(u_int) },
};

static void server_stop_cb(struct ev_loop *loop, ev_async *a, int revents)
{
	(void)a;
	(void)revents;
	ev_break(loop, EVBREAK_ALL);
}

static void *server_main(void *arg)
{
	struct server *s = arg;

	ev_run(s->main_loop, 0);
	return NULL;
}

static int server_setup(void **state, const struct net_limits *limits)
{
	struct server *s = calloc(1, sizeof(*s));
	struct traffic_caps caps;

	if (!s)
		return -1;
	log_capture_reset();
	s->prog = (struct rpc_program){ .name = "test",
					.prog = TEST_PROG,
					.vers = 1,
					.procs = test_procs,
					.nprocs = TEST_NPROCS,
					.charge = rpc_test_charge };
	traffic_caps_default(&caps);
	if (rpc_dispatcher_add(&s->d, &s->prog) ||
	    rpc_work_pool_new(2, &s->pool) || traffic_new(&caps, &s->traffic))
		return -1;
	s->d.work_pool = s->pool;
	s->main_loop = ev_loop_new(EVFLAG_AUTO);
	if (!s->main_loop)
		return -1;
	ev_async_init(&s->stop, server_stop_cb);
	ev_async_start(s->main_loop, &s->stop);
	if (net_start(&s->net, s->main_loop, &s->d, limits, 1))
		return -1;
	s->d.admission = net_admission_init(&s->net, s->traffic);
	if (net_listen(&s->net, "127.0.0.1", 0, false, NULL, &s->port))
		return -1;
	if (pthread_create(&s->thread, NULL, server_main, s))
		return -1;
	*state = s;
	return 0;
}

/* No idle timeout: nothing here depends on how fast the client reads. */
static int setup(void **state)
{
	const struct net_limits limits = {
		.max_record_bytes = RPC_RECORD_DEFAULT_MAX,
		.max_inflight = 128,
		.max_output_bytes = 256 * 1024,
	};

	return server_setup(state, &limits);
}

/* A short idle timeout, and room to queue every reply of the test. */
static int setup_idle(void **state)
{
	const struct net_limits limits = {
		.max_record_bytes = RPC_RECORD_DEFAULT_MAX,
		.max_inflight = 128,
		.max_output_bytes = 64 * TEST_MIB,
		.idle_timeout_ms = TEST_IDLE_MS,
	};

	return server_setup(state, &limits);
}

static void server_stop(struct server *s)
{
	ev_async_send(s->main_loop, &s->stop);
	pthread_join(s->thread, NULL);
	net_stop(&s->net);
	rpc_work_pool_free(s->pool);
	net_free(&s->net);
	traffic_free(s->traffic);
	ev_async_stop(s->main_loop, &s->stop);
	ev_loop_destroy(s->main_loop);
	s->main_loop = NULL;
}

static int teardown(void **state)
{
	struct server *s = *state;

	if (s->main_loop)
		server_stop(s);
	free(s);
	return 0;
}

static int client_connect(const struct server *s, int bufsize)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons((uint16_t)s->port) };
	struct timeval tv = { .tv_sec = TEST_IO_TIMEOUT_S };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (bufsize)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bufsize,
			   sizeof(bufsize));
	assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	return fd;
}

static void client_write_all(int fd, const uint8_t *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		assert_true(n > 0);
		buf += n;
		len -= (size_t)n;
	}
}

static bool client_read_all(int fd, uint8_t *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = read(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		buf += n;
		len -= (size_t)n;
	}
	return true;
}

/* Reads one ECHO/DEFER reply; returns its value. */
static uint32_t client_read_echo(int fd, uint32_t *xid)
{
	uint8_t mark[4], rep[64];
	uint32_t len, stat = 99;
	size_t off = 0;

	assert_true(client_read_all(fd, mark, 4));
	len = rpc_wire_get_u32(mark) & ~RPC_RECORD_LAST_FRAGMENT;
	assert_true(len <= sizeof(rep));
	assert_true(client_read_all(fd, rep, len));
	assert_int_equal(rpc_reply_decode(rep, len, xid, &stat, &off), 0);
	assert_int_equal(stat, RPC_ACCEPT_SUCCESS);
	return rpc_wire_get_u32(rep + off);
}

/* The server closes after the replies: EOF, not a reset. */
static void client_expect_eof(int fd)
{
	uint8_t byte;

	assert_int_equal(read(fd, &byte, 1), 0);
}

static size_t call_build(uint8_t *buf, uint32_t xid, uint32_t proc,
			 uint32_t arg)
{
	size_t n = rpc_call_encode(buf + 4, 40, xid, TEST_PROG, 1, proc, NULL,
				   0, 0);

	assert_int_equal(n, 40);
	buf[4 + n] = (uint8_t)(arg >> 24);
	buf[5 + n] = (uint8_t)(arg >> 16);
	buf[6 + n] = (uint8_t)(arg >> 8);
	buf[7 + n] = (uint8_t)arg;
	rpc_record_mark_encode(buf, (uint32_t)(n + 4));
	return n + 8;
}

/* 50 inline and 50 deferred calls in one write, then SHUT_WR: 100
 * replies, then EOF. */
static void test_drain_pipelined_calls_are_all_answered(void **state)
{
	struct server *s = *state;
	enum { N = 100 };
	uint8_t wire[N * TEST_CALL_LEN];
	bool seen[N] = { false };
	size_t pos = 0;
	int fd = client_connect(s, 0);

	for (uint32_t i = 0; i < N; i++)
		pos += call_build(wire + pos, i, i % 2 ? TEST_DEFER : TEST_ECHO,
				  i * 5);
	client_write_all(fd, wire, pos);
	assert_int_equal(shutdown(fd, SHUT_WR), 0);
	for (int i = 0; i < N; i++) {
		uint32_t xid = N, v = client_read_echo(fd, &xid);

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
	struct server *s = *state;
	uint8_t wire[3 * TEST_CALL_LEN];
	struct timespec ts;
	size_t pos = 0;
	int fd = client_connect(s, 0);

	clock_gettime(CLOCK_MONOTONIC, &ts);
	assert_int_equal(traffic_volume_set(s->traffic, RPC_TEST_VOLUME, NULL,
					    2 * TEST_MIB,
					    (int64_t)ts.tv_sec * 1000000000 +
						    ts.tv_nsec),
			 0);
	for (uint32_t i = 0; i < 3; i++)
		pos += call_build(wire + pos, 10 + i, TEST_ECHO, TEST_MIB + i);
	client_write_all(fd, wire, pos);
	assert_int_equal(shutdown(fd, SHUT_WR), 0);
	for (uint32_t i = 0; i < 3; i++) {
		uint32_t xid = 0;

		assert_int_equal(client_read_echo(fd, &xid), TEST_MIB + i);
		assert_int_equal(xid, 10 + i);
	}
	client_expect_eof(fd);
	close(fd);
}

/* A call, then half of one, then SHUT_WR: one reply, then EOF. */
static void test_drain_half_sent_record_is_dropped(void **state)
{
	struct server *s = *state;
	uint8_t wire[2 * TEST_CALL_LEN];
	size_t len = call_build(wire, 7, TEST_ECHO, 70);
	uint32_t xid = 0;
	int fd = client_connect(s, 0);

	call_build(wire + len, 8, TEST_ECHO, 80);
	client_write_all(fd, wire, len + 20);
	assert_int_equal(shutdown(fd, SHUT_WR), 0);
	assert_int_equal(client_read_echo(fd, &xid), 70);
	assert_int_equal(xid, 7);
	client_expect_eof(fd);
	close(fd);
}

/* A call of 1 MiB (its argument, then zeros: still answered), then a
 * small one: once the small one is answered the conn is at rest, and its
 * record holds no buffer. */
static void test_drain_conn_at_rest_holds_no_record_buffer(void **state)
{
	struct server *s = *state;
	const size_t big = TEST_MIB;
	uint8_t *wire = calloc(1, big + TEST_CALL_LEN);
	const struct conn *c;
	uint32_t xid = 0;
	int fd = client_connect(s, 0);

	assert_non_null(wire);
	call_build(wire, 21, TEST_ECHO, 21);
	rpc_record_mark_encode(wire, (uint32_t)(big - 4));
	call_build(wire + big, 22, TEST_ECHO, 22);
	client_write_all(fd, wire, big + TEST_CALL_LEN);
	assert_int_equal(client_read_echo(fd, &xid), 21);
	assert_int_equal(client_read_echo(fd, &xid), 22);
	/* The worker trimmed before it sent the last reply, and is idle. */
	c = s->net.workers[0].conns;
	assert_non_null(c);
	assert_null(c->record.buf);
	assert_null(c->in_held);
	close(fd);
	free(wire);
}

static uint32_t server_nconns(struct server *s)
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
	struct server *s = *state;
	enum { N = 200 };
	uint8_t *wire = malloc(N * TEST_CALL_LEN);
	uint8_t *buf = malloc(TEST_MIB);
	size_t pos = 0, got = 0;
	int fd = client_connect(s, 4096);
	ssize_t n;

	uint32_t xid = 0;

	assert_non_null(wire);
	assert_non_null(buf);
	/* Answered: the server has accepted the conn and counts it. */
	client_write_all(fd, wire, call_build(wire, N, TEST_ECHO, 1));
	assert_int_equal(client_read_echo(fd, &xid), 1);
	for (uint32_t i = 0; i < N; i++)
		pos += call_build(wire + pos, i, TEST_FILL, 0);
	client_write_all(fd, wire, pos);
	if (half_close)
		assert_int_equal(shutdown(fd, SHUT_WR), 0);
	/* Waits for the server's decision, not for a guessed time. */
	for (int i = 0; server_nconns(s) > 0; i++) {
		assert_true(i < TEST_IO_TIMEOUT_S * 100);
		poll(NULL, 0, 10);
	}
	while ((n = read(fd, buf, TEST_MIB)) > 0)
		got += (size_t)n;
	/* EOF, or a reset when the close dropped unsent bytes. */
	assert_true(n == 0 || errno == ECONNRESET);
	assert_true(got < (size_t)N * TEST_FILL_BYTES);
	close(fd);
	server_stop(s);
	assert_true(log_capture_contains(why));
	free(wire);
	free(buf);
}

static void test_drain_peer_that_never_reads_is_closed(void **state)
{
	peer_never_reads(state, true,
			 "half-closed peer read no reply for 300 ms; closing");
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
			teardown),
		cmocka_unit_test_setup_teardown(
			test_drain_throttled_calls_are_answered, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_drain_half_sent_record_is_dropped, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_drain_conn_at_rest_holds_no_record_buffer, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_drain_peer_that_never_reads_is_closed, setup_idle,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_open_peer_that_never_reads_is_closed, setup_idle,
			teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
