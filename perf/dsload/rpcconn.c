// SPDX-License-Identifier: Apache-2.0
/*
 * rpcconn: an RPC client connection on a libev loop (see rpcconn.h).  Calls are
 * queued by rpcconn_submit() and written by one ev_prepare pass per loop
 * iteration, so the calls that one batch of replies triggers leave in one
 * writev(); replies are reassembled by rpc/record.c and matched by XID
 * through a chained hash.
 */
#include "perf/dsload/rpcconn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "nfsd/base/base.h"
#include "nfsd/rpc/msg.h"
#include "perf/dsload/clock.h"

#define RPCCONN_RBUF_BYTES (256u * 1024u)
#define RPCCONN_IOV_MAX 64
#define RPCCONN_TICK_S 0.25
#define RPCCONN_BACKOFF_MIN_MS 50
#define RPCCONN_BACKOFF_MAX_MS 1000
#define RPCCONN_HASH_MIN 64
#define RPCCONN_RESVPORT_LOW 512
#define RPCCONN_RESVPORT_HIGH 1023

void rpcconn_opts_default(struct rpcconn_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->connect_timeout_ms = 3000;
	o->call_timeout_ms = 30000;
	o->reconnect_ms = 60000;
}

/* ---- lists and the XID hash ------------------------------------------ */

static void list_append(struct rpcconn_call **head, struct rpcconn_call **tail,
			struct rpcconn_call *call)
{
	call->next = NULL;
	call->prev = *tail;
	if (*tail) {
		(*tail)->next = call;
	} else {
		*head = call;
	}
	*tail = call;
}

static void list_unlink(struct rpcconn_call **head, struct rpcconn_call **tail,
			struct rpcconn_call *call)
{
	if (call->prev) {
		call->prev->next = call->next;
	} else {
		*head = call->next;
	}
	if (call->next) {
		call->next->prev = call->prev;
	} else {
		*tail = call->prev;
	}
	call->prev = NULL;
	call->next = NULL;
}

static int hash_grow(struct rpcconn *c)
{
	size_t cap = c->hash_cap ? c->hash_cap * 2 : RPCCONN_HASH_MIN;
	struct rpcconn_call **h = calloc(cap, sizeof(*h));

	if (!h) {
		return -ENOMEM;
	}
	for (size_t i = 0; i < c->hash_cap; i++) {
		struct rpcconn_call *call = c->hash[i], *next;

		for (; call; call = next) {
			next = call->hnext;
			call->hnext = h[call->xid & (cap - 1)];
			h[call->xid & (cap - 1)] = call;
		}
	}
	free(c->hash);
	c->hash = h;
	c->hash_cap = cap;
	return 0;
}

static void hash_insert(struct rpcconn *c, struct rpcconn_call *call)
{
	struct rpcconn_call **slot = &c->hash[call->xid & (c->hash_cap - 1)];

	call->hnext = *slot;
	*slot = call;
}

/* Removes @xid's call from the hash; returns it, or NULL if unknown. */
static struct rpcconn_call *hash_take(struct rpcconn *c, uint32_t xid)
{
	struct rpcconn_call **pp = &c->hash[xid & (c->hash_cap - 1)];

	for (; *pp; pp = &(*pp)->hnext) {
		struct rpcconn_call *call = *pp;

		if (call->xid == xid) {
			*pp = call->hnext;
			call->hnext = NULL;
			return call;
		}
	}
	return NULL;
}

/* Takes @call out of every structure of @c; it is idle afterwards. */
static void rpcconn_call_detach(struct rpcconn *c, struct rpcconn_call *call)
{
	if (call->state == RPCCONN_CALL_QUEUED) {
		list_unlink(&c->qhead, &c->qtail, call);
	} else if (call->state == RPCCONN_CALL_SENT) {
		list_unlink(&c->shead, &c->stail, call);
	}
	if (call->state != RPCCONN_CALL_IDLE) {
		hash_take(c, call->xid);
		c->pending--;
	}
	call->state = RPCCONN_CALL_IDLE;
}

/* ---- failing calls ----------------------------------------------------- */

