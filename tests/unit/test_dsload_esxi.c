// SPDX-License-Identifier: Apache-2.0
/*
 * test_dsload_esxi: ESXi's NFSv3 client rules as dsload follows them
 * (perf/dsload/esxi.c): the nConnect limits and the setting each error
 * names, connections shared past SunRPC.MaxConnPerIP, and the heartbeat /
 * APD state machine on a fake clock.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "perf/dsload/esxi.h"

#define S INT64_C(1000000000)

static int check(const struct esxi_conf *c, unsigned nc, unsigned nds,
		 char *err, size_t len)
{
	err[0] = '\0';
	return esxi_conf_check(c, nc, nds, err, len);
}

static void test_limits_esxi8(void **state)
{
	struct esxi_conf c;
	char err[300];

	(void)state;
	esxi_conf_default(&c);
	assert_int_equal(c.version, 8);
	assert_int_equal(check(&c, 1, 1, err, sizeof(err)), 0);
	assert_int_equal(check(&c, 4, 1, err, sizeof(err)), 0);
	/* 5 needs the advanced setting, named in the error */
	assert_int_equal(check(&c, 5, 1, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "/NFS/MaxConnectionsPerDatastore (4)"));
	assert_non_null(strstr(err, "--max-connections-per-datastore 5"));
	c.max_conns_per_ds = 8;
	assert_int_equal(check(&c, 8, 1, err, sizeof(err)), 0);
	assert_int_equal(check(&c, 9, 1, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "at most 8 connections per datastore"));
	c.max_conns_per_ds = 9;
	assert_int_equal(check(&c, 1, 1, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "/NFS/MaxConnectionsPerDatastore goes"));
}

