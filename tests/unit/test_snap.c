/*
 * Unit tests of the snapshot module's parts that need no reflink
 * (nfsd/snap/): the name rules, the listing (sorted, temporary names and
 * files left out), a refusal on a file system without FICLONE that leaves
 * no trace, and the tree walks that remove a tree and set or clear the
 * immutable flag (the scratch directory is ext4 or tmpfs; a flag the file
 * system refuses skips that test).  t5009 runs the rest on XFS.
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

#include "nfsd/snap/snap_int.h"

struct snap_dir {
	char path[64];
	char buf[256];
};

static int setup(void **state)
{
	struct snap_dir *d = calloc(1, sizeof(*d));

	assert_non_null(d);
	snprintf(d->path, sizeof(d->path), "/tmp/test_snap.XXXXXX");
	assert_non_null(mkdtemp(d->path));
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

	nftw(d->path, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
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
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(snap_name_check(good[i], err, sizeof(err)), 0);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
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
	struct snap_entry *list;
	size_t n;

	assert_int_equal(snap_list(d->path, &list, &n), 0);
	assert_int_equal(n, 0); /* no .snapshot yet */
	assert_null(list);
	assert_int_equal(mkdir(sp(d, ".snapshot"), 0755), 0);
	assert_int_equal(mkdir(sp(d, ".snapshot/zeta"), 0755), 0);
	assert_int_equal(mkdir(sp(d, ".snapshot/alpha"), 0755), 0);
	assert_int_equal(mkdir(sp(d, ".snapshot/.beta.tmp"), 0755), 0);
	put(d, ".snapshot/file", "x");
	assert_int_equal(snap_list(d->path, &list, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(list[0].name, "alpha");
	assert_string_equal(list[1].name, "zeta");
	assert_true(list[0].created_s > 0);
	free(list);
}

static void test_refused_without_reflink_leaves_nothing(void **state)
{
	struct snap_dir *d = *state;
	struct stat st;
	char err[512] = "";
	int rc;

	put(d, "disk-flat.vmdk", "data");
	rc = snap_create(d->path, "s1", NULL, err, sizeof(err));
	if (rc == 0) {
		skip(); /* the scratch directory shares blocks */
	}
	assert_int_equal(rc, -EOPNOTSUPP);
	assert_non_null(strstr(err, "reflink"));
	assert_int_not_equal(lstat(sp(d, ".snapshot"), &st), 0);
	assert_int_equal(snap_create(d->path, "../x", NULL, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(snap_delete(d->path, "s1", err, sizeof(err)), -ENOENT);
	assert_int_equal(snap_restore(d->path, "s1", NULL, err, sizeof(err)),
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
	rc = snap__tree_immutable(fd, true, 0);
	if (rc == -EOPNOTSUPP || rc == -ENOTTY || rc == -EPERM) {
		close(fd);
		close(root);
		skip(); /* no immutable flag here */
	}
	assert_int_equal(rc, 0);
	/* Immutable: even root cannot add, remove or write. */
	assert_int_equal(unlinkat(fd, "b.txt", 0), -1);
	assert_int_equal(errno, EPERM);
	assert_true(open(sp(d, "t/vm1/a.vmdk"), O_WRONLY) < 0);
	assert_int_equal(snap__tree_remove(root, "t", 0), -EPERM);
	assert_int_equal(snap__tree_immutable(fd, false, 0), 0);
	close(fd);
	assert_int_equal(snap__tree_remove(root, "t", 0), 0);
	assert_int_not_equal(lstat(sp(d, "t"), &st), 0);
	/* Something already gone is no error. */
	assert_int_equal(snap__tree_remove(root, "t", 0), 0);
	close(root);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_names_follow_the_rules),
		T(test_list_is_sorted_and_skips_others),
		T(test_refused_without_reflink_leaves_nothing),
		T(test_tree_walks_remove_and_flag),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
