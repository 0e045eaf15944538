// SPDX-License-Identifier: Apache-2.0
/*
 * test_store_cephfs_tree: the storage-side operations of a cephfs
 * datastore on a real cluster (nfsd/store/cephfs/cephfs_tree.c, cephfs_snap.c,
 * cephfs_restore.c), through the store's ops alone, as admin/ calls
 * them: a full clone that keeps holes (used bytes of the copy are its
 * RADOS objects), a linked clone read through its parent, a native clone
 * refused with nothing left, names that lead out, Reserve Space, and
 * snapshots: create, refusals, list, restore (a file keeps its handle,
 * one made after is STALE), .snapshot read-only and its handles on a
 * second gateway, delete.  The cluster is DSNFS_CEPH_CONF's;
 * without it every test is skipped.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/unit/test_cephfs_state.h"

/* The state directory of every store opened here. */
static char sdir[600];

#include "nfsd/store/cephfs/cephfs.h"
#include "nfsd/store/store.h"
#include "nfsd/store/store_tree.h"
#include "tests/lib/log_capture.h"
#include "vmdk/vmdk.h"

#define MIB (1024u * 1024u)

struct fixture {
	struct store *st;
	struct store_tree *t;
	char dir[64]; /* this test's directory below the root */
	char path[512];
};

static int setup(void **state)
{
	const char *conf = getenv("DSNFS_CEPH_CONF");
	struct fixture *f = calloc(1, sizeof(*f));
	char err[512] = "";
	char p[600];
	struct stat sb;
	int fd = -1;

	if (!f) {
		return -1;
	}
	*state = f;
	if (!conf || !conf[0] || access(conf, R_OK) != 0) {
		return 0;
	}
	if (store_cephfs_open("t1", 91, conf, "/", "admin", "",
			      test_cephfs_state(conf, sdir, sizeof(sdir)), NULL,
			      8, &f->st, err, sizeof(err)) ||
	    f->st->ops->tree_open(f->st, &f->t, err, sizeof(err))) {
		fprintf(stderr, "cephfs: %s\n", err);
		return -1;
	}
	static int seq;

	/* One directory per test: what a test made is left for a look. */
	snprintf(f->dir, sizeof(f->dir), "tree-%d-%d", getpid(), ++seq);
	/* A directory through the tree: a file in it, then gone. */
	snprintf(p, sizeof(p), "%s/%s", f->t->root, f->dir);
	(void)sb;
	(void)fd;
	{
		struct store_obj *root, *d;

		if (f->st->ops->root(f->st, &root) ||
		    f->st->ops->mkdir(f->st, root, f->dir, NULL, NULL, &d)) {
			return -1;
		}
		f->st->ops->obj_unref(d);
		f->st->ops->obj_unref(root);
	}
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	if (f->t) {
		f->t->close(f->t);
	}
	if (f->st) {
		f->st->ops->close(f->st);
	}
	free(f);
	return 0;
}

static const char *P(struct fixture *f, const char *name)
{
	snprintf(f->path, sizeof(f->path), "%s/%s/%s", f->t->root, f->dir,
		 name);
	return f->path;
}

static void need_cluster(struct fixture *f)
{
	if (!f->st) {
		skip();
	}
}

/* A thin 64 MiB disk with 1 MiB of 0xab at 0 and at 40 MiB. */
static void disk_make(struct fixture *f, const char *name)
{
	struct vmdk_create_opts o = { .size_bytes = 64 * MIB,
				      .type = VMDK_TYPE_THIN };
	char err[256] = "";
	uint8_t *buf = malloc(MIB);
	struct vmdk *v;

	assert_non_null(buf);
	memset(buf, 0xab, MIB);
	assert_int_equal(
		vmdk_create(&f->t->io, P(f, name), &o, err, sizeof(err)), 0);
	assert_int_equal(vmdk_open(&f->t->io, P(f, name), VMDK_OPEN_RDWR, &v,
				   err, sizeof(err)),
			 0);
	assert_int_equal(vmdk_pwrite(v, buf, MIB, 0), 0);
	assert_int_equal(vmdk_pwrite(v, buf, MIB, 40 * MIB), 0);
	assert_int_equal(vmdk_flush(v), 0);
	vmdk_close(v);
	free(buf);
}

