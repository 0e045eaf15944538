// SPDX-License-Identifier: Apache-2.0
/*
 * conn: one TCP connection on one worker loop.  It owns its input (record
 * reassembly) and its output queue.  Back-pressure: when too many requests
 * are in flight or too many reply bytes wait to be written, the conn stops
 * reading until the client catches up, so a client that never reads its
 * replies cannot make the server buffer without bound.  A reply's payload
 * may be a segment of a file (READ zero copy): it goes from the page cache
 * to the socket with sendfile(2), and its bytes count against the output
 * limit like buffered ones (they pin the file and its pages).
 *
 * Half-close: a peer that shuts down its write side (a script that sends
 * its calls, then shutdown(SHUT_WR)) still gets every reply.  At the end
 * of its input the conn stops reading (CONN_DRAINING), finishes the calls
 * read (run inline, deferred to work threads or waiting in a traffic
 * queue), writes out the queue, then closes.  The idle timeout bounds it:
 * a draining conn whose queue does not move for that long is closed, so a
 * peer that never reads cannot hold it.
 *
 * Input buffers: a record buffer is given back once the input holds no
 * partial record (rpc_record_trim), so an idle conn holds none whatever
 * the size of its last call.  Writing the output queue is conn_out.c's,
 * lending read buffers conn_lent.c's, closing an idle conn to admit
 * another conn_evict.c's.
 */
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "nfsd/base/base.h"
#include "nfsd/base/log.h"
#include "nfsd/base/sockaddr.h"
#include "nfsd/net/net_int.h"
#include "nfsd/rpc/pool.h"

static void conn_set_state(struct conn *c, enum conn_state state)
{
	if (c->state == state) {
		return;
	}
	switch (state) {
	case CONN_OPEN:
		ev_io_start(c->worker->loop, &c->read_watcher);
		/* Held input is consumed from the read callback, on the next
		 * loop iteration: the socket may have nothing new to read. */
		if (c->in_held_len) {
			ev_feed_event(c->worker->loop, &c->read_watcher,
				      EV_READ);
		}
		break;
	case CONN_PAUSED:
	case CONN_DRAINING:
		ev_io_stop(c->worker->loop, &c->read_watcher);
		break;
	case CONN_CLOSED:
		ev_io_stop(c->worker->loop, &c->read_watcher);
		ev_io_stop(c->worker->loop, &c->write_watcher);
		ev_timer_stop(c->worker->loop, &c->timer);
		break;
	}
	c->state = state;
}

void net__conn_ref(struct conn *c)
{
	c->refs++;
}

void net__conn_unref(struct conn *c)
{
	if (--c->refs > 0) {
		return;
	}
	net__flows_free(c);
	rpc_record_fini(&c->record);
	net__conn_out_free_all(c);
	free(c->in_held);
	free(c);
}

/* True when no further request may be dispatched on @c for now. */
static bool conn_over_limits(const struct conn *c)
{
	const struct net_limits *lim = &c->worker->net->limits;

	return c->inflight >= lim->max_inflight ||
	       c->out_bytes >= lim->max_output_bytes;
}

/* Pauses or resumes reading after anything that moves the limits. */
static void conn_update_reading(struct conn *c)
{
	bool over = conn_over_limits(c);

	if (c->state == CONN_OPEN && over) {
		conn_set_state(c, CONN_PAUSED);
	} else if (c->state == CONN_PAUSED && !over) {
		conn_set_state(c, CONN_OPEN);
	}
}

/* A draining conn whose calls are all answered and written closes.
 * Returns true when @c was closed. */
static bool conn_drain_check(struct conn *c)
{
	if (c->state != CONN_DRAINING || c->inflight > 0 || c->out_head) {
		return false;
	}
	log_debug("net: %s: half-closed peer answered; closing", c->peer_str);
	net__conn_close(c);
	return true;
}

