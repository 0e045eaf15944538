// SPDX-License-Identifier: Apache-2.0
/*
 * test_vaai_nas: the codec of VAAI-NAS procedure 22 (nfsd/nfs3/
 * vaai_codec.c): the command and reply data at the plug-in's offsets,
 * little endian; every bad command refused with its reason; the XDR of
 * the arguments bounded (a truncated body at every length, a command past
 * 1024 bytes, a handle past 64, a discriminant past 1) and the reply's.
 */
#include <errno.h>
#include <rpc/rpc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nfsd/nfs3/vaai_nas.h"

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++) {
		p[i] = (uint8_t)(v >> (8 * i));
	}
}

static void test_cmd_layout(void **state)
{
	struct vaai_nas_cmd_in in = { .version = 1,
				      .cmd = VAAI_NAS_FCLONE,
				      .clone_flags = 0x5 };
	struct vaai_nas_cmd_in out;
	uint8_t b[VAAI_NAS_CMD_BYTES];
	char why[256] = "";

	(void)state;
	strcpy(in.name, "vm1/disk-flat.vmdk");
	vaai_nas_cmd_format(&in, b);
	/* The plug-in's x86-64 layout: version at 0 (8 bytes), the command
	 * at 8, the clone flags at 16, the name's length with its NUL at
	 * 20, the name at 24; all little endian. */
	assert_int_equal(b[0], 1);
	assert_int_equal(b[8], VAAI_NAS_FCLONE);
	assert_int_equal(b[16], 5);
	assert_int_equal(b[20], strlen(in.name) + 1);
	assert_memory_equal(b + 24, in.name, strlen(in.name) + 1);
	assert_int_equal(
		vaai_nas_cmd_parse(b, sizeof(b), &out, why, sizeof(why)), 0);
	assert_int_equal(out.version, 1);
	assert_int_equal(out.cmd, VAAI_NAS_FCLONE);
	assert_int_equal(out.clone_flags, 5);
	assert_string_equal(out.name, in.name);
}

static void test_cmd_refused(void **state)
{
	struct vaai_nas_cmd_in in = { .version = 1, .cmd = VAAI_NAS_FSTAT };
	struct vaai_nas_cmd_in out;
	uint8_t b[VAAI_NAS_CMD_BYTES + 1];
	char why[256];

	(void)state;
	vaai_nas_cmd_format(&in, b);
	/* Truncated or longer than the plug-in's structure. */
	for (size_t len = 0; len < VAAI_NAS_CMD_BYTES; len += 37) {
		why[0] = '\0';
		assert_int_equal(
			vaai_nas_cmd_parse(b, len, &out, why, sizeof(why)),
			-EINVAL);
		assert_non_null(strstr(why, "the plug-in's is 296"));
	}
	assert_int_equal(vaai_nas_cmd_parse(b, VAAI_NAS_CMD_BYTES + 1, &out,
					    why, sizeof(why)),
			 -EINVAL);
	/* A version other than 1. */
	b[0] = 2;
	assert_int_equal(vaai_nas_cmd_parse(b, VAAI_NAS_CMD_BYTES, &out, why,
					    sizeof(why)),
			 -EINVAL);
	assert_non_null(strstr(why, "version 2"));
	b[0] = 1;
	/* Unknown commands: a clean "not supported", named. */
	static const uint32_t unknown[] = { 0, 9, 23, 0xffffffffu };
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		put32(b + 8, unknown[i]);
		assert_int_equal(vaai_nas_cmd_parse(b, VAAI_NAS_CMD_BYTES, &out,
						    why, sizeof(why)),
				 -EOPNOTSUPP);
		assert_non_null(strstr(why, "is not known"));
	}
	/* Every known one parses. */
	for (uint32_t c = VAAI_NAS_FRESERVE; c <= VAAI_NAS_STAT_SUPPORT; c++) {
		put32(b + 8, c);
		assert_int_equal(vaai_nas_cmd_parse(b, VAAI_NAS_CMD_BYTES, &out,
						    why, sizeof(why)),
				 0);
		assert_int_equal(out.cmd, c);
	}
}

