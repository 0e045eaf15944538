// SPDX-License-Identifier: Apache-2.0
/*
 * test_admin_api: the admin API's resources against a live registry,
 * ledger and traffic object, without HTTP (nfsd/admin/api.c and the
 * resources): status codes, errors naming the rule, changes that reach
 * the ledger and the traffic buckets, PATCHes applied in the order that
 * works or not at all.
 */
#include "tests/lib/admin_fixture.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define MIB POOL_MIB_BYTES
#define GIB (UINT64_C(1) << 30)
#define TIB POOL_TIB_BYTES

static int setup(void **state)
{
	*state = admin_fixture_new();
	return 0;
}

static int teardown(void **state)
{
	admin_fixture_free(*state);
	return 0;
}

static void assert_error_says(const struct admin_fixture *fx, const char *why)
{
	if (!strstr(fx->error, why)) {
		fail_msg("error '%s' does not say '%s'", fx->error, why);
	}
}

static json_int_t int_at(const json_t *doc, const char *key)
{
	const json_t *v = json_object_get(doc, key);

	assert_true(json_is_integer(v));
	return json_integer_value(v);
}

static const char *str_at(const json_t *doc, const char *key)
{
	const json_t *v = json_object_get(doc, key);

	assert_true(json_is_string(v));
	return json_string_value(v);
}

/* The traffic module's QoS limit of @volume, bytes/s (0: none). */
static uint64_t traffic_limit(struct admin_fixture *fx, const char *volume)
{
	struct traffic_stats st;
	uint64_t limit = UINT64_MAX;

	assert_int_equal(traffic_stats_get(fx->traffic, traffic_now_ns(), &st),
			 0);
	for (size_t i = 0; i < st.nvolumes; i++) {
		if (!strcmp(st.volumes[i].name, volume)) {
			limit = st.volumes[i].limit_bytes_per_s;
		}
	}
	traffic_stats_fini(&st);
	return limit == UINT64_MAX ? 0 : limit;
}

static void create_pool(struct admin_fixture *fx, const char *body)
{
	assert_int_equal(admin_fixture_call(fx, "POST", "/pools", body, NULL),
			 201);
}

static void test_pool_create_get_list(void **state)
{
	struct admin_fixture *fx = *state;
	struct pool_event *ev;
	json_t *doc;
	size_t n;

	assert_int_equal(admin_fixture_call(fx, "POST", "/pools",
					    "{\"name\": \"p1\", \"level\": "
					    "\"premium\", \"size_tib\": 4}",
					    &doc),
			 201);
	assert_string_equal(fx->reply.location, "/pools/p1");
	assert_string_equal(str_at(doc, "level"), "Premium");
	assert_int_equal(int_at(doc, "throughput_mibps"), 256);
	json_decref(doc);

	assert_int_equal(admin_fixture_call(fx, "GET", "/pools", NULL, &doc),
			 200);
	assert_int_equal(json_array_size(json_object_get(doc, "pools")), 1);
	json_decref(doc);
	assert_int_equal(
		admin_fixture_call(fx, "GET", "/pools/p1/", NULL, &doc), 200);
	assert_string_equal(str_at(doc, "name"), "p1");
	json_decref(doc);
	assert_int_equal(admin_fixture_call(fx, "GET", "/pools/p9", NULL, NULL),
			 404);
	assert_error_says(fx, "pool 'p9' does not exist");

	ev = admin_fixture_events(fx, &n);
	assert_int_equal(n, 1);
	assert_int_equal(ev[0].type, POOL_EVENT_CREATED);
	assert_string_equal(ev[0].pool, "p1");
	assert_int_equal(ev[0].level, POOL_LEVEL_PREMIUM);
	assert_int_equal(ev[0].size_tib, 4);
	free(ev);
}

