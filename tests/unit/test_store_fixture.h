/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_store_fixture: the fixture of the local-store tests
 * (test_store_local*.c): a mkdtemp() directory holding a state directory
 * and a datastore directory, the store opened on it, its root object, and
 * helpers that assert each step.  Include after <cmocka.h>.
 */
#ifndef DSNFS_TEST_STORE_FIXTURE_H
#define DSNFS_TEST_STORE_FIXTURE_H

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nfsd/store/store.h"
#include "nfsd/store/local/local.h"
#include "nfsd/store/local/local_int.h"

#define TEST_EXPORT_ID 0x0d5f5001u

struct fixture {
	char dir[64];
	char state[96];
	char ds[96];
	struct store *st;
	const struct store_ops *ops;
	struct store_obj *root;
};

static const struct store_cred test_root_cred = { .uid = 0, .gid = 0 };

static inline int fixture_rm_one(const char *path, const struct stat *sb,
				 int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static inline int fixture_open(struct fixture *f)
{
	char err[256] = "";
	int ret;

	ret = store_local_open("ds1", f->ds, TEST_EXPORT_ID, f->state, &f->st,
			       err, sizeof(err));
	if (ret != 0) {
		fprintf(stderr, "store_local_open: %s\n", err);
		return ret;
	}
	f->ops = f->st->ops;
	return f->ops->root(f->st, &f->root);
}

static inline void fixture_close(struct fixture *f)
{
	if (f->st != NULL) {
		f->ops->obj_unref(f->root);
		f->ops->close(f->st);
		f->st = NULL;
		f->root = NULL;
	}
}

static inline int fixture_setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (f == NULL) {
		return -1;
	}
	strcpy(f->dir, "/tmp/dsnfs-store-XXXXXX");
	if (mkdtemp(f->dir) == NULL) {
		return -1;
	}
	snprintf(f->state, sizeof(f->state), "%s/state", f->dir);
	snprintf(f->ds, sizeof(f->ds), "%s/ds", f->dir);
	if (mkdir(f->state, 0700) != 0 || mkdir(f->ds, 0755) != 0) {
		return -1;
	}
	if (fixture_open(f) != 0) {
		return -1;
	}
	*state = f;
	return 0;
}

static inline int fixture_teardown(void **state)
{
	struct fixture *f = *state;

	fixture_close(f);
	nftw(f->dir, fixture_rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
	return 0;
}

/* Closes and reopens the store (a server restart; the cache starts cold). */
static inline void fixture_reopen(struct fixture *f)
{
	fixture_close(f);
	assert_int_equal(fixture_open(f), 0);
}

/* "<ds>/<rel>" into buf. */
static inline const char *fixture_path(const struct fixture *f, const char *rel,
				       char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", f->ds, rel);
	return buf;
}

static inline struct store_obj *fixture_file(struct fixture *f,
					     struct store_obj *dir,
					     const char *name, const void *data,
					     uint32_t len)
{
	struct store_obj *obj = NULL;
	bool sync_failed;

	assert_int_equal(f->ops->create(f->st, dir, name, STORE_CREATE_GUARDED,
					NULL, NULL, &test_root_cred, &obj),
			 0);
	if (len > 0) {
		assert_int_equal(f->ops->write(f->st, obj, 0, data, len,
					       STORE_UNSTABLE, &sync_failed),
				 0);
	}
	return obj;
}

static inline struct store_obj *
fixture_dir(struct fixture *f, struct store_obj *dir, const char *name)
{
	struct store_obj *obj = NULL;

	assert_int_equal(
		f->ops->mkdir(f->st, dir, name, NULL, &test_root_cred, &obj),
		0);
	return obj;
}

static inline struct store_obj *
fixture_lookup(struct fixture *f, struct store_obj *dir, const char *name)
{
	struct store_obj *obj = NULL;

	assert_int_equal(f->ops->lookup(f->st, dir, name, &obj), 0);
	return obj;
}

static inline struct store_attr fixture_attr(struct fixture *f,
					     struct store_obj *obj)
{
	struct store_attr attr;

	assert_int_equal(f->ops->getattr(f->st, obj, &attr), 0);
	return attr;
}

static inline uint64_t fixture_fileid(struct fixture *f, struct store_obj *obj)
{
	return fixture_attr(f, obj).fileid;
}

#endif
