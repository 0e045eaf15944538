// SPDX-License-Identifier: Apache-2.0
/*
 * test_admin_http: the admin endpoint over real loopback sockets
 * (nfsd/admin/http.c, libmicrohttpd): status lines, headers, a body past
 * ADMIN_BODY_MAX_BYTES refused with 413, bad addresses and ports in use,
 * and the refusals of auth.c as HTTP sends them: 421 for a foreign Host,
 * 401 with WWW-Authenticate without the token, 403 cross-origin.  A head
 * written with "Host: x" is sent with the endpoint's Host and the token.
 */
#include "tests/lib/admin_fixture.h"
#include "nfsd/admin/auth.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

struct http_fixture {
	struct admin_fixture *fx;
	struct admin *adm;
	int port;
};

/* The token admin_start() made in the fixture's directory. */
static char test_token[ADMIN_TOKEN_HEX_LEN + 1];

static int setup(void **state)
{
	struct http_fixture *h = calloc(1, sizeof(*h));
	char err[300], path[128];

	assert_non_null(h);
	h->fx = admin_fixture_new();
	assert_int_equal(admin_start(&h->fx->api.ctx, "127.0.0.1", 0, &h->port,
				     &h->adm, err, sizeof(err)),
			 0);
	assert_true(h->port > 0);
	snprintf(path, sizeof(path), "%s/" ADMIN_TOKEN_FILE_NAME, h->fx->dir);
	assert_int_equal(admin_token_read(path, test_token, err, sizeof(err)),
			 0);
	*state = h;
	return 0;
}

static int teardown(void **state)
{
	struct http_fixture *h = *state;

	admin_stop(h->adm);
	admin_fixture_free(h->fx);
	free(h);
	return 0;
}

static int connect_to(int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	return fd;
}

/* Sends @head then @body_len bytes of @body (or of 'x' when NULL); reads
 * the whole answer (the server closes).  Returns it, owned. */
static char *http(int port, const char *head, const char *body, size_t body_len)
{
	static const char xs[4096] = { [0 ... 4095] = 'x' };
	size_t cap = 65536, len = 0;
	char *out = malloc(cap), full[2048];
	const char *x = strstr(head, "Host: x\r\n");
	int fd = connect_to(port);
	ssize_t n;

	assert_non_null(out);
	if (x) {
		snprintf(full, sizeof(full),
			 "%.*sHost: 127.0.0.1\r\nAuthorization: Bearer "
			 "%s\r\n%s",
			 (int)(x - head), head, test_token, x + 9);
		head = full;
	}
	assert_int_equal(send(fd, head, strlen(head), MSG_NOSIGNAL),
			 (ssize_t)strlen(head));
	for (size_t sent = 0; sent < body_len; sent += (size_t)n) {
		size_t chunk = body_len - sent;

		if (chunk > sizeof(xs)) {
			chunk = sizeof(xs);
		}
		/* The server may answer and close early: then EPIPE, not a
		 * SIGPIPE that would end the test (a loaded machine makes
		 * that likely, a quiet one rare). */
		n = send(fd, body ? body + sent : xs, chunk, MSG_NOSIGNAL);
		if (n <= 0) {
			break;
		}
	}
	while ((n = read(fd, out + len, cap - len - 1)) > 0) {
		len += (size_t)n;
	}
	out[len] = '\0';
	close(fd);
	return out;
}

static void assert_has(const char *text, const char *needle)
{
	if (!strstr(text, needle)) {
		fail_msg("'%s' not in:\n%s", needle, text);
	}
}

static void test_get_and_post_over_http(void **state)
{
	struct http_fixture *h = *state;
	static const char body[] =
		"{\"name\": \"p1\", \"level\": \"ultra\", \"size_tib\": 2}";
	char head[512], *r;

	r = http(h->port,
		 "GET /pools HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
		 NULL, 0);
	assert_has(r, "HTTP/1.1 200 OK\r\n");
	assert_has(r, "Content-Type: application/json\r\n");
	assert_has(r, "\r\n\r\n{\"pools\":[]}\n");
	free(r);

	snprintf(head, sizeof(head),
		 "POST /pools HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
		 "Content-Type: application/json\r\nContent-Length: %zu\r\n"
		 "\r\n",
		 strlen(body));
	r = http(h->port, head, body, strlen(body));
	assert_has(r, "HTTP/1.1 201 Created\r\n");
	assert_has(r, "Location: /pools/p1\r\n");
	free(r);

	r = http(h->port,
		 "DELETE /pools HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
		 "\r\n",
		 NULL, 0);
	assert_has(r, "HTTP/1.1 405 Method Not Allowed\r\n");
	assert_has(r, "Allow: GET, POST\r\n");
	free(r);

	r = http(h->port,
		 "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
		 "\r\n",
		 NULL, 0);
	assert_has(r, "Content-Type: text/plain; version=0.0.4; "
		      "charset=utf-8\r\n");
	assert_has(r, "dsnfs_pool_info{pool=\"p1\",level=\"Ultra\","
		      "qos=\"auto\"} 1\n");
	free(r);
}

