// SPDX-License-Identifier: Apache-2.0
/*
 * test_overlay: the admin API's changes over the config
 * (nfsd/overlay/overlay.h): the diff, its JSON round trip, the strict and
 * bounded decoder, the order in which entries are laid over a config and
 * the entries a changed config refuses, the atomic file and the store.
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
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#define TIB POOL_TIB_BYTES

struct fixture {
	struct pool_state base, live, out;
	struct traffic_caps base_caps, live_caps, caps_out;
	struct overlay ov, again;
	char err[512];
	char refused[4][2][512]; /* entry, why */
	size_t nrefused;
	char dir[64];
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	traffic_caps_default(&fx->base_caps);
	fx->live_caps = fx->base_caps;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	char path[128];

	if (fx->dir[0]) {
		snprintf(path, sizeof(path), "%s/%s", fx->dir,
			 OVERLAY_FILE_NAME);
		unlink(path);
		rmdir(fx->dir);
	}
	free(fx);
	return 0;
}

static void add_pool(struct pool_state *st, const char *name,
		     enum pool_level level, uint32_t size_tib,
		     enum pool_qos qos, uint32_t purchased)
{
	struct pool *p = &st->pools[st->npools++];

	memset(p, 0, sizeof(*p));
	strcpy(p->name, name);
	p->level = level;
	p->size_tib = size_tib;
	p->qos = qos;
	p->purchased_mibps = purchased;
}

static void add_volume(struct pool_state *st, const char *name,
		       const char *pool, uint64_t quota, uint32_t manual)
{
	struct pool_volume *v = &st->volumes[st->nvolumes++];

	memset(v, 0, sizeof(*v));
	strcpy(v->name, name);
	strcpy(v->pool, pool);
	v->quota_bytes = quota;
	v->manual_mibps = manual;
}

/* p1 Premium 4 TiB with ds1 (1 TiB); p2 Standard 2 TiB, empty. */
static void base_config(struct fixture *fx)
{
	add_pool(&fx->base, "p1", POOL_LEVEL_PREMIUM, 4, POOL_QOS_AUTO, 0);
	add_pool(&fx->base, "p2", POOL_LEVEL_STANDARD, 2, POOL_QOS_AUTO, 0);
	add_volume(&fx->base, "ds1", "p1", TIB, 0);
	assert_int_equal(pool_state_check(&fx->base, NULL, 0), 0);
}

static void refused_cb(void *arg, const char *entry, const char *why)
{
	struct fixture *fx = arg;

	assert_true(fx->nrefused < 4);
	snprintf(fx->refused[fx->nrefused][0], 512, "%s", entry);
	snprintf(fx->refused[fx->nrefused][1], 512, "%s", why);
	fx->nrefused++;
}

/* Lays fx->ov over fx->base; returns how many entries were dropped. */
static size_t apply(struct fixture *fx, const struct export_table *exports)
{
	size_t dropped = 99;

	assert_int_equal(overlay_apply(&fx->ov, &fx->base, &fx->base_caps,
				       exports, &fx->out, &fx->caps_out,
				       refused_cb, fx, &dropped),
			 0);
	assert_int_equal(dropped, fx->nrefused);
	assert_int_equal(pool_state_check(&fx->out, fx->err, sizeof(fx->err)),
			 0);
	return dropped;
}

/* Every kind of change over the base: p1 resized and made Ultra, p2
 * deleted, p3 created (Flexible, bought throughput), ds1 moved to p3,
 * ds2 put in p1, the caps' scale and flow cap changed. */
static void live_changed(struct fixture *fx)
{
	add_pool(&fx->live, "p1", POOL_LEVEL_ULTRA, 8, POOL_QOS_AUTO, 0);
	add_pool(&fx->live, "p3", POOL_LEVEL_FLEXIBLE, 2, POOL_QOS_MANUAL, 256);
	add_volume(&fx->live, "ds1", "p3", TIB, 100);
	add_volume(&fx->live, "ds2", "p1", 2 * TIB, 0);
	assert_int_equal(pool_state_check(&fx->live, NULL, 0), 0);
	fx->live_caps.scale = 0.03125;
	fx->live_caps.flow_bytes_per_s = 2148 * POOL_MIB_BYTES;
}

