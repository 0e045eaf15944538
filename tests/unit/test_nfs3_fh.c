// SPDX-License-Identifier: Apache-2.0
/*
 * test_nfs3_fh: what every NFSv3 call goes through first (nfsd/nfs3/fh.c,
 * status.c): malformed, forged, foreign and stale handles, the export's
 * client list, read-only exports, credential squashing, and the one
 * errno -> nfsstat3 map.
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

#include "nfsd/base/base.h"
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

static nfsstat3 getattr_status(struct nfs3_fixture *fx, const nfs_fh3 *fh)
{
	GETATTR3args args = { .object = *fh };
	GETATTR3res res;

	assert_int_equal(nfs3_fixture_call(fx, NFSPROC3_GETATTR, &args, &res),
			 RPC_REPLY);
	return res.status;
}

/* A handle of @len bytes copied from @fh (padded with 0xab) into @buf. */
static nfs_fh3 handle_resized(const nfs_fh3 *fh, char *buf, u_int len)
{
	nfs_fh3 out = { .data = { .data_len = len, .data_val = buf } };

	memset(buf, 0xab, len);
	memcpy(buf, fh->data.data_val,
	       fh->data.data_len < len ? fh->data.data_len : len);
	return out;
}

static void test_handle_longer_than_56_is_badhandle(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	char buf[64];
	nfs_fh3 fh = handle_resized(&root, buf, 57);

	assert_int_equal(getattr_status(fx, &fh), NFS3ERR_BADHANDLE);
	assert_null(fx->call.req.export_name);
	assert_int_equal(strlen(fx->call.req.path_hint), 8);
	fh = handle_resized(&root, buf, 64);
	assert_int_equal(getattr_status(fx, &fh), NFS3ERR_BADHANDLE);
}

static void test_empty_or_garbage_handle_is_badhandle(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 empty = { .data = { .data_len = 0, .data_val = NULL } };
	char garbage[27];
	nfs_fh3 fh = { .data = { .data_len = 27, .data_val = garbage } };

	assert_int_equal(getattr_status(fx, &empty), NFS3ERR_BADHANDLE);
	memset(garbage, 0x5a, sizeof(garbage));
	assert_int_equal(getattr_status(fx, &fh), NFS3ERR_BADHANDLE);
}

static void test_forged_handle_is_badhandle(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	char buf[STORE_FH_MAX];
	nfs_fh3 fh = handle_resized(&root, buf, root.data.data_len);

	assert_int_equal(getattr_status(fx, &fh), NFS3_OK);
	buf[10] ^= 1; /* the fileid: the tag no longer matches */
	assert_int_equal(getattr_status(fx, &fh), NFS3ERR_BADHANDLE);
}

static void set_export_id(char *buf, uint32_t id)
{
	buf[1] = (char)(id >> 24);
	buf[2] = (char)(id >> 16);
	buf[3] = (char)(id >> 8);
	buf[4] = (char)id;
}

static void test_handle_of_removed_export_is_stale(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	char buf[STORE_FH_MAX];
	nfs_fh3 fh = handle_resized(&root, buf, root.data.data_len);

	set_export_id(buf, 999);
	assert_int_equal(getattr_status(fx, &fh), NFS3ERR_STALE);
}

static void test_handle_moved_to_another_export_is_badhandle(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	char buf[STORE_FH_MAX];
	nfs_fh3 fh = handle_resized(&root, buf, root.data.data_len);

	set_export_id(buf, fx->exports[NFS3_FIXTURE_DS2].id);
	assert_int_equal(getattr_status(fx, &fh), NFS3ERR_BADHANDLE);
	assert_string_equal(fx->call.req.export_name, "ds2");
}

static void test_removed_file_is_stale(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	nfs_fh3 fh = nfs3_fixture_mkfile(fx, NFS3_FIXTURE_DS1, &root, "f", "x",
					 1, 0644);
	struct store *st = nfs3_fixture_store(fx, NFS3_FIXTURE_DS1);
	struct store_obj *dir;

	assert_int_equal(getattr_status(fx, &fh), NFS3_OK);
	assert_int_equal(
		nfs3_fixture_resolve(fx, NFS3_FIXTURE_DS1, &root, &dir), 0);
	assert_int_equal(st->ops->remove(st, dir, "f"), 0);
	st->ops->obj_unref(dir);
	assert_int_equal(getattr_status(fx, &fh), NFS3ERR_STALE);
}

