// SPDX-License-Identifier: Apache-2.0
/*
 * test_admin_metrics: the Prometheus text of GET /metrics
 * (nfsd/admin/metrics.c): golden output, label escaping, one HELP and
 * TYPE per family, families without samples left out, exact seconds,
 * connections per event loop.
 * tests/integ/promparse.py checks the same text from a live server.
 */
#include "nfsd/admin/admin_int.h"
#include "nfsd/admin/view.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define TIB POOL_TIB_BYTES

/* One datastore outside any pool, no traffic, no alarms, scale 1. */
static const char golden_minimal[] =
	"# HELP dsnfs_traffic_scale Factor every traffic rate is multiplied by "
	"([traffic] scale)\n"
	"# TYPE dsnfs_traffic_scale gauge\n"
	"dsnfs_traffic_scale 1\n"
	"# HELP dsnfs_volume_info Volumes (datastores): 1, with their pool and "
	"service level\n"
	"# TYPE dsnfs_volume_info gauge\n"
	"dsnfs_volume_info{volume=\"ds2\",pool=\"\",level=\"\"} 1\n"
	"# HELP dsnfs_volume_read_ops_total READ requests started, per volume; "
	"ANF ReadIops is its rate\n"
	"# TYPE dsnfs_volume_read_ops_total counter\n"
	"dsnfs_volume_read_ops_total{volume=\"ds2\"} 0\n"
	"# HELP dsnfs_volume_write_ops_total WRITE requests started, per "
	"volume; ANF WriteIops is its rate\n"
	"# TYPE dsnfs_volume_write_ops_total counter\n"
	"dsnfs_volume_write_ops_total{volume=\"ds2\"} 0\n"
	"# HELP dsnfs_volume_other_ops_total Other (metadata) requests "
	"started, per volume; ANF OtherIops is its rate\n"
	"# TYPE dsnfs_volume_other_ops_total counter\n"
	"dsnfs_volume_other_ops_total{volume=\"ds2\"} 0\n"
	"# HELP dsnfs_volume_read_bytes_total Bytes of READ requests started, "
	"per volume; ANF ReadThroughput is its rate\n"
	"# TYPE dsnfs_volume_read_bytes_total counter\n"
	"dsnfs_volume_read_bytes_total{volume=\"ds2\"} 0\n"
	"# HELP dsnfs_volume_write_bytes_total Bytes of WRITE requests "
	"started, per volume; ANF WriteThroughput is its rate\n"
	"# TYPE dsnfs_volume_write_bytes_total counter\n"
	"dsnfs_volume_write_bytes_total{volume=\"ds2\"} 0\n"
	"# HELP dsnfs_volume_read_latency_seconds READ latency from arrival to "
	"reply, queueing included, per volume; ANF AverageReadLatency is "
	"rate(_sum) / rate(_count)\n"
	"# TYPE dsnfs_volume_read_latency_seconds summary\n"
	"dsnfs_volume_read_latency_seconds_sum{volume=\"ds2\"} 0.000000000\n"
	"dsnfs_volume_read_latency_seconds_count{volume=\"ds2\"} 0\n"
	"# HELP dsnfs_volume_write_latency_seconds WRITE latency from arrival "
	"to reply, queueing included, per volume; ANF AverageWriteLatency is "
	"rate(_sum) / rate(_count)\n"
	"# TYPE dsnfs_volume_write_latency_seconds summary\n"
	"dsnfs_volume_write_latency_seconds_sum{volume=\"ds2\"} 0.000000000\n"
	"dsnfs_volume_write_latency_seconds_count{volume=\"ds2\"} 0\n"
	"# HELP dsnfs_volume_other_latency_seconds Latency of other requests "
	"from arrival to reply, queueing included, per volume\n"
	"# TYPE dsnfs_volume_other_latency_seconds summary\n"
	"dsnfs_volume_other_latency_seconds_sum{volume=\"ds2\"} 0.000000000\n"
	"dsnfs_volume_other_latency_seconds_count{volume=\"ds2\"} 0\n"
	"# HELP dsnfs_volume_throughput_limit_reached_total Requests a "
	"throughput or IOPS limit made wait, per volume; ANF: throughput limit "
	"reached\n"
	"# TYPE dsnfs_volume_throughput_limit_reached_total counter\n"
	"dsnfs_volume_throughput_limit_reached_total{volume=\"ds2\"} 0\n";

static char *metrics_of(const struct admin_view *v)
{
	struct admin_buf b;

	admin__buf_init(&b);
	assert_int_equal(admin__metrics_write(v, &b), 0);
	assert_non_null(b.data);
	return b.data;
}

static void assert_contains(const char *text, const char *needle)
{
	if (!strstr(text, needle)) {
		fail_msg("missing:\n%s", needle);
	}
}

static size_t count_of(const char *text, const char *needle)
{
	size_t n = 0;

	for (const char *p = strstr(text, needle); p;
	     p = strstr(p + 1, needle)) {
		n++;
	}
	return n;
}

