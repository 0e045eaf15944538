// SPDX-License-Identifier: Apache-2.0
/*
 * pmapq: a blocking portmapper GETPORT over TCP (RFC 1833 3; RFC 5531 for
 * the call and reply headers and record marking).  The call is 60 bytes
 * and the reply one short record, so they are written and parsed by hand
 * rather than through a client library that would own the socket.
 */
#include "perf/dsload/pmapq.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "nfsd/base/base.h"

#define PMAPQ_PROG 100000
#define PMAPQ_VERS 2
#define PMAPQ_PROC_GETPORT 3
#define PMAPQ_IPPROTO_TCP 6
#define PMAPQ_REPLY_MAX 400 /* a GETPORT reply with the largest verifier */

static void pmapq_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t pmapq_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

size_t pmapq_call_encode(uint32_t xid, uint32_t prog, uint32_t vers,
			 uint8_t *buf)
{
	const uint32_t words[] = {
		0x80000000u | (PMAPQ_CALL_BYTES - 4), /* last fragment */
		xid,
		0, /* CALL */
		2, /* RPC version */
		PMAPQ_PROG,
		PMAPQ_VERS,
		PMAPQ_PROC_GETPORT,
		0, /* AUTH_NONE credential ... */
		0,
		0, /* ... and verifier */
		0,
		prog,
		vers,
		PMAPQ_IPPROTO_TCP,
		0, /* port: ignored */
	};

	for (size_t i = 0; i < ARRAY_SIZE(words); i++) {
		pmapq_put32(buf + 4 * i, words[i]);
	}
	return PMAPQ_CALL_BYTES;
}

int pmapq_reply_decode(const uint8_t *rec, size_t len, uint32_t xid,
		       uint16_t *port)
{
	uint32_t verf_len, value;
	size_t off;

	/* xid, REPLY, MSG_ACCEPTED, verifier flavor, verifier length */
	if (len < 20 || pmapq_get32(rec) != xid || pmapq_get32(rec + 4) != 1 ||
	    pmapq_get32(rec + 8) != 0) {
		return -EBADMSG;
	}
	verf_len = pmapq_get32(rec + 16);
	if (verf_len > 400) {
		return -EBADMSG;
	}
	off = 20 + ((verf_len + 3) & ~3u);
	/* accept_stat SUCCESS, then the port */
	if (len < off + 8 || pmapq_get32(rec + off) != 0) {
		return -EBADMSG;
	}
	value = pmapq_get32(rec + off + 4);
	if (value == 0) {
		return -EPROTONOSUPPORT;
	}
	if (value > 65535) {
		return -EBADMSG;
	}
	*port = (uint16_t)value;
	return 0;
}

static int64_t pmapq_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits for @events on @fd until @deadline_ms.  0, -ETIMEDOUT or -errno. */
static int pmapq_wait(int fd, short events, int64_t deadline_ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	int64_t left;
	int n;

	for (;;) {
		left = deadline_ms - pmapq_now_ms();
		if (left <= 0) {
			return -ETIMEDOUT;
		}
		n = poll(&p, 1, (int)left);
		if (n > 0) {
			return 0;
		}
		if (n == 0) {
			return -ETIMEDOUT;
		}
		if (errno != EINTR) {
			return -errno;
		}
	}
}

static int pmapq_connect(int fd, const struct sockaddr_in *pm,
			 int64_t deadline_ms)
{
	socklen_t elen = sizeof(int);
	int err = 0;

	if (connect(fd, (const struct sockaddr *)pm, sizeof(*pm)) == 0) {
		return 0;
	}
	if (errno != EINPROGRESS) {
		return -errno;
	}
	err = pmapq_wait(fd, POLLOUT, deadline_ms);
	if (err) {
		return err;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0) {
		return -errno;
	}
	return -err;
}

static int pmapq_send(int fd, const uint8_t *buf, size_t len,
		      int64_t deadline_ms)
{
	while (len) {
		ssize_t w = send(fd, buf, len, MSG_NOSIGNAL);
		int err;

		if (w > 0) {
			buf += w;
			len -= (size_t)w;
			continue;
		}
		if (w < 0 && errno != EAGAIN && errno != EINTR) {
			return -errno;
		}
		err = pmapq_wait(fd, POLLOUT, deadline_ms);
		if (err) {
			return err;
		}
	}
	return 0;
}

static int pmapq_recv(int fd, uint8_t *buf, size_t len, int64_t deadline_ms)
{
	while (len) {
		ssize_t r = recv(fd, buf, len, 0);
		int err;

		if (r > 0) {
			buf += r;
			len -= (size_t)r;
			continue;
		}
		if (r == 0) {
			return -ECONNRESET;
		}
		if (errno != EAGAIN && errno != EINTR) {
			return -errno;
		}
		err = pmapq_wait(fd, POLLIN, deadline_ms);
		if (err) {
			return err;
		}
	}
	return 0;
}

int pmapq_getport(const struct sockaddr_in *src, const struct sockaddr_in *pm,
		  uint32_t prog, uint32_t vers, int timeout_ms, uint16_t *port)
{
	int64_t deadline_ms = pmapq_now_ms() + timeout_ms;
	uint8_t call[PMAPQ_CALL_BYTES], rep[PMAPQ_REPLY_MAX], mark[4];
	uint32_t xid = (uint32_t)pmapq_now_ms() ^ 0x706d6170u, rlen;
	int fd, err;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		return -errno;
	}
	if (src && bind(fd, (const struct sockaddr *)src, sizeof(*src)) < 0) {
		err = -errno;
		goto out;
	}
	err = pmapq_connect(fd, pm, deadline_ms);
	if (err) {
		goto out;
	}
	err = pmapq_send(fd, call, pmapq_call_encode(xid, prog, vers, call),
			 deadline_ms);
	if (err) {
		goto out;
	}
	err = pmapq_recv(fd, mark, sizeof(mark), deadline_ms);
	if (err) {
		goto out;
	}
	rlen = pmapq_get32(mark);
	/* One last fragment, bounded: a GETPORT reply is never split. */
	if (!(rlen & 0x80000000u) || (rlen & 0x7fffffffu) > sizeof(rep)) {
		err = -EBADMSG;
		goto out;
	}
	rlen &= 0x7fffffffu;
	err = pmapq_recv(fd, rep, rlen, deadline_ms);
	if (!err) {
		err = pmapq_reply_decode(rep, rlen, xid, port);
	}
out:
	close(fd);
	return err;
}
