// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of ESX vmfsSparse (COWD) redo logs, read-only: a bare COWD
 * file, a COWD delta over a flat parent through its descriptor, writes
 * refused, consolidation into the parent, and corrupted header fields.
 */
#include "tests/unit/test_vmdk.h"
#include "vmdk/vmdk_int.h"

#define SECTORS 2048u /* 1 MiB disk */
#define GD_SECTOR 4u
#define GT_SECTOR 5u
#define DATA_SECTOR (GT_SECTOR + 32u)

/*
 * A COWD file with 1-sector grains; disk sectors 3 and 7 hold 'X' and 'Y'
 * bytes, stored at DATA_SECTOR and DATA_SECTOR + 1.
 */
static void make_cowd(const char *path, uint32_t capacity)
{
	struct vmdk_cowd_header_disk h;
	uint32_t gt[4096] = { 0 };
	uint8_t data[1024];
	uint32_t gd = GT_SECTOR;
	int fd;

	memset(&h, 0, sizeof(h));
	h.magic_number = VMDK_COWD_MAGIC;
	h.version = 1;
	h.flags = 3;
	h.num_sectors = capacity;
	h.grain_size = 1;
	h.gd_offset = GD_SECTOR;
	h.num_gd_entries = (capacity + 4095) / 4096;
	h.free_sector = DATA_SECTOR + 2;
	gt[3] = DATA_SECTOR;
	gt[7] = DATA_SECTOR + 1;
	memset(data, 'X', 512);
	memset(data + 512, 'Y', 512);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, &h, sizeof(h), 0), sizeof(h));
	assert_int_equal(pwrite(fd, &gd, 4, GD_SECTOR * 512), 4);
	assert_int_equal(pwrite(fd, gt, sizeof(gt), GT_SECTOR * 512),
			 sizeof(gt));
	assert_int_equal(pwrite(fd, data, sizeof(data), DATA_SECTOR * 512),
			 sizeof(data));
	close(fd);
}

static void test_cowd_bare_file_reads_its_grains(void **state)
{
	struct tdir *t = *state;
	const char *p = tp(t, "d-delta.vmdk");
	uint8_t buf[8 * 512];
	struct vmdk_info in;
	struct vmdk *v;

	make_cowd(p, SECTORS);
	v = open_ok(p, 0);
	assert_int_equal(vmdk_size_bytes(v), SECTORS * 512);
	assert_int_equal(vmdk_pread(v, buf, sizeof(buf), 0), 0);
	for (unsigned s = 0; s < 8; s++) {
		uint8_t want = s == 3 ? 'X' : s == 7 ? 'Y' : 0;

		assert_int_equal(buf[s * 512], want);
		assert_int_equal(buf[s * 512 + 511], want);
	}
	assert_int_equal(vmdk_info_get(v, &in), 0);
	assert_string_equal(in.create_type, "vmfsSparse");
	assert_string_equal(in.provisioning, "vmfsSparse");
	vmdk_close(v);
}

static void test_cowd_delta_reads_parent_and_refuses_writes(void **state)
{
	struct tdir *t = *state;
	struct vmdk_create_opts o = { .size_bytes = SECTORS * 512,
				      .type = VMDK_TYPE_THIN };
	uint8_t buf[1024], p[512];
	char err[512], text[512];
	struct vmdk_info in;
	struct vmdk *v;

	assert_int_equal(
		vmdk_create(NULL, tp(t, "d.vmdk"), &o, err, sizeof(err)), 0);
	memset(p, 'P', sizeof(p));
	v = open_ok(tp(t, "d.vmdk"), VMDK_OPEN_RDWR);
	assert_int_equal(vmdk_pwrite(v, p, 512, 2 * 512), 0);
	assert_int_equal(vmdk_pwrite(v, p, 512, 3 * 512), 0);
	assert_int_equal(vmdk_info_get(v, &in), 0);
	vmdk_close(v);
	make_cowd(tp(t, "d-000001-delta.vmdk"), SECTORS);
	snprintf(text, sizeof(text),
		 "version=1\nCID=00000002\nparentCID=%08x\n"
		 "createType=\"vmfsSparse\"\n"
		 "parentFileNameHint=\"d.vmdk\"\n"
		 "RW %u VMFSSPARSE \"d-000001-delta.vmdk\"\n",
		 in.cid, SECTORS);
	write_text(tp(t, "d-000001.vmdk"), text);
	v = open_ok(tp(t, "d-000001.vmdk"), VMDK_OPEN_RDWR);
	assert_int_equal(vmdk_pread(v, buf, sizeof(buf), 2 * 512), 0);
	assert_int_equal(buf[0], 'P'); /* sector 2 from the parent */
	assert_int_equal(buf[512], 'X'); /* sector 3 from the delta */
	assert_int_equal(vmdk_pwrite(v, buf, 1, 0), -EROFS);
	vmdk_close(v);
	assert_int_equal(vmdk_consolidate(NULL, tp(t, "d-000001.vmdk"), NULL,
					  err, sizeof(err)),
			 0);
	assert_int_equal(access(tp(t, "d-000001-delta.vmdk"), F_OK), -1);
	v = open_ok(tp(t, "d.vmdk"), 0);
	assert_int_equal(vmdk_pread(v, buf, sizeof(buf), 2 * 512), 0);
	assert_int_equal(buf[0], 'P');
	assert_int_equal(buf[512], 'X');
	assert_int_equal(vmdk_pread(v, buf, 512, 7 * 512), 0);
	assert_int_equal(buf[0], 'Y');
	vmdk_close(v);
}

