// SPDX-License-Identifier: Apache-2.0
/*
 * test_nfs3_namespace: CREATE, MKDIR, SYMLINK, MKNOD, REMOVE, RMDIR,
 * RENAME and LINK (nfsd/nfs3/namespace.c) through the procedure table
 * against the fake store: results, wcc_data, and the errors.
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
#include "tests/lib/fake_store.h"
#include "tests/lib/nfs3_calls.h"
#include "tests/lib/nfs3_fixture.h"

/* The dispatcher's request_defer() without its work pool: runs the work at
 * once, and still answers RPC_PENDING so tests see what was deferred. */
enum rpc_disposition request_defer(struct request *req,
				   void (*work)(struct request *req))
{
	rpc_call_of(req)->work = work;
	work(req);
	return RPC_PENDING;
}

/* CREATE @name in @dir; on success *fh (may be NULL) gets the handle,
 * copied into @buf.  Returns the status. */
static nfsstat3 create(struct nfs3_fixture *fx, const nfs_fh3 *dir,
		       const char *name, createmode3 mode, const char *verf,
		       char *buf, nfs_fh3 *fh)
{
	CREATE3args args = {
		.where = { .dir = *dir, .name = (char *)name },
		.how = { .mode = mode },
	};
	CREATE3res res;
	nfsstat3 status;

	if (mode == EXCLUSIVE) {
		memcpy(args.how.createhow3_u.verf, verf, 8);
	} else {
		sattr3 *sa = &args.how.createhow3_u.obj_attributes;

		sa->mode.set_it = TRUE;
		sa->mode.set_mode3_u.mode = 0640;
	}
	assert_int_equal(nfs3_fixture_call(fx, NFSPROC3_CREATE, &args, &res),
			 RPC_REPLY);
	status = res.status;
	if (status == NFS3_OK) {
		CREATE3resok *ok = &res.CREATE3res_u.resok;

		assert_true(ok->obj.handle_follows);
		assert_true(ok->obj_attributes.attributes_follow);
		assert_true(ok->dir_wcc.before.attributes_follow);
		assert_true(ok->dir_wcc.after.attributes_follow);
		if (fh) {
			nfs_fh3 *h = &ok->obj.post_op_fh3_u.handle;

			memcpy(buf, h->data.data_val, h->data.data_len);
			fh->data.data_val = buf;
			fh->data.data_len = h->data.data_len;
		}
	}
	nfs3_fixture_release(fx, NFSPROC3_CREATE, &res);
	return status;
}

static uint64_t fileid_of(struct nfs3_fixture *fx, int exp, const nfs_fh3 *fh)
{
	return nfs3_fixture_attr(fx, exp, fh).fileid;
}

static void test_create_unchecked_and_guarded(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	char b1[STORE_FH_MAX], b2[STORE_FH_MAX];
	nfs_fh3 f1, f2;

	assert_int_equal(
		create(fx, &root, "disk.vmdk", UNCHECKED, NULL, b1, &f1),
		NFS3_OK);
	assert_string_equal(fx->call.req.path_hint, "disk.vmdk");
	assert_int_equal(nfs3_fixture_attr(fx, NFS3_FIXTURE_DS1, &f1).mode,
			 0640);
	assert_int_equal(nfs3_fixture_attr(fx, NFS3_FIXTURE_DS1, &f1).uid,
			 NFS3_FIXTURE_UID);
	assert_int_equal(
		create(fx, &root, "disk.vmdk", GUARDED, NULL, NULL, NULL),
		NFS3ERR_EXIST);
	assert_int_equal(
		create(fx, &root, "disk.vmdk", UNCHECKED, NULL, b2, &f2),
		NFS3_OK);
	assert_int_equal(fileid_of(fx, NFS3_FIXTURE_DS1, &f1),
			 fileid_of(fx, NFS3_FIXTURE_DS1, &f2));
}

