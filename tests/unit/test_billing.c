// SPDX-License-Identifier: Apache-2.0
/*
 * test_billing: bills as a pure function of ledger events, prices and a
 * period (nfsd/pool/billing.h): volumes never matter, a month on a higher
 * level costs exactly the difference, proration to the second, Flexible
 * throughput, a torn ledger record ignored, the price list.
 */
#include "nfsd/pool/billing.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#define T0 INT64_C(1704067200) /* 2024-01-01T00:00:00Z */
#define DAY INT64_C(86400)
#define TIB POOL_TIB_BYTES

struct fixture {
	char dir[64];
	char path[128];
	char err[256];
	int64_t now_s;
	struct pool_registry *reg;
	struct pool_ledger *ledger;
	struct billing_prices prices;
};

static int64_t fake_clock(void *arg)
{
	return *(int64_t *)arg;
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	strcpy(fx->dir, "/tmp/test_billing.XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	snprintf(fx->path, sizeof(fx->path), "%s/capacity.ledger", fx->dir);
	fx->now_s = T0;
	billing_prices_default(&fx->prices);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	pool_registry_free(fx->reg);
	pool_ledger_close(fx->ledger);
	unlink(fx->path);
	rmdir(fx->dir);
	free(fx);
	return 0;
}

/* A fresh registry writing to a fresh ledger file named @name. */
static void open_world(struct fixture *fx, const char *name)
{
	pool_registry_free(fx->reg);
	pool_ledger_close(fx->ledger);
	unlink(fx->path);
	snprintf(fx->path, sizeof(fx->path), "%s/%s", fx->dir, name);
	fx->now_s = T0;
	assert_int_equal(pool_registry_new(fake_clock, &fx->now_s, &fx->reg),
			 0);
	assert_int_equal(pool_ledger_open(fx->path, POOL_LEDGER_READ_WRITE,
					  &fx->ledger, NULL, fx->err,
					  sizeof(fx->err)),
			 0);
	assert_int_equal(pool_registry_ledger_attach(fx->reg, fx->ledger,
						     fx->err, sizeof(fx->err)),
			 0);
}

static void pool_add(struct fixture *fx, const char *name,
		     enum pool_level level, uint32_t size_tib)
{
	struct pool p;

	memset(&p, 0, sizeof(p));
	snprintf(p.name, sizeof(p.name), "%s", name);
	p.level = level;
	p.size_tib = size_tib;
	if (level == POOL_LEVEL_FLEXIBLE) {
		p.qos = POOL_QOS_MANUAL;
	}
	assert_int_equal(pool_registry_pool_create(fx->reg, &p, NULL, fx->err,
						   sizeof(fx->err)),
			 0);
}

static void volume_add(struct fixture *fx, const char *name, const char *pool,
		       uint64_t quota)
{
	struct pool_volume v;

	memset(&v, 0, sizeof(v));
	snprintf(v.name, sizeof(v.name), "%s", name);
	snprintf(v.pool, sizeof(v.pool), "%s", pool);
	v.quota_bytes = quota;
	assert_int_equal(pool_registry_volume_create(fx->reg, &v, NULL, fx->err,
						     sizeof(fx->err)),
			 0);
}

/* Bills the current ledger for [from, to). */
static unsigned __int128 bill_total(struct fixture *fx, int64_t from,
				    int64_t to, struct billing_bill *keep)
{
	struct billing_bill bill;
	struct pool_event *evs;
	unsigned __int128 total;
	size_t n;

	assert_int_equal(pool_ledger_events(fx->ledger, &evs, &n), 0);
	assert_int_equal(billing_compute(evs, n, &fx->prices, from, to, &bill,
					 fx->err, sizeof(fx->err)),
			 0);
	free(evs);
	total = bill.total_quanta;
	if (keep) {
		*keep = bill;
	} else {
		billing_bill_fini(&bill);
	}
	return total;
}

static void assert_u128_equal(unsigned __int128 a, unsigned __int128 b)
{
	assert_int_equal((uint64_t)(a >> 64), (uint64_t)(b >> 64));
	assert_int_equal((uint64_t)a, (uint64_t)b);
}

static void test_volume_layout_never_changes_the_bill(void **state)
{
	struct fixture *fx = *state;
	unsigned __int128 four_by_twenty, twenty_by_four;
	char name[16];

	open_world(fx, "a.ledger");
	pool_add(fx, "anf", POOL_LEVEL_PREMIUM, 80);
	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "ds%d", i);
		volume_add(fx, name, "anf", 20 * TIB);
	}
	four_by_twenty = bill_total(fx, T0, T0 + 30 * DAY, NULL);

	open_world(fx, "b.ledger");
	pool_add(fx, "anf", POOL_LEVEL_PREMIUM, 80);
	for (int i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "ds%d", i);
		volume_add(fx, name, "anf", 4 * TIB);
	}
	twenty_by_four = bill_total(fx, T0, T0 + 30 * DAY, NULL);

	assert_u128_equal(four_by_twenty, twenty_by_four);
	/* 81,920 GiB x 720 h x 0.000403 USD. */
	assert_u128_equal(four_by_twenty,
			  (unsigned __int128)81920 * (30 * DAY) * 403000000);
}

