// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of the store-backed replication source (nfsd/repl/src_store.c)
 * over the in-memory store (tests/lib/fake_store.c) with native snapshots
 * of the test's own (a snapshot is a directory .snapshot/NAME of the
 * store's root, as the cephfs backend's lookup gives it): a snapshot's
 * tree is walked through the store's ops (entries with their types, a
 * symlink's target, a file read by range, short at its end), a file's
 * changed ranges are the store's answer or, where it has none or cannot
 * tell (-EOPNOTSUPP), the whole file; a transfer (xfer.c) from it to a
 * local directory copies the tree; the snapshot calls reach the store's;
 * and each error path: no such snapshot, a directory opened as a file,
 * "..", a readdir or a read failing, a store without snapshots, the
 * datastore's store gone (its cluster down: -EAGAIN).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "nfsd/repl/src.h"

#include "nfsd/export/export.h"
#include "nfsd/repl/xfer.h"
#include "nfsd/store/store_tree.h"
#include "tests/lib/fake_store.h"

#define DISK_BYTES (3 * REPL_BLOCK + 100)

struct lab {
	struct store *st;
	struct store_ops ops; /* the fake's, with snapshots */
	struct export exp;
	char root[64];
	int creates, changed_calls;
	int changed_err; /* what the store's changed answers; 0: ranges */
};

static struct lab *the_lab; /* the snapshot ops find their test here */

static int t_check(struct store *st, const char *name, bool exists,
		   char *errbuf, size_t errlen)
{
	(void)st;
	(void)exists;
	snprintf(errbuf, errlen, "checked");
	return strcmp(name, "s1") ? -ENOENT : 0;
}

static int t_create(struct store *st, const char *name, struct snap_stats *out,
		    char *errbuf, size_t errlen)
{
	(void)st;
	(void)name;
	(void)out;
	(void)errbuf;
	(void)errlen;
	the_lab->creates++;
	return 0;
}

static int t_remove(struct store *st, const char *name, char *errbuf,
		    size_t errlen)
{
	(void)st;
	snprintf(errbuf, errlen, "no snapshot %s", name);
	return -ENOENT;
}

static int t_list(struct store *st, struct snap_entry **out, size_t *n)
{
	(void)st;
	*out = calloc(1, sizeof(**out));
	assert_non_null(*out);
	strcpy((*out)[0].name, "s1");
	(*out)[0].created_s = 1234;
	*n = 1;
	return 0;
}

/* The second block of the file changed, or the lab's error. */
static int t_changed(struct store *st, struct store_obj *cur,
		     struct store_obj *base, uint64_t size, uint64_t base_size,
		     struct store_range **out, size_t *n)
{
	(void)st;
	(void)cur;
	(void)base;
	(void)size;
	(void)base_size;
	the_lab->changed_calls++;
	if (the_lab->changed_err) {
		return the_lab->changed_err;
	}
	*out = malloc(sizeof(**out));
	assert_non_null(*out);
	(*out)[0].off = REPL_BLOCK;
	(*out)[0].len = REPL_BLOCK;
	*n = 1;
	return 0;
}

static const struct store_snap_ops t_snap = {
	.check = t_check,
	.create = t_create,
	.remove = t_remove,
	.list = t_list,
	.changed = t_changed,
};

static struct store_obj *mk(struct lab *l, struct store_obj *dir,
			    const char *name, int type)
{
	static const struct store_cred root = { 0 };
	const uint8_t verf[8] = { 0 };
	struct store *st = l->st;
	struct store_obj *o;
	int err;

	if (type == 'd') {
		err = st->ops->mkdir(st, dir, name, NULL, &root, &o);
	} else if (type == 'l') {
		err = st->ops->symlink(st, dir, name, "../disk", NULL, &root,
				       &o);
	} else {
		err = st->ops->create(st, dir, name, STORE_CREATE_GUARDED, NULL,
				      verf, &root, &o);
	}
	assert_int_equal(err, 0);
	return o;
}

static int setup(void **state)
{
	struct lab *l = calloc(1, sizeof(*l));
	static unsigned char data[DISK_BYTES];
	struct store_obj *root, *sd, *s1, *vm, *o;
	bool sf;

	assert_non_null(l);
	assert_int_equal(fake_store_new("ds1", 7, 0, 0, &l->st), 0);
	l->ops = *l->st->ops;
	l->ops.snap = &t_snap;
	l->st->ops = &l->ops;
	snprintf(l->exp.name, sizeof(l->exp.name), "ds1");
	l->exp.store = l->st;
	strcpy(l->root, "/tmp/test_repl_src_store.XXXXXX");
	assert_non_null(mkdtemp(l->root));
	the_lab = l;

	/* .snapshot/s1: disk, vm/, vm/link -> ../disk */
	for (size_t i = 0; i < sizeof(data); i++) {
		data[i] = (unsigned char)(i * 13 + 5);
	}
	assert_int_equal(l->st->ops->root(l->st, &root), 0);
	sd = mk(l, root, ".snapshot", 'd');
	s1 = mk(l, sd, "s1", 'd');
	o = mk(l, s1, "disk", 'f');
	assert_int_equal(l->st->ops->write(l->st, o, 0, data, sizeof(data),
					   STORE_FILE_SYNC, &sf),
			 0);
	l->st->ops->obj_unref(o);
	vm = mk(l, s1, "vm", 'd');
	l->st->ops->obj_unref(mk(l, vm, "link", 'l'));
	l->st->ops->obj_unref(vm);
	l->st->ops->obj_unref(s1);
	l->st->ops->obj_unref(sd);
	l->st->ops->obj_unref(root);
	*state = l;
	return 0;
}

