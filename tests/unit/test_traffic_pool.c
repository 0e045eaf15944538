// SPDX-License-Identifier: Apache-2.0
/*
 * test_traffic_pool: the traffic model past one volume's flows
 * (nfsd/traffic/traffic.h): a pool's throughput shared by its volumes,
 * limits that follow the pool registry, the scale factor, FIFO order and
 * the counters, the config keys, the anf-avs lab profile, and flows of
 * several threads on one volume.  The simulation is test_traffic_sim.h.
 */
#include "tests/unit/test_traffic_sim.h"

static void test_pool_throughput_is_shared(void **state)
{
	struct traffic_caps caps;
	struct sim *s;

	(void)state;
	caps_plain(&caps);
	s = sim_new(&caps);
	assert_int_equal(traffic_pool_set(s->t, "p", 100 * MIB, 0), 0);
	assert_int_equal(traffic_volume_set(s->t, "a", "p", 80 * MIB, 0), 0);
	assert_int_equal(traffic_volume_set(s->t, "b", "p", 80 * MIB, 0), 0);
	sim_add(s, "10.0.0.1", "a", 65536, TRAFFIC_OP_READ);
	sim_add(s, "10.0.0.2", "b", 65536, TRAFFIC_OP_READ);
	sim_run(s, 10 * S);
	assert_within((double)sim_bytes(s), 1000.0 * MIB, 0.05);
	sim_free(s);
}

static void test_limits_follow_the_pool_registry(void **state)
{
	struct pool_registry *reg;
	struct pool_limits *lim = calloc(1, sizeof(*lim));
	struct traffic_caps caps;
	struct pool p;
	struct pool_volume v;
	struct sim *s;
	char err[200];

	(void)state;
	assert_non_null(lim);
	assert_int_equal(pool_registry_new(NULL, NULL, &reg), 0);
	memset(&p, 0, sizeof(p));
	strcpy(p.name, "prem");
	p.level = POOL_LEVEL_PREMIUM;
	p.size_tib = 4;
	assert_int_equal(
		pool_registry_pool_create(reg, &p, NULL, err, sizeof(err)), 0);
	strcpy(p.name, "ultra");
	p.level = POOL_LEVEL_ULTRA;
	assert_int_equal(
		pool_registry_pool_create(reg, &p, NULL, err, sizeof(err)), 0);
	memset(&v, 0, sizeof(v));
	strcpy(v.name, "ds1");
	strcpy(v.pool, "prem");
	v.quota_bytes = 2 * POOL_TIB_BYTES;
	assert_int_equal(
		pool_registry_volume_create(reg, &v, lim, err, sizeof(err)), 0);

	caps_plain(&caps);
	s = sim_new(&caps);
	sim_add(s, "10.0.0.1", "ds1", 65536, TRAFFIC_OP_READ);
	assert_int_equal(traffic_limits_apply(s->t, lim, 0), 0);
	sim_run(s, 2 * S);
	/* 2 TiB at Premium: 128 MiB/s. */
	assert_within((double)sim_bytes(s), 256.0 * MIB, 0.05);

	/* The volume moves to Ultra: 256 MiB/s, at once. */
	assert_int_equal(pool_registry_volume_move(reg, "ds1", "ultra", 0, lim,
						   err, sizeof(err)),
			 0);
	assert_int_equal(traffic_limits_apply(s->t, lim, s->now), 0);
	sim_window(s);
	sim_run(s, 4 * S);
	assert_within((double)sim_bytes(s), 512.0 * MIB, 0.05);

	/* Deleted from the registry: no limit any more, the flow lives on. */
	assert_int_equal(
		pool_registry_volume_delete(reg, "ds1", lim, err, sizeof(err)),
		0);
	assert_int_equal(traffic_limits_apply(s->t, lim, s->now), 0);
	assert_int_equal(traffic_flow_queued(s->flows[0].flow) <= 1, 1);
	sim_free(s);
	pool_registry_free(reg);
	free(lim);
}

