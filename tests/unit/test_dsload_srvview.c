// SPDX-License-Identifier: Apache-2.0
/*
 * test_dsload_srvview: the server's view (perf/dsload/srvview.c).  Two
 * samples of dsnfsd's /volumes and /hosts give per-datastore and per-host
 * rates over the interval between them, only for the fleet's datastores
 * and hosts; a counter that went backwards (a restart) gives no view but
 * a reason; malformed JSON is refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "perf/dsload/srvview.h"

/* A /volumes body with ds1 and ds2, or a /hosts body with two hosts,
 * whose read ops are @r, write ops @w (8 KiB each, 1 ms each). */
static void volumes(char *buf, size_t len, const char *key,
		    const char *name_key, const char *a, const char *b,
		    unsigned r, unsigned w)
{
	const char *entry =
		"{\"%s\":\"%s\",\"extra\":1,\"counters\":{"
		"\"read\":{\"ops\":%u,\"bytes\":%u,\"done\":%u,"
		"\"latency_ns\":%u},"
		"\"write\":{\"ops\":%u,\"bytes\":%u,\"done\":%u,"
		"\"latency_ns\":%u},"
		"\"other\":{\"ops\":0,\"bytes\":0,\"done\":0,\"latency_ns\":0},"
		"\"limit_reached\":0}}";
	char e1[512], e2[512];

	snprintf(e1, sizeof(e1), entry, name_key, a, r, r * 8192, r,
		 r * 1000000, w, w * 8192, w, w * 1000000);
	snprintf(e2, sizeof(e2), entry, name_key, b, 2 * r, 2 * r * 8192, 2 * r,
		 2 * r * 1000000, 0, 0, 0, 0);
	snprintf(buf, len, "{\"%s\":[%s,%s]}", key, e1, e2);
}

static void sample(struct srv_sample *s, int64_t at_ns, unsigned r, unsigned w)
{
	char vols[2048], hosts[2048], err[256];

	volumes(vols, sizeof(vols), "volumes", "name", "ds1", "other", r, w);
	volumes(hosts, sizeof(hosts), "hosts", "host", "127.0.1.1", "10.0.0.9",
		r, w);
	assert_int_equal(
		srv_sample_parse(vols, hosts, at_ns, s, err, sizeof(err)), 0);
}

static void test_srvview_rates_over_the_interval(void **state)
{
	struct srv_sample *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	struct srv_view *v = malloc(sizeof(*v));
	const char vols[1][SRV_NAME_MAX] = { "ds1" };

	(void)state;
	sample(a, 1000000000, 100, 50);
	sample(b, 3000000000, 2100, 1050); /* +2000 reads, +1000 writes */
	srv_view_compute(a, b, vols, 1, "127.0.1.", v);
	assert_true(v->ok);
	assert_true(v->seconds == 2.0);
	/* only ds1 (the fleet's), not "other" */
	assert_int_equal(v->nvol, 1);
	assert_string_equal(v->vol[0].name, "ds1");
	assert_true(v->vol[0].iops[SRV_READ] == 1000.0);
	assert_true(v->vol[0].iops[SRV_WRITE] == 500.0);
	assert_true(v->vol[0].mibps[SRV_READ] == 1000.0 * 8192 / 1048576);
	assert_true(v->vol[0].lat_ms[SRV_READ] == 1.0);
	assert_true(v->total.iops[SRV_WRITE] == 500.0);
	/* only the fleet's hosts */
	assert_int_equal(v->nhost, 1);
	assert_string_equal(v->host[0].name, "127.0.1.1");
	free(a);
	free(b);
	free(v);
}

static void test_srvview_counters_backwards_give_a_reason(void **state)
{
	struct srv_sample *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	struct srv_view *v = malloc(sizeof(*v));
	const char vols[1][SRV_NAME_MAX] = { "ds1" };

	(void)state;
	sample(a, 1000000000, 500, 500);
	sample(b, 2000000000, 10, 10); /* the server restarted */
	srv_view_compute(a, b, vols, 1, "127.0.1.", v);
	assert_true(v->sampled);
	assert_false(v->ok);
	assert_non_null(strstr(v->why, "ds1: counters went backwards"));
	free(a);
	free(b);
	free(v);
}

static void test_srvview_new_entry_counts_from_zero(void **state)
{
	struct srv_sample *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	struct srv_view *v = malloc(sizeof(*v));
	const char vols[1][SRV_NAME_MAX] = { "ds1" };

	(void)state;
	sample(b, 2000000000, 300, 0);
	memset(a, 0, sizeof(*a));
	a->at_ns = 1000000000;
	srv_view_compute(a, b, vols, 1, "127.0.1.", v);
	assert_true(v->ok);
	assert_true(v->vol[0].iops[SRV_READ] == 300.0);
	free(a);
	free(b);
	free(v);
}

static void test_srvview_refuses_malformed_json(void **state)
{
	struct srv_sample *s = malloc(sizeof(*s));
	char err[256];

	(void)state;
	assert_int_equal(
		srv_sample_parse("{", "{\"hosts\":[]}", 0, s, err, sizeof(err)),
		-EBADMSG);
	assert_int_equal(srv_sample_parse("{\"volumes\":{}}", "{\"hosts\":[]}",
					  0, s, err, sizeof(err)),
			 -EBADMSG);
	assert_non_null(strstr(err, "no \"volumes\" array"));
	assert_int_equal(srv_sample_parse("{\"volumes\":[{\"name\":\"x\"}]}",
					  "{\"hosts\":[]}", 0, s, err,
					  sizeof(err)),
			 -EBADMSG);
	assert_non_null(strstr(err, "entry 0 malformed"));
	assert_int_equal(srv_sample_parse("{\"volumes\":[]}", "{\"hosts\":[]}",
					  0, s, err, sizeof(err)),
			 0);
	assert_int_equal(s->nvol, 0);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_srvview_rates_over_the_interval),
		cmocka_unit_test(test_srvview_counters_backwards_give_a_reason),
		cmocka_unit_test(test_srvview_new_entry_counts_from_zero),
		cmocka_unit_test(test_srvview_refuses_malformed_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
