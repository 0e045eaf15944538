// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of snapshot policies (nfsd/snap/policy.h): the text form of
 * each schedule (good and bad), the 255 rule of the keeps, the slot each
 * kind last came due at (hourly at a minute, daily, weekly on some days,
 * monthly on a day some months lack), the engine's "due" driven through
 * 40 days of a test clock one minute at a time (how many of each kind,
 * none in arrears at the first look, one for a long sleep), the names
 * read back, the retention plan (after, before at 255, refused when
 * snapshots by hand fill it), and the record of what the policy made.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "nfsd/config/config.h"
#include "nfsd/snap/policy.h"

/* 2026-12-04 00:00:00 UTC, a Friday. */
#define T0 1796342400LL

static int64_t utc(int y, int mo, int d, int h, int mi)
{
	struct tm tm = { .tm_year = y - 1900,
			 .tm_mon = mo - 1,
			 .tm_mday = d,
			 .tm_hour = h,
			 .tm_min = mi };

	return (int64_t)timegm(&tm);
}

static void test_parse_format(void **state)
{
	static const struct {
		enum snap_policy_kind kind;
		const char *text;
	} good[] = {
		{ SNAP_POLICY_HOURLY, ":05 keep 24" },
		{ SNAP_POLICY_DAILY, "22:15 keep 7" },
		{ SNAP_POLICY_WEEKLY, "mon,fri 23:00 keep 4" },
		{ SNAP_POLICY_MONTHLY, "1,15,31 05:00 keep 12" },
	};
	static const struct {
		enum snap_policy_kind kind;
		const char *text;
	} bad[] = {
		{ SNAP_POLICY_HOURLY, "05 keep 24" },
		{ SNAP_POLICY_HOURLY, ":60 keep 1" },
		{ SNAP_POLICY_HOURLY, ":5 keep 1" },
		{ SNAP_POLICY_HOURLY, ":05 keep 0" },
		{ SNAP_POLICY_HOURLY, ":05 keep 256" },
		{ SNAP_POLICY_HOURLY, ":05 keep" },
		{ SNAP_POLICY_DAILY, "24:00 keep 1" },
		{ SNAP_POLICY_DAILY, ":00 keep 1" },
		{ SNAP_POLICY_DAILY, "10:00 hold 1" },
		{ SNAP_POLICY_WEEKLY, "10:00 keep 1" },
		{ SNAP_POLICY_WEEKLY, "moon 10:00 keep 1" },
		{ SNAP_POLICY_MONTHLY, "0 10:00 keep 1" },
		{ SNAP_POLICY_MONTHLY, "32 10:00 keep 1" },
		{ SNAP_POLICY_MONTHLY, "1,x 10:00 keep 1" },
	};
	struct snap_policy_sched s;
	char buf[128], err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(snap_policy_sched_parse(good[i].kind,
							 good[i].text, &s, err,
							 sizeof(err)),
				 0);
		assert_true(s.on);
		snap_policy_sched_format(good[i].kind, &s, buf, sizeof(buf));
		assert_string_equal(buf, good[i].text);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(snap_policy_sched_parse(bad[i].kind,
							 bad[i].text, &s, err,
							 sizeof(err)),
				 -EINVAL);
		assert_non_null(strstr(err, "keep N"));
	}
	assert_int_equal(snap_policy_sched_parse(SNAP_POLICY_DAILY, "off", &s,
						 err, sizeof(err)),
			 0);
	assert_false(s.on);
}

static void test_keep_255(void **state)
{
	struct snap_policy p = { 0 };
	char err[256] = "";

	(void)state;
	p.k[SNAP_POLICY_HOURLY] =
		(struct snap_policy_sched){ .on = true, .keep = 200 };
	p.k[SNAP_POLICY_DAILY] =
		(struct snap_policy_sched){ .on = true, .keep = 55 };
	assert_int_equal(snap_policy_check(&p, err, sizeof(err)), 0);
	p.k[SNAP_POLICY_WEEKLY] =
		(struct snap_policy_sched){ .on = true, .wdays = 1, .keep = 1 };
	assert_int_equal(snap_policy_check(&p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "256"));
	/* A kind that is off does not count. */
	p.k[SNAP_POLICY_WEEKLY].on = false;
	assert_int_equal(snap_policy_check(&p, err, sizeof(err)), 0);
}

