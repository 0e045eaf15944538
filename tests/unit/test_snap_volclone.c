// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of the record of volumes made from snapshots
 * (nfsd/snap/volclone.h) and of its merge into a config
 * (server_clones_merge, nfsd/server/clones.c): a round trip, a bad line
 * refusing the file, the hold of a snapshot (pinned until split), and a
 * volume served with its source datastore's rules, its own name and
 * directory and no policy, or left out when its source is not a local
 * datastore of the config.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "nfsd/config/config.h"
#include "nfsd/server/server.h"
#include "nfsd/snap/volclone.h"

static char dir[] = "/tmp/test_snap_volclone.XXXXXX";

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char path[128];

	(void)state;
	snprintf(path, sizeof(path), "%s/" SNAP_VOLCLONE_FILE, dir);
	unlink(path);
	return rmdir(dir);
}

static void test_round_trip_and_hold(void **state)
{
	struct snap_volclone v = { .name = "c1",
				   .source = "ds3",
				   .snap = "s1",
				   .pinned = true,
				   .dir = "/srv/x y/c1" };
	struct snap_volclones c = { 0 }, back;
	char err[256];

	(void)state;
	assert_int_equal(snap_volclones_load(dir, &back, err, sizeof(err)), 0);
	assert_int_equal(back.n, 0);
	assert_int_equal(snap_volclones_add(&c, &v), 0);
	assert_int_equal(snap_volclones_add(&c, &v), -EEXIST);
	assert_int_equal(snap_volclones_save(dir, &c, err, sizeof(err)), 0);
	assert_int_equal(snap_volclones_load(dir, &back, err, sizeof(err)), 0);
	assert_int_equal(back.n, 1);
	/* The directory is the rest of the line: blanks kept. */
	assert_string_equal(back.v[0].dir, "/srv/x y/c1");
	assert_non_null(snap_volclones_pinning(&back, "ds3", "s1"));
	assert_null(snap_volclones_pinning(&back, "ds3", "s2"));
	assert_null(snap_volclones_pinning(&back, "ds1", "s1"));
	/* Split: no longer held. */
	snap_volclones_find(&back, "c1")->pinned = false;
	assert_null(snap_volclones_pinning(&back, "ds3", "s1"));
	snap_volclones_free(&back);
	snap_volclones_free(&c);
}

static void test_bad_line(void **state)
{
	static const char *const bad[] = {
		"c1 ds3 s1 1 relative/dir\n",
		"c1 ds3 s1 2 /abs\n",
		"c1 ds3 s1\n",
	};
	struct snap_volclones c;
	char path[128], err[256];

	(void)state;
	snprintf(path, sizeof(path), "%s/" SNAP_VOLCLONE_FILE, dir);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		FILE *f = fopen(path, "w");

		assert_non_null(f);
		fprintf(f, "dsnfs-volume-clones 1\n%s", bad[i]);
		fclose(f);
		err[0] = '\0';
		assert_int_equal(snap_volclones_load(dir, &c, err, sizeof(err)),
				 -EINVAL);
		assert_non_null(strstr(err, ":2: a bad line"));
	}
	unlink(path);
}

static void test_merge(void **state)
{
	static struct config cfg;
	struct snap_volclone a = { .name = "c1",
				   .source = "ds3",
				   .snap = "s1",
				   .pinned = true,
				   .dir = "/srv/c1" };
	struct snap_volclone b = {
		.name = "c2", .source = "gone", .snap = "s1", .dir = "/srv/c2"
	};
	struct snap_volclones c = { 0 };
	char text[512], err[256];

	(void)state;
	assert_int_equal(snap_volclones_add(&c, &a), 0);
	assert_int_equal(snap_volclones_add(&c, &b), 0);
	assert_int_equal(snap_volclones_save(dir, &c, err, sizeof(err)), 0);
	snap_volclones_free(&c);
	config_defaults(&cfg);
	snprintf(text, sizeof(text),
		 "[server]\nstate_dir = %s\n[datastore ds3]\npath = /srv/ds3\n"
		 "squash = none\nread_only = true\nclients = 10.0.0.1\n"
		 "snapshot_hourly = :05 keep 3\n",
		 dir);
	assert_int_equal(
		config_load_string(&cfg, "t.conf", text, err, sizeof(err)), 0);
	assert_int_equal(server_clones_merge(&cfg, err, sizeof(err)), 0);
	/* c1 served with ds3's rules; c2's source is gone: left out. */
	assert_int_equal(cfg.ndatastores, 2);
	assert_string_equal(cfg.datastores[1].name, "c1");
	assert_string_equal(cfg.datastores[1].path, "/srv/c1");
	assert_int_equal(cfg.datastores[1].squash, EXPORT_SQUASH_NONE);
	assert_true(cfg.datastores[1].read_only);
	assert_int_equal(cfg.datastores[1].nclients, 1);
	assert_false(snap_policy_any(&cfg.datastores[1].policy));
	assert_int_equal(cfg.datastores[1].fsid, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_and_hold),
		cmocka_unit_test(test_bad_line),
		cmocka_unit_test(test_merge),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
