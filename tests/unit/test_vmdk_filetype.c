// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of the one rule of vmdk/io.c's vmdk__io_open() (issue 23,
 * finding 3): only a regular file is ever opened as a descriptor, an
 * extent, a parent or a clone's source.  A FIFO (which would block the
 * opener for good), a character or block device (the server's disks), a
 * directory, and a symlink leading out of the datastore are each refused
 * with -EINVAL (-ELOOP for the symlink under vmdk_io_beneath) and the
 * reason, promptly (an alarm fails a test that blocks), and a full clone
 * of such a disk makes nothing.  And what a descriptor file holds: its
 * text up to the first NUL, binary data (and bytes with no line) refused.
 */
#include "tests/unit/test_vmdk.h"

#include <signal.h>
#include <sys/sysmacros.h>

#define HANG_S 10

static void on_alarm(int sig)
{
	(void)sig;
	/* A blocked open is the failure this file tests for. */
	static const char msg[] = "test_vmdk_filetype: an open blocked\n";

	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(1);
}

static int ft_setup(void **state)
{
	signal(SIGALRM, on_alarm);
	alarm(HANG_S);
	return tdir_setup(state);
}

static int ft_teardown(void **state)
{
	alarm(0);
	return tdir_teardown(state);
}

/* A monolithicFlat descriptor "d.vmdk" naming extent @extent. */
static void desc_naming(struct tdir *t, const char *extent)
{
	char text[512];

	snprintf(text, sizeof(text),
		 "# Disk DescriptorFile\nversion=1\nCID=fffffffe\n"
		 "parentCID=ffffffff\ncreateType=\"monolithicFlat\"\n"
		 "RW 2048 FLAT \"%s\" 0\n",
		 extent);
	write_text(tp(t, "d.vmdk"), text);
}

/* Opening "d.vmdk" (read-only, then read-write) is refused with @want
 * and the reason names @what. */
static void refused(struct tdir *t, const struct vmdk_io *io, int want,
		    const char *what)
{
	unsigned modes[] = { 0, VMDK_OPEN_RDWR };
	char err[512];
	struct vmdk *v = NULL;

	for (size_t i = 0; i < 2; i++) {
		err[0] = '\0';
		assert_int_equal(vmdk_open(io, tp(t, "d.vmdk"), modes[i], &v,
					   err, sizeof(err)),
				 want);
		assert_null(v);
		if (!strstr(err, what)) {
			fail_msg("message '%s' does not say '%s'", err, what);
		}
	}
}

static void test_fifo_extent_is_refused_without_blocking(void **state)
{
	struct tdir *t = *state;

	assert_int_equal(mkfifo(tp(t, "d-flat.vmdk"), 0644), 0);
	desc_naming(t, "d-flat.vmdk");
	refused(t, NULL, -EINVAL, "not a regular file");
	refused(t, NULL, -EINVAL, "a FIFO");
}

static void test_fifo_descriptor_is_refused_without_blocking(void **state)
{
	struct tdir *t = *state;
	struct vmdk *v = NULL;
	char err[512];

	assert_int_equal(mkfifo(tp(t, "d.vmdk"), 0644), 0);
	assert_int_equal(
		vmdk_open(NULL, tp(t, "d.vmdk"), 0, &v, err, sizeof(err)),
		-EINVAL);
	assert_non_null(strstr(err, "not a regular file"));
	assert_non_null(strstr(err, "d.vmdk"));
}

static void test_char_device_extent_is_refused(void **state)
{
	struct tdir *t = *state;

	/* /dev/null's numbers, made here (tests run as root), and a
	 * symlink to the real one. */
	if (mknod(tp(t, "d-flat.vmdk"), S_IFCHR | 0644, makedev(1, 3))) {
		skip();
	}
	desc_naming(t, "d-flat.vmdk");
	refused(t, NULL, -EINVAL, "a character device");
	assert_int_equal(unlink(tp(t, "d-flat.vmdk")), 0);
	assert_int_equal(symlink("/dev/null", tp(t, "d-flat.vmdk")), 0);
	refused(t, NULL, -EINVAL, "a character device");
}

static void test_block_device_extent_is_refused(void **state)
{
	struct tdir *t = *state;

	/* A loop device's numbers: refused before it is opened. */
	if (mknod(tp(t, "d-flat.vmdk"), S_IFBLK | 0644, makedev(7, 0))) {
		skip();
	}
	desc_naming(t, "d-flat.vmdk");
	refused(t, NULL, -EINVAL, "a block device");
}

static void test_directory_as_extent_or_descriptor_is_refused(void **state)
{
	struct tdir *t = *state;
	struct vmdk *v = NULL;
	char err[512];

	assert_int_equal(mkdir(tp(t, "d-flat.vmdk"), 0755), 0);
	desc_naming(t, "d-flat.vmdk");
	refused(t, NULL, -EINVAL, "a directory");
	assert_int_equal(mkdir(tp(t, "e.vmdk"), 0755), 0);
	assert_int_equal(
		vmdk_open(NULL, tp(t, "e.vmdk"), 0, &v, err, sizeof(err)),
		-EINVAL);
	assert_non_null(strstr(err, "not a regular file"));
}

/* Under vmdk_io_beneath (the datastore's io): a device node, a FIFO and a
 * symlink out of the tree, as extent and as descriptor. */
static void test_beneath_refuses_devices_fifos_and_symlinks(void **state)
{
	struct tdir *t = *state;
	struct vmdk_io_beneath b;
	struct vmdk *v = NULL;
	char err[512];

	assert_int_equal(vmdk_io_beneath_init(&b, t->path), 0);
	assert_int_equal(mkfifo(tp(t, "d-flat.vmdk"), 0644), 0);
	desc_naming(t, "d-flat.vmdk");
	refused(t, &b.io, -EINVAL, "a FIFO");
	assert_int_equal(unlink(tp(t, "d-flat.vmdk")), 0);
	if (!mknod(tp(t, "d-flat.vmdk"), S_IFCHR | 0644, makedev(1, 5))) {
		refused(t, &b.io, -EINVAL, "a character device");
		assert_int_equal(unlink(tp(t, "d-flat.vmdk")), 0);
	}
	/* A symlink out of the datastore: as the extent ... */
	assert_int_equal(symlink("/dev/zero", tp(t, "d-flat.vmdk")), 0);
	refused(t, &b.io, -ELOOP, "d-flat.vmdk");
	/* ... and as the descriptor. */
	assert_int_equal(symlink("/etc/passwd", tp(t, "s.vmdk")), 0);
	assert_int_equal(
		vmdk_open(&b.io, tp(t, "s.vmdk"), 0, &v, err, sizeof(err)),
		-ELOOP);
	assert_null(v);
	vmdk_io_beneath_fini(&b);
}

/* The exploit of issue 23 at the library: a full clone of a disk whose
 * extent is a device makes nothing. */
static void test_full_clone_of_a_device_makes_nothing(void **state)
{
	struct tdir *t = *state;
	struct vmdk_io_beneath b;
	struct vmdk_clone_opts o = { .keep_type = true };
	struct vmdk_copy_stats st;
	struct stat s;
	char err[512] = "";

	if (mknod(tp(t, "d-flat.vmdk"), S_IFCHR | 0644, makedev(1, 5))) {
		skip();
	}
	desc_naming(t, "d-flat.vmdk");
	assert_int_equal(vmdk_io_beneath_init(&b, t->path), 0);
	assert_int_equal(vmdk_clone_full(&b.io, tp(t, "d.vmdk"),
					 tp(t, "x.vmdk"), &o, &st, err,
					 sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "not a regular file"));
	assert_int_equal(stat(tp(t, "x.vmdk"), &s), -1);
	assert_int_equal(stat(tp(t, "x-flat.vmdk"), &s), -1);
	vmdk_io_beneath_fini(&b);
}

/* Writes @len bytes of @bytes to @path. */
static void write_bytes(const char *path, const void *bytes, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(bytes, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* A descriptor is its text up to the first NUL, as QEMU reads it: bytes
 * after that NUL (CI saw a qemu-img descriptor with some) are ignored. */
static void test_descriptor_bytes_after_its_nul_are_ignored(void **state)
{
	struct tdir *t = *state;
	static const char text[] =
		"# Disk DescriptorFile\nversion=1\nCID=fffffffe\n"
		"parentCID=ffffffff\ncreateType=\"monolithicFlat\"\n"
		"RW 2048 FLAT \"d-flat.vmdk\" 0\n\0\0\0ld tail \"x\" 0\n\0\0";
	char err[512] = "";
	struct vmdk *v = NULL;

	write_bytes(tp(t, "d.vmdk"), text, sizeof(text));
	write_bytes(tp(t, "d-flat.vmdk"), "", 0);
	assert_int_equal(truncate(tp(t, "d-flat.vmdk"), 2048 * 512), 0);
	assert_int_equal(
		vmdk_open(NULL, tp(t, "d.vmdk"), 0, &v, err, sizeof(err)), 0);
	assert_non_null(v);
	vmdk_close(v);
}

/* Binary data before the first NUL is not a descriptor, and says so. */
static void test_binary_descriptor_is_refused(void **state)
{
	struct tdir *t = *state;
	static const unsigned char bytes[] = { 0xeb, 0x63, 0x90, 0x10, 0x8e,
					       0xd0, 0xbc, 0x00, 0x7c, 0x01 };

	write_bytes(tp(t, "d.vmdk"), bytes, sizeof(bytes));
	refused(t, NULL, -EINVAL, "binary data where a descriptor should be");
}

/* Random bytes that happen to hold no control byte before their first
 * NUL (one file in 29) are no line of text: refused as binary, not
 * parsed as a descriptor (t5006's garbage did that once). */
static void test_bytes_without_a_line_are_refused(void **state)
{
	struct tdir *t = *state;
	static const unsigned char bytes[] = { 'g',  'Z',  0xe9, 'e',  0xf1,
					       'u',  'n',  0xb7, 0x00, 0x13,
					       0x7f, 0x00, 0x42 };

	write_bytes(tp(t, "d.vmdk"), bytes, sizeof(bytes));
	refused(t, NULL, -EINVAL, "binary data where a descriptor should be");
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, ft_setup, ft_teardown)
	const struct CMUnitTest tests[] = {
		T(test_fifo_extent_is_refused_without_blocking),
		T(test_fifo_descriptor_is_refused_without_blocking),
		T(test_char_device_extent_is_refused),
		T(test_block_device_extent_is_refused),
		T(test_directory_as_extent_or_descriptor_is_refused),
		T(test_beneath_refuses_devices_fifos_and_symlinks),
		T(test_full_clone_of_a_device_makes_nothing),
		T(test_descriptor_bytes_after_its_nul_are_ignored),
		T(test_binary_descriptor_is_refused),
		T(test_bytes_without_a_line_are_refused),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
