// SPDX-License-Identifier: Apache-2.0
/*
 * test_msg: ONC RPC call and reply headers (nfsd/rpc/msg.c, RFC 5531 9).
 * A hand-built AUTH_SYS call decodes field by field, and every truncation
 * of it fails; auth bodies are capped at 400 bytes; replies encode to the
 * RFC's words; what rpc_call_encode writes, rpc_call_decode reads back.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nfsd/base/base.h"
#include "nfsd/rpc/msg.h"

/* xid 0x0badcafe, CALL, rpcvers 2, NFS (100003) v3 proc 1, AUTH_SYS
 * {stamp 42, "host1", uid 1000, gid 100, gids {10}}, AUTH_NONE verifier,
 * then four bytes of arguments. */
static const uint8_t call_sys[] = {
	0x0b, 0xad, 0xca, 0xfe, /* xid */
	0x00, 0x00, 0x00, 0x00, /* CALL */
	0x00, 0x00, 0x00, 0x02, /* rpcvers */
	0x00, 0x01, 0x86, 0xa3, /* prog 100003 */
	0x00, 0x00, 0x00, 0x03, /* vers */
	0x00, 0x00, 0x00, 0x01, /* proc */
	0x00, 0x00, 0x00, 0x01, /* AUTH_SYS */
	0x00, 0x00, 0x00, 0x20, /* 32 bytes */
	0x00, 0x00, 0x00, 0x2a, /* stamp */
	0x00, 0x00, 0x00, 0x05, /* machinename length */
	'h',  'o',  's',  't',	'1',  0x00,
	0x00, 0x00, 0x00, 0x00, 0x03, 0xe8, /* uid 1000 */
	0x00, 0x00, 0x00, 0x64, /* gid 100 */
	0x00, 0x00, 0x00, 0x01, /* one group */
	0x00, 0x00, 0x00, 0x0a, /* 10 */
	0x00, 0x00, 0x00, 0x00, /* verifier AUTH_NONE */
	0x00, 0x00, 0x00, 0x00, /* empty */
	0xde, 0xad, 0xbe, 0xef, /* arguments */
};

#define CALL_SYS_HEADER_LEN 72

static uint32_t get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static void put_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void assert_words(const uint8_t *buf, const uint32_t *want, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(get_u32(buf + 4 * i), want[i]);
	}
}

static void test_call_decode_reads_auth_sys_fixture(void **state)
{
	struct rpc_call_header call;

	(void)state;
	assert_int_equal(rpc_call_decode(call_sys, sizeof(call_sys), &call), 0);
	assert_int_equal(call.xid, 0x0badcafe);
	assert_int_equal(call.rpcvers, 2);
	assert_int_equal(call.prog, 100003);
	assert_int_equal(call.vers, 3);
	assert_int_equal(call.proc, 1);
	assert_int_equal(call.cred_flavor, RPC_AUTH_SYS);
	assert_int_equal(call.cred_len, 32);
	assert_ptr_equal(call.cred_body, call_sys + 32);
	assert_int_equal(call.verf_flavor, RPC_AUTH_NONE);
	assert_int_equal(call.verf_len, 0);
	assert_int_equal(call.args_offset, CALL_SYS_HEADER_LEN);
}

static void test_call_decode_rejects_every_truncation(void **state)
{
	struct rpc_call_header call;

	(void)state;
	for (size_t len = 0; len < CALL_SYS_HEADER_LEN; len++) {
		assert_int_equal(rpc_call_decode(call_sys, len, &call),
				 -EBADMSG);
	}
	assert_int_equal(rpc_call_decode(call_sys, CALL_SYS_HEADER_LEN, &call),
			 0);
	assert_int_equal(call.args_offset, CALL_SYS_HEADER_LEN);
}

