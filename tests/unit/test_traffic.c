// SPDX-License-Identifier: Apache-2.0
/*
 * test_traffic: the admission hierarchy flow -> host -> volume -> pool
 * (nfsd/traffic/traffic.h), driven by a small discrete-event simulation on
 * an injected clock: every flow is a client with endless demand whose
 * requests complete at once, woken when traffic says to look again.
 * Limits held within 5% over 10 s, fairness, isolation of a throttled
 * flow, live changes, the contention term, a client back late (the rest:
 * test_traffic_pool.c).
 */
#include "tests/unit/test_traffic_sim.h"

static void test_volume_limit_holds_against_four_hosts(void **state)
{
	struct traffic_caps caps;
	struct sim *s;
	char ip[16];

	(void)state;
	caps_plain(&caps);
	s = sim_new(&caps);
	assert_int_equal(traffic_volume_set(s->t, "ds1", NULL, 100 * MIB, 0),
			 0);
	for (int i = 0; i < 4; i++) {
		snprintf(ip, sizeof(ip), "10.0.0.%d", i + 1);
		sim_add(s, ip, "ds1", 65536, TRAFFIC_OP_READ);
	}
	sim_run(s, 10 * S);
	assert_within((double)sim_bytes(s), 1000.0 * MIB, 0.05);
	sim_free(s);
}

static void test_two_flows_share_a_volume_fairly(void **state)
{
	struct traffic_caps caps;
	struct sim *s;

	(void)state;
	caps_plain(&caps);
	s = sim_new(&caps);
	assert_int_equal(traffic_volume_set(s->t, "ds1", NULL, 100 * MIB, 0),
			 0);
	sim_add(s, "10.0.0.1", "ds1", 65536, TRAFFIC_OP_WRITE);
	sim_add(s, "10.0.0.2", "ds1", 65536, TRAFFIC_OP_WRITE);
	sim_run(s, 10 * S);
	assert_within((double)s->flows[0].bytes, 500.0 * MIB, 0.05);
	assert_within((double)s->flows[1].bytes, 500.0 * MIB, 0.05);
	sim_free(s);
}

static void test_throttled_flow_does_not_delay_another(void **state)
{
	struct traffic_caps caps;
	struct sim *s;
	uint64_t alone;

	(void)state;
	caps_plain(&caps);
	/* B alone. */
	s = sim_new(&caps);
	assert_int_equal(traffic_volume_set(s->t, "fast", NULL, 80 * MIB, 0),
			 0);
	sim_add(s, "10.0.0.1", "fast", 65536, TRAFFIC_OP_READ);
	sim_run(s, 10 * S);
	alone = sim_bytes(s);
	sim_free(s);

	/* A throttled hard on another volume of the same host, beside B. */
	s = sim_new(&caps);
	assert_int_equal(traffic_volume_set(s->t, "slow", NULL, 1 * MIB, 0), 0);
	assert_int_equal(traffic_volume_set(s->t, "fast", NULL, 80 * MIB, 0),
			 0);
	sim_add(s, "10.0.0.1", "slow", 65536, TRAFFIC_OP_WRITE);
	sim_add(s, "10.0.0.1", "fast", 65536, TRAFFIC_OP_READ);
	sim_run(s, 10 * S);
	assert_within((double)s->flows[0].bytes, 10.0 * MIB, 0.05);
	assert_within((double)s->flows[1].bytes, 800.0 * MIB, 0.05);
	assert_int_equal(s->flows[1].bytes, alone);
	sim_free(s);
}

static void test_live_limit_change_reaches_a_waiting_flow(void **state)
{
	struct traffic_caps caps;
	struct sim *s;

	(void)state;
	caps_plain(&caps);
	s = sim_new(&caps);
	assert_int_equal(traffic_volume_set(s->t, "ds1", NULL, 1 * MIB, 0), 0);
	sim_add(s, "10.0.0.1", "ds1", 1 * MIB, TRAFFIC_OP_READ);
	sim_run(s, 5 * S);
	/* Raised while the flow waits a second for its next 1 MiB: in
	 * effect within TRAFFIC_WAIT_MAX_NS. */
	assert_int_equal(
		traffic_volume_set(s->t, "ds1", NULL, 100 * MIB, s->now), 0);
	sim_run(s, 5 * S + TRAFFIC_WAIT_MAX_NS);
	sim_window(s);
	sim_run(s, 10 * S);
	assert_within((double)sim_bytes(s), 100.0 * MIB * (5.0 - 0.05), 0.05);
	/* Lowered: the next second already runs at the new rate. */
	assert_int_equal(
		traffic_volume_set(s->t, "ds1", NULL, 10 * MIB, s->now), 0);
	sim_run(s, 11 * S);
	sim_window(s);
	sim_run(s, 15 * S);
	assert_within((double)sim_bytes(s), 40.0 * MIB, 0.05);
	sim_free(s);
}

