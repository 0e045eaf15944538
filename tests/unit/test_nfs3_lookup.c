// SPDX-License-Identifier: Apache-2.0
/*
 * test_nfs3_lookup: GETATTR, SETATTR, LOOKUP, ACCESS and READLINK
 * (nfsd/nfs3/lookup.c, access.c, name.c) through the procedure table
 * against the fake store.
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

static void test_getattr_returns_the_stores_attributes(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	nfs_fh3 fh = nfs3_fixture_mkfile(fx, NFS3_FIXTURE_DS1, &root, "f",
					 "12345", 5, 0640);
	struct store_attr a = nfs3_fixture_attr(fx, NFS3_FIXTURE_DS1, &fh);
	GETATTR3args args = { .object = fh };
	GETATTR3res res;
	fattr3 *f = &res.GETATTR3res_u.resok.obj_attributes;

	assert_int_equal(nfs3_fixture_call(fx, NFSPROC3_GETATTR, &args, &res),
			 RPC_REPLY);
	assert_int_equal(res.status, NFS3_OK);
	assert_int_equal(f->type, NF3REG);
	assert_int_equal(f->mode, 0640);
	assert_int_equal(f->size, 5);
	assert_int_equal(f->uid, NFS3_FIXTURE_UID);
	assert_int_equal(f->fileid, a.fileid);
	assert_int_equal(f->fsid, a.fsid);
	assert_int_equal(f->mtime.seconds, (uint32_t)a.mtime.tv_sec);
	assert_int_equal(f->mtime.nseconds, (uint32_t)a.mtime.tv_nsec);
	assert_int_equal(f->nlink, 1);
	assert_string_equal(fx->call.req.export_name, "ds1");
}

static SETATTR3res setattr_call(struct nfs3_fixture *fx, const nfs_fh3 *fh,
				const sattr3 *sa, const nfstime3 *guard)
{
	SETATTR3args args = { .object = *fh, .new_attributes = *sa };
	SETATTR3res res;

	if (guard) {
		args.guard.check = TRUE;
		args.guard.sattrguard3_u.obj_ctime = *guard;
	}
	nfs3_fixture_call(fx, NFSPROC3_SETATTR, &args, &res);
	return res;
}

static void test_setattr_changes_mode_and_size_with_wcc(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	nfs_fh3 fh = nfs3_fixture_mkfile(fx, NFS3_FIXTURE_DS1, &root, "f",
					 "12345", 5, 0644);
	sattr3 sa = { 0 };
	SETATTR3res res;
	wcc_data *w = &res.SETATTR3res_u.resok.obj_wcc;
	struct store_attr a;

	sa.mode.set_it = TRUE;
	sa.mode.set_mode3_u.mode = 0600;
	sa.size.set_it = TRUE;
	sa.size.set_size3_u.size = 2;
	res = setattr_call(fx, &fh, &sa, NULL);
	assert_int_equal(res.status, NFS3_OK);
	assert_true(w->before.attributes_follow);
	assert_int_equal(w->before.pre_op_attr_u.attributes.size, 5);
	assert_true(w->after.attributes_follow);
	assert_int_equal(w->after.post_op_attr_u.attributes.size, 2);
	assert_int_equal(w->after.post_op_attr_u.attributes.mode, 0600);
	a = nfs3_fixture_attr(fx, NFS3_FIXTURE_DS1, &fh);
	assert_int_equal(a.mode, 0600);
	assert_int_equal(a.size_bytes, 2);
}

static void test_setattr_guard_mismatch_is_not_sync(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	nfs_fh3 fh = nfs3_fixture_mkfile(fx, NFS3_FIXTURE_DS1, &root, "f", "",
					 0, 0644);
	struct store_attr a = nfs3_fixture_attr(fx, NFS3_FIXTURE_DS1, &fh);
	nfstime3 guard = { .seconds = (uint32_t)a.ctime.tv_sec + 1,
			   .nseconds = (uint32_t)a.ctime.tv_nsec };
	sattr3 sa = { 0 };
	SETATTR3res res;

	sa.mode.set_it = TRUE;
	sa.mode.set_mode3_u.mode = 0611;
	res = setattr_call(fx, &fh, &sa, &guard);
	assert_int_equal(res.status, NFS3ERR_NOT_SYNC);
	assert_true(res.SETATTR3res_u.resfail.obj_wcc.before.attributes_follow);
	assert_int_equal(nfs3_fixture_attr(fx, NFS3_FIXTURE_DS1, &fh).mode,
			 0644);
	guard.seconds--;
	res = setattr_call(fx, &fh, &sa, &guard);
	assert_int_equal(res.status, NFS3_OK);
	assert_int_equal(nfs3_fixture_attr(fx, NFS3_FIXTURE_DS1, &fh).mode,
			 0611);
}

static void test_setattr_permission_rules(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	nfs_fh3 fh = nfs3_fixture_mkfile(fx, NFS3_FIXTURE_DS1, &root, "f", "",
					 0, 0644);
	sattr3 chown = { 0 }, chmod = { 0 }, trunc = { 0 };

	chown.uid.set_it = TRUE;
	chown.uid.set_uid3_u.uid = 0;
	chmod.mode.set_it = TRUE;
	chmod.mode.set_mode3_u.mode = 0777;
	trunc.size.set_it = TRUE;
	assert_int_equal(setattr_call(fx, &fh, &chown, NULL).status,
			 NFS3ERR_PERM);
	nfs3_fixture_cred(fx, AUTH_SYS, 2000, 2000);
	assert_int_equal(setattr_call(fx, &fh, &chmod, NULL).status,
			 NFS3ERR_PERM);
	assert_int_equal(setattr_call(fx, &fh, &trunc, NULL).status,
			 NFS3ERR_ACCES);
	assert_int_equal(setattr_call(fx, &root, &trunc, NULL).status,
			 NFS3ERR_ISDIR);
}

static void test_setattr_on_read_only_export_is_rofs(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_RO);
	sattr3 sa = { 0 };

	sa.mode.set_it = TRUE;
	sa.mode.set_mode3_u.mode = 0700;
	assert_int_equal(setattr_call(fx, &root, &sa, NULL).status,
			 NFS3ERR_ROFS);
}

/* LOOKUP of @name in @dir: returns the status; *fh (may be NULL) gets a
 * copy of the handle, into @buf. */