/* A call whose credential body is @body_len bytes of zeros (padded). */
static uint8_t *call_with_cred_len(uint32_t body_len, size_t *len)
{
	size_t padded = ((size_t)body_len + 3) & ~(size_t)3;
	uint8_t *buf = calloc(1, 32 + padded + 8);

	assert_non_null(buf);
	memcpy(buf, call_sys, 24);
	put_u32(buf + 24, RPC_AUTH_SYS);
	put_u32(buf + 28, body_len);
	*len = 32 + padded + 8;
	return buf;
}

static void test_call_decode_rejects_401_byte_auth_body(void **state)
{
	struct rpc_call_header call;
	size_t len;
	uint8_t *buf = call_with_cred_len(401, &len);

	(void)state;
	assert_int_equal(rpc_call_decode(buf, len, &call), -EBADMSG);
	free(buf);
	buf = call_with_cred_len(400, &len);
	assert_int_equal(rpc_call_decode(buf, len, &call), 0);
	assert_int_equal(call.cred_len, 400);
	assert_int_equal(call.args_offset, len);
	free(buf);
}

static void test_call_decode_rejects_401_byte_verifier(void **state)
{
	uint8_t buf[CALL_SYS_HEADER_LEN + 404];
	struct rpc_call_header call;

	(void)state;
	memset(buf, 0, sizeof(buf));
	memcpy(buf, call_sys, CALL_SYS_HEADER_LEN);
	put_u32(buf + 68, 401);
	assert_int_equal(rpc_call_decode(buf, sizeof(buf), &call), -EBADMSG);
}

static void test_call_decode_rejects_non_call_type(void **state)
{
	uint8_t buf[sizeof(call_sys)];
	struct rpc_call_header call;
	uint32_t xid = 0, type = 0;

	(void)state;
	memcpy(buf, call_sys, sizeof(buf));
	put_u32(buf + 4, RPC_MSG_REPLY);
	assert_int_equal(rpc_call_decode(buf, sizeof(buf), &call), -EBADMSG);
	assert_int_equal(rpc_msg_peek(buf, sizeof(buf), &xid, &type), 0);
	assert_int_equal(xid, 0x0badcafe);
	assert_int_equal(type, RPC_MSG_REPLY);
	assert_int_equal(rpc_msg_peek(buf, 7, &xid, &type), -EBADMSG);
}

static void test_call_decode_keeps_rpcvers_for_the_caller(void **state)
{
	uint8_t buf[sizeof(call_sys)];
	struct rpc_call_header call;

	(void)state;
	memcpy(buf, call_sys, sizeof(buf));
	put_u32(buf + 8, 3);
	assert_int_equal(rpc_call_decode(buf, sizeof(buf), &call), 0);
	assert_int_equal(call.rpcvers, 3);
}

static void test_reply_accepted_encodes_each_stat(void **state)
{
	static const enum rpc_accept_stat stats[] = {
		RPC_ACCEPT_SUCCESS,	 RPC_ACCEPT_PROG_UNAVAIL,
		RPC_ACCEPT_PROC_UNAVAIL, RPC_ACCEPT_GARBAGE_ARGS,
		RPC_ACCEPT_SYSTEM_ERR,
	};
	uint8_t buf[64];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(stats); i++) {
		const uint32_t want[] = { 0x11223344, 1, 0, 0, 0, stats[i] };

		assert_int_equal(rpc_reply_accepted_encode(buf, sizeof(buf),
							   0x11223344, stats[i],
							   7, 9),
				 RPC_REPLY_ACCEPTED_LEN);
		assert_words(buf, want, 6);
		assert_int_equal(rpc_reply_accepted_encode(
					 buf, RPC_REPLY_ACCEPTED_LEN - 1,
					 0x11223344, stats[i], 0, 0),
				 0);
	}
}

static void test_reply_prog_mismatch_carries_low_high(void **state)
{
	const uint32_t want[] = { 5, 1, 0, 0, 0, 2, 2, 4 };
	uint8_t buf[32];

	(void)state;
	assert_int_equal(rpc_reply_accepted_encode(buf, sizeof(buf), 5,
						   RPC_ACCEPT_PROG_MISMATCH, 2,
						   4),
			 32);
	assert_words(buf, want, 8);
	assert_int_equal(rpc_reply_accepted_encode(
				 buf, 31, 5, RPC_ACCEPT_PROG_MISMATCH, 2, 4),
			 0);
}

