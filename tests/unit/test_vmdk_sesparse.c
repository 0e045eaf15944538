// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of ESXi seSparse deltas, read-only: the entry types of a bare
 * file (allocated in either half of the split index, zero, unmapped), the
 * check's grain count, writes refused, and every corrupted header, volatile
 * header, directory and table field giving its exact error.
 */
#include "tests/unit/test_vmdk.h"
#include "vmdk/vmdk_int.h"

#define SECTORS 2048u /* 1 MiB disk: 256 grains, one grain table */
#define GD_SECTOR 16u
#define GT_SECTOR 17u
#define GRAINS_SECTOR (GT_SECTOR + VMDK_SESPARSE_GT_SECTORS)
#define GRAIN_BYTES (VMDK_SESPARSE_GRAIN_SECTORS * 512u)

static uint64_t allocated(uint64_t slot)
{
	return (uint64_t)VMDK_SESPARSE_GTE_ALLOCATED << 60 |
	       (slot & 0xfffu) << 48 | slot >> 12;
}

/*
 * Guest grain 0 in slot 1 ('X'), grain 1 zero, grain 2 unmapped, grain 3
 * in slot 0 ('Y'); the grains region has room for 4096 + 2 slots, and
 * grain 5 sits in slot 4097 ('Z'), whose index needs both halves.
 */
static void make_sesparse(const char *path)
{
	struct vmdk_sesparse_header_disk h;
	struct vmdk_sesparse_volatile_disk vol;
	static uint64_t gt[VMDK_SESPARSE_GTES];
	uint64_t gd = (uint64_t)VMDK_SESPARSE_GDE_HIGH << 32;
	uint8_t grain[GRAIN_BYTES];
	int fd;

	memset(&h, 0, sizeof(h));
	h.magic = VMDK_SESPARSE_MAGIC;
	h.version = VMDK_SESPARSE_VERSION;
	h.capacity = SECTORS;
	h.grain_size = VMDK_SESPARSE_GRAIN_SECTORS;
	h.grain_table_size = VMDK_SESPARSE_GT_SECTORS;
	h.volatile_header_offset = 1;
	h.volatile_header_size = 1;
	h.grain_dir_offset = GD_SECTOR;
	h.grain_dir_size = 1;
	h.grain_tables_offset = GT_SECTOR;
	h.grain_tables_size = VMDK_SESPARSE_GT_SECTORS;
	h.grains_offset = GRAINS_SECTOR;
	h.grains_size = 4098u * VMDK_SESPARSE_GRAIN_SECTORS;
	memset(&vol, 0, sizeof(vol));
	vol.magic = VMDK_SESPARSE_VOLATILE_MAGIC;
	memset(gt, 0, sizeof(gt));
	gt[0] = allocated(1);
	gt[1] = (uint64_t)VMDK_SESPARSE_GTE_ZERO << 60;
	gt[2] = (uint64_t)VMDK_SESPARSE_GTE_UNMAPPED << 60 | 0x123;
	gt[3] = allocated(0);
	gt[5] = allocated(4097);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, &h, sizeof(h), 0), sizeof(h));
	assert_int_equal(pwrite(fd, &vol, sizeof(vol), 512), sizeof(vol));
	assert_int_equal(pwrite(fd, &gd, 8, GD_SECTOR * 512), 8);
	assert_int_equal(pwrite(fd, gt, sizeof(gt), GT_SECTOR * 512),
			 sizeof(gt));
	for (unsigned i = 0; i < 3; i++) {
		static const struct {
			uint64_t slot;
			char c;
		} g[] = { { 0, 'Y' }, { 1, 'X' }, { 4097, 'Z' } };

		memset(grain, g[i].c, sizeof(grain));
		assert_int_equal(pwrite(fd, grain, sizeof(grain),
					(off_t)(GRAINS_SECTOR * 512 +
						g[i].slot * GRAIN_BYTES)),
				 sizeof(grain));
	}
	close(fd);
}

static void test_sesparse_bare_file_reads_every_entry_type(void **state)
{
	struct tdir *t = *state;
	const char *p = tp(t, "d-sesparse.vmdk");
	static const char want[] = { 'X', 0, 0, 'Y', 0, 'Z', 0 };
	uint8_t buf[GRAIN_BYTES];
	struct vmdk_info in;
	struct vmdk *v;

	make_sesparse(p);
	v = open_ok(p, 0);
	assert_int_equal(vmdk_size_bytes(v), SECTORS * 512);
	for (unsigned g = 0; g < sizeof(want); g++) {
		assert_int_equal(vmdk_pread(v, buf, sizeof(buf),
					    (uint64_t)g * GRAIN_BYTES),
				 0);
		assert_int_equal(buf[0], want[g]);
		assert_int_equal(buf[GRAIN_BYTES - 1], want[g]);
	}
	assert_int_equal(vmdk_info_get(v, &in), 0);
	assert_string_equal(in.create_type, "seSparse");
	assert_string_equal(in.provisioning, "seSparse");
	assert_int_equal(vmdk_pwrite(v, buf, 1, 0), -EROFS);
	vmdk_close(v);
}

