// SPDX-License-Identifier: Apache-2.0
/*
 * nfs3_local_fixture: ds1 of the nfs3 fixture on the real local store in
 * a temporary directory (tests/lib/nfs3_local_fixture.h).
 */
#include "tests/lib/nfs3_local_fixture.h"
#include "nfsd/store/local/local.h"

#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cmocka.h>

static int nfs3_local_fixture_rm_one(const char *path, const struct stat *sb,
				     int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void nfs3_local_fixture_open(struct nfs3_local_fixture *lf, const char *tag)
{
	char ds[96], st_dir[96], err[256] = "";
	struct export *e;
	void *fx_state;

	nfs3_fixture_setup(&fx_state);
	lf->fx = fx_state;
	snprintf(lf->dir, sizeof(lf->dir), "/tmp/dsnfs-%s-XXXXXX", tag);
	assert_non_null(mkdtemp(lf->dir));
	snprintf(ds, sizeof(ds), "%s/ds1", lf->dir);
	snprintf(st_dir, sizeof(st_dir), "%s/state", lf->dir);
	assert_int_equal(mkdir(ds, 0777), 0);
	assert_int_equal(chmod(ds, 0777), 0);
	assert_int_equal(mkdir(st_dir, 0700), 0);
	e = &lf->fx->exports[NFS3_FIXTURE_DS1];
	lf->fake = e->store;
	if (store_local_open("ds1", ds, e->id, st_dir, &e->store, err,
			     sizeof(err)) != 0) {
		fail_msg("store_local_open: %s", err);
	}
}

void nfs3_local_fixture_close(struct nfs3_local_fixture *lf)
{
	struct export *e = &lf->fx->exports[NFS3_FIXTURE_DS1];
	void *fx_state = lf->fx;

	e->store->ops->close(e->store);
	e->store = lf->fake;
	nfs3_fixture_teardown(&fx_state);
	nftw(lf->dir, nfs3_local_fixture_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int nfs3_local_fixture_setup(void **state, const char *tag)
{
	struct nfs3_local_fixture *lf = calloc(1, sizeof(*lf));

	assert_non_null(lf);
	nfs3_local_fixture_open(lf, tag);
	*state = lf;
	return 0;
}

int nfs3_local_fixture_teardown(void **state)
{
	struct nfs3_local_fixture *lf = *state;

	nfs3_local_fixture_close(lf);
	free(lf);
	return 0;
}