static void test_scale_factor_shrinks_every_rate(void **state)
{
	struct traffic_caps caps;
	struct sim *s;

	(void)state;
	caps_plain(&caps);
	caps.scale = 1.0 / 32;
	caps.flow_ops_per_s = 76000;
	s = sim_new(&caps);
	assert_int_equal(traffic_volume_set(s->t, "ds1", NULL, 3200 * MIB, 0),
			 0);
	sim_add(s, "10.0.0.1", "ds1", 65536, TRAFFIC_OP_READ);
	sim_add(s, "10.0.0.2", "ds2", 8192, TRAFFIC_OP_READ);
	sim_run(s, 10 * S);
	assert_within((double)s->flows[0].bytes, 1000.0 * MIB, 0.05);
	assert_within((double)s->flows[1].ops, 23750.0, 0.05);
	sim_free(s);
}

static void test_fifo_order_counters_and_cancel(void **state)
{
	struct traffic_req r[4] = {
		{ .bytes = 1000, .op = TRAFFIC_OP_READ },
		{ .bytes = 1000, .op = TRAFFIC_OP_WRITE },
		{ .bytes = 0, .op = TRAFFIC_OP_OTHER },
		{ .bytes = 1000, .op = TRAFFIC_OP_READ },
	};
	struct traffic_caps caps;
	struct traffic_stats st;
	struct traffic_flow *f;
	struct traffic_req *got;
	struct sockaddr_in6 sin6;
	struct traffic *t;
	int64_t wait;

	(void)state;
	caps_plain(&caps);
	assert_int_equal(traffic_new(&caps, &t), 0);
	assert_int_equal(traffic_pool_set(t, "p", 0, 0), 0);
	/* 1000 bytes/s, 10 ms burst: 10 bytes. */
	assert_int_equal(traffic_volume_set(t, "ds1", "p", 1000, 0), 0);
	memset(&sin6, 0, sizeof(sin6));
	sin6.sin6_family = AF_INET6;
	assert_int_equal(
		inet_pton(AF_INET6, "::ffff:192.0.2.7", &sin6.sin6_addr), 1);
	assert_int_equal(
		traffic_flow_new(t, (struct sockaddr *)&sin6, "ds1", 0, &f), 0);
	assert_int_equal(traffic_admit(f, &r[0], 0, &wait), TRAFFIC_START);
	/* 990 bytes of debt: about a second to wait. */
	assert_int_equal(traffic_admit(f, &r[1], 0, &wait), TRAFFIC_WAIT);
	assert_int_equal(wait, TRAFFIC_WAIT_MAX_NS);
	/* Behind a waiting request even a 0-byte GETATTR waits (FIFO). */
	assert_int_equal(traffic_admit(f, &r[2], 0, &wait), TRAFFIC_WAIT);
	assert_int_equal(traffic_admit(f, &r[3], 0, &wait), TRAFFIC_WAIT);
	assert_int_equal(traffic_flow_queued(f), 3);
	assert_int_equal(traffic_flow_next(f, 500 * MS, &got, &wait),
			 TRAFFIC_WAIT);
	assert_int_equal(traffic_flow_next(f, 990 * MS + 1, &got, &wait),
			 TRAFFIC_START);
	assert_ptr_equal(got, &r[1]);
	assert_int_equal(traffic_flow_next(f, 990 * MS + 1, &got, &wait),
			 TRAFFIC_START);
	assert_ptr_equal(got, &r[2]);
	traffic_done(f, &r[0], 5 * MS);
	traffic_done(f, &r[1], 990 * MS + 2);

	assert_int_equal(traffic_stats_get(t, 990 * MS + 2, &st), 0);
	assert_int_equal(st.nflows, 1);
	assert_string_equal(st.flows[0].host, "192.0.2.7");
	/* Busy: it asked within TRAFFIC_ACTIVE_WINDOW_NS, contention or not. */
	assert_int_equal(st.nhosts, 1);
	assert_int_equal(st.hosts[0].busy_flows, 1);
	assert_int_equal(st.flows[0].queued, 1);
	assert_int_equal(st.flows[0].counters.ops[TRAFFIC_OP_READ], 1);
	assert_int_equal(st.flows[0].counters.ops[TRAFFIC_OP_WRITE], 1);
	assert_int_equal(st.flows[0].counters.ops[TRAFFIC_OP_OTHER], 1);
	assert_int_equal(st.flows[0].counters.bytes[TRAFFIC_OP_WRITE], 1000);
	assert_int_equal(st.flows[0].counters.latency_ns[TRAFFIC_OP_READ],
			 5 * MS);
	assert_int_equal(st.flows[0].counters.latency_ns[TRAFFIC_OP_WRITE],
			 990 * MS + 2);
	/* r[1] was limited by the volume; r[2] and r[3] only queued. */
	assert_int_equal(st.flows[0].counters.limited, 1);
	assert_int_equal(st.nvolumes, 1);
	assert_string_equal(st.volumes[0].pool, "p");
	assert_int_equal(st.volumes[0].limit_bytes_per_s, 1000);
	assert_int_equal(st.volumes[0].counters.limited, 1);
	assert_int_equal(st.volumes[0].counters.done[TRAFFIC_OP_WRITE], 1);
	assert_int_equal(st.nhosts, 1);
	assert_int_equal(st.hosts[0].counters.limited, 0);
	assert_int_equal(st.npools, 1);
	assert_int_equal(st.pools[0].counters.bytes[TRAFFIC_OP_READ], 1000);
	traffic_stats_fini(&st);

	got = traffic_flow_cancel(f);
	assert_ptr_equal(got, &r[3]);
	assert_null(got->next);
	assert_int_equal(traffic_flow_next(f, S, &got, &wait), TRAFFIC_IDLE);
	traffic_flow_free(f);
	traffic_free(t);
}

