/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nfs3_local_fixture: an nfs3_fixture (tests/lib/nfs3_fixture.h) whose
 * NFS3_FIXTURE_DS1 export serves the real local store
 * (nfsd/store/local/local*.c) in a fresh mkdtemp() directory, for the tests
 * that run the NFSv3 procedures against a real disk.  The other exports
 * keep their fakes.
 */
#ifndef DSNFS_TESTS_NFS3_LOCAL_FIXTURE_H
#define DSNFS_TESTS_NFS3_LOCAL_FIXTURE_H

#include "nfsd/store/store.h"
#include "tests/lib/nfs3_fixture.h"

struct nfs3_local_fixture {
	struct nfs3_fixture *fx; /* first: a test's *state may point here */
	struct store *fake; /* ds1's fake, put back at close */
	char dir[64];
};

/*
 * Sets up @lf: the nfs3_fixture, a directory /tmp/dsnfs-@tag-XXXXXX with
 * ds1/ (the store's root, 0777) and state/ (its state, 0700), and the
 * local store over them as ds1's store.  Asserts success.
 */
void nfs3_local_fixture_open(struct nfs3_local_fixture *lf, const char *tag);

/* Closes the local store, puts the fake back, tears the nfs3_fixture down
 * (asserting every store object was released) and removes the directory. */
void nfs3_local_fixture_close(struct nfs3_local_fixture *lf);

/* The cmocka setup and teardown around the two: *@state is a fixture
 * made with calloc() and opened with @tag, then closed and freed. */
int nfs3_local_fixture_setup(void **state, const char *tag);
int nfs3_local_fixture_teardown(void **state);

#endif