static void test_label_values_are_escaped(void **state)
{
	struct admin_buf b;

	(void)state;
	admin__buf_init(&b);
	admin__metrics_label_escape(&b, "a\"b\\c\nd");
	assert_string_equal(b.data, "a\\\"b\\\\c\\nd");
	admin__buf_fini(&b);
}

static void test_minimal_view_is_golden(void **state)
{
	struct admin_volume_view vol = { .name = "ds2" };
	struct admin_view v = { 0 };
	char *text;

	(void)state;
	v.state = calloc(1, sizeof(*v.state));
	v.limits = calloc(1, sizeof(*v.limits));
	assert_non_null(v.state);
	assert_non_null(v.limits);
	v.caps.scale = 1;
	v.volumes = &vol;
	v.nvolumes = 1;
	text = metrics_of(&v);
	assert_string_equal(text, golden_minimal);
	free(text);
	free(v.limits);
	free(v.state);
}

/* A Premium pool of 4 TiB holding ds1 (1 TiB quota, half used, thin disks
 * provisioned to 200%), ds2 outside it, one flow from a host whose name
 * needs escaping, traffic scaled by 0.5. */
struct full {
	struct admin_view v;
	struct traffic_volume_stats tv;
	struct traffic_flow_stats flow;
	struct traffic_host_stats host;
	struct alarm_view alarms[2];
	struct admin_volume_view vols[2];
	uint32_t loop_conns[2];
};

static struct full *full_new(void)
{
	struct full *f = calloc(1, sizeof(*f));
	struct pool_volume *pv;
	struct pool *p;

	assert_non_null(f);
	f->v.state = calloc(1, sizeof(*f->v.state));
	f->v.limits = calloc(1, sizeof(*f->v.limits));
	assert_non_null(f->v.state);
	assert_non_null(f->v.limits);
	p = &f->v.state->pools[f->v.state->npools++];
	strcpy(p->name, "p1");
	p->level = POOL_LEVEL_PREMIUM;
	p->size_tib = 4;
	pv = &f->v.state->volumes[f->v.state->nvolumes++];
	strcpy(pv->name, "ds1");
	strcpy(pv->pool, "p1");
	pv->quota_bytes = TIB;
	pool_state_limits(f->v.state, f->v.limits);
	f->v.caps.scale = 0.5;
	f->v.config.usage_alarm_percent = 80;
	f->v.config.overallocation_alarm_percent = 150;

	strcpy(f->tv.name, "ds1");
	f->tv.counters.ops[TRAFFIC_OP_READ] = 3;
	f->tv.counters.bytes[TRAFFIC_OP_READ] = 196608;
	f->tv.counters.done[TRAFFIC_OP_READ] = 3;
	f->tv.counters.latency_ns[TRAFFIC_OP_READ] = 1500000;
	f->tv.counters.limited = 1;
	f->flow.id = 7;
	strcpy(f->flow.host, "10.0.0.\"1\\\n");
	strcpy(f->flow.volume, "ds1");
	f->flow.queued = 2;
	f->flow.counters.ops[TRAFFIC_OP_WRITE] = 5;
	f->flow.counters.done[TRAFFIC_OP_WRITE] = 4;
	f->flow.counters.latency_ns[TRAFFIC_OP_WRITE] = 2000000001;
	strcpy(f->host.host, "10.0.0.1");
	f->host.flows = 1;
	f->v.traffic.flows = &f->flow;
	f->v.traffic.nflows = 1;
	f->v.traffic.hosts = &f->host;
	f->v.traffic.nhosts = 1;

	strcpy(f->alarms[0].volume, "ds1");
	f->alarms[0].scanned = true;
	f->alarms[0].scan.provisioned_bytes = 2 * TIB;
	f->alarms[0].scan.thin_provisioned_bytes = TIB;
	f->alarms[0].quota_bytes = TIB;
	f->alarms[0].used_known = true;
	f->alarms[0].used_bytes = TIB / 2;
	f->alarms[0].valid[ALARM_USAGE] = true;
	f->alarms[0].valid[ALARM_OVERALLOCATION] = true;
	f->alarms[0].percent[ALARM_USAGE] = 50;
	f->alarms[0].percent[ALARM_OVERALLOCATION] = 200;
	f->alarms[0].raised[ALARM_OVERALLOCATION] = true;
	strcpy(f->alarms[1].volume, "ds2");
	f->v.alarms = f->alarms;
	f->v.nalarms = 2;

	strcpy(f->vols[0].name, "ds1");
	f->vols[0].pooled = pv;
	f->vols[0].limit_bytes_per_s =
		f->v.limits->volumes[0].limit_bytes_per_s;
	f->vols[0].used_known = true;
	f->vols[0].used_bytes = TIB / 2;
	f->vols[0].traffic = &f->tv;
	f->vols[0].alarm = &f->alarms[0];
	strcpy(f->vols[1].name, "ds2");
	f->vols[1].alarm = &f->alarms[1];
	f->v.volumes = f->vols;
	f->v.nvolumes = 2;
	f->loop_conns[0] = 2;
	f->loop_conns[1] = 3;
	f->v.loop_conns = f->loop_conns;
	f->v.nloops = 2;
	return f;
}