static void test_client_not_on_the_list_is_acces_on_every_call(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_LIMITED);
	nfs_fh3 fh = nfs3_fixture_mkfile(fx, NFS3_FIXTURE_LIMITED, &root, "f",
					 "data", 4, 0644);
	READ3args rargs = { .file = fh, .count = 4 };
	CREATE3args cargs = {
		.where = { .dir = root, .name = (char *)"new" },
		.how = { .mode = UNCHECKED },
	};
	READ3res rres;
	CREATE3res cres;

	assert_int_equal(getattr_status(fx, &root), NFS3ERR_ACCES);
	nfs3_fixture_call(fx, NFSPROC3_READ, &rargs, &rres);
	assert_int_equal(rres.status, NFS3ERR_ACCES);
	nfs3_fixture_call(fx, NFSPROC3_CREATE, &cargs, &cres);
	assert_int_equal(cres.status, NFS3ERR_ACCES);
	assert_string_equal(fx->call.req.export_name, "limited");

	nfs3_fixture_peer(fx, "10.1.2.3");
	assert_int_equal(getattr_status(fx, &root), NFS3_OK);
	nfs3_fixture_call(fx, NFSPROC3_READ, &rargs, &rres);
	assert_int_equal(rres.status, NFS3_OK);
	nfs3_fixture_release(fx, NFSPROC3_READ, &rres);
}

/* CREATE of @name in the root of DS1; returns the new file's owner. */
static struct store_attr create_as_caller(struct nfs3_fixture *fx,
					  const char *name)
{
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	CREATE3args args = {
		.where = { .dir = root, .name = (char *)name },
		.how = { .mode = GUARDED },
	};
	CREATE3res res;
	struct store_attr a;

	nfs3_fixture_call(fx, NFSPROC3_CREATE, &args, &res);
	assert_int_equal(res.status, NFS3_OK);
	assert_true(res.CREATE3res_u.resok.obj.handle_follows);
	a = nfs3_fixture_attr(fx, NFS3_FIXTURE_DS1,
			      &res.CREATE3res_u.resok.obj.post_op_fh3_u.handle);
	nfs3_fixture_release(fx, NFSPROC3_CREATE, &res);
	return a;
}

static void test_root_is_squashed_by_default(void **state)
{
	struct nfs3_fixture *fx = *state;
	struct store_attr a;

	nfs3_fixture_cred(fx, AUTH_SYS, 0, 0);
	a = create_as_caller(fx, "byroot");
	assert_int_equal(a.uid, EXPORT_ANON_ID);
	assert_int_equal(a.gid, EXPORT_ANON_ID);
	nfs3_fixture_cred(fx, AUTH_SYS, 1234, 99);
	a = create_as_caller(fx, "byuser");
	assert_int_equal(a.uid, 1234);
	assert_int_equal(a.gid, 99);
}

static void test_no_squash_keeps_root(void **state)
{
	struct nfs3_fixture *fx = *state;
	struct store_attr a;

	fx->exports[NFS3_FIXTURE_DS1].squash = EXPORT_SQUASH_NONE;
	nfs3_fixture_cred(fx, AUTH_SYS, 0, 0);
	a = create_as_caller(fx, "byroot");
	assert_int_equal(a.uid, 0);
	assert_int_equal(a.gid, 0);
}