static void test_clone_name_refused(void **state)
{
	struct vaai_nas_cmd_in in = { .version = 1, .cmd = VAAI_NAS_FCLONE };
	struct vaai_nas_cmd_in out;
	uint8_t b[VAAI_NAS_CMD_BYTES];
	char why[256];

	(void)state;
	strcpy(in.name, "abc");
	vaai_nas_cmd_format(&in, b);
	/* The length field disagrees with the NUL: 3, 5, 0, 1, 257. */
	static const uint32_t bad[] = { 3, 5, 0, 1, 257, 0x80000000u };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put32(b + 20, bad[i]);
		assert_int_equal(vaai_nas_cmd_parse(b, sizeof(b), &out, why,
						    sizeof(why)),
				 -EINVAL);
		assert_non_null(strstr(why, "length field"));
	}
	/* 256 bytes without a NUL. */
	memset(b + 24, 'x', VAAI_NAS_NAME_BYTES);
	put32(b + 20, 256);
	assert_int_equal(
		vaai_nas_cmd_parse(b, sizeof(b), &out, why, sizeof(why)),
		-EINVAL);
	assert_non_null(strstr(why, "none found"));
	/* 255 bytes and the NUL: the longest name. */
	b[24 + 255] = '\0';
	assert_int_equal(
		vaai_nas_cmd_parse(b, sizeof(b), &out, why, sizeof(why)), 0);
	assert_int_equal(strlen(out.name), 255);
}

static void test_out_layout(void **state)
{
	struct vaai_nas_out in = { .version = 1,
				   .cmd = VAAI_NAS_FSTAT,
				   .result = VAAI_NAS_FS_FULL,
				   .total_bytes = 0x1122334455667788ull,
				   .allocated_bytes = 4096,
				   .unique_bytes = 1024,
				   .clone_flag = VAAI_NAS_CLONE_DOING,
				   .clone_offset = 1u << 20 };
	struct vaai_nas_out out;
	uint8_t b[VAAI_NAS_OUT_BYTES];

	(void)state;
	vaai_nas_out_format(&in, b);
	assert_int_equal(b[8], VAAI_NAS_FSTAT);
	assert_int_equal(b[12] | (b[13] << 8), 1004);
	assert_int_equal(b[16], 0x88);
	assert_int_equal(b[23], 0x11);
	assert_int_equal(b[24 + 1], 0x10); /* 4096 */
	assert_int_equal(b[32 + 1], 0x04); /* 1024 */
	assert_int_equal(b[48], VAAI_NAS_CLONE_DOING);
	assert_int_equal(b[56 + 2], 0x10); /* 1 MiB */
	for (int i = 64; i < VAAI_NAS_OUT_BYTES; i++) {
		assert_int_equal(b[i], 0);
	}
	assert_int_equal(vaai_nas_out_parse(b, sizeof(b), &out), 0);
	assert_memory_equal(&in, &out, sizeof(in));
	assert_int_equal(vaai_nas_out_parse(b, sizeof(b) - 1, &out), -EINVAL);
}

/* Encodes @a into @buf: the bytes used. */
static size_t args_encode(struct vaai_nas_args *a, char *buf, size_t len)
{
	XDR x;
	size_t n;

	xdrmem_create(&x, buf, (u_int)len, XDR_ENCODE);
	assert_true(vaai_nas_xdr_args(&x, a));
	n = xdr_getpos(&x);
	xdr_destroy(&x);
	return n;
}

static bool args_decode(char *buf, size_t len, struct vaai_nas_args *out)
{
	XDR x;
	bool ok;

	memset(out, 0, sizeof(*out));
	xdrmem_create(&x, buf, (u_int)len, XDR_DECODE);
	ok = vaai_nas_xdr_args(&x, out);
	xdr_destroy(&x);
	return ok;
}

static void args_fill(struct vaai_nas_args *a, uint32_t cmd_len)
{
	memset(a, 0, sizeof(*a));
	memset(a->dst_room, 0xd5, 32);
	memset(a->src_room, 0x5c, 40);
	a->dst.data.data_len = 32;
	a->dst.data.data_val = a->dst_room;
	a->src_kind = VAAI_NAS_SRC_FH;
	a->src.data.data_len = 40;
	a->src.data.data_val = a->src_room;
	a->cmd_len = cmd_len;
	memset(a->cmd, 0x33, sizeof(a->cmd));
}

