// SPDX-License-Identifier: Apache-2.0
/*
 * test_fileio: the state files' I/O (nfsd/base/fileio.c) on real files in a
 * temporary directory: full writes at an offset, whole-file reads at and
 * past their bound, and directory syncs.
 */
#include "nfsd/base/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

struct fixture {
	char dir[64];
	char path[128];
	int fd;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_fileio.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/state", f->dir);
	f->fd = open(f->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(f->fd >= 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	close(f->fd);
	unlink(f->path);
	rmdir(f->dir);
	free(f);
	return 0;
}

/* Writes @len bytes of a pattern at offset 0. */
static uint8_t *write_pattern(struct fixture *f, size_t len)
{
	uint8_t *buf = malloc(len ? len : 1);

	assert_non_null(buf);
	for (size_t i = 0; i < len; i++) {
		buf[i] = (uint8_t)(i * 7 + 3);
	}
	assert_int_equal(fileio_pwrite_all(f->fd, buf, len, 0), 0);
	return buf;
}

static void test_round_trip_past_the_first_buffer(void **state)
{
	struct fixture *f = *state;
	size_t len = 3 * 4096 + 17; /* grows the read buffer twice */
	uint8_t *want = write_pattern(f, len);
	uint8_t *got = NULL;
	size_t got_len = 0;

	assert_int_equal(fileio_read_whole(f->fd, len, &got, &got_len), 0);
	assert_int_equal(got_len, len);
	assert_memory_equal(got, want, len);
	assert_int_equal(got[len], '\0');
	free(got);
	free(want);
}

static void test_read_bound_is_exact(void **state)
{
	struct fixture *f = *state;
	uint8_t *want = write_pattern(f, 5000);
	uint8_t *got = NULL;
	size_t got_len = 0;

	assert_int_equal(fileio_read_whole(f->fd, 4999, &got, &got_len),
			 -EFBIG);
	assert_null(got);
	assert_int_equal(fileio_read_whole(f->fd, 100, &got, &got_len), -EFBIG);
	assert_int_equal(fileio_read_whole(f->fd, 5000, &got, &got_len), 0);
	assert_int_equal(got_len, 5000);
	free(got);
	free(want);
}

static void test_empty_file_reads_as_empty_string(void **state)
{
	struct fixture *f = *state;
	uint8_t *got = NULL;
	size_t got_len = 1;

	assert_int_equal(fileio_read_whole(f->fd, 0, &got, &got_len), 0);
	assert_int_equal(got_len, 0);
	assert_int_equal(got[0], '\0');
	free(got);
}

static void test_write_at_an_offset_keeps_what_is_before(void **state)
{
	struct fixture *f = *state;
	uint8_t *want = write_pattern(f, 100);
	uint8_t *got = NULL;
	size_t got_len = 0;

	assert_int_equal(fileio_pwrite_all(f->fd, "abc", 3, 98), 0);
	memcpy(want + 98, "ab", 2);
	assert_int_equal(fileio_read_whole(f->fd, 1000, &got, &got_len), 0);
	assert_int_equal(got_len, 101);
	assert_memory_equal(got, want, 100);
	assert_int_equal(got[100], 'c');
	free(got);
	free(want);
}

static void test_errors_are_errno(void **state)
{
	struct fixture *f = *state;
	uint8_t *got = NULL;
	size_t got_len = 0;
	char missing[160];
	char *huge = malloc(8192);
	int rd = open(f->path, O_RDONLY | O_CLOEXEC);

	assert_true(rd >= 0);
	assert_int_equal(fileio_pwrite_all(rd, "x", 1, 0), -EBADF);
	close(rd);
	assert_int_equal(fileio_read_whole(-1, 10, &got, &got_len), -EBADF);
	assert_int_equal(fileio_sync_parent_dir(f->path), 0);
	snprintf(missing, sizeof(missing), "%s/no/such/file", f->dir);
	assert_int_equal(fileio_sync_parent_dir(missing), -ENOENT);
	assert_non_null(huge);
	memset(huge, 'a', 8191);
	huge[8191] = '\0';
	assert_int_equal(fileio_sync_parent_dir(huge), -ENAMETOOLONG);
	free(huge);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_round_trip_past_the_first_buffer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_bound_is_exact, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_empty_file_reads_as_empty_string, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_write_at_an_offset_keeps_what_is_before, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_errors_are_errno, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