static void test_all_squash_and_auth_none_are_anonymous(void **state)
{
	struct nfs3_fixture *fx = *state;
	struct store_attr a;

	fx->exports[NFS3_FIXTURE_DS1].squash = EXPORT_SQUASH_ALL;
	fx->exports[NFS3_FIXTURE_DS1].anon_uid = 4242;
	fx->exports[NFS3_FIXTURE_DS1].anon_gid = 4343;
	a = create_as_caller(fx, "squashed");
	assert_int_equal(a.uid, 4242);
	assert_int_equal(a.gid, 4343);

	fx->exports[NFS3_FIXTURE_DS1].squash = EXPORT_SQUASH_NONE;
	nfs3_fixture_cred(fx, AUTH_NONE, 0, 0);
	a = create_as_caller(fx, "anonymous");
	assert_int_equal(a.uid, 4242);
	assert_int_equal(a.gid, 4343);
}

/* ACCESS READ on a file only group 0 may read: root_squash also takes gid
 * 0 away, no_root_squash leaves root all its rights. */
static void test_root_squash_takes_group_zero_too(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	nfs_fh3 fh = nfs3_fixture_mkfile(fx, NFS3_FIXTURE_DS1, &root, "g0", "",
					 0, 0040);
	struct store *st = nfs3_fixture_store(fx, NFS3_FIXTURE_DS1);
	struct store_sattr sa = { .set_uid = true, .uid = 5, .set_gid = true };
	struct store_obj *obj;
	ACCESS3args args = { .object = fh, .access = ACCESS3_READ };
	ACCESS3res res;

	assert_int_equal(nfs3_fixture_resolve(fx, NFS3_FIXTURE_DS1, &fh, &obj),
			 0);
	assert_int_equal(st->ops->setattr(st, obj, &sa, NULL), 0);
	st->ops->obj_unref(obj);
	nfs3_fixture_cred(fx, AUTH_SYS, 0, 0);
	nfs3_fixture_call(fx, NFSPROC3_ACCESS, &args, &res);
	assert_int_equal(res.status, NFS3_OK);
	assert_int_equal(res.ACCESS3res_u.resok.access, 0);
	nfs3_fixture_cred(fx, AUTH_SYS, 77, 0);
	nfs3_fixture_call(fx, NFSPROC3_ACCESS, &args, &res);
	assert_int_equal(res.ACCESS3res_u.resok.access, 0);
	fx->exports[NFS3_FIXTURE_DS1].squash = EXPORT_SQUASH_NONE;
	nfs3_fixture_call(fx, NFSPROC3_ACCESS, &args, &res);
	assert_int_equal(res.ACCESS3res_u.resok.access, ACCESS3_READ);
}

static void test_errno_maps_to_nfsstat3(void **state)
{
	static const struct {
		int err;
		nfsstat3 status;
	} map[] = {
		{ 0, NFS3_OK },
		{ -EPERM, NFS3ERR_PERM },
		{ -ENOENT, NFS3ERR_NOENT },
		{ -EIO, NFS3ERR_IO },
		{ -EACCES, NFS3ERR_ACCES },
		{ -EEXIST, NFS3ERR_EXIST },
		{ -EXDEV, NFS3ERR_XDEV },
		{ -ENOTDIR, NFS3ERR_NOTDIR },
		{ -EISDIR, NFS3ERR_ISDIR },
		{ -EINVAL, NFS3ERR_INVAL },
		{ -EFBIG, NFS3ERR_FBIG },
		{ -ENOSPC, NFS3ERR_NOSPC },
		{ -EROFS, NFS3ERR_ROFS },
		{ -EMLINK, NFS3ERR_MLINK },
		{ -ENAMETOOLONG, NFS3ERR_NAMETOOLONG },
		{ -ENOTEMPTY, NFS3ERR_NOTEMPTY },
		{ -EDQUOT, NFS3ERR_DQUOT },
		{ -ESTALE, NFS3ERR_STALE },
		{ -STORE_EBADHANDLE, NFS3ERR_BADHANDLE },
		{ -STORE_ENOTSYNC, NFS3ERR_NOT_SYNC },
		{ -STORE_EBADCOOKIE, NFS3ERR_BAD_COOKIE },
		{ -STORE_ENOTSUPP, NFS3ERR_NOTSUPP },
		{ -STORE_ETOOSMALL, NFS3ERR_TOOSMALL },
		{ -STORE_EBADTYPE, NFS3ERR_BADTYPE },
		{ -ENOMEM, NFS3ERR_JUKEBOX },
		{ -EPIPE, NFS3ERR_IO },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(map); i++) {
		assert_int_equal(nfs3__status_from_errno(map[i].err),
				 map[i].status);
	}
	assert_string_equal(nfs3__status_name(NFS3ERR_NOT_SYNC),
			    "NFS3ERR_NOT_SYNC");
	assert_string_equal(nfs3__status_name(NFS3ERR_SERVERFAULT),
			    "NFS3ERR_SERVERFAULT");
}