static void test_sesparse_check_counts_grains(void **state)
{
	struct tdir *t = *state;
	struct vmdk_check_report rep;

	make_sesparse(tp(t, "c.vmdk"));
	assert_int_equal(
		vmdk_check(NULL, tp(t, "c.vmdk"), NULL, NULL, &rep, NULL, 0),
		0);
	assert_int_equal(rep.errors, 0);
	assert_int_equal(rep.allocated_grains, 3);
}

struct corrupt {
	uint64_t off;
	uint64_t value;
	int err;
	const char *msg;
};

static const struct corrupt corrupts[] = {
	{ 8, 0x0000000200000002ull, -ENOTSUP,
	  "version 0x0000000200000002 is not 2.1" },
	{ 16, 0, -EINVAL, "capacity 0 (sectors)" },
	{ 16, 1ull << 38, -EINVAL, "is 0 or over 64 TiB" },
	{ 24, 16, -ENOTSUP, "grain size 16 (sectors) is not 8" },
	{ 32, 128, -ENOTSUP, "grain table size 128 (sectors) is not 64" },
	{ 40, 1, -ENOTSUP, "flags 0x0000000000000001: unknown bits" },
	{ 56, 1, -ENOTSUP, "reserved fields or padding not zero" },
	{ 80, 0, -EINVAL, "volatile header offset 0" },
	{ 80, 1ull << 30, -EINVAL, "volatile header at sector 1073741824" },
	{ 88, 0, -EINVAL, "volatile header size is 0" },
	{ 128, 1ull << 41, -EINVAL, "grain directory offset 2199023255552" },
	{ 136, 0, -EINVAL, "grain directory of 0 sectors holds 0 entries" },
	{ 152, 1ull << 50, -EINVAL, "grain tables offset 17 / size" },
	{ 192, 0, -EINVAL, "grains offset 0" },
	{ 512, 0xcafebabe, -EINVAL,
	  "volatile header magic 0x00000000cafebabe" },
	{ 512 + 24, 1, -ENOTSUP, "its journal must be replayed first" },
	{ 512 + 40, 1, -ENOTSUP, "volatile header padding not zero" },
	{ GD_SECTOR * 512, 0x2000000000000000ull, -EINVAL,
	  "grain directory entry 0 names no grain table" },
	{ GD_SECTOR * 512, 0x1000000000000001ull, -EINVAL,
	  "grain directory entry 0 names no grain table" },
};

static void test_sesparse_corrupt_field_gives_exact_error(void **state)
{
	struct tdir *t = *state;
	const char *p = tp(t, "c.vmdk");
	struct vmdk *v;
	char err[512];

	for (size_t i = 0; i < ARRAY_SIZE(corrupts); i++) {
		make_sesparse(p);
		poke64(p, corrupts[i].off, corrupts[i].value);
		err[0] = '\0';
		int r = vmdk_open(NULL, p, 0, &v, err, sizeof(err));

		if (r != corrupts[i].err || !strstr(err, corrupts[i].msg)) {
			fail_msg("case %zu: got %d '%s', want %d '%s'", i, r,
				 err, corrupts[i].err, corrupts[i].msg);
		}
	}
}

/* Table entries no reader may follow fail the read and show in the check. */
static void test_sesparse_bad_grain_entry_fails_read(void **state)
{
	struct tdir *t = *state;
	const char *p = tp(t, "c.vmdk");
	struct vmdk_check_report rep;
	uint8_t buf[512];
	struct vmdk *v;

	make_sesparse(p);
	poke64(p, GT_SECTOR * 512 + 0 * 8, 0x5ull << 60); /* no such type */
	poke64(p, GT_SECTOR * 512 + 3 * 8, 0x42); /* type 0, low bits set */
	poke64(p, GT_SECTOR * 512 + 5 * 8, allocated(4098)); /* past region */
	poke64(p, GT_SECTOR * 512 + 6 * 8, allocated(4000)); /* in a hole */
	v = open_ok(p, 0);
	assert_int_equal(vmdk_pread(v, buf, sizeof(buf), 0), -EINVAL);
	assert_int_equal(vmdk_pread(v, buf, sizeof(buf), 3 * GRAIN_BYTES),
			 -EINVAL);
	assert_int_equal(vmdk_pread(v, buf, sizeof(buf), 5 * GRAIN_BYTES),
			 -EINVAL);
	/* Slot 4000 lies inside the file (a hole): it reads as zeros. */
	assert_int_equal(vmdk_pread(v, buf, sizeof(buf), 6 * GRAIN_BYTES), 0);
	assert_int_equal(buf[0], 0);
	vmdk_close(v);
	assert_int_equal(vmdk_check(NULL, p, NULL, NULL, &rep, NULL, 0), 0);
	assert_int_equal(rep.errors, 3);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, tdir_setup, tdir_teardown)
	const struct CMUnitTest tests[] = {
		T(test_sesparse_bare_file_reads_every_entry_type),
		T(test_sesparse_check_counts_grains),
		T(test_sesparse_corrupt_field_gives_exact_error),
		T(test_sesparse_bad_grain_entry_fails_read),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