/* Fails the calls pending now with @err; calls submitted by their
 * callbacks wait for the next pass. */
static void rpcconn_fail_all(struct rpcconn *c, int err)
{
	struct rpcconn_call *batch = NULL, *tail = NULL, *call;

	while ((call = c->shead ? c->shead : c->qhead)) {
		rpcconn_call_detach(c, call);
		list_append(&batch, &tail, call);
	}
	while ((call = batch)) {
		batch = call->next;
		call->next = NULL;
		call->prev = NULL;
		call->done(call, err, NULL, 0);
	}
}

/* ---- connecting --------------------------------------------------------- */

static void rpcconn_rio_cb(struct ev_loop *loop, ev_io *w, int revents);
static void rpcconn_wio_cb(struct ev_loop *loop, ev_io *w, int revents);

static void rpcconn_timer_set(struct rpcconn *c, double after_s)
{
	ev_timer_stop(c->loop, &c->timer);
	ev_timer_set(&c->timer, after_s, 0.0);
	ev_timer_start(c->loop, &c->timer);
}

static void rpcconn_flush_start(struct rpcconn *c)
{
	if (!ev_is_active(&c->flush)) {
		ev_prepare_start(c->loop, &c->flush);
	}
}

static void rpcconn_fd_close(struct rpcconn *c)
{
	ev_io_stop(c->loop, &c->rio);
	ev_io_stop(c->loop, &c->wio);
	if (c->fd >= 0) {
		close(c->fd);
	}
	c->fd = -1;
}

/*
 * Binds the host's source address; with resvport, a port below 1024 as
 * ESXi and the Linux client use (bindresvport's range, 512..1023, each
 * host address having its own).  Returns 0 or -1 with errno set.
 */
static int rpcconn_bind(struct rpcconn *c, int fd)
{
	struct sockaddr_in src = c->opts.src;

	if (!c->opts.resvport) {
		return bind(fd, (const struct sockaddr *)&src, sizeof(src));
	}
	for (int port = RPCCONN_RESVPORT_HIGH; port >= RPCCONN_RESVPORT_LOW;
	     port--) {
		src.sin_port = htons((uint16_t)port);
		if (bind(fd, (const struct sockaddr *)&src, sizeof(src)) == 0) {
			return 0;
		}
		if (errno != EADDRINUSE) {
			return -1;
		}
	}
	errno = EADDRINUSE;
	return -1;
}

/* Starts one connect attempt.  Returns 0 (connected or in progress) or
 * -errno. */
static int rpcconn_connect_start(struct rpcconn *c)
{
	int fd, one = 1;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		return -errno;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (rpcconn_bind(c, fd) < 0) {
		goto fail;
	}
	if (connect(fd, (const struct sockaddr *)&c->opts.dst,
		    sizeof(c->opts.dst)) < 0 &&
	    errno != EINPROGRESS) {
		goto fail;
	}
	c->fd = fd;
	c->state = RPCCONN_CONNECTING;
	ev_io_set(&c->rio, fd, EV_READ);
	ev_io_set(&c->wio, fd, EV_WRITE);
	ev_io_start(c->loop, &c->wio);
	rpcconn_timer_set(c, c->opts.connect_timeout_ms / 1000.0);
	return 0;
fail:
	one = -errno;
	close(fd);
	return one;
}

static void rpcconn_give_up(struct rpcconn *c, int err)
{
	rpcconn_fd_close(c);
	ev_timer_stop(c->loop, &c->timer);
	c->state = RPCCONN_DEAD;
	c->last_err = err;
	rpcconn_fail_all(c, err);
}

/* A connect attempt failed with @err. */
static void rpcconn_connect_failed(struct rpcconn *c, int err)
{
	rpcconn_fd_close(c);
	c->last_err = err;
	if (!c->ever_up ||
	    dsload_now_ns() - c->down_since_ns >=
		    (int64_t)c->opts.reconnect_ms * DSLOAD_NS_PER_MS) {
		rpcconn_give_up(c, err);
		return;
	}
	c->state = RPCCONN_DOWN;
	rpcconn_timer_set(c, c->backoff_ms / 1000.0);
	c->backoff_ms *= 2;
	if (c->backoff_ms > RPCCONN_BACKOFF_MAX_MS) {
		c->backoff_ms = RPCCONN_BACKOFF_MAX_MS;
	}
}

