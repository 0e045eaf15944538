// SPDX-License-Identifier: Apache-2.0
/*
 * test_readahead: when a file is read ahead (nfsd/store/readahead.c).
 * Reads in order, even out of order inside the near window, make a run
 * that is read ahead once it is long enough, in chunk-aligned pieces up
 * to the window and no further, the window growing with the run (small
 * READs read little ahead); random reads never are; a far read
 * starts a new run and a piece of the old run counts for nothing; a
 * prefetch that does not make reads faster stops the run, one that does
 * keeps it; the end of the file and a failed read stop it; one prefetch
 * is queued at a time, and a cancel lets the next read queue again.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "nfsd/store/readahead.h"

#define KIB 1024ull
#define MIB (1024ull * 1024ull)

static const struct store_ra_params params = {
	.near_bytes = 1 * MIB,
	.streak = 8,
	.start_bytes = 1 * MIB,
	.ahead_bytes = 8 * MIB,
	.chunk_bytes = 4 * MIB,
	.hit_ns = 300000,
};

/* Notes reads of 64 KiB from @from, @count of them, in order; true when
 * one of them asked for a prefetch. */
static bool read_in_order(struct store_ra *ra, uint64_t from, unsigned count,
			  uint64_t took_ns)
{
	bool queued = false;

	for (unsigned i = 0; i < count; i++) {
		queued |= store_ra_note(ra, &params, from + i * 64 * KIB,
					64 * KIB, took_ns);
	}
	return queued;
}

/* Runs the queued prefetch to its end as a thread would, each piece read
 * whole; returns the pieces read. */
static unsigned prefetch_all(struct store_ra *ra)
{
	uint64_t off, len, run;
	unsigned pieces = 0;

	while (store_ra_next(ra, &params, &off, &len, &run)) {
		/* Pieces end on a chunk boundary: one object each. */
		assert_int_equal((off + len) % params.chunk_bytes, 0);
		assert_true(len <= params.chunk_bytes);
		store_ra_done(ra, run, off, len, len, false);
		pieces++;
	}
	assert_false(ra->busy);
	return pieces;
}

static void test_in_order_run_is_read_ahead(void **state)
{
	struct store_ra ra = { 0 };
	uint64_t off, len, run;

	(void)state;
	/* 15 reads of 64 KiB are not a run yet; the 16th (1 MiB) is. */
	assert_false(read_in_order(&ra, 0, 15, 1000000));
	assert_true(
		store_ra_note(&ra, &params, 15 * 64 * KIB, 64 * KIB, 1000000));
	assert_true(ra.busy);
	/* Queued once: the next reads do not queue again. */
	assert_false(read_in_order(&ra, 16 * 64 * KIB, 4, 1000000));
	/* From the furthest end, up to the next chunk boundary. */
	assert_true(store_ra_next(&ra, &params, &off, &len, &run));
	assert_int_equal(off, 20 * 64 * KIB);
	assert_int_equal(off + len, 4 * MIB);
	store_ra_done(&ra, run, off, len, len, false);
	/* No piece starts further ahead than the run has read (1.25 MiB). */
	assert_int_equal(prefetch_all(&ra), 0);
	assert_int_equal(ra.ahead_start, 20 * 64 * KIB);
	assert_int_equal(ra.ahead_end, 4 * MIB);
	/* Readers moving on, served fast, grow the window with them. */
	assert_true(read_in_order(&ra, 20 * 64 * KIB, 44, 20000));
	assert_int_equal(prefetch_all(&ra), 1);
	assert_int_equal(ra.ahead_end, 8 * MIB);
	assert_true(read_in_order(&ra, 4 * MIB, 64, 20000));
	assert_int_equal(prefetch_all(&ra), 2);
	assert_int_equal(ra.ahead_end, 16 * MIB);
	/* Past 8 MiB read, the window stays 8 MiB (and a chunk) ahead. */
	assert_true(read_in_order(&ra, 8 * MIB, 128, 20000));
	assert_int_equal(prefetch_all(&ra), 2);
	assert_int_equal(ra.ahead_end, 24 * MIB);
	assert_false(ra.stopped);
}