static void test_routing_and_body_errors(void **state)
{
	struct admin_fixture *fx = *state;

	create_pool(fx, "{\"name\": \"p1\", \"level\": \"ultra\", "
			"\"size_tib\": 2}");
	assert_int_equal(admin_fixture_call(fx, "POST", "/pools",
					    "{\"name\": \"p1\", \"level\": "
					    "\"ultra\", \"size_tib\": 2}",
					    NULL),
			 409);
	assert_error_says(fx, "pool p1 already exists");
	assert_int_equal(admin_fixture_call(fx, "POST", "/pools",
					    "{\"name\": \"p2\", \"level\": "
					    "\"ultra\", \"size_tib\": 0}",
					    NULL),
			 400);
	assert_error_says(fx, "below the 1 TiB minimum");
	assert_int_equal(admin_fixture_call(fx, "POST", "/pools",
					    "{\"name\": \"p2\",", NULL),
			 400);
	assert_error_says(fx, "body: line 1");
	/* The parser's error quotes bytes that are not UTF-8 (the fuzzer's
	 * find): still a 400 with its error, those bytes as '?'. */
	assert_int_equal(admin_fixture_call(fx, "POST", "/replications",
					    "{ \"hc\\\xd3\x91n-\"", NULL),
			 400);
	assert_error_says(fx, "body: ");
	assert_non_null(strchr(fx->error, '?'));
	assert_int_equal(admin_fixture_call(fx, "PUT", "/pools", "{}", NULL),
			 405);
	assert_string_equal(fx->reply.allow, "GET, POST");
	assert_int_equal(
		admin_fixture_call(fx, "POST", "/pools/p1", "{}", NULL), 405);
	assert_string_equal(fx->reply.allow, "GET, PATCH, DELETE");
	assert_int_equal(admin_fixture_call(fx, "GET", "/nothing", NULL, NULL),
			 404);
	assert_int_equal(
		admin_fixture_call(fx, "GET", "/pools/p1/x", NULL, NULL), 404);
	assert_int_equal(admin_fixture_call(fx, "GET", "pools", NULL, NULL),
			 404);
	assert_int_equal(admin_fixture_call(fx, "GET", "/pools", "{}", NULL),
			 400);
	assert_error_says(fx, "GET takes no body");

	/* A body must say it is JSON (no cross-site form posts). */
	admin__reply_fini(&fx->reply);
	admin__api_handle(&fx->api, "POST", "/pools",
			  "application/x-www-form-urlencoded", "{}", 2,
			  &fx->reply);
	assert_int_equal(fx->reply.status, 415);
	admin__reply_fini(&fx->reply);
	admin__api_handle(&fx->api, "PATCH", "/pools/p1",
			  "application/json; charset=utf-8",
			  "{\"size_tib\": 3}", 15, &fx->reply);
	assert_int_equal(fx->reply.status, 200);
}

static void test_patch_finds_the_order_that_works(void **state)
{
	struct admin_fixture *fx = *state;
	size_t before, after;
	json_t *doc;

	create_pool(fx, "{\"name\": \"p1\", \"level\": \"ultra\", "
			"\"size_tib\": 4, \"qos\": \"manual\"}");
	assert_int_equal(admin_fixture_call(fx, "POST", "/volumes",
					    "{\"name\": \"ds1\", \"pool\": "
					    "\"p1\", \"quota_bytes\": "
					    "1099511627776, \"limit_mibps\": "
					    "400}",
					    NULL),
			 201);
	/* Premium at 4 TiB (256 MiB/s) cannot hold ds1's 400 MiB/s: the
	 * pool must grow first, though "level" comes first. */
	fx->now_s += 3600;
	assert_int_equal(admin_fixture_call(fx, "PATCH", "/pools/p1",
					    "{\"level\": \"premium\", "
					    "\"size_tib\": 8}",
					    &doc),
			 200);
	assert_string_equal(str_at(doc, "level"), "Premium");
	assert_int_equal(int_at(doc, "size_tib"), 8);
	json_decref(doc);
	free(admin_fixture_events(fx, &before));
	assert_int_equal(before, 3); /* created, resized, level-changed */

	/* No order reaches Standard: 8 TiB x 16 = 128 MiB/s < 400. */
	assert_int_equal(admin_fixture_call(fx, "PATCH", "/pools/p1",
					    "{\"level\": \"standard\", "
					    "\"size_tib\": 16}",
					    NULL),
			 400);
	assert_error_says(fx, "manual volume limits sum to 400 MiB/s, "
			      "more than the pool's 128 MiB/s");
	free(admin_fixture_events(fx, &after));
	assert_int_equal(after, before);
	assert_int_equal(admin_fixture_call(fx, "GET", "/pools/p1", NULL, &doc),
			 200);
	assert_int_equal(int_at(doc, "size_tib"), 8);
	json_decref(doc);
	assert_int_equal(admin_fixture_call(fx, "PATCH", "/pools/p9",
					    "{\"size_tib\": 8}", NULL),
			 404);
}

