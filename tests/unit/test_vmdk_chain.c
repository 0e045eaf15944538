// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of delta chains (vmdk/chain.c, rw.c, clone.c, snapshot.c):
 * reads through parents, copy-on-write at grain size, zeroed grains,
 * snapshots and their names, read-only parents, CID updates and checks,
 * missing parents, loops, the depth cap, and consolidation.
 */
#include "tests/unit/test_vmdk.h"
#include "vmdk/vmdk_int.h"

#define MIB (1024u * 1024u)
#define GRAIN 65536u

static void make_disk(struct tdir *t, const char *name, uint64_t size,
		      enum vmdk_type type)
{
	struct vmdk_create_opts o = { .size_bytes = size, .type = type };
	char err[256];

	assert_int_equal(vmdk_create(NULL, tp(t, name), &o, err, sizeof(err)),
			 0);
}

static void write_at(const char *path, const void *buf, size_t len,
		     uint64_t off)
{
	struct vmdk *v = open_ok(path, VMDK_OPEN_RDWR | VMDK_OPEN_FORCE);

	assert_int_equal(vmdk_pwrite(v, buf, len, off), 0);
	assert_int_equal(vmdk_flush(v), 0);
	vmdk_close(v);
}

static void read_at(const char *path, void *buf, size_t len, uint64_t off)
{
	struct vmdk *v = open_ok(path, 0);

	assert_int_equal(vmdk_pread(v, buf, len, off), 0);
	vmdk_close(v);
}

static void linked(struct tdir *t, const char *src, const char *dst)
{
	char err[512];

	assert_int_equal(vmdk_clone_linked(NULL, tp(t, src), tp(t, dst), err,
					   sizeof(err)),
			 0);
}

static void test_chain_delta_reads_parent_and_copies_on_write(void **state)
{
	struct tdir *t = *state;
	uint8_t *base = malloc(2 * GRAIN);
	uint8_t *r = malloc(2 * GRAIN);
	uint8_t small[100];

	make_disk(t, "base.vmdk", 8 * MIB, VMDK_TYPE_THIN);
	fill_pattern(base, 2 * GRAIN, 1);
	write_at(tp(t, "base.vmdk"), base, 2 * GRAIN, 4 * GRAIN);
	linked(t, "base.vmdk", "child.vmdk");
	read_at(tp(t, "child.vmdk"), r, 2 * GRAIN, 4 * GRAIN);
	assert_memory_equal(r, base, 2 * GRAIN);

	/* A partial write copies the rest of the grain from the parent. */
	memset(small, 0xee, sizeof(small));
	write_at(tp(t, "child.vmdk"), small, sizeof(small), 4 * GRAIN + 1000);
	memcpy(base + 1000, small, sizeof(small));
	read_at(tp(t, "child.vmdk"), r, 2 * GRAIN, 4 * GRAIN);
	assert_memory_equal(r, base, 2 * GRAIN);
	/* The delta holds one grain; the parent did not change. */
	assert_int_equal(file_size(tp(t, "child.vmdk")), 2 * GRAIN);
	read_at(tp(t, "base.vmdk"), r, 100, 4 * GRAIN + 1000);
	assert_int_not_equal(r[0], 0xee);
	free(base);
	free(r);
}

static void test_chain_zero_grain_in_delta_hides_parent(void **state)
{
	struct tdir *t = *state;
	uint8_t *buf = malloc(GRAIN);
	uint8_t *r = malloc(GRAIN);
	uint64_t size;

	make_disk(t, "base.vmdk", 8 * MIB, VMDK_TYPE_THIN);
	fill_pattern(buf, GRAIN, 2);
	write_at(tp(t, "base.vmdk"), buf, GRAIN, 0);
	linked(t, "base.vmdk", "child.vmdk");
	size = file_size(tp(t, "child.vmdk"));
	memset(buf, 0, GRAIN);
	write_at(tp(t, "child.vmdk"), buf, GRAIN, 0);
	/* Marked zeroed in the table: no grain stored, zeros read. */
	assert_int_equal(file_size(tp(t, "child.vmdk")), size);
	memset(r, 0x55, GRAIN);
	read_at(tp(t, "child.vmdk"), r, GRAIN, 0);
	assert_memory_equal(r, buf, GRAIN);
	free(buf);
	free(r);
}