static void test_flow_cap_with_contention_and_host_cap(void **state)
{
	struct traffic_caps caps;
	struct sim *s;
	char vol[8];

	(void)state;
	caps_plain(&caps);
	caps.flow_bytes_per_s = 100 * MIB;
	caps.host_contention = 0.136;
	caps.host_bytes_per_s = 263 * MIB;
	for (int n = 1; n <= 4; n *= 2) {
		s = sim_new(&caps);
		for (int i = 0; i < n; i++) {
			snprintf(vol, sizeof(vol), "ds%d", i);
			sim_add(s, "10.0.0.1", vol, 65536, TRAFFIC_OP_READ);
		}
		/* Let the busy count settle, then measure 10 s. */
		sim_run(s, S);
		sim_window(s);
		sim_run(s, 11 * S);
		/* 1: the flow cap; 2: 2 / 1.136 = 1.76 x; 4: 2.84 x, held
		 * at the host's 2.63 x. */
		assert_within((double)sim_bytes(s) / 10,
			      n == 1   ? 100.0 * MIB
			      : n == 2 ? 200.0 / 1.136 * MIB
				       : 263.0 * MIB,
			      0.05);
		sim_free(s);
	}
}

/* Flows of four hosts on one volume contend as a host's flows do; two
 * connections of one host to one volume are slowed once, by the more
 * crowded of the two levels, not by both. */
static void test_volume_contention_takes_the_more_crowded_level(void **state)
{
	struct traffic_caps caps;
	struct sim *s;
	char ip[16];

	(void)state;
	caps_plain(&caps);
	caps.flow_bytes_per_s = 100 * MIB;
	caps.host_contention = 0.136;
	caps.volume_contention = 0.136;
	s = sim_new(&caps);
	for (int h = 0; h < 4; h++) {
		snprintf(ip, sizeof(ip), "10.0.0.%d", h + 1);
		sim_add(s, ip, "ds1", 65536, TRAFFIC_OP_READ);
	}
	sim_run(s, S);
	sim_window(s);
	sim_run(s, 11 * S);
	assert_within((double)sim_bytes(s) / 10, 400.0 / 1.408 * MIB, 0.05);
	sim_free(s);

	s = sim_new(&caps);
	for (int h = 0; h < 4; h++) {
		snprintf(ip, sizeof(ip), "10.0.0.%d", h + 1);
		for (int c = 0; c < 2; c++) {
			char vol[8];

			snprintf(vol, sizeof(vol), "ds%d", h + 1);
			sim_add(s, ip, vol, 65536, TRAFFIC_OP_READ);
		}
	}
	sim_run(s, S);
	sim_window(s);
	sim_run(s, 11 * S);
	/* 8 flows, each sharing its host and its volume with one other:
	 * 8 / 1.136, not 8 / 1.136^2. */
	assert_within((double)sim_bytes(s) / 10, 800.0 / 1.136 * MIB, 0.05);
	sim_free(s);
}

/* A client that goes away for 40 ms in every 100 (descheduled: once the
 * server has started what it had queued, the flow runs dry) still gets
 * its flow's rate: the flow's bucket banks the gap, up to the catch-up.
 * With a plain 10 ms burst it got 70%. */
static void test_flow_catches_up_a_client_back_late(void **state)
{
	struct traffic_caps caps;
	struct sim *s;
	struct sim_flow *f;
	uint64_t started = 0;

	(void)state;
	caps_plain(&caps);
	caps.flow_ops_per_s = 1000;
	s = sim_new(&caps);
	f = sim_add(s, "10.0.0.1", "ds1", 0, TRAFFIC_OP_READ);
	for (int64_t t = 0; t < 10 * S; t += MS) {
		bool away = t % (100 * MS) >= 60 * MS;
		struct traffic_req *r;
		int64_t wait;

		for (;;) {
			if (f->queued) {
				/* the server's timer: what waits, starts */
				if (traffic_flow_next(f->flow, t, &r, &wait) !=
				    TRAFFIC_START) {
					break;
				}
				f->queued = false;
			} else if (away) {
				break; /* nothing asked while away */
			} else if (traffic_admit(f->flow, &f->req, t, &wait) !=
				   TRAFFIC_START) {
				f->queued = true;
				break;
			}
			started++;
			traffic_done(f->flow, &f->req, t);
		}
	}
	assert_within((double)started, 10000.0, 0.03);
	sim_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_volume_limit_holds_against_four_hosts),
		cmocka_unit_test(test_two_flows_share_a_volume_fairly),
		cmocka_unit_test(test_throttled_flow_does_not_delay_another),
		cmocka_unit_test(test_live_limit_change_reaches_a_waiting_flow),
		cmocka_unit_test(test_flow_cap_with_contention_and_host_cap),
		cmocka_unit_test(
			test_volume_contention_takes_the_more_crowded_level),
		cmocka_unit_test(test_flow_catches_up_a_client_back_late),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
