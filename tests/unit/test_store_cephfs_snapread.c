// SPDX-License-Identifier: Apache-2.0
/*
 * test_store_cephfs_snapread: which objects of a file changed between two
 * CephFS snapshots (nfsd/store/cephfs/cephfs_snapread.c,
 * store_snapread.h), on a real cluster: a 16 MiB file with data in
 * objects 0, 2 (all of it) and 3 (object 1 a hole), snapshot s1, 64 KiB
 * rewritten in object 2, snapshot s2: against s1 only the two 64 KiB
 * blocks of object 2 the write covered may differ (the OSDs' hashes);
 * past a smaller base's end an object is a candidate whole; without a
 * base the holes are left out (objects 0, 2-3); a base that is another
 * file, a file that is not in a snapshot, a directory: -EOPNOTSUPP (the
 * caller reads the file whole); an empty file: nothing.  The cluster is
 * DSNFS_CEPH_CONF's; without it every test is skipped.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/unit/test_cephfs_state.h"

#include "nfsd/store/cephfs/cephfs.h"
#include "nfsd/store/store.h"
#include "nfsd/store/store_snapread.h"
#include "nfsd/store/store_tree.h"

#define MIB (1024u * 1024u)

static char sdir[600];

struct fixture {
	struct store *st; /* the test's own directory, its snapshots */
	struct store_obj *root;
	char dir[64];
};