static void test_reply_denied_rpc_mismatch(void **state)
{
	const uint32_t want[] = { 9, 1, 1, 0, 2, 2 };
	uint8_t buf[24];

	(void)state;
	assert_int_equal(rpc_reply_denied_encode(buf, sizeof(buf), 9,
						 RPC_REJECT_RPC_MISMATCH,
						 RPC_AUTH_OK),
			 24);
	assert_words(buf, want, 6);
	assert_int_equal(rpc_reply_denied_encode(buf, 23, 9,
						 RPC_REJECT_RPC_MISMATCH,
						 RPC_AUTH_OK),
			 0);
}

static void test_reply_denied_auth_error(void **state)
{
	const uint32_t want[] = { 9, 1, 1, 1, RPC_AUTH_BADCRED };
	uint8_t buf[24];

	(void)state;
	assert_int_equal(rpc_reply_denied_encode(buf, sizeof(buf), 9,
						 RPC_REJECT_AUTH_ERROR,
						 RPC_AUTH_BADCRED),
			 20);
	assert_words(buf, want, 5);
}

static void test_call_encode_auth_sys_round_trips(void **state)
{
	uint8_t buf[128];
	struct rpc_call_header call;
	size_t n;

	(void)state;
	n = rpc_call_encode(buf, sizeof(buf), 77, 100005, 3, 1, "client", 500,
			    600);
	/* 24 header + 8 + (4 + 4 + 8 + 4 + 4 + 4) cred + 8 verf */
	assert_int_equal(n, 24 + 8 + 28 + 8);
	assert_int_equal(rpc_call_decode(buf, n, &call), 0);
	assert_int_equal(call.xid, 77);
	assert_int_equal(call.rpcvers, RPC_MSG_RPCVERS);
	assert_int_equal(call.prog, 100005);
	assert_int_equal(call.vers, 3);
	assert_int_equal(call.proc, 1);
	assert_int_equal(call.cred_flavor, RPC_AUTH_SYS);
	assert_int_equal(call.cred_len, 28);
	assert_int_equal(get_u32(call.cred_body + 4), 6);
	assert_memory_equal(call.cred_body + 8, "client\0\0", 8);
	assert_int_equal(get_u32(call.cred_body + 16), 500);
	assert_int_equal(get_u32(call.cred_body + 20), 600);
	assert_int_equal(get_u32(call.cred_body + 24), 0);
	assert_int_equal(call.verf_flavor, RPC_AUTH_NONE);
	assert_int_equal(call.args_offset, n);
	/* One byte short of the whole call: refused, not overrun. */
	assert_int_equal(rpc_call_encode(buf, n - 1, 77, 100005, 3, 1, "client",
					 500, 600),
			 0);
}

static void test_call_encode_auth_none_round_trips(void **state)
{
	uint8_t buf[40];
	struct rpc_call_header call;

	(void)state;
	assert_int_equal(
		rpc_call_encode(buf, sizeof(buf), 1, 100000, 2, 0, NULL, 0, 0),
		40);
	assert_int_equal(rpc_call_decode(buf, 40, &call), 0);
	assert_int_equal(call.cred_flavor, RPC_AUTH_NONE);
	assert_int_equal(call.cred_len, 0);
	assert_int_equal(call.args_offset, 40);
}

static void test_call_encode_refuses_long_machine_name(void **state)
{
	char name[257];
	uint8_t buf[512];

	(void)state;
	memset(name, 'm', 256);
	name[256] = '\0';
	assert_int_equal(
		rpc_call_encode(buf, sizeof(buf), 1, 1, 1, 0, name, 0, 0), 0);
	name[255] = '\0';
	assert_int_not_equal(
		rpc_call_encode(buf, sizeof(buf), 1, 1, 1, 0, name, 0, 0), 0);
}

