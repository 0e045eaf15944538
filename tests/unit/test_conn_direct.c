// SPDX-License-Identifier: Apache-2.0
/*
 * test_conn_direct: large records read in place (nfsd/net/conn.c,
 * NET_DIRECT_MIN) over real loopback TCP.  Large calls (an ECHO with
 * 40 KB of bytes after its argument) pipelined with small ones in one
 * write, a large call whose rest comes in two-byte writes, and one in two
 * fragments are all answered, each with its own value: a byte put one
 * place off would break every record after it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "nfsd/net/net_int.h"
#include "nfsd/rpc/record.h"
#include "tests/lib/conn_fixture.h"

#define TEST_OUT_LIMIT (64 * 1024)
#define TEST_CALL_LEN CONN_FIXTURE_CALL_LEN
#define TEST_BIG_EXTRA 40000 /* bytes after the argument: a large record */

static int setup(void **state)
{
	return conn_fixture_setup(state, TEST_OUT_LIMIT, 0, false, 0);
}

/* Writes an ECHO call of @arg with TEST_BIG_EXTRA bytes after it to @buf;
 * returns its length (mark included). */
static size_t big_call_build(uint8_t *buf, uint32_t xid, uint32_t arg)
{
	size_t len = conn_fixture_call_build(buf, xid, CONN_FIXTURE_ECHO, arg);

	for (size_t i = 0; i < TEST_BIG_EXTRA; i++) {
		buf[len + i] = (uint8_t)(xid + i);
	}
	len += TEST_BIG_EXTRA;
	rpc_record_mark_encode(buf, (uint32_t)(len - 4));
	return len;
}

/* Reads @n echo replies with xids @base.. and values xid * 3, any order. */
static void read_echoes(int fd, uint32_t base, unsigned n)
{
	bool seen[64] = { false };

	assert_true(n <= 64);
	for (unsigned i = 0; i < n; i++) {
		uint32_t xid = 0, v = conn_fixture_read_echo(fd, &xid);

		assert_true(xid >= base && xid < base + n);
		assert_false(seen[xid - base]);
		seen[xid - base] = true;
		assert_int_equal(v, xid * 3);
	}
}

static void test_conn_direct_large_and_small_pipelined(void **state)
{
	struct conn_fixture *s = *state;
	enum { N = 8 };
	size_t cap = N * (TEST_CALL_LEN + TEST_BIG_EXTRA + TEST_CALL_LEN);
	uint8_t *wire = malloc(cap);
	size_t pos = 0;
	int fd = conn_fixture_connect(s, 0);

	assert_non_null(wire);
	assert_true(TEST_CALL_LEN + TEST_BIG_EXTRA > NET_DIRECT_MIN);
	for (uint32_t i = 0; i < N; i++) {
		uint32_t big = 100 + 2 * i, small = big + 1;

		pos += big_call_build(wire + pos, big, big * 3);
		pos += conn_fixture_call_build(wire + pos, small,
					       CONN_FIXTURE_ECHO, small * 3);
	}
	conn_fixture_write_all(fd, wire, pos);
	read_echoes(fd, 100, 2 * N);
	free(wire);
	close(fd);
}

static void test_conn_direct_rest_in_two_byte_writes(void **state)
{
	struct conn_fixture *s = *state;
	uint8_t *wire = malloc(TEST_CALL_LEN + TEST_BIG_EXTRA + TEST_CALL_LEN);
	size_t len, pos;
	int fd = conn_fixture_connect(s, 0);

	assert_non_null(wire);
	len = big_call_build(wire, 200, 600);
	len += conn_fixture_call_build(wire + len, 201, CONN_FIXTURE_ECHO, 603);
	/* The head, then the rest a little at a time, the small call's
	 * first bytes with the big one's last. */
	conn_fixture_write_all(fd, wire, TEST_CALL_LEN);
	for (pos = TEST_CALL_LEN; pos < len; pos += 2) {
		conn_fixture_write_all(fd, wire + pos,
				       len - pos < 2 ? len - pos : 2);
	}
	read_echoes(fd, 200, 2);
	free(wire);
	close(fd);
}

static void test_conn_direct_large_call_in_two_fragments(void **state)
{
	struct conn_fixture *s = *state;
	uint8_t *call = malloc(TEST_CALL_LEN + TEST_BIG_EXTRA);
	uint8_t *wire = malloc(TEST_CALL_LEN + TEST_BIG_EXTRA + 4);
	size_t len, first = 20000;
	int fd = conn_fixture_connect(s, 0);

	assert_non_null(call);
	assert_non_null(wire);
	len = big_call_build(call, 300, 900);
	/* A first fragment of 20000 body bytes (no last bit), then the
	 * rest as the last one; the large records come in one write. */
	rpc_record_mark_encode(wire, (uint32_t)first);
	wire[0] &= 0x7f;
	memcpy(wire + 4, call + 4, first);
	rpc_record_mark_encode(wire + 4 + first, (uint32_t)(len - 4 - first));
	memcpy(wire + 8 + first, call + 4 + first, len - 4 - first);
	conn_fixture_write_all(fd, wire, len + 4);
	read_echoes(fd, 300, 1);
	free(wire);
	free(call);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_conn_direct_large_and_small_pipelined, setup,
			conn_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_conn_direct_rest_in_two_byte_writes, setup,
			conn_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_conn_direct_large_call_in_two_fragments, setup,
			conn_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