static void test_flexible_pool_buys_throughput(void **state)
{
	struct admin_fixture *fx = *state;
	json_t *doc;

	create_pool(fx, "{\"name\": \"p1\", \"level\": \"standard\", "
			"\"size_tib\": 2}");
	assert_int_equal(admin_fixture_call(fx, "PATCH", "/pools/p1",
					    "{\"purchased_mibps\": 256, "
					    "\"level\": \"flexible\", \"qos\": "
					    "\"manual\"}",
					    &doc),
			 200);
	assert_string_equal(str_at(doc, "level"), "Flexible");
	assert_string_equal(str_at(doc, "qos"), "manual");
	assert_int_equal(int_at(doc, "throughput_mibps"), 128 + 256);
	json_decref(doc);
	assert_int_equal(admin_fixture_call(fx, "PATCH", "/pools/p1",
					    "{\"qos\": \"auto\"}", NULL),
			 400);
	assert_error_says(fx, "only from auto to manual");
}

static void test_volumes_change_limits_in_traffic(void **state)
{
	struct admin_fixture *fx = *state;
	struct pool_event *ev;
	json_t *doc;
	size_t n;

	assert_int_equal(admin_fixture_call(fx, "GET", "/volumes", NULL, &doc),
			 200);
	assert_int_equal(json_array_size(json_object_get(doc, "volumes")), 2);
	json_decref(doc);
	create_pool(fx, "{\"name\": \"p1\", \"level\": \"premium\", "
			"\"size_tib\": 4}");
	create_pool(fx, "{\"name\": \"p2\", \"level\": \"ultra\", "
			"\"size_tib\": 4}");
	assert_int_equal(admin_fixture_call(fx, "POST", "/volumes",
					    "{\"name\": \"nods\", \"pool\": "
					    "\"p1\", \"quota_bytes\": 1}",
					    NULL),
			 400);
	assert_error_says(fx, "no datastore of that name");
	assert_int_equal(admin_fixture_call(fx, "POST", "/volumes",
					    "{\"name\": \"ds1\", \"pool\": "
					    "\"p7\", \"quota_bytes\": 1}",
					    NULL),
			 400);
	assert_error_says(fx, "pool 'p7' does not exist");
	assert_int_equal(admin_fixture_call(fx, "POST", "/volumes",
					    "{\"name\": \"ds1\", \"pool\": "
					    "\"p1\", \"quota_bytes\": "
					    "1099511627776}",
					    &doc),
			 201);
	assert_string_equal(fx->reply.location, "/volumes/ds1");
	assert_string_equal(str_at(doc, "path"), "/ds1");
	json_decref(doc);
	assert_true(traffic_limit(fx, "ds1") == 64 * MIB);

	assert_int_equal(admin_fixture_call(fx, "PATCH", "/volumes/ds1",
					    "{\"quota_bytes\": 2199023255552}",
					    NULL),
			 200);
	assert_true(traffic_limit(fx, "ds1") == 128 * MIB);
	assert_int_equal(admin_fixture_call(fx, "PATCH", "/volumes/ds1",
					    "{\"pool\": \"p2\"}", &doc),
			 200);
	assert_string_equal(str_at(doc, "level"), "Ultra");
	json_decref(doc);
	assert_true(traffic_limit(fx, "ds1") == 256 * MIB);
	assert_int_equal(admin_fixture_call(fx, "PATCH", "/volumes/ds1",
					    "{\"pool\": \"p1\", "
					    "\"limit_mibps\": 5}",
					    NULL),
			 400);
	assert_error_says(fx, "auto QoS");
	assert_int_equal(admin_fixture_call(fx, "PATCH", "/volumes/ds1",
					    "{\"quota_bytes\": "
					    "8796093022208}",
					    NULL),
			 400);
	assert_error_says(fx, "volume quotas sum to 8 TiB");
	assert_int_equal(admin_fixture_call(fx, "PATCH", "/volumes/ds2",
					    "{\"quota_bytes\": 1}", NULL),
			 404);
	assert_error_says(fx, "not in a pool");

	assert_int_equal(
		admin_fixture_call(fx, "DELETE", "/pools/p2", NULL, NULL), 409);
	assert_error_says(fx, "still holds 1 volume");
	assert_int_equal(
		admin_fixture_call(fx, "DELETE", "/volumes/ds1", NULL, NULL),
		204);
	assert_int_equal(fx->reply.len, 0);
	assert_true(traffic_limit(fx, "ds1") == 0);
	assert_int_equal(
		admin_fixture_call(fx, "DELETE", "/volumes/ds1", NULL, NULL),
		404);
	assert_int_equal(
		admin_fixture_call(fx, "DELETE", "/pools/p2", NULL, NULL), 204);
	ev = admin_fixture_events(fx, &n);
	assert_int_equal(n, 3);
	assert_int_equal(ev[2].type, POOL_EVENT_DELETED);
	assert_string_equal(ev[2].pool, "p2");
	free(ev);
}