static void test_limits_host_and_esxi7(void **state)
{
	struct esxi_conf c;
	char err[300];

	(void)state;
	esxi_conf_default(&c);
	c.max_conns_per_ds = 8;
	/* 256 NFSv3 connections per host: 32 x 8 fits, 33 x 8 does not */
	assert_int_equal(check(&c, 8, 32, err, sizeof(err)), 0);
	assert_int_equal(check(&c, 8, 33, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "264 connections"));
	assert_non_null(strstr(err, "256 NFSv3 connections of one ESXi host"));
	c.version = 7;
	assert_int_equal(check(&c, 1, 64, err, sizeof(err)), 0);
	assert_int_equal(check(&c, 2, 1, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "ESXi 7 opens one connection"));
	assert_non_null(strstr(err, "8.0U1"));
	c.version = 6;
	assert_int_equal(check(&c, 1, 1, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--esxi 6"));
	esxi_conf_default(&c);
	c.max_conn_per_ip = 129;
	assert_int_equal(check(&c, 1, 1, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "SunRPC.MaxConnPerIP goes from 1 to 128"));
	esxi_conf_default(&c);
	c.timer_scale = 0;
	assert_int_equal(check(&c, 1, 1, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--esxi-timer-scale"));
}

/* Under SunRPC.MaxConnPerIP every connection is a datastore's own. */
static void test_plan_no_sharing(void **state)
{
	struct esxi_conf c;
	unsigned map[8 * 4];

	(void)state;
	esxi_conf_default(&c);
	assert_int_equal(esxi_conn_plan(&c, 4, 8, map), 32);
	for (unsigned i = 0; i < 32; i++) {
		assert_int_equal(map[i], i);
	}
	assert_int_equal(esxi_conn_shared(map, 4, 8, 32), 0);
}

/* Past it the datastores share: 6 datastores over 4 connections (ESXi
 * 6.7's default of 4): ds5 and ds6 ride on ds1's and ds2's, and all four
 * carry two datastores' calls. */
static void test_plan_sharing(void **state)
{
	struct esxi_conf c;
	unsigned map[6];

	(void)state;
	esxi_conf_default(&c);
	c.max_conn_per_ip = 4;
	assert_int_equal(esxi_conn_plan(&c, 1, 6, map), 4);
	assert_int_equal(map[0], 0);
	assert_int_equal(map[3], 3);
	assert_int_equal(map[4], 0);
	assert_int_equal(map[5], 1);
	assert_int_equal(esxi_conn_shared(map, 1, 6, 4), 4);
}

/* nConnect past the cap: a datastore's connections stay distinct. */
static void test_plan_sharing_nconnect(void **state)
{
	struct esxi_conf c;
	unsigned map[3 * 4];

	(void)state;
	esxi_conf_default(&c);
	c.max_conn_per_ip = 6;
	assert_int_equal(esxi_conn_plan(&c, 4, 3, map), 6);
	/* ds1: 0..3; ds2: 4, 5, then shares 0, 1; ds3: 2, 3, 4, 5 */
	assert_int_equal(map[4], 4);
	assert_int_equal(map[5], 5);
	assert_int_equal(map[6], 0);
	assert_int_equal(map[7], 1);
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(map[8 + i], 2 + i);
	}
	assert_int_equal(esxi_conn_shared(map, 4, 3, 6), 3);
}

static void timers(struct esxi_timers *t, double scale)
{
	struct esxi_conf c;

	esxi_conf_default(&c);
	c.timer_scale = scale;
	esxi_timers_get(&c, t);
}

/* Drives @hb as the heartbeat world would, from @from to @to seconds
 * (every HeartbeatFrequency), the server answering only outside
 * [down_from, down_to).  A heartbeat sent while it is down gets no reply:
 * it fails at HeartbeatTimeout. */
static void run(struct esxi_hb *hb, int64_t from, int64_t to, int64_t down_from,
		int64_t down_to)
{
	for (int64_t now = from; now < to; now += hb->t.frequency_ns) {
		if (!esxi_hb_tick(hb, now)) {
			continue;
		}
		esxi_hb_sent(hb, now);
		if (now >= down_from && now < down_to) {
			int64_t at = now + hb->t.timeout_ns;

			assert_false(esxi_hb_expired(hb, at - 1));
			assert_true(esxi_hb_expired(hb, at));
			esxi_hb_result(hb, false, at);
		} else {
			esxi_hb_result(hb, true, now + S / 1000);
		}
	}
}

static void test_hb_timers_and_delta(void **state)
{
	struct esxi_timers t;
	struct esxi_hb hb;

	(void)state;
	timers(&t, 1.0);
	assert_int_equal(t.delta_ns, 5 * S);
	assert_int_equal(t.frequency_ns, 12 * S);
	assert_int_equal(t.timeout_ns, 5 * S);
	assert_int_equal(t.apd_timeout_ns, 140 * S);
	assert_int_equal(t.lck_ns, 10 * S);
	assert_int_equal(t.max_failures, 10);
	assert_int_equal(t.apd_start_count, 3);
	esxi_hb_init(&hb, &t, 0);
	/* nothing due before HeartbeatDelta since the mount */
	assert_false(esxi_hb_tick(&hb, 4 * S));
	assert_true(esxi_hb_tick(&hb, 5 * S));
	esxi_hb_sent(&hb, 5 * S);
	assert_false(esxi_hb_tick(&hb, 6 * S)); /* one in flight */
	esxi_hb_result(&hb, true, 5 * S + 1000);
	assert_false(esxi_hb_tick(&hb, 9 * S));
	/* scaled for a lab */
	timers(&t, 0.1);
	assert_int_equal(t.frequency_ns, 12 * S / 10);
	assert_int_equal(t.apd_timeout_ns, 14 * S);
}

/* A restart shorter than the heartbeat window: one failure at most, no
 * APD, back in service. */
static void test_hb_short_restart_no_apd(void **state)
{
	struct esxi_timers t;
	struct esxi_hb hb;

	(void)state;
	timers(&t, 1.0);
	esxi_hb_init(&hb, &t, 0);
	run(&hb, 0, 120 * S, 47 * S, 50 * S);
	assert_int_equal(hb.c.failures, 1);
	assert_int_equal(hb.c.apd_starts, 0);
	assert_int_equal(hb.c.downs, 0);
	assert_int_equal(hb.c.recoveries, 1);
	/* the failed one sent at 48 s, the next answered at 60 s */
	assert_true(hb.c.outage_max_ns >= 12 * S &&
		    hb.c.outage_max_ns < 13 * S);
	assert_int_equal(hb.state, ESXI_VOL_UP);
}

/* An outage of a minute: APD starts at the third failure, the volume is
 * not marked down (10 needed), no APD timeout (140 s), then service. */
static void test_hb_outage_apd(void **state)
{
	struct esxi_timers t;
	struct esxi_hb hb;

	(void)state;
	timers(&t, 1.0);
	esxi_hb_init(&hb, &t, 0);
	run(&hb, 0, 60 * S, 11 * S, 60 * S);
	/* failed at 12, 24, 36, 48 s */
	assert_int_equal(hb.c.failures, 4);
	assert_int_equal(hb.c.apd_starts, 1);
	assert_int_equal(hb.state, ESXI_VOL_APD);
	assert_int_equal(hb.apd_start_ns, 36 * S + t.timeout_ns);
	run(&hb, 60 * S, 100 * S, 0, 0);
	assert_int_equal(hb.state, ESXI_VOL_UP);
	assert_int_equal(hb.c.apd_starts, 1);
	assert_int_equal(hb.c.downs, 0);
	assert_int_equal(hb.c.apd_timeouts, 0);
	assert_int_equal(hb.c.recoveries, 1);
	assert_true(hb.c.outage_max_ns >= 48 * S);
}

/* A long outage: down after 10 failures, APD timeout 140 s after APD
 * started, each counted once. */
static void test_hb_long_outage_down_and_timeout(void **state)
{
	struct esxi_timers t;
	struct esxi_hb hb;

	(void)state;
	timers(&t, 1.0);
	esxi_hb_init(&hb, &t, 0);
	run(&hb, 0, 300 * S, 11 * S, 300 * S);
	assert_int_equal(hb.state, ESXI_VOL_DOWN);
	assert_int_equal(hb.c.apd_starts, 1);
	assert_int_equal(hb.c.downs, 1);
	assert_int_equal(hb.c.apd_timeouts, 1);
	assert_int_equal(hb.c.recoveries, 0);
	run(&hb, 300 * S, 320 * S, 0, 0);
	assert_int_equal(hb.state, ESXI_VOL_UP);
	assert_int_equal(hb.c.recoveries, 1);
	assert_int_equal(hb.c.apd_timeouts, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_limits_esxi8),
		cmocka_unit_test(test_limits_host_and_esxi7),
		cmocka_unit_test(test_plan_no_sharing),
		cmocka_unit_test(test_plan_sharing),
		cmocka_unit_test(test_plan_sharing_nconnect),
		cmocka_unit_test(test_hb_timers_and_delta),
		cmocka_unit_test(test_hb_short_restart_no_apd),
		cmocka_unit_test(test_hb_outage_apd),
		cmocka_unit_test(test_hb_long_outage_down_and_timeout),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