static void test_chain_three_deltas_read_topmost_data(void **state)
{
	struct tdir *t = *state;
	uint8_t a[10], b[10], c[10], r[30];
	struct vmdk *v;

	memset(a, 'a', 10);
	memset(b, 'b', 10);
	memset(c, 'c', 10);
	make_disk(t, "d.vmdk", 4 * MIB, VMDK_TYPE_SPARSE);
	write_at(tp(t, "d.vmdk"), a, 10, 0);
	write_at(tp(t, "d.vmdk"), a, 10, 10);
	write_at(tp(t, "d.vmdk"), a, 10, 20);
	linked(t, "d.vmdk", "d1.vmdk");
	write_at(tp(t, "d1.vmdk"), b, 10, 10);
	write_at(tp(t, "d1.vmdk"), b, 10, 20);
	linked(t, "d1.vmdk", "d2.vmdk");
	write_at(tp(t, "d2.vmdk"), c, 10, 20);
	v = open_ok(tp(t, "d2.vmdk"), 0);
	assert_non_null(vmdk_parent(v));
	assert_non_null(vmdk_parent(vmdk_parent(v)));
	assert_null(vmdk_parent(vmdk_parent(vmdk_parent(v))));
	assert_int_equal(vmdk_pread(v, r, 30, 0), 0);
	assert_memory_equal(r, a, 10);
	assert_memory_equal(r + 10, b, 10);
	assert_memory_equal(r + 20, c, 10);
	vmdk_close(v);
}

static void test_chain_snapshot_names_and_read_only_parent(void **state)
{
	struct tdir *t = *state;
	char child[512], err[512];
	struct stat st;
	struct vmdk *v;

	make_disk(t, "vm.vmdk", 4 * MIB, VMDK_TYPE_THIN);
	assert_int_equal(vmdk_snapshot(NULL, tp(t, "vm.vmdk"), child,
				       sizeof(child), err, sizeof(err)),
			 0);
	assert_string_equal(child, tp(t, "vm-000001.vmdk"));
	assert_int_equal(vmdk_snapshot(NULL, tp(t, "vm-000001.vmdk"), child,
				       sizeof(child), err, sizeof(err)),
			 0);
	assert_string_equal(child, tp(t, "vm-000002.vmdk"));
	assert_int_equal(stat(tp(t, "vm.vmdk"), &st), 0);
	assert_int_equal(st.st_mode & 0222, 0);
	assert_int_equal(stat(tp(t, "vm-flat.vmdk"), &st), 0);
	assert_int_equal(st.st_mode & 0222, 0);
	assert_int_equal(vmdk_open(NULL, tp(t, "vm.vmdk"), VMDK_OPEN_RDWR, &v,
				   err, sizeof(err)),
			 -EROFS);
	assert_non_null(strstr(err, "read-only"));
	v = open_ok(tp(t, "vm.vmdk"), VMDK_OPEN_RDWR | VMDK_OPEN_FORCE);
	vmdk_close(v);
	v = open_ok(tp(t, "vm-000002.vmdk"), VMDK_OPEN_RDWR);
	vmdk_close(v);
}

static void test_chain_first_write_changes_cid(void **state)
{
	struct tdir *t = *state;
	struct vmdk_info in;
	uint32_t cid0, cid1;
	uint8_t b = 1;
	struct vmdk *v;

	make_disk(t, "d.vmdk", MIB, VMDK_TYPE_THIN);
	v = open_ok(tp(t, "d.vmdk"), VMDK_OPEN_RDWR);
	assert_int_equal(vmdk_info_get(v, &in), 0);
	cid0 = in.cid;
	vmdk_close(v);
	v = open_ok(tp(t, "d.vmdk"), VMDK_OPEN_RDWR);
	assert_int_equal(vmdk_pwrite(v, &b, 1, 0), 0);
	assert_int_equal(vmdk_pwrite(v, &b, 1, 1), 0);
	assert_int_equal(vmdk_info_get(v, &in), 0);
	cid1 = in.cid;
	vmdk_close(v);
	assert_int_not_equal(cid0, cid1);
	v = open_ok(tp(t, "d.vmdk"), 0);
	assert_int_equal(vmdk_info_get(v, &in), 0);
	assert_int_equal(in.cid, cid1);
	vmdk_close(v);
}

static void test_chain_parent_changed_gives_cid_mismatch(void **state)
{
	struct tdir *t = *state;
	uint8_t b = 1;
	struct vmdk *v;
	char err[512];

	make_disk(t, "base.vmdk", MIB, VMDK_TYPE_THIN);
	linked(t, "base.vmdk", "c.vmdk");
	write_at(tp(t, "base.vmdk"), &b, 1, 0); /* forced past read-only */
	assert_int_equal(
		vmdk_open(NULL, tp(t, "c.vmdk"), 0, &v, err, sizeof(err)),
		-EINVAL);
	assert_non_null(strstr(err, "c.vmdk: parentCID"));
	assert_non_null(strstr(err, "does not match CID"));
}

