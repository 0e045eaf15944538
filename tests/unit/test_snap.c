// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of the snapshot module's parts that need no reflink
 * (nfsd/snap/): the name rules, the listing (sorted, temporary names and
 * files left out), a refusal on a file system without FICLONE that leaves
 * no trace, and the tree walks that remove a tree and set or clear the
 * immutable flag (the scratch directory is ext4 or tmpfs; a flag the file
 * system refuses skips that test), the manifest (atomic, only what it
 * names is a snapshot, a planted directory is neither listed nor
 * restorable, sealed trees adopted once), and a file with another link
 * never flagged.  t5009 runs the rest on XFS.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "nfsd/base/base.h"
#include "nfsd/snap/snap_int.h"

struct snap_dir {
	char path[64];
	char buf[256];
	char manifest[128]; /* outside the datastore, as the state dir is */
};

static int setup(void **state)
{
	struct snap_dir *d = calloc(1, sizeof(*d));

	assert_non_null(d);
	snprintf(d->path, sizeof(d->path), "/tmp/test_snap.XXXXXX");
	assert_non_null(mkdtemp(d->path));
	snprintf(d->manifest, sizeof(d->manifest), "%s.manifest", d->path);
	*state = d;
	return 0;
}

static int rm_cb(const char *p, const struct stat *st, int flag,
		 struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static int teardown(void **state)
{
	struct snap_dir *d = *state;

	int fd = open(d->path, O_RDONLY | O_DIRECTORY);

	/* A test may leave flags set (a delete re-seals .snapshot). */
	if (fd >= 0) {
		(void)snap__tree_immutable(fd, false, true, 0);
		close(fd);
	}
	nftw(d->path, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	unlink(d->manifest);
	free(d);
	return 0;
}

static const char *sp(struct snap_dir *d, const char *name)
{
	snprintf(d->buf, sizeof(d->buf), "%s/%s", d->path, name);
	return d->buf;
}

static void put(struct snap_dir *d, const char *name, const char *text)
{
	FILE *f = fopen(sp(d, name), "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_names_follow_the_rules(void **state)
{
	static const char *const good[] = { "s1", "before-upgrade", "a.b_c",
					    "2026-12-01T23" };
	static const char *const bad[] = { "",	 "a/b", "..", "x..y",
					   ".h", "a b", "ü" };
	char err[256];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		assert_int_equal(snap_name_check(good[i], err, sizeof(err)), 0);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		if (snap_name_check(bad[i], err, sizeof(err)) != -EINVAL) {
			fail_msg("'%s' was taken", bad[i]);
		}
	}
	memset(err, 'a', 64);
	err[64] = '\0';
	assert_int_equal(snap_name_check(err, err, sizeof(err)), -EINVAL);
}

static void test_list_is_sorted_and_skips_others(void **state)
{
	struct snap_dir *d = *state;
	struct snap_manifest m = { 0 };
	struct snap_manifest_entry e = { 0 };
	struct snap_entry *list;
	char err[256];
	struct stat st;
	size_t n;

	assert_int_equal(snap_list(d->path, d->manifest, &list, &n), 0);
	assert_int_equal(n, 0); /* no .snapshot yet */
	assert_null(list);
	/* Nor a manifest: a name is free. */
	assert_int_equal(
		snap_check(d->path, d->manifest, "s1", true, err, sizeof(err)),
		-ENOENT);
	assert_int_equal(mkdir(sp(d, ".snapshot"), 0755), 0);
	assert_int_equal(mkdir(sp(d, ".snapshot/zeta"), 0755), 0);
	assert_int_equal(mkdir(sp(d, ".snapshot/alpha"), 0755), 0);
	assert_int_equal(mkdir(sp(d, ".snapshot/.beta.tmp"), 0755), 0);
	assert_int_equal(mkdir(sp(d, ".snapshot/planted"), 0755), 0);
	put(d, ".snapshot/file", "x");
	/* The manifest names zeta and alpha (as their inodes are) and a
	 * snapshot gone since; the planted directory is not in it. */
	for (size_t i = 0; i < 3; i++) {
		static const char *const names[] = { "zeta", "alpha", "gone" };
		char rel[64];

		snprintf(rel, sizeof(rel), ".snapshot/%s", names[i]);
		snprintf(e.name, sizeof(e.name), "%s", names[i]);
		e.created_s = 1000 + (int64_t)i;
		e.ino = stat(sp(d, rel), &st) ? 1 : (uint64_t)st.st_ino;
		assert_int_equal(snap__manifest_add(&m, &e), 0);
	}
	assert_int_equal(snap__manifest_save(d->manifest, &m, err, sizeof(err)),
			 0);
	snap__manifest_free(&m);
	assert_int_equal(snap_list(d->path, d->manifest, &list, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(list[0].name, "alpha");
	assert_string_equal(list[1].name, "zeta");
	assert_int_equal(list[0].created_s, 1001);
	free(list);
}

/* Issue 23, finding 4: a directory a client planted under .snapshot is
 * neither listed nor restorable, and the datastore stays as it was. */
static void test_planted_directory_is_no_snapshot(void **state)
{
	struct snap_dir *d = *state;
	struct snap_entry *list = NULL;
	char err[512] = "";
	char buf[16] = "";
	size_t n = 9;
	FILE *f;

	put(d, "disk-flat.vmdk", "live data");
	assert_int_equal(mkdir(sp(d, ".snapshot"), 0755), 0);
	assert_int_equal(mkdir(sp(d, ".snapshot/daily-0601"), 0755), 0);
	put(d, ".snapshot/daily-0601/disk-flat.vmdk", "planted");
	put(d, ".snapshot/daily-0601/evil.txt", "x");
	assert_int_equal(snap_list(d->path, d->manifest, &list, &n), 0);
	assert_int_equal(n, 0);
	assert_null(list);
	assert_int_equal(snap_check(d->path, d->manifest, "daily-0601", true,
				    err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "did not make"));
	assert_int_equal(snap_restore(d->path, d->manifest, "daily-0601", NULL,
				      err, sizeof(err)),
			 -ENOENT);
	assert_int_equal(snap_delete(d->path, d->manifest, "daily-0601", err,
				     sizeof(err)),
			 -ENOENT);
	f = fopen(sp(d, "disk-flat.vmdk"), "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "live data");
	assert_int_equal(access(sp(d, "evil.txt"), F_OK), -1);
	assert_int_equal(access(sp(d, ".snapshot/daily-0601/evil.txt"), F_OK),
			 0);
}

/* The manifest is replaced whole (no temporary left), reads back what was
 * written, and a damaged one is refused with its line. */
static void test_manifest_round_trip_and_damage(void **state)
{
	struct snap_dir *d = *state;
	struct snap_manifest m = { 0 }, r = { 0 };
	struct snap_manifest_entry e = { .created_s = 1796400000,
					 .ino = 12345 };
	char err[256], tmp[160];
	FILE *f;

	assert_int_equal(snap__manifest_load(d->manifest, &r, err, sizeof(err)),
			 -ENOENT);
	snprintf(e.name, sizeof(e.name), "before-upgrade");
	assert_int_equal(snap__manifest_add(&m, &e), 0);
	snprintf(e.name, sizeof(e.name), "s2");
	e.ino = 7;
	assert_int_equal(snap__manifest_add(&m, &e), 0);
	assert_int_equal(snap__manifest_save(d->manifest, &m, err, sizeof(err)),
			 0);
	snprintf(tmp, sizeof(tmp), "%s.tmp", d->manifest);
	assert_int_equal(access(tmp, F_OK), -1);
	assert_int_equal(snap__manifest_load(d->manifest, &r, err, sizeof(err)),
			 0);
	assert_int_equal(r.n, 2);
	assert_string_equal(r.e[0].name, "before-upgrade");
	assert_int_equal(r.e[0].ino, 12345);
	assert_int_equal(r.e[1].ino, 7);
	assert_int_equal(r.e[1].created_s, 1796400000);
	snap__manifest_free(&r);
	snap__manifest_del(&m, "before-upgrade");
	assert_int_equal(m.n, 1);
	snap__manifest_free(&m);
	f = fopen(d->manifest, "a");
	assert_non_null(f);
	fputs("../etc 1 2\n", f);
	fclose(f);
	assert_int_equal(snap__manifest_load(d->manifest, &r, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, ":4: a bad line"));
	f = fopen(d->manifest, "w");
	assert_non_null(f);
	fputs("s1 1 2\n", f);
	fclose(f);
	assert_int_equal(snap__manifest_load(d->manifest, &r, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "not a snapshot manifest"));
}

static void test_refused_without_reflink_leaves_nothing(void **state)
{
	struct snap_dir *d = *state;
	struct stat st;
	char err[512] = "";
	int rc;

	put(d, "disk-flat.vmdk", "data");
	rc = snap_create(d->path, d->manifest, "s1", NULL, err, sizeof(err));
	if (rc == 0) {
		skip(); /* the scratch directory shares blocks */
	}
	assert_int_equal(rc, -EOPNOTSUPP);
	assert_non_null(strstr(err, "reflink"));
	assert_int_not_equal(lstat(sp(d, ".snapshot"), &st), 0);
	assert_int_equal(snap_create(d->path, d->manifest, "../x", NULL, err,
				     sizeof(err)),
			 -EINVAL);
	assert_int_equal(
		snap_delete(d->path, d->manifest, "s1", err, sizeof(err)),
		-ENOENT);
	assert_int_equal(snap_restore(d->path, d->manifest, "s1", NULL, err,
				      sizeof(err)),
			 -ENOENT);
}

static void test_tree_walks_remove_and_flag(void **state)
{
	struct snap_dir *d = *state;
	struct stat st;
	int root, fd, rc;

	assert_int_equal(mkdir(sp(d, "t"), 0755), 0);
	assert_int_equal(mkdir(sp(d, "t/vm1"), 0755), 0);
	put(d, "t/vm1/a.vmdk", "a");
	put(d, "t/b.txt", "b");
	assert_int_equal(symlink("vm1/a.vmdk", sp(d, "t/link")), 0);
	root = open(d->path, O_RDONLY | O_DIRECTORY);
	fd = open(sp(d, "t"), O_RDONLY | O_DIRECTORY);
	assert_true(root >= 0 && fd >= 0);
	rc = snap__tree_immutable(fd, true, true, 0);
	if (rc == -EOPNOTSUPP || rc == -ENOTTY || rc == -EPERM) {
		close(fd);
		close(root);
		skip(); /* no immutable flag here */
	}
	assert_int_equal(rc, 0);
	assert_int_equal(snap__tree_is_sealed(fd, 0), 1);
	/* Immutable: even root cannot add, remove or write. */
	assert_int_equal(unlinkat(fd, "b.txt", 0), -1);
	assert_int_equal(errno, EPERM);
	assert_true(open(sp(d, "t/vm1/a.vmdk"), O_WRONLY) < 0);
	assert_int_equal(snap__tree_remove(root, "t", 0), -EPERM);
	assert_int_equal(snap__tree_immutable(fd, false, true, 0), 0);
	assert_int_equal(snap__tree_is_sealed(fd, 0), 0);
	close(fd);
	assert_int_equal(snap__tree_remove(root, "t", 0), 0);
	assert_int_not_equal(lstat(sp(d, "t"), &st), 0);
	/* Something already gone is no error. */
	assert_int_equal(snap__tree_remove(root, "t", 0), 0);
	close(root);
}

/* Issue 23, finding 4: a live disk hard-linked into a tree being sealed
 * (as a client could into .snapshot/.NAME.tmp) is never made immutable:
 * the seal fails with -EMLINK, and the live file stays writable. */
static void test_seal_never_flags_a_linked_live_file(void **state)
{
	struct snap_dir *d = *state;
	char live[256];
	int fd, rc, w;

	assert_int_equal(mkdir(sp(d, "t"), 0755), 0);
	put(d, "t/own.vmdk", "a");
	put(d, "live-flat.vmdk", "live");
	snprintf(live, sizeof(live), "%s", sp(d, "live-flat.vmdk"));
	assert_int_equal(link(live, sp(d, "t/x-flat.vmdk")), 0);
	fd = open(sp(d, "t"), O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	rc = snap__tree_immutable(fd, true, true, 0);
	if (rc == -EOPNOTSUPP || rc == -ENOTTY || rc == -EPERM) {
		close(fd);
		skip(); /* no immutable flag here */
	}
	assert_int_equal(rc, -EMLINK);
	w = open(live, O_WRONLY | O_APPEND);
	assert_true(w >= 0);
	assert_int_equal(write(w, "x", 1), 1);
	close(w);
	assert_int_equal(snap__tree_is_sealed(fd, 0), 0);
	assert_int_equal(snap__tree_immutable(fd, false, true, 0), 0);
	close(fd);
}

/* A datastore snapshotted before the manifest existed: at its first
 * change the sealed trees under .snapshot are adopted (only the server
 * can seal), a directory that is not sealed is not. */
static void test_sealed_snapshots_are_adopted_once(void **state)
{
	struct snap_dir *d = *state;
	struct snap_manifest m = { 0 };
	struct snap_entry *list = NULL;
	char err[256];
	size_t n = 0;
	int fd, rc;

	assert_int_equal(mkdir(sp(d, ".snapshot"), 0755), 0);
	assert_int_equal(mkdir(sp(d, ".snapshot/old"), 0755), 0);
	put(d, ".snapshot/old/disk-flat.vmdk", "then");
	assert_int_equal(mkdir(sp(d, ".snapshot/daily-0601"), 0755), 0);
	fd = open(sp(d, ".snapshot/old"), O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	rc = snap__tree_immutable(fd, true, true, 0);
	if (rc == -EOPNOTSUPP || rc == -ENOTTY || rc == -EPERM) {
		close(fd);
		skip(); /* no immutable flag here */
	}
	assert_int_equal(rc, 0);
	assert_int_equal(snap_list(d->path, d->manifest, &list, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(list[0].name, "old");
	free(list);
	/* A delete adopts for good (writes the manifest) before it looks. */
	assert_int_equal(snap_delete(d->path, d->manifest, "daily-0601", err,
				     sizeof(err)),
			 -ENOENT);
	assert_int_equal(snap__manifest_load(d->manifest, &m, err, sizeof(err)),
			 0);
	assert_int_equal(m.n, 1);
	assert_string_equal(m.e[0].name, "old");
	snap__manifest_free(&m);
	assert_int_equal(snap__tree_immutable(fd, false, true, 0), 0);
	close(fd);
	/* Once there is a manifest, nothing more is adopted. */
	assert_int_equal(snap_list(d->path, d->manifest, &list, &n), 0);
	assert_int_equal(n, 1);
	free(list);
	/* (the unsealed .snapshot/old is still named: its inode is) */
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_names_follow_the_rules),
		T(test_list_is_sorted_and_skips_others),
		T(test_refused_without_reflink_leaves_nothing),
		T(test_tree_walks_remove_and_flag),
		T(test_planted_directory_is_no_snapshot),
		T(test_manifest_round_trip_and_damage),
		T(test_seal_never_flags_a_linked_live_file),
		T(test_sealed_snapshots_are_adopted_once),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