static void test_a_month_on_ultra_costs_exactly_the_difference(void **state)
{
	struct fixture *fx = *state;
	unsigned __int128 flat, raised;

	open_world(fx, "flat.ledger");
	pool_add(fx, "p", POOL_LEVEL_PREMIUM, 10);
	flat = bill_total(fx, T0, T0 + 90 * DAY, NULL);

	open_world(fx, "raised.ledger");
	pool_add(fx, "p", POOL_LEVEL_PREMIUM, 10);
	fx->now_s = T0 + 30 * DAY;
	assert_int_equal(pool_registry_pool_set_level(fx->reg, "p",
						      POOL_LEVEL_ULTRA, NULL,
						      fx->err, sizeof(fx->err)),
			 0);
	fx->now_s = T0 + 60 * DAY;
	assert_int_equal(pool_registry_pool_set_level(fx->reg, "p",
						      POOL_LEVEL_PREMIUM, NULL,
						      fx->err, sizeof(fx->err)),
			 0);
	raised = bill_total(fx, T0, T0 + 90 * DAY, NULL);

	assert_u128_equal(raised - flat, (unsigned __int128)10240 * (30 * DAY) *
						 (538000000 - 403000000));
}

/* The ANF way to raise one datastore: move it into an Ultra pool for a
 * month, shrinking its old pool meanwhile. */
static void test_moving_a_volume_to_ultra_costs_the_difference(void **state)
{
	struct fixture *fx = *state;
	unsigned __int128 flat, moved;
	struct billing_bill bill;

	open_world(fx, "flat.ledger");
	pool_add(fx, "prem", POOL_LEVEL_PREMIUM, 20);
	volume_add(fx, "ds1", "prem", 4 * TIB);
	volume_add(fx, "ds2", "prem", 16 * TIB);
	flat = bill_total(fx, T0, T0 + 90 * DAY, NULL);

	open_world(fx, "moved.ledger");
	pool_add(fx, "prem", POOL_LEVEL_PREMIUM, 20);
	volume_add(fx, "ds1", "prem", 4 * TIB);
	volume_add(fx, "ds2", "prem", 16 * TIB);
	fx->now_s = T0 + 30 * DAY;
	pool_add(fx, "ultra", POOL_LEVEL_ULTRA, 4);
	assert_int_equal(pool_registry_volume_move(fx->reg, "ds1", "ultra", 0,
						   NULL, fx->err,
						   sizeof(fx->err)),
			 0);
	assert_int_equal(pool_registry_pool_resize(fx->reg, "prem", 16, NULL,
						   fx->err, sizeof(fx->err)),
			 0);
	fx->now_s = T0 + 60 * DAY;
	assert_int_equal(pool_registry_pool_resize(fx->reg, "prem", 20, NULL,
						   fx->err, sizeof(fx->err)),
			 0);
	assert_int_equal(pool_registry_volume_move(fx->reg, "ds1", "prem", 0,
						   NULL, fx->err,
						   sizeof(fx->err)),
			 0);
	assert_int_equal(pool_registry_pool_delete(fx->reg, "ultra", NULL,
						   fx->err, sizeof(fx->err)),
			 0);
	moved = bill_total(fx, T0, T0 + 90 * DAY, &bill);

	assert_u128_equal(moved - flat, (unsigned __int128)4096 * (30 * DAY) *
						(538000000 - 403000000));
	/* prem: 20 TiB, 16 TiB, 20 TiB; ultra: one month. */
	assert_int_equal(bill.nlines, 4);
	assert_string_equal(bill.lines[3].pool, "ultra");
	assert_int_equal(bill.lines[3].from_s, T0 + 30 * DAY);
	assert_int_equal(bill.lines[3].to_s, T0 + 60 * DAY);
	billing_bill_fini(&bill);
}