/* Reads 1 MiB at @off of disk @name: its first and last bytes. */
static void disk_expect(struct fixture *f, const char *name, uint64_t off,
			uint8_t byte)
{
	uint8_t *buf = malloc(MIB);
	char err[256] = "";
	struct vmdk *v;

	assert_non_null(buf);
	assert_int_equal(
		vmdk_open(&f->t->io, P(f, name), 0, &v, err, sizeof(err)), 0);
	assert_int_equal(vmdk_pread(v, buf, MIB, off), 0);
	assert_int_equal(buf[0], byte);
	assert_int_equal(buf[MIB - 1], byte);
	vmdk_close(v);
	free(buf);
}

static uint64_t file_blocks(struct fixture *f, const char *name)
{
	struct stat sb;

	assert_int_equal(f->t->io.ops->stat(f->t->io.ctx, P(f, name), &sb), 0);
	return (uint64_t)sb.st_blocks * 512;
}

static void test_full_clone_keeps_holes(void **state)
{
	struct fixture *f = *state;
	struct vmdk_clone_opts o = { .keep_type = true, .no_reflink = true };
	char err[256] = "";
	char src[512];

	need_cluster(f);
	disk_make(f, "src.vmdk");
	snprintf(src, sizeof(src), "%s", P(f, "src.vmdk"));
	assert_int_equal(vmdk_clone_full(&f->t->io, src, P(f, "full.vmdk"), &o,
					 NULL, err, sizeof(err)),
			 0);
	disk_expect(f, "full.vmdk", 0, 0xab);
	disk_expect(f, "full.vmdk", 40 * MIB, 0xab);
	disk_expect(f, "full.vmdk", 20 * MIB, 0);
	/* Two 4 MiB objects, not 64 MiB: the holes stayed holes. */
	assert_int_equal(file_blocks(f, "full-flat.vmdk"), 8 * MIB);
	/* The target exists now: a second clone onto it is refused. */
	assert_int_equal(vmdk_clone_full(&f->t->io, src, P(f, "full.vmdk"), &o,
					 NULL, err, sizeof(err)),
			 -EEXIST);
}

static void test_linked_clone_reads_its_parent(void **state)
{
	struct fixture *f = *state;
	char err[256] = "";
	char src[512];

	need_cluster(f);
	disk_make(f, "base.vmdk");
	snprintf(src, sizeof(src), "%s", P(f, "base.vmdk"));
	assert_int_equal(vmdk_clone_linked(&f->t->io, src, P(f, "link.vmdk"),
					   err, sizeof(err)),
			 0);
	disk_expect(f, "link.vmdk", 40 * MIB, 0xab);
	disk_expect(f, "link.vmdk", 8 * MIB, 0);
}

static void test_native_clone_refused_nothing_left(void **state)
{
	struct fixture *f = *state;
	char err[256] = "";
	char src[512];
	struct stat sb;

	need_cluster(f);
	disk_make(f, "n.vmdk");
	snprintf(src, sizeof(src), "%s", P(f, "n.vmdk"));
	assert_int_equal(vmdk_clone_native(&f->t->io, src, P(f, "nat.vmdk"),
					   err, sizeof(err)),
			 -EOPNOTSUPP);
	assert_non_null(strstr(err, "cannot share"));
	assert_int_equal(
		f->t->io.ops->stat(f->t->io.ctx, P(f, "nat.vmdk"), &sb),
		-ENOENT);
	assert_int_equal(
		f->t->io.ops->stat(f->t->io.ctx, P(f, "nat-flat.vmdk"), &sb),
		-ENOENT);
}

static void test_names_outside_are_refused(void **state)
{
	struct fixture *f = *state;
	struct store_obj *root, *d, *l;
	char p[600];
	struct stat sb;
	int fd;

	need_cluster(f);
	snprintf(p, sizeof(p), "%s/../x", f->t->root);
	assert_int_equal(f->t->io.ops->stat(f->t->io.ctx, p, &sb), -EXDEV);
	assert_int_equal(f->t->io.ops->stat(f->t->io.ctx, "/etc/passwd", &sb),
			 -EXDEV);
	assert_int_equal(f->st->ops->root(f->st, &root), 0);
	assert_int_equal(f->st->ops->lookup(f->st, root, f->dir, &d), 0);
	assert_int_equal(
		f->st->ops->symlink(f->st, d, "ln", "/etc", NULL, NULL, &l), 0);
	f->st->ops->obj_unref(l);
	assert_int_equal(
		f->t->io.ops->open(f->t->io.ctx, P(f, "ln/passwd"), 0, 0, &fd),
		-ELOOP);
	assert_int_equal(f->t->io.ops->stat(f->t->io.ctx, P(f, "ln"), &sb),
			 -ELOOP);
	f->st->ops->remove(f->st, d, "ln");
	f->st->ops->obj_unref(d);
	f->st->ops->obj_unref(root);
}

