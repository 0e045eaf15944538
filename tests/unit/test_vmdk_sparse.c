// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of hosted sparse extents (vmdk/sparse.c, grain.c, rw.c): the
 * layout we create, reads and writes across grains, the allocation order
 * (grain, then table entry, then directory), ENOSPC, crash points, and one
 * corrupted field at a time with the exact error (qemu-iotests 059 style).
 */
#include <zlib.h>

#include "tests/unit/test_vmdk.h"
#include "vmdk/vmdk_int.h"

#define MIB (1024u * 1024u)
#define GRAIN 65536u

static void make_sparse(struct tdir *t, const char *name, uint64_t size)
{
	struct vmdk_create_opts o = { .size_bytes = size,
				      .type = VMDK_TYPE_SPARSE };
	char err[256];

	assert_int_equal(vmdk_create(NULL, tp(t, name), &o, err, sizeof(err)),
			 0);
}

static struct vmdk *open_rw(const struct vmdk_io *io, const char *path)
{
	struct vmdk *v = NULL;
	char err[256];
	int r = vmdk_open(io, path, VMDK_OPEN_RDWR, &v, err, sizeof(err));

	if (r) {
		fail_msg("open %s: %d %s", path, r, err);
	}
	return v;
}

static void read_header(const char *path, struct vmdk_sparse_header_disk *h)
{
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, h, sizeof(*h), 0), sizeof(*h));
	close(fd);
}

static uint32_t read_u32(const char *path, uint64_t off)
{
	uint32_t v;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &v, 4, (off_t)off), 4);
	close(fd);
	return v;
}

static void test_sparse_create_uses_qemu_layout(void **state)
{
	struct tdir *t = *state;
	struct vmdk_sparse_header_disk h;
	const char *p = tp(t, "s.vmdk");

	make_sparse(t, "s.vmdk", 100 * MIB);
	read_header(p, &h);
	assert_int_equal(h.magic_number, VMDK_SPARSE_MAGIC);
	assert_int_equal(h.version, 2);
	assert_int_equal(h.flags, 0x7);
	assert_int_equal(h.capacity, 204800);
	assert_int_equal(h.grain_size, 128);
	assert_int_equal(h.descriptor_offset, 1);
	assert_int_equal(h.descriptor_size, 20);
	assert_int_equal(h.num_gtes_per_gt, 512);
	/* 4 tables: rgd 21 (1 sector) + 4 x 4 sectors, then gd. */
	assert_int_equal(h.rgd_offset, 21);
	assert_int_equal(h.gd_offset, 38);
	assert_int_equal(h.over_head, 128);
	assert_int_equal(file_size(p), 128 * 512);
	assert_int_equal(read_u32(p, 21 * 512), 22);
	assert_int_equal(read_u32(p, 21 * 512 + 12), 34);
	assert_int_equal(read_u32(p, 38 * 512), 39);
}

static void test_sparse_write_read_across_grains(void **state)
{
	struct tdir *t = *state;
	const char *p = tp(t, "s.vmdk");
	uint8_t *w = malloc(200000);
	uint8_t *r = malloc(200000);
	struct vmdk *v;

	make_sparse(t, "s.vmdk", 10 * MIB);
	fill_pattern(w, 200000, 1);
	v = open_rw(NULL, p);
	assert_int_equal(vmdk_pwrite(v, w, 200000, 100000), 0);
	assert_int_equal(vmdk_pread(v, r, 200000, 100000), 0);
	assert_memory_equal(r, w, 200000);
	assert_int_equal(vmdk_pread(v, r, 4096, 5 * MIB), 0);
	for (int i = 0; i < 4096; i++) {
		assert_int_equal(r[i], 0);
	}
	assert_int_equal(vmdk_pread(v, r, 1, 10 * MIB), -EINVAL);
	assert_int_equal(vmdk_pwrite(v, w, 2, 10 * MIB - 1), -EINVAL);
	vmdk_close(v);
	/* grains 1..4 were written: four grains after the 64 KiB overhead */
	assert_int_equal(file_size(p), 5 * GRAIN);
	v = open_rw(NULL, p);
	assert_int_equal(vmdk_pread(v, r, 200000, 100000), 0);
	assert_memory_equal(r, w, 200000);
	vmdk_close(v);
	free(w);
	free(r);
}