static int setup(void **state)
{
	const char *conf = getenv("DSNFS_CEPH_CONF");
	struct fixture *f = calloc(1, sizeof(*f));
	struct store_obj *root, *d;
	struct store *top;
	char err[512] = "", sub[80];

	if (!f) {
		return -1;
	}
	*state = f;
	if (!conf || !conf[0] || access(conf, R_OK) != 0) {
		return 0;
	}
	static int seq;

	snprintf(f->dir, sizeof(f->dir), "snapread-%d-%d", getpid(), ++seq);
	if (store_cephfs_open("t1", 91, conf, "/", "admin", "",
			      test_cephfs_state(conf, sdir, sizeof(sdir)), NULL,
			      8, &top, err, sizeof(err))) {
		fprintf(stderr, "cephfs: %s\n", err);
		return -1;
	}
	if (top->ops->root(top, &root) ||
	    top->ops->mkdir(top, root, f->dir, NULL, NULL, &d)) {
		return -1;
	}
	top->ops->obj_unref(d);
	top->ops->obj_unref(root);
	top->ops->close(top);
	snprintf(sub, sizeof(sub), "/%s", f->dir);
	if (store_cephfs_open("t2", 92, conf, sub, "admin", "",
			      test_cephfs_state(conf, sdir, sizeof(sdir)), NULL,
			      8, &f->st, err, sizeof(err)) ||
	    f->st->ops->root(f->st, &f->root)) {
		fprintf(stderr, "cephfs: %s\n", err);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char err[256];

	if (f->st) {
		(void)f->st->ops->snap->remove(f->st, "s1", err, sizeof(err));
		(void)f->st->ops->snap->remove(f->st, "s2", err, sizeof(err));
		(void)f->st->ops->remove(f->st, f->root, "disk");
		(void)f->st->ops->remove(f->st, f->root, "other");
		f->st->ops->obj_unref(f->root);
		f->st->ops->close(f->st);
	}
	free(f);
	return 0;
}

static void need_cluster(struct fixture *f)
{
	if (!f->st) {
		skip();
	}
}

/* @len bytes of @byte at @off of @o, stable. */
static void put(struct fixture *f, struct store_obj *o, uint64_t off,
		size_t len, int byte)
{
	uint8_t *buf = malloc(len);
	bool sf = false;

	assert_non_null(buf);
	memset(buf, byte, len);
	assert_int_equal(f->st->ops->write(f->st, o, off, buf, (uint32_t)len,
					   STORE_FILE_SYNC, &sf),
			 0);
	free(buf);
}

/* NAME in snapshot SNAP (owned). */
static struct store_obj *in_snap(struct fixture *f, const char *snap,
				 const char *name)
{
	struct store_obj *sd, *s, *o;

	assert_int_equal(f->st->ops->lookup(f->st, f->root, ".snapshot", &sd),
			 0);
	assert_int_equal(f->st->ops->lookup(f->st, sd, snap, &s), 0);
	assert_int_equal(f->st->ops->lookup(f->st, s, name, &o), 0);
	f->st->ops->obj_unref(s);
	f->st->ops->obj_unref(sd);
	return o;
}

static struct store_obj *make(struct fixture *f, const char *name)
{
	const uint8_t verf[8] = { 0 };
	struct store_obj *o;

	assert_int_equal(f->st->ops->create(f->st, f->root, name,
					    STORE_CREATE_GUARDED, NULL, verf,
					    NULL, &o),
			 0);
	return o;
}

static void test_only_the_written_object_changed(void **state)
{
	struct fixture *f = *state;
	const struct store_snap_ops *so;
	struct store_obj *disk, *cur, *base;
	struct store_range *r;
	char err[256] = "";
	size_t n;

	need_cluster(f);
	so = f->st->ops->snap;
	assert_non_null(so->changed);
	disk = make(f, "disk");
	put(f, disk, 0, 65536, 0x11);
	put(f, disk, 8 * MIB, 4 * MIB, 0x22);
	put(f, disk, 16 * MIB - 4096, 4096, 0x33);
	assert_int_equal(so->create(f->st, "s1", NULL, err, sizeof(err)), 0);
	put(f, disk, 8 * MIB + 200000, 65536, 0x44);
	assert_int_equal(so->create(f->st, "s2", NULL, err, sizeof(err)), 0);
	cur = in_snap(f, "s2", "disk");
	base = in_snap(f, "s1", "disk");

	/* Object 2 only, and in it the two 64 KiB blocks the write covered
	 * (8 MiB + 200000 .. + 64 KiB: blocks 3 and 4), by the OSDs'
	 * hashes at both snapshots. */
	assert_int_equal(
		so->changed(f->st, cur, base, 16 * MIB, 16 * MIB, &r, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(r[0].off, 8 * MIB + 3 * 65536);
	assert_int_equal(r[0].len, 2 * 65536);
	free(r);

	/* No base: every object with data, the hole (object 1) left out. */
	assert_int_equal(so->changed(f->st, cur, NULL, 16 * MIB, 0, &r, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(r[0].off, 0);
	assert_int_equal(r[0].len, 4 * MIB);
	assert_int_equal(r[1].off, 8 * MIB);
	assert_int_equal(r[1].len, 8 * MIB);
	free(r);

	/* The base a smaller file (6 MiB): an object past its end is a
	 * candidate whole, unchanged (object 3) or not (object 2); a hole
	 * in both is not (object 1, which its end cuts). */
	assert_int_equal(
		so->changed(f->st, cur, base, 16 * MIB, 6 * MIB, &r, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(r[0].off, 8 * MIB);
	assert_int_equal(r[0].len, 8 * MIB);
	free(r);

	f->st->ops->obj_unref(base);
	f->st->ops->obj_unref(cur);
	f->st->ops->obj_unref(disk);
}

static void test_what_it_cannot_tell(void **state)
{
	struct fixture *f = *state;
	const struct store_snap_ops *so;
	struct store_obj *disk, *other, *cur, *ocur, *sd, *s;
	struct store_range *r = NULL;
	char err[256] = "";
	size_t n = 9;

	need_cluster(f);
	so = f->st->ops->snap;
	disk = make(f, "disk");
	other = make(f, "other");
	put(f, disk, 0, 65536, 0x55);
	put(f, other, 0, 65536, 0x66);
	assert_int_equal(so->create(f->st, "s1", NULL, err, sizeof(err)), 0);
	cur = in_snap(f, "s1", "disk");
	ocur = in_snap(f, "s1", "other");
	/* Another inode as the base (a file replaced under its name). */
	assert_int_equal(so->changed(f->st, cur, ocur, 65536, 65536, &r, &n),
			 -EOPNOTSUPP);
	/* The live file, as the new one or as the base: not a snapshot. */
	assert_int_equal(so->changed(f->st, disk, NULL, 65536, 0, &r, &n),
			 -EOPNOTSUPP);
	assert_int_equal(so->changed(f->st, cur, disk, 65536, 65536, &r, &n),
			 -EOPNOTSUPP);
	/* A directory (the snapshot's root). */
	assert_int_equal(f->st->ops->lookup(f->st, f->root, ".snapshot", &sd),
			 0);
	assert_int_equal(f->st->ops->lookup(f->st, sd, "s1", &s), 0);
	assert_int_equal(so->changed(f->st, s, NULL, 0, 0, &r, &n),
			 -EOPNOTSUPP);
	/* Nothing to say of an empty file. */
	assert_int_equal(so->changed(f->st, cur, NULL, 0, 0, &r, &n), 0);
	assert_int_equal(n, 0);
	assert_null(r);
	f->st->ops->obj_unref(s);
	f->st->ops->obj_unref(sd);
	f->st->ops->obj_unref(ocur);
	f->st->ops->obj_unref(cur);
	f->st->ops->obj_unref(other);
	f->st->ops->obj_unref(disk);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_only_the_written_object_changed),
		T(test_what_it_cannot_tell),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