void net__conn_close(struct conn *c)
{
	struct worker *w = c->worker;

	if (c->state == CONN_CLOSED) {
		return;
	}
	conn_set_state(c, CONN_CLOSED);
	close(c->fd);
	c->fd = -1;
	net__conn_lent_give(c);
	net__conn_out_free_all(c);
	if (c->prev) {
		c->prev->next = c->next;
	} else {
		w->conns = c->next;
	}
	if (c->next) {
		c->next->prev = c->prev;
	}
	c->prev = c->next = NULL;
	net__release_conn(w->net, (const struct sockaddr *)&c->peer, w->id,
			  c->spread);
	net__worker_trim_arm(w);
	log_debug("net: %s: closed", c->peer_str);
	/* Calls waiting for admission hold references: give them back
	 * before the conn's own. */
	net__flows_cancel(c);
	net__conn_unref(c);
}

/* Flushes, then arms or disarms the write watcher to match the queue. */
static void conn_output_kick(struct conn *c)
{
	size_t before = c->out_bytes;
	int err = net__conn_flush(c);

	if (err) {
		log_debug("net: %s: write failed: %s; closing", c->peer_str,
			  strerror(-err));
		net__conn_close(c);
		return;
	}
	if (c->out_head) {
		ev_io_start(c->worker->loop, &c->write_watcher);
	} else {
		ev_io_stop(c->worker->loop, &c->write_watcher);
	}
	if (c->out_bytes < before) {
		c->output_since = ev_now(c->worker->loop);
	}
	conn_update_reading(c);
	conn_drain_check(c);
}

static void conn_write_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct conn *c = container_of(w, struct conn, write_watcher);

	(void)loop;
	(void)revents;
	conn_output_kick(c);
}

static void conn_tops_send_payload(void *transport, uint8_t *buf, size_t len,
				   struct rpc_payload *payload)
{
	struct conn *c = transport;
	size_t pad = (4 - payload->len % 4) % 4;
	struct conn_out *o;

	if (c->state == CONN_CLOSED) {
		rpc_buf_unref(buf);
		rpc_payload_release(payload);
		return;
	}
	o = rpc_buf_alloc(c->worker->pool, sizeof(*o));
	if (!o) {
		rpc_buf_unref(buf);
		rpc_payload_release(payload);
		net__conn_close(c);
		return;
	}
	rpc_record_mark_encode(buf, (uint32_t)(len - RPC_REPLY_MARK_ROOM +
					       payload->len + pad));
	o->buf = buf;
	o->len = len;
	o->payload = *payload;
	memset(payload, 0, sizeof(*payload));
	payload->fd = -1;
	o->pad = pad;
	o->file_short = false;
	o->next = NULL;
	if (c->out_tail) {
		c->out_tail->next = o;
	} else {
		c->out_head = o;
		/* The stall clock starts when a reply starts waiting. */
		c->output_since = ev_now(c->worker->loop);
	}
	c->out_tail = o;
	c->out_bytes += net__conn_out_total(o);
	/* While a read's calls are dispatched, replies gather and leave in
	 * one sendmsg at the end, up to the first file payload (docs/bench.md:
	 * one writev per call was the cost of pipelined NULLs and small
	 * READs). */
	if (c->batching) {
		return;
	}
	conn_output_kick(c);
}

bool net__conn_output_hold(struct conn *c)
{
	if (c->batching) {
		return false;
	}
	net__conn_ref(c);
	c->batching = true;
	return true;
}

void net__conn_output_release(struct conn *c)
{
	c->batching = false;
	/* Also when nothing was queued: the kick re-checks reading and
	 * draining. */
	if (c->state != CONN_CLOSED) {
		conn_output_kick(c);
	}
	net__conn_unref(c);
}

static void conn_tops_send(void *transport, uint8_t *buf, size_t len)
{
	struct rpc_payload none = { .fd = -1 };

	conn_tops_send_payload(transport, buf, len, &none);
}

static void conn_tops_close(void *transport)
{
	net__conn_close(transport);
}

static void conn_tops_ref(void *transport)
{
	struct conn *c = transport;

	net__conn_ref(c);
	c->inflight++;
}

static void conn_tops_unref(void *transport)
{
	struct conn *c = transport;

	c->inflight--;
	if (c->state != CONN_CLOSED) {
		conn_update_reading(c);
		conn_drain_check(c);
	}
	net__conn_unref(c);
}

static void conn_tops_defer_done(void *transport, struct rpc_call *call)
{
	struct conn *c = transport;

	net_worker_defer_done(c->worker, call);
}

