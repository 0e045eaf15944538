// SPDX-License-Identifier: Apache-2.0
/*
 * store__fsstat_from_statvfs: FSSTAT's figures from a statvfs, in the
 * order RFC 1813 3.3.18 promises (tfiles >= ffiles >= afiles), also for
 * a file system with no limit on files (CephFS: f_files is the count in
 * use and f_ffree is -1).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <sys/statvfs.h>

#include "nfsd/store/store_int.h"

static void test_fsstat_of_a_local_file_system(void **state)
{
	struct statvfs sv = { .f_frsize = 4096,
			      .f_blocks = 1000,
			      .f_bfree = 600,
			      .f_bavail = 500,
			      .f_files = 100,
			      .f_ffree = 40,
			      .f_favail = 30 };
	struct store_fsstat fs;

	(void)state;
	store__fsstat_from_statvfs(&sv, &fs);
	assert_int_equal(fs.total_bytes, 4096000);
	assert_int_equal(fs.free_bytes, 600 * 4096);
	assert_int_equal(fs.avail_bytes, 500 * 4096);
	assert_int_equal(fs.total_files, 100);
	assert_int_equal(fs.free_files, 40);
	assert_int_equal(fs.avail_files, 30);
}

static void test_fsstat_with_no_limit_on_files_keeps_the_order(void **state)
{
	struct statvfs sv = { .f_frsize = 4096,
			      .f_blocks = 1000,
			      .f_bfree = 600,
			      .f_bavail = 600,
			      .f_files = 2,
			      .f_ffree = (fsfilcnt_t)-1,
			      .f_favail = (fsfilcnt_t)-1 };
	struct store_fsstat fs;

	(void)state;
	store__fsstat_from_statvfs(&sv, &fs);
	assert_int_equal(fs.total_files, UINT64_MAX);
	/* used = total - free: still the 2 files there are */
	assert_int_equal(fs.total_files - fs.free_files, 2);
	assert_true(fs.avail_files <= fs.free_files);
	assert_true(fs.free_files <= fs.total_files);
}

static void test_fsstat_avail_never_above_free(void **state)
{
	struct statvfs sv = { .f_files = 100, .f_ffree = 40, .f_favail = 90 };
	struct store_fsstat fs;

	(void)state;
	store__fsstat_from_statvfs(&sv, &fs);
	assert_int_equal(fs.avail_files, 40);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fsstat_of_a_local_file_system),
		cmocka_unit_test(
			test_fsstat_with_no_limit_on_files_keeps_the_order),
		cmocka_unit_test(test_fsstat_avail_never_above_free),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