static void test_caps_change_live(void **state)
{
	struct admin_fixture *fx = *state;
	struct traffic_caps caps;
	json_t *doc;

	assert_int_equal(admin_fixture_call(fx, "PATCH", "/caps",
					    "{\"flow_mibps\": 100, \"scale\": "
					    "0.5}",
					    &doc),
			 200);
	assert_true(json_real_value(json_object_get(doc, "flow_mibps")) ==
		    100.0);
	json_decref(doc);
	traffic_caps_get(fx->traffic, &caps);
	assert_true(caps.flow_bytes_per_s == 100 * MIB);
	assert_true(caps.scale == 0.5);
	assert_int_equal(admin_fixture_call(fx, "PATCH", "/caps",
					    "{\"scale\": 0}", NULL),
			 400);
	traffic_caps_get(fx->traffic, &caps);
	assert_true(caps.scale == 0.5);
}

static void test_flows_hosts_and_metrics(void **state)
{
	struct admin_fixture *fx = *state;
	struct traffic_req req = { .bytes = 4096, .op = TRAFFIC_OP_READ };
	struct traffic_flow *flow;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	const json_t *f;
	int64_t wait;
	json_t *doc;

	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	assert_int_equal(traffic_flow_new(fx->traffic, (struct sockaddr *)&sin,
					  "ds1", 0, &flow),
			 0);
	assert_int_equal(traffic_admit(flow, &req, 0, &wait), TRAFFIC_START);
	traffic_done(flow, &req, 1000000);

	assert_int_equal(admin_fixture_call(fx, "GET", "/flows", NULL, &doc),
			 200);
	f = json_array_get(json_object_get(doc, "flows"), 0);
	assert_string_equal(str_at(f, "host"), "127.0.0.1");
	assert_string_equal(str_at(f, "volume"), "ds1");
	assert_int_equal(
		json_integer_value(json_object_get(
			json_object_get(json_object_get(f, "counters"), "read"),
			"bytes")),
		4096);
	json_decref(doc);
	assert_int_equal(admin_fixture_call(fx, "GET", "/hosts", NULL, &doc),
			 200);
	assert_int_equal(json_array_size(json_object_get(doc, "hosts")), 1);
	json_decref(doc);

	assert_int_equal(admin_fixture_call(fx, "GET", "/metrics", NULL, NULL),
			 200);
	assert_string_equal(fx->reply.content_type,
			    "text/plain; version=0.0.4; charset=utf-8");
	if (!strstr(fx->reply.body, "dsnfs_flow_read_latency_seconds_sum{flow="
				    "\"1\",host=\"127.0.0.1\",volume=\"ds1\"} "
				    "0.001000000\n")) {
		fail_msg("%s", fx->reply.body);
	}
	assert_non_null(strstr(fx->reply.body, "dsnfs_volume_read_bytes_total"
					       "{volume=\"ds1\"} 4096\n"));
	traffic_flow_free(flow);
}

