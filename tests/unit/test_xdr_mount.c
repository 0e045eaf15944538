// SPDX-License-Identifier: Apache-2.0
/*
 * test_xdr_mount: the rpcgen routines of nfsd/proto/mount3.x (RFC 1813 5).
 * Every procedure's arguments and results round-trip unchanged; a path
 * above MNTPATHLEN, a name above MNTNAMLEN, a handle above FHSIZE3 and too
 * many auth flavors fail to decode.  With DSNFS_FUZZ_SEED_DIR set, the
 * argument encodings are written as seeds for tests/fuzz/fuzz_args.c.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mount3.h"
#include "tests/lib/xdr_roundtrip.h"

static const char HANDLE[] = "0123456789abcdefghijklmnopqrstuvwxyz"
			     "ABCDEFGHIJKLMNOPQRSTUVWXYZ-_";

static void roundtrip(xdrproc_t proc, const void *obj, size_t size)
{
	void *decoded = NULL;

	assert_int_equal(xdr_roundtrip(proc, obj, size, &decoded), 0);
	xdr_roundtrip_release(proc, decoded);
}

static void test_mnt_roundtrips(void **state)
{
	dirpath path = "/ds1";
	int flavors[] = { AUTH_SYS, AUTH_NONE };
	mountres3 ok = { .fhs_status = MNT3_OK };
	mountres3 fail = { .fhs_status = MNT3ERR_ACCES };
	mountres3 *decoded = NULL;
	mountres3_ok *info;

	(void)state;
	ok.mountres3_u.mountinfo.fhandle.fhandle3_len = 56;
	ok.mountres3_u.mountinfo.fhandle.fhandle3_val = (char *)HANDLE;
	ok.mountres3_u.mountinfo.auth_flavors.auth_flavors_len = 2;
	ok.mountres3_u.mountinfo.auth_flavors.auth_flavors_val = flavors;
	roundtrip((xdrproc_t)xdr_dirpath, &path, sizeof(path));
	assert_int_equal(xdr_roundtrip_seed_write(
				 "mount_mnt",
				 FUZZ_ARGS_SEL_MOUNT_BASE + MOUNTPROC3_MNT,
				 (xdrproc_t)xdr_dirpath, &path),
			 0);
	roundtrip((xdrproc_t)xdr_mountres3, &fail, sizeof(fail));

	assert_int_equal(xdr_roundtrip((xdrproc_t)xdr_mountres3, &ok,
				       sizeof(ok), (void **)&decoded),
			 0);
	info = &decoded->mountres3_u.mountinfo;
	assert_int_equal(info->fhandle.fhandle3_len, 56);
	assert_memory_equal(info->fhandle.fhandle3_val, HANDLE, 56);
	assert_int_equal(info->auth_flavors.auth_flavors_len, 2);
	assert_int_equal(info->auth_flavors.auth_flavors_val[0], AUTH_SYS);
	assert_int_equal(info->auth_flavors.auth_flavors_val[1], AUTH_NONE);
	xdr_roundtrip_release((xdrproc_t)xdr_mountres3, decoded);
}

static void test_umnt_arg_roundtrips(void **state)
{
	dirpath path = "/ds2/";

	(void)state;
	roundtrip((xdrproc_t)xdr_dirpath, &path, sizeof(path));
	assert_int_equal(xdr_roundtrip_seed_write(
				 "mount_umnt",
				 FUZZ_ARGS_SEL_MOUNT_BASE + MOUNTPROC3_UMNT,
				 (xdrproc_t)xdr_dirpath, &path),
			 0);
}

static void test_dump_roundtrips(void **state)
{
	struct mountbody b[2] = {
		{ .ml_hostname = "10.0.0.1",
		  .ml_directory = "/ds1",
		  .ml_next = &b[1] },
		{ .ml_hostname = "esx2.lab", .ml_directory = "/ds2" },
	};
	mountlist list = &b[0];
	mountlist empty = NULL;
	mountlist *decoded = NULL;

	(void)state;
	roundtrip((xdrproc_t)xdr_mountlist, &empty, sizeof(empty));
	assert_int_equal(xdr_roundtrip((xdrproc_t)xdr_mountlist, &list,
				       sizeof(list), (void **)&decoded),
			 0);
	assert_string_equal((*decoded)->ml_hostname, "10.0.0.1");
	assert_string_equal((*decoded)->ml_next->ml_directory, "/ds2");
	assert_null((*decoded)->ml_next->ml_next);
	xdr_roundtrip_release((xdrproc_t)xdr_mountlist, decoded);
}

static void test_export_roundtrips(void **state)
{
	struct groupnode g[2] = {
		{ .gr_name = "10.0.0.0/8", .gr_next = &g[1] },
		{ .gr_name = "127.0.0.1" },
	};
	struct exportnode e[2] = {
		{ .ex_dir = "/ds1", .ex_groups = &g[0], .ex_next = &e[1] },
		{ .ex_dir = "/ds2", .ex_groups = NULL },
	};
	exports list = &e[0];
	exports *decoded = NULL;

	(void)state;
	assert_int_equal(xdr_roundtrip((xdrproc_t)xdr_exports, &list,
				       sizeof(list), (void **)&decoded),
			 0);
	assert_string_equal((*decoded)->ex_dir, "/ds1");
	assert_string_equal((*decoded)->ex_groups->gr_next->gr_name,
			    "127.0.0.1");
	assert_null((*decoded)->ex_next->ex_groups);
	xdr_roundtrip_release((xdrproc_t)xdr_exports, decoded);
}

static int dirpath_decode(u_int len)
{
	struct xdr_wire w;
	int ret;

	assert_int_equal(xdr_wire_open(&w, 4096), 0);
	assert_int_equal(xdr_wire_counted(&w, len), 0);
	ret = xdr_wire_decode(&w, (xdrproc_t)xdr_dirpath, sizeof(dirpath));
	xdr_wire_close(&w);
	return ret;
}

static void test_dirpath_bound_is_mntpathlen(void **state)
{
	(void)state;
	assert_int_equal(dirpath_decode(MNTPATHLEN), 0);
	assert_int_equal(dirpath_decode(MNTPATHLEN + 1), -EBADMSG);
}

static int mountbody_decode(u_int hostname_len)
{
	struct xdr_wire w;
	dirpath dir = "/ds1";
	bool_t more = TRUE, last = FALSE;
	int ret;

	/* A one-element mountlist: more, ml_hostname, ml_directory, end. */
	assert_int_equal(xdr_wire_open(&w, 4096), 0);
	assert_true(xdr_bool(&w.xdrs, &more));
	assert_int_equal(xdr_wire_counted(&w, hostname_len), 0);
	assert_true(xdr_dirpath(&w.xdrs, &dir));
	assert_true(xdr_bool(&w.xdrs, &last));
	ret = xdr_wire_decode(&w, (xdrproc_t)xdr_mountlist, sizeof(mountlist));
	xdr_wire_close(&w);
	return ret;
}