/* dispatch.h: the calls in flight, and one more when input follows. */
static unsigned conn_tops_backlog(void *transport)
{
	const struct conn *c = transport;

	return c->inflight + (c->input_more ? 1u : 0u);
}

const struct rpc_transport_ops net__conn_tops = {
	.send = conn_tops_send,
	.send_payload = conn_tops_send_payload,
	.close = conn_tops_close,
	.ref = conn_tops_ref,
	.unref = conn_tops_unref,
	.defer_done = conn_tops_defer_done,
	.backlog = conn_tops_backlog,
};

/* Hands one whole record to dispatch; @more: read input follows it. */
static void conn_dispatch(struct conn *c, const uint8_t *rec, size_t rec_len,
			  bool more)
{
	c->input_more = more;
	c->input_large = rec_len >= NET_DIRECT_MIN;
	rpc_dispatch_pooled(c->worker->net->dispatcher, c->worker->pool, rec,
			    rec_len, &net__conn_tops, c,
			    (const struct sockaddr *)&c->peer, c->peer_len);
}

/* Hands one whole record lying in @c's lent buffer to dispatch. */
static void conn_dispatch_lent(struct conn *c, const uint8_t *rec,
			       size_t rec_len, bool more)
{
	c->input_more = more;
	c->input_large = rec_len >= NET_DIRECT_MIN;
	c->worker->lent_records++;
	rpc_dispatch_lent(c->worker->net->dispatcher, c->worker->pool,
			  c->lent->buf, rec, rec_len, &net__conn_tops, c,
			  (const struct sockaddr *)&c->peer, c->peer_len);
}

/*
 * Feeds @data to @c's record (a copy) up to the end of the first record
 * and dispatches that; *used says how many bytes it took.  Returns 1 when
 * a record went, 0 when all of @data was taken and the record goes on,
 * -1 when the stream is bad (@c is closed).
 */
static int conn_feed_one(struct conn *c, const uint8_t *data, size_t len,
			 size_t *used)
{
	const uint8_t *rec;
	size_t rec_len;
	int rc = rpc_record_feed(&c->record, data, len, used, &rec, &rec_len);

	if (rc < 0) {
		log_warn("rpc: %s: %s (limit %zu bytes); closing", c->peer_str,
			 rc == -EMSGSIZE ? "record too large" : strerror(-rc),
			 c->record.max_bytes);
		net__conn_close(c);
		return -1;
	}
	if (rc == 0) {
		return 0;
	}
	c->lent_hint = rec_len + 4;
	conn_dispatch(c, rec, rec_len, *used < len);
	return 1;
}

/*
 * Hands complete records in @data to dispatch while @c is under its limits,
 * checked before every record: one read can hold thousands of calls, and
 * each may queue a large reply.  Returns the bytes used; the caller keeps
 * the rest for when the client has caught up.
 */
static size_t conn_consume(struct conn *c, const uint8_t *data, size_t len)
{
	size_t pos = 0;

	while (pos < len && c->state != CONN_CLOSED && !conn_over_limits(c)) {
		size_t used = 0;
		int rc = conn_feed_one(c, data + pos, len - pos, &used);

		if (rc < 0) {
			return len;
		}
		pos += used;
		if (rc == 0) {
			break;
		}
	}
	/* Between records: the buffer goes back (a request that keeps its
	 * record holds its own reference on it). */
	rpc_record_trim(&c->record);
	return pos;
}

/* Consumes held input; keeps what is still left. */
static void conn_consume_held(struct conn *c)
{
	size_t used = conn_consume(c, c->in_held, c->in_held_len);

	c->in_held_len -= used;
	if (c->in_held_len == 0) {
		free(c->in_held);
		c->in_held = NULL;
		return;
	}
	memmove(c->in_held, c->in_held + used, c->in_held_len);
}

/* Keeps @len bytes read while over the limits (a copy), to be consumed
 * before the socket is read again.  0 or -ENOMEM. */
static int conn_hold_input(struct conn *c, const uint8_t *data, size_t len)
{
	c->in_held = malloc(len);
	if (!c->in_held) {
		return -ENOMEM;
	}
	memcpy(c->in_held, data, len);
	c->in_held_len = len;
	return 0;
}

