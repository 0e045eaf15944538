// SPDX-License-Identifier: Apache-2.0
/*
 * test_admin_json: the admin API's request bodies (strict: one object, no
 * duplicate or unknown keys, typed values) and the JSON shapes of its
 * resources (nfsd/admin/json_in.c, json_out.c).
 */
#include "nfsd/admin/admin_int.h"
#include "nfsd/admin/patch.h"
#include "nfsd/admin/view.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define TIB POOL_TIB_BYTES
#define MIB POOL_MIB_BYTES

static json_t *parse_ok(const char *text)
{
	char err[300];
	json_t *doc = NULL;

	assert_int_equal(
		admin__json_parse(text, strlen(text), &doc, err, sizeof(err)),
		0);
	return doc;
}

/* Parses @text and checks it is refused with a message containing @why. */
static void parse_fails(const char *text, size_t len, const char *why)
{
	char err[300] = "";
	json_t *doc = NULL;

	assert_int_equal(admin__json_parse(text, len, &doc, err, sizeof(err)),
			 -EINVAL);
	assert_null(doc);
	if (!strstr(err, why)) {
		fail_msg("'%s' does not say '%s'", err, why);
	}
}

static void test_parse_refuses_what_is_not_one_object(void **state)
{
	static const char nul[] = "{\"name\": \"a\\u0000b\"}";

	(void)state;
	parse_fails("", 0, "a JSON object is required");
	parse_fails("[1, 2]", 6, "a JSON object is expected");
	parse_fails("{\"a\": 1} x", 10, "end of file expected");
	parse_fails("{\"a\": 1, \"a\": 2}", 16, "duplicate");
	parse_fails("{\"a\": }", 7, "line 1 column");
	parse_fails(nul, sizeof(nul) - 1, "NUL");
	json_decref(parse_ok("{\"a\": 1}"));
}

/* Runs @fn on @text; returns its result and the message in @err. */
static int pool_spec_of(const char *text, struct pool *out, char *err,
			size_t errlen)
{
	json_t *doc = parse_ok(text);
	int rc = admin__json_pool_spec(doc, out, err, errlen);

	json_decref(doc);
	return rc;
}

static void test_pool_spec_reads_fields_and_qos_defaults(void **state)
{
	struct pool p;
	char err[300];

	(void)state;
	assert_int_equal(pool_spec_of("{\"name\": \"p1\", \"level\": "
				      "\"Premium\", \"size_tib\": 4}",
				      &p, err, sizeof(err)),
			 0);
	assert_string_equal(p.name, "p1");
	assert_int_equal(p.level, POOL_LEVEL_PREMIUM);
	assert_int_equal(p.size_tib, 4);
	assert_int_equal(p.qos, POOL_QOS_AUTO);
	assert_int_equal(p.purchased_mibps, 0);

	/* Flexible exists only with manual QoS: the default follows. */
	assert_int_equal(pool_spec_of("{\"name\": \"f\", \"level\": "
				      "\"flexible\", \"size_tib\": 2, "
				      "\"purchased_mibps\": 256}",
				      &p, err, sizeof(err)),
			 0);
	assert_int_equal(p.qos, POOL_QOS_MANUAL);
	assert_int_equal(p.purchased_mibps, 256);
}

static void expect_pool_spec_error(const char *text, const char *why)
{
	struct pool p;
	char err[300] = "";

	assert_int_equal(pool_spec_of(text, &p, err, sizeof(err)), -EINVAL);
	if (!strstr(err, why)) {
		fail_msg("'%s' does not say '%s'", err, why);
	}
}