static void test_overlay_diff_of_the_config_is_empty(void **state)
{
	struct fixture *fx = *state;

	base_config(fx);
	overlay_diff(&fx->base, &fx->base_caps, &fx->base, &fx->base_caps,
		     &fx->ov);
	assert_true(overlay_empty(&fx->ov));
}

static void test_overlay_diff_names_only_what_changed(void **state)
{
	struct fixture *fx = *state;

	base_config(fx);
	live_changed(fx);
	overlay_diff(&fx->base, &fx->base_caps, &fx->live, &fx->live_caps,
		     &fx->ov);
	assert_int_equal(fx->ov.npools, 3);
	assert_string_equal(fx->ov.pools[0].pool.name, "p1");
	assert_int_equal(fx->ov.pools[0].change, OVERLAY_CHANGED);
	assert_int_equal(fx->ov.pools[0].fields,
			 OVERLAY_POOL_LEVEL | OVERLAY_POOL_SIZE);
	assert_string_equal(fx->ov.pools[1].pool.name, "p3");
	assert_int_equal(fx->ov.pools[1].change, OVERLAY_CREATED);
	assert_string_equal(fx->ov.pools[2].pool.name, "p2");
	assert_int_equal(fx->ov.pools[2].change, OVERLAY_DELETED);
	assert_int_equal(fx->ov.nvolumes, 2);
	assert_int_equal(fx->ov.volumes[0].fields,
			 OVERLAY_VOLUME_POOL | OVERLAY_VOLUME_LIMIT);
	assert_int_equal(fx->ov.volumes[1].change, OVERLAY_CREATED);
	assert_int_equal(fx->ov.caps_fields,
			 OVERLAY_CAPS_SCALE | OVERLAY_CAPS_FLOW_BYTES);
}

static void test_overlay_round_trips_through_json(void **state)
{
	struct fixture *fx = *state;
	char *t1, *t2;
	size_t l1, l2;

	base_config(fx);
	live_changed(fx);
	fx->live_caps.host_contention = 0.1; /* not exact in binary */
	overlay_diff(&fx->base, &fx->base_caps, &fx->live, &fx->live_caps,
		     &fx->ov);
	assert_int_equal(overlay_encode(&fx->ov, &t1, &l1), 0);
	assert_int_equal(
		overlay_decode(t1, l1, &fx->again, fx->err, sizeof(fx->err)),
		0);
	assert_int_equal(overlay_encode(&fx->again, &t2, &l2), 0);
	assert_int_equal(l1, l2);
	assert_memory_equal(t1, t2, l1);
	assert_int_equal(fx->again.npools, 3);
	assert_int_equal(fx->again.pools[1].pool.purchased_mibps, 256);
	assert_int_equal(fx->again.volumes[1].volume.quota_bytes, 2 * TIB);
	assert_true(fx->again.caps.host_contention == 0.1);
	assert_true(fx->again.caps.scale == 0.03125);
	free(t1);
	free(t2);
}

static void test_overlay_over_the_config_gives_the_live_state(void **state)
{
	struct fixture *fx = *state;

	base_config(fx);
	live_changed(fx);
	overlay_diff(&fx->base, &fx->base_caps, &fx->live, &fx->live_caps,
		     &fx->ov);
	assert_int_equal(apply(fx, NULL), 0);
	overlay_diff(&fx->live, &fx->live_caps, &fx->out, &fx->caps_out,
		     &fx->again);
	assert_true(overlay_empty(&fx->again));
}

/* One decoder refusal: @doc gives -EINVAL (or @err) naming @why. */
static void refuse(struct fixture *fx, const char *doc, int err,
		   const char *why)
{
	int rc = overlay_decode(doc, strlen(doc), &fx->ov, fx->err,
				sizeof(fx->err));

	if (rc != err || !strstr(fx->err, why)) {
		fail_msg("%s: got %d '%s', want %d '%s'", doc, rc, fx->err, err,
			 why);
	}
	assert_true(overlay_empty(&fx->ov));
}

#define HEAD "{\"format\": \"dsnfsd-admin-state\", \"version\": 1, "