static void full_free(struct full *f)
{
	free(f->v.limits);
	free(f->v.state);
	free(f);
}

static void test_full_view_families(void **state)
{
	struct full *f = full_new();
	char *text = metrics_of(&f->v);

	(void)state;
	assert_contains(text, "dsnfs_traffic_scale 0.5\n");
	assert_contains(text, "# TYPE dsnfs_pool_info gauge\n"
			      "dsnfs_pool_info{pool=\"p1\",level=\"Premium\","
			      "qos=\"auto\"} 1\n");
	/* 4 TiB x 64 MiB/s x 0.5; ds1's 1 TiB x 64 MiB/s x 0.5 */
	assert_contains(text, "dsnfs_pool_throughput_limit_bytes_per_second"
			      "{pool=\"p1\"} 134217728\n");
	assert_contains(text, "dsnfs_pool_allocated_throughput_bytes_per_"
			      "second{pool=\"p1\"} 33554432\n");
	assert_contains(text, "dsnfs_pool_allocated_bytes{pool=\"p1\"} "
			      "1099511627776\n");
	assert_contains(text, "dsnfs_pool_consumed_bytes{pool=\"p1\"} "
			      "549755813888\n");
	assert_contains(text,
			"# TYPE dsnfs_volume_read_latency_seconds summary\n"
			"dsnfs_volume_read_latency_seconds_sum{volume=\"ds1\"}"
			" 0.001500000\n"
			"dsnfs_volume_read_latency_seconds_count{volume="
			"\"ds1\"} 3\n"
			"dsnfs_volume_read_latency_seconds_sum{volume=\"ds2\"}"
			" 0.000000000\n"
			"dsnfs_volume_read_latency_seconds_count{volume="
			"\"ds2\"} 0\n");
	assert_contains(text, "dsnfs_volume_throughput_limit_reached_total"
			      "{volume=\"ds1\"} 1\n");
	/* ds2 has no quota: no allocated size, no percentage. */
	assert_contains(text, "# TYPE dsnfs_volume_consumed_size_percent "
			      "gauge\n"
			      "dsnfs_volume_consumed_size_percent{volume="
			      "\"ds1\"} 50.000\n"
			      "# HELP");
	assert_int_equal(count_of(text, "allocated_size_bytes{volume=\"ds2\""),
			 0);
	assert_contains(text,
			"# TYPE dsnfs_datastore_alarm gauge\n"
			"dsnfs_datastore_alarm{volume=\"ds1\",alarm=\"usage\"} "
			"0\n"
			"dsnfs_datastore_alarm{volume=\"ds1\",alarm="
			"\"overallocation\"} 1\n"
			"dsnfs_datastore_alarm{volume=\"ds2\",alarm=\"usage\"} "
			"0\n"
			"dsnfs_datastore_alarm{volume=\"ds2\",alarm="
			"\"overallocation\"} 0\n");
	assert_contains(text, "dsnfs_datastore_overallocation_percent{volume="
			      "\"ds1\"} 200.000\n");
	assert_contains(text, "dsnfs_datastore_alarm_threshold_percent{alarm="
			      "\"overallocation\"} 150\n");
	/* 2.000000001 s exactly, and the host label escaped. */
	assert_contains(text, "dsnfs_flow_write_latency_seconds_sum{flow=\"7\","
			      "host=\"10.0.0.\\\"1\\\\\\n\",volume=\"ds1\"} "
			      "2.000000001\n");
	assert_contains(text, "dsnfs_host_flows{host=\"10.0.0.1\"} 1\n");
	assert_contains(text, "dsnfs_loop_connections{loop=\"0\"} 2\n"
			      "dsnfs_loop_connections{loop=\"1\"} 3\n");
	/* Pools count no completions: no latency families for them. */
	assert_int_equal(count_of(text, "dsnfs_pool_read_latency"), 0);
	assert_int_equal(count_of(text, "# HELP dsnfs_volume_read_ops_total "),
			 1);
	assert_int_equal(count_of(text, "# TYPE dsnfs_flow_queued_requests "),
			 1);
	free(text);
	full_free(f);
}

static void test_no_flows_no_flow_families(void **state)
{
	struct full *f = full_new();
	char *text;

	(void)state;
	f->v.traffic.nflows = 0;
	f->v.traffic.nhosts = 0;
	text = metrics_of(&f->v);
	assert_int_equal(count_of(text, "dsnfs_flow_"), 0);
	assert_int_equal(count_of(text, "dsnfs_host_"), 0);
	assert_true(text[strlen(text) - 1] == '\n');
	free(text);
	full_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_label_values_are_escaped),
		cmocka_unit_test(test_minimal_view_is_golden),
		cmocka_unit_test(test_full_view_families),
		cmocka_unit_test(test_no_flows_no_flow_families),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
