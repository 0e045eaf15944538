/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nfs3_fixture: an NFSv3 service over four fake stores (fake_store.c) and
 * a hand-built request, for the tests/unit/test_nfs3_*.c files.  Calls go
 * through the program's procedure table as rpc/dispatch would make them.
 * Deferred work needs request_defer(): each test file defines its own
 * synchronous one (it is not here, so that binaries with the real
 * dispatcher do not get two).
 *
 *   NFS3_FIXTURE_DS1      id 101, read-write, everyone, root_squash
 *   NFS3_FIXTURE_DS2      id 102, read-write, everyone (for XDEV)
 *   NFS3_FIXTURE_RO       id 103, read-only
 *   NFS3_FIXTURE_LIMITED  id 104, clients 10.0.0.0/8 only
 *
 * The caller is 127.0.0.1:811, AUTH_SYS uid/gid 1000; every root is 0777
 * and owned by 1000:1000.
 */
#ifndef DSNFS_TESTS_NFS3_FIXTURE_H
#define DSNFS_TESTS_NFS3_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "nfs3_prot.h"
#include "nfsd/export/export.h"
#include "nfsd/nfs3/nfs3.h"
#include "nfsd/rpc/dispatch.h"

enum nfs3_fixture_export {
	NFS3_FIXTURE_DS1 = 0,
	NFS3_FIXTURE_DS2,
	NFS3_FIXTURE_RO,
	NFS3_FIXTURE_LIMITED,
	NFS3_FIXTURE_EXPORTS,
};

#define NFS3_FIXTURE_UID 1000
#define NFS3_FIXTURE_GID 1000
#define NFS3_FIXTURE_FH_SLOTS 4096

struct nfs3_fixture {
	struct export exports[NFS3_FIXTURE_EXPORTS];
	struct export_table table;
	struct nfs3_service svc;
	struct rpc_program prog;
	struct rpc_dispatcher dispatcher; /* trace on: handlers fill hints */
	struct rpc_call call; /* a call as dispatch makes it: handlers reach its
				 state */
	/* Handle bytes the nfs_fh3 values handed to tests point into. */
	char fh_bytes[NFS3_FIXTURE_FH_SLOTS][STORE_FH_MAX];
	size_t fh_used;
};

/* cmocka setup / teardown: *state is the struct nfs3_fixture.  Teardown
 * asserts that every store object handed out was released. */
int nfs3_fixture_setup(void **state);
int nfs3_fixture_teardown(void **state);

/* Makes the request come from @addr ("10.1.2.3", port 811). */
void nfs3_fixture_peer(struct nfs3_fixture *fx, const char *addr);

/* Makes the caller @flavor (AUTH_NONE / AUTH_SYS) with @uid/@gid. */
void nfs3_fixture_cred(struct nfs3_fixture *fx, uint32_t flavor, uint32_t uid,
		       uint32_t gid);

struct store *nfs3_fixture_store(struct nfs3_fixture *fx, int exp);

/* A handle (pointing into the fixture) of @obj, or of an export's root. */
nfs_fh3 nfs3_fixture_fh(struct nfs3_fixture *fx, int exp,
			const struct store_obj *obj);
nfs_fh3 nfs3_fixture_root(struct nfs3_fixture *fx, int exp);

/* Resolves @fh in the store of @exp; *out returns owned. */
int nfs3_fixture_resolve(struct nfs3_fixture *fx, int exp, const nfs_fh3 *fh,
			 struct store_obj **out);

/* The store attributes of @fh (asserts it resolves). */
struct store_attr nfs3_fixture_attr(struct nfs3_fixture *fx, int exp,
				    const nfs_fh3 *fh);

/* Makes a file with @len bytes of @data, a directory or a symlink in
 * @dir directly in the store, owned by the fixture's caller; returns its
 * handle.  Asserts success. */
nfs_fh3 nfs3_fixture_mkfile(struct nfs3_fixture *fx, int exp,
			    const nfs_fh3 *dir, const char *name,
			    const void *data, size_t len, uint32_t mode);
nfs_fh3 nfs3_fixture_mkdir(struct nfs3_fixture *fx, int exp, const nfs_fh3 *dir,
			   const char *name, uint32_t mode);
nfs_fh3 nfs3_fixture_symlink(struct nfs3_fixture *fx, int exp,
			     const nfs_fh3 *dir, const char *name,
			     const char *target);

/* Calls procedure @proc's handler with @args (borrowed) and zeroed @res,
 * as dispatch would: sets req.proc/desc/args/res and clears the fields a
 * handler sets, then asserts that the reply encodes with the procedure's
 * XDR routine.  Returns the handler's disposition. */
enum rpc_disposition nfs3_fixture_call(struct nfs3_fixture *fx, uint32_t proc,
				       const void *args, void *res);

/* Calls procedure @proc's release hook on @res, if it has one. */
void nfs3_fixture_release(struct nfs3_fixture *fx, uint32_t proc, void *res);

#endif
