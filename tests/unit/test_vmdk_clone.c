// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of provisioning and whole-disk operations (vmdk/provision.c,
 * info.c, clone.c, check.c): nb / tbz through FIEMAP, create errors, full
 * clones (sparse-aware, kernel offload and its fallback, clean-up on
 * failure), convert with zero detection, inflate, and check findings.
 */
#include "tests/unit/test_vmdk.h"
#include "vmdk/vmdk_int.h"

#define MIB (1024u * 1024u)
#define GRAIN 65536u

static int make(struct tdir *t, const char *name, uint64_t size,
		enum vmdk_type type)
{
	struct vmdk_create_opts o = { .size_bytes = size, .type = type };
	char err[256];

	return vmdk_create(NULL, tp(t, name), &o, err, sizeof(err));
}

static void put(const char *path, uint64_t off, size_t len, unsigned seed)
{
	uint8_t *b = malloc(len);
	struct vmdk *v = open_ok(path, VMDK_OPEN_RDWR | VMDK_OPEN_FORCE);

	fill_pattern(b, len, seed);
	assert_int_equal(vmdk_pwrite(v, b, len, off), 0);
	assert_int_equal(vmdk_flush(v), 0);
	vmdk_close(v);
	free(b);
}

static struct vmdk_info info_of(const char *path)
{
	struct vmdk *v = open_ok(path, 0);
	struct vmdk_info in;
	int r = vmdk_info_get(v, &in);

	vmdk_close(v);
	if (r == -EOPNOTSUPP) {
		skip(); /* no FIEMAP on this file system */
	}
	assert_int_equal(r, 0);
	return in;
}

/* Both disks read the same, in 1 MiB steps. */
static void assert_same_content(const char *a, const char *b)
{
	struct vmdk *va = open_ok(a, 0);
	struct vmdk *vb = open_ok(b, 0);
	uint8_t *ba = malloc(MIB);
	uint8_t *bb = malloc(MIB);

	assert_int_equal(vmdk_size_bytes(va), vmdk_size_bytes(vb));
	for (uint64_t off = 0; off < vmdk_size_bytes(va); off += MIB) {
		size_t n = vmdk_size_bytes(va) - off < MIB
				   ? (size_t)(vmdk_size_bytes(va) - off)
				   : MIB;

		assert_int_equal(vmdk_pread(va, ba, n, off), 0);
		assert_int_equal(vmdk_pread(vb, bb, n, off), 0);
		assert_memory_equal(ba, bb, n);
	}
	free(ba);
	free(bb);
	vmdk_close(va);
	vmdk_close(vb);
}

static void test_provision_nb_tbz_follow_vmkfstools(void **state)
{
	struct tdir *t = *state;
	struct vmdk_info in;

	assert_int_equal(make(t, "thin.vmdk", 8 * MIB, VMDK_TYPE_THIN), 0);
	in = info_of(tp(t, "thin.vmdk"));
	assert_string_equal(in.provisioning, "thin");
	assert_int_equal(in.alloc.nb, 0);
	assert_int_equal(in.alloc.tbz, 0);
	put(tp(t, "thin.vmdk"), 3 * MIB + 5, 100, 1);
	in = info_of(tp(t, "thin.vmdk"));
	assert_int_equal(in.alloc.nb, 1);
	assert_int_equal(in.alloc.tbz, 0);

	assert_int_equal(make(t, "lazy.vmdk", 8 * MIB, VMDK_TYPE_ZEROEDTHICK),
			 0);
	in = info_of(tp(t, "lazy.vmdk"));
	assert_string_equal(in.provisioning, "zeroedthick");
	assert_int_equal(in.alloc.nb, 8);
	assert_int_equal(in.alloc.tbz, 8);
	put(tp(t, "lazy.vmdk"), 2 * MIB, MIB, 2);
	put(tp(t, "lazy.vmdk"), 5 * MIB + 4096, 4096, 3);
	in = info_of(tp(t, "lazy.vmdk"));
	assert_int_equal(in.alloc.nb, 8);
	assert_int_equal(in.alloc.tbz, 6);

	assert_int_equal(
		make(t, "eager.vmdk", 8 * MIB, VMDK_TYPE_EAGERZEROEDTHICK), 0);
	in = info_of(tp(t, "eager.vmdk"));
	assert_string_equal(in.provisioning, "eagerzeroedthick");
	assert_int_equal(in.alloc.nb, 8);
	assert_int_equal(in.alloc.tbz, 0);
}