/* A client's small READs make it read little: nothing before 1 MiB is
 * read, then at most the run's bytes and one chunk ahead. */
static void test_small_reads_read_little_ahead(void **state)
{
	struct store_ra ra = { 0 };
	uint64_t ahead = 0;
	uint64_t off, len, run;

	(void)state;
	for (unsigned i = 0; i < 255; i++) {
		assert_false(store_ra_note(&ra, &params, i * 4 * KIB, 4 * KIB,
					   1000000));
	}
	assert_true(
		store_ra_note(&ra, &params, 255 * 4 * KIB, 4 * KIB, 1000000));
	while (store_ra_next(&ra, &params, &off, &len, &run)) {
		store_ra_done(&ra, run, off, len, len, false);
		ahead += len;
	}
	assert_true(ahead <= ra.run_bytes + params.chunk_bytes);
	assert_int_equal(ahead, 3 * MIB);
}

static void test_out_of_order_inside_window(void **state)
{
	/* 16 READs in flight finish in any order. */
	static const unsigned order[] = { 3,  0, 7, 1,	2,  6,	4,  5,
					  11, 9, 8, 15, 10, 14, 12, 13 };
	struct store_ra ra = { 0 };
	bool queued = false;

	(void)state;
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		queued |= store_ra_note(&ra, &params, order[i] * 64 * KIB,
					64 * KIB, 1000000);
	}
	assert_true(queued);
	assert_int_equal(ra.run, 1);
	assert_int_equal(ra.streak, 16);
	assert_int_equal(ra.hi, 16 * 64 * KIB);
}

static void test_random_reads_never_queue(void **state)
{
	struct store_ra ra = { 0 };
	uint64_t x = 88172645463325252ull;

	(void)state;
	for (unsigned i = 0; i < 10000; i++) {
		/* 8 KiB at random in a 256 MiB file: xorshift */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint64_t off = (x % (256 * MIB / (8 * KIB))) * 8 * KIB;
		uint64_t runs = ra.run;

		if (store_ra_note(&ra, &params, off, 8 * KIB, 1000000)) {
			/* A chance run of 8 near reads: rare, and only
			 * after one. */
			assert_int_equal(ra.run, runs);
			store_ra_cancel(&ra);
		}
	}
	assert_true(ra.run > 9000);
}

static void test_far_read_starts_new_run(void **state)
{
	struct store_ra ra = { 0 };
	uint64_t off, len, run;

	(void)state;
	assert_true(read_in_order(&ra, 0, 16, 1000000));
	assert_true(store_ra_next(&ra, &params, &off, &len, &run));
	/* While that piece is read, a reader jumps 100 MiB on. */
	assert_false(store_ra_note(&ra, &params, 100 * MIB, 64 * KIB, 1000000));
	assert_int_equal(ra.run, run + 1);
	/* The old run's piece counts for nothing in the new run. */
	store_ra_done(&ra, run, off, len, len, false);
	assert_int_equal(ra.ahead_end, 0);
	assert_int_equal(ra.streak, 1);
	/* The thread asks again: the new run is not one yet (a random
	 * read while a run was read ahead reads nothing ahead). */
	assert_false(store_ra_next(&ra, &params, &off, &len, &run));
	assert_false(ra.busy);
	assert_true(read_in_order(&ra, 100 * MIB + 64 * KIB, 15, 1000000));
	assert_true(store_ra_next(&ra, &params, &off, &len, &run));
	assert_int_equal(off, 100 * MIB + 16 * 64 * KIB);
}

static void test_slow_prefetched_reads_stop_run(void **state)
{
	struct store_ra ra = { 0 };

	(void)state;
	assert_true(read_in_order(&ra, 0, 16, 1000000));
	assert_int_equal(prefetch_all(&ra), 1);
	/* 15 slow reads inside the prefetched range: not yet. */
	read_in_order(&ra, 1 * MIB, STORE_RA_PROBES - 1, 1000000);
	assert_false(ra.stopped);
	/* The 16th slow one: the cache does not keep the data here. */
	read_in_order(&ra, 1 * MIB + (STORE_RA_PROBES - 1) * 64 * KIB, 1,
		      1000000);
	assert_true(ra.stopped);
	/* A stopped run is never queued again... */
	assert_false(read_in_order(&ra, 2 * MIB, 200, 1000));
	/* ...until a new run starts, which is probed afresh. */
	assert_false(store_ra_note(&ra, &params, 900 * MIB, 64 * KIB, 1000));
	assert_false(ra.stopped);
	assert_true(read_in_order(&ra, 900 * MIB + 64 * KIB, 15, 1000000));
}

