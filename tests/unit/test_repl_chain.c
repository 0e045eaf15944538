// SPDX-License-Identifier: Apache-2.0
/*
 * The source snapshots a replication relation carries (nfsd/repl/chain.c):
 * which the plan sends (the carried ones the record lacks, by time then
 * name; the engine's repl-* never), which it deletes (the record's no
 * longer on the source, or on it again with another time), and the
 * record file: saved, read back, absent (empty), refused when it is not
 * one.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "nfsd/repl/chain.h"
#include "nfsd/snap/snap.h"

static void carried_names(void **state)
{
	(void)state;
	assert_true(repl_chain_carried("hourly-2026-12-06_0300"));
	assert_true(repl_chain_carried("before-upgrade"));
	assert_false(repl_chain_carried("repl-r1-7"));
	assert_false(repl_chain_carried("repl-other-1"));
}

static void plan_sends_and_deletes(void **state)
{
	struct snap_entry src[] = {
		{ "repl-r1-4", 400 },	     { "weekly-a", 300 },
		{ "daily-2026-12-05", 100 }, { "by-hand", 200 },
		{ "also-200", 200 },	     { "remade", 350 },
	};
	struct repl_snaps held = { 0 }, send, gone;

	(void)state;
	assert_int_equal(repl_snaps_add(&held, "daily-2026-12-05", 100), 0);
	assert_int_equal(repl_snaps_add(&held, "deleted-on-src", 50), 0);
	assert_int_equal(repl_snaps_add(&held, "remade", 10), 0);
	assert_int_equal(repl_chain_plan(src, 6, &held, &send, &gone), 0);
	/* By time, then name; the record's daily and repl-* not sent. */
	assert_int_equal(send.n, 4);
	assert_string_equal(send.s[0].name, "also-200");
	assert_string_equal(send.s[1].name, "by-hand");
	assert_int_equal(send.s[1].created_s, 200);
	assert_string_equal(send.s[2].name, "weekly-a");
	assert_string_equal(send.s[3].name, "remade");
	assert_int_equal(send.s[3].created_s, 350);
	/* Deleted on the source, and made again under its name. */
	assert_int_equal(gone.n, 2);
	assert_string_equal(gone.s[0].name, "deleted-on-src");
	assert_string_equal(gone.s[1].name, "remade");
	repl_snaps_free(&send);
	repl_snaps_free(&gone);

	/* Nothing new, nothing deleted: an empty plan. */
	repl_snaps_del(&held, "deleted-on-src");
	repl_snaps_del(&held, "nosuch");
	assert_int_equal(held.n, 2);
	assert_int_equal(repl_chain_plan(src, 1, &(struct repl_snaps){ 0 },
					 &send, &gone),
			 0);
	assert_int_equal(send.n, 0);
	assert_int_equal(gone.n, 0);
	repl_snaps_free(&held);
}

static void record_file(void **state)
{
	char dir[] = "/tmp/test_repl_chain.XXXXXX", path[128], err[256] = "";
	struct repl_snaps s = { 0 }, back;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/repl-r1.snapshots", dir);
	/* Absent: empty. */
	assert_int_equal(repl_snaps_load(path, &back, err, sizeof(err)), 0);
	assert_int_equal(back.n, 0);
	assert_int_equal(repl_snaps_add(&s, "hourly-2026-12-06_0300", 1765), 0);
	assert_int_equal(repl_snaps_add(&s, "by-hand", 1766), 0);
	assert_int_equal(repl_snaps_add(&s, "by-hand", 1767), 0); /* update */
	assert_int_equal(repl_snaps_save(path, &s, err, sizeof(err)), 0);
	assert_int_equal(repl_snaps_load(path, &back, err, sizeof(err)), 0);
	assert_int_equal(back.n, 2);
	assert_string_equal(back.s[0].name, "hourly-2026-12-06_0300");
	assert_int_equal(back.s[0].created_s, 1765);
	assert_int_equal(back.s[1].created_s, 1767);
	repl_snaps_free(&back);
	repl_snaps_free(&s);
	/* Not a record; a bad line. */
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("something else\n", f);
	fclose(f);
	assert_int_equal(repl_snaps_load(path, &back, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "not a record"));
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("dsnfs-repl-snapshots 1\n../x 12\n", f);
	fclose(f);
	assert_int_equal(repl_snaps_load(path, &back, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, ":2: a bad line"));
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(carried_names),
		cmocka_unit_test(plan_sends_and_deletes),
		cmocka_unit_test(record_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
