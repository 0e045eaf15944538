// SPDX-License-Identifier: Apache-2.0
/*
 * test_admin_alarms: the datastore scan (thin and thick flat extents,
 * symlinks not followed) and the thin-provisioning alarms: raised and
 * cleared once per crossing, logged once, shown in GET /alarms
 * (nfsd/alarm/dirscan.c, alarm.c).
 */
#include "tests/lib/admin_fixture.h"
#include "nfsd/alarm/alarm.h"
#include "tests/lib/log_capture.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define MIB POOL_MIB_BYTES
#define GIB (UINT64_C(1) << 30)

static int setup(void **state)
{
	log_capture_reset();
	*state = admin_fixture_new();
	return 0;
}

static int teardown(void **state)
{
	admin_fixture_free(*state);
	return 0;
}

static size_t log_count(const char *needle)
{
	size_t n = 0;

	for (const char *p = strstr(log_capture_text(), needle); p;
	     p = strstr(p + 1, needle)) {
		n++;
	}
	return n;
}

static void test_scan_counts_flat_extents(void **state)
{
	struct admin_fixture *fx = *state;
	struct alarm_scan scan;
	char path[256], target[256];

	admin_fixture_file(fx, "ds1/vm1/vm1-flat.vmdk", 2 * GIB, 0);
	admin_fixture_file(fx, "ds1/vm1/vm1.vmdk", 512, 512);
	admin_fixture_file(fx, "ds1/vm2/vm2-flat.vmdk", 64 * 1024, 64 * 1024);
	admin_fixture_file(fx, "ds2/big-flat.vmdk", 8 * GIB, 0);
	/* A link to another datastore's disk is not this one's disk. */
	snprintf(target, sizeof(target), "%s/ds2/big-flat.vmdk", fx->dir);
	snprintf(path, sizeof(path), "%s/ds1/vm1/link-flat.vmdk", fx->dir);
	assert_int_equal(symlink(target, path), 0);
	snprintf(path, sizeof(path), "%s/ds1/ds2link", fx->dir);
	snprintf(target, sizeof(target), "%s/ds2", fx->dir);
	assert_int_equal(symlink(target, path), 0);

	assert_int_equal(alarm_scan_dir(fx->exports[0].dir, &scan), 0);
	assert_int_equal(scan.disks, 2);
	assert_int_equal(scan.thin_disks, 1);
	assert_true(scan.provisioned_bytes == 2 * GIB + 64 * 1024);
	assert_true(scan.thin_provisioned_bytes == 2 * GIB);
	assert_int_equal(scan.files, 3);
	assert_true(scan.allocated_bytes >= 64 * 1024 + 512);
	assert_true(scan.allocated_bytes < 2 * MIB);
	assert_int_equal(alarm_scan_dir("/nonexistent/dsnfs", &scan), -ENOENT);
}