static void test_sparse_block_status_reports_runs(void **state)
{
	struct tdir *t = *state;
	uint8_t buf[GRAIN];
	enum vmdk_block st;
	uint64_t run;
	struct vmdk *v;

	make_sparse(t, "s.vmdk", 10 * MIB);
	v = open_rw(NULL, tp(t, "s.vmdk"));
	fill_pattern(buf, sizeof(buf), 3);
	assert_int_equal(vmdk_pwrite(v, buf, GRAIN, 2 * GRAIN), 0);
	assert_int_equal(vmdk_pwrite(v, buf, GRAIN, 3 * GRAIN), 0);
	assert_int_equal(vmdk_block_status(v, 0, 10 * MIB, &st, &run), 0);
	assert_int_equal(st, VMDK_BLOCK_ZERO);
	assert_int_equal(run, 2 * GRAIN);
	assert_int_equal(vmdk_block_status(v, 2 * GRAIN, 10 * MIB - 2 * GRAIN,
					   &st, &run),
			 0);
	assert_int_equal(st, VMDK_BLOCK_DATA);
	assert_int_equal(run, 2 * GRAIN);
	assert_int_equal(vmdk_block_status(v, 4 * GRAIN + 5, 100, &st, &run),
			 0);
	assert_int_equal(st, VMDK_BLOCK_ZERO);
	assert_int_equal(run, 100);
	vmdk_close(v);
}

static void test_sparse_alloc_writes_grain_then_table(void **state)
{
	struct tdir *t = *state;
	const char *p = tp(t, "s.vmdk");
	struct vmdk_sparse_header_disk h;
	struct fault_io f;
	uint8_t buf[100];
	uint64_t end;
	struct vmdk *v;

	make_sparse(t, "s.vmdk", 10 * MIB);
	read_header(p, &h);
	fault_init(&f, FAULT_PWRITE);
	v = open_rw(&f.io, p);
	memset(buf, 0xab, sizeof(buf));
	assert_int_equal(vmdk_pwrite(v, buf, sizeof(buf), 0), 0);
	end = file_size(p);
	fault_arm(&f, 0, 0, false);
	assert_int_equal(vmdk_pwrite(v, buf, sizeof(buf), 5 * GRAIN + 7), 0);
	assert_int_equal(f.n_log, 3);
	assert_int_equal(f.log_off[0], end); /* the whole grain, appended */
	assert_int_equal(f.log_len[0], GRAIN);
	/* then its entry in the table, then in the redundant table */
	assert_int_equal(f.log_off[1],
			 (uint64_t)read_u32(p, h.gd_offset * 512) * 512 +
				 5 * 4);
	assert_int_equal(f.log_len[1], 4);
	assert_int_equal(f.log_off[2],
			 (uint64_t)read_u32(p, h.rgd_offset * 512) * 512 +
				 5 * 4);
	vmdk_close(v);
}