static void test_reply_decode_reads_accepted_reply(void **state)
{
	uint8_t buf[40];
	uint32_t xid = 0, stat = 99;
	size_t off = 0, n;

	(void)state;
	n = rpc_reply_accepted_encode(buf, sizeof(buf), 0xabc,
				      RPC_ACCEPT_SUCCESS, 0, 0);
	put_u32(buf + n, 12345);
	assert_int_equal(rpc_reply_decode(buf, n + 4, &xid, &stat, &off), 0);
	assert_int_equal(xid, 0xabc);
	assert_int_equal(stat, RPC_ACCEPT_SUCCESS);
	assert_int_equal(off, RPC_REPLY_ACCEPTED_LEN);
	assert_int_equal(get_u32(buf + off), 12345);

	n = rpc_reply_accepted_encode(buf, sizeof(buf), 0xabd,
				      RPC_ACCEPT_PROG_MISMATCH, 3, 3);
	assert_int_equal(rpc_reply_decode(buf, n, &xid, &stat, &off), 0);
	assert_int_equal(stat, RPC_ACCEPT_PROG_MISMATCH);
	assert_int_equal(get_u32(buf + off), 3);
}

static void test_reply_decode_denied_is_eacces(void **state)
{
	uint8_t buf[24];
	uint32_t xid = 0, stat;
	size_t off;

	(void)state;
	rpc_reply_denied_encode(buf, sizeof(buf), 0x55, RPC_REJECT_AUTH_ERROR,
				RPC_AUTH_TOOWEAK);
	assert_int_equal(rpc_reply_decode(buf, 20, &xid, &stat, &off), -EACCES);
	assert_int_equal(xid, 0x55);
}

static void test_reply_decode_rejects_malformed(void **state)
{
	uint8_t buf[RPC_REPLY_ACCEPTED_LEN];
	uint32_t xid, stat;
	size_t off;

	(void)state;
	rpc_reply_accepted_encode(buf, sizeof(buf), 1, RPC_ACCEPT_SUCCESS, 0,
				  0);
	for (size_t len = 0; len < sizeof(buf); len++) {
		assert_int_equal(rpc_reply_decode(buf, len, &xid, &stat, &off),
				 -EBADMSG);
	}
	/* A call is not a reply. */
	assert_int_equal(
		rpc_reply_decode(call_sys, sizeof(call_sys), &xid, &stat, &off),
		-EBADMSG);
	/* A verifier over 400 bytes. */
	put_u32(buf + 16, 401);
	assert_int_equal(rpc_reply_decode(buf, sizeof(buf), &xid, &stat, &off),
			 -EBADMSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_call_decode_reads_auth_sys_fixture),
		cmocka_unit_test(test_call_decode_rejects_every_truncation),
		cmocka_unit_test(test_call_decode_rejects_401_byte_auth_body),
		cmocka_unit_test(test_call_decode_rejects_401_byte_verifier),
		cmocka_unit_test(test_call_decode_rejects_non_call_type),
		cmocka_unit_test(test_call_decode_keeps_rpcvers_for_the_caller),
		cmocka_unit_test(test_reply_accepted_encodes_each_stat),
		cmocka_unit_test(test_reply_prog_mismatch_carries_low_high),
		cmocka_unit_test(test_reply_denied_rpc_mismatch),
		cmocka_unit_test(test_reply_denied_auth_error),
		cmocka_unit_test(test_call_encode_auth_sys_round_trips),
		cmocka_unit_test(test_call_encode_auth_none_round_trips),
		cmocka_unit_test(test_call_encode_refuses_long_machine_name),
		cmocka_unit_test(test_reply_decode_reads_accepted_reply),
		cmocka_unit_test(test_reply_decode_denied_is_eacces),
		cmocka_unit_test(test_reply_decode_rejects_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