static int teardown(void **state)
{
	struct lab *l = *state;
	char cmd[128];

	assert_int_equal(fake_store_refs(l->st), 0);
	l->st->ops->close(l->st);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", l->root);
	assert_int_equal(system(cmd), 0);
	free(l);
	return 0;
}

static void tree_walked_through_the_store(void **state)
{
	struct lab *l = *state;
	char name[REPL_SRC_NAME_MAX + 1], why[128], tgt[32];
	unsigned char buf[2 * REPL_BLOCK];
	struct repl_src_tree *t;
	struct repl_src_file *f;
	struct repl_src_dir *d;
	struct repl_src *s;
	struct repl_range *r;
	struct stat st;
	int seen = 0;
	size_t n;

	assert_int_equal(repl_src_store_new(&l->exp, NULL, &s), 0);
	assert_int_equal(s->ops->tree_open(s, "s1", &t, why, sizeof(why)), 0);
	assert_int_equal(t->ops->dir_open(t, "", &d), 0);
	while (t->ops->dir_next(d, name, &st) > 0) {
		if (!strcmp(name, "disk")) {
			assert_true(S_ISREG(st.st_mode));
			assert_int_equal(st.st_size, DISK_BYTES);
			seen |= 1;
		} else if (!strcmp(name, "vm")) {
			assert_true(S_ISDIR(st.st_mode));
			seen |= 2;
		} else {
			fail_msg("unexpected %s", name);
		}
	}
	t->ops->dir_close(d);
	assert_int_equal(seen, 3);
	assert_int_equal(t->ops->readlink(t, "vm/link", tgt, sizeof(tgt)), 7);
	assert_string_equal(tgt, "../disk");

	assert_int_equal(t->ops->file_open(t, "disk", &f, &st), 0);
	assert_int_equal(f->ops->pread(f, buf, REPL_BLOCK, REPL_BLOCK),
			 REPL_BLOCK);
	assert_int_equal(buf[0], (unsigned char)(REPL_BLOCK * 13 + 5));
	assert_int_equal(f->ops->pread(f, buf, sizeof(buf), 3 * REPL_BLOCK),
			 100);
	/* The store's answer, at the engine's units. */
	assert_int_equal(
		t->ops->changed(t, f, f, DISK_BYTES, DISK_BYTES, &r, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(r[0].off, REPL_BLOCK);
	assert_int_equal(r[0].len, REPL_BLOCK);
	free(r);
	/* It cannot tell: the whole file. */
	l->changed_err = -EOPNOTSUPP;
	assert_int_equal(t->ops->changed(t, f, NULL, DISK_BYTES, 0, &r, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(r[0].off, 0);
	assert_int_equal(r[0].len, DISK_BYTES);
	free(r);
	/* Another failure is the transfer's. */
	l->changed_err = -EIO;
	assert_int_equal(t->ops->changed(t, f, NULL, DISK_BYTES, 0, &r, &n),
			 -EIO);
	f->ops->file_close(f);
	t->ops->close(t);
	repl_src_free(s);
}

static void snapshot_calls_reach_the_store(void **state)
{
	struct lab *l = *state;
	struct snap_entry *list;
	struct repl_src *s;
	char why[128] = "";
	size_t n;

	assert_int_equal(repl_src_store_new(&l->exp, NULL, &s), 0);
	assert_int_equal(s->ops->snap(s, REPL_GUARD_CREATE, "repl-r1-1", why,
				      sizeof(why)),
			 0);
	assert_int_equal(l->creates, 1);
	assert_int_equal(
		s->ops->snap(s, REPL_GUARD_DELETE, "gone", why, sizeof(why)),
		-ENOENT);
	assert_string_equal(why, "no snapshot gone");
	assert_int_equal(s->ops->snap_check(s, "s1"), 0);
	assert_int_equal(s->ops->snap_check(s, "s9"), -ENOENT);
	assert_int_equal(s->ops->snap_list(s, &list, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(list[0].name, "s1");
	free(list);
	repl_src_free(s);
}

static void transfer_from_the_store(void **state)
{
	struct lab *l = *state;
	char dst[96], journal[96], path[160], why[512] = "";
	unsigned char got[DISK_BYTES];
	struct repl_xfer_args a = { 0 };
	struct repl_xfer_stats xs;
	struct repl_src *s;
	int fd;

	snprintf(dst, sizeof(dst), "%s/dst", l->root);
	snprintf(journal, sizeof(journal), "%s/journal", l->root);
	assert_int_equal(mkdir(dst, 0755), 0);
	assert_int_equal(repl_src_store_new(&l->exp, NULL, &s), 0);
	assert_int_equal(
		s->ops->tree_open(s, "s1", &a.src_tree, why, sizeof(why)), 0);
	/* A baseline of a store that cannot tell: the whole file. */
	l->changed_err = -EOPNOTSUPP;
	/* Named as the source's snapshot: still there at the end. */
	a.name = "s1";
	a.dst = dst;
	a.journal = journal;
	a.from = s;
	assert_int_equal(repl_xfer_run(&a, &xs, why, sizeof(why)), 0);
	assert_int_equal(xs.files, 1);
	assert_int_equal(xs.sent_bytes, DISK_BYTES);
	assert_int_equal(l->changed_calls, 1);
	snprintf(path, sizeof(path), "%s/disk", dst);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, got, sizeof(got)), DISK_BYTES);
	close(fd);
	assert_int_equal(got[REPL_BLOCK], (unsigned char)(REPL_BLOCK * 13 + 5));
	snprintf(path, sizeof(path), "%s/vm/link", dst);
	assert_int_equal(readlink(path, why, sizeof(why)), 7);
	a.src_tree->ops->close(a.src_tree);
	repl_src_free(s);
}

static void store_errors(void **state)
{
	struct lab *l = *state;
	char name[REPL_SRC_NAME_MAX + 1], why[128] = "";
	unsigned char buf[16];
	struct repl_src_tree *t;
	struct repl_src_file *f;
	struct repl_src_dir *d;
	struct snap_entry *list;
	struct repl_src *s;
	struct stat st;
	size_t n;

	assert_int_equal(repl_src_store_new(&l->exp, NULL, &s), 0);
	assert_int_equal(s->ops->tree_open(s, "s9", &t, why, sizeof(why)),
			 -ENOENT);
	assert_string_equal(why, "volume ds1: snapshot s9: No such file or "
				 "directory");
	assert_int_equal(s->ops->tree_open(s, "s1", &t, why, sizeof(why)), 0);
	assert_int_equal(t->ops->file_open(t, "vm", &f, &st), -EINVAL);
	assert_int_equal(t->ops->file_open(t, "nope", &f, &st), -ENOENT);
	assert_int_equal(t->ops->dir_open(t, "vm/../..", &d), -EINVAL);
	assert_int_equal(t->ops->dir_open(t, "nope", &d), -ENOENT);
	fake_store_fail_next(l->st, "readdir", -EIO);
	assert_int_equal(t->ops->dir_open(t, "vm", &d), -EIO);
	/* A lookup failing while the entries are looked at. */
	assert_int_equal(t->ops->dir_open(t, "", &d), 0);
	fake_store_fail_next(l->st, "lookup", -EIO);
	assert_int_equal(t->ops->dir_next(d, name, &st), -EIO);
	t->ops->dir_close(d);
	assert_int_equal(t->ops->file_open(t, "disk", &f, &st), 0);
	fake_store_fail_next(l->st, "read", -EIO);
	assert_int_equal(f->ops->pread(f, buf, sizeof(buf), 0), -EIO);
	f->ops->file_close(f);
	t->ops->close(t);

	/* Its cluster down: no store behind the datastore now. */
	l->exp.store = NULL;
	assert_int_equal(s->ops->tree_open(s, "s1", &t, why, sizeof(why)),
			 -EAGAIN);
	assert_string_equal(why, "volume ds1: its cluster is down");
	assert_int_equal(
		s->ops->snap(s, REPL_GUARD_CREATE, "x", why, sizeof(why)),
		-EAGAIN);
	assert_int_equal(s->ops->snap_check(s, "s1"), -EAGAIN);
	assert_int_equal(s->ops->snap_list(s, &list, &n), -EAGAIN);
	repl_src_free(s);
	l->exp.store = l->st;

	/* A store without native snapshots is no source. */
	l->ops.snap = NULL;
	assert_int_equal(repl_src_store_new(&l->exp, NULL, &s), -EOPNOTSUPP);
	l->ops.snap = &t_snap;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(tree_walked_through_the_store,
						setup, teardown),
		cmocka_unit_test_setup_teardown(snapshot_calls_reach_the_store,
						setup, teardown),
		cmocka_unit_test_setup_teardown(transfer_from_the_store, setup,
						teardown),
		cmocka_unit_test_setup_teardown(store_errors, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
