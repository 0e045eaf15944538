// SPDX-License-Identifier: Apache-2.0
/*
 * test_rpc_pool: the per-loop free lists (nfsd/rpc/pool.c): a freed block
 * comes back to the next allocation of its class, the bytes a pool keeps
 * never pass its bound, large blocks bypass it, references keep a block
 * alive, a trim keeps only the low-water mark; and the record reassembly
 * (rpc/record.c) that hands a held record's buffer over and assembles the next
 * one elsewhere.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "nfsd/rpc/pool.h"
#include "nfsd/rpc/record.h"

/* One 64-byte class block, header included, as the pool counts it. */
static size_t small_block_bytes(struct rpc_pool *pool)
{
	struct rpc_pool_stats st;
	void *b = rpc_buf_alloc(pool, 1);

	rpc_buf_unref(b);
	rpc_pool_stats_get(pool, &st);
	return st.kept_bytes;
}

static void test_pool_reuses_a_freed_block_of_its_class(void **state)
{
	struct rpc_pool *pool;
	struct rpc_pool_stats st;
	void *a, *b;

	(void)state;
	assert_int_equal(rpc_pool_new(RPC_POOL_DEFAULT_MAX_BYTES, &pool), 0);
	a = rpc_buf_alloc(pool, 700);
	assert_non_null(a);
	assert_int_equal(rpc_buf_cap(a), 1024);
	memset(a, 0xab, 700);
	rpc_buf_unref(a);
	/* Any size of the same class gets the same block back. */
	b = rpc_buf_alloc(pool, 1000);
	assert_ptr_equal(a, b);
	rpc_buf_unref(b);
	rpc_pool_stats_get(pool, &st);
	assert_int_equal(st.allocs, 2);
	assert_int_equal(st.heap_allocs, 1);
	assert_int_equal(st.heap_frees, 0);
	assert_int_equal(st.kept_blocks, 1);
	assert_int_equal(st.outstanding, 0);
	rpc_pool_free(pool);
}

static void test_pool_zalloc_zeroes_a_reused_block(void **state)
{
	struct rpc_pool *pool;
	uint8_t *a, *b;

	(void)state;
	assert_int_equal(rpc_pool_new(RPC_POOL_DEFAULT_MAX_BYTES, &pool), 0);
	a = rpc_buf_alloc(pool, 200);
	memset(a, 0xff, 200);
	rpc_buf_unref(a);
	b = rpc_buf_zalloc(pool, 200);
	assert_ptr_equal(a, b);
	for (size_t i = 0; i < 200; i++) {
		assert_int_equal(b[i], 0);
	}
	rpc_buf_unref(b);
	rpc_pool_free(pool);
}

/* A pool keeps at most max_bytes; what would pass it goes to the heap. */
static void test_pool_keeps_no_more_than_its_bound(void **state)
{
	struct rpc_pool *probe, *pool;
	struct rpc_pool_stats st;
	void *b[5];
	size_t one;

	(void)state;
	assert_int_equal(rpc_pool_new(RPC_POOL_DEFAULT_MAX_BYTES, &probe), 0);
	one = small_block_bytes(probe);
	rpc_pool_free(probe);
	assert_true(one > RPC_POOL_MIN_CLASS_BYTES);

	assert_int_equal(rpc_pool_new(2 * one, &pool), 0);
	for (size_t i = 0; i < 5; i++) {
		b[i] = rpc_buf_alloc(pool, 10);
	}
	for (size_t i = 0; i < 5; i++) {
		rpc_buf_unref(b[i]);
	}
	rpc_pool_stats_get(pool, &st);
	assert_int_equal(st.kept_blocks, 2);
	assert_int_equal(st.kept_bytes, 2 * one);
	assert_int_equal(st.heap_frees, 3);
	assert_int_equal(st.outstanding, 0);

	/* The two kept come back before the heap is asked again. */
	for (size_t i = 0; i < 3; i++) {
		b[i] = rpc_buf_alloc(pool, 10);
	}
	rpc_pool_stats_get(pool, &st);
	assert_int_equal(st.heap_allocs, 5 + 1);
	for (size_t i = 0; i < 3; i++) {
		rpc_buf_unref(b[i]);
	}
	rpc_pool_free(pool);
}

/* A bound of zero keeps nothing: every block is the heap's. */
/* A burst's reserve goes back to the heap once the loop is
 * quiet; the big blocks first, what is left still serves. */
