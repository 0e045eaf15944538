// SPDX-License-Identifier: Apache-2.0
/*
 * conn_out: writing a conn's output queue (net_int.h, struct conn_out):
 * whole replies, each a head, an optional payload from a buffer or a file
 * segment, and its XDR padding, sent with sendmsg(2) (many replies in one
 * call) or sendfile(2) (READ zero copy), resumed where the socket's buffer
 * last filled.  A file that ends before its promised length is followed by
 * zeros.  conn.c decides when to write and what to do with the socket.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "nfsd/base/log.h"
#include "nfsd/net/net_int.h"
#include "nfsd/rpc/pool.h"

#define CONN_IOV_MAX 64
#define CONN_ZERO_CHUNK 65536 /* zeros sent at once for a short file */

/* Gives a written or dropped reply back to the loop's pool: its head, its
 * buffer or its file reference (dispatch.h: send takes rpc_bufs). */
static void conn_out_free(struct conn_out *o)
{
	rpc_buf_unref(o->buf);
	rpc_payload_release(&o->payload);
	rpc_buf_unref(o);
}

void net__conn_out_free_all(struct conn *c)
{
	struct conn_out *o = c->out_head;

	while (o) {
		struct conn_out *next = o->next;
		conn_out_free(o);
		o = next;
	}
	c->out_head = c->out_tail = NULL;
	c->out_bytes = 0;
	c->out_head_off = 0;
}

size_t net__conn_out_total(const struct conn_out *o)
{
	return o->len + o->payload.len + o->pad;
}

/*
 * Adds @o's in-memory segments past @off to iov; returns how many (at most
 * 3).  Stops at a file payload not yet sent, and sets *at_file then.
 */
static int conn_out_iov(const struct conn_out *o, size_t off, struct iovec *iov,
			bool *at_file)
{
	static const uint8_t zeros[4];
	const struct {
		const uint8_t *base;
		size_t len;
	} seg[3] = {
		{ o->buf, o->len },
		{ o->payload.buf, o->payload.len },
		{ zeros, o->pad },
	};
	int n = 0;

	for (int i = 0; i < 3; i++) {
		if (off >= seg[i].len) {
			off -= seg[i].len;
			continue;
		}
		if (i == 1 && !seg[i].base) {
			*at_file = true;
			break;
		}
		iov[n].iov_base = (void *)(seg[i].base + off);
		iov[n].iov_len = seg[i].len - off;
		off = 0;
		n++;
	}
	return n;
}

/* Sends @n iovecs; MSG_MORE when a file's data follows at once, so that
 * the head and the data share packets.  Returns bytes sent or -errno. */
static ssize_t conn_send_iov(int fd, struct iovec *iov, int n, bool more)
{
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = (size_t)n };
	ssize_t wrote;

	wrote = sendmsg(fd, &msg, MSG_NOSIGNAL | (more ? MSG_MORE : 0));
	return wrote < 0 ? -errno : wrote;
}

/*
 * Sends what is left of the head reply's file payload: from the page cache
 * with sendfile(2), or, once the file has ended before the promised length
 * (it shrank after the reply was sized), zeros: the record mark is out, and
 * the stream must carry exactly what it announced.  Returns bytes sent or
 * -errno.
 */
static ssize_t conn_send_file(struct conn *c)
{
	static const uint8_t zeros[CONN_ZERO_CHUNK];
	struct conn_out *o = c->out_head;
	size_t done = c->out_head_off - o->len;
	size_t left = o->payload.len - done;
	ssize_t n;

	if (!o->file_short) {
		off_t pos = (off_t)(o->payload.off_bytes + done);

		n = sendfile(c->fd, o->payload.fd, &pos, left);
		if (n != 0) {
			return n < 0 ? -errno : n;
		}
		o->file_short = true;
		log_debug("net: %s: file ended %zu bytes short of a reply; "
			  "zeros follow",
			  c->peer_str, left);
	}
	n = send(c->fd, zeros, left < sizeof(zeros) ? left : sizeof(zeros),
		 MSG_NOSIGNAL);
	return n < 0 ? -errno : n;
}

/* Drops @wrote sent bytes from the front of the queue. */
static void conn_out_advance(struct conn *c, size_t wrote)
{
	c->out_bytes -= wrote;
	while (wrote > 0) {
		struct conn_out *o = c->out_head;
		size_t left = net__conn_out_total(o) - c->out_head_off;

		if (wrote < left) {
			c->out_head_off += wrote;
			break;
		}
		wrote -= left;
		c->out_head = o->next;
		if (!c->out_head) {
			c->out_tail = NULL;
		}
		c->out_head_off = 0;
		conn_out_free(o);
	}
}

/*
 * Writes as much of the queue as the socket takes: the in-memory parts of
 * consecutive replies in one sendmsg, up to the next file payload, which
 * goes with sendfile.  Returns 0 (all sent, or the socket is full) or
 * -errno.
 */
int net__conn_flush(struct conn *c)
{
	while (c->out_head) {
		struct iovec iov[CONN_IOV_MAX];
		bool at_file = false;
		int n = 0;
		ssize_t wrote;

		for (struct conn_out *o = c->out_head;
		     o && !at_file && n + 3 <= CONN_IOV_MAX; o = o->next) {
			n += conn_out_iov(
				o, o == c->out_head ? c->out_head_off : 0,
				&iov[n], &at_file);
		}
		if (n > 0) {
			wrote = conn_send_iov(c->fd, iov, n, at_file);
		} else {
			wrote = conn_send_file(c);
		}
		if (wrote == -EINTR) {
			continue;
		}
		if (wrote == -EAGAIN || wrote == -EWOULDBLOCK) {
			return 0;
		}
		if (wrote < 0) {
			return (int)wrote;
		}
		conn_out_advance(c, (size_t)wrote);
	}
	return 0;
}