static void rpcconn_connected(struct rpcconn *c)
{
	if (c->ever_up) {
		c->counters.reconnects++;
	}
	c->ever_up = true;
	c->state = RPCCONN_UP;
	c->backoff_ms = RPCCONN_BACKOFF_MIN_MS;
	ev_io_stop(c->loop, &c->wio);
	ev_io_start(c->loop, &c->rio);
	rpcconn_timer_set(c, RPCCONN_TICK_S);
	rpcconn_flush_start(c);
}

/* The connection broke: everything unanswered goes back to the queue,
 * in its original order, for the next connection. */
static void rpcconn_break(struct rpcconn *c, int err)
{
	struct rpcconn_call *call;

	rpcconn_fd_close(c);
	rpc_record_fini(&c->rec);
	rpc_record_init(&c->rec, RPC_RECORD_DEFAULT_MAX);
	while ((call = c->stail)) {
		list_unlink(&c->shead, &c->stail, call);
		call->state = RPCCONN_CALL_QUEUED;
		call->next = c->qhead;
		call->prev = NULL;
		if (c->qhead) {
			c->qhead->prev = call;
		} else {
			c->qtail = call;
		}
		c->qhead = call;
		c->counters.resent++;
	}
	for (call = c->qhead; call; call = call->next) {
		call->sent = 0;
	}
	c->counters.breaks++;
	c->last_err = err;
	c->down_since_ns = dsload_now_ns();
	c->state = RPCCONN_DOWN;
	c->backoff_ms = RPCCONN_BACKOFF_MIN_MS;
	rpcconn_timer_set(c, c->backoff_ms / 1000.0);
}

/* "127.0.1.1 -> 127.0.0.1:2049", for messages. */
static void rpcconn_name_set(struct rpcconn *c)
{
	char src[INET_ADDRSTRLEN], dst[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &c->opts.src.sin_addr, src, sizeof(src));
	inet_ntop(AF_INET, &c->opts.dst.sin_addr, dst, sizeof(dst));
	snprintf(c->name, sizeof(c->name), "%s -> %s:%u", src, dst,
		 ntohs(c->opts.dst.sin_port));
}

/* The server may have come back elsewhere: ask where, before connecting
 * again. */
static void rpcconn_redirect(struct rpcconn *c)
{
	uint16_t before = c->opts.dst.sin_port;

	c->opts.redirect(c->opts.redirect_arg, &c->opts.dst);
	if (c->opts.dst.sin_port != before) {
		rpcconn_name_set(c);
	}
}

static void rpcconn_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct rpcconn *c = container_of(w, struct rpcconn, timer);
	int err;

	(void)loop;
	(void)revents;
	switch (c->state) {
	case RPCCONN_CONNECTING:
		rpcconn_connect_failed(c, -ETIMEDOUT);
		break;
	case RPCCONN_DOWN:
		if (c->opts.redirect) {
			rpcconn_redirect(c);
		}
		err = rpcconn_connect_start(c);
		if (err) {
			rpcconn_connect_failed(c, err);
		}
		break;
	case RPCCONN_UP:
		if (c->shead && dsload_now_ns() - c->shead->sent_ns >=
					(int64_t)c->opts.call_timeout_ms *
						DSLOAD_NS_PER_MS) {
			c->counters.timeouts++;
			rpcconn_break(c, -ETIMEDOUT);
			break;
		}
		rpcconn_timer_set(c, RPCCONN_TICK_S);
		break;
	case RPCCONN_DEAD:
		break;
	}
}

/* ---- sending ------------------------------------------------------------ */