/* Consumes what was just read; holds what must wait.  0 or -ENOMEM. */
static int conn_consume_read(struct conn *c, const uint8_t *data, size_t len)
{
	size_t used = conn_consume(c, data, len);

	if (used == len || c->state == CONN_CLOSED) {
		return 0;
	}
	return conn_hold_input(c, data + used, len - used);
}

/*
 * Consumes what was just read into @c's lent buffer: whole records go to
 * dispatch from there; a record in fragments, or one the buffer cannot
 * hold, is fed to the record (copied), as is the rest of one that was;
 * the start of a record still arriving stays (the carry), and the next
 * read appends to it.  What the limits stop is held, as
 * conn_consume_read() holds it.  0 or -ENOMEM.
 */
static int conn_consume_lent(struct conn *c)
{
	while (c->lent_pos < c->lent_fill && c->state != CONN_CLOSED &&
	       !conn_over_limits(c)) {
		const uint8_t *data = c->lent->buf + c->lent_pos;
		size_t len = c->lent_fill - c->lent_pos, used = 0;
		struct rpc_record_lent next;

		if (!rpc_record_partial(&c->record)) {
			int err = rpc_record_lent_next(&c->record, data, len,
						       NET_LENT_BYTES, &next);

			if (err) {
				log_warn("rpc: %s: record too large (limit %zu "
					 "bytes); closing",
					 c->peer_str, c->record.max_bytes);
				net__conn_close(c);
				return 0;
			}
			/* A large record not all in goes the way large records
			 * go: its head copied, the rest read in place into its
			 * own buffer (rpc_record_direct), one read each, not a
			 * lent buffer's worth of them per read. */
			if (next.verdict == RPC_RECORD_LENT_MORE &&
			    next.need < NET_DIRECT_MIN) {
				break;
			}
			if (next.verdict == RPC_RECORD_LENT_WHOLE) {
				c->lent_pos += next.need;
				c->lent_hint = next.need;
				conn_dispatch_lent(c, next.rec, next.rec_len,
						   c->lent_pos < c->lent_fill);
				continue;
			}
		}
		if (conn_feed_one(c, data, len, &used) < 0) {
			return 0;
		}
		c->lent_pos += used;
	}
	rpc_record_trim(&c->record);
	if (c->state == CONN_CLOSED || c->lent_pos == c->lent_fill ||
	    !conn_over_limits(c)) {
		return 0;
	}
	/* Over the limits: the rest waits apart, and the buffer is free for
	 * others meanwhile. */
	size_t rest = c->lent_fill - c->lent_pos;
	int err = conn_hold_input(c, c->lent->buf + c->lent_pos, rest);

	c->lent_pos = c->lent_fill;
	return err;
}

/*
 * The next deadline: the idle timeout counts from the last byte read while
 * nothing is in flight; the record timeout from the first byte of a record
 * that has not ended.  One ev_timer re-armed with ev_timer_again serves both
 * (libev, "Be smart about timeouts").
 */
static void conn_timer_arm(struct conn *c, ev_tstamp now)
{
	const struct net_limits *lim = &c->worker->net->limits;
	ev_tstamp next = 0;

	if (lim->idle_timeout_ms) {
		next = c->last_activity + lim->idle_timeout_ms / 1000.0 - now;
		if (c->out_head) {
			ev_tstamp out = c->output_since +
					lim->idle_timeout_ms / 1000.0 - now;
			if (out < next) {
				next = out;
			}
		}
	}
	if (lim->record_timeout_ms && c->partial_since > 0) {
		ev_tstamp rec = c->partial_since +
				lim->record_timeout_ms / 1000.0 - now;
		if (next <= 0 || rec < next) {
			next = rec;
		}
	}
	if (!lim->idle_timeout_ms && c->partial_since == 0) {
		ev_timer_stop(c->worker->loop, &c->timer);
		return;
	}
	c->timer.repeat = next > 0.01 ? next : 0.01;
	ev_timer_again(c->worker->loop, &c->timer);
}

