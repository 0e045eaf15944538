// SPDX-License-Identifier: Apache-2.0
/*
 * test_store_ilog_record: the intent log's on-disk codec
 * (nfsd/store/ilog/ilog_record.c) on bytes alone: a WRITE and a PAD record
 * decode to what was encoded; a header that the encoder would never write
 * (a PAD carrying an offset, a length, a handle; a WRITE whose record
 * length does not match), a bad checksum, another run's salt and a record
 * cut short are refused with the errno replay reports.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <xxhash.h>

#include "nfsd/store/ilog/ilog_record.h"

#define SALT UINT64_C(0x1122334455667788)
#define LSN UINT64_C(4000)

static uint8_t rec[STORE_ILOG_HEAD_BYTES + STORE_FH_MAX + 4096 + 8];

/* Re-seals the header after a test changed a field of it. */
static void reseal_head(uint8_t *p)
{
	uint64_t h = XXH3_64bits(p, 48);

	for (int i = 0; i < 8; i++) {
		p[48 + i] = (uint8_t)(h >> (8 * i));
	}
}

static uint32_t write_rec(void)
{
	struct store_fh fh = { .len = 12 };
	char data[100];

	memset(fh.data, 0xab, fh.len);
	memset(data, 'x', sizeof(data));
	store__ilog_rec_encode(rec, SALT, LSN, &fh, 8192, data, sizeof(data));
	return store__ilog_rec_len(fh.len, sizeof(data));
}

static void test_write_record_decodes_to_what_was_encoded(void **state)
{
	uint32_t len = write_rec();
	struct store_ilog_rec out;

	(void)state;
	assert_int_equal(store__ilog_rec_decode(rec, len, SALT, LSN, &out), 0);
	assert_int_equal(out.type, STORE_ILOG_REC_WRITE);
	assert_int_equal(out.rec_len, len);
	assert_int_equal(out.off_bytes, 8192);
	assert_int_equal(out.data_len, 100);
	assert_int_equal(out.fh.len, 12);
	assert_ptr_equal(out.data, rec + STORE_ILOG_HEAD_BYTES + 12);
	/* Cut short, another run's salt, another LSN, a bad body. */
	assert_int_equal(store__ilog_rec_decode(rec, len - 8, SALT, LSN, &out),
			 -EINVAL);
	assert_int_equal(store__ilog_rec_decode(rec, len, SALT + 1, LSN, &out),
			 -ENODATA);
	assert_int_equal(store__ilog_rec_decode(rec, len, SALT, LSN + 8, &out),
			 -ENODATA);
	rec[len - 9] ^= 1;
	assert_int_equal(store__ilog_rec_decode(rec, len, SALT, LSN, &out),
			 -EBADMSG);
}

static void test_write_record_with_a_wrong_length_is_refused(void **state)
{
	uint32_t len = write_rec();
	struct store_ilog_rec out;

	(void)state;
	rec[36] += 8; /* rec_len, sealed again: the header is "valid" */
	reseal_head(rec);
	assert_int_equal(store__ilog_rec_decode(rec, len + 8, SALT, LSN, &out),
			 -EINVAL);
}

/* The fuzzer's find (tests/fuzz/corpus/ilog_record/pad-with-offset): a PAD
 * that carried an offset decoded, and was not what the encoder writes. */
static void test_pad_holding_anything_is_refused(void **state)
{
	struct store_ilog_rec out;
	const uint32_t len = 96;

	(void)state;
	store__ilog_pad_encode(rec, SALT, LSN, len);
	assert_int_equal(store__ilog_rec_decode(rec, len, SALT, LSN, &out), 0);
	assert_int_equal(out.type, STORE_ILOG_REC_PAD);
	assert_int_equal(out.rec_len, len);
	for (unsigned field = 0; field < 3; field++) {
		static const unsigned at[] = { 24, 32, 6 }; /* off, data, fh */

		store__ilog_pad_encode(rec, SALT, LSN, len);
		rec[at[field]] = 4;
		reseal_head(rec);
		assert_int_equal(
			store__ilog_rec_decode(rec, len, SALT, LSN, &out),
			-EINVAL);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_record_decodes_to_what_was_encoded),
		cmocka_unit_test(
			test_write_record_with_a_wrong_length_is_refused),
		cmocka_unit_test(test_pad_holding_anything_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