static void test_reserve_allocates_every_object(void **state)
{
	struct fixture *f = *state;
	char err[256] = "";

	need_cluster(f);
	disk_make(f, "r.vmdk");
	assert_int_equal(file_blocks(f, "r-flat.vmdk"), 8 * MIB);
	assert_int_equal(vmdk_reserve(&f->t->io, P(f, "r.vmdk"), false, NULL,
				      NULL, err, sizeof(err)),
			 0);
	assert_int_equal(file_blocks(f, "r-flat.vmdk"), 64 * MIB);
	disk_expect(f, "r.vmdk", 0, 0xab); /* kept what was written */
	disk_expect(f, "r.vmdk", 20 * MIB, 0);
}

/* Reads .snapshot/s1/vm/disk of @s: the snapshot's data, read-only, and
 * its handle valid on a second gateway (a fresh mount). */
static void snapshot_dir_reads(struct store *s, const char *conf,
			       const char *sub)
{
	struct store_obj *root, *sd, *s1, *vm, *disk, *again;
	struct store_fh fh;
	struct store *other;
	struct store_attr a;
	char err[512] = "";
	uint8_t buf[16];
	uint32_t n;
	bool eof, sf;

	assert_int_equal(s->ops->root(s, &root), 0);
	assert_int_equal(s->ops->lookup(s, root, ".snapshot", &sd), 0);
	assert_int_equal(s->ops->lookup(s, root, ".snap", &again), -ENOENT);
	assert_int_equal(s->ops->lookup(s, sd, "s1", &s1), 0);
	assert_int_equal(s->ops->lookup(s, s1, "vm", &vm), 0);
	assert_int_equal(s->ops->lookup(s, vm, "disk", &disk), 0);
	assert_int_equal(s->ops->read(s, disk, 0, buf, sizeof(buf), &n, &eof),
			 0);
	assert_int_equal(n, 6);
	assert_memory_equal(buf, "before", 6);
	assert_int_equal(s->ops->write(s, disk, 0, "x", 1, STORE_UNSTABLE, &sf),
			 -EROFS);
	assert_int_equal(s->ops->getattr(s, disk, &a), 0);
	assert_int_equal(a.size_bytes, 6);
	/* Nothing in a snapshot changes. */
	{
		struct store_sattr sa = { .set_size = true };
		const uint8_t verf[8] = { 0 };
		struct store_obj *x;

		assert_int_equal(s->ops->setattr(s, disk, &sa, NULL), -EROFS);
		assert_int_equal(s->ops->create(s, vm, "new",
						STORE_CREATE_GUARDED, NULL,
						verf, NULL, &x),
				 -EROFS);
		assert_int_equal(s->ops->mkdir(s, sd, "s2", NULL, NULL, &x),
				 -EROFS);
		assert_int_equal(s->ops->remove(s, vm, "disk"), -EROFS);
		assert_int_equal(s->ops->rmdir(s, sd, "s1"), -EROFS);
		assert_int_equal(s->ops->link(s, disk, root, "ln"), -EXDEV);
		assert_int_equal(s->ops->commit(s, disk, 0, 0, &sf), 0);
	}
	s->ops->obj_fh(disk, &fh);
	assert_int_equal(fh.len, 31); /* 23 + the snapid */
	assert_int_equal(
		store_cephfs_open("t2", 92, conf, sub, "admin", "",
				  test_cephfs_state(conf, sdir, sizeof(sdir)),
				  NULL, 8, &other, err, sizeof(err)),
		0);
	assert_int_equal(other->ops->resolve(other, &fh, &again), 0);
	assert_int_equal(
		other->ops->read(other, again, 0, buf, sizeof(buf), &n, &eof),
		0);
	assert_memory_equal(buf, "before", 6);
	other->ops->obj_unref(again);
	other->ops->close(other);
	s->ops->obj_unref(disk);
	s->ops->obj_unref(vm);
	s->ops->obj_unref(s1);
	s->ops->obj_unref(sd);
	s->ops->obj_unref(root);
}

/* The snapshot tests run on a store of their own directory: a snapshot
 * is of the whole tree served. */
