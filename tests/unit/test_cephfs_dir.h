// SPDX-License-Identifier: Apache-2.0
/*
 * test_cephfs_dir: the gateways and the directory of a CephFS unit test
 * (test_store_cephfs*.c): a gateway on the root of the suite's cluster,
 * and a cmocka fixture of two gateways on a directory made for the test.
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
			      test_cephfs_state(conf, sdir, sizeof(sdir)), NULL,
			      8, out, err, sizeof(err))) {
		fprintf(stderr, "store_cephfs_open: %s\n", err);
		return -1;
	}
	return 0;
}

/* Two gateways on the same directory, made for the test in a's root. */
struct test_cephfs_pair {
	struct store *a, *b; /* NULL without a cluster: the tests skip */
	struct store_obj *dir_a; /* the test's directory, in a */
	char dir[64];
};

static inline int test_cephfs_pair_clean_cb(void *arg, const char *name,
					    uint64_t fileid, uint64_t cookie)
{
	struct test_cephfs_pair *p = arg;

	(void)fileid;
	(void)cookie;
	if (strcmp(name, ".") && strcmp(name, "..")) {
		p->a->ops->remove(p->a, p->dir_a, name);
	}
	return 0;
}

/* cmocka setup: *state a pair with gateways of export @export_id and
 * the directory "@prefix-PID"; without DSNFS_CEPH_CONF, an empty pair. */
static inline int test_cephfs_pair_setup(void **state, uint32_t export_id,
					 const char *prefix)
{
	const char *conf = getenv("DSNFS_CEPH_CONF");
	struct test_cephfs_pair *p = calloc(1, sizeof(*p));
	struct store_obj *root;
	int rc;

	*state = p;
	if (!p) {
		return -1;
	}
	if (!conf || !conf[0] || access(conf, R_OK) != 0) {
		return 0;
	}
	if (test_cephfs_gateway("c1", export_id, &p->a) ||
	    test_cephfs_gateway("c1", export_id, &p->b) ||
	    p->a->ops->root(p->a, &root)) {
		return -1;
	}
	snprintf(p->dir, sizeof(p->dir), "%s-%d", prefix, (int)getpid());
	rc = p->a->ops->mkdir(p->a, root, p->dir, NULL, NULL, &p->dir_a);
	p->a->ops->obj_unref(root);
	return rc ? -1 : 0;
}

/* cmocka teardown: what the test left in its directory (one level) goes,
 * then the directory, then the gateways. */
static inline int test_cephfs_pair_teardown(void **state)
{
	struct test_cephfs_pair *p = *state;
	struct store_obj *root;

	if (p && p->dir_a) {
		p->a->ops->readdir(p->a, p->dir_a, 0, test_cephfs_pair_clean_cb,
				   p);
		p->a->ops->obj_unref(p->dir_a);
		if (!p->a->ops->root(p->a, &root)) {
			p->a->ops->rmdir(p->a, root, p->dir);
			p->a->ops->obj_unref(root);
		}
	}
	if (p && p->b) {
		p->b->ops->close(p->b);
	}
	if (p && p->a) {
		p->a->ops->close(p->a);
	}
	free(p);
	return 0;
}

#endif