static void test_overallocation_alarm_raised_and_cleared_once(void **state)
{
	struct admin_fixture *fx = *state;
	const json_t *a, *over;
	json_t *doc;

	assert_int_equal(admin_fixture_call(fx, "POST", "/pools",
					    "{\"name\": \"p1\", \"level\": "
					    "\"premium\", \"size_tib\": 1}",
					    NULL),
			 201);
	assert_int_equal(admin_fixture_call(fx, "POST", "/volumes",
					    "{\"name\": \"ds1\", \"pool\": "
					    "\"p1\", \"quota_bytes\": "
					    "1073741824}",
					    NULL),
			 201);
	/* Two thin 1 GiB disks in a 1 GiB datastore: 200% > 150%. */
	admin_fixture_file(fx, "ds1/vm1/vm1-flat.vmdk", GIB, 0);
	admin_fixture_file(fx, "ds1/vm2/vm2-flat.vmdk", GIB, 0);
	alarm_set_scan(fx->api.alarms);
	alarm_set_scan(fx->api.alarms);
	assert_int_equal(log_count("admin: datastore ds1: overallocation "
				   "200.0% of its 1.0 GiB quota crossed the "
				   "150% alarm threshold"),
			 1);
	assert_int_equal(log_count("usage"), 0);

	assert_int_equal(admin_fixture_call(fx, "GET", "/alarms", NULL, &doc),
			 200);
	a = json_array_get(json_object_get(doc, "alarms"), 0);
	assert_string_equal(json_string_value(json_object_get(a, "volume")),
			    "ds1");
	assert_int_equal(json_integer_value(json_object_get(a, "thin_disks")),
			 2);
	over = json_object_get(a, "overallocation");
	assert_true(json_is_true(json_object_get(over, "raised")));
	assert_true(json_real_value(json_object_get(over, "percent")) == 200.0);
	assert_int_equal(
		json_integer_value(json_object_get(over, "threshold_percent")),
		150);
	/* ds2 has no quota: nothing to compare with. */
	a = json_array_get(json_object_get(doc, "alarms"), 1);
	assert_true(json_is_null(json_object_get(
		json_object_get(a, "overallocation"), "percent")));
	json_decref(doc);

	assert_int_equal(admin_fixture_call(fx, "GET", "/metrics", NULL, NULL),
			 200);
	assert_non_null(strstr(fx->reply.body,
			       "dsnfs_datastore_alarm{volume=\"ds1\",alarm="
			       "\"overallocation\"} 1\n"));

	/* A larger quota clears it at the next evaluation, once. */
	assert_int_equal(admin_fixture_call(fx, "PATCH", "/volumes/ds1",
					    "{\"quota_bytes\": 4294967296}",
					    NULL),
			 200);
	assert_int_equal(admin_fixture_call(fx, "GET", "/alarms", NULL, NULL),
			 200);
	assert_int_equal(admin_fixture_call(fx, "GET", "/alarms", NULL, NULL),
			 200);
	assert_int_equal(log_count("admin: datastore ds1: overallocation "
				   "alarm cleared: 50.0%, below 150%"),
			 1);
}

static void test_usage_alarm_follows_the_usage_callback(void **state)
{
	struct admin_fixture *fx = *state;
	json_t *doc;

	assert_int_equal(admin_fixture_call(fx, "POST", "/pools",
					    "{\"name\": \"p1\", \"level\": "
					    "\"ultra\", \"size_tib\": 1}",
					    NULL),
			 201);
	assert_int_equal(admin_fixture_call(fx, "POST", "/volumes",
					    "{\"name\": \"ds2\", \"pool\": "
					    "\"p1\", \"quota_bytes\": "
					    "1073741824}",
					    NULL),
			 201);
	fx->used_set = true;
	fx->used_bytes = 900 * MIB; /* 87.9% > 80% */
	alarm_set_scan(fx->api.alarms);
	assert_int_equal(log_count("admin: datastore ds2: usage 87.9% of its "
				   "1.0 GiB quota crossed the 80% alarm "
				   "threshold"),
			 1);
	assert_int_equal(
		admin_fixture_call(fx, "GET", "/volumes/ds2", NULL, &doc), 200);
	assert_int_equal(json_integer_value(json_object_get(doc, "used_bytes")),
			 900 * MIB);
	json_decref(doc);
	fx->used_bytes = 100 * MIB;
	assert_int_equal(admin_fixture_call(fx, "GET", "/alarms", NULL, NULL),
			 200);
	assert_int_equal(log_count("admin: datastore ds2: usage alarm "
				   "cleared"),
			 1);
}

static void test_alarm_config_keys(void **state)
{
	struct admin_config cfg;
	char err[200];

	(void)state;
	admin_config_default(&cfg);
	assert_int_equal(cfg.usage_alarm_percent, 80);
	assert_int_equal(admin_config_section(&cfg, "admin",
					      "overallocation_alarm_percent",
					      "300", err, sizeof(err)),
			 0);
	assert_int_equal(cfg.overallocation_alarm_percent, 300);
	assert_int_equal(admin_config_section(&cfg, "admin", "alarm_interval_s",
					      "0", err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "alarm_interval_s: a whole number from 1 "
				 "to 86400");
	assert_int_equal(admin_config_section(&cfg, "admin", "colour", "red",
					      err, sizeof(err)),
			 -ENOENT);
	assert_int_equal(admin_config_section(&cfg, "traffic", "scale", "1",
					      err, sizeof(err)),
			 -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_scan_counts_flat_extents,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_overallocation_alarm_raised_and_cleared_once,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_usage_alarm_follows_the_usage_callback, setup,
			teardown),
		cmocka_unit_test(test_alarm_config_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