static void test_pool_spec_refuses_bad_fields(void **state)
{
	(void)state;
	expect_pool_spec_error("{\"name\": \"p1\", \"level\": \"ultra\", "
			       "\"size_tib\": 4, \"colour\": \"red\"}",
			       "unknown field 'colour'");
	expect_pool_spec_error("{\"name\": \"p1\", \"level\": \"ultra\"}",
			       "field 'size_tib' is missing");
	expect_pool_spec_error("{\"name\": \"p1\", \"level\": \"ultra\", "
			       "\"size_tib\": \"4\"}",
			       "'size_tib' must be a whole number");
	expect_pool_spec_error("{\"name\": \"p1\", \"level\": \"ultra\", "
			       "\"size_tib\": 4.0}",
			       "'size_tib' must be a whole number");
	expect_pool_spec_error("{\"name\": \"p1\", \"level\": \"ultra\", "
			       "\"size_tib\": -1}",
			       "from 0 to 4294967295");
	expect_pool_spec_error("{\"name\": \"p1\", \"level\": \"ultra\", "
			       "\"size_tib\": 4294967296}",
			       "from 0 to 4294967295");
	expect_pool_spec_error("{\"name\": \"p1\", \"level\": \"gold\", "
			       "\"size_tib\": 4}",
			       "'level' must be standard, premium");
	expect_pool_spec_error("{\"name\": \"../x\", \"level\": \"ultra\", "
			       "\"size_tib\": 4}",
			       "'name' must be a name");
	expect_pool_spec_error("{\"name\": \"p1\", \"level\": \"ultra\", "
			       "\"size_tib\": 4, \"qos\": \"fast\"}",
			       "'qos' must be auto or manual");
	expect_pool_spec_error("{}", "no field given (known: name, level, "
				     "size_tib, qos, purchased_mibps)");
}

static void test_pool_patch_says_which_fields_it_sets(void **state)
{
	json_t *doc = parse_ok("{\"level\": \"ultra\", \"size_tib\": 8}");
	struct admin_pool_patch p;
	char err[300];

	(void)state;
	assert_int_equal(admin__json_pool_patch(doc, &p, err, sizeof(err)), 0);
	assert_true(p.has_level && p.has_size);
	assert_false(p.has_throughput || p.has_qos);
	assert_int_equal(p.level, POOL_LEVEL_ULTRA);
	assert_int_equal(p.size_tib, 8);
	json_decref(doc);

	doc = parse_ok("{\"name\": \"p2\"}");
	assert_int_equal(admin__json_pool_patch(doc, &p, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "unknown field 'name'"));
	json_decref(doc);
}

static void test_volume_bodies(void **state)
{
	struct admin_volume_patch vp;
	struct pool_volume v;
	char err[300];
	json_t *doc;

	(void)state;
	doc = parse_ok("{\"name\": \"ds1\", \"pool\": \"p1\", "
		       "\"quota_bytes\": 2199023255552}");
	assert_int_equal(admin__json_volume_spec(doc, &v, err, sizeof(err)), 0);
	assert_string_equal(v.name, "ds1");
	assert_string_equal(v.pool, "p1");
	assert_true(v.quota_bytes == 2 * TIB);
	assert_int_equal(v.manual_mibps, 0);
	json_decref(doc);

	doc = parse_ok("{\"pool\": \"p2\", \"limit_mibps\": 300}");
	assert_int_equal(admin__json_volume_patch(doc, &vp, err, sizeof(err)),
			 0);
	assert_true(vp.has_pool && vp.has_limit && !vp.has_quota);
	assert_string_equal(vp.pool, "p2");
	assert_int_equal(vp.limit_mibps, 300);
	json_decref(doc);

	doc = parse_ok("{\"quota_bytes\": null}");
	assert_int_equal(admin__json_volume_patch(doc, &vp, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "'quota_bytes' must be a whole number"));
	json_decref(doc);
}

