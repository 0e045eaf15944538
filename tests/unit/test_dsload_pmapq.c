// SPDX-License-Identifier: Apache-2.0
/*
 * test_dsload_pmapq: dsload's blocking portmapper GETPORT
 * (perf/dsload/pmapq.h): the call's bytes, the reply decoder's checks,
 * and a whole query against a listener in this process, refused and
 * answered.
 */
#include "perf/dsload/pmapq.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/* A reply to @xid: accepted, AUTH_NONE verifier of @verf_len bytes,
 * accept_stat @stat, port @port.  Returns its length. */
static size_t reply(uint8_t *buf, uint32_t xid, uint32_t verf_len,
		    uint32_t stat, uint32_t port)
{
	size_t off = 20 + ((verf_len + 3) & ~3u);

	memset(buf, 0, off + 8);
	put32(buf, xid);
	put32(buf + 4, 1);
	put32(buf + 16, verf_len);
	put32(buf + off, stat);
	put32(buf + off + 4, port);
	return off + 8;
}

static void test_pmapq_call_is_a_getport_record(void **state)
{
	uint8_t buf[PMAPQ_CALL_BYTES];

	(void)state;
	assert_int_equal(pmapq_call_encode(0x1234, 100003, 3, buf), 60);
	assert_int_equal(get32(buf), 0x80000000u | 56);
	assert_int_equal(get32(buf + 4), 0x1234);
	assert_int_equal(get32(buf + 16), 100000); /* portmapper */
	assert_int_equal(get32(buf + 20), 2);
	assert_int_equal(get32(buf + 24), 3); /* GETPORT */
	assert_int_equal(get32(buf + 44), 100003);
	assert_int_equal(get32(buf + 48), 3);
	assert_int_equal(get32(buf + 52), 6); /* TCP */
}

static void test_pmapq_reply_checks(void **state)
{
	uint8_t buf[64];
	uint16_t port = 0;
	size_t n;

	(void)state;
	n = reply(buf, 7, 0, 0, 2049);
	assert_int_equal(pmapq_reply_decode(buf, n, 7, &port), 0);
	assert_int_equal(port, 2049);
	n = reply(buf, 7, 6, 0, 4000); /* a verifier body, padded */
	assert_int_equal(pmapq_reply_decode(buf, n, 7, &port), 0);
	assert_int_equal(port, 4000);
	n = reply(buf, 7, 0, 0, 0);
	assert_int_equal(pmapq_reply_decode(buf, n, 7, &port),
			 -EPROTONOSUPPORT);
	n = reply(buf, 7, 0, 0, 70000);
	assert_int_equal(pmapq_reply_decode(buf, n, 7, &port), -EBADMSG);
	n = reply(buf, 7, 0, 1, 2049); /* PROG_UNAVAIL */
	assert_int_equal(pmapq_reply_decode(buf, n, 7, &port), -EBADMSG);
	n = reply(buf, 7, 0, 0, 2049);
	assert_int_equal(pmapq_reply_decode(buf, n, 8, &port), -EBADMSG);
	assert_int_equal(pmapq_reply_decode(buf, n - 1, 7, &port), -EBADMSG);
	put32(buf + 16, 1u << 30); /* a verifier longer than the record */
	assert_int_equal(pmapq_reply_decode(buf, n, 7, &port), -EBADMSG);
}

struct server {
	int lfd;
	uint32_t port; /* what it answers */
};

/* Accepts one connection, reads the call, answers with its xid. */
static void *serve_one(void *arg)
{
	struct server *s = arg;
	uint8_t call[PMAPQ_CALL_BYTES], rep[64];
	size_t got = 0, n;
	int fd = accept(s->lfd, NULL, NULL);

	if (fd < 0) {
		return NULL;
	}
	while (got < sizeof(call)) {
		ssize_t r = read(fd, call + got, sizeof(call) - got);

		if (r <= 0) {
			break;
		}
		got += (size_t)r;
	}
	n = reply(rep + 4, get32(call + 4), 0, 0, s->port);
	put32(rep, 0x80000000u | (uint32_t)n);
	if (write(fd, rep, n + 4) < 0) {
		got = 0;
	}
	close(fd);
	return NULL;
}

static void test_pmapq_getport_asks_a_listener(void **state)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	struct server s = { .port = 3049 };
	pthread_t t;
	uint16_t port = 0;

	(void)state;
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	s.lfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(s.lfd >= 0);
	assert_int_equal(bind(s.lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(s.lfd, (struct sockaddr *)&a, &alen), 0);
	assert_int_equal(listen(s.lfd, 1), 0);
	assert_int_equal(pthread_create(&t, NULL, serve_one, &s), 0);
	assert_int_equal(pmapq_getport(NULL, &a, 100003, 3, 5000, &port), 0);
	assert_int_equal(port, 3049);
	pthread_join(t, NULL);
	/* Nothing listens any more: refused at once. */
	close(s.lfd);
	assert_int_equal(pmapq_getport(NULL, &a, 100003, 3, 5000, &port),
			 -ECONNREFUSED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pmapq_call_is_a_getport_record),
		cmocka_unit_test(test_pmapq_reply_checks),
		cmocka_unit_test(test_pmapq_getport_asks_a_listener),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