static void test_pool_trim_keeps_the_low_water_mark(void **state)
{
	struct rpc_pool *pool;
	struct rpc_pool_stats st;
	void *big[24], *small[64];
	size_t freed;

	(void)state;
	assert_int_equal(rpc_pool_new(RPC_POOL_DEFAULT_MAX_BYTES, &pool), 0);
	for (size_t i = 0; i < 24; i++) {
		big[i] = rpc_buf_alloc(pool, 100 * 1024); /* 128 KiB class */
	}
	for (size_t i = 0; i < 64; i++) {
		small[i] = rpc_buf_alloc(pool, 200); /* 256 B class */
	}
	for (size_t i = 0; i < 24; i++) {
		rpc_buf_unref(big[i]);
	}
	for (size_t i = 0; i < 64; i++) {
		rpc_buf_unref(small[i]);
	}
	rpc_pool_stats_get(pool, &st);
	assert_true(st.kept_bytes > 3u * 1024 * 1024);
	size_t before = st.kept_bytes;
	uint64_t frees = st.heap_frees;

	freed = rpc_pool_trim(pool, RPC_POOL_LOW_WATER_BYTES);
	rpc_pool_stats_get(pool, &st);
	assert_true(st.kept_bytes <= RPC_POOL_LOW_WATER_BYTES);
	assert_int_equal(freed, before - st.kept_bytes);
	assert_true(st.heap_frees > frees);
	/* Largest first: the small blocks (64 x 272 B) all stayed. */
	assert_true(st.kept_blocks >= 64);
	assert_int_equal(st.outstanding, 0);

	/* Still a pool: a small block comes from its list, no malloc. */
	uint64_t heap = st.heap_allocs;
	void *b = rpc_buf_alloc(pool, 200);
	rpc_pool_stats_get(pool, &st);
	assert_int_equal(st.heap_allocs, heap);
	rpc_buf_unref(b);

	rpc_pool_stats_get(pool, &st);
	assert_int_equal(rpc_pool_trim(pool, 0), st.kept_bytes);
	rpc_pool_stats_get(pool, &st);
	assert_int_equal(st.kept_bytes, 0);
	assert_int_equal(st.kept_blocks, 0);
	rpc_pool_free(pool);
}

static void test_pool_with_no_room_keeps_nothing(void **state)
{
	struct rpc_pool *pool;
	struct rpc_pool_stats st;

	(void)state;
	assert_int_equal(rpc_pool_new(0, &pool), 0);
	for (size_t i = 0; i < 3; i++) {
		rpc_buf_unref(rpc_buf_alloc(pool, 64));
	}
	rpc_pool_stats_get(pool, &st);
	assert_int_equal(st.heap_allocs, 3);
	assert_int_equal(st.heap_frees, 3);
	assert_int_equal(st.kept_bytes, 0);
	rpc_pool_free(pool);
}

/* Past the largest class a block is sized exactly and never kept. */
static void test_pool_large_blocks_bypass_the_lists(void **state)
{
	struct rpc_pool *pool;
	struct rpc_pool_stats st;
	size_t big = RPC_POOL_MAX_CLASS_BYTES + 1;
	uint8_t *b;

	(void)state;
	assert_int_equal(rpc_pool_new(64u * 1024 * 1024, &pool), 0);
	b = rpc_buf_alloc(pool, big);
	assert_non_null(b);
	assert_int_equal(rpc_buf_cap(b), big);
	b[big - 1] = 1;
	rpc_buf_unref(b);
	rpc_pool_stats_get(pool, &st);
	assert_int_equal(st.kept_blocks, 0);
	assert_int_equal(st.heap_frees, 1);
	b = rpc_buf_alloc(pool, RPC_POOL_MAX_CLASS_BYTES);
	assert_int_equal(rpc_buf_cap(b), RPC_POOL_MAX_CLASS_BYTES);
	rpc_buf_unref(b);
	rpc_pool_stats_get(pool, &st);
	assert_int_equal(st.kept_blocks, 1);
	rpc_pool_free(pool);
}

