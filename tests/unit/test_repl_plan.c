// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of replication's pure parts (nfsd/repl/): the changed-block
 * planner (blocks shared by reflink between two snapshots are left out,
 * holes in both are left out, a new file or a grown tail is sent, a
 * block partly changed is sent whole, adjacent blocks merge) and the
 * schedule (UTC slots, the first decision only arms the clock, a run due
 * while a transfer runs is skipped and counted, missed runs are one).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "nfsd/repl/plan.h"
#include "nfsd/repl/sched.h"

#define K 1024u

static void plan_identical_shares_all(void **state)
{
	struct repl_extent e[] = { { 0, 1 << 20, 256 * K, 0 } };
	struct repl_range *r;
	size_t n;

	(void)state;
	assert_int_equal(
		repl_plan_changed(e, 1, e, 1, 256 * K, 256 * K, 64 * K, &r, &n),
		0);
	assert_int_equal(n, 0);
	assert_null(r);
}

static void plan_one_block_rewritten(void **state)
{
	/* The live file rewrote [68K, 72K): a new physical block there. */
	struct repl_extent base[] = { { 0, 1 << 20, 256 * K, 0 } };
	struct repl_extent cur[] = {
		{ 0, 1 << 20, 68 * K, 0 },
		{ 68 * K, 9 << 20, 4 * K, 0 },
		{ 72 * K, (1 << 20) + 72 * K, 184 * K, 0 },
	};
	struct repl_range *r;
	size_t n;

	(void)state;
	assert_int_equal(repl_plan_changed(cur, 3, base, 1, 256 * K, 256 * K,
					   64 * K, &r, &n),
			 0);
	assert_int_equal(n, 1);
	assert_int_equal(r[0].off, 64 * K);
	assert_int_equal(r[0].len, 64 * K);
	free(r);
}

static void plan_new_file_and_holes(void **state)
{
	/* A new sparse file: data at [0, 64K) and [192K, 200K), holes else. */
	struct repl_extent cur[] = { { 0, 5 << 20, 64 * K, 0 },
				     { 192 * K, 6 << 20, 8 * K, 0 } };
	struct repl_range *r;
	size_t n;

	(void)state;
	assert_int_equal(
		repl_plan_changed(cur, 2, NULL, 0, 200 * K, 0, 64 * K, &r, &n),
		0);
	assert_int_equal(n, 2);
	assert_int_equal(r[0].off, 0);
	assert_int_equal(r[0].len, 64 * K);
	assert_int_equal(r[1].off, 192 * K);
	assert_int_equal(r[1].len, 8 * K); /* ends at the size */
	free(r);
}

static void plan_grown_and_unsure(void **state)
{
	struct repl_extent base[] = { { 0, 1 << 20, 128 * K, 0 } };
	/* Same blocks, but the first extent is delayed allocation, and the
	 * file grew by a shared-looking extent past the base's size. */
	struct repl_extent cur[] = { { 0, 1 << 20, 64 * K, REPL_EXTENT_UNSURE },
				     { 64 * K, (1 << 20) + 64 * K, 128 * K,
				       0 } };
	struct repl_extent basebig[] = { { 0, 1 << 20, 192 * K, 0 } };
	struct repl_range *r;
	size_t n;

	(void)state;
	assert_int_equal(repl_plan_changed(cur, 2, base, 1, 192 * K, 128 * K,
					   64 * K, &r, &n),
			 0);
	assert_int_equal(n, 2);
	assert_int_equal(r[0].off, 0);
	assert_int_equal(r[1].off, 128 * K);
	free(r);
	/* Data where the base had a hole past its size: sent. */
	assert_int_equal(repl_plan_changed(basebig, 1, base, 1, 192 * K,
					   128 * K, 64 * K, &r, &n),
			 0);
	assert_int_equal(n, 1);
	assert_int_equal(r[0].off, 128 * K);
	free(r);
	/* A hole punched where the base had data: sent (as zeros). */
	assert_int_equal(repl_plan_changed(NULL, 0, base, 1, 128 * K, 128 * K,
					   64 * K, &r, &n),
			 0);
	assert_int_equal(n, 1);
	assert_int_equal(r[0].len, 128 * K);
	free(r);
	assert_int_equal(repl_plan_changed(base, 1, base, 1, 1, 1, 3, &r, &n),
			 -EINVAL);
}

