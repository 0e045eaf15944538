// SPDX-License-Identifier: Apache-2.0
/*
 * test_store_area: store_in_area() (nfsd/store/area.c), the snapshot-area
 * check of every call that would change a file.  A store whose ops->path
 * answers what the test says and counts its calls: a "no" is asked once
 * per object and area, a "yes" and an unknown every time, and the match
 * is by whole path components.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "nfsd/store/store_obj.h"

static const char snap_area[] = "/.snapshot";

static const char *answer; /* NULL: the backend cannot tell */
static unsigned asked;

static int counting_path(struct store *st, const struct store_obj *obj,
			 char *buf, size_t len)
{
	(void)st;
	(void)obj;
	asked++;
	if (!answer) {
		return -ENOENT;
	}
	snprintf(buf, len, "%s", answer);
	return 0;
}

static const struct store_ops counting_ops = {
	.path = counting_path,
};

static int reset(void **state)
{
	(void)state;
	answer = NULL;
	asked = 0;
	return 0;
}

static void test_outside_is_asked_once(void **state)
{
	struct store st = { .ops = &counting_ops };
	struct store_obj obj = { 0 };

	(void)state;
	answer = "/vm1/vm1-flat.vmdk";
	assert_int_equal(store_in_area(&st, &obj, snap_area), 0);
	assert_int_equal(store_in_area(&st, &obj, snap_area), 0);
	assert_int_equal(store_in_area(&st, &obj, snap_area), 0);
	assert_int_equal(asked, 1);
}

static void test_inside_is_asked_every_time(void **state)
{
	struct store st = { .ops = &counting_ops };
	struct store_obj obj = { 0 };

	(void)state;
	answer = "/.snapshot/daily-0601/vm1/vm1-flat.vmdk";
	assert_int_equal(store_in_area(&st, &obj, snap_area), 1);
	assert_int_equal(store_in_area(&st, &obj, snap_area), 1);
	assert_int_equal(asked, 2);
	answer = "/.snapshot";
	assert_int_equal(store_in_area(&st, &obj, snap_area), 1);
}

static void test_unknown_is_asked_every_time(void **state)
{
	struct store st = { .ops = &counting_ops };
	struct store_obj obj = { 0 };

	(void)state;
	assert_int_equal(store_in_area(&st, &obj, snap_area), -ENOENT);
	assert_int_equal(store_in_area(&st, &obj, snap_area), -ENOENT);
	assert_int_equal(asked, 2);
	/* Once the kernel knows its name, the answer counts. */
	answer = "/.snapshot/s1/f";
	assert_int_equal(store_in_area(&st, &obj, snap_area), 1);
}

static void test_whole_components_only(void **state)
{
	struct store st = { .ops = &counting_ops };
	struct store_obj a = { 0 }, b = { 0 };

	(void)state;
	answer = "/.snapshotx/f";
	assert_int_equal(store_in_area(&st, &a, snap_area), 0);
	answer = "/vm/.snapshot/f";
	assert_int_equal(store_in_area(&st, &b, snap_area), 0);
}

/* A "no" for one area says nothing of another. */
static void test_memo_is_per_area(void **state)
{
	static const char other_area[] = "/.other";
	struct store st = { .ops = &counting_ops };
	struct store_obj obj = { 0 };

	(void)state;
	answer = "/.other/f";
	assert_int_equal(store_in_area(&st, &obj, snap_area), 0);
	assert_int_equal(store_in_area(&st, &obj, other_area), 1);
	assert_int_equal(asked, 2);
}

/* A backend without paths (CephFS: its snapshots are read-only in the
 * cluster) cannot tell. */
static void test_backend_without_path(void **state)
{
	static const struct store_ops no_path_ops = { 0 };
	struct store st = { .ops = &no_path_ops };
	struct store_obj obj = { 0 };

	(void)state;
	assert_int_equal(store_in_area(&st, &obj, snap_area), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_outside_is_asked_once, reset),
		cmocka_unit_test_setup(test_inside_is_asked_every_time, reset),
		cmocka_unit_test_setup(test_unknown_is_asked_every_time, reset),
		cmocka_unit_test_setup(test_whole_components_only, reset),
		cmocka_unit_test_setup(test_memo_is_per_area, reset),
		cmocka_unit_test_setup(test_backend_without_path, reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
