// SPDX-License-Identifier: Apache-2.0
/*
 * test_record_direct: reading a large record's bytes in place
 * (rpc_record_direct, nfsd/rpc/record.c).  Once a fragment's mark is in,
 * its payload may be written straight into the record's buffer; the
 * record then comes out as if fed, across fragments, one byte at a time,
 * and the record after it is fed as usual.  Small records and the gap
 * between fragments offer no place.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nfsd/rpc/record.h"

#define TEST_MAX 8192
#define TEST_MIN 1000 /* records from this size are read in place */

static void put_mark(uint8_t *p, uint32_t len, bool last)
{
	rpc_record_mark_encode(p, len);
	if (!last) {
		p[0] &= 0x7f;
	}
}

static void fill(uint8_t *p, size_t len, uint8_t seed)
{
	for (size_t i = 0; i < len; i++) {
		p[i] = (uint8_t)(seed + i * 7);
	}
}

static int setup(void **state)
{
	struct rpc_record *rec = malloc(sizeof(*rec));

	if (!rec) {
		return -1;
	}
	rpc_record_init(rec, TEST_MAX);
	*state = rec;
	return 0;
}

static int teardown(void **state)
{
	rpc_record_fini(*state);
	free(*state);
	return 0;
}

/* Feeds @len bytes that must all be used without ending a record. */
static void feed_partial(struct rpc_record *rec, const uint8_t *p, size_t len)
{
	const uint8_t *out = NULL;
	size_t used = 0, out_len = 0;

	assert_int_equal(rpc_record_feed(rec, p, len, &used, &out, &out_len),
			 0);
	assert_int_equal(used, len);
}

static void test_direct_rest_of_record_in_place(void **state)
{
	struct rpc_record *rec = *state;
	uint8_t wire[4 + 3000];
	const uint8_t *out = NULL;
	size_t room = 0, out_len = 0;
	uint8_t *at;

	put_mark(wire, 3000, true);
	fill(wire + 4, 3000, 3);
	feed_partial(rec, wire, 4 + 100);
	at = rpc_record_direct(rec, TEST_MIN, &room);
	assert_non_null(at);
	assert_int_equal(room, 2900);
	assert_true(rpc_record_partial(rec));
	memcpy(at, wire + 4 + 100, 2900);
	assert_int_equal(rpc_record_direct_done(rec, 2900, &out, &out_len), 1);
	assert_int_equal(out_len, 3000);
	assert_ptr_equal(out, at - 100);
	assert_memory_equal(out, wire + 4, 3000);
	/* Between records there is no place until the next mark. */
	assert_null(rpc_record_direct(rec, TEST_MIN, &room));
	assert_false(rpc_record_partial(rec));
}

static void test_direct_small_record_offers_no_place(void **state)
{
	struct rpc_record *rec = *state;
	uint8_t wire[4 + 999];
	size_t room = 0;

	put_mark(wire, 999, true);
	fill(wire + 4, 999, 1);
	assert_null(rpc_record_direct(rec, TEST_MIN, &room));
	feed_partial(rec, wire, 4 + 10);
	assert_null(rpc_record_direct(rec, TEST_MIN, &room));
	/* The same record is large enough for a lower bound. */
	assert_non_null(rpc_record_direct(rec, 999, &room));
	assert_int_equal(room, 989);
}

static void test_direct_one_byte_at_a_time(void **state)
{
	struct rpc_record *rec = *state;
	uint8_t wire[4 + 1500];
	const uint8_t *out = NULL;
	size_t room = 0, out_len = 0;

	put_mark(wire, 1500, true);
	fill(wire + 4, 1500, 9);
	feed_partial(rec, wire, 1);
	feed_partial(rec, wire + 1, 3);
	for (size_t i = 0; i < 1500; i++) {
		uint8_t *at = rpc_record_direct(rec, TEST_MIN, &room);

		assert_non_null(at);
		assert_int_equal(room, 1500 - i);
		*at = wire[4 + i];
		assert_int_equal(rpc_record_direct_done(rec, 1, &out, &out_len),
				 i == 1499 ? 1 : 0);
	}
	assert_int_equal(out_len, 1500);
	assert_memory_equal(out, wire + 4, 1500);
}

static void test_direct_joins_fragments(void **state)
{
	struct rpc_record *rec = *state;
	uint8_t want[1200 + 800], m[4];
	const uint8_t *out = NULL;
	size_t room = 0, out_len = 0;
	uint8_t *at;

	fill(want, sizeof(want), 5);
	put_mark(m, 1200, false);
	feed_partial(rec, m, 4);
	feed_partial(rec, want, 200);
	at = rpc_record_direct(rec, TEST_MIN, &room);
	assert_non_null(at);
	assert_int_equal(room, 1000);
	memcpy(at, want + 200, 1000);
	assert_int_equal(rpc_record_direct_done(rec, 1000, &out, &out_len), 0);
	/* The next mark is fed: no place before it. */
	assert_null(rpc_record_direct(rec, 1, &room));
	assert_true(rpc_record_partial(rec));
	put_mark(m, 800, true);
	feed_partial(rec, m, 4);
	at = rpc_record_direct(rec, TEST_MIN, &room);
	assert_non_null(at);
	assert_int_equal(room, 800);
	memcpy(at, want + 1200, 800);
	assert_int_equal(rpc_record_direct_done(rec, 800, &out, &out_len), 1);
	assert_int_equal(out_len, sizeof(want));
	assert_memory_equal(out, want, sizeof(want));
}

static void test_direct_next_record_is_fed_as_usual(void **state)
{
	struct rpc_record *rec = *state;
	uint8_t big[4 + 2000], small[4 + 20];
	const uint8_t *out = NULL;
	size_t room = 0, used = 0, out_len = 0;
	uint8_t *at;

	put_mark(big, 2000, true);
	fill(big + 4, 2000, 11);
	put_mark(small, 20, true);
	fill(small + 4, 20, 200);
	feed_partial(rec, big, 4);
	at = rpc_record_direct(rec, TEST_MIN, &room);
	assert_non_null(at);
	memcpy(at, big + 4, 2000);
	assert_int_equal(rpc_record_direct_done(rec, 2000, &out, &out_len), 1);
	assert_memory_equal(out, big + 4, 2000);
	assert_int_equal(rpc_record_feed(rec, small, sizeof(small), &used, &out,
					 &out_len),
			 1);
	assert_int_equal(used, sizeof(small));
	assert_int_equal(out_len, 20);
	assert_memory_equal(out, small + 4, 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_direct_rest_of_record_in_place, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_direct_small_record_offers_no_place, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_direct_one_byte_at_a_time,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_direct_joins_fragments,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_direct_next_record_is_fed_as_usual, setup,
			teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