static void test_create_exclusive_retry_with_same_verifier(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	char b1[STORE_FH_MAX], b2[STORE_FH_MAX];
	nfs_fh3 f1, f2;

	assert_int_equal(create(fx, &root, "x", EXCLUSIVE, "verf-one", b1, &f1),
			 NFS3_OK);
	assert_int_equal(create(fx, &root, "x", EXCLUSIVE, "verf-one", b2, &f2),
			 NFS3_OK);
	assert_int_equal(fileid_of(fx, NFS3_FIXTURE_DS1, &f1),
			 fileid_of(fx, NFS3_FIXTURE_DS1, &f2));
	assert_int_equal(
		create(fx, &root, "x", EXCLUSIVE, "verf-two", NULL, NULL),
		NFS3ERR_EXIST);
}

static void test_create_errors(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	nfs_fh3 f = nfs3_fixture_mkfile(fx, NFS3_FIXTURE_DS1, &root, "f", "", 0,
					0644);
	nfs_fh3 closed =
		nfs3_fixture_mkdir(fx, NFS3_FIXTURE_DS1, &root, "closed", 0555);
	nfs_fh3 ro = nfs3_fixture_root(fx, NFS3_FIXTURE_RO);
	char name[300];

	memset(name, 'n', 256);
	name[256] = '\0';
	assert_int_equal(create(fx, &root, ".", GUARDED, NULL, NULL, NULL),
			 NFS3ERR_EXIST);
	assert_int_equal(create(fx, &root, "..", GUARDED, NULL, NULL, NULL),
			 NFS3ERR_EXIST);
	assert_int_equal(create(fx, &root, "", GUARDED, NULL, NULL, NULL),
			 NFS3ERR_ACCES);
	assert_int_equal(create(fx, &root, "a/b", GUARDED, NULL, NULL, NULL),
			 NFS3ERR_ACCES);
	assert_int_equal(create(fx, &root, name, GUARDED, NULL, NULL, NULL),
			 NFS3ERR_NAMETOOLONG);
	assert_int_equal(create(fx, &f, "x", GUARDED, NULL, NULL, NULL),
			 NFS3ERR_NOTDIR);
	assert_int_equal(create(fx, &ro, "x", GUARDED, NULL, NULL, NULL),
			 NFS3ERR_ROFS);
	nfs3_fixture_cred(fx, AUTH_SYS, 2000, 2000);
	assert_int_equal(create(fx, &closed, "x", GUARDED, NULL, NULL, NULL),
			 NFS3ERR_ACCES);
	fake_store_fail_next(nfs3_fixture_store(fx, NFS3_FIXTURE_DS1), "create",
			     -EDQUOT);
	assert_int_equal(create(fx, &root, "x", GUARDED, NULL, NULL, NULL),
			 NFS3ERR_DQUOT);
}

static void test_mkdir_makes_a_directory(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	MKDIR3args args = { .where = { .dir = root, .name = (char *)"vm1" } };
	MKDIR3res res;
	MKDIR3resok *ok = &res.MKDIR3res_u.resok;

	args.attributes.mode.set_it = TRUE;
	args.attributes.mode.set_mode3_u.mode = 0750;
	nfs3_fixture_call(fx, NFSPROC3_MKDIR, &args, &res);
	assert_int_equal(res.status, NFS3_OK);
	assert_true(ok->obj.handle_follows);
	assert_int_equal(ok->obj_attributes.post_op_attr_u.attributes.type,
			 NF3DIR);
	assert_int_equal(ok->obj_attributes.post_op_attr_u.attributes.mode,
			 0750);
	assert_int_equal(ok->dir_wcc.after.post_op_attr_u.attributes.nlink, 3);
	nfs3_fixture_release(fx, NFSPROC3_MKDIR, &res);
	nfs3_fixture_call(fx, NFSPROC3_MKDIR, &args, &res);
	assert_int_equal(res.status, NFS3ERR_EXIST);
	assert_true(res.MKDIR3res_u.resfail.dir_wcc.before.attributes_follow);
	nfs3_fixture_release(fx, NFSPROC3_MKDIR, &res);
}