static void test_create_refuses_bad_requests(void **state)
{
	struct tdir *t = *state;
	struct vmdk_create_opts o = { .size_bytes = MIB,
				      .type = VMDK_TYPE_THIN,
				      .adapter = "scsi9" };
	struct fault_io f;
	char err[256];

	assert_int_equal(make(t, "a.vmdk", MIB, VMDK_TYPE_THIN), 0);
	assert_int_equal(make(t, "a.vmdk", MIB, VMDK_TYPE_SPARSE), -EEXIST);
	assert_int_equal(make(t, "a.img", MIB, VMDK_TYPE_THIN), -EINVAL);
	assert_int_equal(make(t, "z.vmdk", 0, VMDK_TYPE_THIN), -EINVAL);
	assert_int_equal(make(t, "z.vmdk", 1ull << 47, VMDK_TYPE_THIN),
			 -EINVAL);
	assert_int_equal(make(t, "z.vmdk", 3ull << 40, VMDK_TYPE_SPARSE),
			 -EINVAL);
	assert_int_equal(
		vmdk_create(NULL, tp(t, "z.vmdk"), &o, err, sizeof(err)),
		-EINVAL);
	assert_non_null(strstr(err, "adapter 'scsi9'"));
	/* A full datastore says so, and leaves nothing behind. */
	fault_init(&f, FAULT_OTHER);
	fault_arm(&f, 2, ENOSPC, true); /* stat passes, fallocate fails */
	o.adapter = NULL;
	o.type = VMDK_TYPE_ZEROEDTHICK;
	assert_int_equal(
		vmdk_create(&f.io, tp(t, "z.vmdk"), &o, err, sizeof(err)),
		-ENOSPC);
	assert_int_equal(access(tp(t, "z-flat.vmdk"), F_OK), -1);
	assert_int_equal(access(tp(t, "z.vmdk"), F_OK), -1);
}

static void test_clone_full_copies_only_used_space(void **state)
{
	struct tdir *t = *state;
	struct vmdk_clone_opts o = { .keep_type = true };
	struct vmdk_copy_stats st;
	struct vmdk_info in;
	char err[512];

	assert_int_equal(make(t, "src.vmdk", 64 * MIB, VMDK_TYPE_THIN), 0);
	put(tp(t, "src.vmdk"), 10 * MIB, 3 * MIB, 1);
	put(tp(t, "src.vmdk"), 40 * MIB, MIB, 2);
	assert_int_equal(vmdk_clone_full(NULL, tp(t, "src.vmdk"),
					 tp(t, "dst.vmdk"), &o, &st, err,
					 sizeof(err)),
			 0);
	assert_int_equal(st.copied_bytes, 4 * MIB);
	assert_int_equal(st.skipped_bytes, 60 * MIB);
	assert_same_content(tp(t, "src.vmdk"), tp(t, "dst.vmdk"));
	in = info_of(tp(t, "dst.vmdk"));
	assert_string_equal(in.provisioning, "thin");
	assert_int_equal(in.alloc.nb, 4);
}

