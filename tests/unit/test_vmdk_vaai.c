// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of the storage-side operations the admin API runs (VAAI-NAS):
 * the confined I/O (vmdk/io_beneath.c: "..", absolute names and symlinks
 * in a descriptor stop at the root), progress and its cancellation in a
 * full clone, the refusal of a native clone where the file system cannot
 * share blocks (the scratch directory is ext4 or tmpfs: no FICLONE), and
 * Reserve Space (vmdk_reserve(): zeroedthick, eagerzeroedthick).
 */
#include "tests/unit/test_vmdk.h"

#define MIB (1024u * 1024u)

static int make(const struct vmdk_io *io, const char *path, uint64_t size,
		enum vmdk_type type)
{
	struct vmdk_create_opts o = { .size_bytes = size, .type = type };
	char err[256];

	return vmdk_create(io, path, &o, err, sizeof(err));
}

static void put(const char *path, uint64_t off, size_t len, unsigned seed)
{
	uint8_t *b = malloc(len);
	struct vmdk *v = open_ok(path, VMDK_OPEN_RDWR);

	fill_pattern(b, len, seed);
	assert_int_equal(vmdk_pwrite(v, b, len, off), 0);
	assert_int_equal(vmdk_flush(v), 0);
	vmdk_close(v);
	free(b);
}

static bool exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

static void test_beneath_keeps_descriptors_inside(void **state)
{
	struct tdir *t = *state;
	struct vmdk_io_beneath b;
	struct vmdk *v = NULL;
	char err[256];

	assert_int_equal(mkdir(tp(t, "ds"), 0755), 0);
	assert_int_equal(make(NULL, tp(t, "outside.vmdk"), MIB, VMDK_TYPE_THIN),
			 0);
	assert_int_equal(vmdk_io_beneath_init(&b, tp(t, "ds")), 0);
	/* A disk made through it opens through it. */
	assert_int_equal(make(&b.io, tp(t, "ds/in.vmdk"), MIB, VMDK_TYPE_THIN),
			 0);
	assert_int_equal(
		vmdk_open(&b.io, tp(t, "ds/in.vmdk"), 0, &v, err, sizeof(err)),
		0);
	vmdk_close(v);
	/* A descriptor naming an extent above the root: the parser refuses
	 * it first (-EINVAL), the confinement would (-EXDEV). */
	write_text(tp(t, "ds/up.vmdk"),
		   "# Disk DescriptorFile\nversion=1\nCID=fffffffe\n"
		   "parentCID=ffffffff\ncreateType=\"vmfs\"\n"
		   "RW 2048 VMFS \"../outside-flat.vmdk\"\n");
	assert_int_not_equal(
		vmdk_open(&b.io, tp(t, "ds/up.vmdk"), 0, &v, err, sizeof(err)),
		0);
	/* ... or by its absolute name. */
	{
		char text[1024];

		snprintf(text, sizeof(text),
			 "# Disk DescriptorFile\nversion=1\nCID=fffffffe\n"
			 "parentCID=ffffffff\ncreateType=\"vmfs\"\n"
			 "RW 2048 VMFS \"%s\"\n",
			 tp(t, "outside-flat.vmdk"));
		write_text(tp(t, "ds/abs.vmdk"), text);
	}
	assert_int_not_equal(
		vmdk_open(&b.io, tp(t, "ds/abs.vmdk"), 0, &v, err, sizeof(err)),
		0);
	/* A ".." in the path itself. */
	assert_int_equal(vmdk_open(&b.io, tp(t, "ds/../outside.vmdk"), 0, &v,
				   err, sizeof(err)),
			 -EXDEV);
	/* A symlinked directory on the way. */
	assert_int_equal(symlink(t->path, tp(t, "ds/up")), 0);
	assert_int_equal(vmdk_open(&b.io, tp(t, "ds/up/outside.vmdk"), 0, &v,
				   err, sizeof(err)),
			 -ELOOP);
	/* A symlink, inside or out, is never followed. */
	assert_int_equal(symlink(tp(t, "outside.vmdk"), tp(t, "ds/link.vmdk")),
			 0);
	assert_int_equal(vmdk_open(&b.io, tp(t, "ds/link.vmdk"), 0, &v, err,
				   sizeof(err)),
			 -ELOOP);
	/* A path that is not under the root at all. */
	assert_int_equal(vmdk_open(&b.io, tp(t, "outside.vmdk"), 0, &v, err,
				   sizeof(err)),
			 -EXDEV);
	/* Nothing is made outside through a "..". */
	assert_int_not_equal(
		make(&b.io, tp(t, "ds/../made.vmdk"), MIB, VMDK_TYPE_THIN), 0);
	assert_false(exists(tp(t, "made.vmdk")));
	vmdk_io_beneath_fini(&b);
}

struct progress_log {
	unsigned calls;
	uint64_t last_done, total;
	unsigned cancel_at; /* 0: never */
};

static int progress_cb(void *arg, uint64_t done, uint64_t total)
{
	struct progress_log *p = arg;

	assert_true(done >= p->last_done);
	assert_true(done <= total);
	p->calls++;
	p->last_done = done;
	p->total = total;
	return p->cancel_at && p->calls >= p->cancel_at ? -ECANCELED : 0;
}