static void test_symlink(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	char target[1100];

	assert_int_equal(nfs3_call_symlink(fx, &root, "l", "a/b"), NFS3_OK);
	assert_int_equal(nfs3_call_symlink(fx, &root, "l", "a/b"),
			 NFS3ERR_EXIST);
	assert_int_equal(nfs3_call_symlink(fx, &root, "e", ""), NFS3ERR_INVAL);
	memset(target, 't', 1025);
	target[1025] = '\0';
	assert_int_equal(nfs3_call_symlink(fx, &root, "long", target),
			 NFS3ERR_NAMETOOLONG);
	target[1024] = '\0';
	assert_int_equal(nfs3_call_symlink(fx, &root, "long", target), NFS3_OK);
}

static void test_mknod_makes_special_files_only(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	fattr3 a;

	assert_int_equal(nfs3_call_mknod(fx, &root, "fifo", NF3FIFO, &a),
			 NFS3_OK);
	assert_int_equal(a.type, NF3FIFO);
	assert_int_equal(nfs3_call_mknod(fx, &root, "sock", NF3SOCK, &a),
			 NFS3_OK);
	assert_int_equal(a.type, NF3SOCK);
	/* Device nodes are root's (issue 23): uid 1000 is refused ... */
	assert_int_equal(nfs3_call_mknod(fx, &root, "chr", NF3CHR, &a),
			 NFS3ERR_PERM);
	assert_int_equal(nfs3_call_mknod(fx, &root, "blk", NF3BLK, &a),
			 NFS3ERR_PERM);
	/* ... so is uid 0 squashed by root_squash (the fixture's ds1) ... */
	nfs3_fixture_cred(fx, AUTH_SYS, 0, 0);
	assert_int_equal(nfs3_call_mknod(fx, &root, "blk", NF3BLK, &a),
			 NFS3ERR_PERM);
	/* ... and root is not, where nothing squashes it. */
	fx->exports[NFS3_FIXTURE_DS1].squash = EXPORT_SQUASH_NONE;
	assert_int_equal(nfs3_call_mknod(fx, &root, "blk", NF3BLK, &a),
			 NFS3_OK);
	assert_int_equal(a.type, NF3BLK);
	assert_int_equal(nfs3_call_mknod(fx, &root, "chr", NF3CHR, &a),
			 NFS3_OK);
	assert_int_equal(a.type, NF3CHR);
	assert_int_equal(a.rdev.specdata1, 8);
	assert_int_equal(a.rdev.specdata2, 1);
	assert_int_equal(nfs3_call_mknod(fx, &root, "reg", NF3REG, &a),
			 NFS3ERR_BADTYPE);
	assert_int_equal(nfs3_call_mknod(fx, &root, "dir", NF3DIR, &a),
			 NFS3ERR_BADTYPE);
	assert_int_equal(nfs3_call_mknod(fx, &root, "lnk", NF3LNK, &a),
			 NFS3ERR_BADTYPE);
}

/* REMOVE (or RMDIR) of @name in @dir; checks the wcc_data. */
static nfsstat3 unlink_call(struct nfs3_fixture *fx, uint32_t proc,
			    const nfs_fh3 *dir, const char *name)
{
	diropargs3 what = { .dir = *dir, .name = (char *)name };
	REMOVE3args args = { .object = what };
	RMDIR3args rargs = { .object = what };
	REMOVE3res res;
	RMDIR3res rres;
	nfsstat3 status;
	wcc_data *w;

	if (proc == NFSPROC3_RMDIR) {
		nfs3_fixture_call(fx, proc, &rargs, &rres);
		status = rres.status;
		w = status == NFS3_OK ? &rres.RMDIR3res_u.resok.dir_wcc
				      : &rres.RMDIR3res_u.resfail.dir_wcc;
	} else {
		nfs3_fixture_call(fx, proc, &args, &res);
		status = res.status;
		w = status == NFS3_OK ? &res.REMOVE3res_u.resok.dir_wcc
				      : &res.REMOVE3res_u.resfail.dir_wcc;
	}
	assert_true(w->before.attributes_follow);
	assert_true(w->after.attributes_follow);
	return status;
}

