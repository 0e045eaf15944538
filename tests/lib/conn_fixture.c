// SPDX-License-Identifier: Apache-2.0
/*
 * conn_fixture: the loopback server of tests/lib/conn_fixture.h and the
 * blocking client that talks to it (RFC 5531 11, record marking).
 */
#include "tests/lib/conn_fixture.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "nfsd/rpc/drc.h"
#include "nfsd/rpc/msg.h"
#include "nfsd/rpc/record.h"
#include "nfsd/net/net_int.h"
#include "nfsd/proto/xdr_empty.h"
#include "tests/lib/log_capture.h"
#include "tests/lib/rpc_test_prog.h"
#include "tests/lib/rpc_wire.h"

/* FILL: counts the call and the conn's output queue, as the worker sees
 * them; the result is the number of zero bytes to answer. */
static enum rpc_disposition conn_fixture_proc_fill(struct request *req,
						   const void *args, void *res)
{
	struct conn_fixture_fill *fill = req->svc;
	const struct conn *c = rpc_call_of(req)->transport;

	(void)args;
	pthread_mutex_lock(&fill->lock);
	fill->calls++;
	if (c->out_bytes > fill->max_out_bytes) {
		fill->max_out_bytes = c->out_bytes;
	}
	*(u_int *)res = fill->bytes;
	pthread_mutex_unlock(&fill->lock);
	return RPC_REPLY;
}

/* FILL's result: as many zero bytes as the u_int result says. */
static bool_t conn_fixture_xdr_fill_res(XDR *xdrs, void *res)
{
	for (u_int i = 0; i < *(const u_int *)res / 4; i++) {
		u_int zero = 0;

		if (!xdr_u_int(xdrs, &zero)) {
			return FALSE;
		}
	}
	return TRUE;
}

/* SUM's arguments: the data points into the record. */
struct conn_fixture_sum_args {
	u_int wait;
	u_int len;
	const uint8_t *data;
};

static bool_t conn_fixture_xdr_sum_args(XDR *xdrs, void *argp)
{
	struct conn_fixture_sum_args *a = argp;
	const uint8_t *p;

	if (xdrs->x_op == XDR_FREE) {
		return TRUE;
	}
	if (!xdr_u_int(xdrs, &a->wait) || !xdr_u_int(xdrs, &a->len) ||
	    a->len > RPC_RECORD_DEFAULT_MAX) {
		return FALSE;
	}
	p = (const uint8_t *)xdr_inline(xdrs, (int)((a->len + 3) & ~3u));
	if (!p) {
		return FALSE;
	}
	a->data = p;
	return TRUE;
}

uint32_t conn_fixture_sum(const uint8_t *p, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++) {
		h = (h ^ p[i]) * 16777619u;
	}
	return h;
}

/* SUM's work: waits for the gate, then hashes the data, still where the
 * record lies. */
static void conn_fixture_sum_work(struct request *req)
{
	const struct conn_fixture_sum_args *a = req->args;
	struct conn_fixture_fill *fill = req->svc;
	struct timespec until;
	uint32_t h;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += CONN_FIXTURE_IO_TIMEOUT_S;
	pthread_mutex_lock(&fill->lock);
	fill->gate_waiting++;
	pthread_cond_broadcast(&fill->gate_cond);
	while (fill->gate_closed &&
	       pthread_cond_timedwait(&fill->gate_cond, &fill->lock, &until) ==
		       0) {
	}
	fill->gate_waiting--;
	pthread_mutex_unlock(&fill->lock);
	h = conn_fixture_sum(a->data, a->len);
	*(u_int *)req->res = h;
	req->disposition = RPC_REPLY;
	pthread_mutex_lock(&fill->lock);
	fill->sums_done++;
	fill->last_sum = h;
	pthread_cond_broadcast(&fill->gate_cond);
	pthread_mutex_unlock(&fill->lock);
}

/* A parked SUM's thread: the work, then the call back to its loop, as
 * the intent log's flush thread hands a parked WRITE back. */
static void *conn_fixture_sum_parker(void *arg)
{
	struct request *req = arg;
	struct conn_fixture_fill *fill = req->svc;

	conn_fixture_sum_work(req);
	request_unpark(req);
	pthread_mutex_lock(&fill->lock);
	fill->parkers--;
	pthread_cond_broadcast(&fill->gate_cond);
	pthread_mutex_unlock(&fill->lock);
	return NULL;
}