static nfsstat3 lookup(struct nfs3_fixture *fx, const nfs_fh3 *dir,
		       const char *name, char *buf, nfs_fh3 *fh)
{
	LOOKUP3args args = { .what = { .dir = *dir, .name = (char *)name } };
	struct nfs3_lookup_res lres;
	LOOKUP3res res;
	nfsstat3 status;

	nfs3_fixture_call(fx, NFSPROC3_LOOKUP, &args, &lres);
	res = lres.r;
	status = res.status;
	if (status == NFS3_OK) {
		LOOKUP3resok *ok = &res.LOOKUP3res_u.resok;

		assert_true(ok->obj_attributes.attributes_follow);
		assert_true(ok->dir_attributes.attributes_follow);
		if (fh) {
			memcpy(buf, ok->object.data.data_val,
			       ok->object.data.data_len);
			fh->data.data_val = buf;
			fh->data.data_len = ok->object.data.data_len;
		}
	} else {
		assert_true(res.LOOKUP3res_u.resfail.dir_attributes
				    .attributes_follow ||
			    status == NFS3ERR_BADHANDLE);
	}
	nfs3_fixture_release(fx, NFSPROC3_LOOKUP, &lres);
	return status;
}

static void assert_same_file(struct nfs3_fixture *fx, const nfs_fh3 *a,
			     const nfs_fh3 *b)
{
	assert_int_equal(nfs3_fixture_attr(fx, NFS3_FIXTURE_DS1, a).fileid,
			 nfs3_fixture_attr(fx, NFS3_FIXTURE_DS1, b).fileid);
}

