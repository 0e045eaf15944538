// SPDX-License-Identifier: Apache-2.0
/*
 * rpcping: the RPC round-trip ceiling of the benchmark (perf/bench/run.sh).
 *
 *   rpcping serve ADDR PORT
 *     answers every ONC RPC call (RFC 5531) on TCP with an empty accepted
 *     SUCCESS reply: the least work a server can do per call.  One thread,
 *     one epoll set, one read and one write per batch of calls.  Prints
 * "rpcping: listening on ADDR:PORT" once ready (PORT 0 picks a free one).  Runs
 * until killed.
 *
 *   rpcping call ADDR PORT PROG VERS CONNS DEPTH SECONDS
 *     opens CONNS TCP connections and keeps DEPTH NULL calls (procedure 0,
 *     AUTH_NONE) in flight on each, from one epoll thread (as qemu-img's one
 *     event loop does), for SECONDS.  Prints one line:
 *       calls=N seconds=S rate=R p50_us=X p99_us=Y errors=E
 *     and exits 1 if any reply was not an accepted SUCCESS.
 *
 * Records are assembled by nfsd/rpc/record.c and headers coded by
 * nfsd/rpc/msg.c (the pure half of the server's RPC layer, libdsrpc.a);
 * latencies go to dsload's histogram (perf/dsload/hist.c).
 */
#include "nfsd/rpc/msg.h"
#include "nfsd/rpc/record.h"
#include "perf/dsload/clock.h"
#include "perf/dsload/hist.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define RPCPING_MAX_RECORD 65536u
#define RPCPING_MAX_CONNS 256u
#define RPCPING_MAX_DEPTH 256u
#define RPCPING_IO_BYTES 65536u
#define RPCPING_CALL_MAX 64u /* mark + a 40-byte AUTH_NONE call header */
#define RPCPING_REPLY_MAX 36u /* mark + the 32 bytes msg.c may write */

/* One client connection and its DEPTH call slots. */
struct ping_conn {
	int fd;
	struct rpc_record rec;
	int64_t sent_ns[RPCPING_MAX_DEPTH];
	uint32_t gen[RPCPING_MAX_DEPTH];
	uint8_t out[RPCPING_MAX_DEPTH * RPCPING_CALL_MAX];
	size_t out_len;
};

/* The whole client run; conns is an array of CONNS entries (owned). */
struct ping_run {
	uint32_t prog;
	uint32_t vers;
	unsigned depth;
	unsigned nconns;
	struct ping_conn *conns;
	struct lat_hist hist;
	uint64_t calls;
	uint64_t errors;
};

/* Writes all of @buf (borrowed) to blocking @fd. Returns 0 or -errno. */
static int fd_write_all(int fd, const uint8_t *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(fd, buf + done, len - done);

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			return -errno;
		}
		done += (size_t)n;
	}
	return 0;
}

/* Fills @sa from dotted @addr and @port. Returns 0 or -EINVAL. */
static int sockaddr_parse(const char *addr, const char *port,
			  struct sockaddr_in *sa)
{
	char *end = NULL;
	unsigned long p = strtoul(port, &end, 10);

	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	if (*port == '\0' || *end != '\0' || p > 65535) {
		return -EINVAL;
	}
	sa->sin_port = htons((uint16_t)p);
	if (inet_pton(AF_INET, addr, &sa->sin_addr) != 1) {
		return -EINVAL;
	}
	return 0;
}

