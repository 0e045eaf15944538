// SPDX-License-Identifier: Apache-2.0
/*
 * test_record: record marking (nfsd/rpc/record.c, RFC 5531 11).  Records
 * come out whole however the stream is cut: in one feed, one byte at a
 * time, across fragments, two to a buffer.  Marks that ask for more than
 * max_bytes fail with -EMSGSIZE before anything is allocated.  Between
 * records, trimming gives the buffer back (a stream at rest holds none),
 * leaves a partial record alone, and keeps a record someone holds valid.
 * Lent input: a whole record is handed out where it lies; part of one
 * asks for more; fragments, records off a word boundary or larger than
 * a buffer are fed; a mark past max_bytes fails.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nfsd/rpc/pool.h"
#include "nfsd/rpc/record.h"

#define TEST_MAX 4096

static void put_mark(uint8_t *p, uint32_t len, bool last)
{
	uint32_t v = len | (last ? RPC_RECORD_LAST_FRAGMENT : 0);

	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Fills @p with @len bytes counting up from @seed. */
static void fill(uint8_t *p, size_t len, uint8_t seed)
{
	for (size_t i = 0; i < len; i++) {
		p[i] = (uint8_t)(seed + i);
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

static void test_record_one_feed_gives_the_record(void **state)
{
	struct rpc_record *rec = *state;
	uint8_t wire[4 + 100];
	const uint8_t *out = NULL;
	size_t used = 0, out_len = 0;

	put_mark(wire, 100, true);
	fill(wire + 4, 100, 7);
	assert_int_equal(
		rpc_record_feed(rec, wire, sizeof(wire), &used, &out, &out_len),
		1);
	assert_int_equal(used, sizeof(wire));
	assert_int_equal(out_len, 100);
	assert_memory_equal(out, wire + 4, 100);
}

static void test_record_byte_at_a_time_gives_the_record(void **state)
{
	struct rpc_record *rec = *state;
	uint8_t wire[4 + 37];
	const uint8_t *out = NULL;
	size_t used, out_len = 0;

	put_mark(wire, 37, true);
	fill(wire + 4, 37, 1);
	for (size_t i = 0; i < sizeof(wire) - 1; i++) {
		assert_int_equal(rpc_record_feed(rec, wire + i, 1, &used, &out,
						 &out_len),
				 0);
		assert_int_equal(used, 1);
	}
	assert_int_equal(rpc_record_feed(rec, wire + sizeof(wire) - 1, 1, &used,
					 &out, &out_len),
			 1);
	assert_int_equal(used, 1);
	assert_int_equal(out_len, 37);
	assert_memory_equal(out, wire + 4, 37);
}

static void test_record_joins_three_fragments(void **state)
{
	struct rpc_record *rec = *state;
	uint8_t wire[3 * 4 + 10 + 20 + 5], want[35];
	const uint8_t *out = NULL;
	size_t used = 0, out_len = 0, pos = 0;

	fill(want, sizeof(want), 100);
	put_mark(wire + pos, 10, false);
	memcpy(wire + pos + 4, want, 10);
	pos += 14;
	put_mark(wire + pos, 20, false);
	memcpy(wire + pos + 4, want + 10, 20);
	pos += 24;
	put_mark(wire + pos, 5, true);
	memcpy(wire + pos + 4, want + 30, 5);
	pos += 9;
	assert_int_equal(pos, sizeof(wire));

	assert_int_equal(
		rpc_record_feed(rec, wire, sizeof(wire), &used, &out, &out_len),
		1);
	assert_int_equal(used, sizeof(wire));
	assert_int_equal(out_len, sizeof(want));
	assert_memory_equal(out, want, sizeof(want));
}

static void test_record_second_record_comes_on_next_feed(void **state)
{
	struct rpc_record *rec = *state;
	uint8_t wire[4 + 8 + 4 + 12 + 3];
	const uint8_t *out = NULL;
	size_t used = 0, out_len = 0;

	put_mark(wire, 8, true);
	fill(wire + 4, 8, 0x10);
	put_mark(wire + 12, 12, true);
	fill(wire + 16, 12, 0x40);
	/* The first bytes of a third record's mark trail the second. */
	memset(wire + 28, 0, 3);

	assert_int_equal(
		rpc_record_feed(rec, wire, sizeof(wire), &used, &out, &out_len),
		1);
	assert_int_equal(used, 12);
	assert_int_equal(out_len, 8);
	assert_memory_equal(out, wire + 4, 8);

	assert_int_equal(rpc_record_feed(rec, wire + 12, sizeof(wire) - 12,
					 &used, &out, &out_len),
			 1);
	assert_int_equal(used, 16);
	assert_int_equal(out_len, 12);
	assert_memory_equal(out, wire + 16, 12);

	assert_int_equal(
		rpc_record_feed(rec, wire + 28, 3, &used, &out, &out_len), 0);
	assert_int_equal(used, 3);
}

static void test_record_mark_of_2gib_fails_without_allocating(void **state)
{
	struct rpc_record *rec = *state;
	const uint8_t wire[4] = { 0xff, 0xff, 0xff, 0xff };
	const uint8_t *out = NULL;
	size_t used = 0, out_len = 0;

	assert_int_equal(
		rpc_record_feed(rec, wire, sizeof(wire), &used, &out, &out_len),
		-EMSGSIZE);
	assert_int_equal(used, 4);
	assert_null(rec->buf);
	assert_int_equal(rec->cap, 0);
}

static void test_record_non_last_2gib_fragment_fails(void **state)
{
	struct rpc_record *rec = *state;
	const uint8_t wire[4] = { 0x7f, 0xff, 0xff, 0xff };
	const uint8_t *out = NULL;
	size_t used = 0, out_len = 0;

	assert_int_equal(
		rpc_record_feed(rec, wire, sizeof(wire), &used, &out, &out_len),
		-EMSGSIZE);
	assert_null(rec->buf);
}

static void test_record_fragments_over_max_bytes_fail(void **state)
{
	struct rpc_record *rec = *state;
	size_t half = TEST_MAX / 2 + 1;
	uint8_t *wire = calloc(1, 8 + 2 * half);
	const uint8_t *out = NULL;
	size_t used = 0, out_len = 0;

	assert_non_null(wire);
	put_mark(wire, (uint32_t)half, false);
	put_mark(wire + 4 + half, (uint32_t)half, true);
	assert_int_equal(
		rpc_record_feed(rec, wire, 8 + 2 * half, &used, &out, &out_len),
		-EMSGSIZE);
	/* Stopped at the second mark, having buffered only the first. */
	assert_int_equal(used, 8 + half);
	assert_true(rec->cap <= TEST_MAX);
	free(wire);
}

static void test_record_of_exactly_max_bytes_is_accepted(void **state)
{
	struct rpc_record *rec = *state;
	uint8_t *wire = calloc(1, 4 + TEST_MAX);
	const uint8_t *out = NULL;
	size_t used = 0, out_len = 0;

	assert_non_null(wire);
	put_mark(wire, TEST_MAX, true);
	fill(wire + 4, TEST_MAX, 3);
	assert_int_equal(
		rpc_record_feed(rec, wire, 4 + TEST_MAX, &used, &out, &out_len),
		1);
	assert_int_equal(out_len, TEST_MAX);
	assert_memory_equal(out, wire + 4, TEST_MAX);
	free(wire);
}

static void test_record_zero_length_last_fragment_ends_it(void **state)
{
	struct rpc_record *rec = *state;
	uint8_t wire[4 + 6 + 4];
	const uint8_t *out = NULL;
	size_t used = 0, out_len = 0;

	put_mark(wire, 6, false);
	fill(wire + 4, 6, 9);
	put_mark(wire + 10, 0, true);
	assert_int_equal(rpc_record_feed(rec, wire, 10, &used, &out, &out_len),
			 0);
	assert_int_equal(used, 10);
	assert_int_equal(
		rpc_record_feed(rec, wire + 10, 4, &used, &out, &out_len), 1);
	assert_int_equal(used, 4);
	assert_int_equal(out_len, 6);
	assert_memory_equal(out, wire + 4, 6);
}

static void test_record_empty_record_is_delivered(void **state)
{
	struct rpc_record *rec = *state;
	uint8_t wire[4 + 4 + 2];
	const uint8_t *out = NULL;
	size_t used = 0, out_len = 99;

	put_mark(wire, 0, true);
	put_mark(wire + 4, 2, true);
	wire[8] = 0xaa;
	wire[9] = 0xbb;
	assert_int_equal(
		rpc_record_feed(rec, wire, sizeof(wire), &used, &out, &out_len),
		1);
	assert_int_equal(used, 4);
	assert_int_equal(out_len, 0);
	assert_int_equal(
		rpc_record_feed(rec, wire + 4, 6, &used, &out, &out_len), 1);
	assert_int_equal(out_len, 2);
	assert_int_equal(out[0], 0xaa);
	assert_int_equal(out[1], 0xbb);
}

/* A 1 MiB record in a pooled stream: once delivered, trim gives its
 * buffer back (to the heap: above the largest class) and the next record
 * still comes out right. */
static void test_record_trim_after_big_record_holds_no_buffer(void **state)
{
	const size_t big = 1024 * 1024;
	uint8_t *wire = malloc(4 + big);
	struct rpc_pool_stats ps;
	struct rpc_pool *pool;
	struct rpc_record rec;
	const uint8_t *out = NULL;
	size_t used = 0, out_len = 0;

	(void)state;
	assert_non_null(wire);
	assert_int_equal(rpc_pool_new(RPC_POOL_DEFAULT_MAX_BYTES, &pool), 0);
	rpc_record_init(&rec, RPC_RECORD_DEFAULT_MAX);
	rpc_record_set_pool(&rec, pool);
	put_mark(wire, (uint32_t)big, true);
	fill(wire + 4, big, 3);
	assert_int_equal(
		rpc_record_feed(&rec, wire, 4 + big, &used, &out, &out_len), 1);
	assert_int_equal(out_len, big);
	assert_non_null(rec.buf);
	rpc_record_trim(&rec);
	assert_null(rec.buf);
	assert_int_equal(rec.cap, 0);
	rpc_pool_stats_get(pool, &ps);
	assert_int_equal(ps.outstanding, 0);
	assert_int_equal(ps.heap_frees, 1);

	put_mark(wire, 8, true);
	fill(wire + 4, 8, 0x70);
	assert_int_equal(rpc_record_feed(&rec, wire, 12, &used, &out, &out_len),
			 1);
	assert_int_equal(out_len, 8);
	assert_memory_equal(out, wire + 4, 8);
	rpc_record_trim(&rec);
	rpc_pool_stats_get(pool, &ps);
	assert_int_equal(ps.outstanding, 0);
	assert_true(ps.kept_blocks >= 1); /* a small one stays in the pool */
	rpc_record_fini(&rec);
	rpc_pool_free(pool);
	free(wire);
}

/* Half a record in: trim keeps it, and the rest completes it. */
static void test_record_trim_keeps_a_partial_record(void **state)
{
	struct rpc_record *rec = *state;
	uint8_t wire[4 + 16];
	const uint8_t *out = NULL;
	size_t used = 0, out_len = 0;

	put_mark(wire, 16, true);
	fill(wire + 4, 16, 0x20);
	assert_int_equal(rpc_record_feed(rec, wire, 10, &used, &out, &out_len),
			 0);
	rpc_record_trim(rec);
	assert_non_null(rec->buf);
	assert_int_equal(
		rpc_record_feed(rec, wire + 10, 10, &used, &out, &out_len), 1);
	assert_int_equal(out_len, 16);
	assert_memory_equal(out, wire + 4, 16);
}

/* A record someone took a reference on survives the trim (a WRITE's data
 * points into it); the stream's next record goes elsewhere. */
static void test_record_trim_keeps_a_held_record_valid(void **state)
{
	struct rpc_record *rec = *state;
	uint8_t wire[4 + 32];
	const uint8_t *out = NULL, *held;
	size_t used = 0, out_len = 0;

	put_mark(wire, 32, true);
	fill(wire + 4, 32, 0x30);
	assert_int_equal(
		rpc_record_feed(rec, wire, sizeof(wire), &used, &out, &out_len),
		1);
	held = out;
	rpc_buf_ref((void *)held);
	rpc_record_trim(rec);
	assert_null(rec->buf);
	fill(wire + 4, 32, 0x90);
	assert_int_equal(
		rpc_record_feed(rec, wire, sizeof(wire), &used, &out, &out_len),
		1);
	assert_ptr_not_equal(out, held);
	for (size_t i = 0; i < 32; i++) {
		assert_int_equal(held[i], (uint8_t)(0x30 + i));
	}
	rpc_buf_unref((void *)held);
}

static void test_record_mark_encode_sets_last_bit(void **state)
{
	uint8_t mark[4];
	const uint8_t want[4] = { 0x80, 0x01, 0x02, 0x03 };
	const uint8_t want0[4] = { 0x80, 0, 0, 0 };

	(void)state;
	rpc_record_mark_encode(mark, 0x010203);
	assert_memory_equal(mark, want, 4);
	rpc_record_mark_encode(mark, 0);
	assert_memory_equal(mark, want0, 4);
}

/* ---- lent input (rpc_record_lent_next) ---- */

static void test_record_lent_whole_record_is_handed_out_in_place(void **state)
{
	uint32_t words[8];
	uint8_t *b = (uint8_t *)words;
	struct rpc_record_lent l;

	put_mark(b, 8, true);
	fill(b + 4, 8, 1);
	put_mark(b + 12, 4, true);
	assert_int_equal(rpc_record_lent_next(*state, b, 20, 64, &l), 0);
	assert_int_equal(l.verdict, RPC_RECORD_LENT_WHOLE);
	assert_ptr_equal(l.rec, b + 4);
	assert_int_equal(l.rec_len, 8);
	assert_int_equal(l.need, 12);
	/* The next one: its mark is in, not all its bytes. */
	assert_int_equal(rpc_record_lent_next(*state, b + 12, 6, 64, &l), 0);
	assert_int_equal(l.verdict, RPC_RECORD_LENT_MORE);
	assert_int_equal(l.need, 8);
}

static void test_record_lent_part_of_a_mark_asks_for_more(void **state)
{
	uint32_t words[2];
	uint8_t *b = (uint8_t *)words;
	struct rpc_record_lent l;

	put_mark(b, 100, true);
	for (size_t n = 0; n < 4; n++) {
		assert_int_equal(rpc_record_lent_next(*state, b, n, 64, &l), 0);
		assert_int_equal(l.verdict, RPC_RECORD_LENT_MORE);
		assert_int_equal(l.need, 0);
	}
}

static void test_record_lent_fragment_is_fed(void **state)
{
	uint32_t words[4];
	uint8_t *b = (uint8_t *)words;
	struct rpc_record_lent l;

	put_mark(b, 4, false);
	assert_int_equal(rpc_record_lent_next(*state, b, 16, 64, &l), 0);
	assert_int_equal(l.verdict, RPC_RECORD_LENT_FEED);
}

static void test_record_lent_record_off_a_word_is_fed(void **state)
{
	uint32_t words[4];
	uint8_t *b = (uint8_t *)words;
	struct rpc_record_lent l;

	put_mark(b + 1, 4, true);
	assert_int_equal(rpc_record_lent_next(*state, b + 1, 8, 64, &l), 0);
	assert_int_equal(l.verdict, RPC_RECORD_LENT_FEED);
}

static void test_record_lent_record_larger_than_a_buffer_is_fed(void **state)
{
	uint32_t words[4];
	uint8_t *b = (uint8_t *)words;
	struct rpc_record_lent l;

	put_mark(b, 61, true); /* 65 bytes with its mark: one too many */
	assert_int_equal(rpc_record_lent_next(*state, b, 16, 64, &l), 0);
	assert_int_equal(l.verdict, RPC_RECORD_LENT_FEED);
	put_mark(b, 60, true);
	assert_int_equal(rpc_record_lent_next(*state, b, 16, 64, &l), 0);
	assert_int_equal(l.verdict, RPC_RECORD_LENT_MORE);
	assert_int_equal(l.need, 64);
}

static void test_record_lent_mark_over_max_bytes_fails(void **state)
{
	uint32_t words[2];
	uint8_t *b = (uint8_t *)words;
	struct rpc_record_lent l;

	put_mark(b, TEST_MAX + 1, true);
	assert_int_equal(rpc_record_lent_next(*state, b, 8, 1u << 20, &l),
			 -EMSGSIZE);
	put_mark(b, 0x7fffffff, false);
	assert_int_equal(rpc_record_lent_next(*state, b, 8, 1u << 20, &l),
			 -EMSGSIZE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_record_one_feed_gives_the_record, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_record_byte_at_a_time_gives_the_record, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_record_joins_three_fragments, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_record_second_record_comes_on_next_feed, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_record_mark_of_2gib_fails_without_allocating,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_record_non_last_2gib_fragment_fails, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_record_fragments_over_max_bytes_fail, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_record_of_exactly_max_bytes_is_accepted, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_record_zero_length_last_fragment_ends_it, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_record_empty_record_is_delivered, setup, teardown),
		cmocka_unit_test(
			test_record_trim_after_big_record_holds_no_buffer),
		cmocka_unit_test_setup_teardown(
			test_record_trim_keeps_a_partial_record, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_record_trim_keeps_a_held_record_valid, setup,
			teardown),
		cmocka_unit_test(test_record_mark_encode_sets_last_bit),
		cmocka_unit_test_setup_teardown(
			test_record_lent_whole_record_is_handed_out_in_place,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_record_lent_part_of_a_mark_asks_for_more, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_record_lent_fragment_is_fed, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_record_lent_record_off_a_word_is_fed, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_record_lent_record_larger_than_a_buffer_is_fed,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_record_lent_mark_over_max_bytes_fails, setup,
			teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