static void test_caps_patch_converts_published_units(void **state)
{
	struct traffic_caps caps;
	char err[300];
	json_t *doc;

	(void)state;
	traffic_caps_default(&caps);
	doc = parse_ok("{\"flow_mibps\": 2148, \"flow_iops\": 76000, "
		       "\"scale\": 0.03125, \"host_contention\": 0.136, "
		       "\"burst_ms\": 20}");
	assert_int_equal(admin__json_caps_patch(doc, &caps, err, sizeof(err)),
			 0);
	assert_true(caps.flow_bytes_per_s == 2148 * MIB);
	assert_true(caps.flow_ops_per_s == 76000);
	assert_true(caps.scale == 0.03125);
	assert_true(caps.host_contention == 0.136);
	assert_int_equal(caps.burst_ms, 20);
	assert_true(caps.host_bytes_per_s == 0); /* not given: unchanged */
	json_decref(doc);

	doc = parse_ok("{\"scale\": 0}");
	assert_int_equal(admin__json_caps_patch(doc, &caps, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "'scale' must be above 0"));
	json_decref(doc);
	doc = parse_ok("{\"burst_ms\": 0}");
	assert_int_equal(admin__json_caps_patch(doc, &caps, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "'burst_ms' must be 1 to 60000"));
	json_decref(doc);
	doc = parse_ok("{\"host_mibps\": \"fast\"}");
	assert_int_equal(admin__json_caps_patch(doc, &caps, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "'host_mibps' must be a number"));
	json_decref(doc);
}

/* A view with one Premium pool of 4 TiB holding ds1 (1 TiB, 512 GiB used)
 * and ds2 outside any pool. */
struct view_fixture {
	struct admin_view view;
	struct traffic_volume_stats tv;
};

static void view_build(struct view_fixture *fx)
{
	struct admin_view *v = &fx->view;
	struct pool *p;
	struct pool_volume *pv;

	memset(fx, 0, sizeof(*fx));
	v->state = calloc(1, sizeof(*v->state));
	v->limits = calloc(1, sizeof(*v->limits));
	v->volumes = calloc(2, sizeof(*v->volumes));
	assert_non_null(v->state);
	assert_non_null(v->limits);
	assert_non_null(v->volumes);
	p = &v->state->pools[v->state->npools++];
	strcpy(p->name, "p1");
	p->level = POOL_LEVEL_PREMIUM;
	p->size_tib = 4;
	pv = &v->state->volumes[v->state->nvolumes++];
	strcpy(pv->name, "ds1");
	strcpy(pv->pool, "p1");
	pv->quota_bytes = TIB;
	pool_state_limits(v->state, v->limits);
	v->caps.scale = 1;
	v->config.usage_alarm_percent = 80;
	v->config.overallocation_alarm_percent = 150;
	strcpy(fx->tv.name, "ds1");
	strcpy(fx->tv.pool, "p1");
	fx->tv.counters.ops[TRAFFIC_OP_READ] = 3;
	fx->tv.counters.bytes[TRAFFIC_OP_READ] = 3 * 65536;
	fx->tv.counters.done[TRAFFIC_OP_READ] = 3;
	fx->tv.counters.latency_ns[TRAFFIC_OP_READ] = 1500000;
	fx->tv.counters.limited = 1;
	strcpy(v->volumes[0].name, "ds1");
	v->volumes[0].pooled = pv;
	v->volumes[0].limit_bytes_per_s =
		v->limits->volumes[0].limit_bytes_per_s;
	v->volumes[0].used_known = true;
	v->volumes[0].used_bytes = TIB / 2;
	v->volumes[0].traffic = &fx->tv;
	strcpy(v->volumes[1].name, "ds2");
	v->nvolumes = 2;
}

static void view_free(struct view_fixture *fx)
{
	free(fx->view.volumes);
	free(fx->view.limits);
	free(fx->view.state);
}

static void assert_json(json_t *doc, const char *expected)
{
	char *text;

	assert_non_null(doc);
	text = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS |
				       JSON_REAL_PRECISION(10));
	assert_non_null(text);
	if (strcmp(text, expected)) {
		fail_msg("got      %s\nexpected %s", text, expected);
	}
	free(text);
	json_decref(doc);
}