static void test_overlay_decoder_refuses_corrupt_input(void **state)
{
	struct fixture *fx = *state;

	refuse(fx, "", -EINVAL, "line 1 column 0");
	refuse(fx, HEAD "\"pools\": [", -EINVAL, "line 1");
	refuse(fx, "[]", -EINVAL, "a JSON object is expected");
	refuse(fx,
	       "{\"format\": \"x\", \"version\": 1, \"pools\": [], "
	       "\"volumes\": [], \"caps\": {}}",
	       -EINVAL, "'format' must be \"dsnfsd-admin-state\"");
	refuse(fx,
	       "{\"format\": \"dsnfsd-admin-state\", \"version\": 2, "
	       "\"pools\": [], \"volumes\": [], \"caps\": {}}",
	       -EINVAL, "'version' must be 1");
	refuse(fx,
	       HEAD "\"pools\": [], \"volumes\": [], \"caps\": {}, \"x\": 1}",
	       -EINVAL, "document: unknown field 'x'");
	refuse(fx,
	       HEAD
	       "\"pools\": [], \"pools\": [], \"volumes\": [], \"caps\": {}}",
	       -EINVAL, "duplicate");
	refuse(fx, HEAD "\"volumes\": [], \"caps\": {}}", -EINVAL,
	       "'pools' must be an array");
	refuse(fx, HEAD "\"pools\": [], \"volumes\": []}", -EINVAL,
	       "caps: an object is expected");
	refuse(fx,
	       HEAD "\"pools\": [{\"name\": \"p1\", \"change\": \"created\", "
		    "\"size_tib\": 2}], \"volumes\": [], \"caps\": {}}",
	       -EINVAL, "pools[0]: a created entry needs every field");
	refuse(fx,
	       HEAD "\"pools\": [{\"name\": \"p1\", \"change\": \"changed\"}], "
		    "\"volumes\": [], \"caps\": {}}",
	       -EINVAL, "pools[0]: a changed entry needs a field");
	refuse(fx,
	       HEAD "\"pools\": [], \"volumes\": [{\"name\": \"ds1\", "
		    "\"change\": \"deleted\", \"quota_bytes\": 1}], "
		    "\"caps\": {}}",
	       -EINVAL, "volumes[0]: a deleted entry has no fields");
	refuse(fx,
	       HEAD
	       "\"pools\": [{\"name\": \"a/b\", \"change\": \"deleted\"}], "
	       "\"volumes\": [], \"caps\": {}}",
	       -EINVAL, "pools[0]: 'name' must be a name");
	refuse(fx,
	       HEAD "\"pools\": [{\"name\": \"p1\", \"change\": \"deleted\"}, "
		    "{\"name\": \"p1\", \"change\": \"deleted\"}], "
		    "\"volumes\": [], \"caps\": {}}",
	       -EINVAL, "pools[1] (p1): the name is used twice");
	refuse(fx,
	       HEAD "\"pools\": [{\"name\": \"p1\", \"change\": \"changed\", "
		    "\"size_tib\": -1}], \"volumes\": [], \"caps\": {}}",
	       -EINVAL, "'size_tib' must be a whole number");
	refuse(fx,
	       HEAD "\"pools\": [{\"name\": \"p1\", \"change\": \"changed\", "
		    "\"level\": \"gold\"}], \"volumes\": [], \"caps\": {}}",
	       -EINVAL, "'level' must be standard");
	refuse(fx,
	       HEAD "\"pools\": [{\"name\": \"p1\", \"change\": \"renamed\"}], "
		    "\"volumes\": [], \"caps\": {}}",
	       -EINVAL, "'change' must be created, changed or deleted");
	refuse(fx,
	       HEAD "\"pools\": [], \"volumes\": [], \"caps\": {\"scale\": 0}}",
	       -EINVAL, "caps: 'scale' must be a number above 0");
	refuse(fx,
	       HEAD "\"pools\": [], \"volumes\": [], \"caps\": {\"burst_ms\": "
		    "70000}}",
	       -EINVAL, "'burst_ms' must be a whole number above 0");
	refuse(fx,
	       HEAD
	       "\"pools\": [], \"volumes\": [], \"caps\": {\"flow_ops_per_s\": "
	       "1.5}}",
	       -EINVAL, "'flow_ops_per_s' must be a whole number");
	refuse(fx,
	       HEAD
	       "\"pools\": [], \"volumes\": [], \"caps\": {\"colour\": 1}}",
	       -EINVAL, "caps: unknown field 'colour'");
}

