// SPDX-License-Identifier: Apache-2.0
/*
 * test_admin_changes: the admin API keeps its changes over the config
 * (nfsd/admin/changes.c, api.c): every accepted change rewrites
 * admin-state.json before the reply, a refused one does not, GET /changes
 * shows the overlay, DELETE /changes brings the config back live (and the
 * ledger records it), and a change that cannot be saved says so.
 */
#include "nfsd/overlay/overlay.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/lib/admin_fixture.h"
#include "nfsd/pool/ledger.h"

struct fixture {
	struct admin_fixture *fx;
	struct overlay_store *store;
	char path[160];
	struct overlay ov;
	char err[512];
};

/* The config: p1, Premium 4 TiB, with ds1 (1 TiB); default caps. */
static void base_load(struct fixture *f)
{
	struct pool_state *st = calloc(1, sizeof(*st));
	struct traffic_caps caps;

	assert_non_null(st);
	st->npools = 1;
	strcpy(st->pools[0].name, "p1");
	st->pools[0].level = POOL_LEVEL_PREMIUM;
	st->pools[0].size_tib = 4;
	st->nvolumes = 1;
	strcpy(st->volumes[0].name, "ds1");
	strcpy(st->volumes[0].pool, "p1");
	st->volumes[0].quota_bytes = POOL_TIB_BYTES;
	assert_int_equal(pool_registry_load(f->fx->reg, st, NULL, NULL, 0), 0);
	traffic_caps_get(f->fx->traffic, &caps);
	overlay_store_base_set(f->store, st, &caps);
	free(st);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->fx = admin_fixture_new();
	snprintf(f->path, sizeof(f->path), "%s/%s", f->fx->dir,
		 OVERLAY_FILE_NAME);
	assert_int_equal(overlay_store_new(f->path, &f->store), 0);
	base_load(f);
	f->fx->api.ctx.changes = f->store;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	admin_fixture_free(f->fx);
	overlay_store_free(f->store);
	free(f);
	return 0;
}

/* The file as it is now. */
static int file_read(struct fixture *f)
{
	return overlay_file_read(f->path, &f->ov, f->err, sizeof(f->err));
}

static void test_every_change_is_saved_before_the_reply(void **state)
{
	struct fixture *f = *state;
	json_t *doc;

	assert_int_equal(file_read(f), -ENOENT);
	assert_int_equal(admin_fixture_call(f->fx, "POST", "/pools",
					    "{\"name\": \"p9\", \"level\": "
					    "\"ultra\", \"size_tib\": 2}",
					    NULL),
			 201);
	assert_int_equal(file_read(f), 0);
	assert_int_equal(f->ov.npools, 1);
	assert_string_equal(f->ov.pools[0].pool.name, "p9");
	assert_int_equal(f->ov.pools[0].change, OVERLAY_CREATED);
	assert_int_equal(admin_fixture_call(f->fx, "PATCH", "/volumes/ds1",
					    "{\"quota_bytes\": 2199023255552}",
					    NULL),
			 200);
	assert_int_equal(admin_fixture_call(f->fx, "PATCH", "/caps",
					    "{\"volume_iops\": 5000}", NULL),
			 200);
	assert_int_equal(file_read(f), 0);
	assert_int_equal(f->ov.nvolumes, 1);
	assert_int_equal(f->ov.volumes[0].fields, OVERLAY_VOLUME_QUOTA);
	assert_int_equal(f->ov.caps_fields, OVERLAY_CAPS_VOLUME_OPS);
	/* A refused change leaves the file as it was. */
	assert_int_equal(admin_fixture_call(f->fx, "PATCH", "/pools/p9",
					    "{\"size_tib\": 0}", NULL),
			 400);
	assert_int_equal(file_read(f), 0);
	assert_int_equal(f->ov.pools[0].pool.size_tib, 2);
	assert_int_equal(
		admin_fixture_call(f->fx, "GET", "/changes", NULL, &doc), 200);
	assert_string_equal(json_string_value(json_object_get(doc, "file")),
			    f->path);
	assert_int_equal(json_array_size(json_object_get(doc, "pools")), 1);
	json_decref(doc);
}

static void test_delete_changes_brings_the_config_back(void **state)
{
	struct fixture *f = *state;
	struct pool_event *ev;
	struct traffic_caps caps;
	json_t *doc;
	size_t n;

	assert_int_equal(admin_fixture_call(f->fx, "POST", "/pools",
					    "{\"name\": \"p9\", \"level\": "
					    "\"ultra\", \"size_tib\": 2}",
					    NULL),
			 201);
	assert_int_equal(admin_fixture_call(f->fx, "PATCH", "/caps",
					    "{\"volume_iops\": 5000}", NULL),
			 200);
	assert_int_equal(
		admin_fixture_call(f->fx, "DELETE", "/changes", NULL, NULL),
		204);
	assert_int_equal(
		admin_fixture_call(f->fx, "GET", "/pools/p9", NULL, NULL), 404);
	traffic_caps_get(f->fx->traffic, &caps);
	assert_int_equal(caps.volume_ops_per_s, 0);
	assert_int_equal(file_read(f), 0);
	assert_true(overlay_empty(&f->ov));
	assert_int_equal(
		admin_fixture_call(f->fx, "GET", "/changes", NULL, &doc), 200);
	assert_int_equal(json_array_size(json_object_get(doc, "pools")), 0);
	json_decref(doc);
	ev = admin_fixture_events(f->fx, &n);
	assert_true(n >= 2);
	assert_string_equal(ev[n - 1].pool, "p9");
	assert_int_equal(ev[n - 1].type, POOL_EVENT_DELETED);
	free(ev);
}

static void test_a_change_that_cannot_be_saved_says_so(void **state)
{
	struct fixture *f = *state;
	struct overlay_store *bad;

	assert_int_equal(
		overlay_store_new("/nonexistent-dsnfs/admin-state.json", &bad),
		0);
	f->fx->api.ctx.changes = bad;
	assert_int_equal(admin_fixture_call(f->fx, "POST", "/pools",
					    "{\"name\": \"p9\", \"level\": "
					    "\"ultra\", \"size_tib\": 2}",
					    NULL),
			 500);
	assert_non_null(strstr(f->fx->error, "changed, but not saved: "
					     "/nonexistent-dsnfs/"
					     "admin-state.json.tmp: open: "));
	assert_non_null(strstr(f->fx->error, "live until the next start"));
	f->fx->api.ctx.changes = f->store;
	overlay_store_free(bad);
}

static void test_changes_without_a_store_is_404(void **state)
{
	struct fixture *f = *state;

	f->fx->api.ctx.changes = NULL;
	assert_int_equal(
		admin_fixture_call(f->fx, "GET", "/changes", NULL, NULL), 404);
	assert_int_equal(
		admin_fixture_call(f->fx, "PUT", "/changes", "{}", NULL), 405);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_every_change_is_saved_before_the_reply, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_delete_changes_brings_the_config_back, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_a_change_that_cannot_be_saved_says_so, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_changes_without_a_store_is_404, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