static void test_buf_references_keep_it_alive(void **state)
{
	struct rpc_pool *pool;
	struct rpc_pool_stats st;
	uint8_t *b;

	(void)state;
	assert_int_equal(rpc_pool_new(RPC_POOL_DEFAULT_MAX_BYTES, &pool), 0);
	b = rpc_buf_alloc(pool, 100);
	assert_false(rpc_buf_shared(b));
	rpc_buf_ref(b);
	assert_true(rpc_buf_shared(b));
	rpc_buf_unref(b);
	assert_false(rpc_buf_shared(b));
	rpc_pool_stats_get(pool, &st);
	assert_int_equal(st.outstanding, 1);
	rpc_buf_unref(b);
	rpc_pool_stats_get(pool, &st);
	assert_int_equal(st.outstanding, 0);
	assert_int_equal(st.kept_blocks, 1);
	rpc_pool_free(pool);
}

/* A block of no pool is a plain heap block with the same interface. */
static void test_buf_without_a_pool_is_a_heap_block(void **state)
{
	uint8_t *b = rpc_buf_zalloc(NULL, 3000);

	(void)state;
	assert_non_null(b);
	assert_int_equal(b[2999], 0);
	assert_true(rpc_buf_cap(b) >= 3000);
	rpc_buf_ref(b);
	rpc_buf_unref(b);
	rpc_buf_unref(b);
	rpc_buf_unref(NULL);
}

/* A pool freed while a block is out lives until that block comes back
 * (ASan reports a leak or a use after free otherwise). */
static void test_pool_freed_early_goes_with_its_last_block(void **state)
{
	struct rpc_pool *pool;
	uint8_t *b;

	(void)state;
	assert_int_equal(rpc_pool_new(RPC_POOL_DEFAULT_MAX_BYTES, &pool), 0);
	rpc_buf_unref(rpc_buf_alloc(pool, 64)); /* one kept */
	b = rpc_buf_alloc(pool, 5000);
	rpc_pool_free(pool);
	b[4999] = 7;
	rpc_buf_unref(b);
}

/* Feeds one whole record of @len bytes of @fill; returns it. */
static const uint8_t *feed_one(struct rpc_record *rec, uint8_t fill, size_t len)
{
	uint8_t msg[4 + 512];
	const uint8_t *out = NULL;
	size_t used, out_len = 0;

	assert_true(len <= 512);
	rpc_record_mark_encode(msg, (uint32_t)len);
	memset(msg + 4, fill, len);
	assert_int_equal(
		rpc_record_feed(rec, msg, 4 + len, &used, &out, &out_len), 1);
	assert_int_equal(used, 4 + len);
	assert_int_equal(out_len, len);
	return out;
}

/*
 * The ownership rule of a WRITE's in-place data: a record someone keeps a
 * reference on is not overwritten by the next one, and comes back to the
 * pool when its holder lets go.
 */
static void test_record_held_is_not_overwritten(void **state)
{
	struct rpc_pool *pool;
	struct rpc_pool_stats st;
	struct rpc_record rec;
	const uint8_t *first, *second, *third;

	(void)state;
	assert_int_equal(rpc_pool_new(RPC_POOL_DEFAULT_MAX_BYTES, &pool), 0);
	rpc_record_init(&rec, 4096);
	rpc_record_set_pool(&rec, pool);

	first = feed_one(&rec, 0x11, 100);
	rpc_buf_ref((void *)first); /* a request keeps it */
	second = feed_one(&rec, 0x22, 100);
	assert_ptr_not_equal(first, second);
	for (size_t i = 0; i < 100; i++) {
		assert_int_equal(first[i], 0x11);
	}
	rpc_buf_unref((void *)first);

	/* Nobody kept the second: the third reuses its buffer in place. */
	third = feed_one(&rec, 0x33, 100);
	assert_ptr_equal(second, third);
	rpc_record_fini(&rec);
	rpc_pool_stats_get(pool, &st);
	assert_int_equal(st.outstanding, 0);
	assert_int_equal(st.heap_allocs, 2);
	rpc_pool_free(pool);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool_reuses_a_freed_block_of_its_class),
		cmocka_unit_test(test_pool_zalloc_zeroes_a_reused_block),
		cmocka_unit_test(test_pool_keeps_no_more_than_its_bound),
		cmocka_unit_test(test_pool_trim_keeps_the_low_water_mark),
		cmocka_unit_test(test_pool_with_no_room_keeps_nothing),
		cmocka_unit_test(test_pool_large_blocks_bypass_the_lists),
		cmocka_unit_test(
			test_pool_freed_early_goes_with_its_last_block),
		cmocka_unit_test(test_buf_references_keep_it_alive),
		cmocka_unit_test(test_buf_without_a_pool_is_a_heap_block),
		cmocka_unit_test(test_record_held_is_not_overwritten),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