static void test_name_bound_is_mntnamlen(void **state)
{
	(void)state;
	assert_int_equal(mountbody_decode(MNTNAMLEN), 0);
	assert_int_equal(mountbody_decode(MNTNAMLEN + 1), -EBADMSG);
}

static int mountres_decode(u_int fh_len, u_int nflavors)
{
	struct xdr_wire w;
	mountstat3 status = MNT3_OK;
	int flavor = AUTH_SYS;
	u_int i;
	int ret;

	assert_int_equal(xdr_wire_open(&w, 4096), 0);
	assert_true(xdr_mountstat3(&w.xdrs, &status));
	assert_int_equal(xdr_wire_counted(&w, fh_len), 0);
	assert_true(xdr_u_int(&w.xdrs, &nflavors));
	for (i = 0; i < nflavors; i++) {
		assert_true(xdr_int(&w.xdrs, &flavor));
	}
	ret = xdr_wire_decode(&w, (xdrproc_t)xdr_mountres3, sizeof(mountres3));
	xdr_wire_close(&w);
	return ret;
}

static void test_mnt_reply_bounds(void **state)
{
	(void)state;
	assert_int_equal(mountres_decode(FHSIZE3, 2), 0);
	assert_int_equal(mountres_decode(FHSIZE3 + 1, 2), -EBADMSG);
	assert_int_equal(mountres_decode(8, MNT3_AUTH_FLAVORS_BOUND), 0);
	assert_int_equal(mountres_decode(8, MNT3_AUTH_FLAVORS_BOUND + 1),
			 -EBADMSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mnt_roundtrips),
		cmocka_unit_test(test_umnt_arg_roundtrips),
		cmocka_unit_test(test_dump_roundtrips),
		cmocka_unit_test(test_export_roundtrips),
		cmocka_unit_test(test_dirpath_bound_is_mntpathlen),
		cmocka_unit_test(test_name_bound_is_mntnamlen),
		cmocka_unit_test(test_mnt_reply_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