static void test_clone_full_falls_back_when_offload_refused(void **state)
{
	struct tdir *t = *state;
	struct vmdk_clone_opts o = { .keep_type = true };
	struct vmdk_copy_stats st;
	struct fault_io f;
	char err[512];

	assert_int_equal(make(t, "src.vmdk", 16 * MIB, VMDK_TYPE_THIN), 0);
	put(tp(t, "src.vmdk"), MIB, 2 * MIB, 1);
	fault_init(&f, FAULT_COPY);
	fault_arm(&f, 1, EXDEV, true);
	assert_int_equal(vmdk_clone_full(&f.io, tp(t, "src.vmdk"),
					 tp(t, "dst.vmdk"), &o, &st, err,
					 sizeof(err)),
			 0);
	assert_int_equal(st.offload_bytes, 0);
	assert_int_equal(st.copied_bytes, 2 * MIB);
	assert_same_content(tp(t, "src.vmdk"), tp(t, "dst.vmdk"));
}

static void test_clone_full_of_chain_and_to_sparse(void **state)
{
	struct tdir *t = *state;
	struct vmdk_clone_opts o = { .keep_type = false,
				     .type = VMDK_TYPE_SPARSE };
	struct vmdk_check_report rep;
	char err[512];

	assert_int_equal(make(t, "b.vmdk", 8 * MIB, VMDK_TYPE_ZEROEDTHICK), 0);
	put(tp(t, "b.vmdk"), 0, 3 * MIB, 1);
	assert_int_equal(vmdk_clone_linked(NULL, tp(t, "b.vmdk"),
					   tp(t, "c.vmdk"), err, sizeof(err)),
			 0);
	put(tp(t, "c.vmdk"), MIB + 7, 5000, 2);
	put(tp(t, "c.vmdk"), 6 * MIB, 100, 3);
	assert_int_equal(vmdk_clone_full(NULL, tp(t, "c.vmdk"), tp(t, "s.vmdk"),
					 &o, NULL, err, sizeof(err)),
			 0);
	assert_same_content(tp(t, "c.vmdk"), tp(t, "s.vmdk"));
	assert_int_equal(
		vmdk_check(NULL, tp(t, "s.vmdk"), NULL, NULL, &rep, NULL, 0),
		0);
	assert_int_equal(rep.errors, 0);
	assert_int_equal(rep.links, 1);
	/* keep_type of a chain takes the base's type */
	o.keep_type = true;
	assert_int_equal(vmdk_clone_full(NULL, tp(t, "c.vmdk"), tp(t, "k.vmdk"),
					 &o, NULL, err, sizeof(err)),
			 0);
	assert_string_equal(info_of(tp(t, "k.vmdk")).provisioning,
			    "zeroedthick");
	assert_same_content(tp(t, "c.vmdk"), tp(t, "k.vmdk"));
}

static void test_clone_full_failure_removes_destination(void **state)
{
	struct tdir *t = *state;
	struct vmdk_clone_opts o = { .type = VMDK_TYPE_SPARSE };
	struct fault_io f;
	char err[512];

	assert_int_equal(make(t, "src.vmdk", 8 * MIB, VMDK_TYPE_THIN), 0);
	put(tp(t, "src.vmdk"), 0, 2 * MIB, 1);
	fault_init(&f, FAULT_PWRITE);
	fault_arm(&f, 8, ENOSPC, true);
	assert_int_equal(vmdk_clone_full(&f.io, tp(t, "src.vmdk"),
					 tp(t, "dst.vmdk"), &o, NULL, err,
					 sizeof(err)),
			 -ENOSPC);
	assert_non_null(strstr(err, "dst.vmdk"));
	assert_int_equal(access(tp(t, "dst.vmdk"), F_OK), -1);
}

static void test_convert_to_thin_drops_zero_blocks(void **state)
{
	struct tdir *t = *state;
	struct vmdk_clone_opts o = { .type = VMDK_TYPE_THIN,
				     .zero_detect = true };
	struct vmdk_copy_stats st;
	struct vmdk_info in;
	char err[512];

	assert_int_equal(
		make(t, "e.vmdk", 16 * MIB, VMDK_TYPE_EAGERZEROEDTHICK), 0);
	put(tp(t, "e.vmdk"), 5 * MIB, MIB, 4);
	assert_int_equal(vmdk_clone_full(NULL, tp(t, "e.vmdk"), tp(t, "t.vmdk"),
					 &o, &st, err, sizeof(err)),
			 0);
	assert_int_equal(st.copied_bytes, MIB);
	in = info_of(tp(t, "t.vmdk"));
	assert_string_equal(in.provisioning, "thin");
	assert_int_equal(in.alloc.nb, 1);
	assert_same_content(tp(t, "e.vmdk"), tp(t, "t.vmdk"));
}