/* Parses a decimal in [lo, hi] from @s into *out. Returns 0 or -EINVAL. */
static int uint_parse(const char *s, unsigned long lo, unsigned long hi,
		      unsigned long *out)
{
	char *end = NULL;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (*s == '\0' || *end != '\0' || errno != 0 || v < lo || v > hi) {
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* Appends a reply for each complete call in @buf to @out. */
static int serve_feed(struct rpc_record *rec, const uint8_t *buf, size_t len,
		      uint8_t *out, size_t out_cap, size_t *out_len)
{
	size_t pos = 0;

	while (pos < len) {
		const uint8_t *call = NULL;
		size_t call_len = 0;
		size_t used = 0;
		struct rpc_call_header hdr;
		size_t n;
		int rc;

		rc = rpc_record_feed(rec, buf + pos, len - pos, &used, &call,
				     &call_len);
		if (rc < 0) {
			return rc;
		}
		pos += used;
		if (rc == 0) {
			break;
		}
		if (rpc_call_decode(call, call_len, &hdr) < 0) {
			return -EBADMSG;
		}
		if (out_cap - *out_len < RPCPING_REPLY_MAX) {
			return -ENOBUFS;
		}
		n = rpc_reply_accepted_encode(out + *out_len + 4,
					      out_cap - *out_len - 4, hdr.xid,
					      RPC_ACCEPT_SUCCESS, 0, 0);
		rpc_record_mark_encode(out + *out_len, (uint32_t)n);
		*out_len += 4 + n;
	}
	return 0;
}

/* A server connection; the listener has none (epoll data NULL). */
struct serve_conn {
	int fd;
	struct rpc_record rec;
};

static void serve_conn_free(struct serve_conn *c)
{
	close(c->fd);
	rpc_record_fini(&c->rec);
	free(c);
}

static int serve_accept(int lfd, int epfd)
{
	struct serve_conn *c;
	struct epoll_event ev = { .events = EPOLLIN };
	int one = 1;
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0) {
		return errno == EINTR || errno == ECONNABORTED ? 0 : -errno;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return 0;
	}
	c->fd = fd;
	rpc_record_init(&c->rec, RPCPING_MAX_RECORD);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	ev.data.ptr = c;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		serve_conn_free(c);
	}
	return 0;
}

/* One read on @c and the replies to what it completed; 0 or -errno. */
static int serve_conn_read(struct serve_conn *c, uint8_t *in, uint8_t *out,
			   size_t out_cap)
{
	size_t out_len = 0;
	ssize_t n = read(c->fd, in, RPCPING_IO_BYTES);
	int rc;

	if (n < 0) {
		return errno == EINTR ? 0 : -errno;
	}
	if (n == 0) {
		return -ECONNRESET;
	}
	rc = serve_feed(&c->rec, in, (size_t)n, out, out_cap, &out_len);
	if (rc < 0) {
		return rc;
	}
	return out_len > 0 ? fd_write_all(c->fd, out, out_len) : 0;
}

/* The server loop: one thread, one epoll set, as small as a server gets. */
static int serve_loop(int lfd)
{
	struct epoll_event evs[RPCPING_MAX_CONNS];
	struct epoll_event lev = { .events = EPOLLIN, .data.ptr = NULL };
	/* A read of RPCPING_IO_BYTES holds at most that many / 44 calls. */
	size_t out_cap = (RPCPING_IO_BYTES / 40 + 2) * RPCPING_REPLY_MAX;
	uint8_t *in = malloc(RPCPING_IO_BYTES);
	uint8_t *out = malloc(out_cap);
	int epfd = epoll_create1(EPOLL_CLOEXEC);
	int rc = 0;

	if (!in || !out || epfd < 0 ||
	    epoll_ctl(epfd, EPOLL_CTL_ADD, lfd, &lev) < 0) {
		rc = -ENOMEM;
		goto cleanup;
	}
	for (;;) {
		int n = epoll_wait(epfd, evs, RPCPING_MAX_CONNS, -1);

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			rc = -errno;
			goto cleanup;
		}
		for (int i = 0; i < n; i++) {
			struct serve_conn *c = evs[i].data.ptr;

			if (!c) {
				rc = serve_accept(lfd, epfd);
				if (rc < 0) {
					goto cleanup;
				}
				continue;
			}
			if (serve_conn_read(c, in, out, out_cap) < 0) {
				/* close() drops it from the epoll set */
				serve_conn_free(c);
			}
		}
	}
cleanup:
	if (epfd >= 0) {
		close(epfd);
	}
	free(out);
	free(in);
	return rc;
}

static int serve_main(const char *addr, const char *port)
{
	struct sockaddr_in sa;
	socklen_t sa_len = sizeof(sa);
	int one = 1;
	int lfd;
	int rc;

	rc = sockaddr_parse(addr, port, &sa);
	if (rc < 0) {
		fprintf(stderr, "rpcping: bad address %s:%s\n", addr, port);
		return 2;
	}
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(lfd, 1024) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&sa, &sa_len) < 0) {
		fprintf(stderr, "rpcping: listen %s:%s: %s\n", addr, port,
			strerror(errno));
		return 1;
	}
	printf("rpcping: listening on %s:%u\n", addr, ntohs(sa.sin_port));
	fflush(stdout);
	rc = serve_loop(lfd);
	fprintf(stderr, "rpcping: serve: %s\n", strerror(-rc));
	close(lfd);
	return 1;
}

