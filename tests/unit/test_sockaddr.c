// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests for nfsd/base/sockaddr.c: one client, one spelling, one key.
 */
#include "nfsd/base/sockaddr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "nfsd/base/base.h"

static struct sockaddr_in v4(const char *ip, unsigned port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons((uint16_t)port) };

	assert_int_equal(inet_pton(AF_INET, ip, &sin.sin_addr), 1);
	return sin;
}

static struct sockaddr_in6 v6(const char *ip, unsigned port)
{
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6,
				     .sin6_port = htons((uint16_t)port) };

	assert_int_equal(inet_pton(AF_INET6, ip, &sin6.sin6_addr), 1);
	return sin6;
}

static void test_v4_mapped_client_is_the_ipv4_client(void **state)
{
	struct sockaddr_in a = v4("10.1.2.3", 811);
	struct sockaddr_in6 b = v6("::ffff:10.1.2.3", 900);
	uint8_t ka[16], kb[16];
	char text[SOCKADDR_TEXT_MAX];

	(void)state;
	sockaddr_key((struct sockaddr *)&a, ka);
	sockaddr_key((struct sockaddr *)&b, kb);
	assert_memory_equal(ka, kb, 16);
	sockaddr_format((struct sockaddr *)&b, text, sizeof(text));
	assert_string_equal(text, "10.1.2.3:900");
	assert_int_equal(
		sockaddr_format_host((struct sockaddr *)&a, text, sizeof(text)),
		0);
	assert_string_equal(text, "10.1.2.3");
	assert_int_equal(sockaddr_port((struct sockaddr *)&a), 811);
}

static void test_ipv6_and_unknown_families(void **state)
{
	struct sockaddr_in6 a = v6("fd00::7", 2049);
	struct sockaddr other = { .sa_family = AF_UNIX };
	uint8_t key[16], zeros[16] = { 0 };
	char text[SOCKADDR_TEXT_MAX];

	(void)state;
	sockaddr_format((struct sockaddr *)&a, text, sizeof(text));
	/* "fd00::7:2049" would itself be an address: brackets, RFC 5952 6. */
	assert_string_equal(text, "[fd00::7]:2049");
	a = v6("::1", 811);
	sockaddr_format((struct sockaddr *)&a, text, sizeof(text));
	assert_string_equal(text, "[::1]:811");
	assert_int_equal(
		sockaddr_format_host((struct sockaddr *)&a, text, sizeof(text)),
		0);
	assert_string_equal(text, "::1");
	assert_int_equal(sockaddr_format_host(&other, text, sizeof(text)),
			 -EAFNOSUPPORT);
	assert_string_equal(text, "?");
	assert_int_equal(sockaddr_port(&other), 0);
	sockaddr_key(&other, key);
	assert_memory_equal(key, zeros, 16);
}

static void test_parse_reads_numeric_addresses(void **state)
{
	struct sockaddr_storage ss;
	socklen_t len;
	char text[SOCKADDR_TEXT_MAX];

	(void)state;
	assert_int_equal(sockaddr_parse("127.0.0.1", 2049, &ss, &len), 0);
	assert_int_equal(ss.ss_family, AF_INET);
	assert_int_equal(len, sizeof(struct sockaddr_in));
	sockaddr_format((struct sockaddr *)&ss, text, sizeof(text));
	assert_string_equal(text, "127.0.0.1:2049");

	assert_int_equal(sockaddr_parse("::1", 111, &ss, &len), 0);
	assert_int_equal(ss.ss_family, AF_INET6);
	assert_int_equal(len, sizeof(struct sockaddr_in6));
	sockaddr_format((struct sockaddr *)&ss, text, sizeof(text));
	assert_string_equal(text, "[::1]:111");

	assert_int_equal(sockaddr_parse("[fd00::7]", 0, &ss, &len), 0);
	sockaddr_format((struct sockaddr *)&ss, text, sizeof(text));
	assert_string_equal(text, "[fd00::7]:0");

	assert_int_equal(sockaddr_parse("::", 20048, &ss, &len), 0);
	assert_true(IN6_IS_ADDR_UNSPECIFIED(
		&((struct sockaddr_in6 *)&ss)->sin6_addr));

	/* A link-local address keeps its zone. */
	assert_int_equal(sockaddr_parse("fe80::1%lo", 0, &ss, &len), 0);
	assert_int_not_equal(((struct sockaddr_in6 *)&ss)->sin6_scope_id, 0);
}

static void test_parse_refuses_what_is_not_an_address(void **state)
{
	static const char *const bad[] = {
		"",
		"localhost",
		"127.1",
		"1.2.3.4.5",
		"[1.2.3.4]",
		"[::1",
		"::1]",
		"[]",
		"::1:x",
		"10.0.0.0/8",
		"[::1]:111",
		" ::1",
		"fe80::1%nosuchif0",
	};
	struct sockaddr_storage ss;
	socklen_t len;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		if (sockaddr_parse(bad[i], 0, &ss, &len) != -EINVAL) {
			fail_msg("\"%s\" parsed", bad[i]);
		}
	}
	assert_int_equal(sockaddr_parse("::1", -1, &ss, &len), -EINVAL);
	assert_int_equal(sockaddr_parse("::1", 65536, &ss, &len), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v4_mapped_client_is_the_ipv4_client),
		cmocka_unit_test(test_ipv6_and_unknown_families),
		cmocka_unit_test(test_parse_reads_numeric_addresses),
		cmocka_unit_test(test_parse_refuses_what_is_not_an_address),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