static void test_inflate_thin_to_eagerzeroedthick(void **state)
{
	struct tdir *t = *state;
	struct vmdk_info in;
	char err[512];

	assert_int_equal(make(t, "t.vmdk", 8 * MIB, VMDK_TYPE_THIN), 0);
	assert_int_equal(make(t, "t2.vmdk", 8 * MIB, VMDK_TYPE_THIN), 0);
	put(tp(t, "t.vmdk"), 3 * MIB + 100, 5000, 5);
	put(tp(t, "t2.vmdk"), 3 * MIB + 100, 5000, 5);
	assert_int_equal(vmdk_inflate(NULL, tp(t, "t.vmdk"), err, sizeof(err)),
			 0);
	in = info_of(tp(t, "t.vmdk"));
	assert_string_equal(in.provisioning, "eagerzeroedthick");
	assert_int_equal(in.alloc.nb, 8);
	assert_int_equal(in.alloc.tbz, 0);
	assert_same_content(tp(t, "t.vmdk"), tp(t, "t2.vmdk"));
	assert_int_equal(make(t, "s.vmdk", MIB, VMDK_TYPE_SPARSE), 0);
	assert_int_equal(vmdk_inflate(NULL, tp(t, "s.vmdk"), err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "only flat disks inflate"));
}

struct msgs {
	char text[2048];
};

static void collect_cb(void *arg, const char *msg)
{
	struct msgs *m = arg;

	strncat(m->text, msg, sizeof(m->text) - strlen(m->text) - 2);
	strcat(m->text, "\n");
}

static void test_check_finds_overlaps_short_files_and_leaks(void **state)
{
	struct tdir *t = *state;
	const char *s = tp(t, "s.vmdk");
	struct vmdk_sparse_header_disk h;
	struct vmdk_check_report rep;
	struct msgs m = { "" };
	uint32_t gt, g0;
	int fd;

	assert_int_equal(make(t, "s.vmdk", 8 * MIB, VMDK_TYPE_SPARSE), 0);
	put(s, 0, 2 * GRAIN, 1);
	assert_int_equal(vmdk_check(NULL, s, collect_cb, &m, &rep, NULL, 0), 0);
	assert_int_equal(rep.errors, 0);
	assert_int_equal(rep.leaked_bytes, 0);
	assert_int_equal(rep.allocated_grains, 2);
	/* a leak: space past the last grain */
	assert_int_equal(truncate(s, (off_t)file_size(s) + GRAIN), 0);
	assert_int_equal(vmdk_check(NULL, s, NULL, NULL, &rep, NULL, 0), 0);
	assert_int_equal(rep.errors, 0);
	assert_int_equal(rep.leaked_bytes, GRAIN);
	/* grain 1 pointed at grain 0: an overlap */
	fd = open(s, O_RDONLY);
	assert_int_equal(pread(fd, &h, sizeof(h), 0), sizeof(h));
	assert_int_equal(pread(fd, &gt, 4, (off_t)h.gd_offset * 512), 4);
	assert_int_equal(pread(fd, &g0, 4, (off_t)gt * 512), 4);
	close(fd);
	poke32(s, (uint64_t)gt * 512 + 4, g0);
	assert_int_equal(vmdk_check(NULL, s, collect_cb, &m, &rep, NULL, 0), 0);
	assert_true(rep.errors >= 1);
	assert_non_null(strstr(m.text, "overlaps the region before it"));
	assert_non_null(strstr(m.text, "warning: "));
	/* a flat file shorter than its extent */
	assert_int_equal(make(t, "f.vmdk", 8 * MIB, VMDK_TYPE_THIN), 0);
	assert_int_equal(truncate(tp(t, "f-flat.vmdk"), MIB), 0);
	m.text[0] = '\0';
	assert_int_equal(vmdk_check(NULL, tp(t, "f.vmdk"), collect_cb, &m, &rep,
				    NULL, 0),
			 0);
	assert_int_equal(rep.errors, 1);
	assert_non_null(strstr(m.text, "file is 1048576 bytes, its extent "
				       "needs 8388608"));
	/* an unopenable disk is one finding; a missing one is an error */
	write_text(tp(t, "bad.vmdk"), "version=1\nCID=zz\n");
	assert_int_equal(
		vmdk_check(NULL, tp(t, "bad.vmdk"), NULL, NULL, &rep, NULL, 0),
		0);
	assert_int_equal(rep.errors, 1);
	assert_int_equal(
		vmdk_check(NULL, tp(t, "none.vmdk"), NULL, NULL, &rep, NULL, 0),
		-ENOENT);
}