/* A group of /flows by its host and volume (or port): NULL when none. */
static const json_t *flows_group(const json_t *doc, const char *key,
				 const char *volume, int port)
{
	const json_t *g;
	size_t i;

	json_array_foreach(json_object_get(doc, key), i, g)
	{
		if (volume ? !strcmp(str_at(g, "volume"), volume)
			   : json_integer_value(json_object_get(g, "port")) ==
				     port) {
			return g;
		}
	}
	return NULL;
}

/* ESXi's nConnect and shared connections in /flows: the connection from
 * port 800 carries ds1 and ds2 (past SunRPC.MaxConnPerIP), the one from
 * 801 carries ds1 too (nconnect 2 for ds1). */
static void test_flows_groups(void **state)
{
	struct admin_fixture *fx = *state;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct traffic_flow *f[3];
	static const char *const vol[3] = { "ds1", "ds2", "ds1" };
	static const int port[3] = { 800, 800, 801 };
	const json_t *g;
	json_t *doc;

	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	for (int i = 0; i < 3; i++) {
		sin.sin_port = htons(port[i]);
		assert_int_equal(traffic_flow_new(fx->traffic,
						  (struct sockaddr *)&sin,
						  vol[i], 0, &f[i]),
				 0);
	}
	assert_int_equal(admin_fixture_call(fx, "GET", "/flows", NULL, &doc),
			 200);
	assert_int_equal(json_array_size(json_object_get(doc, "flows")), 3);
	g = flows_group(doc, "nconnect", "ds1", 0);
	assert_non_null(g);
	assert_int_equal(json_integer_value(json_object_get(g, "connections")),
			 2);
	g = flows_group(doc, "nconnect", "ds2", 0);
	assert_int_equal(json_integer_value(json_object_get(g, "connections")),
			 1);
	assert_int_equal(json_array_size(json_object_get(doc, "nconnect")), 2);
	g = flows_group(doc, "connections", NULL, 800);
	assert_non_null(g);
	assert_int_equal(json_integer_value(json_object_get(g, "datastores")),
			 2);
	g = flows_group(doc, "connections", NULL, 801);
	assert_int_equal(json_integer_value(json_object_get(g, "datastores")),
			 1);
	assert_string_equal(json_string_value(json_array_get(
				    json_object_get(g, "volumes"), 0)),
			    "ds1");
	json_decref(doc);
	for (int i = 0; i < 3; i++) {
		traffic_flow_free(f[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pool_create_get_list,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_routing_and_body_errors,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_patch_finds_the_order_that_works, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_flexible_pool_buys_throughput, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_volumes_change_limits_in_traffic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_caps_change_live, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_flows_hosts_and_metrics,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_flows_groups, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
