// SPDX-License-Identifier: Apache-2.0
/*
 * test_nfs3_local: the NFSv3 procedures against the real local store
 * (nfsd/store/local/local*.c) in a mkdtemp() directory, where test_nfs3_*.c use
 * the fake: the two layers agree on handles, names, cookies and errors.
 * The fixture's ds1 export gets the local store in place of its fake.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nfsd/nfs3/nfs3_int.h"
#include "tests/lib/nfs3_fixture.h"
#include "tests/lib/nfs3_local_fixture.h"

/* The dispatcher's request_defer() without its work pool: runs the work at
 * once, and still answers RPC_PENDING so tests see what was deferred. */
enum rpc_disposition request_defer(struct request *req,
				   void (*work)(struct request *req))
{
	rpc_call_of(req)->work = work;
	work(req);
	return RPC_PENDING;
}

/* *state is the struct nfs3_local_fixture, whose first member is the
 * struct nfs3_fixture pointer the tests take. */
static int local_setup(void **state)
{
	return nfs3_local_fixture_setup(state, "nfs3");
}

static nfs_fh3 create_file(struct nfs3_fixture *fx, const nfs_fh3 *dir,
			   const char *name, char *buf)
{
	CREATE3args args = {
		.where = { .dir = *dir, .name = (char *)name },
		.how = { .mode = GUARDED },
	};
	CREATE3res res;
	nfs_fh3 fh;

	nfs3_fixture_call(fx, NFSPROC3_CREATE, &args, &res);
	assert_int_equal(res.status, NFS3_OK);
	assert_true(res.CREATE3res_u.resok.obj.handle_follows);
	fh = res.CREATE3res_u.resok.obj.post_op_fh3_u.handle;
	assert_true(fh.data.data_len <= STORE_FH_MAX);
	memcpy(buf, fh.data.data_val, fh.data.data_len);
	fh.data.data_val = buf;
	nfs3_fixture_release(fx, NFSPROC3_CREATE, &res);
	return fh;
}

static void test_write_sync_commit_read_on_a_real_disk(void **state)
{
	struct nfs3_fixture *fx = *(struct nfs3_fixture **)*state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	char buf[STORE_FH_MAX];
	nfs_fh3 fh = create_file(fx, &root, "disk-flat.vmdk", buf);
	WRITE3args wargs = {
		.file = fh,
		.offset = 4096,
		.count = 5,
		.stable = FILE_SYNC,
		.data = { .data_len = 5, .data_val = (char *)"grain" },
	};
	WRITE3res wres;
	COMMIT3args cargs = { .file = fh };
	COMMIT3res cres;
	READ3args rargs = { .file = fh, .offset = 4094, .count = 100 };
	READ3res rres;

	assert_int_equal(nfs3_fixture_call(fx, NFSPROC3_WRITE, &wargs, &wres),
			 RPC_PENDING);
	assert_int_equal(wres.status, NFS3_OK);
	assert_int_equal(wres.WRITE3res_u.resok.committed, FILE_SYNC);
	nfs3_fixture_call(fx, NFSPROC3_COMMIT, &cargs, &cres);
	assert_int_equal(cres.status, NFS3_OK);
	nfs3_fixture_call(fx, NFSPROC3_READ, &rargs, &rres);
	assert_int_equal(rres.status, NFS3_OK);
	assert_int_equal(rres.READ3res_u.resok.count, 7);
	assert_memory_equal(rres.READ3res_u.resok.data.data_val, "\0\0grain",
			    7);
	assert_true(rres.READ3res_u.resok.eof);
	nfs3_fixture_release(fx, NFSPROC3_READ, &rres);
	rargs.offset = 0;
	rargs.count = 4096;
	nfs3_fixture_call(fx, NFSPROC3_READ, &rargs, &rres);
	assert_int_equal(rres.READ3res_u.resok.count, 4096);
	assert_false(rres.READ3res_u.resok.eof);
	nfs3_fixture_release(fx, NFSPROC3_READ, &rres);
}