static void test_cowd_check_counts_grains(void **state)
{
	struct tdir *t = *state;
	struct vmdk_check_report rep;

	make_cowd(tp(t, "c.vmdk"), SECTORS);
	assert_int_equal(
		vmdk_check(NULL, tp(t, "c.vmdk"), NULL, NULL, &rep, NULL, 0),
		0);
	assert_int_equal(rep.errors, 0);
	assert_int_equal(rep.allocated_grains, 2);
}

struct corrupt {
	uint64_t off;
	uint32_t value;
	int err;
	const char *msg;
};

static const struct corrupt corrupts[] = {
	{ 4, 2, -ENOTSUP, "version 2 is not 1" },
	{ 8, 0x10, -EINVAL, "flags 0x00000010: unknown bits" },
	{ 12, 0, -EINVAL, "numSectors is 0" },
	{ 16, 3, -EINVAL, "grainSize 3" },
	{ 16, 0, -EINVAL, "grainSize 0" },
	{ 20, 2, -EINVAL, "gdOffset 2" },
	{ 20, 1u << 30, -EINVAL, "gdOffset 1073741824" },
	{ 24, 0, -EINVAL, "numGDEntries 0" },
	{ 24, 1u << 23, -EINVAL, "numGDEntries 8388608" },
	{ 28, 1, -EINVAL, "freeSector 1" },
	{ 1648, 7, -EINVAL, "uncleanShutdown 7" },
	{ GD_SECTOR * 512, 1u << 30, -EINVAL, "grain directory entry 0" },
	{ GD_SECTOR * 512, 2, -EINVAL, "or in its header" },
};

static void test_cowd_corrupt_field_gives_exact_error(void **state)
{
	struct tdir *t = *state;
	const char *p = tp(t, "c.vmdk");
	struct vmdk *v;
	char err[512];

	for (size_t i = 0; i < ARRAY_SIZE(corrupts); i++) {
		make_cowd(p, SECTORS);
		poke32(p, corrupts[i].off, corrupts[i].value);
		err[0] = '\0';
		int r = vmdk_open(NULL, p, 0, &v, err, sizeof(err));

		if (r != corrupts[i].err || !strstr(err, corrupts[i].msg)) {
			fail_msg("case %zu: got %d '%s', want %d '%s'", i, r,
				 err, corrupts[i].err, corrupts[i].msg);
		}
	}
}

static void test_cowd_grain_past_eof_fails_read(void **state)
{
	struct tdir *t = *state;
	const char *p = tp(t, "c.vmdk");
	struct vmdk_check_report rep;
	uint8_t buf[512];
	struct vmdk *v;

	make_cowd(p, SECTORS);
	poke32(p, GT_SECTOR * 512 + 3 * 4, 1u << 30);
	poke32(p, GT_SECTOR * 512 + 7 * 4, 1);
	v = open_ok(p, 0);
	assert_int_equal(vmdk_pread(v, buf, sizeof(buf), 3 * 512), -EINVAL);
	assert_int_equal(vmdk_pread(v, buf, sizeof(buf), 7 * 512), -EINVAL);
	assert_int_equal(vmdk_pread(v, buf, sizeof(buf), 0), 0);
	vmdk_close(v);
	assert_int_equal(vmdk_check(NULL, p, NULL, NULL, &rep, NULL, 0), 0);
	assert_int_equal(rep.errors, 2);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, tdir_setup, tdir_teardown)
	const struct CMUnitTest tests[] = {
		T(test_cowd_bare_file_reads_its_grains),
		T(test_cowd_delta_reads_parent_and_refuses_writes),
		T(test_cowd_check_counts_grains),
		T(test_cowd_corrupt_field_gives_exact_error),
		T(test_cowd_grain_past_eof_fails_read),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
