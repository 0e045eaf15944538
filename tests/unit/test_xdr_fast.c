// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests for nfsd/proto/xdr_fast.c: the READ reply in two parts must be
 * the same bytes on the wire as xdr_READ3res() would write.
 */
#include "nfsd/proto/xdr_fast.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/lib/xdr_roundtrip.h"

static void fill_ok(READ3res *res, size_t len)
{
	READ3resok *ok = &res->READ3res_u.resok;

	memset(res, 0, sizeof(*res));
	res->status = NFS3_OK;
	ok->file_attributes.attributes_follow = TRUE;
	ok->file_attributes.post_op_attr_u.attributes.size = 12345;
	ok->file_attributes.post_op_attr_u.attributes.fileid = 77;
	ok->count = (count3)len;
	ok->eof = TRUE;
	ok->data.data_len = (u_int)len;
	ok->data.data_val = malloc(len ? len : 1);
	assert_non_null(ok->data.data_val);
	for (size_t i = 0; i < len; i++) {
		ok->data.data_val[i] = (char)(i * 7 + 1);
	}
}

/* head + payload + padding == the generated encoding, for every padding. */
static void test_read_reply_in_two_parts_is_the_same_bytes(void **state)
{
	static uint8_t whole[70000], head[512], joined[70000];

	(void)state;
	for (size_t len = 1; len <= 9; len++) {
		size_t sizes[] = { len, 65536 + len };

		for (size_t k = 0; k < 2; k++) {
			READ3res res;
			uint8_t *payload;
			size_t whole_len, head_len, n, pad;

			fill_ok(&res, sizes[k]);
			assert_int_equal(
				xdr_roundtrip_encode((xdrproc_t)xdr_READ3res,
						     &res, whole, sizeof(whole),
						     &whole_len),
				0);
			/* As a READ handing its buffer over apart
			 * (request_reply_payload): the length stays. */
			payload = (uint8_t *)res.READ3res_u.resok.data.data_val;
			n = res.READ3res_u.resok.data.data_len;
			res.READ3res_u.resok.data.data_val = NULL;
			assert_int_equal(xdr_roundtrip_encode(
						 (xdrproc_t)xdr_READ3res_head,
						 &res, head, sizeof(head),
						 &head_len),
					 0);
			pad = (4 - n % 4) % 4;
			memcpy(joined, head, head_len);
			memcpy(joined + head_len, payload, n);
			memset(joined + head_len + n, 0, pad);
			assert_int_equal(head_len + n + pad, whole_len);
			assert_memory_equal(joined, whole, whole_len);
			free(payload);
		}
	}
}

/* A failed READ has no payload: the head encoder writes it whole. */
static void test_failed_read_encodes_whole_through_the_head(void **state)
{
	static uint8_t whole[512], head[512];
	size_t whole_len, head_len;
	READ3res res;

	(void)state;
	memset(&res, 0, sizeof(res));
	res.status = NFS3ERR_STALE;
	res.READ3res_u.resfail.file_attributes.attributes_follow = TRUE;
	assert_int_equal(xdr_roundtrip_encode((xdrproc_t)xdr_READ3res, &res,
					      whole, sizeof(whole), &whole_len),
			 0);
	assert_int_equal(xdr_roundtrip_encode((xdrproc_t)xdr_READ3res_head,
					      &res, head, sizeof(head),
					      &head_len),
			 0);
	assert_int_equal(head_len, whole_len);
	assert_memory_equal(head, whole, whole_len);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			test_read_reply_in_two_parts_is_the_same_bytes),
		cmocka_unit_test(
			test_failed_read_encodes_whole_through_the_head),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