/* The decoder's bounds: entries and bytes. */
static void test_overlay_decoder_is_bounded(void **state)
{
	struct fixture *fx = *state;
	size_t cap = OVERLAY_FILE_MAX_BYTES + 64, used = 0;
	char *doc = malloc(cap);

	assert_non_null(doc);
	used += (size_t)snprintf(doc + used, cap - used, HEAD "\"pools\": [");
	for (int i = 0; i <= OVERLAY_MAX_POOLS; i++) {
		used += (size_t)snprintf(doc + used, cap - used,
					 "%s{\"name\": \"p%d\", \"change\": "
					 "\"deleted\"}",
					 i ? ", " : "", i);
	}
	used += (size_t)snprintf(doc + used, cap - used,
				 "], \"volumes\": [], \"caps\": {}}");
	refuse(fx, doc, -EINVAL, "'pools': 129 entries, more than 128");
	memset(doc, ' ', cap);
	assert_int_equal(overlay_decode(doc, OVERLAY_FILE_MAX_BYTES + 1,
					&fx->ov, fx->err, sizeof(fx->err)),
			 -E2BIG);
	free(doc);
}

/* The config made ds1 3 TiB: ds2's 2 TiB no longer fit in p1's 4. */
static void test_overlay_entry_the_config_refuses_is_dropped(void **state)
{
	struct fixture *fx = *state;

	base_config(fx);
	fx->live = fx->base;
	add_volume(&fx->live, "ds2", "p1", 2 * TIB, 0);
	fx->live.pools[1].size_tib = 3; /* p2 grows: that stays */
	overlay_diff(&fx->base, &fx->base_caps, &fx->live, &fx->live_caps,
		     &fx->ov);
	fx->base.volumes[0].quota_bytes = 3 * TIB;
	assert_int_equal(apply(fx, NULL), 1);
	assert_string_equal(fx->refused[0][0],
			    "volume ds2 (created pool=p1 "
			    "quota_bytes=2199023255552 limit_mibps=0)");
	assert_string_equal(fx->refused[0][1],
			    "pool p1: volume quotas sum to 5 TiB, more than "
			    "the pool's 4 TiB");
	assert_null(pool_state_find_volume(&fx->out, "ds2"));
	assert_int_equal(pool_state_find_pool(&fx->out, "p2")->size_tib, 3);
}

/* Entries are laid over in order, and one refused is tried again after
 * the others: p1 can shrink to 2 TiB only after ds1 shrank, which comes
 * later; ds9's pool does not exist, so ds9 alone is dropped. */
static void test_overlay_refused_entry_is_retried_after_the_rest(void **state)
{
	struct fixture *fx = *state;

	base_config(fx);
	fx->base.volumes[0].quota_bytes = 3 * TIB;
	fx->live = fx->base;
	fx->live.pools[0].size_tib = 2;
	fx->live.volumes[0].quota_bytes = TIB;
	add_volume(&fx->live, "ds9", "p2", TIB, 0);
	overlay_diff(&fx->base, &fx->base_caps, &fx->live, &fx->live_caps,
		     &fx->ov);
	assert_int_equal(apply(fx, NULL), 0);
	assert_int_equal(fx->out.pools[0].size_tib, 2);
	/* Now ds9's pool goes from the config: the whole set is invalid,
	 * one at a time p1 first fails, then passes after ds1. */
	fx->base.npools = 1;
	assert_int_equal(apply(fx, NULL), 1);
	assert_string_equal(fx->refused[0][1],
			    "volume ds9: pool 'p2' does not exist");
	assert_int_equal(fx->out.pools[0].size_tib, 2);
	assert_int_equal(fx->out.volumes[0].quota_bytes, TIB);
}

static void
test_overlay_change_of_what_the_config_dropped_is_dropped(void **state)
{
	struct fixture *fx = *state;
	struct export exports[1];
	struct export_table table = { .exports = exports, .count = 1 };

	memset(exports, 0, sizeof(exports));
	strcpy(exports[0].name, "ds1");
	base_config(fx);
	fx->live = fx->base;
	fx->live.pools[1].size_tib = 5;
	add_volume(&fx->live, "ds2", "p2", TIB, 0);
	overlay_diff(&fx->base, &fx->base_caps, &fx->live, &fx->live_caps,
		     &fx->ov);
	fx->base.npools = 1; /* the config has no p2 any more */
	assert_int_equal(apply(fx, &table), 2);
	assert_string_equal(fx->refused[0][0], "pool p2 (changed size_tib=5)");
	assert_string_equal(fx->refused[0][1],
			    "the config no longer declares pool p2");
	assert_string_equal(fx->refused[1][1],
			    "the config no longer declares datastore ds2");
}