/* A kept volume (a datastore) keeps its counters after its flows close and
 * after it leaves every pool. */
static void test_kept_volume_counters_outlive_flows(void **state)
{
	struct traffic_req r = { .bytes = 4096, .op = TRAFFIC_OP_READ };
	struct pool_limits none;
	struct traffic_caps caps;
	struct traffic_stats st;
	struct sockaddr_in sin;
	struct traffic_flow *f;
	struct traffic *t;
	int64_t wait;

	(void)state;
	caps_plain(&caps);
	assert_int_equal(traffic_new(&caps, &t), 0);
	assert_int_equal(traffic_volume_keep(t, "ds1", 0), 0);
	assert_int_equal(traffic_volume_keep(t, "", 0), -EINVAL);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	assert_int_equal(inet_pton(AF_INET, "192.0.2.8", &sin.sin_addr), 1);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(traffic_flow_new(t, (struct sockaddr *)&sin,
						  "ds1", 0, &f),
				 0);
		assert_int_equal(traffic_admit(f, &r, 0, &wait), TRAFFIC_START);
		traffic_done(f, &r, MS);
		traffic_flow_free(f);
	}
	memset(&none, 0, sizeof(none));
	assert_int_equal(traffic_limits_apply(t, &none, S), 0);
	assert_int_equal(traffic_stats_get(t, S, &st), 0);
	assert_int_equal(st.nflows, 0);
	assert_int_equal(st.nvolumes, 1);
	assert_string_equal(st.volumes[0].name, "ds1");
	assert_int_equal(st.volumes[0].counters.done[TRAFFIC_OP_READ], 2);
	assert_int_equal(st.volumes[0].counters.bytes[TRAFFIC_OP_READ], 8192);
	traffic_stats_fini(&st);
	traffic_free(t);
}

/* The [traffic] keys and the whole lab profile as dsnfsd would read it. */
struct profile {
	struct traffic_caps caps;
	struct pool_config pools;
	char err[200];
};

static int profile_key(void *user, const char *section, const char *key,
		       const char *value)
{
	struct profile *p = user;
	int err = traffic_config_section(&p->caps, section, key, value, p->err,
					 sizeof(p->err));

	if (err == -ENOENT) {
		err = pool_config_section(&p->pools, section, key, value,
					  p->err, sizeof(p->err));
	}
	/* config.c's own keys: the path and who may mount it. */
	if (err == -ENOENT &&
	    (!strcmp(key, "path") || !strcmp(key, "clients") ||
	     !strcmp(key, "squash") || !strcmp(key, "secure"))) {
		err = 0;
	}
	return err == 0;
}