static void test_sparse_new_table_is_written_before_directory(void **state)
{
	struct tdir *t = *state;
	const char *p = tp(t, "s.vmdk");
	struct vmdk_sparse_header_disk h;
	struct vmdk_check_report rep;
	uint8_t w[512], r[512];
	struct fault_io f;
	uint64_t end;
	struct vmdk *v;

	make_sparse(t, "s.vmdk", 64 * MIB); /* two tables */
	read_header(p, &h);
	poke32(p, h.gd_offset * 512 + 4, 0);
	poke32(p, h.rgd_offset * 512 + 4, 0);
	fault_init(&f, FAULT_PWRITE);
	v = open_rw(&f.io, p);
	fill_pattern(w, sizeof(w), 9);
	assert_int_equal(vmdk_pwrite(v, w, 1, 0), 0); /* CID update */
	end = file_size(p);
	fault_arm(&f, 0, 0, false);
	assert_int_equal(vmdk_pwrite(v, w, sizeof(w), 32 * MIB + 512), 0);
	assert_int_equal(f.n_log, 5);
	assert_int_equal(f.log_off[0], end); /* grain */
	assert_int_equal(f.log_off[1], end + GRAIN); /* table */
	assert_int_equal(f.log_len[1], 2048);
	assert_int_equal(f.log_off[2], end + GRAIN + 2048); /* its copy */
	assert_int_equal(f.log_off[3], h.rgd_offset * 512 + 4);
	assert_int_equal(f.log_off[4], h.gd_offset * 512 + 4);
	vmdk_close(v);
	v = open_rw(NULL, p);
	assert_int_equal(vmdk_pread(v, r, sizeof(r), 32 * MIB + 512), 0);
	assert_memory_equal(r, w, sizeof(r));
	vmdk_close(v);
	assert_int_equal(vmdk_check(NULL, p, NULL, NULL, &rep, NULL, 0), 0);
	assert_int_equal(rep.errors, 0);
	assert_int_equal(rep.allocated_grains, 2);
}

static void test_sparse_zero_grain_of_base_is_not_stored(void **state)
{
	struct tdir *t = *state;
	const char *p = tp(t, "s.vmdk");
	uint8_t *zero = calloc(1, GRAIN);
	struct vmdk *v;

	make_sparse(t, "s.vmdk", 10 * MIB);
	v = open_rw(NULL, p);
	assert_int_equal(vmdk_pwrite(v, zero, GRAIN, 3 * GRAIN), 0);
	vmdk_close(v);
	assert_int_equal(file_size(p), GRAIN);
	free(zero);
}

static void test_sparse_enospc_stays_enospc(void **state)
{
	struct tdir *t = *state;
	uint8_t buf[4096] = { 1 };
	struct fault_io f;
	struct vmdk *v;

	make_sparse(t, "s.vmdk", 10 * MIB);
	fault_init(&f, FAULT_PWRITE);
	v = open_rw(&f.io, tp(t, "s.vmdk"));
	assert_int_equal(vmdk_pwrite(v, buf, 1, 0), 0);
	fault_arm(&f, 1, ENOSPC, true);
	assert_int_equal(vmdk_pwrite(v, buf, sizeof(buf), 7 * GRAIN), -ENOSPC);
	fault_arm(&f, 2, ENOSPC, false); /* the table entry fails */
	assert_int_equal(vmdk_pwrite(v, buf, sizeof(buf), 9 * GRAIN), -ENOSPC);
	vmdk_close(v);
}

static void test_sparse_failed_write_never_leaves_dangling_entry(void **state)
{
	struct tdir *t = *state;
	const char *p = tp(t, "s.vmdk");
	uint8_t w[3000], r[3000], zero[3000] = { 0 };
	struct vmdk_check_report rep;
	struct fault_io f;
	struct vmdk *v;

	fill_pattern(w, sizeof(w), 5);
	for (unsigned long n = 1; n <= 4; n++) {
		unlink(p);
		make_sparse(t, "s.vmdk", 10 * MIB);
		fault_init(&f, FAULT_PWRITE);
		v = open_rw(&f.io, p);
		assert_int_equal(vmdk_pwrite(v, w, 1, 8 * MIB), 0);
		fault_arm(&f, n, EIO, true);
		int rc = vmdk_pwrite(v, w, sizeof(w), GRAIN + 100);

		assert_int_equal(rc, n <= 3 ? -EIO : 0);
		vmdk_close(v);
		assert_int_equal(vmdk_check(NULL, p, NULL, NULL, &rep, NULL, 0),
				 0);
		assert_int_equal(rep.errors, 0);
		/* Only a crash between the two table writes leaves them apart.
		 */
		assert_int_equal(rep.warnings, n == 3 ? 1 : 0);
		v = open_rw(NULL, p);
		assert_int_equal(vmdk_pread(v, r, sizeof(r), GRAIN + 100), 0);
		/* Old content (zeros) or new, never garbage. */
		assert_true(!memcmp(r, zero, sizeof(r)) ||
			    !memcmp(r, w, sizeof(r)));
		assert_true(n != 1 || !memcmp(r, zero, sizeof(r)));
		vmdk_close(v);
	}
}