static void rpcconn_send(struct rpcconn *c)
{
	struct iovec iov[RPCCONN_IOV_MAX];
	struct rpcconn_call *call;
	int n = 0;
	ssize_t w;
	size_t left;

	while (c->qhead) {
		n = 0;
		for (call = c->qhead; call && n < RPCCONN_IOV_MAX;
		     call = call->next) {
			iov[n].iov_base = call->buf + call->sent;
			iov[n].iov_len = call->len - call->sent;
			n++;
		}
		w = writev(c->fd, iov, n);
		if (w < 0 && errno == EINTR) {
			continue;
		}
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			ev_io_start(c->loop, &c->wio);
			return;
		}
		if (w < 0) {
			rpcconn_break(c, -errno);
			return;
		}
		left = (size_t)w;
		while ((call = c->qhead) && left > 0) {
			size_t rest = call->len - call->sent;

			if (left < rest) {
				call->sent += left;
				break;
			}
			left -= rest;
			call->sent = call->len;
			list_unlink(&c->qhead, &c->qtail, call);
			call->state = RPCCONN_CALL_SENT;
			call->sent_ns = dsload_now_ns();
			list_append(&c->shead, &c->stail, call);
		}
	}
	ev_io_stop(c->loop, &c->wio);
}

static void rpcconn_flush_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
	struct rpcconn *c = container_of(w, struct rpcconn, flush);

	(void)revents;
	ev_prepare_stop(loop, w);
	if (c->state == RPCCONN_UP) {
		rpcconn_send(c);
	} else if (c->state == RPCCONN_DEAD) {
		rpcconn_fail_all(c, c->last_err);
	}
}

static void rpcconn_wio_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct rpcconn *c = container_of(w, struct rpcconn, wio);
	int err = 0;
	socklen_t len = sizeof(err);

	(void)loop;
	(void)revents;
	if (c->state == RPCCONN_CONNECTING) {
		if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0) {
			err = errno;
		}
		if (err) {
			rpcconn_connect_failed(c, -err);
		} else {
			rpcconn_connected(c);
		}
		return;
	}
	if (c->state == RPCCONN_UP) {
		rpcconn_send(c);
	}
}

/* ---- receiving ---------------------------------------------------------- */

/* One reply record: find its call and complete it. */
static void rpcconn_deliver(struct rpcconn *c, const uint8_t *rec, size_t len)
{
	struct rpcconn_call *call;
	uint32_t xid, type, stat = 0;
	size_t body_off = 0;
	int err;

	if (rpc_msg_peek(rec, len, &xid, &type) || type != RPC_MSG_REPLY) {
		return;
	}
	call = hash_take(c, xid);
	if (!call) {
		return; /* a reply to a call already cancelled */
	}
	err = rpc_reply_decode(rec, len, &xid, &stat, &body_off);
	if (!err && stat != RPC_ACCEPT_SUCCESS) {
		err = -EPROTO;
	}
	if (call->state == RPCCONN_CALL_QUEUED) {
		list_unlink(&c->qhead, &c->qtail, call);
	} else {
		list_unlink(&c->shead, &c->stail, call);
	}
	call->state = RPCCONN_CALL_IDLE;
	c->pending--;
	if (err) {
		call->done(call, err, NULL, 0);
	} else {
		call->done(call, 0, rec + body_off, len - body_off);
	}
}

static void rpcconn_rio_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct rpcconn *c = container_of(w, struct rpcconn, rio);
	int fd = c->fd;

	(void)loop;
	(void)revents;
	for (int round = 0; round < 16; round++) {
		ssize_t n = read(fd, c->rbuf, c->rbuf_cap);
		size_t off = 0;

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			return;
		}
		if (n <= 0) {
			rpcconn_break(c, n == 0 ? -ECONNRESET : -errno);
			return;
		}
		while (off < (size_t)n) {
			const uint8_t *rec;
			size_t used = 0, rlen;
			int r = rpc_record_feed(&c->rec, c->rbuf + off,
						(size_t)n - off, &used, &rec,
						&rlen);

			off += used;
			if (r < 0) {
				rpcconn_break(c, r);
				return;
			}
			if (r == 0) {
				break;
			}
			rpcconn_deliver(c, rec, rlen);
			/* A callback may have reset the connection. */
			if (c->fd != fd || c->state != RPCCONN_UP) {
				return;
			}
		}
		if ((size_t)n < c->rbuf_cap) {
			return;
		}
	}
}