static void conn_timer_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct conn *c = container_of(t, struct conn, timer);
	const struct net_limits *lim = &c->worker->net->limits;
	ev_tstamp now = ev_now(loop);

	(void)revents;
	/* A peer that takes none of its replies for the idle timeout holds
	 * its output (up to max_output_bytes) and, paused, its calls: busy
	 * must not mean forever.  A slow reader moves output_since. */
	if (lim->idle_timeout_ms && c->out_head &&
	    now - c->output_since >= lim->idle_timeout_ms / 1000.0) {
		log_warn("net: %s: %sread no reply for %u ms; closing",
			 c->peer_str,
			 c->state == CONN_DRAINING ? "half-closed peer " : "",
			 lim->idle_timeout_ms);
		net__conn_close(c);
		return;
	}
	if (c->state == CONN_DRAINING) {
		c->last_activity = now; /* its calls run or its replies move */
		conn_timer_arm(c, now);
		return;
	}
	if (lim->record_timeout_ms && c->partial_since > 0 &&
	    now - c->partial_since >= lim->record_timeout_ms / 1000.0) {
		log_warn("net: %s: a record stayed incomplete for %u ms; "
			 "closing",
			 c->peer_str, lim->record_timeout_ms);
		net__conn_close(c);
		return;
	}
	if (lim->idle_timeout_ms && c->inflight == 0 && !c->out_head &&
	    now - c->last_activity >= lim->idle_timeout_ms / 1000.0) {
		log_debug("net: %s: idle for %u ms; closing", c->peer_str,
			  lim->idle_timeout_ms);
		net__conn_close(c);
		return;
	}
	if (c->inflight > 0 || c->out_head) {
		c->last_activity = now; /* busy is not idle */
	}
	conn_timer_arm(c, now);
}

/* Notes that bytes arrived, and whether a record is left half-read. */
static void conn_note_input(struct conn *c)
{
	ev_tstamp now = ev_now(c->worker->loop);

	c->last_activity = now;
	if (!rpc_record_partial(&c->record) && net__conn_lent_carry(c) == 0) {
		c->partial_since = 0;
	} else if (c->partial_since == 0) {
		c->partial_since = now;
	}
	conn_timer_arm(c, now);
}

/*
 * The peer shut down its write side: no call comes any more (a record left
 * half-sent never ends), but those read are answered before the close.
 */
static void conn_drain_start(struct conn *c)
{
	ev_tstamp now = ev_now(c->worker->loop);

	log_debug("net: %s: end of input; answering %u calls in flight",
		  c->peer_str, c->inflight);
	conn_set_state(c, CONN_DRAINING);
	rpc_record_fini(&c->record);
	net__conn_lent_give(c);
	c->partial_since = 0;
	c->last_activity = now;
	if (!conn_drain_check(c)) {
		conn_timer_arm(c, now);
	}
}

/*
 * One read: the rest of a large record's fragment straight into the
 * record's buffer (*direct bytes of the result), then into the conn's
 * lent buffer, or when none could be lent into the loop's read buffer:
 * all of it when calls are small (many per read), only the next record's
 * head after a large one (so that its data is read in place too).
 * *asked: the room offered.  Returns read(2)'s result (-1 with errno).
 */
static ssize_t conn_read_some(struct conn *c, size_t *direct, size_t *asked)
{
	struct iovec iov[2];
	size_t room = 0;
	uint8_t *at;
	int cnt = 0, err = net__conn_lent_prepare(c);
	ssize_t n;

	if (err) {
		errno = -err;
		return -1;
	}
	at = rpc_record_direct(&c->record, NET_DIRECT_MIN, &room);
	if (at) {
		iov[cnt].iov_base = at;
		iov[cnt++].iov_len = room;
	}
	if (c->lent) {
		iov[cnt].iov_base = c->lent->buf + c->lent_fill;
		iov[cnt++].iov_len = net__conn_lent_want(c);
	} else {
		iov[cnt].iov_base = c->worker->read_buf;
		iov[cnt++].iov_len =
			at || c->input_large ? NET_READ_HEAD : NET_READ_CHUNK;
	}
	*asked = room + iov[cnt - 1].iov_len;
	n = cnt == 1 ? read(c->fd, iov[0].iov_base, iov[0].iov_len)
		     : readv(c->fd, iov, cnt);
	*direct = n > 0 ? ((size_t)n < room ? (size_t)n : room) : 0;
	return n;
}

/*
 * Takes @n bytes just read, the first @direct of them already in the
 * record's buffer.  0 or -ENOMEM.
 */