/* The start of a new call about @fh: what dispatch gives a handler (a
 * zeroed request), with @proc. */
static struct request *new_call(struct nfs3_fixture *fx, uint32_t proc)
{
	struct request *req = &fx->call.req;

	req->proc = proc;
	req->export_name = NULL;
	memset(&req->export, 0, sizeof(req->export));
	return req;
}

/* The charge at admission finds the export; the handler's checks use it
 * and find it no more in the table (one lookup per call). */
static void test_export_is_found_once_per_call(void **state)
{
	struct nfs3_fixture *fx = *state;
	struct export *ds1 = &fx->exports[NFS3_FIXTURE_DS1];
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	WRITE3args wr = { .file = root, .count = 1 };
	struct request *req = new_call(fx, NFSPROC3_WRITE);
	struct nfs3_file f;

	assert_true(nfs3__charge(req, &wr));
	assert_ptr_equal(req->export.exp, ds1);
	assert_int_equal(req->export.id, 101);
	assert_ptr_equal(req->export.handle, &wr.file);
	assert_false(req->export.access_valid);
	/* A table search for id 101 would now find nothing: only the kept
	 * export can answer the handler, for the call's own handle and for
	 * another copy of it (parsed, the same id). */
	ds1->id = 999;
	assert_int_equal(nfs3__fh_export(req, &wr.file, true, &f), 0);
	assert_ptr_equal(f.exp, ds1);
	assert_int_equal(nfs3__fh_export(req, &root, false, &f), 0);
	assert_ptr_equal(f.exp, ds1);
	assert_true(req->export.access_valid);
	assert_int_equal(req->export.access_err, 0);
	assert_string_equal(req->export_name, "ds1");
	/* The next call looks again, and finds no export 101. */
	req = new_call(fx, NFSPROC3_GETATTR);
	assert_int_equal(nfs3__fh_export(req, &root, false, &f), -ESTALE);
	assert_null(req->export.exp);
	ds1->id = 101;
}

/* One call sees one set of options; a SIGHUP's change applies from the
 * next call. */
static void test_access_is_read_once_per_call(void **state)
{
	struct nfs3_fixture *fx = *state;
	struct export *ds1 = &fx->exports[NFS3_FIXTURE_DS1];
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	struct request *req = new_call(fx, NFSPROC3_WRITE);
	struct nfs3_file f;

	assert_int_equal(nfs3__fh_export(req, &root, true, &f), 0);
	assert_false(req->export.access.read_only);
	ds1->read_only = true; /* as a SIGHUP changes it, in place */
	assert_int_equal(nfs3__fh_export(req, &root, true, &f), 0);
	req = new_call(fx, NFSPROC3_WRITE);
	assert_int_equal(nfs3__fh_export(req, &root, true, &f), -EROFS);
	assert_true(req->export.access.read_only);
	assert_int_equal(getattr_status(fx, &root), NFS3_OK);
	ds1->read_only = false;

	/* The client list too: refused from the next call on, and the
	 * refusal is kept for the rest of that call. */
	ds1->nclients = 1;
	assert_int_equal(export_client_parse("10.0.0.0/8", &ds1->clients[0]),
			 0);
	req = new_call(fx, NFSPROC3_GETATTR);
	assert_int_equal(nfs3__fh_export(req, &root, false, &f), -EACCES);
	assert_int_equal(req->export.access_err, -EACCES);
	ds1->nclients = 0;
	assert_int_equal(nfs3__fh_export(req, &root, false, &f), -EACCES);
	assert_int_equal(getattr_status(fx, &root), NFS3_OK);
}