static void test_proration_to_the_second(void **state)
{
	struct fixture *fx = *state;
	struct billing_bill bill;
	char line[256], amount[48];

	open_world(fx, "p.ledger");
	pool_add(fx, "s", POOL_LEVEL_STANDARD, 1);
	fx->now_s = T0 + 3601;
	assert_int_equal(pool_registry_pool_delete(fx->reg, "s", NULL, fx->err,
						   sizeof(fx->err)),
			 0);

	/* One second: 1024 GiB x 1 s x 0.000202 / 3600. */
	assert_u128_equal(bill_total(fx, T0 + 1799, T0 + 1800, NULL),
			  (unsigned __int128)1024 * 1 * 202000000);
	/* Past the deletion nothing is billed. */
	assert_u128_equal(bill_total(fx, T0 + 3601, T0 + 7200, NULL), 0);
	/* The whole life: 3601 s. */
	bill_total(fx, T0 - DAY, T0 + DAY, &bill);
	assert_int_equal(bill.nlines, 1);
	assert_u128_equal(bill.total_quanta,
			  (unsigned __int128)1024 * 3601 * 202000000);
	billing_amount_format(bill.total_quanta, amount, sizeof(amount));
	/* 1024 x 3601 / 3600 x 0.000202 = 0.20690...: */
	assert_string_equal(amount, "0.206905");
	billing_line_format(&bill.lines[0], bill.currency, line, sizeof(line));
	assert_string_equal(line,
			    "s 2024-01-01T00:00:00Z .. 2024-01-01T01:00:01Z "
			    "Standard 1 TiB: 1.000278 h x 1024 GiB x 0.000202 "
			    "USD per GiB-hour = 0.206905 USD");
	billing_bill_fini(&bill);
}

static void test_flexible_bills_throughput_above_baseline(void **state)
{
	struct fixture *fx = *state;
	struct billing_bill bill;
	char line[256];

	open_world(fx, "f.ledger");
	pool_add(fx, "f", POOL_LEVEL_FLEXIBLE, 2);
	fx->now_s = T0 + 10 * DAY;
	assert_int_equal(pool_registry_pool_set_throughput(fx->reg, "f", 256,
							   NULL, fx->err,
							   sizeof(fx->err)),
			 0);
	bill_total(fx, T0, T0 + 20 * DAY, &bill);
	/* Capacity before and after the purchase, then the throughput. */
	assert_int_equal(bill.nlines, 3);
	assert_int_equal(bill.lines[0].item, BILLING_ITEM_CAPACITY);
	assert_int_equal(bill.lines[2].item, BILLING_ITEM_THROUGHPUT);
	assert_int_equal(bill.lines[2].quantity, 256);
	assert_u128_equal(bill.total_quanta,
			  (unsigned __int128)2048 * (20 * DAY) * 202000000 +
				  (unsigned __int128)256 * (10 * DAY) *
					  3072000000u);
	billing_line_format(&bill.lines[2], bill.currency, line, sizeof(line));
	assert_string_equal(line,
			    "f 2024-01-11T00:00:00Z .. 2024-01-21T00:00:00Z "
			    "Flexible 2 TiB: 240.000000 h x 256 MiB/s above "
			    "baseline x 0.003072 USD per MiB/s-hour = "
			    "188.743680 USD");
	billing_bill_fini(&bill);
}

static void test_torn_ledger_record_is_not_billed(void **state)
{
	struct fixture *fx = *state;
	struct pool_ledger_recovery rec;
	unsigned __int128 before, after;
	struct stat st;

	open_world(fx, "t.ledger");
	pool_add(fx, "p", POOL_LEVEL_PREMIUM, 4);
	before = bill_total(fx, T0, T0 + 30 * DAY, NULL);
	assert_int_equal(stat(fx->path, &st), 0);
	fx->now_s = T0 + DAY;
	assert_int_equal(pool_registry_pool_resize(fx->reg, "p", 8, NULL,
						   fx->err, sizeof(fx->err)),
			 0);
	pool_registry_free(fx->reg);
	fx->reg = NULL;
	pool_ledger_close(fx->ledger);
	/* The resize was torn mid-append: 3 of its bytes reached the disk. */
	assert_int_equal(truncate(fx->path, st.st_size + 3), 0);
	assert_int_equal(pool_ledger_open(fx->path, POOL_LEDGER_READ_ONLY,
					  &fx->ledger, &rec, fx->err,
					  sizeof(fx->err)),
			 0);
	assert_true(rec.torn);
	after = bill_total(fx, T0, T0 + 30 * DAY, NULL);
	assert_u128_equal(after, before);
}