static void test_one_fast_read_keeps_run(void **state)
{
	struct store_ra ra = { 0 };

	(void)state;
	assert_true(read_in_order(&ra, 0, 16, 1000000));
	prefetch_all(&ra);
	read_in_order(&ra, 1 * MIB, STORE_RA_PROBES - 1, 1000000);
	read_in_order(&ra, 1 * MIB + (STORE_RA_PROBES - 1) * 64 * KIB, 1,
		      50000);
	assert_false(ra.stopped);
	/* Reads outside the prefetched range are not probes: misses
	 * before the window begins prove nothing. */
	assert_int_equal(ra.probes, 0);
}

static void test_end_of_file_and_failure_stop(void **state)
{
	struct store_ra ra = { 0 };
	uint64_t off, len, run;

	(void)state;
	assert_true(read_in_order(&ra, 0, 16, 1000000));
	assert_true(store_ra_next(&ra, &params, &off, &len, &run));
	/* A short piece: the end of the file. */
	store_ra_done(&ra, run, off, len, 1 * MIB, false);
	assert_true(ra.at_eof);
	assert_int_equal(ra.ahead_end, off + 1 * MIB);
	assert_false(store_ra_next(&ra, &params, &off, &len, &run));
	assert_false(read_in_order(&ra, 16 * 64 * KIB, 8, 1000000));

	struct store_ra bad = { 0 };

	assert_true(read_in_order(&bad, 0, 16, 1000000));
	assert_true(store_ra_next(&bad, &params, &off, &len, &run));
	store_ra_done(&bad, run, off, len, 0, true);
	assert_true(bad.stopped);
	assert_false(store_ra_next(&bad, &params, &off, &len, &run));
	assert_false(bad.busy);
}

static void test_overtaken_prefetch_restarts_at_readers(void **state)
{
	struct store_ra ra = { 0 };
	uint64_t off, len, run;

	(void)state;
	assert_true(read_in_order(&ra, 0, 16, 1000000));
	assert_true(store_ra_next(&ra, &params, &off, &len, &run));
	store_ra_done(&ra, run, off, len, len, false);
	/* Readers ran past the window before the thread came back (the
	 * prefetch still busy: none queued): the next piece starts where
	 * they are, a range anew. */
	assert_false(read_in_order(&ra, 1 * MIB, 136, 20000));
	assert_true(store_ra_next(&ra, &params, &off, &len, &run));
	assert_int_equal(off, 9 * MIB + 512 * KIB);
	store_ra_done(&ra, run, off, len, len, false);
	assert_int_equal(ra.ahead_start, 9 * MIB + 512 * KIB);
	assert_int_equal(ra.ahead_end, 12 * MIB);
}

static void test_cancel_lets_next_read_queue(void **state)
{
	struct store_ra ra = { 0 };

	(void)state;
	assert_true(read_in_order(&ra, 0, 16, 1000000));
	assert_false(read_in_order(&ra, 16 * 64 * KIB, 1, 1000000));
	store_ra_cancel(&ra);
	assert_true(read_in_order(&ra, 17 * 64 * KIB, 1, 1000000));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_order_run_is_read_ahead),
		cmocka_unit_test(test_small_reads_read_little_ahead),
		cmocka_unit_test(test_out_of_order_inside_window),
		cmocka_unit_test(test_random_reads_never_queue),
		cmocka_unit_test(test_far_read_starts_new_run),
		cmocka_unit_test(test_slow_prefetched_reads_stop_run),
		cmocka_unit_test(test_one_fast_read_keeps_run),
		cmocka_unit_test(test_end_of_file_and_failure_stop),
		cmocka_unit_test(test_overtaken_prefetch_restarts_at_readers),
		cmocka_unit_test(test_cancel_lets_next_read_queue),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