static void test_slots(void **state)
{
	struct snap_policy_sched h = { .on = true, .minute = 15, .keep = 1 };
	struct snap_policy_sched d = {
		.on = true, .hour = 22, .minute = 30, .keep = 1
	};
	struct snap_policy_sched w = { .on = true,
				       .hour = 23,
				       .wdays = (1u << 1) | (1u << 5),
				       .keep = 1 };
	struct snap_policy_sched m = {
		.on = true, .hour = 5, .mdays = 1u << 31, .keep = 1
	};
	struct snap_policy_sched off = { 0 };

	(void)state;
	assert_int_equal(snap_policy_slot(SNAP_POLICY_HOURLY, &h,
					  utc(2026, 12, 4, 10, 15)),
			 utc(2026, 12, 4, 10, 15));
	assert_int_equal(snap_policy_slot(SNAP_POLICY_HOURLY, &h,
					  utc(2026, 12, 4, 10, 14)),
			 utc(2026, 12, 4, 9, 15));
	assert_int_equal(snap_policy_slot(SNAP_POLICY_DAILY, &d,
					  utc(2026, 12, 4, 22, 29)),
			 utc(2026, 12, 3, 22, 30));
	/* Friday 2026-12-04 22:00: the last is Monday 23:00. */
	assert_int_equal(snap_policy_slot(SNAP_POLICY_WEEKLY, &w,
					  utc(2026, 12, 4, 22, 0)),
			 utc(2026, 11, 30, 23, 0));
	assert_int_equal(snap_policy_slot(SNAP_POLICY_WEEKLY, &w,
					  utc(2026, 12, 4, 23, 0)),
			 utc(2026, 12, 4, 23, 0));
	/* Day 31: November has none, so 2026-12-15 looks back to Oct 31. */
	assert_int_equal(snap_policy_slot(SNAP_POLICY_MONTHLY, &m,
					  utc(2026, 12, 15, 0, 0)),
			 utc(2026, 10, 31, 5, 0));
	assert_int_equal(snap_policy_slot(SNAP_POLICY_HOURLY, &off, T0), -1);
}

/* 40 days a minute at a time: 24 hourly a day, one daily, Mondays and
 * Fridays weekly, the 1st and the 15th monthly. */
static void test_due_40_days(void **state)
{
	struct snap_policy p = { 0 };
	struct snap_policy_state st = { 0 };
	unsigned count[SNAP_POLICY_KINDS] = { 0 };
	int64_t slots[SNAP_POLICY_KINDS];
	int64_t start = utc(2026, 12, 4, 0, 30);
	static const char *const texts[SNAP_POLICY_KINDS] = {
		":00 keep 24", "00:10 keep 7", "mon,fri 01:00 keep 4",
		"1,15 02:00 keep 3"
	};
	char err[256];

	(void)state;
	for (int k = 0; k < SNAP_POLICY_KINDS; k++) {
		assert_int_equal(snap_policy_sched_parse(
					 (enum snap_policy_kind)k, texts[k],
					 &p.k[k], err, sizeof(err)),
				 0);
	}
	/* The first look primes: nothing in arrears. */
	assert_int_equal(snap_policy_due(&p, &st, start, slots), 0);
	for (int64_t t = start + 60; t <= start + 40LL * 86400; t += 60) {
		unsigned due = snap_policy_due(&p, &st, t, slots);

		for (int k = 0; k < SNAP_POLICY_KINDS; k++) {
			if (due & (1u << k)) {
				/* Due exactly at its minute. */
				assert_int_equal(slots[k], t);
				count[k]++;
				snap_policy_done(&st, (enum snap_policy_kind)k,
						 slots[k]);
			}
		}
	}
	assert_int_equal(count[SNAP_POLICY_HOURLY], 40 * 24);
	assert_int_equal(count[SNAP_POLICY_DAILY], 40);
	/* Dec 4 00:30 (a Friday) .. Jan 13: Mondays Dec 7, 14, 21, 28,
	 * Jan 4, 11; Fridays Dec 4, 11, 18, 25, Jan 1, 8. */
	assert_int_equal(count[SNAP_POLICY_WEEKLY], 12);
	/* Dec 15, Jan 1. */
	assert_int_equal(count[SNAP_POLICY_MONTHLY], 2);

	/* A slot not marked done stays due (a busy datastore: next look). */
	assert_int_not_equal(
		snap_policy_due(&p, &st, start + 41LL * 86400 + 3600, slots) &
			1u,
		0);
	assert_int_not_equal(
		snap_policy_due(&p, &st, start + 41LL * 86400 + 3601, slots) &
			1u,
		0);
	/* A sleep of three days: one of each kind due, not 72 hourly. */
	snap_policy_done(&st, SNAP_POLICY_HOURLY, slots[SNAP_POLICY_HOURLY]);
	assert_int_equal(
		snap_policy_due(&p, &st, start + 44LL * 86400, slots) & 1u, 1u);
}

static void test_names(void **state)
{
	enum snap_policy_kind k;
	int64_t slot, t = utc(2026, 12, 4, 20, 15);
	char name[64];

	(void)state;
	snap_policy_name(SNAP_POLICY_HOURLY, t, name, sizeof(name));
	assert_string_equal(name, "hourly-2026-12-04_2015");
	assert_int_equal(snap_policy_name_parse(name, &k, &slot), 0);
	assert_int_equal(k, SNAP_POLICY_HOURLY);
	assert_int_equal(slot, t);
	assert_int_equal(
		snap_policy_name_parse("hourly-2026-12-04_2015x", &k, &slot),
		-EINVAL);
	assert_int_equal(
		snap_policy_name_parse("hourly-2026-13-04_2015", &k, &slot),
		-EINVAL);
	assert_int_equal(
		snap_policy_name_parse("yearly-2026-12-04_2015", &k, &slot),
		-EINVAL);
	assert_int_equal(snap_policy_name_parse("mine", &k, &slot), -EINVAL);
}

