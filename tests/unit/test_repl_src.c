// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of the replication source interface (nfsd/repl/src.h) with
 * the local implementation (src_local.c), on the scratch file system: a
 * tree lists its entries with what lstat says (a symlink as a symlink,
 * never followed), reads a symlink's target, opens regular files only,
 * reads ranges (short at the end of the file), and says which ranges
 * may have changed against a base
 * file (the whole file where FIEMAP says nothing; none for an empty
 * file); a local datastore's snapshot NAME is the tree at
 * ROOT/.snapshot/NAME, a snapshot the manifest does not list is not
 * there, a datastore without a manifest lists none; and each error path: a
 * missing directory or file, a directory opened as a file, a file read as a
 * symlink, a path too long.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

#include "nfsd/repl/xfer.h"

struct lab {
	char root[64];
	char snap[128], manifest[128];
};

static void write_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0640);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	assert_int_equal(close(fd), 0);
}

static int setup(void **state)
{
	struct lab *l = calloc(1, sizeof(*l));
	char p[256];
	static unsigned char data[3 * REPL_BLOCK + 100];

	assert_non_null(l);
	strcpy(l->root, "/tmp/test_repl_src.XXXXXX");
	assert_non_null(mkdtemp(l->root));
	snprintf(p, sizeof(p), "%s/.snapshot", l->root);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(l->snap, sizeof(l->snap), "%s/.snapshot/s1", l->root);
	assert_int_equal(mkdir(l->snap, 0755), 0);
	snprintf(l->manifest, sizeof(l->manifest), "%s/manifest", l->root);
	for (size_t i = 0; i < sizeof(data); i++) {
		data[i] = (unsigned char)(i * 7 + 1);
	}
	snprintf(p, sizeof(p), "%s/disk.vmdk", l->snap);
	write_file(p, data, sizeof(data));
	snprintf(p, sizeof(p), "%s/empty", l->snap);
	write_file(p, "", 0);
	snprintf(p, sizeof(p), "%s/vm", l->snap);
	assert_int_equal(mkdir(p, 0750), 0);
	snprintf(p, sizeof(p), "%s/vm/link", l->snap);
	assert_int_equal(symlink("../disk.vmdk", p), 0);
	*state = l;
	return 0;
}

static int teardown(void **state)
{
	struct lab *l = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", l->root);
	assert_int_equal(system(cmd), 0);
	free(l);
	return 0;
}

/* The names of directory @rel of @t, with their types, in one string
 * sorted by the caller's expectation (the order readdir gives varies):
 * each "NAME:T " with T f, d or l. */
static void list_dir(struct repl_src_tree *t, const char *rel, char *out,
		     size_t len)
{
	char name[REPL_SRC_NAME_MAX + 1];
	char seen[8][REPL_SRC_NAME_MAX + 4];
	struct repl_src_dir *d;
	struct stat st;
	size_t n = 0;
	int rc;

	assert_int_equal(t->ops->dir_open(t, rel, &d), 0);
	while ((rc = t->ops->dir_next(d, name, &st)) > 0) {
		assert_true(n < 8);
		snprintf(seen[n++], sizeof(seen[0]), "%s:%c ", name,
			 S_ISREG(st.st_mode)   ? 'f'
			 : S_ISDIR(st.st_mode) ? 'd'
			 : S_ISLNK(st.st_mode) ? 'l'
					       : '?');
	}
	assert_int_equal(rc, 0);
	t->ops->dir_close(d);
	qsort(seen, n, sizeof(seen[0]),
	      (int (*)(const void *, const void *))strcmp);
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		strncat(out, seen[i], len - strlen(out) - 1);
	}
}

static void tree_lists_and_reads(void **state)
{
	struct lab *l = *state;
	struct repl_src_tree *t;
	struct repl_src_file *f;
	unsigned char buf[2 * REPL_BLOCK];
	char got[256], tgt[64];
	struct stat st;

	assert_int_equal(repl_src_dir_tree(l->snap, &t), 0);
	list_dir(t, "", got, sizeof(got));
	assert_string_equal(got, "disk.vmdk:f empty:f vm:d ");
	list_dir(t, "vm", got, sizeof(got));
	assert_string_equal(got, "link:l ");
	assert_int_equal(t->ops->readlink(t, "vm/link", tgt, sizeof(tgt)),
			 (int)strlen("../disk.vmdk"));
	assert_string_equal(tgt, "../disk.vmdk");

	assert_int_equal(t->ops->file_open(t, "disk.vmdk", &f, &st), 0);
	assert_int_equal(st.st_size, 3 * REPL_BLOCK + 100);
	assert_int_equal(f->ops->pread(f, buf, REPL_BLOCK, REPL_BLOCK),
			 REPL_BLOCK);
	assert_int_equal(buf[0], (unsigned char)(REPL_BLOCK * 7 + 1));
	/* Short at the end of the file, nothing past it. */
	assert_int_equal(f->ops->pread(f, buf, sizeof(buf), 3 * REPL_BLOCK),
			 100);
	assert_int_equal(f->ops->pread(f, buf, 10, 4 * REPL_BLOCK), 0);
	f->ops->file_close(f);
	t->ops->close(t);
}