static void test_remove(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	nfs_fh3 f = nfs3_fixture_mkfile(fx, NFS3_FIXTURE_DS1, &root, "f", "", 0,
					0644);
	GETATTR3args gargs = { .object = f };
	GETATTR3res gres;

	nfs3_fixture_mkdir(fx, NFS3_FIXTURE_DS1, &root, "d", 0755);
	assert_int_equal(unlink_call(fx, NFSPROC3_REMOVE, &root, "f"), NFS3_OK);
	nfs3_fixture_call(fx, NFSPROC3_GETATTR, &gargs, &gres);
	assert_int_equal(gres.status, NFS3ERR_STALE);
	assert_int_equal(unlink_call(fx, NFSPROC3_REMOVE, &root, "f"),
			 NFS3ERR_NOENT);
	assert_int_equal(unlink_call(fx, NFSPROC3_REMOVE, &root, "d"),
			 NFS3ERR_ISDIR);
	assert_int_equal(unlink_call(fx, NFSPROC3_REMOVE, &root, "."),
			 NFS3ERR_INVAL);
	assert_int_equal(unlink_call(fx, NFSPROC3_REMOVE, &root, ".."),
			 NFS3ERR_INVAL);
}

static void test_rmdir(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	nfs_fh3 full =
		nfs3_fixture_mkdir(fx, NFS3_FIXTURE_DS1, &root, "full", 0755);

	nfs3_fixture_mkdir(fx, NFS3_FIXTURE_DS1, &root, "empty", 0755);
	nfs3_fixture_mkfile(fx, NFS3_FIXTURE_DS1, &full, "f", "", 0, 0644);
	nfs3_fixture_mkfile(fx, NFS3_FIXTURE_DS1, &root, "file", "", 0, 0644);
	assert_int_equal(unlink_call(fx, NFSPROC3_RMDIR, &root, "full"),
			 NFS3ERR_NOTEMPTY);
	assert_int_equal(unlink_call(fx, NFSPROC3_RMDIR, &root, "file"),
			 NFS3ERR_NOTDIR);
	assert_int_equal(unlink_call(fx, NFSPROC3_RMDIR, &root, "nope"),
			 NFS3ERR_NOENT);
	assert_int_equal(unlink_call(fx, NFSPROC3_RMDIR, &root, "empty"),
			 NFS3_OK);
	assert_int_equal(unlink_call(fx, NFSPROC3_RMDIR, &root, "."),
			 NFS3ERR_INVAL);
}

static void test_remove_in_sticky_directory(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	nfs_fh3 tmp =
		nfs3_fixture_mkdir(fx, NFS3_FIXTURE_DS1, &root, "tmp", 01777);

	nfs3_fixture_mkfile(fx, NFS3_FIXTURE_DS1, &tmp, "mine", "", 0, 0644);
	nfs3_fixture_cred(fx, AUTH_SYS, 3000, 3000);
	assert_int_equal(unlink_call(fx, NFSPROC3_REMOVE, &tmp, "mine"),
			 NFS3ERR_PERM);
	nfs3_fixture_cred(fx, AUTH_SYS, NFS3_FIXTURE_UID, 3000);
	assert_int_equal(unlink_call(fx, NFSPROC3_REMOVE, &tmp, "mine"),
			 NFS3_OK);
}