static void test_plan(void **state)
{
	struct snap_policy_plan pl;

	(void)state;
	/* Below keep: nothing goes. */
	snap_policy_plan(3, 2, 4, &pl);
	assert_false(pl.refused);
	assert_int_equal(pl.del_before + pl.del_after, 0);
	/* At keep: the oldest goes after the new one is made. */
	snap_policy_plan(10, 4, 4, &pl);
	assert_int_equal(pl.del_before, 0);
	assert_int_equal(pl.del_after, 1);
	/* Keep lowered from 6 to 2: four go. */
	snap_policy_plan(10, 5, 2, &pl);
	assert_int_equal(pl.del_after, 4);
	/* At 255 with the kind full: the oldest goes first. */
	snap_policy_plan(255, 4, 4, &pl);
	assert_false(pl.refused);
	assert_int_equal(pl.del_before, 1);
	assert_int_equal(pl.del_after, 0);
	/* At 255 with room in the kind: snapshots by hand fill the rest,
	 * never deleted by a policy: refused. */
	snap_policy_plan(255, 2, 4, &pl);
	assert_true(pl.refused);
	snap_policy_plan(254, 2, 4, &pl);
	assert_false(pl.refused);
	assert_int_equal(pl.del_before + pl.del_after, 0);
}

static void test_record(void **state)
{
	char dir[] = "/tmp/test_snap_policy.XXXXXX", path[128], err[256];
	struct snap_policy_record r = { 0 }, back;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/rec", dir);
	assert_int_equal(snap_policy_record_load(path, &back, err, sizeof(err)),
			 0);
	assert_int_equal(back.n, 0);
	assert_int_equal(snap_policy_record_add(&r, "hourly-2026-12-04_2015"),
			 0);
	assert_int_equal(snap_policy_record_add(&r, "daily-2026-12-04_0000"),
			 0);
	assert_int_equal(snap_policy_record_add(&r, "daily-2026-12-04_0000"),
			 0);
	assert_int_equal(r.n, 2);
	assert_int_equal(snap_policy_record_save(path, &r, err, sizeof(err)),
			 0);
	assert_int_equal(snap_policy_record_load(path, &back, err, sizeof(err)),
			 0);
	assert_int_equal(back.n, 2);
	assert_true(snap_policy_record_has(&back, "daily-2026-12-04_0000"));
	assert_false(snap_policy_record_has(&back, "mine"));
	snap_policy_record_del(&back, "hourly-2026-12-04_2015");
	assert_int_equal(back.n, 1);
	snap_policy_record_free(&back);
	/* A bad line refuses the file. */
	f = fopen(path, "a");
	assert_non_null(f);
	fputs("../etc\n", f);
	fclose(f);
	assert_int_equal(snap_policy_record_load(path, &back, err, sizeof(err)),
			 -EINVAL);
	snap_policy_record_free(&r);
	unlink(path);
	rmdir(dir);
}

/* The config keys: read into the datastore, a bad one names its line,
 * keeps past 255 refused. */
static void test_config_keys(void **state)
{
	static struct config cfg;
	char err[512];

	(void)state;
	config_defaults(&cfg);
	assert_int_equal(
		config_load_string(&cfg, "t.conf",
				   "[datastore ds1]\npath = /tmp\n"
				   "snapshot_hourly = :05 keep 24\n"
				   "snapshot_weekly = sun,sat 23:59 keep 4\n",
				   err, sizeof(err)),
		0);
	assert_true(cfg.datastores[0].policy.k[SNAP_POLICY_HOURLY].on);
	assert_int_equal(cfg.datastores[0].policy.k[SNAP_POLICY_HOURLY].minute,
			 5);
	assert_int_equal(cfg.datastores[0].policy.k[SNAP_POLICY_WEEKLY].wdays,
			 (1u << 0) | (1u << 6));
	assert_false(cfg.datastores[0].policy.k[SNAP_POLICY_DAILY].on);
	config_defaults(&cfg);
	assert_int_equal(config_load_string(&cfg, "t.conf",
					    "[datastore ds1]\npath = /tmp\n"
					    "snapshot_daily = 5 keep 1\n",
					    err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "t.conf:3"));
	config_defaults(&cfg);
	assert_int_equal(config_load_string(&cfg, "t.conf",
					    "[datastore ds1]\npath = /tmp\n"
					    "snapshot_hourly = :00 keep 200\n"
					    "snapshot_daily = 00:00 keep 56\n",
					    err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "t.conf:4"));
	config_defaults(&cfg);
	assert_int_equal(config_load_string(&cfg, "t.conf",
					    "[datastore ds1]\npath = /tmp\n"
					    "snapshot_yearly = :00 keep 1\n",
					    err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "unknown key"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_format),
		cmocka_unit_test(test_keep_255),
		cmocka_unit_test(test_slots),
		cmocka_unit_test(test_due_40_days),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_plan),
		cmocka_unit_test(test_record),
		cmocka_unit_test(test_config_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