static void test_overlay_caps_fields_override_the_config(void **state)
{
	struct fixture *fx = *state;

	base_config(fx);
	fx->live = fx->base;
	fx->live_caps.volume_ops_per_s = 5000;
	overlay_diff(&fx->base, &fx->base_caps, &fx->live, &fx->live_caps,
		     &fx->ov);
	fx->base_caps.flow_ops_per_s = 77; /* the config changed another */
	apply(fx, NULL);
	assert_int_equal(fx->caps_out.volume_ops_per_s, 5000);
	assert_int_equal(fx->caps_out.flow_ops_per_s, 77);
}

static void make_dir(struct fixture *fx)
{
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/dsnfs-overlay.XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
}

static void test_overlay_file_is_replaced_whole(void **state)
{
	struct fixture *fx = *state;
	char path[128], tmp[140];
	char *text;
	size_t len;
	FILE *f;

	make_dir(fx);
	snprintf(path, sizeof(path), "%s/%s", fx->dir, OVERLAY_FILE_NAME);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	assert_int_equal(
		overlay_file_read(path, &fx->ov, fx->err, sizeof(fx->err)),
		-ENOENT);
	base_config(fx);
	live_changed(fx);
	overlay_diff(&fx->base, &fx->base_caps, &fx->live, &fx->live_caps,
		     &fx->ov);
	assert_int_equal(overlay_encode(&fx->ov, &text, &len), 0);
	assert_int_equal(
		overlay_file_write(path, text, len, fx->err, sizeof(fx->err)),
		0);
	free(text);
	assert_int_equal(access(tmp, F_OK), -1);
	assert_int_equal(
		overlay_file_read(path, &fx->again, fx->err, sizeof(fx->err)),
		0);
	assert_int_equal(fx->again.npools, 3);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"format\": ", f);
	fclose(f);
	assert_int_equal(
		overlay_file_read(path, &fx->again, fx->err, sizeof(fx->err)),
		-EINVAL);
	assert_non_null(strstr(fx->err, path));
	assert_non_null(strstr(fx->err, ": line 1 column"));
}

/* The store writes the file only when the overlay's text changes. */
static void test_overlay_store_writes_only_changes(void **state)
{
	struct fixture *fx = *state;
	struct overlay_store *s;
	char path[128];

	make_dir(fx);
	snprintf(path, sizeof(path), "%s/%s", fx->dir, OVERLAY_FILE_NAME);
	assert_int_equal(overlay_store_new(path, &s), 0);
	base_config(fx);
	overlay_store_lock(s);
	overlay_store_base_set(s, &fx->base, &fx->base_caps);
	assert_int_equal(overlay_store_record(s, &fx->base, &fx->base_caps,
					      fx->err, sizeof(fx->err)),
			 0);
	assert_int_equal(access(path, F_OK), -1); /* nothing to keep */
	live_changed(fx);
	assert_int_equal(overlay_store_record(s, &fx->live, &fx->live_caps,
					      fx->err, sizeof(fx->err)),
			 0);
	assert_int_equal(access(path, F_OK), 0);
	assert_int_equal(overlay_store_current(s)->npools, 3);
	unlink(path);
	assert_int_equal(overlay_store_record(s, &fx->live, &fx->live_caps,
					      fx->err, sizeof(fx->err)),
			 0);
	assert_int_equal(access(path, F_OK), -1); /* unchanged: not written */
	assert_int_equal(overlay_store_record(s, &fx->base, &fx->base_caps,
					      fx->err, sizeof(fx->err)),
			 0);
	assert_int_equal(
		overlay_store_load(s, &fx->again, fx->err, sizeof(fx->err)), 0);
	assert_true(overlay_empty(&fx->again));
	overlay_store_unlock(s);
	overlay_store_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_overlay_diff_of_the_config_is_empty, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_overlay_diff_names_only_what_changed, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_overlay_round_trips_through_json, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_overlay_over_the_config_gives_the_live_state,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_overlay_decoder_refuses_corrupt_input, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_overlay_decoder_is_bounded,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_overlay_entry_the_config_refuses_is_dropped, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_overlay_refused_entry_is_retried_after_the_rest,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_overlay_change_of_what_the_config_dropped_is_dropped,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_overlay_caps_fields_override_the_config, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_overlay_file_is_replaced_whole, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_overlay_store_writes_only_changes, setup,
			teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