static void test_traffic_config_keys(void **state)
{
	struct traffic_caps caps;
	char err[200];

	(void)state;
	traffic_caps_default(&caps);
	assert_int_equal(traffic_config_section(&caps, "traffic", "flow_mibps",
						"2148", err, sizeof(err)),
			 0);
	assert_int_equal(caps.flow_bytes_per_s, 2148 * MIB);
	assert_int_equal(traffic_config_section(&caps, "traffic", "scale", "0",
						err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "a number above 0");
	assert_int_equal(traffic_config_section(&caps, "traffic", "host_iops",
						"-5", err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(traffic_config_section(&caps, "traffic", "speed", "1",
						err, sizeof(err)),
			 -ENOENT);
	assert_int_equal(traffic_config_section(&caps, "server", "scale", "1",
						err, sizeof(err)),
			 -ENOENT);
}

/* Measures one scenario of the profile: @hosts hosts, each with one flow
 * to each of @vols datastores (ds1.. in turn), for 2 s after 0.5 s. */
static double profile_run(const struct profile *p,
			  const struct pool_limits *lim, int hosts, int vols,
			  int conns, uint64_t size, bool same_volume)
{
	struct sim *s = sim_new(&p->caps);
	char ip[16], vol[8];
	double r;

	assert_int_equal(traffic_limits_apply(s->t, lim, 0), 0);
	for (int h = 0; h < hosts; h++) {
		snprintf(ip, sizeof(ip), "10.1.0.%d", h + 1);
		for (int v = 0; v < vols * conns; v++) {
			snprintf(vol, sizeof(vol), "ds%d",
				 same_volume ? 1
					     : (h * vols + v / conns) % 8 + 1);
			sim_add(s, ip, vol, size, TRAFFIC_OP_READ);
		}
	}
	sim_run(s, S / 2);
	sim_window(s);
	sim_run(s, S / 2 + 2 * S);
	r = size == 8192 ? (double)sim_ops(s) : (double)sim_bytes(s);
	sim_free(s);
	return r;
}

static void test_anf_avs_profile_reproduces_the_model(void **state)
{
	struct pool_limits *lim = calloc(1, sizeof(*lim));
	struct pool_registry *reg;
	const struct pool_state *st;
	struct profile p;
	double d1, s1;

	(void)state;
	assert_non_null(lim);
	traffic_caps_default(&p.caps);
	assert_int_equal(pool_config_init(&p.pools), 0);
	assert_int_equal(ini_parse("etc/lab/anf-avs.conf", profile_key, &p), 0);
	assert_int_equal(
		pool_config_finish(&p.pools, &st, p.err, sizeof(p.err)), 0);
	assert_int_equal(pool_registry_new(NULL, NULL, &reg), 0);
	assert_int_equal(pool_registry_load(reg, st, lim, p.err, sizeof(p.err)),
			 0);
	assert_int_equal(lim->nvolumes, 8);
	assert_int_equal(lim->volumes[0].limit_bytes_per_s, 4500 * MIB);

	/* The fitted model (perf/dsload/model.c, docs/pools.md): flow caps,
	 * contention 0.136 on hosts and volumes, the host's NIC, the
	 * volume's 4,500 MiB/s; no IOPS caps above the flow.  8K random,
	 * one host: D1, D2 (+76%), D4 (4 / 1.408 = 2.84). */
	d1 = profile_run(&p, lim, 1, 1, 1, 8192, false);
	assert_within(d1, 76000.0 / 32 * 2, 0.05);
	assert_within(profile_run(&p, lim, 1, 2, 1, 8192, false) / d1, 1.76,
		      0.05);
	assert_within(profile_run(&p, lim, 1, 4, 1, 8192, false) / d1, 2.84,
		      0.05);
	/* 4 hosts on one datastore: M2, the volume's contention, 2.84. */
	assert_within(profile_run(&p, lim, 4, 1, 1, 8192, true) / d1, 2.84,
		      0.05);
	/* M4: 4 hosts, each two connections to its own datastore: 8 / 1.136
	 * = 7.04. */
	assert_within(profile_run(&p, lim, 4, 1, 2, 8192, false) / d1, 7.04,
		      0.05);

	/* 64K sequential: S1, S3 (8 datastores, the host's 2,786 MiB/s),
	 * M1 (4 hosts, one volume at 4,500 MiB/s), M3 (4 x 2 connections,
	 * each host at its 2,786). */
	s1 = profile_run(&p, lim, 1, 1, 1, 65536, false);
	assert_within(s1, 2148.0 / 32 * MIB * 2, 0.05);
	assert_within(profile_run(&p, lim, 1, 8, 1, 65536, false) / s1, 1.30,
		      0.05);
	assert_within(profile_run(&p, lim, 4, 1, 1, 65536, true) / s1, 2.09,
		      0.05);
	assert_within(profile_run(&p, lim, 4, 1, 2, 65536, false) / s1, 5.19,
		      0.05);
	pool_registry_free(reg);
	pool_config_fini(&p.pools);
	free(lim);
}

/* Loop threads sharing one volume: the volume's rate still holds.  Each
 * thread reads one shared simulated clock that every call advances. */
struct thread_arg {
	struct traffic_flow *flow;
	_Atomic int64_t *clock;
	uint64_t bytes;
};

static void *thread_main(void *p)
{
	struct thread_arg *a = p;
	struct traffic_req req = { .bytes = 4096, .op = TRAFFIC_OP_WRITE };
	struct traffic_req *got;
	bool queued = false;
	int64_t wait;

	for (int i = 0; i < 200000; i++) {
		int64_t now = atomic_fetch_add(a->clock, 1000) + 1000;

		if (!queued) {
			queued = traffic_admit(a->flow, &req, now, &wait) !=
				 TRAFFIC_START;
		} else if (traffic_flow_next(a->flow, now, &got, &wait) ==
			   TRAFFIC_START) {
			queued = false;
		}
		if (!queued) {
			a->bytes += req.bytes;
			traffic_done(a->flow, &req, now);
		}
	}
	traffic_flow_cancel(a->flow);
	return NULL;
}

static void test_threads_share_a_volume(void **state)
{
	struct thread_arg args[4];
	pthread_t th[4];
	struct traffic_caps caps;
	struct sockaddr_in sin;
	_Atomic int64_t clock = 0;
	struct traffic *t;
	uint64_t sum = 0;

	(void)state;
	caps_plain(&caps);
	assert_int_equal(traffic_new(&caps, &t), 0);
	assert_int_equal(traffic_pool_set(t, "p", 1000 * MIB, 0), 0);
	assert_int_equal(traffic_volume_set(t, "ds1", "p", 10 * MIB, 0), 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	for (int i = 0; i < 4; i++) {
		sin.sin_addr.s_addr = htonl(0x0a000001 + (uint32_t)i);
		args[i].clock = &clock;
		args[i].bytes = 0;
		assert_int_equal(traffic_flow_new(t, (struct sockaddr *)&sin,
						  "ds1", 0, &args[i].flow),
				 0);
	}
	for (int i = 0; i < 4; i++) {
		assert_int_equal(
			pthread_create(&th[i], NULL, thread_main, &args[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		sum += args[i].bytes;
		traffic_flow_free(args[i].flow);
	}
	/* 800,000 calls of 1 us: 0.8 s at 10 MiB/s plus the burst, never
	 * more.  Less is possible here only: the shared clock runs on while
	 * a thread that holds a ticket is descheduled (at most a burst of
	 * idle bucket each time). */
	assert_true((double)sum <= 1.05 * (0.8 * 10 + 0.1) * MIB);
	assert_true((double)sum >= 0.75 * 0.8 * 10 * MIB);
	traffic_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool_throughput_is_shared),
		cmocka_unit_test(test_limits_follow_the_pool_registry),
		cmocka_unit_test(test_scale_factor_shrinks_every_rate),
		cmocka_unit_test(test_fifo_order_counters_and_cancel),
		cmocka_unit_test(test_kept_volume_counters_outlive_flows),
		cmocka_unit_test(test_traffic_config_keys),
		cmocka_unit_test(test_anf_avs_profile_reproduces_the_model),
		cmocka_unit_test(test_threads_share_a_volume),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
