// SPDX-License-Identifier: Apache-2.0
/*
 * test_cephfs_dir: the gateways and the directory of a CephFS unit test
 * (test_store_cephfs*.c): a gateway on the root of the suite's cluster,
 * the test's own directory made through one, and at the end what the
 * test left in it (one level), the directory, then the gateways.
 */
#ifndef DSNFS_TEST_CEPHFS_DIR_H
#define DSNFS_TEST_CEPHFS_DIR_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nfsd/store/cephfs/cephfs.h"
#include "nfsd/store/store.h"
#include "tests/unit/test_cephfs_state.h"

/* Opens gateway @name of export @export_id on the root of the cluster
 * DSNFS_CEPH_CONF names: 0, or -1 with the reason printed. */
static inline int test_cephfs_gateway(const char *name, uint32_t export_id,
				      struct store **out)
{
	static char sdir[600];
	const char *conf = getenv("DSNFS_CEPH_CONF");
	char err[512] = "";

	if (store_cephfs_open(name, export_id, conf, "/", "admin", "",
			      test_cephfs_state(conf, sdir, sizeof(sdir)), 8,
			      out, err, sizeof(err))) {
		fprintf(stderr, "store_cephfs_open: %s\n", err);
		return -1;
	}
	return 0;
}

/* Makes the test's directory "@prefix-PID" (into @dir, @len bytes) in
 * @a's root: 0 with *dir_a, or -1. */
static inline int test_cephfs_dir_begin(struct store *a, const char *prefix,
					char *dir, size_t len,
					struct store_obj **dir_a)
{
	struct store_obj *root;
	int rc;

	snprintf(dir, len, "%s-%d", prefix, (int)getpid());
	if (a->ops->root(a, &root)) {
		return -1;
	}
	rc = a->ops->mkdir(a, root, dir, NULL, NULL, dir_a);
	a->ops->obj_unref(root);
	return rc ? -1 : 0;
}

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