static void test_snapshots_create_list_restore_delete(void **state)
{
	struct fixture *f = *state;
	const char *conf = getenv("DSNFS_CEPH_CONF");
	const struct store_snap_ops *so;
	struct store_obj *root, *d, *keep, *late, *again;
	struct store_fh fh_keep, fh_late;
	const uint8_t verf[8] = { 0 };
	struct snap_stats stats;
	struct snap_entry *list;
	struct store *s;
	struct store_attr a;
	char err[512] = "", sub[600];
	uint8_t buf[16];
	uint32_t n;
	bool eof, sf;
	size_t count;

	need_cluster(f);
	snprintf(sub, sizeof(sub), "/%s", f->dir);
	assert_int_equal(
		store_cephfs_open("t2", 92, conf, sub, "admin", "",
				  test_cephfs_state(conf, sdir, sizeof(sdir)),
				  NULL, 8, &s, err, sizeof(err)),
		0);
	so = s->ops->snap;
	assert_non_null(so);
	assert_int_equal(s->ops->root(s, &root), 0);
	assert_int_equal(s->ops->mkdir(s, root, "vm", NULL, NULL, &d), 0);
	assert_int_equal(s->ops->create(s, d, "disk", STORE_CREATE_GUARDED,
					NULL, verf, NULL, &keep),
			 0);
	assert_int_equal(
		s->ops->write(s, keep, 0, "before", 6, STORE_FILE_SYNC, &sf),
		0);
	/* Refusals first: a bad name, none yet. */
	assert_int_equal(so->check(s, "../x", false, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(so->check(s, "a/b", false, err, sizeof(err)), -EINVAL);
	assert_int_equal(
		so->restore(s, "nope", NULL, NULL, NULL, err, sizeof(err)),
		-ENOENT);
	assert_int_equal(so->create(s, "s1", &stats, err, sizeof(err)), 0);
	assert_int_equal(so->create(s, "s1", &stats, err, sizeof(err)),
			 -EEXIST);
	assert_int_equal(so->list(s, &list, &count), 0);
	assert_int_equal(count, 1);
	assert_string_equal(list[0].name, "s1");
	assert_true(list[0].created_s > 1700000000);
	free(list);
	/* A datastore below sees s1 in its .snap as "_s1_INO": not its own. */
	{
		char vm[640];
		struct store *below;

		snprintf(vm, sizeof(vm), "%s/vm", sub);
		assert_int_equal(
			store_cephfs_open(
				"t3", 93, conf, vm, "admin", "",
				test_cephfs_state(conf, sdir, sizeof(sdir)),
				NULL, 8, &below, err, sizeof(err)),
			0);
		assert_int_equal(below->ops->snap->list(below, &list, &count),
				 0);
		assert_int_equal(count, 0);
		below->ops->close(below);
	}
	/* Changes after it: new data, a new file. */
	assert_int_equal(
		s->ops->write(s, keep, 0, "AFTER!", 6, STORE_FILE_SYNC, &sf),
		0);
	assert_int_equal(s->ops->create(s, d, "late", STORE_CREATE_GUARDED,
					NULL, verf, NULL, &late),
			 0);
	s->ops->obj_fh(keep, &fh_keep);
	s->ops->obj_fh(late, &fh_late);
	s->ops->obj_unref(late);
	snapshot_dir_reads(s, conf, sub);
	assert_int_equal(
		so->restore(s, "s1", &stats, NULL, NULL, err, sizeof(err)), 0);
	assert_int_equal(stats.removed, 1);
	/* The kept file's handle reads the snapshot's data. */
	s->ops->obj_unref(keep);
	assert_int_equal(s->ops->resolve(s, &fh_keep, &again), 0);
	assert_int_equal(s->ops->read(s, again, 0, buf, sizeof(buf), &n, &eof),
			 0);
	assert_int_equal(n, 6);
	assert_memory_equal(buf, "before", 6);
	assert_int_equal(s->ops->getattr(s, again, &a), 0);
	assert_int_equal(a.size_bytes, 6);
	s->ops->obj_unref(again);
	/* The late one is gone: its handle is STALE. */
	assert_int_equal(s->ops->resolve(s, &fh_late, &again), -ESTALE);
	assert_int_equal(so->remove(s, "s1", err, sizeof(err)), 0);
	assert_int_equal(so->remove(s, "s1", err, sizeof(err)), -ENOENT);
	assert_int_equal(so->list(s, &list, &count), 0);
	assert_int_equal(count, 0);
	s->ops->remove(s, d, "disk");
	s->ops->obj_unref(d);
	s->ops->rmdir(s, root, "vm");
	s->ops->obj_unref(root);
	s->ops->close(s);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_full_clone_keeps_holes),
		T(test_linked_clone_reads_its_parent),
		T(test_native_clone_refused_nothing_left),
		T(test_names_outside_are_refused),
		T(test_reserve_allocates_every_object),
		T(test_snapshots_create_list_restore_delete),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