static int conn_take_read(struct conn *c, size_t n, size_t direct)
{
	if (direct) {
		const uint8_t *rec;
		size_t rec_len;

		/* Reading means under the limits: no check before this
		 * record, as conn_consume makes before its first. */
		if (rpc_record_direct_done(&c->record, direct, &rec,
					   &rec_len)) {
			conn_dispatch(c, rec, rec_len, n > direct);
		}
		if (n == direct || c->state == CONN_CLOSED) {
			rpc_record_trim(&c->record);
			return 0;
		}
	}
	if (c->lent) {
		c->lent_fill += n - direct;
		return conn_consume_lent(c);
	}
	/* After a direct part, the rest is at the start of read_buf. */
	return conn_consume_read(c, c->worker->read_buf, n - direct);
}

/*
 * Reads up to NET_READ_CHUNK bytes per event, as one read when calls are
 * small; a stream of large records takes one read each (their data in
 * place), while the socket fills what is asked and the limits allow.
 */
static void conn_read_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct conn *c = container_of(w, struct conn, read_watcher);
	size_t budget = NET_READ_CHUNK;
	bool held = false;
	int err = 0;

	(void)loop;
	(void)revents;
	if (c->in_held_len) {
		net__conn_output_hold(c);
		held = true;
		conn_consume_held(c);
		budget = 0;
	}
	while (budget > 0) {
		size_t direct, asked;
		ssize_t n = conn_read_some(c, &direct, &asked);

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR ||
			    errno == EWOULDBLOCK) {
				break;
			}
			log_debug("net: %s: read failed: %s", c->peer_str,
				  strerror(errno));
			net__conn_close(c);
			if (!held) {
				return; /* c may be gone */
			}
			break;
		}
		if (n == 0) {
			conn_drain_start(c);
			if (!held) {
				return; /* c may be gone */
			}
			break;
		}
		/* The replies of this event leave together; the hold also
		 * keeps c alive, as dispatch may close it. */
		if (!held) {
			net__conn_output_hold(c);
			held = true;
		}
		err = conn_take_read(c, (size_t)n, direct);
		if (err) {
			net__conn_close(c);
			break;
		}
		budget = (size_t)n < budget ? budget - (size_t)n : 0;
		if ((size_t)n < asked || asked == NET_READ_CHUNK ||
		    c->state != CONN_OPEN || c->in_held_len ||
		    conn_over_limits(c)) {
			break;
		}
	}
	/* A conn at rest holds no lent buffer: others may read into it. */
	if (net__conn_lent_carry(c) == 0) {
		net__conn_lent_give(c);
	}
	if (!held) {
		return;
	}
	if (c->state != CONN_CLOSED) {
		conn_note_input(c);
	}
	net__conn_output_release(c);
}

void net__conn_open(struct worker *w, int fd, const struct sockaddr *peer,
		    socklen_t peer_len, unsigned spread)
{
	struct conn *c = calloc(1, sizeof(*c));
	int one = 1;

	if (!c) {
		close(fd);
		net__release_conn(w->net, peer, w->id, spread);
		return;
	}
	c->worker = w;
	c->fd = fd;
	c->spread = spread;
	c->refs = 1;
	c->state = CONN_PAUSED; /* conn_set_state(OPEN) starts reading */
	if (peer_len > sizeof(c->peer)) {
		peer_len = sizeof(c->peer);
	}
	memcpy(&c->peer, peer, peer_len);
	c->peer_len = peer_len;
	sockaddr_format((const struct sockaddr *)&c->peer, c->peer_str,
			sizeof(c->peer_str));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	rpc_record_init(&c->record, w->net->limits.max_record_bytes);
	rpc_record_set_pool(&c->record, w->pool);
	ev_io_init(&c->read_watcher, conn_read_cb, fd, EV_READ);
	ev_io_init(&c->write_watcher, conn_write_cb, fd, EV_WRITE);
	ev_init(&c->timer, conn_timer_cb);
	c->next = w->conns;
	if (w->conns) {
		w->conns->prev = c;
	}
	w->conns = c;
	conn_set_state(c, CONN_OPEN);
	conn_note_input(c);
	log_debug("net: %s: connected (worker %u)", c->peer_str, w->id);
}