static void test_lookup_finds_names_dot_and_dotdot(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	nfs_fh3 sub =
		nfs3_fixture_mkdir(fx, NFS3_FIXTURE_DS1, &root, "sub", 0755);
	nfs_fh3 f = nfs3_fixture_mkfile(fx, NFS3_FIXTURE_DS1, &sub, "disk.vmdk",
					"", 0, 0644);
	char buf[STORE_FH_MAX];
	nfs_fh3 got;

	assert_int_equal(lookup(fx, &sub, "disk.vmdk", buf, &got), NFS3_OK);
	assert_same_file(fx, &got, &f);
	assert_string_equal(fx->call.req.path_hint, "disk.vmdk");
	assert_int_equal(lookup(fx, &sub, ".", buf, &got), NFS3_OK);
	assert_same_file(fx, &got, &sub);
	assert_int_equal(lookup(fx, &sub, "..", buf, &got), NFS3_OK);
	assert_same_file(fx, &got, &root);
	/* ".." of the export's root stays in the export. */
	assert_int_equal(lookup(fx, &root, "..", buf, &got), NFS3_OK);
	assert_same_file(fx, &got, &root);
}

static void test_lookup_errors(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	nfs_fh3 f = nfs3_fixture_mkfile(fx, NFS3_FIXTURE_DS1, &root, "f", "", 0,
					0644);
	char name[300];

	assert_int_equal(lookup(fx, &root, "missing", NULL, NULL),
			 NFS3ERR_NOENT);
	assert_int_equal(lookup(fx, &f, "x", NULL, NULL), NFS3ERR_NOTDIR);
	memset(name, 'a', 256);
	name[256] = '\0';
	assert_int_equal(lookup(fx, &root, name, NULL, NULL),
			 NFS3ERR_NAMETOOLONG);
	name[255] = '\0';
	assert_int_equal(lookup(fx, &root, name, NULL, NULL), NFS3ERR_NOENT);
	/* Empty names and names with '/' walk nowhere: ACCES, as knfsd. */
	assert_int_equal(lookup(fx, &root, "", NULL, NULL), NFS3ERR_ACCES);
	assert_int_equal(lookup(fx, &root, "../f", NULL, NULL), NFS3ERR_ACCES);
	assert_int_equal(lookup(fx, &root, "sub/f", NULL, NULL), NFS3ERR_ACCES);
}

static void test_lookup_needs_search_permission(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	nfs_fh3 sub =
		nfs3_fixture_mkdir(fx, NFS3_FIXTURE_DS1, &root, "sub", 0700);

	nfs3_fixture_mkfile(fx, NFS3_FIXTURE_DS1, &sub, "f", "", 0, 0644);
	assert_int_equal(lookup(fx, &sub, "f", NULL, NULL), NFS3_OK);
	nfs3_fixture_cred(fx, AUTH_SYS, 2000, 2000);
	assert_int_equal(lookup(fx, &sub, "f", NULL, NULL), NFS3ERR_ACCES);
}

static uint32_t access_of(struct nfs3_fixture *fx, const nfs_fh3 *fh)
{
	ACCESS3args args = { .object = *fh, .access = 0x3f };
	ACCESS3res res;

	nfs3_fixture_call(fx, NFSPROC3_ACCESS, &args, &res);
	assert_int_equal(res.status, NFS3_OK);
	assert_true(res.ACCESS3res_u.resok.obj_attributes.attributes_follow);
	return res.ACCESS3res_u.resok.access;
}