static void test_body_too_large_is_413(void **state)
{
	struct http_fixture *h = *state;
	size_t len = ADMIN_BODY_MAX_BYTES + 1;
	char head[512], *r;

	snprintf(head, sizeof(head),
		 "POST /pools HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
		 "Content-Type: application/json\r\nContent-Length: %zu\r\n"
		 "\r\n",
		 len);
	r = http(h->port, head, NULL, len);
	assert_has(r, "HTTP/1.1 413 ");
	assert_has(r, "body: larger than 65536 bytes");
	free(r);
}

/* Without a Content-Length the body is counted as it comes. */
static void test_chunked_body_too_large_is_413(void **state)
{
	struct http_fixture *h = *state;
	size_t chunk = 16384, n = 5, len = 0;
	char *body = malloc(n * (chunk + 16) + 16), *r;

	assert_non_null(body);
	for (size_t i = 0; i < n; i++) {
		len += (size_t)sprintf(body + len, "%zx\r\n", chunk);
		memset(body + len, 'x', chunk);
		len += chunk;
		len += (size_t)sprintf(body + len, "\r\n");
	}
	len += (size_t)sprintf(body + len, "0\r\n\r\n");
	r = http(h->port,
		 "POST /pools HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
		 "Content-Type: application/json\r\n"
		 "Transfer-Encoding: chunked\r\n\r\n",
		 body, len);
	assert_has(r, "HTTP/1.1 413 ");
	free(r);
	free(body);
}

static void test_start_refuses_bad_address_and_busy_port(void **state)
{
	struct http_fixture *h = *state;
	struct admin *other = NULL;
	char err[300];
	int port;

	assert_int_equal(admin_start(&h->fx->api.ctx, "localhost", 0, &port,
				     &other, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "not an IP address"));
	assert_int_equal(admin_start(&h->fx->api.ctx, "127.0.0.1", h->port,
				     &port, &other, err, sizeof(err)),
			 -EADDRINUSE);
	assert_non_null(strstr(err, "Address already in use"));
	assert_null(other);
}

/* An IPv6 admin_listen is dual stack like the RPC listeners: the
 * v4-mapped loopback binds (an IPv6-only socket refuses it) and answers
 * IPv4 clients. */
static void test_ipv6_listen_is_dual_stack(void **state)
{
	struct http_fixture *h = *state;
	struct admin *v6 = NULL;
	char err[300], *out;
	int port;

	assert_int_equal(admin_start(&h->fx->api.ctx, "::ffff:127.0.0.1", 0,
				     &port, &v6, err, sizeof(err)),
			 0);
	out = http(port, "GET /hosts HTTP/1.0\r\nHost: x\r\n\r\n", NULL, 0);
	assert_has(out, " 200 ");
	free(out);
	admin_stop(v6);
}

/* The walls of auth.c over a socket: nothing of the API without them. */
static void test_refusals_over_http(void **state)
{
	static const char body[] =
		"{\"name\": \"p9\", \"level\": \"ultra\", \"size_tib\": 2}";
	struct http_fixture *h = *state;
	char head[512], *r;

	r = http(h->port,
		 "GET /pools HTTP/1.1\r\nHost: evil.example\r\n"
		 "Connection: close\r\n\r\n",
		 NULL, 0);
	assert_has(r, "HTTP/1.1 421 ");
	assert_has(r, "is not this endpoint's");
	free(r);
	r = http(h->port,
		 "GET /pools HTTP/1.1\r\nHost: 127.0.0.1\r\n"
		 "Connection: close\r\n\r\n",
		 NULL, 0);
	assert_has(r, "HTTP/1.1 401 ");
	assert_has(r, "WWW-Authenticate: Bearer");
	assert_has(r, "{\"error\":\"no credential");
	free(r);
	/* A body of a refused request is not read: no 413, no handler. */
	snprintf(head, sizeof(head),
		 "POST /pools HTTP/1.1\r\nHost: 127.0.0.1\r\n"
		 "Connection: close\r\nContent-Type: application/json\r\n"
		 "Content-Length: %zu\r\n\r\n",
		 strlen(body));
	r = http(h->port, head, body, strlen(body));
	assert_has(r, "HTTP/1.1 401 ");
	free(r);
	assert_int_equal(
		admin_fixture_call(h->fx, "GET", "/pools/p9", NULL, NULL), 404);
	r = http(h->port,
		 "GET /pools HTTP/1.1\r\nHost: x\r\nOrigin: http://evil.example"
		 "\r\nConnection: close\r\n\r\n",
		 NULL, 0);
	assert_has(r, "HTTP/1.1 403 ");
	free(r);
	r = http(h->port,
		 "GET /pools HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
		 NULL, 0);
	assert_has(r, "HTTP/1.1 200 ");
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_get_and_post_over_http,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_body_too_large_is_413,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_chunked_body_too_large_is_413, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_start_refuses_bad_address_and_busy_port, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_ipv6_listen_is_dual_stack,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusals_over_http, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