static void test_sparse_past_2tib_is_efbig(void **state)
{
	struct tdir *t = *state;
	uint8_t buf[512] = { 1 };
	struct fault_io f;
	struct vmdk *v;

	make_sparse(t, "s.vmdk", 10 * MIB);
	fault_init(&f, 0);
	f.fstat_size = (int64_t)(UINT32_MAX - 64) * 512;
	v = open_rw(&f.io, tp(t, "s.vmdk"));
	assert_int_equal(vmdk_pwrite(v, buf, sizeof(buf), 0), -EFBIG);
	vmdk_close(v);
}

struct corrupt {
	uint64_t off;
	unsigned width;
	uint64_t value;
	int err;
	const char *msg;
};

static const struct corrupt corrupts[] = {
	{ 0, 4, 0x12345678, -EINVAL, "not a VMDK" },
	{ 4, 4, 9, -ENOTSUP, "version 9 is not 1, 2 or 3" },
	{ 8, 4, 0x10003, -ENOTSUP, "compressed grains without markers" },
	{ 8, 4, 0x30003, -EINVAL, "compressAlgorithm 0 is not deflate" },
	{ 8, 4, 0x103, -EINVAL, "flags 0x00000103: unknown bits" },
	{ 12, 8, 0, -EINVAL, "capacity 0" },
	{ 12, 8, 1ull << 40, -EINVAL, "capacity 1099511627776" },
	{ 12, 8, 100, -EINVAL, "smaller than its extent line" },
	{ 20, 8, 3, -EINVAL, "grainSize 3" },
	{ 20, 8, 4096, -EINVAL, "grainSize 4096" },
	{ 28, 8, 1ull << 30, -EINVAL, "descriptorOffset 1073741824" },
	{ 36, 8, 4096, -EINVAL, "descriptorSize 4096" },
	{ 44, 4, 1024, -EINVAL, "numGTEsPerGT 1024" },
	{ 44, 4, 0, -EINVAL, "numGTEsPerGT 0" },
	{ 48, 8, 1ull << 30, -EINVAL, "rgdOffset 1073741824" },
	{ 56, 8, 1ull << 30, -EINVAL, "gdOffset 1073741824" },
	{ 56, 8, 0, -EINVAL, "gdOffset 0" },
	{ 56, 8, 2, -EINVAL, "gdOffset 2: overlaps the descriptor" },
	{ 56, 8, ~0ull, -EINVAL, "footer without compressed grains" },
	{ 64, 8, 1ull << 30, -EINVAL, "overHead 1073741824" },
	{ 64, 8, 5, -EINVAL, "overHead 5" },
	{ 72, 1, 2, -EINVAL, "uncleanShutdown 2" },
	{ 73, 1, 'x', -EINVAL, "text-mode transfer" },
	{ 77, 2, 1, -EINVAL, "compressAlgorithm 1" },
};

static void test_sparse_corrupt_header_field_gives_exact_error(void **state)
{
	struct tdir *t = *state;
	const char *p = tp(t, "s.vmdk");
	struct vmdk *v = NULL;
	char err[512];

	for (size_t i = 0; i < ARRAY_SIZE(corrupts); i++) {
		const struct corrupt *c = &corrupts[i];

		unlink(p);
		make_sparse(t, "s.vmdk", 10 * MIB);
		poke(p, c->off, &c->value, c->width);
		err[0] = '\0';
		int r = vmdk_open(NULL, p, 0, &v, err, sizeof(err));

		if (r != c->err || !strstr(err, c->msg) || !strstr(err, p)) {
			fail_msg("field at %" PRIu64
				 ": got %d '%s', want %d '%s'",
				 c->off, r, err, c->err, c->msg);
		}
	}
}