/* Parks @req while a thread of its own computes its answer. */
static enum rpc_disposition conn_fixture_sum_park(struct request *req)
{
	struct conn_fixture_fill *fill = req->svc;
	enum rpc_disposition disp = request_park(req);
	pthread_attr_t attr;
	pthread_t t;

	pthread_mutex_lock(&fill->lock);
	fill->parkers++;
	pthread_mutex_unlock(&fill->lock);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, conn_fixture_sum_parker, req) != 0) {
		/* Not parked after all: the work runs here. */
		conn_fixture_sum_parker(req);
	}
	pthread_attr_destroy(&attr);
	return disp;
}

static enum rpc_disposition conn_fixture_proc_sum(struct request *req,
						  const void *args, void *res)
{
	const struct conn_fixture_sum_args *a = args;

	switch (a->wait) {
	case CONN_FIXTURE_SUM_INLINE:
		break;
	case CONN_FIXTURE_SUM_PARK:
		assert_true(request_can_park(req));
		return conn_fixture_sum_park(req);
	default:
		return request_defer(req, conn_fixture_sum_work);
	}
	*(u_int *)res = conn_fixture_sum(a->data, a->len);
	return RPC_REPLY;
}

static const struct rpc_proc conn_fixture_procs[CONN_FIXTURE_NPROCS] = {
	[CONN_FIXTURE_NULL] = { .name = "NULL",
				.handler = rpc_test_proc_null,
				.decode = (xdrproc_t)xdr_empty,
				.encode = (xdrproc_t)xdr_empty },
	[CONN_FIXTURE_ECHO] = { .name = "ECHO",
				.handler = rpc_test_proc_echo,
				.decode = (xdrproc_t)xdr_u_int,
				.encode = (xdrproc_t)xdr_u_int,
				.args_size = sizeof(u_int),
				.res_size = sizeof(u_int) },
	[CONN_FIXTURE_FILL] = { .name = "FILL",
				.handler = conn_fixture_proc_fill,
				.decode = (xdrproc_t)xdr_u_int,
				.encode = (xdrproc_t)conn_fixture_xdr_fill_res,
				.args_size = sizeof(u_int),
				.res_size = sizeof(u_int) },
	[CONN_FIXTURE_DEFER] = { .name = "DEFER",
				 .handler = rpc_test_proc_defer,
				 .decode = (xdrproc_t)xdr_u_int,
				 .encode = (xdrproc_t)xdr_u_int,
				 .args_size = sizeof(u_int),
				 .res_size = sizeof(u_int) },
	[CONN_FIXTURE_SUM] = { .name = "SUM",
			       .handler = conn_fixture_proc_sum,
			       .decode = (xdrproc_t)conn_fixture_xdr_sum_args,
			       .encode = (xdrproc_t)xdr_u_int,
			       .args_size =
				       sizeof(struct conn_fixture_sum_args),
			       .res_size = sizeof(u_int),
			       .non_idempotent = true,
			       .args_borrow_record = true },
};

static void conn_fixture_stop_cb(struct ev_loop *loop, ev_async *a, int revents)
{
	(void)a;
	(void)revents;
	ev_break(loop, EVBREAK_ALL);
}

static void *conn_fixture_main(void *arg)
{
	struct conn_fixture *f = arg;

	ev_run(f->main_loop, 0);
	return NULL;
}

/* The setups' body: @nworkers loops; with @second a TCP listener more
 * (port2). */