static void test_clone_full_reports_progress_and_cancels(void **state)
{
	struct tdir *t = *state;
	struct progress_log p = { 0 };
	struct vmdk_clone_opts o = { .keep_type = true,
				     .no_reflink = true,
				     .progress = progress_cb,
				     .progress_arg = &p };
	char err[512];

	assert_int_equal(
		make(NULL, tp(t, "src.vmdk"), 256 * MIB, VMDK_TYPE_THIN), 0);
	put(tp(t, "src.vmdk"), 10 * MIB, MIB, 1);
	put(tp(t, "src.vmdk"), 200 * MIB, MIB, 2);
	assert_int_equal(vmdk_clone_full(NULL, tp(t, "src.vmdk"),
					 tp(t, "a.vmdk"), &o, NULL, err,
					 sizeof(err)),
			 0);
	assert_true(p.calls >= 2);
	assert_int_equal(p.last_done, 256 * MIB);
	assert_int_equal(p.total, 256 * MIB);

	memset(&p, 0, sizeof(p));
	p.cancel_at = 1;
	assert_int_equal(vmdk_clone_full(NULL, tp(t, "src.vmdk"),
					 tp(t, "b.vmdk"), &o, NULL, err,
					 sizeof(err)),
			 -ECANCELED);
	assert_false(exists(tp(t, "b.vmdk")));
	assert_false(exists(tp(t, "b-flat.vmdk")));
}

static void test_clone_native_refused_without_reflink(void **state)
{
	struct tdir *t = *state;
	char err[512] = "";
	int rc;

	assert_int_equal(make(NULL, tp(t, "src.vmdk"), 4 * MIB, VMDK_TYPE_THIN),
			 0);
	put(tp(t, "src.vmdk"), 0, MIB, 1);
	rc = vmdk_clone_native(NULL, tp(t, "src.vmdk"), tp(t, "n.vmdk"), err,
			       sizeof(err));
	if (rc == 0) {
		skip(); /* the scratch directory is on XFS or btrfs */
	}
	assert_int_equal(rc, -EOPNOTSUPP);
	assert_non_null(strstr(err, "cannot share"));
	assert_false(exists(tp(t, "n.vmdk")));
	assert_false(exists(tp(t, "n-flat.vmdk")));
	/* A sparse disk is not a native clone's source. */
	assert_int_equal(
		make(NULL, tp(t, "sp.vmdk"), 4 * MIB, VMDK_TYPE_SPARSE), 0);
	assert_int_equal(vmdk_clone_native(NULL, tp(t, "sp.vmdk"),
					   tp(t, "n2.vmdk"), err, sizeof(err)),
			 -EINVAL);
	assert_false(exists(tp(t, "n2.vmdk")));
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

static void test_reserve_makes_thin_disks_thick(void **state)
{
	struct tdir *t = *state;
	struct progress_log p = { 0 };
	struct vmdk_info in;
	char err[512];

	assert_int_equal(
		make(NULL, tp(t, "lazy.vmdk"), 8 * MIB, VMDK_TYPE_THIN), 0);
	put(tp(t, "lazy.vmdk"), 2 * MIB, MIB, 3);
	assert_int_equal(vmdk_reserve(NULL, tp(t, "lazy.vmdk"), false, NULL,
				      NULL, err, sizeof(err)),
			 0);
	in = info_of(tp(t, "lazy.vmdk"));
	assert_string_equal(in.provisioning, "zeroedthick");
	assert_int_equal(in.alloc.nb, 8);
	assert_int_equal(in.alloc.tbz, 7); /* the written block stays */
	assert_int_equal(in.alloc.shared_bytes, 0);

	assert_int_equal(
		make(NULL, tp(t, "eager.vmdk"), 8 * MIB, VMDK_TYPE_THIN), 0);
	put(tp(t, "eager.vmdk"), 5 * MIB, 4096, 4);
	assert_int_equal(vmdk_reserve(NULL, tp(t, "eager.vmdk"), true,
				      progress_cb, &p, err, sizeof(err)),
			 0);
	in = info_of(tp(t, "eager.vmdk"));
	assert_string_equal(in.provisioning, "eagerzeroedthick");
	assert_int_equal(in.alloc.nb, 8);
	assert_int_equal(in.alloc.tbz, 0);
	assert_true(p.calls >= 1);
	{
		/* The data written before stays. */
		uint8_t want[4096], got[4096];
		struct vmdk *v = open_ok(tp(t, "eager.vmdk"), 0);

		fill_pattern(want, sizeof(want), 4);
		assert_int_equal(vmdk_pread(v, got, sizeof(got), 5 * MIB), 0);
		assert_memory_equal(want, got, sizeof(got));
		vmdk_close(v);
	}
	/* A sparse disk has no flat extent to reserve. */
	assert_int_equal(
		make(NULL, tp(t, "sp.vmdk"), 4 * MIB, VMDK_TYPE_SPARSE), 0);
	assert_int_equal(vmdk_reserve(NULL, tp(t, "sp.vmdk"), false, NULL, NULL,
				      err, sizeof(err)),
			 -EINVAL);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, tdir_setup, tdir_teardown)
	const struct CMUnitTest tests[] = {
		T(test_beneath_keeps_descriptors_inside),
		T(test_clone_full_reports_progress_and_cancels),
		T(test_clone_native_refused_without_reflink),
		T(test_reserve_makes_thin_disks_thick),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