static void test_broken_life_cycle_is_refused(void **state)
{
	struct pool_event ev;
	struct billing_prices pr;
	struct billing_bill bill;
	char err[200];

	(void)state;
	billing_prices_default(&pr);
	memset(&ev, 0, sizeof(ev));
	ev.type = POOL_EVENT_RESIZED;
	strcpy(ev.pool, "ghost");
	ev.size_tib = 2;
	assert_int_equal(billing_compute(&ev, 1, &pr, T0, T0 + DAY, &bill, err,
					 sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "event 0: pool ghost: resized while it does "
				 "not exist");
	assert_int_equal(
		billing_compute(NULL, 0, &pr, T0, T0, &bill, err, sizeof(err)),
		-EINVAL);
}

static void test_prices_parse_exactly(void **state)
{
	struct billing_prices pr;
	uint64_t pico;
	char err[200], buf[40];

	(void)state;
	assert_int_equal(billing_price_parse("0.000403", &pico), 0);
	assert_int_equal(pico, 403000000);
	assert_int_equal(billing_price_parse("12", &pico), 0);
	assert_int_equal(pico, 12 * BILLING_PICO_PER_UNIT);
	assert_int_equal(billing_price_parse("0.0000000000001", &pico),
			 -EINVAL);
	assert_int_equal(billing_price_parse("-1", &pico), -EINVAL);
	assert_int_equal(billing_price_parse("1e-4", &pico), -EINVAL);
	assert_int_equal(billing_price_parse(".5", &pico), -EINVAL);
	billing_price_format(403000000, buf, sizeof(buf));
	assert_string_equal(buf, "0.000403");
	billing_price_format(1234567, buf, sizeof(buf));
	assert_string_equal(buf, "0.000001234567");

	assert_int_equal(billing_prices_parse("prices.conf",
					      "; test\n[prices]\ncurrency = "
					      "EUR\nultra = 0.0005\n",
					      &pr, err, sizeof(err)),
			 0);
	assert_string_equal(pr.currency, "EUR");
	assert_int_equal(pr.capacity_pico[POOL_LEVEL_ULTRA], 500000000);
	/* Keys not given keep the defaults. */
	assert_int_equal(pr.capacity_pico[POOL_LEVEL_STANDARD], 202000000);
	assert_int_equal(billing_prices_parse("prices.conf",
					      "[prices]\nultra = 0.1\ngold = "
					      "1\n",
					      &pr, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "prices.conf:3: [prices]: unknown key "
				 "'gold'");
}

static void test_prices_file_in_the_tree_parses(void **state)
{
	struct billing_prices pr, def;
	char err[200];

	(void)state;
	assert_int_equal(
		billing_prices_load("etc/prices.conf", &pr, err, sizeof(err)),
		0);
	billing_prices_default(&def);
	/* The file and the built-in defaults agree. */
	assert_memory_equal(&pr, &def, sizeof(pr));
}

static void test_time_parse_and_format(void **state)
{
	int64_t t;
	char buf[32];

	(void)state;
	assert_int_equal(billing_time_parse("2024-01-01", &t), 0);
	assert_int_equal(t, T0);
	assert_int_equal(billing_time_parse("2024-01-01T00:00:01Z", &t), 0);
	assert_int_equal(t, T0 + 1);
	assert_int_equal(billing_time_parse("2024-01-01 01:02", &t), 0);
	assert_int_equal(t, T0 + 3720);
	assert_int_equal(billing_time_parse("@1704067200", &t), 0);
	assert_int_equal(t, T0);
	assert_int_equal(billing_time_parse("2024-02-30", &t), -EINVAL);
	assert_int_equal(billing_time_parse("2024-01-01T25:00", &t), -EINVAL);
	assert_int_equal(billing_time_parse("yesterday", &t), -EINVAL);
	billing_time_format(T0 + 86399, buf, sizeof(buf));
	assert_string_equal(buf, "2024-01-01T23:59:59Z");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_volume_layout_never_changes_the_bill, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_a_month_on_ultra_costs_exactly_the_difference,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_moving_a_volume_to_ultra_costs_the_difference,
			setup, teardown),
		cmocka_unit_test_setup_teardown(test_proration_to_the_second,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_flexible_bills_throughput_above_baseline, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_torn_ledger_record_is_not_billed, setup, teardown),
		cmocka_unit_test(test_broken_life_cycle_is_refused),
		cmocka_unit_test(test_prices_parse_exactly),
		cmocka_unit_test(test_prices_file_in_the_tree_parses),
		cmocka_unit_test(test_time_parse_and_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