static void test_pool_json_sums_its_volumes(void **state)
{
	struct view_fixture fx;

	(void)state;
	view_build(&fx);
	assert_json(
		admin__json_pool(&fx.view, &fx.view.state->pools[0]),
		"{\"allocated_bytes\":1099511627776,"
		"\"allocated_throughput_bytes_per_s\":67108864,"
		"\"counters\":{\"limit_reached\":0,"
		"\"other\":{\"bytes\":0,\"done\":0,\"latency_ns\":0,\"ops\":0},"
		"\"read\":{\"bytes\":0,\"done\":0,\"latency_ns\":0,\"ops\":0},"
		"\"write\":{\"bytes\":0,\"done\":0,\"latency_ns\":0,\"ops\":0}}"
		","
		"\"level\":\"Premium\",\"name\":\"p1\",\"purchased_mibps\":0,"
		"\"qos\":\"auto\",\"size_bytes\":4398046511104,\"size_tib\":4,"
		"\"throughput_mibps\":256,\"used_bytes\":549755813888,"
		"\"volumes\":[\"ds1\"]}");
	view_free(&fx);
}

static void test_volume_json_pooled_and_not(void **state)
{
	struct view_fixture fx;

	(void)state;
	view_build(&fx);
	assert_json(
		admin__json_volume(&fx.view, &fx.view.volumes[0]),
		"{\"consumed_percent\":50.0,\"counters\":{\"limit_reached\":1,"
		"\"other\":{\"bytes\":0,\"done\":0,\"latency_ns\":0,\"ops\":0},"
		"\"read\":{\"bytes\":196608,\"done\":3,\"latency_ns\":1500000,"
		"\"ops\":3},"
		"\"write\":{\"bytes\":0,\"done\":0,\"latency_ns\":0,\"ops\":0}}"
		","
		"\"level\":\"Premium\",\"limit_bytes_per_s\":67108864,"
		"\"limit_mibps\":null,\"name\":\"ds1\",\"path\":null,"
		"\"pool\":\"p1\",\"provisioned_bytes\":null,"
		"\"quota_bytes\":1099511627776,"
		"\"traffic_limit_bytes_per_s\":0,\"used_bytes\":549755813888}");
	assert_json(
		admin__json_volume(&fx.view, &fx.view.volumes[1]),
		"{\"consumed_percent\":null,\"counters\":{\"limit_reached\":0,"
		"\"other\":{\"bytes\":0,\"done\":0,\"latency_ns\":0,\"ops\":0},"
		"\"read\":{\"bytes\":0,\"done\":0,\"latency_ns\":0,\"ops\":0},"
		"\"write\":{\"bytes\":0,\"done\":0,\"latency_ns\":0,\"ops\":0}}"
		","
		"\"level\":null,\"limit_bytes_per_s\":0,\"limit_mibps\":null,"
		"\"name\":\"ds2\",\"path\":null,\"pool\":null,"
		"\"provisioned_bytes\":null,\"quota_bytes\":null,"
		"\"traffic_limit_bytes_per_s\":0,\"used_bytes\":null}");
	view_free(&fx);
}

static void test_caps_json_in_published_units(void **state)
{
	struct traffic_caps caps;

	(void)state;
	traffic_caps_default(&caps);
	caps.flow_bytes_per_s = 2148 * MIB;
	caps.flow_ops_per_s = 76000;
	assert_json(admin__json_caps(&caps),
		    "{\"burst_ms\":10,\"flow_iops\":76000,"
		    "\"flow_mibps\":2148.0,\"host_contention\":0.0,"
		    "\"host_iops\":0,\"host_mibps\":0.0,\"scale\":1.0,"
		    "\"volume_contention\":0.0,\"volume_iops\":0}");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_refuses_what_is_not_one_object),
		cmocka_unit_test(test_pool_spec_reads_fields_and_qos_defaults),
		cmocka_unit_test(test_pool_spec_refuses_bad_fields),
		cmocka_unit_test(test_pool_patch_says_which_fields_it_sets),
		cmocka_unit_test(test_volume_bodies),
		cmocka_unit_test(test_caps_patch_converts_published_units),
		cmocka_unit_test(test_pool_json_sums_its_volumes),
		cmocka_unit_test(test_volume_json_pooled_and_not),
		cmocka_unit_test(test_caps_json_in_published_units),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