static int conn_fixture_start(void **state, uint32_t max_output_bytes,
			      uint32_t idle_timeout_ms, bool udp,
			      u_int fill_bytes, unsigned nworkers, bool second,
			      bool drc)
{
	struct conn_fixture *f = calloc(1, sizeof(*f));
	const struct net_limits limits = {
		.max_record_bytes = RPC_RECORD_DEFAULT_MAX,
		.max_inflight = 128,
		.max_output_bytes = max_output_bytes,
		.idle_timeout_ms = idle_timeout_ms,
	};
	struct traffic_caps caps;

	if (!f) {
		return -1;
	}
	*state = f;
	log_capture_reset();
	pthread_mutex_init(&f->fill.lock, NULL);
	pthread_cond_init(&f->fill.gate_cond, NULL);
	f->fill.bytes = fill_bytes;
	f->prog = (struct rpc_program){ .name = "test",
					.prog = CONN_FIXTURE_PROG,
					.vers = 1,
					.procs = conn_fixture_procs,
					.nprocs = CONN_FIXTURE_NPROCS,
					.ctx = &f->fill,
					.charge = rpc_test_charge };
	traffic_caps_default(&caps);
	if (rpc_dispatcher_add(&f->d, &f->prog) ||
	    (udp && rpc_dispatcher_add(&f->d_udp, &f->prog)) ||
	    rpc_work_pool_new(2, &f->pool) || traffic_new(&caps, &f->traffic)) {
		return -1;
	}
	f->d.work_pool = f->pool;
	if (drc &&
	    drc_new(DRC_DEFAULT_MAX_ENTRIES, DRC_DEFAULT_MAX_BYTES, &f->drc)) {
		return -1;
	}
	f->d.drc = f->drc;
	f->main_loop = ev_loop_new(EVFLAG_AUTO);
	if (!f->main_loop) {
		return -1;
	}
	ev_async_init(&f->stop, conn_fixture_stop_cb);
	ev_async_start(f->main_loop, &f->stop);
	if (net_start(&f->net, f->main_loop, &f->d, &limits, nworkers)) {
		return -1;
	}
	f->d.admission = net_admission_init(&f->net, f->traffic);
	if (net_listen(&f->net, "127.0.0.1", 0, false, NULL, &f->port) ||
	    (udp && net_listen(&f->net, "127.0.0.1", 0, true, &f->d_udp,
			       &f->udp_port)) ||
	    (second &&
	     net_listen(&f->net, "127.0.0.1", 0, false, NULL, &f->port2))) {
		return -1;
	}
	if (pthread_create(&f->thread, NULL, conn_fixture_main, f)) {
		return -1;
	}
	return 0;
}

int conn_fixture_setup(void **state, uint32_t max_output_bytes,
		       uint32_t idle_timeout_ms, bool udp, u_int fill_bytes)
{
	return conn_fixture_start(state, max_output_bytes, idle_timeout_ms, udp,
				  fill_bytes, 1, false, false);
}

int conn_fixture_setup_drc(void **state)
{
	return conn_fixture_start(state, 256 * 1024, 0, false, 0, 1, false,
				  true);
}

int conn_fixture_setup_loops(void **state, unsigned nworkers)
{
	return conn_fixture_start(state, 64 * 1024, 0, false, 0, nworkers, true,
				  false);
}

void conn_fixture_stop(struct conn_fixture *f)
{
	if (!f->main_loop) {
		return;
	}
	ev_async_send(f->main_loop, &f->stop);
	pthread_join(f->thread, NULL);
	net_stop(&f->net);
	rpc_work_pool_free(f->pool);
	net_free(&f->net);
	traffic_free(f->traffic); /* after the flows, freed with their conns */
	if (f->drc) {
		drc_free(f->drc);
		f->drc = NULL;
	}
	ev_async_stop(f->main_loop, &f->stop);
	ev_loop_destroy(f->main_loop);
	f->main_loop = NULL;
}

int conn_fixture_teardown(void **state)
{
	struct conn_fixture *f = *state;

	conn_fixture_stop(f);
	/* A parked SUM's thread may still be on its way out. */
	pthread_mutex_lock(&f->fill.lock);
	while (f->fill.parkers > 0) {
		pthread_cond_wait(&f->fill.gate_cond, &f->fill.lock);
	}
	pthread_mutex_unlock(&f->fill.lock);
	pthread_cond_destroy(&f->fill.gate_cond);
	pthread_mutex_destroy(&f->fill.lock);
	free(f);
	return 0;
}

int conn_fixture_connect(const struct conn_fixture *f, int bufsize)
{
	return conn_fixture_connect_port(f->port, bufsize);
}

int conn_fixture_connect_port(int port, int bufsize)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons((uint16_t)port) };
	struct timeval tv = { .tv_sec = CONN_FIXTURE_IO_TIMEOUT_S };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;

	assert_true(fd >= 0);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/* A bound on every blocking call: a hang fails instead of waiting. */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (bufsize) {
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bufsize,
			   sizeof(bufsize));
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bufsize,
			   sizeof(bufsize));
	}
	assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	return fd;
}