/* Queues the call of @slot on @c; the xid carries the slot and its gen. */
static void ping_call_queue(struct ping_run *run, struct ping_conn *c,
			    unsigned slot)
{
	uint32_t xid = (c->gen[slot]++ << 8) | slot;
	size_t n;

	n = rpc_call_encode(c->out + c->out_len + 4,
			    sizeof(c->out) - c->out_len - 4, xid, run->prog,
			    run->vers, 0, NULL, 0, 0);
	rpc_record_mark_encode(c->out + c->out_len, (uint32_t)n);
	c->out_len += 4 + n;
	c->sent_ns[slot] = dsload_now_ns();
}

/* Flushes the queued calls of @c. Returns 0 or -errno. */
static int ping_conn_flush(struct ping_conn *c)
{
	int rc = fd_write_all(c->fd, c->out, c->out_len);

	c->out_len = 0;
	return rc;
}

/* Reads what @c has, counts its replies and queues the next calls. */
static int ping_conn_read(struct ping_run *run, struct ping_conn *c,
			  uint8_t *buf, bool again)
{
	ssize_t n = read(c->fd, buf, RPCPING_IO_BYTES);
	size_t pos = 0;

	if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
		return 0;
	}
	if (n < 0) {
		return -errno;
	}
	if (n == 0) {
		return -ECONNRESET;
	}
	while (pos < (size_t)n) {
		const uint8_t *rep = NULL;
		size_t rep_len = 0;
		size_t used = 0;
		uint32_t xid = 0;
		uint32_t stat = 0;
		size_t body = 0;
		unsigned slot;
		int rc;

		rc = rpc_record_feed(&c->rec, buf + pos, (size_t)n - pos, &used,
				     &rep, &rep_len);
		if (rc < 0) {
			return rc;
		}
		pos += used;
		if (rc == 0) {
			break;
		}
		rc = rpc_reply_decode(rep, rep_len, &xid, &stat, &body);
		slot = xid & 0xffu;
		if (rc < 0 || stat != RPC_ACCEPT_SUCCESS ||
		    slot >= run->depth) {
			run->errors++;
			if (slot >= run->depth) {
				continue;
			}
		}
		lat_hist_add(&run->hist,
			     (uint64_t)(dsload_now_ns() - c->sent_ns[slot]));
		run->calls++;
		if (again) {
			ping_call_queue(run, c, slot);
		}
	}
	return c->out_len > 0 ? ping_conn_flush(c) : 0;
}

static int ping_conns_open(struct ping_run *run, const struct sockaddr_in *sa,
			   int epfd)
{
	int one = 1;

	for (unsigned i = 0; i < run->nconns; i++) {
		struct ping_conn *c = &run->conns[i];
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };

		rpc_record_init(&c->rec, RPCPING_MAX_RECORD);
		c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (c->fd < 0 || connect(c->fd, (const struct sockaddr *)sa,
					 sizeof(*sa)) < 0) {
			return -errno;
		}
		setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev) < 0) {
			return -errno;
		}
	}
	return 0;
}

