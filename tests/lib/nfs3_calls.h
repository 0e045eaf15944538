/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nfs3_calls: SYMLINK, MKNOD, RENAME and LINK through an
 * nfs3_fixture (nfs3_fixture.h), for the tests of the namespace
 * procedures (test_nfs3_namespace on the fakes, test_nfs3_snapdir on a
 * real disk).  Each answers the status and asserts what every answer of
 * that procedure must carry (the new object's type, the directories'
 * wcc_data).
 */
#ifndef DSNFS_TESTS_NFS3_CALLS_H
#define DSNFS_TESTS_NFS3_CALLS_H

#include "tests/lib/nfs3_fixture.h"

/* SYMLINK @name -> @target in @dir; on success checks the type. */
nfsstat3 nfs3_call_symlink(struct nfs3_fixture *fx, const nfs_fh3 *dir,
			   const char *name, const char *target);

/* MKNOD @name of @type in @dir (a device is 8,1); on success *@attr
 * gets the new node's attributes. */
nfsstat3 nfs3_call_mknod(struct nfs3_fixture *fx, const nfs_fh3 *dir,
			 const char *name, ftype3 type, fattr3 *attr);

/* RENAME; on success checks that both directories' wcc_data follow. */
nfsstat3 nfs3_call_rename(struct nfs3_fixture *fx, const nfs_fh3 *from,
			  const char *from_name, const nfs_fh3 *to,
			  const char *to_name);

/* LINK @file as @name in @dir; on success *@nlink gets its link count. */
nfsstat3 nfs3_call_link(struct nfs3_fixture *fx, const nfs_fh3 *file,
			const nfs_fh3 *dir, const char *name, uint32_t *nlink);

#endif