/* A linked clone in another directory names its parent relative to its own
 * directory ("../a/b.vmdk"), never by the server's absolute path (issue
 * 23, finding 9), and opens through it, under vmdk_io_beneath too. */
static void test_clone_linked_parent_hint_is_relative(void **state)
{
	struct tdir *t = *state;
	struct vmdk_io_beneath b;
	struct vmdk_info in;
	struct vmdk *v;
	char err[512];

	assert_int_equal(mkdir(tp(t, "vm1"), 0755), 0);
	assert_int_equal(mkdir(tp(t, "vm2"), 0755), 0);
	assert_int_equal(make(t, "vm1/b.vmdk", 4 * MIB, VMDK_TYPE_THIN), 0);
	put(tp(t, "vm1/b.vmdk"), 0, GRAIN, 4);
	assert_int_equal(vmdk_io_beneath_init(&b, t->path), 0);
	assert_int_equal(vmdk_clone_linked(&b.io, tp(t, "vm1/b.vmdk"),
					   tp(t, "vm2/c.vmdk"), err,
					   sizeof(err)),
			 0);
	assert_int_equal(
		vmdk_open(&b.io, tp(t, "vm2/c.vmdk"), 0, &v, err, sizeof(err)),
		0);
	assert_int_equal(vmdk_info_get(v, &in) == 0 ||
				 vmdk_info_get(v, &in) == -EOPNOTSUPP,
			 1);
	assert_non_null(in.parent_hint);
	assert_string_equal(in.parent_hint, "../vm1/b.vmdk");
	assert_null(strstr(in.parent_hint, t->path));
	vmdk_close(v);
	/* Same directory: the base name, as before. */
	assert_int_equal(vmdk_clone_linked(&b.io, tp(t, "vm1/b.vmdk"),
					   tp(t, "vm1/d.vmdk"), err,
					   sizeof(err)),
			 0);
	v = open_ok(tp(t, "vm1/d.vmdk"), 0);
	assert_int_equal(vmdk_info_get(v, &in) == 0 ||
				 vmdk_info_get(v, &in) == -EOPNOTSUPP,
			 1);
	assert_string_equal(in.parent_hint, "b.vmdk");
	vmdk_close(v);
	assert_same_content(tp(t, "vm1/b.vmdk"), tp(t, "vm2/c.vmdk"));
	vmdk_io_beneath_fini(&b);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, tdir_setup, tdir_teardown)
	const struct CMUnitTest tests[] = {
		T(test_provision_nb_tbz_follow_vmkfstools),
		T(test_create_refuses_bad_requests),
		T(test_clone_full_copies_only_used_space),
		T(test_clone_full_falls_back_when_offload_refused),
		T(test_clone_full_of_chain_and_to_sparse),
		T(test_clone_full_failure_removes_destination),
		T(test_convert_to_thin_drops_zero_blocks),
		T(test_inflate_thin_to_eagerzeroedthick),
		T(test_check_finds_overlaps_short_files_and_leaks),
		T(test_clone_linked_parent_hint_is_relative),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
