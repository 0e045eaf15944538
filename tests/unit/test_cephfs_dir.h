// SPDX-License-Identifier: Apache-2.0
/*
 * test_cephfs_dir: the end of a CephFS unit test that made a directory of
 * its own through gateway @a (test_store_cephfs*.c): what the test left
 * in it (one level) goes, then the directory, then the gateways.
 */
#ifndef DSNFS_TEST_CEPHFS_DIR_H
#define DSNFS_TEST_CEPHFS_DIR_H

#include <string.h>

#include "nfsd/store/store.h"

struct test_cephfs_dir {
	struct store *a;
	struct store_obj *dir_a;
};

static inline int test_cephfs_dir_clean_cb(void *arg, const char *name,
					   uint64_t fileid, uint64_t cookie)
{
	struct test_cephfs_dir *d = arg;

	(void)fileid;
	(void)cookie;
	if (strcmp(name, ".") && strcmp(name, "..")) {
		d->a->ops->remove(d->a, d->dir_a, name);
	}
	return 0;
}

/* Removes @dir (@dir_a in @a, a reference given up) and what is in it,
 * then closes @b and @a (either may be NULL). */
static inline void test_cephfs_dir_end(struct store *a, struct store *b,
				       struct store_obj *dir_a, const char *dir)
{
	struct test_cephfs_dir d = { .a = a, .dir_a = dir_a };
	struct store_obj *root;

	if (dir_a) {
		a->ops->readdir(a, dir_a, 0, test_cephfs_dir_clean_cb, &d);
		a->ops->obj_unref(dir_a);
		if (!a->ops->root(a, &root)) {
			a->ops->rmdir(a, root, dir);
			a->ops->obj_unref(root);
		}
	}
	if (b) {
		b->ops->close(b);
	}
	if (a) {
		a->ops->close(a);
	}
}

#endif