static void test_access_follows_mode_bits(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	nfs_fh3 f = nfs3_fixture_mkfile(fx, NFS3_FIXTURE_DS1, &root, "f", "", 0,
					0754);
	const uint32_t rwx_file = ACCESS3_READ | ACCESS3_MODIFY |
				  ACCESS3_EXTEND | ACCESS3_EXECUTE;
	const uint32_t all_dir = ACCESS3_READ | ACCESS3_LOOKUP |
				 ACCESS3_MODIFY | ACCESS3_EXTEND |
				 ACCESS3_DELETE;

	assert_int_equal(access_of(fx, &f), rwx_file);
	assert_int_equal(access_of(fx, &root), all_dir);
	nfs3_fixture_cred(fx, AUTH_SYS, 2000, NFS3_FIXTURE_GID);
	assert_int_equal(access_of(fx, &f), ACCESS3_READ | ACCESS3_EXECUTE);
	nfs3_fixture_cred(fx, AUTH_SYS, 2000, 2000);
	assert_int_equal(access_of(fx, &f), ACCESS3_READ);
	/* root (not squashed) may do all but execute what nobody may. */
	fx->exports[NFS3_FIXTURE_DS1].squash = EXPORT_SQUASH_NONE;
	nfs3_fixture_cred(fx, AUTH_SYS, 0, 0);
	assert_int_equal(access_of(fx, &f), rwx_file);
	f = nfs3_fixture_mkfile(fx, NFS3_FIXTURE_DS1, &root, "noexec", "", 0,
				0600);
	assert_int_equal(access_of(fx, &f), rwx_file & ~ACCESS3_EXECUTE);
}

static void test_access_on_read_only_export_drops_changes(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_RO);

	assert_int_equal(access_of(fx, &root), ACCESS3_READ | ACCESS3_LOOKUP);
}

static void test_readlink_returns_the_target(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	nfs_fh3 l = nfs3_fixture_symlink(fx, NFS3_FIXTURE_DS1, &root, "l",
					 "../elsewhere/disk.vmdk");
	READLINK3args args = { .symlink = l };
	READLINK3res res;

	nfs3_fixture_call(fx, NFSPROC3_READLINK, &args, &res);
	assert_int_equal(res.status, NFS3_OK);
	assert_string_equal(res.READLINK3res_u.resok.data,
			    "../elsewhere/disk.vmdk");
	assert_true(
		res.READLINK3res_u.resok.symlink_attributes.attributes_follow);
	nfs3_fixture_release(fx, NFSPROC3_READLINK, &res);
	args.symlink = root;
	nfs3_fixture_call(fx, NFSPROC3_READLINK, &args, &res);
	assert_int_equal(res.status, NFS3ERR_INVAL);
	nfs3_fixture_release(fx, NFSPROC3_READLINK, &res);
}

static void test_setattr_trace_line(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	SETATTR3args args = { .object = root };
	char buf[RPC_TRACE_DETAIL_MAX];

	args.new_attributes.mode.set_it = TRUE;
	args.new_attributes.mode.set_mode3_u.mode = 0644;
	args.new_attributes.size.set_it = TRUE;
	args.new_attributes.size.set_size3_u.size = 10;
	args.new_attributes.mtime.set_it = SET_TO_SERVER_TIME;
	fx->prog.procs[NFSPROC3_SETATTR].trace_args(&fx->call.req, &args, NULL,
						    buf, sizeof(buf));
	assert_string_equal(buf, "guard=0 mode=0644 size=10 mtime=server");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_getattr_returns_the_stores_attributes,
			nfs3_fixture_setup, nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_setattr_changes_mode_and_size_with_wcc,
			nfs3_fixture_setup, nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_setattr_guard_mismatch_is_not_sync,
			nfs3_fixture_setup, nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_setattr_permission_rules,
						nfs3_fixture_setup,
						nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_setattr_on_read_only_export_is_rofs,
			nfs3_fixture_setup, nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_lookup_finds_names_dot_and_dotdot,
			nfs3_fixture_setup, nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_lookup_errors,
						nfs3_fixture_setup,
						nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_lookup_needs_search_permission, nfs3_fixture_setup,
			nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_access_follows_mode_bits,
						nfs3_fixture_setup,
						nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_access_on_read_only_export_drops_changes,
			nfs3_fixture_setup, nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_readlink_returns_the_target, nfs3_fixture_setup,
			nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_setattr_trace_line,
						nfs3_fixture_setup,
						nfs3_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
