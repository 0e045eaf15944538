// SPDX-License-Identifier: Apache-2.0
/*
 * test_auth: credentials (nfsd/rpc/auth.c, RFC 5531 appendix A).  AUTH_SYS
 * bodies are read field by field and refused with AUTH_BADCRED when they
 * break a bound (16 groups, 255-byte machine name) or carry extra bytes;
 * AUTH_NONE maps to nobody; other flavors are AUTH_REJECTEDCRED.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nfsd/rpc/auth.h"

/* An AUTH_SYS body under construction. */
struct body {
	uint8_t buf[1024];
	size_t len;
};

static void body_u32(struct body *b, uint32_t v)
{
	assert_true(b->len + 4 <= sizeof(b->buf));
	b->buf[b->len++] = (uint8_t)(v >> 24);
	b->buf[b->len++] = (uint8_t)(v >> 16);
	b->buf[b->len++] = (uint8_t)(v >> 8);
	b->buf[b->len++] = (uint8_t)v;
}

/* Appends a counted string of @len bytes of 'm', padded to 4 bytes. */
static void body_name(struct body *b, uint32_t len)
{
	size_t padded = ((size_t)len + 3) & ~(size_t)3;

	body_u32(b, len);
	assert_true(b->len + padded <= sizeof(b->buf));
	memset(b->buf + b->len, 0, padded);
	memset(b->buf + b->len, 'm', len);
	b->len += padded;
}

/* stamp, machine name of @name_len bytes, uid 1000, gid 100, @ngroups
 * groups numbered 200, 201, ... */
static void body_sys(struct body *b, uint32_t name_len, uint32_t ngroups)
{
	b->len = 0;
	body_u32(b, 0x5eed);
	body_name(b, name_len);
	body_u32(b, 1000);
	body_u32(b, 100);
	body_u32(b, ngroups);
	for (uint32_t i = 0; i < ngroups; i++) {
		body_u32(b, 200 + i);
	}
}

static enum rpc_auth_stat parse(uint32_t flavor, const struct body *b,
				struct rpc_cred *cred)
{
	struct rpc_call_header call = {
		.cred_flavor = flavor,
		.cred_body = b ? b->buf : NULL,
		.cred_len = b ? (uint32_t)b->len : 0,
	};

	return rpc_auth_parse(&call, cred);
}

static void test_auth_sys_without_groups(void **state)
{
	struct body b;
	struct rpc_cred cred;

	(void)state;
	body_sys(&b, 5, 0);
	assert_int_equal(parse(RPC_AUTH_SYS, &b, &cred), RPC_AUTH_OK);
	assert_int_equal(cred.flavor, RPC_AUTH_SYS);
	assert_int_equal(cred.uid, 1000);
	assert_int_equal(cred.gid, 100);
	assert_int_equal(cred.ngroups, 0);
	assert_string_equal(cred.machine, "mmmmm");
}

static void test_auth_sys_with_16_groups(void **state)
{
	struct body b;
	struct rpc_cred cred;

	(void)state;
	body_sys(&b, 8, 16);
	assert_int_equal(parse(RPC_AUTH_SYS, &b, &cred), RPC_AUTH_OK);
	assert_int_equal(cred.ngroups, 16);
	for (uint32_t i = 0; i < 16; i++) {
		assert_int_equal(cred.groups[i], 200 + i);
	}
}

static void test_auth_sys_17_groups_is_badcred(void **state)
{
	struct body b;
	struct rpc_cred cred;

	(void)state;
	body_sys(&b, 8, 17);
	assert_int_equal(parse(RPC_AUTH_SYS, &b, &cred), RPC_AUTH_BADCRED);
}

static void test_auth_sys_255_byte_name_is_accepted(void **state)
{
	struct body b;
	struct rpc_cred cred;

	(void)state;
	body_sys(&b, 255, 1);
	assert_int_equal(parse(RPC_AUTH_SYS, &b, &cred), RPC_AUTH_OK);
	assert_int_equal(strlen(cred.machine), 255);
}

static void test_auth_sys_256_byte_name_is_badcred(void **state)
{
	struct body b;
	struct rpc_cred cred;

	(void)state;
	body_sys(&b, 256, 1);
	assert_int_equal(parse(RPC_AUTH_SYS, &b, &cred), RPC_AUTH_BADCRED);
}

static void test_auth_sys_trailing_bytes_is_badcred(void **state)
{
	struct body b;
	struct rpc_cred cred;

	(void)state;
	body_sys(&b, 4, 2);
	body_u32(&b, 0);
	assert_int_equal(parse(RPC_AUTH_SYS, &b, &cred), RPC_AUTH_BADCRED);
}

static void test_auth_sys_every_truncation_is_badcred(void **state)
{
	struct body b;
	struct rpc_cred cred;
	size_t full;

	(void)state;
	body_sys(&b, 6, 3);
	full = b.len;
	for (b.len = 0; b.len < full; b.len++) {
		assert_int_equal(parse(RPC_AUTH_SYS, &b, &cred),
				 RPC_AUTH_BADCRED);
	}
}

static void test_auth_sys_name_longer_than_body_is_badcred(void **state)
{
	struct body b;
	struct rpc_cred cred;

	(void)state;
	b.len = 0;
	body_u32(&b, 0);
	body_u32(&b, 200); /* claims 200 bytes, carries none */
	assert_int_equal(parse(RPC_AUTH_SYS, &b, &cred), RPC_AUTH_BADCRED);
}

static void test_auth_none_is_nobody(void **state)
{
	struct rpc_cred cred;

	(void)state;
	assert_int_equal(parse(RPC_AUTH_NONE, NULL, &cred), RPC_AUTH_OK);
	assert_int_equal(cred.flavor, RPC_AUTH_NONE);
	assert_int_equal(cred.uid, 65534);
	assert_int_equal(cred.gid, 65534);
	assert_int_equal(cred.ngroups, 0);
}

static void test_auth_rpcsec_gss_is_rejectedcred(void **state)
{
	struct body b;
	struct rpc_cred cred;

	(void)state;
	body_sys(&b, 4, 0);
	assert_int_equal(parse(6, &b, &cred), RPC_AUTH_REJECTEDCRED);
	assert_int_equal(parse(2 /* AUTH_SHORT */, &b, &cred),
			 RPC_AUTH_REJECTEDCRED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_auth_sys_without_groups),
		cmocka_unit_test(test_auth_sys_with_16_groups),
		cmocka_unit_test(test_auth_sys_17_groups_is_badcred),
		cmocka_unit_test(test_auth_sys_255_byte_name_is_accepted),
		cmocka_unit_test(test_auth_sys_256_byte_name_is_badcred),
		cmocka_unit_test(test_auth_sys_trailing_bytes_is_badcred),
		cmocka_unit_test(test_auth_sys_every_truncation_is_badcred),
		cmocka_unit_test(
			test_auth_sys_name_longer_than_body_is_badcred),
		cmocka_unit_test(test_auth_none_is_nobody),
		cmocka_unit_test(test_auth_rpcsec_gss_is_rejectedcred),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