void conn_fixture_write_all(int fd, const uint8_t *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR) {
			continue;
		}
		assert_true(n > 0);
		buf += n;
		len -= (size_t)n;
	}
}

bool conn_fixture_read_all(int fd, uint8_t *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = read(fd, buf, len);

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			return false;
		}
		buf += n;
		len -= (size_t)n;
	}
	return true;
}

size_t conn_fixture_read_reply(int fd, uint8_t *buf, size_t cap)
{
	uint8_t mark[4];
	uint32_t len;

	assert_true(conn_fixture_read_all(fd, mark, 4));
	len = rpc_wire_get_u32(mark);
	assert_true(len & RPC_RECORD_LAST_FRAGMENT);
	len &= ~RPC_RECORD_LAST_FRAGMENT;
	assert_true(len <= cap);
	assert_true(conn_fixture_read_all(fd, buf, len));
	return len;
}

uint32_t conn_fixture_read_echo(int fd, uint32_t *xid)
{
	uint8_t rep[64];
	uint32_t stat = 99;
	size_t off = 0;
	size_t len = conn_fixture_read_reply(fd, rep, sizeof(rep));

	assert_int_equal(rpc_reply_decode(rep, len, xid, &stat, &off), 0);
	assert_int_equal(stat, RPC_ACCEPT_SUCCESS);
	assert_int_equal(len, off + 4);
	return rpc_wire_get_u32(rep + off);
}

size_t conn_fixture_call_build(uint8_t *buf, uint32_t xid, uint32_t proc,
			       uint32_t arg)
{
	size_t n = rpc_call_encode(buf + 4, 40, xid, CONN_FIXTURE_PROG, 1, proc,
				   NULL, 0, 0);

	assert_int_equal(n, 40);
	buf[4 + n] = (uint8_t)(arg >> 24);
	buf[5 + n] = (uint8_t)(arg >> 16);
	buf[6 + n] = (uint8_t)(arg >> 8);
	buf[7 + n] = (uint8_t)arg;
	rpc_record_mark_encode(buf, (uint32_t)(n + 4));
	return n + 8;
}

void conn_fixture_gate(struct conn_fixture *f, bool closed)
{
	pthread_mutex_lock(&f->fill.lock);
	f->fill.gate_closed = closed;
	pthread_cond_broadcast(&f->fill.gate_cond);
	pthread_mutex_unlock(&f->fill.lock);
}

void conn_fixture_gate_wait(struct conn_fixture *f, unsigned n)
{
	struct timespec until;
	int rc = 0;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += CONN_FIXTURE_IO_TIMEOUT_S;
	pthread_mutex_lock(&f->fill.lock);
	while (f->fill.gate_waiting < n && rc == 0) {
		rc = pthread_cond_timedwait(&f->fill.gate_cond, &f->fill.lock,
					    &until);
	}
	pthread_mutex_unlock(&f->fill.lock);
	assert_true(rc == 0);
}

uint32_t conn_fixture_sums_wait(struct conn_fixture *f, unsigned n)
{
	struct timespec until;
	uint32_t last;
	int rc = 0;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += CONN_FIXTURE_IO_TIMEOUT_S;
	pthread_mutex_lock(&f->fill.lock);
	while (f->fill.sums_done < n && rc == 0) {
		rc = pthread_cond_timedwait(&f->fill.gate_cond, &f->fill.lock,
					    &until);
	}
	last = f->fill.last_sum;
	pthread_mutex_unlock(&f->fill.lock);
	assert_true(rc == 0);
	return last;
}

static void conn_fixture_put_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

size_t conn_fixture_sum_build(uint8_t *buf, uint32_t xid, uint32_t how,
			      const uint8_t *data, uint32_t len)
{
	size_t n = rpc_call_encode(buf + 4, 40, xid, CONN_FIXTURE_PROG, 1,
				   CONN_FIXTURE_SUM, NULL, 0, 0);
	size_t pos = 4 + n;

	assert_int_equal(n, 40);
	conn_fixture_put_u32(buf + pos, how);
	conn_fixture_put_u32(buf + pos + 4, len);
	pos += 8;
	memcpy(buf + pos, data, len);
	pos += len;
	while (pos % 4) {
		buf[pos++] = 0;
	}
	rpc_record_mark_encode(buf, (uint32_t)(pos - 4));
	return pos;
}