static void sched_slots(void **state)
{
	enum repl_schedule s;

	(void)state;
	assert_int_equal(repl_sched_parse("10min", &s), 0);
	assert_int_equal(s, REPL_SCHED_10MIN);
	assert_int_equal(repl_sched_parse("weekly", &s), -EINVAL);
	assert_int_equal(repl_sched_next(REPL_SCHED_10MIN, 1000), 1200);
	assert_int_equal(repl_sched_next(REPL_SCHED_10MIN, 1200), 1800);
	assert_int_equal(repl_sched_next(REPL_SCHED_HOURLY, 3599), 3600);
	assert_int_equal(repl_sched_next(REPL_SCHED_DAILY, 86400 * 3 + 5),
			 86400 * 4);
	assert_true(repl_sched_next(REPL_SCHED_NONE, 5) == INT64_MAX);
	assert_string_equal(repl_sched_name(REPL_SCHED_HOURLY), "hourly");
}

/* dsnfsctl replication show printed "10min" for a relation configured
 * with schedule_seconds (which replaces schedule): what runs is shown. */
static void sched_text_says_what_runs(void **state)
{
	char buf[32];

	(void)state;
	assert_string_equal(repl_sched_text("10min", 1, buf, sizeof(buf)),
			    "every 1 s");
	assert_string_equal(repl_sched_text("none", 86400, buf, sizeof(buf)),
			    "every 86400 s");
	assert_string_equal(repl_sched_text("hourly", 0, buf, sizeof(buf)),
			    "hourly");
	assert_string_equal(repl_sched_text(NULL, 0, buf, sizeof(buf)), "none");
	assert_string_equal(repl_sched_text("", 0, buf, sizeof(buf)), "none");
	/* A short buffer is cut, never overrun. */
	assert_string_equal(repl_sched_text("10min", 600, buf, 6), "every");
}

static void sched_overlap_skips(void **state)
{
	struct repl_sched_state st = { 0 };

	(void)state;
	/* The first look arms the clock: no run at start-up. */
	assert_int_equal(repl_sched_decide(REPL_SCHED_10MIN, &st, 1000, false),
			 REPL_SCHED_WAIT);
	assert_int_equal(st.next_s, 1200);
	assert_int_equal(repl_sched_decide(REPL_SCHED_10MIN, &st, 1199, false),
			 REPL_SCHED_WAIT);
	assert_int_equal(repl_sched_decide(REPL_SCHED_10MIN, &st, 1200, false),
			 REPL_SCHED_RUN);
	assert_int_equal(st.next_s, 1800);
	/* The transfer still runs at 1800: skipped, counted. */
	assert_int_equal(repl_sched_decide(REPL_SCHED_10MIN, &st, 1805, true),
			 REPL_SCHED_SKIP);
	assert_int_equal(st.skipped, 1);
	/* Down for an hour: one run, not six. */
	assert_int_equal(repl_sched_decide(REPL_SCHED_10MIN, &st, 6000, false),
			 REPL_SCHED_RUN);
	assert_int_equal(st.next_s, 6600);
	assert_int_equal(repl_sched_decide(REPL_SCHED_10MIN, &st, 6001, false),
			 REPL_SCHED_WAIT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plan_identical_shares_all),
		cmocka_unit_test(plan_one_block_rewritten),
		cmocka_unit_test(plan_new_file_and_holes),
		cmocka_unit_test(plan_grown_and_unsure),
		cmocka_unit_test(sched_slots),
		cmocka_unit_test(sched_text_says_what_runs),
		cmocka_unit_test(sched_overlap_skips),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