/* An export removed (SIGHUP) after the call was admitted, while it waited
 * in its queue: STALE, as if the handler had searched the table. */
static void test_export_removed_after_admission_is_stale(void **state)
{
	struct nfs3_fixture *fx = *state;
	struct export *ds1 = &fx->exports[NFS3_FIXTURE_DS1];
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	GETATTR3args ga = { .object = root };
	struct request *req = new_call(fx, NFSPROC3_GETATTR);
	struct nfs3_file f;

	assert_true(nfs3__charge(req, &ga));
	assert_ptr_equal(req->export.exp, ds1);
	export_table_set_removed(ds1, true);
	assert_int_equal(nfs3__fh_export(req, &root, false, &f), -ESTALE);
	assert_null(req->export.exp);
	assert_int_equal(nfs3__fh_export(req, &root, false, &f), -ESTALE);
	export_table_set_removed(ds1, false);

	/* Removed between two checks of one call: the second is STALE. */
	req = new_call(fx, NFSPROC3_WRITE);
	assert_int_equal(nfs3__fh_export(req, &root, true, &f), 0);
	export_table_set_removed(ds1, true);
	assert_int_equal(nfs3__fh_export(req, &root, true, &f), -ESTALE);
	/* Back (a SIGHUP re-adds it in its slot): found again. */
	export_table_set_removed(ds1, false);
	assert_int_equal(nfs3__fh_export(req, &root, true, &f), 0);
	assert_ptr_equal(f.exp, ds1);
}

/* A call's second handle in another export (RENAME, LINK) is checked
 * against that export's own rules, not the kept one's. */
static void test_second_export_of_a_call_is_checked_on_its_own(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	nfs_fh3 ro = nfs3_fixture_root(fx, NFS3_FIXTURE_RO);
	nfs_fh3 limited = nfs3_fixture_root(fx, NFS3_FIXTURE_LIMITED);
	struct request *req = new_call(fx, NFSPROC3_RENAME);
	struct nfs3_file f;

	assert_int_equal(nfs3__fh_export(req, &root, true, &f), 0);
	assert_int_equal(nfs3__fh_export(req, &ro, true, &f), -EROFS);
	assert_int_equal(nfs3__fh_export(req, &limited, false, &f), -EACCES);
	assert_int_equal(nfs3__fh_export(req, &ro, false, &f), 0);
	assert_ptr_equal(f.exp, &fx->exports[NFS3_FIXTURE_RO]);
	assert_true(f.read_only);
	/* The call's own export and access stay what they were. */
	assert_ptr_equal(req->export.exp, &fx->exports[NFS3_FIXTURE_DS1]);
	assert_int_equal(nfs3__fh_export(req, &root, true, &f), 0);
	assert_false(f.read_only);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_handle_longer_than_56_is_badhandle,
			nfs3_fixture_setup, nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_empty_or_garbage_handle_is_badhandle,
			nfs3_fixture_setup, nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_forged_handle_is_badhandle,
						nfs3_fixture_setup,
						nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_handle_of_removed_export_is_stale,
			nfs3_fixture_setup, nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_handle_moved_to_another_export_is_badhandle,
			nfs3_fixture_setup, nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_removed_file_is_stale,
						nfs3_fixture_setup,
						nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_client_not_on_the_list_is_acces_on_every_call,
			nfs3_fixture_setup, nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_root_is_squashed_by_default, nfs3_fixture_setup,
			nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_no_squash_keeps_root,
						nfs3_fixture_setup,
						nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_all_squash_and_auth_none_are_anonymous,
			nfs3_fixture_setup, nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_root_squash_takes_group_zero_too,
			nfs3_fixture_setup, nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_errno_maps_to_nfsstat3,
						nfs3_fixture_setup,
						nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_export_is_found_once_per_call, nfs3_fixture_setup,
			nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_access_is_read_once_per_call, nfs3_fixture_setup,
			nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_export_removed_after_admission_is_stale,
			nfs3_fixture_setup, nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_second_export_of_a_call_is_checked_on_its_own,
			nfs3_fixture_setup, nfs3_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