static void test_args_xdr(void **state)
{
	static char buf[4096];
	struct vaai_nas_args a, d;
	size_t n;

	(void)state;
	args_fill(&a, VAAI_NAS_CMD_BYTES);
	n = args_encode(&a, buf, sizeof(buf));
	/* 4+32, 4, 4+40, 4+296. */
	assert_int_equal(n, 36 + 4 + 44 + 300);
	assert_true(args_decode(buf, n, &d));
	assert_int_equal(d.dst.data.data_len, 32);
	assert_memory_equal(d.dst.data.data_val, a.dst_room, 32);
	assert_ptr_equal(d.dst.data.data_val, d.dst_room); /* no allocation */
	assert_int_equal(d.src_kind, VAAI_NAS_SRC_FH);
	assert_memory_equal(d.src.data.data_val, a.src_room, 40);
	assert_int_equal(d.cmd_len, VAAI_NAS_CMD_BYTES);
	assert_memory_equal(d.cmd, a.cmd, VAAI_NAS_CMD_BYTES);
	/* Truncated anywhere: no decode. */
	for (size_t len = 0; len < n; len++) {
		assert_false(args_decode(buf, len, &d));
	}
	/* Without a source handle. */
	a.src_kind = VAAI_NAS_SRC_NONE;
	n = args_encode(&a, buf, sizeof(buf));
	assert_int_equal(n, 36 + 4 + 300);
	assert_true(args_decode(buf, n, &d));
	assert_int_equal(d.src.data.data_len, 0);
	/* The union's discriminant past its two arms. */
	put32((uint8_t *)buf + 36, htonl(2));
	assert_false(args_decode(buf, n, &d));
	/* The largest command decodes; one byte more does not. */
	args_fill(&a, VAAI_NAS_CMDARG_MAX);
	n = args_encode(&a, buf, sizeof(buf));
	assert_true(args_decode(buf, n, &d));
	assert_int_equal(d.cmd_len, VAAI_NAS_CMDARG_MAX);
	a.src_kind = VAAI_NAS_SRC_NONE;
	n = args_encode(&a, buf, sizeof(buf));
	/* The command's length word sits after the handle and the arm. */
	put32((uint8_t *)buf + 40, htonl(VAAI_NAS_CMDARG_MAX + 1));
	assert_false(args_decode(buf, sizeof(buf), &d));
	put32((uint8_t *)buf + 40, htonl(0xffffffffu));
	assert_false(args_decode(buf, sizeof(buf), &d));
	/* A handle past 64 bytes. */
	put32((uint8_t *)buf, htonl(65));
	assert_false(args_decode(buf, sizeof(buf), &d));
}

static void test_res_xdr(void **state)
{
	struct vaai_nas_res r = { .status = 28, .len = VAAI_NAS_OUT_BYTES };
	struct vaai_nas_res d = { 0 };
	char buf[256];
	XDR x;

	(void)state;
	memset(r.data, 0x7e, sizeof(r.data));
	xdrmem_create(&x, buf, sizeof(buf), XDR_ENCODE);
	assert_true(vaai_nas_xdr_res(&x, &r));
	assert_int_equal(xdr_getpos(&x), 4 + 4 + VAAI_NAS_OUT_BYTES);
	xdr_destroy(&x);
	xdrmem_create(&x, buf, sizeof(buf), XDR_DECODE);
	assert_true(vaai_nas_xdr_res(&x, &d));
	xdr_destroy(&x);
	assert_int_equal(d.status, 28);
	assert_int_equal(d.len, VAAI_NAS_OUT_BYTES);
	assert_memory_equal(d.data, r.data, VAAI_NAS_OUT_BYTES);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cmd_layout),
		cmocka_unit_test(test_cmd_refused),
		cmocka_unit_test(test_clone_name_refused),
		cmocka_unit_test(test_out_layout),
		cmocka_unit_test(test_args_xdr),
		cmocka_unit_test(test_res_xdr),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