/* Runs the closed loop until @seconds pass, then drains. */
static int ping_run_loop(struct ping_run *run, int epfd, double seconds,
			 int64_t *elapsed_ns)
{
	struct epoll_event evs[RPCPING_MAX_CONNS];
	uint8_t *buf = malloc(RPCPING_IO_BYTES);
	int64_t start = dsload_now_ns();
	int64_t stop = start + (int64_t)(seconds * (double)DSLOAD_NS_PER_S);
	uint64_t expected;
	int rc = 0;

	if (!buf) {
		return -ENOMEM;
	}
	for (unsigned i = 0; i < run->nconns; i++) {
		for (unsigned s = 0; s < run->depth; s++) {
			ping_call_queue(run, &run->conns[i], s);
		}
		rc = ping_conn_flush(&run->conns[i]);
		if (rc < 0) {
			goto cleanup;
		}
	}
	for (;;) {
		bool again = dsload_now_ns() < stop;
		int n = epoll_wait(epfd, evs, RPCPING_MAX_CONNS, 1000);

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			rc = -errno;
			goto cleanup;
		}
		for (int i = 0; i < n; i++) {
			rc = ping_conn_read(run, evs[i].data.ptr, buf, again);
			if (rc < 0) {
				goto cleanup;
			}
		}
		if (!again) {
			*elapsed_ns = dsload_now_ns() - start;
			expected = 0;
			for (unsigned i = 0; i < run->nconns; i++) {
				for (unsigned s = 0; s < run->depth; s++) {
					expected += run->conns[i].gen[s];
				}
			}
			if (run->calls + run->errors >= expected) {
				break;
			}
			/* Calls still unanswered 5 s after the end: give up. */
			if (dsload_now_ns() - stop > 5 * DSLOAD_NS_PER_S) {
				rc = -ETIMEDOUT;
				goto cleanup;
			}
		}
	}
cleanup:
	free(buf);
	return rc;
}

static int call_main(char **argv)
{
	struct sockaddr_in sa;
	struct ping_run run = { 0 };
	unsigned long prog, vers, conns, depth, secs;
	int64_t elapsed_ns = 0;
	int epfd = -1;
	int rc;

	if (sockaddr_parse(argv[0], argv[1], &sa) < 0 ||
	    uint_parse(argv[2], 0, UINT32_MAX, &prog) < 0 ||
	    uint_parse(argv[3], 0, UINT32_MAX, &vers) < 0 ||
	    uint_parse(argv[4], 1, RPCPING_MAX_CONNS, &conns) < 0 ||
	    uint_parse(argv[5], 1, RPCPING_MAX_DEPTH, &depth) < 0 ||
	    uint_parse(argv[6], 1, 3600, &secs) < 0) {
		fprintf(stderr,
			"rpcping: bad arguments (CONNS 1..%u, DEPTH "
			"1..%u, SECONDS 1..3600)\n",
			RPCPING_MAX_CONNS, RPCPING_MAX_DEPTH);
		return 2;
	}
	run.prog = (uint32_t)prog;
	run.vers = (uint32_t)vers;
	run.nconns = (unsigned)conns;
	run.depth = (unsigned)depth;
	run.conns = calloc(run.nconns, sizeof(*run.conns));
	lat_hist_init(&run.hist);
	if (!run.conns) {
		return 1;
	}
	for (unsigned i = 0; i < run.nconns; i++) {
		run.conns[i].fd = -1;
	}
	epfd = epoll_create1(EPOLL_CLOEXEC);
	rc = epfd < 0 ? -errno : ping_conns_open(&run, &sa, epfd);
	if (rc == 0) {
		rc = ping_run_loop(&run, epfd, (double)secs, &elapsed_ns);
	}
	if (rc < 0) {
		fprintf(stderr, "rpcping: %s:%s: %s\n", argv[0], argv[1],
			strerror(-rc));
	} else {
		double s = dsload_ns_to_s(elapsed_ns);

		printf("calls=%llu seconds=%.3f rate=%.0f p50_us=%.1f "
		       "p99_us=%.1f errors=%llu\n",
		       (unsigned long long)run.calls, s,
		       s > 0 ? (double)run.calls / s : 0.0,
		       (double)lat_hist_percentile_ns(&run.hist, 50) / 1e3,
		       (double)lat_hist_percentile_ns(&run.hist, 99) / 1e3,
		       (unsigned long long)run.errors);
	}
	for (unsigned i = 0; i < run.nconns; i++) {
		if (run.conns[i].fd >= 0) {
			close(run.conns[i].fd);
		}
		rpc_record_fini(&run.conns[i].rec);
	}
	free(run.conns);
	if (epfd >= 0) {
		close(epfd);
	}
	return rc < 0 || run.errors > 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc == 4 && strcmp(argv[1], "serve") == 0) {
		return serve_main(argv[2], argv[3]);
	}
	if (argc == 9 && strcmp(argv[1], "call") == 0) {
		return call_main(argv + 2);
	}
	fprintf(stderr, "usage: rpcping serve ADDR PORT\n"
			"       rpcping call ADDR PORT PROG VERS CONNS DEPTH "
			"SECONDS\n");
	return 2;
}