static void test_namespace_and_listing_on_a_real_disk(void **state)
{
	struct nfs3_fixture *fx = *(struct nfs3_fixture **)*state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	char b1[STORE_FH_MAX], b2[STORE_FH_MAX];
	nfs_fh3 a = create_file(fx, &root, "a.vmdk", b1);
	RENAME3args rnargs = {
		.from = { .dir = root, .name = (char *)"a.vmdk" },
		.to = { .dir = root, .name = (char *)"b.vmdk" },
	};
	RENAME3res rnres;
	READDIRPLUS3args dargs = { .dir = root,
				   .dircount = 4096,
				   .maxcount = 65536 };
	READDIRPLUS3res dres;
	REMOVE3args rmargs = { .object = { .dir = root,
					   .name = (char *)"b.vmdk" } };
	REMOVE3res rmres;
	GETATTR3args gargs = { .object = a };
	GETATTR3res gres;
	const entryplus3 *e;
	unsigned n = 0;

	create_file(fx, &root, "c.vmdk", b2);
	nfs3_fixture_call(fx, NFSPROC3_RENAME, &rnargs, &rnres);
	assert_int_equal(rnres.status, NFS3_OK);
	nfs3_fixture_call(fx, NFSPROC3_READDIRPLUS, &dargs, &dres);
	assert_int_equal(dres.status, NFS3_OK);
	assert_true(dres.READDIRPLUS3res_u.resok.reply.eof);
	for (e = dres.READDIRPLUS3res_u.resok.reply.entries; e;
	     e = e->nextentry) {
		assert_true(e->name_handle.handle_follows);
		assert_int_equal(
			nfs3_fixture_attr(fx, NFS3_FIXTURE_DS1,
					  &e->name_handle.post_op_fh3_u.handle)
				.fileid,
			e->fileid);
		n++;
	}
	assert_int_equal(n, 4); /* . .. b.vmdk c.vmdk */
	nfs3_fixture_release(fx, NFSPROC3_READDIRPLUS, &dres);
	nfs3_fixture_call(fx, NFSPROC3_REMOVE, &rmargs, &rmres);
	assert_int_equal(rmres.status, NFS3_OK);
	nfs3_fixture_call(fx, NFSPROC3_GETATTR, &gargs, &gres);
	assert_int_equal(gres.status, NFS3ERR_STALE);
	nfs3_fixture_call(fx, NFSPROC3_REMOVE, &rmargs, &rmres);
	assert_int_equal(rmres.status, NFS3ERR_NOENT);
}

static void test_readdir_pages_on_a_real_disk(void **state)
{
	struct nfs3_fixture *fx = *(struct nfs3_fixture **)*state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	char name[32], verf[NFS3_COOKIEVERFSIZE] = { 0 };
	uint64_t cookie = 0;
	unsigned n = 0, pages = 0;
	bool eof = false;

	for (int i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "f%03d", i);
		nfs3_fixture_mkfile(fx, NFS3_FIXTURE_DS1, &root, name, "", 0,
				    0644);
	}
	while (!eof) {
		READDIR3args args = { .dir = root,
				      .cookie = cookie,
				      .count = 512 };
		READDIR3res res;
		const entry3 *e;

		memcpy(args.cookieverf, verf, sizeof(verf));
		nfs3_fixture_call(fx, NFSPROC3_READDIR, &args, &res);
		assert_int_equal(res.status, NFS3_OK);
		assert_true(xdr_sizeof((xdrproc_t)xdr_READDIR3res, &res) <=
			    512);
		for (e = res.READDIR3res_u.resok.reply.entries; e;
		     e = e->nextentry) {
			cookie = e->cookie;
			n++;
		}
		eof = res.READDIR3res_u.resok.reply.eof;
		memcpy(verf, res.READDIR3res_u.resok.cookieverf, sizeof(verf));
		nfs3_fixture_release(fx, NFSPROC3_READDIR, &res);
		assert_true(++pages < 1000);
	}
	assert_int_equal(n, 302);
	assert_true(pages > 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_write_sync_commit_read_on_a_real_disk, local_setup,
			nfs3_local_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_namespace_and_listing_on_a_real_disk, local_setup,
			nfs3_local_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_readdir_pages_on_a_real_disk, local_setup,
			nfs3_local_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