static void test_sparse_huge_directory_is_refused(void **state)
{
	struct tdir *t = *state;
	const char *p = tp(t, "s.vmdk");
	struct vmdk *v;
	char err[512];

	make_sparse(t, "s.vmdk", 10 * MIB);
	poke64(p, 12, 1ull << 37); /* capacity 64 TiB */
	poke64(p, 20, 1); /* 1-sector grains */
	poke32(p, 44, 1); /* one entry per table */
	assert_int_equal(vmdk_open(NULL, p, 0, &v, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "grain directory of 137438953472 entries "
				    "exceeds 4194304"));
}

static void test_sparse_directory_entry_past_eof_is_refused(void **state)
{
	struct tdir *t = *state;
	const char *p = tp(t, "s.vmdk");
	struct vmdk_sparse_header_disk h;
	struct vmdk *v;
	char err[512];

	make_sparse(t, "s.vmdk", 10 * MIB);
	read_header(p, &h);
	poke32(p, h.gd_offset * 512, 1u << 30);
	assert_int_equal(vmdk_open(NULL, p, 0, &v, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "grain directory entry 0: grain table at "
				    "sector 1073741824 outside the file"));
	poke32(p, h.gd_offset * 512, 3); /* inside the descriptor */
	assert_int_equal(vmdk_open(NULL, p, 0, &v, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "or in its header"));
}

static void test_sparse_bad_table_entry_fails_io_without_writing(void **state)
{
	struct tdir *t = *state;
	const char *p = tp(t, "s.vmdk");
	struct vmdk_sparse_header_disk h, h2;
	uint8_t buf[512] = { 7 };
	uint64_t gt, size;
	struct vmdk *v;

	make_sparse(t, "s.vmdk", 10 * MIB);
	read_header(p, &h);
	gt = (uint64_t)read_u32(p, h.gd_offset * 512) * 512;
	size = file_size(p);
	poke32(p, gt + 4 * 2, 0x7fffffff); /* grain 2 past end of file */
	poke32(p, gt + 4 * 3, 2); /* grain 3 inside the header */
	v = open_rw(NULL, p);
	assert_int_equal(vmdk_pread(v, buf, sizeof(buf), 2 * GRAIN), -EINVAL);
	assert_int_equal(vmdk_pwrite(v, buf, sizeof(buf), 2 * GRAIN), -EINVAL);
	assert_int_equal(vmdk_pread(v, buf, sizeof(buf), 3 * GRAIN), -EINVAL);
	assert_int_equal(vmdk_pwrite(v, buf, sizeof(buf), 3 * GRAIN), -EINVAL);
	vmdk_close(v);
	assert_int_equal(file_size(p), size);
	read_header(p, &h2);
	assert_memory_equal(&h, &h2, sizeof(h));
}