static void test_rename(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	nfs_fh3 other = nfs3_fixture_root(fx, NFS3_FIXTURE_DS2);
	nfs_fh3 d = nfs3_fixture_mkdir(fx, NFS3_FIXTURE_DS1, &root, "d", 0755);
	nfs_fh3 f = nfs3_fixture_mkfile(fx, NFS3_FIXTURE_DS1, &root, "a", "", 0,
					0644);
	nfs_fh3 full =
		nfs3_fixture_mkdir(fx, NFS3_FIXTURE_DS1, &root, "full", 0755);
	LOOKUP3args largs = { .what = { .dir = d, .name = (char *)"b" } };
	struct nfs3_lookup_res lookup_res;
	LOOKUP3res *lres = &lookup_res.r;

	nfs3_fixture_mkfile(fx, NFS3_FIXTURE_DS1, &full, "x", "", 0, 0644);
	assert_int_equal(nfs3_call_rename(fx, &root, "a", &d, "b"), NFS3_OK);
	assert_string_equal(fx->call.req.path_hint, "a");
	nfs3_fixture_call(fx, NFSPROC3_LOOKUP, &largs, &lookup_res);
	assert_int_equal(lres->status, NFS3_OK);
	assert_int_equal(lres->LOOKUP3res_u.resok.obj_attributes.post_op_attr_u
				 .attributes.fileid,
			 fileid_of(fx, NFS3_FIXTURE_DS1, &f));
	nfs3_fixture_release(fx, NFSPROC3_LOOKUP, &lookup_res);
	assert_int_equal(nfs3_call_rename(fx, &root, "a", &d, "c"),
			 NFS3ERR_NOENT);
	assert_int_equal(nfs3_call_rename(fx, &d, "b", &other, "b"),
			 NFS3ERR_XDEV);
	assert_int_equal(nfs3_call_rename(fx, &root, "d", &root, "full"),
			 NFS3ERR_NOTEMPTY);
	assert_int_equal(nfs3_call_rename(fx, &d, "b", &root, ".."),
			 NFS3ERR_INVAL);
}

static void test_link(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	nfs_fh3 other = nfs3_fixture_root(fx, NFS3_FIXTURE_DS2);
	nfs_fh3 f = nfs3_fixture_mkfile(fx, NFS3_FIXTURE_DS1, &root, "f", "", 0,
					0644);
	nfs_fh3 ro = nfs3_fixture_root(fx, NFS3_FIXTURE_RO);
	nfs_fh3 rof =
		nfs3_fixture_mkfile(fx, NFS3_FIXTURE_RO, &ro, "f", "", 0, 0644);
	uint32_t nlink = 0;

	assert_int_equal(nfs3_call_link(fx, &f, &root, "g", &nlink), NFS3_OK);
	assert_int_equal(nlink, 2);
	assert_int_equal(nfs3_call_link(fx, &f, &root, "g", &nlink),
			 NFS3ERR_EXIST);
	assert_int_equal(nfs3_call_link(fx, &f, &other, "h", &nlink),
			 NFS3ERR_XDEV);
	assert_int_equal(nfs3_call_link(fx, &rof, &ro, "h", &nlink),
			 NFS3ERR_ROFS);
}

static void test_namespace_trace_lines(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	RENAME3args rargs = {
		.from = { .dir = root, .name = (char *)"a" },
		.to = { .dir = root, .name = (char *)"b\n" },
	};
	char hint[16], buf[RPC_TRACE_DETAIL_MAX], want[64];

	nfs3__fh_summary(&root, hint, sizeof(hint));
	fx->prog.procs[NFSPROC3_RENAME].trace_args(&fx->call.req, &rargs, NULL,
						   buf, sizeof(buf));
	snprintf(want, sizeof(want), "from=%s to=%s/b?", hint, hint);
	assert_string_equal(buf, want);
	fx->prog.procs[NFSPROC3_REMOVE].trace_args(&fx->call.req, &rargs, NULL,
						   buf, sizeof(buf));
	snprintf(want, sizeof(want), "dir=%s", hint);
	assert_string_equal(buf, want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_create_unchecked_and_guarded, nfs3_fixture_setup,
			nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_create_exclusive_retry_with_same_verifier,
			nfs3_fixture_setup, nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_create_errors,
						nfs3_fixture_setup,
						nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_mkdir_makes_a_directory,
						nfs3_fixture_setup,
						nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_symlink,
						nfs3_fixture_setup,
						nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_mknod_makes_special_files_only, nfs3_fixture_setup,
			nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_remove, nfs3_fixture_setup,
						nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_rmdir, nfs3_fixture_setup,
						nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_remove_in_sticky_directory,
						nfs3_fixture_setup,
						nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_rename, nfs3_fixture_setup,
						nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_link, nfs3_fixture_setup,
						nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_namespace_trace_lines,
						nfs3_fixture_setup,
						nfs3_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