static void test_chain_missing_parent_is_named(void **state)
{
	struct tdir *t = *state;
	struct vmdk *v;
	char err[512];

	make_disk(t, "base.vmdk", MIB, VMDK_TYPE_THIN);
	linked(t, "base.vmdk", "c.vmdk");
	assert_int_equal(unlink(tp(t, "base.vmdk")), 0);
	assert_int_equal(
		vmdk_open(NULL, tp(t, "c.vmdk"), 0, &v, err, sizeof(err)),
		-ENOENT);
	assert_non_null(strstr(err, "c.vmdk"));
	assert_non_null(strstr(err, "base.vmdk: No such file"));
}

/* A descriptor of one ZERO extent with @cid, and a parent if @hint. */
static void zero_desc(struct tdir *t, const char *name, unsigned cid,
		      unsigned pcid, const char *hint, unsigned sectors)
{
	char text[512];

	snprintf(text, sizeof(text),
		 "version=1\nCID=%08x\nparentCID=%08x\n"
		 "createType=\"monolithicFlat\"\n%s%s%s"
		 "RW %u ZERO\n",
		 cid, hint ? pcid : 0xffffffffu,
		 hint ? "parentFileNameHint=\"" : "", hint ? hint : "",
		 hint ? "\"\n" : "", sectors);
	write_text(tp(t, name), text);
}

static void test_chain_loop_is_detected(void **state)
{
	struct tdir *t = *state;
	struct vmdk *v;
	char err[512];

	zero_desc(t, "a.vmdk", 1, 2, "b.vmdk", 2048);
	zero_desc(t, "b.vmdk", 2, 1, "a.vmdk", 2048);
	assert_int_equal(
		vmdk_open(NULL, tp(t, "a.vmdk"), 0, &v, err, sizeof(err)),
		-ELOOP);
	assert_non_null(strstr(err, "loop"));
	zero_desc(t, "self.vmdk", 3, 3, "self.vmdk", 2048);
	assert_int_equal(
		vmdk_open(NULL, tp(t, "self.vmdk"), 0, &v, err, sizeof(err)),
		-ELOOP);
	/* The same file through another name is the same disk. */
	assert_int_equal(link(tp(t, "b.vmdk"), tp(t, "b2.vmdk")), 0);
	zero_desc(t, "b.vmdk", 2, 4, "b2.vmdk", 2048);
	assert_int_equal(
		vmdk_open(NULL, tp(t, "b2.vmdk"), 0, &v, err, sizeof(err)),
		-ELOOP);
}

static void test_chain_depth_is_capped_at_255(void **state)
{
	struct tdir *t = *state;
	char name[32], parent[32];
	struct vmdk *v;
	char err[512];

	zero_desc(t, "d0.vmdk", 100, 0, NULL, 2048);
	for (unsigned i = 1; i <= VMDK_MAX_CHAIN_DEPTH; i++) {
		snprintf(name, sizeof(name), "d%u.vmdk", i);
		snprintf(parent, sizeof(parent), "d%u.vmdk", i - 1);
		zero_desc(t, name, 100 + i, 100 + i - 1, parent, 2048);
	}
	v = open_ok(tp(t, "d254.vmdk"), 0); /* 255 disks */
	vmdk_close(v);
	assert_int_equal(
		vmdk_open(NULL, tp(t, "d255.vmdk"), 0, &v, err, sizeof(err)),
		-ELOOP);
	assert_non_null(strstr(err, "chain deeper than 255 disks"));
}

static void test_chain_size_mismatch_is_refused(void **state)
{
	struct tdir *t = *state;
	struct vmdk *v;
	char err[512];

	zero_desc(t, "p.vmdk", 1, 0, NULL, 4096);
	zero_desc(t, "c.vmdk", 2, 1, "p.vmdk", 2048);
	assert_int_equal(
		vmdk_open(NULL, tp(t, "c.vmdk"), 0, &v, err, sizeof(err)),
		-EINVAL);
	assert_non_null(strstr(err, "size 2048 sectors differs from parent"));
}