static void test_sparse_truncated_file_is_refused(void **state)
{
	struct tdir *t = *state;
	const char *p = tp(t, "s.vmdk");
	struct vmdk *v;
	char err[512];

	make_sparse(t, "s.vmdk", 10 * MIB);
	assert_int_equal(truncate(p, 100), 0);
	assert_int_equal(vmdk_open(NULL, p, 0, &v, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "descriptorOffset 1 descriptorSize 20"));
	assert_int_equal(truncate(p, 0), 0);
	assert_int_equal(vmdk_open(NULL, p, 0, &v, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no version line"));
}

static void test_sparse_copied_file_is_its_own_extent(void **state)
{
	struct tdir *t = *state;
	uint8_t w[100], r[100];
	char cmd[1200];
	struct vmdk *v;

	make_sparse(t, "a.vmdk", 10 * MIB);
	snprintf(cmd, sizeof(cmd), "cp %s %s", tp(t, "a.vmdk"),
		 tp(t, "b.vmdk"));
	assert_int_equal(system(cmd), 0);
	fill_pattern(w, sizeof(w), 2);
	v = open_rw(NULL, tp(t, "b.vmdk"));
	assert_int_equal(vmdk_pwrite(v, w, sizeof(w), 0), 0);
	vmdk_close(v);
	assert_int_equal(file_size(tp(t, "a.vmdk")), GRAIN);
	assert_int_equal(file_size(tp(t, "b.vmdk")), 2 * GRAIN);
	v = open_rw(NULL, tp(t, "b.vmdk"));
	assert_int_equal(vmdk_pread(v, r, sizeof(r), 0), 0);
	assert_memory_equal(r, w, sizeof(r));
	vmdk_close(v);
}

static void test_sparse_embedded_descriptor_of_two_extents_refused(void **state)
{
	struct tdir *t = *state;
	const char *p = tp(t, "s.vmdk");
	const char text[] =
		"version=1\nCID=1\ncreateType=\"monolithicSparse\"\n"
		"RW 10 SPARSE \"s.vmdk\"\nRW 10 FLAT \"x\" 0\n";
	struct vmdk *v;
	char err[512];

	make_sparse(t, "s.vmdk", 10 * MIB);
	poke(p, 512, text, sizeof(text));
	assert_int_equal(vmdk_open(NULL, p, 0, &v, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "must describe one SPARSE extent"));
}

/*
 * A streamOptimized file as VMware writes it: header (gdOffset at the end
 * when @footer), descriptor, compressed grains 1 and 5 (4 KiB grains of
 * 'a' and 'e'), the grain table and directory, then the footer.
 */
static void make_stream(const char *path, bool footer)
{
	struct vmdk_sparse_header h = {
		.version = 3,
		.flags = VMDK_SPARSE_FLAG_NL_DETECT |
			 VMDK_SPARSE_FLAG_COMPRESSED | VMDK_SPARSE_FLAG_MARKERS,
		.capacity_sectors = 64,
		.grain_sectors = 8,
		.desc_offset_sectors = 1,
		.desc_size_sectors = 1,
		.gtes_per_gt = 512,
		.overhead_sectors = 2,
	};
	const char desc[] = "version=1\nCID=1\nparentCID=ffffffff\n"
			    "createType=\"streamOptimized\"\n"
			    "RW 64 SPARSE \"x.vmdk\"\n";
	uint8_t sec[512], grain[4096], z[4096 + 64];
	struct vmdk_sparse_header_disk raw;
	uint32_t gt[512] = { 0 }, gd = 0;
	uint64_t at = 2;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	for (unsigned g = 1; g <= 5; g += 4) {
		uLongf zlen = sizeof(z) - 12;
		uint64_t lba = g * 8;
		uint32_t size;

		memset(grain, 'a' + (int)g - 1, sizeof(grain));
		assert_int_equal(
			compress2(z + 12, &zlen, grain, sizeof(grain), 9),
			Z_OK);
		size = (uint32_t)zlen;
		memcpy(z, &lba, 8);
		memcpy(z + 8, &size, 4);
		assert_int_equal(pwrite(fd, z, 12 + zlen, (off_t)at * 512),
				 (ssize_t)(12 + zlen));
		gt[g] = (uint32_t)at;
		at += (12 + zlen + 511) / 512;
	}
	assert_int_equal(pwrite(fd, gt, sizeof(gt), (off_t)at * 512),
			 sizeof(gt));
	gd = (uint32_t)at;
	at += 4;
	assert_int_equal(pwrite(fd, &gd, 4, (off_t)at * 512), 4);
	h.gd_offset_sectors = at;
	at += 1;
	memset(sec, 0, sizeof(sec));
	memcpy(sec, desc, sizeof(desc));
	assert_int_equal(pwrite(fd, sec, 512, 512), 512);
	if (footer) {
		uint32_t type = 3; /* footer marker */

		memset(sec, 0, sizeof(sec));
		memcpy(sec + 12, &type, 4);
		assert_int_equal(pwrite(fd, sec, 512, (off_t)at * 512), 512);
		vmdk__sparse_header_encode(&h, &raw);
		assert_int_equal(pwrite(fd, &raw, 512, (off_t)(at + 1) * 512),
				 512);
		memset(sec, 0, sizeof(sec)); /* end-of-stream marker */
		assert_int_equal(pwrite(fd, sec, 512, (off_t)(at + 2) * 512),
				 512);
		h.gd_offset_sectors = VMDK_SPARSE_GD_AT_END;
	} else {
		assert_int_equal(ftruncate(fd, (off_t)at * 512), 0);
	}
	vmdk__sparse_header_encode(&h, &raw);
	assert_int_equal(pwrite(fd, &raw, 512, 0), 512);
	close(fd);
}

static void test_sparse_stream_optimized_reads_grains(void **state)
{
	struct tdir *t = *state;
	struct vmdk_check_report rep;
	uint8_t buf[64 * 512];
	struct vmdk *v;

	for (int footer = 0; footer < 2; footer++) {
		const char *p = tp(t, footer ? "f.vmdk" : "s.vmdk");

		make_stream(p, footer);
		v = open_rw(NULL, p);
		assert_int_equal(vmdk_pread(v, buf, sizeof(buf), 0), 0);
		for (unsigned g = 0; g < 8; g++) {
			uint8_t want = g == 1 ? 'a' : g == 5 ? 'e' : 0;

			assert_int_equal(buf[g * 4096], want);
			assert_int_equal(buf[g * 4096 + 4095], want);
		}
		/* a run inside one grain */
		assert_int_equal(vmdk_pread(v, buf, 10, 5 * 4096 + 100), 0);
		assert_int_equal(buf[9], 'e');
		assert_int_equal(vmdk_pwrite(v, buf, 1, 0), -EROFS);
		assert_int_equal(vmdk_pwrite(v, buf, 1, 4096), -EROFS);
		vmdk_close(v);
		assert_int_equal(vmdk_check(NULL, p, NULL, NULL, &rep, NULL, 0),
				 0);
		assert_int_equal(rep.errors, 0);
		assert_int_equal(rep.allocated_grains, 2);
	}
}

static void test_sparse_stream_bad_marker_fails_read(void **state)
{
	struct tdir *t = *state;
	const char *p = tp(t, "s.vmdk");
	struct vmdk_check_report rep;
	uint8_t buf[4096];
	struct vmdk *v;
	char err[512];

	make_stream(p, false);
	poke64(p, 2 * 512, 16); /* grain 1's marker claims lba 16 */
	poke32(p, 2 * 512 + 14, 0xffffffff); /* and grain 1's data is junk */
	v = open_rw(NULL, p);
	assert_int_equal(vmdk_pread(v, buf, 512, 4096), -EINVAL);
	assert_int_equal(vmdk_pread(v, buf, 512, 5 * 4096), 0);
	vmdk_close(v);
	assert_int_equal(vmdk_check(NULL, p, NULL, NULL, &rep, NULL, 0), 0);
	assert_int_equal(rep.errors, 1);
	/* a footer that is not there */
	make_stream(p, true);
	assert_int_equal(truncate(p, (off_t)file_size(p) - 1024), 0);
	assert_int_equal(vmdk_open(NULL, p, 0, &v, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "s.vmdk: footer (gdOffset at the end): "
				    "magicNumber"));
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, tdir_setup, tdir_teardown)
	const struct CMUnitTest tests[] = {
		T(test_sparse_create_uses_qemu_layout),
		T(test_sparse_write_read_across_grains),
		T(test_sparse_block_status_reports_runs),
		T(test_sparse_alloc_writes_grain_then_table),
		T(test_sparse_new_table_is_written_before_directory),
		T(test_sparse_zero_grain_of_base_is_not_stored),
		T(test_sparse_enospc_stays_enospc),
		T(test_sparse_failed_write_never_leaves_dangling_entry),
		T(test_sparse_past_2tib_is_efbig),
		T(test_sparse_corrupt_header_field_gives_exact_error),
		T(test_sparse_huge_directory_is_refused),
		T(test_sparse_directory_entry_past_eof_is_refused),
		T(test_sparse_bad_table_entry_fails_io_without_writing),
		T(test_sparse_truncated_file_is_refused),
		T(test_sparse_copied_file_is_its_own_extent),
		T(test_sparse_embedded_descriptor_of_two_extents_refused),
		T(test_sparse_stream_optimized_reads_grains),
		T(test_sparse_stream_bad_marker_fails_read),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