/* ---- public ------------------------------------------------------------- */

int rpcconn_open(struct rpcconn *c, struct ev_loop *loop,
		 const struct rpcconn_opts *opts)
{
	int err;

	memset(c, 0, sizeof(*c));
	c->loop = loop;
	c->opts = *opts;
	c->fd = -1;
	snprintf(c->machine, sizeof(c->machine), "%s",
		 opts->machine ? opts->machine : "dsload");
	c->opts.machine = c->machine;
	rpcconn_name_set(c);
	c->xid_next = (uint32_t)dsload_now_ns() ^
		      ((uint32_t)ntohl(opts->src.sin_addr.s_addr) << 16);
	c->backoff_ms = RPCCONN_BACKOFF_MIN_MS;
	c->rbuf_cap = RPCCONN_RBUF_BYTES;
	c->rbuf = malloc(c->rbuf_cap);
	if (!c->rbuf) {
		return -ENOMEM;
	}
	err = hash_grow(c);
	if (err) {
		goto fail_rbuf;
	}
	rpc_record_init(&c->rec, RPC_RECORD_DEFAULT_MAX);
	ev_io_init(&c->rio, rpcconn_rio_cb, -1, EV_READ);
	ev_io_init(&c->wio, rpcconn_wio_cb, -1, EV_WRITE);
	ev_timer_init(&c->timer, rpcconn_timer_cb, 0.0, 0.0);
	ev_prepare_init(&c->flush, rpcconn_flush_cb);
	err = rpcconn_connect_start(c);
	if (err) {
		goto fail_rec;
	}
	return 0;
fail_rec:
	rpc_record_fini(&c->rec);
	free(c->hash);
fail_rbuf:
	free(c->rbuf);
	c->rbuf = NULL;
	return err;
}

void rpcconn_close(struct rpcconn *c)
{
	if (!c->rbuf) {
		return;
	}
	rpcconn_fd_close(c);
	ev_timer_stop(c->loop, &c->timer);
	ev_prepare_stop(c->loop, &c->flush);
	c->state = RPCCONN_DEAD;
	c->last_err = -ECANCELED;
	rpcconn_fail_all(c, -ECANCELED);
	rpc_record_fini(&c->rec);
	free(c->hash);
	free(c->rbuf);
	c->hash = NULL;
	c->rbuf = NULL;
}

size_t rpcconn_call_begin(struct rpcconn *c, struct rpcconn_call *call,
			  uint32_t prog, uint32_t vers, uint32_t proc)
{
	size_t n;

	if (call->cap < 4) {
		return 0;
	}
	call->xid = c->xid_next++;
	n = rpc_call_encode(call->buf + 4, call->cap - 4, call->xid, prog, vers,
			    proc, c->machine, 0, 0);
	return n ? 4 + n : 0;
}

int rpcconn_submit(struct rpcconn *c, struct rpcconn_call *call, size_t len,
		   rpcconn_done_fn done)
{
	if (call->state != RPCCONN_CALL_IDLE || len <= 4 || len > call->cap ||
	    len - 4 > RPC_RECORD_DEFAULT_MAX) {
		return -EINVAL;
	}
	if (c->pending + 1 > c->hash_cap && hash_grow(c)) {
		return -ENOMEM;
	}
	rpc_record_mark_encode(call->buf, (uint32_t)(len - 4));
	call->len = len;
	call->sent = 0;
	call->done = done;
	call->state = RPCCONN_CALL_QUEUED;
	call->submit_ns = dsload_now_ns();
	hash_insert(c, call);
	c->pending++;
	c->counters.calls++;
	list_append(&c->qhead, &c->qtail, call);
	rpcconn_flush_start(c);
	return 0;
}

void rpcconn_cancel(struct rpcconn *c, struct rpcconn_call *call)
{
	bool cut = call->state == RPCCONN_CALL_QUEUED && call->sent > 0 &&
		   call->sent < call->len;

	rpcconn_call_detach(c, call);
	if (cut && c->state == RPCCONN_UP) {
		rpcconn_break(c, -ECANCELED);
	}
}
