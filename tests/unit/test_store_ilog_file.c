// SPDX-License-Identifier: Apache-2.0
/*
 * test_store_ilog_file: the intent log opens only its own file
 * (ilog_file.c).  A path naming anything else (a disk by typo, a device,
 * a link, a file with group or other bits or another owner) is refused
 * with an error that names it, and the file is left byte for byte.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/unit/test_ilog_fixture.h"

#define DATA_BYTES (1u << 20)

static int setup(void **state)
{
	return ilog_fixture_setup(state, 0);
}

/* Tries a second log at @rel of the fixture's directory: its -errno, and
 * the error text in @err.  A log that opens is closed again. */
static int try_open(struct ilog_fixture *x, const char *rel, char *path,
		    size_t pathlen, char *err, size_t errlen)
{
	struct store *st = x->f->st;
	struct store_ilog *ilog = NULL;
	int rc;

	snprintf(path, pathlen, "%s/%s", x->f->dir, rel);
	err[0] = '\0';
	st->ilog = NULL;
	rc = store_ilog_open(path, ILOG_FIXTURE_RING_BYTES, 0, &st, 1, &ilog,
			     err, errlen);
	if (rc == 0) {
		store_ilog_close(ilog);
	}
	st->ilog = x->ilog;
	return rc;
}

static void fill(uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		buf[i] = (uint8_t)(i * 131 + 7);
	}
}

static void write_file(const char *path, const uint8_t *buf, size_t len,
		       mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static void assert_file_is(const char *path, const uint8_t *buf, size_t len)
{
	static uint8_t got[DATA_BYTES + 1];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	assert_true(fd >= 0);
	n = read(fd, got, sizeof(got));
	close(fd);
	assert_int_equal(n, (ssize_t)len);
	assert_memory_equal(got, buf, len);
}

static void test_ilog_file_with_data_is_refused_and_kept(void **state)
{
	static uint8_t data[DATA_BYTES];
	char path[256], err[512];

	fill(data, sizeof(data));
	snprintf(path, sizeof(path), "%s/disk-flat.vmdk",
		 (*(struct ilog_fixture **)state)->f->dir);
	write_file(path, data, sizeof(data), 0600);
	assert_int_equal(try_open(*state, "disk-flat.vmdk", path, sizeof(path),
				  err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "not an intent log"));
	assert_file_is(path, data, sizeof(data));
}

static void test_ilog_file_short_foreign_file_is_refused(void **state)
{
	char path[256], err[512];
	static const uint8_t note[] = "not a log";

	snprintf(path, sizeof(path), "%s/note",
		 (*(struct ilog_fixture **)state)->f->dir);
	write_file(path, note, sizeof(note), 0600);
	assert_int_equal(
		try_open(*state, "note", path, sizeof(path), err, sizeof(err)),
		-EINVAL);
	assert_file_is(path, note, sizeof(note));
}

static void test_ilog_file_group_readable_log_is_refused(void **state)
{
	struct ilog_fixture *x = *state;
	char path[256], err[512];

	/* Our own log, made readable by others. */
	assert_int_equal(chmod(x->path, 0640), 0);
	assert_int_equal(
		try_open(x, "ilog", path, sizeof(path), err, sizeof(err)),
		-EPERM);
	assert_non_null(strstr(err, "mode 0640"));
	assert_int_equal(chmod(x->path, 0600), 0);
}

static void test_ilog_file_of_another_owner_is_refused(void **state)
{
	struct ilog_fixture *x = *state;
	char path[256], err[512];

	if (geteuid() != 0) {
		skip(); /* only root can give a file away */
	}
	assert_int_equal(chown(x->path, 4242, 4242), 0);
	assert_int_equal(
		try_open(x, "ilog", path, sizeof(path), err, sizeof(err)),
		-EPERM);
	assert_non_null(strstr(err, "owned by uid 4242"));
	assert_int_equal(chown(x->path, 0, 0), 0);
}

static void test_ilog_file_symlink_and_fifo_are_refused(void **state)
{
	struct ilog_fixture *x = *state;
	char path[256], err[512];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/link", x->f->dir);
	assert_int_equal(symlink(x->path, path), 0);
	assert_int_equal(
		try_open(x, "link", path, sizeof(path), err, sizeof(err)),
		-ELOOP);
	assert_non_null(strstr(err, "symbolic link"));
	snprintf(path, sizeof(path), "%s/fifo", x->f->dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(
		try_open(x, "fifo", path, sizeof(path), err, sizeof(err)),
		-EINVAL);
	assert_non_null(strstr(err, "not a regular file"));
	assert_int_equal(lstat(path, &sb), 0);
	assert_true(S_ISFIFO(sb.st_mode));
}

static void test_ilog_file_new_and_empty_are_made_0600(void **state)
{
	struct ilog_fixture *x = *state;
	char path[256], err[512];
	struct stat sb;

	/* Whatever the umask, a new log is 0600. */
	mode_t old = umask(0);

	assert_int_equal(
		try_open(x, "new.log", path, sizeof(path), err, sizeof(err)),
		0);
	umask(old);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0600);
	assert_true(sb.st_size > 0);
	/* ... and it opens again as a log. */
	assert_int_equal(
		try_open(x, "new.log", path, sizeof(path), err, sizeof(err)),
		0);
	/* An empty file of ours becomes a log too. */
	snprintf(path, sizeof(path), "%s/empty.log", x->f->dir);
	write_file(path, (const uint8_t *)"", 0, 0600);
	assert_int_equal(
		try_open(x, "empty.log", path, sizeof(path), err, sizeof(err)),
		0);
	assert_int_equal(stat(path, &sb), 0);
	assert_true(sb.st_size > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_ilog_file_with_data_is_refused_and_kept, setup,
			ilog_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_ilog_file_short_foreign_file_is_refused, setup,
			ilog_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_ilog_file_group_readable_log_is_refused, setup,
			ilog_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_ilog_file_of_another_owner_is_refused, setup,
			ilog_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_ilog_file_symlink_and_fifo_are_refused, setup,
			ilog_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_ilog_file_new_and_empty_are_made_0600, setup,
			ilog_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