static void changed_ranges(void **state)
{
	struct lab *l = *state;
	struct repl_src_tree *t;
	struct repl_src_file *f, *e;
	struct repl_range *r;
	struct stat st, es;
	uint64_t covered = 0;
	size_t n;

	assert_int_equal(repl_src_dir_tree(l->snap, &t), 0);
	assert_int_equal(t->ops->file_open(t, "disk.vmdk", &f, &st), 0);
	/* No base: every byte of its data a candidate (FIEMAP or not),
	 * in whole blocks up to the file's end. */
	assert_int_equal(
		t->ops->changed(t, f, NULL, (uint64_t)st.st_size, 0, &r, &n),
		0);
	assert_true(n >= 1);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(r[i].off % REPL_BLOCK, 0);
		covered += r[i].len;
	}
	assert_int_equal(covered, (uint64_t)st.st_size);
	free(r);
	/* A base that is another file (a copy, nothing shared): the data
	 * is still a candidate. */
	assert_int_equal(t->ops->file_open(t, "empty", &e, &es), 0);
	assert_int_equal(
		t->ops->changed(t, f, e, (uint64_t)st.st_size, 0, &r, &n), 0);
	assert_true(n >= 1 &&
		    r[n - 1].off + r[n - 1].len == (uint64_t)st.st_size);
	free(r);
	/* An empty file: nothing. */
	assert_int_equal(t->ops->changed(t, e, NULL, 0, 0, &r, &n), 0);
	assert_int_equal(n, 0);
	assert_null(r);
	e->ops->file_close(e);
	f->ops->file_close(f);
	t->ops->close(t);
}

static void tree_errors(void **state)
{
	struct lab *l = *state;
	char longdir[PATH_MAX + 16], tgt[64];
	struct repl_src_tree *t;
	struct repl_src_file *f;
	struct repl_src_dir *d;
	struct stat st;

	assert_int_equal(repl_src_dir_tree(l->snap, &t), 0);
	assert_int_equal(t->ops->dir_open(t, "nope", &d), -ENOENT);
	assert_int_equal(t->ops->dir_open(t, "empty", &d), -ENOTDIR);
	assert_int_equal(t->ops->file_open(t, "nope", &f, &st), -ENOENT);
	assert_int_equal(t->ops->file_open(t, "vm", &f, &st), -EINVAL);
	/* A symlink is never followed. */
	assert_int_equal(t->ops->file_open(t, "vm/link", &f, &st), -ELOOP);
	assert_int_equal(t->ops->readlink(t, "empty", tgt, sizeof(tgt)),
			 -EINVAL);
	t->ops->close(t);
	memset(longdir, 'a', sizeof(longdir) - 1);
	longdir[0] = '/';
	longdir[sizeof(longdir) - 1] = '\0';
	assert_int_equal(repl_src_dir_tree(longdir, &t), -ENAMETOOLONG);
}

static void local_datastore_snapshots(void **state)
{
	struct lab *l = *state;
	struct repl_src_local src;
	struct repl_src *s = &src.pub;
	struct repl_src_tree *t;
	struct snap_entry *list = NULL;
	char got[256], why[128];
	size_t n = 99;

	/* No manifest yet: no snapshot. */
	repl_src_local_init(&src, l->root, l->manifest, NULL);
	/* A directory under .snapshot the manifest does not list is not a
	 * snapshot of the datastore. */
	assert_int_not_equal(s->ops->snap_check(s, "s1"), 0);
	assert_int_equal(s->ops->snap_list(s, &list, &n), 0);
	assert_int_equal(n, 0);
	free(list);
	/* Its tree is ROOT/.snapshot/NAME. */
	assert_int_equal(s->ops->tree_open(s, "s1", &t, why, sizeof(why)), 0);
	list_dir(t, "", got, sizeof(got));
	assert_string_equal(got, "disk.vmdk:f empty:f vm:d ");
	t->ops->close(t);
	/* A local source is not allocated: nothing to free. */
	assert_null(s->ops->free);
	repl_src_free(s);
	repl_src_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(tree_lists_and_reads, setup,
						teardown),
		cmocka_unit_test_setup_teardown(changed_ranges, setup,
						teardown),
		cmocka_unit_test_setup_teardown(tree_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(local_datastore_snapshots,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