static void test_chain_cowd_write_and_zero_extent_are_rofs(void **state)
{
	struct tdir *t = *state;
	uint8_t b = 0;
	struct vmdk *v;

	zero_desc(t, "z.vmdk", 1, 0, NULL, 2048);
	v = open_ok(tp(t, "z.vmdk"), VMDK_OPEN_RDWR);
	assert_int_equal(vmdk_pwrite(v, &b, 1, 0), -EROFS);
	vmdk_close(v);
	v = open_ok(tp(t, "z.vmdk"), 0);
	assert_int_equal(vmdk_pwrite(v, &b, 1, 0), -EROFS);
	vmdk_close(v);
}

static void test_chain_consolidate_merges_and_removes(void **state)
{
	struct tdir *t = *state;
	uint8_t w[5000], r[5000], z[GRAIN];
	struct vmdk_copy_stats st;
	char err[512];
	struct stat sb;
	struct vmdk *v;

	make_disk(t, "base.vmdk", 4 * MIB, VMDK_TYPE_THIN);
	fill_pattern(w, sizeof(w), 4);
	write_at(tp(t, "base.vmdk"), w, sizeof(w), 3 * MIB);
	linked(t, "base.vmdk", "c.vmdk");
	linked(t, "base.vmdk", "sibling.vmdk");
	fill_pattern(w, sizeof(w), 7);
	write_at(tp(t, "c.vmdk"), w, sizeof(w), GRAIN - 100);
	memset(z, 0, sizeof(z));
	write_at(tp(t, "c.vmdk"), z, GRAIN, 3 * MIB); /* zeroed grain */
	assert_int_equal(
		vmdk_consolidate(NULL, tp(t, "c.vmdk"), &st, err, sizeof(err)),
		0);
	assert_int_equal(st.copied_bytes, 3 * GRAIN);
	assert_int_equal(stat(tp(t, "c.vmdk"), &sb), -1);
	assert_int_equal(stat(tp(t, "base.vmdk"), &sb), 0);
	assert_true(sb.st_mode & 0200);
	read_at(tp(t, "base.vmdk"), r, sizeof(r), GRAIN - 100);
	assert_memory_equal(r, w, sizeof(r));
	read_at(tp(t, "base.vmdk"), r, sizeof(r), 3 * MIB);
	assert_memory_equal(r, z, sizeof(r));
	/* The other child saw its parent change under it. */
	assert_int_equal(
		vmdk_open(NULL, tp(t, "sibling.vmdk"), 0, &v, err, sizeof(err)),
		-EINVAL);
	assert_int_equal(vmdk_consolidate(NULL, tp(t, "base.vmdk"), &st, err,
					  sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "not a delta"));
}

static void test_chain_extent_may_not_leave_its_directory(void **state)
{
	struct tdir *t = *state;
	static const char *const names[] = { "/etc/passwd", "../x-flat.vmdk",
					     "sub/../../x", ".." };
	char text[256], err[512];
	struct vmdk *v;

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		snprintf(text, sizeof(text),
			 "version=1\nCID=1\ncreateType=\"vmfs\"\n"
			 "RW 8 VMFS \"%s\"\n",
			 names[i]);
		write_text(tp(t, "x.vmdk"), text);
		assert_int_equal(vmdk_open(NULL, tp(t, "x.vmdk"),
					   VMDK_OPEN_RDWR, &v, err,
					   sizeof(err)),
				 -EINVAL);
		assert_non_null(
			strstr(err, "leaves the descriptor's directory"));
	}
	/* a name that merely starts with two dots is fine */
	write_text(tp(t, "..x-flat.vmdk"), "");
	write_text(tp(t, "x.vmdk"), "version=1\nCID=1\ncreateType=\"vmfs\"\n"
				    "RW 8 VMFS \"..x-flat.vmdk\"\n");
	v = open_ok(tp(t, "x.vmdk"), 0);
	vmdk_close(v);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, tdir_setup, tdir_teardown)
	const struct CMUnitTest tests[] = {
		T(test_chain_delta_reads_parent_and_copies_on_write),
		T(test_chain_zero_grain_in_delta_hides_parent),
		T(test_chain_three_deltas_read_topmost_data),
		T(test_chain_snapshot_names_and_read_only_parent),
		T(test_chain_first_write_changes_cid),
		T(test_chain_parent_changed_gives_cid_mismatch),
		T(test_chain_missing_parent_is_named),
		T(test_chain_loop_is_detected),
		T(test_chain_depth_is_capped_at_255),
		T(test_chain_size_mismatch_is_refused),
		T(test_chain_cowd_write_and_zero_extent_are_rofs),
		T(test_chain_consolidate_merges_and_removes),
		T(test_chain_extent_may_not_leave_its_directory),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
