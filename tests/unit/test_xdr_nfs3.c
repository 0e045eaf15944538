// SPDX-License-Identifier: Apache-2.0
/*
 * test_xdr_nfs3: the rpcgen routines of nfsd/proto/nfs3_prot.x (RFC 1813
 * 2, 3).  Every procedure's arguments and both result arms round-trip
 * through xdrmem unchanged; oversized handles, names, paths and data fail
 * to decode (their XDR bounds).  With DSNFS_FUZZ_SEED_DIR set, the argument
 * encodings are written as seeds for tests/fuzz/fuzz_args.c.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nfs3_prot.h"
#include "tests/lib/xdr_roundtrip.h"

/* Distinct bytes, long enough for any handle or verifier used below. */
static const char PATTERN[] = "0123456789abcdefghijklmnopqrstuvwxyz"
			      "ABCDEFGHIJKLMNOPQRSTUVWXYZ-_+=!@#$%^&*()";

static nfs_fh3 fh_make(u_int off, u_int len)
{
	nfs_fh3 fh = { .data = { .data_len = len,
				 .data_val = (char *)PATTERN + off } };

	return fh;
}

static fattr3 fattr_make(uint64 seed)
{
	fattr3 a = {
		.type = NF3REG,
		.mode = 0644,
		.nlink = 2,
		.uid = 1000 + (uid3)seed,
		.gid = 2000 + (gid3)seed,
		.size = 0x100000000ULL + seed,
		.used = 0x200000000ULL + seed,
		.rdev = { .specdata1 = 8, .specdata2 = 1 },
		.fsid = 0xfeedULL << 32 | seed,
		.fileid = 0xabcdef0123ULL + seed,
		.atime = { .seconds = 1700000000, .nseconds = 1 },
		.mtime = { .seconds = 1700000001, .nseconds = 2 },
		.ctime = { .seconds = 1700000002, .nseconds = 999999999 },
	};

	return a;
}

static post_op_attr attr_follow(uint64 seed)
{
	post_op_attr p = { .attributes_follow = TRUE };

	p.post_op_attr_u.attributes = fattr_make(seed);
	return p;
}

static post_op_attr attr_none(void)
{
	post_op_attr p = { .attributes_follow = FALSE };

	return p;
}

static wcc_data wcc_make(uint64 seed)
{
	wcc_data w = { .before = { .attributes_follow = TRUE },
		       .after = attr_follow(seed) };

	w.before.pre_op_attr_u.attributes.size = 4096 + seed;
	w.before.pre_op_attr_u.attributes.mtime.seconds = 17;
	w.before.pre_op_attr_u.attributes.ctime.nseconds = 18;
	return w;
}

static sattr3 sattr_make(void)
{
	sattr3 s = {
		.mode = { .set_it = TRUE, .set_mode3_u.mode = 0755 },
		.uid = { .set_it = TRUE, .set_uid3_u.uid = 7 },
		.gid = { .set_it = FALSE },
		.size = { .set_it = TRUE, .set_size3_u.size = 1ULL << 40 },
		.atime = { .set_it = SET_TO_CLIENT_TIME,
			   .set_atime_u.atime = { .seconds = 5,
						  .nseconds = 6 } },
		.mtime = { .set_it = SET_TO_SERVER_TIME },
	};

	return s;
}

static diropargs3 dirop_make(const char *name)
{
	diropargs3 d = { .dir = fh_make(1, 32), .name = (char *)name };

	return d;
}

static post_op_fh3 pfh_make(void)
{
	post_op_fh3 p = { .handle_follows = TRUE };

	p.post_op_fh3_u.handle = fh_make(3, 40);
	return p;
}

/* Round-trips *obj and releases the copy. */
static void roundtrip(xdrproc_t proc, const void *obj, size_t size)
{
	void *decoded = NULL;

	assert_int_equal(xdr_roundtrip(proc, obj, size, &decoded), 0);
	xdr_roundtrip_release(proc, decoded);
}

/* Round-trips procedure @nfsproc's arguments and writes them as a seed. */
static void args_roundtrip(const char *seed, uint32_t nfsproc, xdrproc_t proc,
			   const void *obj, size_t size)
{
	roundtrip(proc, obj, size);
	assert_int_equal(
		xdr_roundtrip_seed_write(seed, (uint8_t)nfsproc, proc, obj), 0);
}

static void test_getattr_roundtrips(void **state)
{
	GETATTR3args args = { .object = fh_make(0, NFS3_FHSIZE) };
	GETATTR3res ok = { .status = NFS3_OK };
	GETATTR3res fail = { .status = NFS3ERR_STALE };

	(void)state;
	ok.GETATTR3res_u.resok.obj_attributes = fattr_make(1);
	args_roundtrip("nfs3_getattr", NFSPROC3_GETATTR,
		       (xdrproc_t)xdr_GETATTR3args, &args, sizeof(args));
	roundtrip((xdrproc_t)xdr_GETATTR3res, &ok, sizeof(ok));
	roundtrip((xdrproc_t)xdr_GETATTR3res, &fail, sizeof(fail));
}

static void test_setattr_roundtrips(void **state)
{
	SETATTR3args args = { .object = fh_make(2, 28),
			      .new_attributes = sattr_make(),
			      .guard = { .check = TRUE } };
	SETATTR3res ok = { .status = NFS3_OK };
	SETATTR3res fail = { .status = NFS3ERR_NOT_SYNC };

	(void)state;
	args.guard.sattrguard3_u.obj_ctime.seconds = 99;
	ok.SETATTR3res_u.resok.obj_wcc = wcc_make(2);
	fail.SETATTR3res_u.resfail.obj_wcc = wcc_make(3);
	args_roundtrip("nfs3_setattr", NFSPROC3_SETATTR,
		       (xdrproc_t)xdr_SETATTR3args, &args, sizeof(args));
	roundtrip((xdrproc_t)xdr_SETATTR3res, &ok, sizeof(ok));
	roundtrip((xdrproc_t)xdr_SETATTR3res, &fail, sizeof(fail));
}

static void test_lookup_roundtrips(void **state)
{
	LOOKUP3args args = { .what = dirop_make("disk.vmdk") };
	LOOKUP3res ok = { .status = NFS3_OK };
	LOOKUP3res fail = { .status = NFS3ERR_NOENT };
	LOOKUP3res *decoded = NULL;

	(void)state;
	ok.LOOKUP3res_u.resok.object = fh_make(4, 36);
	ok.LOOKUP3res_u.resok.obj_attributes = attr_follow(4);
	ok.LOOKUP3res_u.resok.dir_attributes = attr_none();
	fail.LOOKUP3res_u.resfail.dir_attributes = attr_follow(5);
	args_roundtrip("nfs3_lookup", NFSPROC3_LOOKUP,
		       (xdrproc_t)xdr_LOOKUP3args, &args, sizeof(args));
	roundtrip((xdrproc_t)xdr_LOOKUP3res, &fail, sizeof(fail));

	assert_int_equal(xdr_roundtrip((xdrproc_t)xdr_LOOKUP3res, &ok,
				       sizeof(ok), (void **)&decoded),
			 0);
	assert_int_equal(decoded->status, NFS3_OK);
	assert_int_equal(decoded->LOOKUP3res_u.resok.object.data.data_len, 36);
	assert_memory_equal(decoded->LOOKUP3res_u.resok.object.data.data_val,
			    PATTERN + 4, 36);
	assert_int_equal(decoded->LOOKUP3res_u.resok.obj_attributes
				 .post_op_attr_u.attributes.size,
			 0x100000004ULL);
	assert_false(
		decoded->LOOKUP3res_u.resok.dir_attributes.attributes_follow);
	xdr_roundtrip_release((xdrproc_t)xdr_LOOKUP3res, decoded);
}

static void test_access_roundtrips(void **state)
{
	ACCESS3args args = { .object = fh_make(5, 20),
			     .access = ACCESS3_READ | ACCESS3_MODIFY |
				       ACCESS3_EXECUTE };
	ACCESS3res ok = { .status = NFS3_OK };
	ACCESS3res fail = { .status = NFS3ERR_BADHANDLE };

	(void)state;
	ok.ACCESS3res_u.resok.obj_attributes = attr_follow(6);
	ok.ACCESS3res_u.resok.access = ACCESS3_READ;
	fail.ACCESS3res_u.resfail.obj_attributes = attr_none();
	args_roundtrip("nfs3_access", NFSPROC3_ACCESS,
		       (xdrproc_t)xdr_ACCESS3args, &args, sizeof(args));
	roundtrip((xdrproc_t)xdr_ACCESS3res, &ok, sizeof(ok));
	roundtrip((xdrproc_t)xdr_ACCESS3res, &fail, sizeof(fail));
}

static void test_readlink_roundtrips(void **state)
{
	READLINK3args args = { .symlink = fh_make(6, 24) };
	READLINK3res ok = { .status = NFS3_OK };
	READLINK3res fail = { .status = NFS3ERR_INVAL };

	(void)state;
	ok.READLINK3res_u.resok.symlink_attributes = attr_follow(7);
	ok.READLINK3res_u.resok.data = "../other/disk.vmdk";
	fail.READLINK3res_u.resfail.symlink_attributes = attr_follow(8);
	args_roundtrip("nfs3_readlink", NFSPROC3_READLINK,
		       (xdrproc_t)xdr_READLINK3args, &args, sizeof(args));
	roundtrip((xdrproc_t)xdr_READLINK3res, &ok, sizeof(ok));
	roundtrip((xdrproc_t)xdr_READLINK3res, &fail, sizeof(fail));
}

static void test_read_roundtrips(void **state)
{
	READ3args args = { .file = fh_make(7, 56),
			   .offset = 0x123456789ULL,
			   .count = 65536 };
	READ3res ok = { .status = NFS3_OK };
	READ3res fail = { .status = NFS3ERR_IO };
	READ3res *decoded = NULL;

	(void)state;
	ok.READ3res_u.resok.file_attributes = attr_follow(9);
	ok.READ3res_u.resok.count = 13;
	ok.READ3res_u.resok.eof = TRUE;
	ok.READ3res_u.resok.data.data_len = 13;
	ok.READ3res_u.resok.data.data_val = (char *)PATTERN;
	fail.READ3res_u.resfail.file_attributes = attr_none();
	args_roundtrip("nfs3_read", NFSPROC3_READ, (xdrproc_t)xdr_READ3args,
		       &args, sizeof(args));
	roundtrip((xdrproc_t)xdr_READ3res, &fail, sizeof(fail));

	assert_int_equal(xdr_roundtrip((xdrproc_t)xdr_READ3res, &ok, sizeof(ok),
				       (void **)&decoded),
			 0);
	assert_true(decoded->READ3res_u.resok.eof);
	assert_int_equal(decoded->READ3res_u.resok.data.data_len, 13);
	assert_memory_equal(decoded->READ3res_u.resok.data.data_val, PATTERN,
			    13);
	xdr_roundtrip_release((xdrproc_t)xdr_READ3res, decoded);
}

static void test_write_roundtrips(void **state)
{
	WRITE3args args = { .file = fh_make(8, 56),
			    .offset = 1ULL << 33,
			    .count = 17,
			    .stable = FILE_SYNC,
			    .data = { .data_len = 17,
				      .data_val = (char *)PATTERN + 9 } };
	WRITE3res ok = { .status = NFS3_OK };
	WRITE3res fail = { .status = NFS3ERR_NOSPC };

	(void)state;
	ok.WRITE3res_u.resok.file_wcc = wcc_make(10);
	ok.WRITE3res_u.resok.count = 17;
	ok.WRITE3res_u.resok.committed = DATA_SYNC;
	memcpy(ok.WRITE3res_u.resok.verf, PATTERN + 20, NFS3_WRITEVERFSIZE);
	fail.WRITE3res_u.resfail.file_wcc = wcc_make(11);
	args_roundtrip("nfs3_write", NFSPROC3_WRITE, (xdrproc_t)xdr_WRITE3args,
		       &args, sizeof(args));
	roundtrip((xdrproc_t)xdr_WRITE3res, &ok, sizeof(ok));
	roundtrip((xdrproc_t)xdr_WRITE3res, &fail, sizeof(fail));
}

static void test_create_roundtrips(void **state)
{
	CREATE3args guarded = { .where = dirop_make("new-flat.vmdk"),
				.how = { .mode = GUARDED } };
	CREATE3args exclusive = { .where = dirop_make("x.lck"),
				  .how = { .mode = EXCLUSIVE } };
	CREATE3res ok = { .status = NFS3_OK };
	CREATE3res fail = { .status = NFS3ERR_EXIST };

	(void)state;
	guarded.how.createhow3_u.obj_attributes = sattr_make();
	memcpy(exclusive.how.createhow3_u.verf, PATTERN + 30,
	       NFS3_CREATEVERFSIZE);
	ok.CREATE3res_u.resok.obj = pfh_make();
	ok.CREATE3res_u.resok.obj_attributes = attr_follow(12);
	ok.CREATE3res_u.resok.dir_wcc = wcc_make(13);
	fail.CREATE3res_u.resfail.dir_wcc = wcc_make(14);
	args_roundtrip("nfs3_create", NFSPROC3_CREATE,
		       (xdrproc_t)xdr_CREATE3args, &guarded, sizeof(guarded));
	args_roundtrip("nfs3_create_exclusive", NFSPROC3_CREATE,
		       (xdrproc_t)xdr_CREATE3args, &exclusive,
		       sizeof(exclusive));
	roundtrip((xdrproc_t)xdr_CREATE3res, &ok, sizeof(ok));
	roundtrip((xdrproc_t)xdr_CREATE3res, &fail, sizeof(fail));
}

static void test_mkdir_roundtrips(void **state)
{
	MKDIR3args args = { .where = dirop_make("vm1"),
			    .attributes = sattr_make() };
	MKDIR3res ok = { .status = NFS3_OK };
	MKDIR3res fail = { .status = NFS3ERR_DQUOT };

	(void)state;
	ok.MKDIR3res_u.resok.obj = pfh_make();
	ok.MKDIR3res_u.resok.obj_attributes = attr_none();
	ok.MKDIR3res_u.resok.dir_wcc = wcc_make(15);
	fail.MKDIR3res_u.resfail.dir_wcc = wcc_make(16);
	args_roundtrip("nfs3_mkdir", NFSPROC3_MKDIR, (xdrproc_t)xdr_MKDIR3args,
		       &args, sizeof(args));
	roundtrip((xdrproc_t)xdr_MKDIR3res, &ok, sizeof(ok));
	roundtrip((xdrproc_t)xdr_MKDIR3res, &fail, sizeof(fail));
}

static void test_symlink_roundtrips(void **state)
{
	SYMLINK3args args = { .where = dirop_make("link"),
			      .symlink = { .symlink_attributes = sattr_make(),
					   .symlink_data = "target/file" } };
	SYMLINK3res ok = { .status = NFS3_OK };
	SYMLINK3res fail = { .status = NFS3ERR_NAMETOOLONG };

	(void)state;
	ok.SYMLINK3res_u.resok.obj = pfh_make();
	ok.SYMLINK3res_u.resok.obj_attributes = attr_follow(17);
	ok.SYMLINK3res_u.resok.dir_wcc = wcc_make(18);
	fail.SYMLINK3res_u.resfail.dir_wcc = wcc_make(19);
	args_roundtrip("nfs3_symlink", NFSPROC3_SYMLINK,
		       (xdrproc_t)xdr_SYMLINK3args, &args, sizeof(args));
	roundtrip((xdrproc_t)xdr_SYMLINK3res, &ok, sizeof(ok));
	roundtrip((xdrproc_t)xdr_SYMLINK3res, &fail, sizeof(fail));
}

static void test_mknod_roundtrips(void **state)
{
	MKNOD3args chr = { .where = dirop_make("tty"),
			   .what = { .type = NF3CHR } };
	MKNOD3args fifo = { .where = dirop_make("pipe"),
			    .what = { .type = NF3FIFO } };
	MKNOD3args reg = { .where = dirop_make("plain"),
			   .what = { .type = NF3REG } };
	MKNOD3res ok = { .status = NFS3_OK };
	MKNOD3res fail = { .status = NFS3ERR_BADTYPE };

	(void)state;
	chr.what.mknoddata3_u.device.dev_attributes = sattr_make();
	chr.what.mknoddata3_u.device.spec.specdata1 = 4;
	chr.what.mknoddata3_u.device.spec.specdata2 = 64;
	fifo.what.mknoddata3_u.pipe_attributes = sattr_make();
	ok.MKNOD3res_u.resok.obj = pfh_make();
	ok.MKNOD3res_u.resok.obj_attributes = attr_follow(20);
	ok.MKNOD3res_u.resok.dir_wcc = wcc_make(21);
	fail.MKNOD3res_u.resfail.dir_wcc = wcc_make(22);
	args_roundtrip("nfs3_mknod", NFSPROC3_MKNOD, (xdrproc_t)xdr_MKNOD3args,
		       &chr, sizeof(chr));
	args_roundtrip("nfs3_mknod_fifo", NFSPROC3_MKNOD,
		       (xdrproc_t)xdr_MKNOD3args, &fifo, sizeof(fifo));
	roundtrip((xdrproc_t)xdr_MKNOD3args, &reg, sizeof(reg));
	roundtrip((xdrproc_t)xdr_MKNOD3res, &ok, sizeof(ok));
	roundtrip((xdrproc_t)xdr_MKNOD3res, &fail, sizeof(fail));
}

static void test_remove_rmdir_roundtrip(void **state)
{
	REMOVE3args rm = { .object = dirop_make("old.vmdk") };
	RMDIR3args rmdir = { .object = dirop_make("olddir") };
	REMOVE3res rm_ok = { .status = NFS3_OK };
	REMOVE3res rm_fail = { .status = NFS3ERR_ISDIR };
	RMDIR3res rmdir_ok = { .status = NFS3_OK };
	RMDIR3res rmdir_fail = { .status = NFS3ERR_NOTEMPTY };

	(void)state;
	rm_ok.REMOVE3res_u.resok.dir_wcc = wcc_make(23);
	rm_fail.REMOVE3res_u.resfail.dir_wcc = wcc_make(24);
	rmdir_ok.RMDIR3res_u.resok.dir_wcc = wcc_make(25);
	rmdir_fail.RMDIR3res_u.resfail.dir_wcc = wcc_make(26);
	args_roundtrip("nfs3_remove", NFSPROC3_REMOVE,
		       (xdrproc_t)xdr_REMOVE3args, &rm, sizeof(rm));
	args_roundtrip("nfs3_rmdir", NFSPROC3_RMDIR, (xdrproc_t)xdr_RMDIR3args,
		       &rmdir, sizeof(rmdir));
	roundtrip((xdrproc_t)xdr_REMOVE3res, &rm_ok, sizeof(rm_ok));
	roundtrip((xdrproc_t)xdr_REMOVE3res, &rm_fail, sizeof(rm_fail));
	roundtrip((xdrproc_t)xdr_RMDIR3res, &rmdir_ok, sizeof(rmdir_ok));
	roundtrip((xdrproc_t)xdr_RMDIR3res, &rmdir_fail, sizeof(rmdir_fail));
}

static void test_rename_roundtrips(void **state)
{
	RENAME3args args = { .from = dirop_make("a.vmdk"),
			     .to = dirop_make("b.vmdk") };
	RENAME3res ok = { .status = NFS3_OK };
	RENAME3res fail = { .status = NFS3ERR_XDEV };

	(void)state;
	ok.RENAME3res_u.resok.fromdir_wcc = wcc_make(27);
	ok.RENAME3res_u.resok.todir_wcc = wcc_make(28);
	fail.RENAME3res_u.resfail.fromdir_wcc = wcc_make(29);
	fail.RENAME3res_u.resfail.todir_wcc = wcc_make(30);
	args_roundtrip("nfs3_rename", NFSPROC3_RENAME,
		       (xdrproc_t)xdr_RENAME3args, &args, sizeof(args));
	roundtrip((xdrproc_t)xdr_RENAME3res, &ok, sizeof(ok));
	roundtrip((xdrproc_t)xdr_RENAME3res, &fail, sizeof(fail));
}

static void test_link_roundtrips(void **state)
{
	LINK3args args = { .file = fh_make(9, 44), .link = dirop_make("hard") };
	LINK3res ok = { .status = NFS3_OK };
	LINK3res fail = { .status = NFS3ERR_MLINK };

	(void)state;
	ok.LINK3res_u.resok.file_attributes = attr_follow(31);
	ok.LINK3res_u.resok.linkdir_wcc = wcc_make(32);
	fail.LINK3res_u.resfail.file_attributes = attr_none();
	fail.LINK3res_u.resfail.linkdir_wcc = wcc_make(33);
	args_roundtrip("nfs3_link", NFSPROC3_LINK, (xdrproc_t)xdr_LINK3args,
		       &args, sizeof(args));
	roundtrip((xdrproc_t)xdr_LINK3res, &ok, sizeof(ok));
	roundtrip((xdrproc_t)xdr_LINK3res, &fail, sizeof(fail));
}

static void test_readdir_roundtrips(void **state)
{
	READDIR3args args = { .dir = fh_make(10, 32),
			      .cookie = 7,
			      .count = 4096 };
	entry3 e[3] = {
		{ .fileid = 1, .name = ".", .cookie = 1, .nextentry = &e[1] },
		{ .fileid = 2, .name = "..", .cookie = 2, .nextentry = &e[2] },
		{ .fileid = 3, .name = "disk.vmdk", .cookie = 3 },
	};
	READDIR3res ok = { .status = NFS3_OK };
	READDIR3res fail = { .status = NFS3ERR_BAD_COOKIE };
	READDIR3res *decoded = NULL;
	entry3 *last;

	(void)state;
	memcpy(args.cookieverf, PATTERN, NFS3_COOKIEVERFSIZE);
	ok.READDIR3res_u.resok.dir_attributes = attr_follow(34);
	memcpy(ok.READDIR3res_u.resok.cookieverf, PATTERN + 1,
	       NFS3_COOKIEVERFSIZE);
	ok.READDIR3res_u.resok.reply.entries = &e[0];
	ok.READDIR3res_u.resok.reply.eof = TRUE;
	fail.READDIR3res_u.resfail.dir_attributes = attr_follow(35);
	args_roundtrip("nfs3_readdir", NFSPROC3_READDIR,
		       (xdrproc_t)xdr_READDIR3args, &args, sizeof(args));
	roundtrip((xdrproc_t)xdr_READDIR3res, &fail, sizeof(fail));

	assert_int_equal(xdr_roundtrip((xdrproc_t)xdr_READDIR3res, &ok,
				       sizeof(ok), (void **)&decoded),
			 0);
	last = decoded->READDIR3res_u.resok.reply.entries->nextentry->nextentry;
	assert_string_equal(last->name, "disk.vmdk");
	assert_int_equal(last->cookie, 3);
	assert_null(last->nextentry);
	xdr_roundtrip_release((xdrproc_t)xdr_READDIR3res, decoded);
}

static void test_readdirplus_roundtrips(void **state)
{
	READDIRPLUS3args args = { .dir = fh_make(11, 32),
				  .cookie = 0,
				  .dircount = 1024,
				  .maxcount = 8192 };
	entryplus3 e[2] = {
		{ .fileid = 5,
		  .name = "a",
		  .cookie = 10,
		  .name_attributes = attr_follow(36),
		  .name_handle = pfh_make(),
		  .nextentry = &e[1] },
		{ .fileid = 6,
		  .name = "b",
		  .cookie = 11,
		  .name_attributes = attr_none(),
		  .name_handle = { .handle_follows = FALSE } },
	};
	READDIRPLUS3res ok = { .status = NFS3_OK };
	READDIRPLUS3res empty = { .status = NFS3_OK };
	READDIRPLUS3res fail = { .status = NFS3ERR_TOOSMALL };

	(void)state;
	ok.READDIRPLUS3res_u.resok.dir_attributes = attr_follow(37);
	ok.READDIRPLUS3res_u.resok.reply.entries = &e[0];
	empty.READDIRPLUS3res_u.resok.reply.eof = TRUE;
	fail.READDIRPLUS3res_u.resfail.dir_attributes = attr_none();
	args_roundtrip("nfs3_readdirplus", NFSPROC3_READDIRPLUS,
		       (xdrproc_t)xdr_READDIRPLUS3args, &args, sizeof(args));
	roundtrip((xdrproc_t)xdr_READDIRPLUS3res, &ok, sizeof(ok));
	roundtrip((xdrproc_t)xdr_READDIRPLUS3res, &empty, sizeof(empty));
	roundtrip((xdrproc_t)xdr_READDIRPLUS3res, &fail, sizeof(fail));
}

static void test_fsstat_fsinfo_pathconf_roundtrip(void **state)
{
	FSSTAT3args fsstat = { .fsroot = fh_make(12, 16) };
	FSINFO3args fsinfo = { .fsroot = fh_make(13, 16) };
	PATHCONF3args pathconf = { .object = fh_make(14, 16) };
	FSSTAT3res fsstat_ok = { .status = NFS3_OK };
	FSSTAT3res fsstat_fail = { .status = NFS3ERR_SERVERFAULT };
	FSINFO3res fsinfo_ok = { .status = NFS3_OK };
	FSINFO3res fsinfo_fail = { .status = NFS3ERR_STALE };
	PATHCONF3res pathconf_ok = { .status = NFS3_OK };
	PATHCONF3res pathconf_fail = { .status = NFS3ERR_STALE };
	FSSTAT3resok *fs = &fsstat_ok.FSSTAT3res_u.resok;
	FSINFO3resok *fi = &fsinfo_ok.FSINFO3res_u.resok;
	PATHCONF3resok *pc = &pathconf_ok.PATHCONF3res_u.resok;

	(void)state;
	*fs = (FSSTAT3resok){ .obj_attributes = attr_follow(38),
			      .tbytes = 1ULL << 44,
			      .fbytes = 1ULL << 43,
			      .abytes = 1ULL << 42,
			      .tfiles = 1000000,
			      .ffiles = 999,
			      .afiles = 998,
			      .invarsec = 0 };
	*fi = (FSINFO3resok){ .obj_attributes = attr_follow(39),
			      .rtmax = 1048576,
			      .rtpref = 65536,
			      .rtmult = 4096,
			      .wtmax = 1048576,
			      .wtpref = 65536,
			      .wtmult = 4096,
			      .dtpref = 8192,
			      .maxfilesize = ~0ULL,
			      .time_delta = { .seconds = 0, .nseconds = 1 },
			      .properties = FSF3_LINK | FSF3_SYMLINK |
					    FSF3_HOMOGENEOUS |
					    FSF3_CANSETTIME };
	*pc = (PATHCONF3resok){ .obj_attributes = attr_none(),
				.linkmax = 32000,
				.name_max = NFS3_MAXNAMLEN,
				.no_trunc = TRUE,
				.chown_restricted = TRUE,
				.case_insensitive = FALSE,
				.case_preserving = TRUE };
	fsstat_fail.FSSTAT3res_u.resfail.obj_attributes = attr_none();
	fsinfo_fail.FSINFO3res_u.resfail.obj_attributes = attr_follow(40);
	pathconf_fail.PATHCONF3res_u.resfail.obj_attributes = attr_follow(41);
	args_roundtrip("nfs3_fsstat", NFSPROC3_FSSTAT,
		       (xdrproc_t)xdr_FSSTAT3args, &fsstat, sizeof(fsstat));
	args_roundtrip("nfs3_fsinfo", NFSPROC3_FSINFO,
		       (xdrproc_t)xdr_FSINFO3args, &fsinfo, sizeof(fsinfo));
	args_roundtrip("nfs3_pathconf", NFSPROC3_PATHCONF,
		       (xdrproc_t)xdr_PATHCONF3args, &pathconf,
		       sizeof(pathconf));
	roundtrip((xdrproc_t)xdr_FSSTAT3res, &fsstat_ok, sizeof(fsstat_ok));
	roundtrip((xdrproc_t)xdr_FSSTAT3res, &fsstat_fail, sizeof(fsstat_fail));
	roundtrip((xdrproc_t)xdr_FSINFO3res, &fsinfo_ok, sizeof(fsinfo_ok));
	roundtrip((xdrproc_t)xdr_FSINFO3res, &fsinfo_fail, sizeof(fsinfo_fail));
	roundtrip((xdrproc_t)xdr_PATHCONF3res, &pathconf_ok,
		  sizeof(pathconf_ok));
	roundtrip((xdrproc_t)xdr_PATHCONF3res, &pathconf_fail,
		  sizeof(pathconf_fail));
}

static void test_commit_roundtrips(void **state)
{
	COMMIT3args args = { .file = fh_make(15, 56),
			     .offset = 4096,
			     .count = 0 };
	COMMIT3res ok = { .status = NFS3_OK };
	COMMIT3res fail = { .status = NFS3ERR_IO };

	(void)state;
	ok.COMMIT3res_u.resok.file_wcc = wcc_make(42);
	memcpy(ok.COMMIT3res_u.resok.verf, PATTERN + 40, NFS3_WRITEVERFSIZE);
	fail.COMMIT3res_u.resfail.file_wcc = wcc_make(43);
	args_roundtrip("nfs3_commit", NFSPROC3_COMMIT,
		       (xdrproc_t)xdr_COMMIT3args, &args, sizeof(args));
	roundtrip((xdrproc_t)xdr_COMMIT3res, &ok, sizeof(ok));
	roundtrip((xdrproc_t)xdr_COMMIT3res, &fail, sizeof(fail));
}

/*
 * Decode bounds.  The oversized values cannot be produced by the generated
 * encoders (they check the same bounds), so the wire bytes are built from
 * primitives: a handle, then a length word and that many bytes.
 */
static int lookup_name_decode(u_int name_len)
{
	nfs_fh3 dir = fh_make(0, 8);
	struct xdr_wire w;
	int ret;

	assert_int_equal(xdr_wire_open(&w, 8192), 0);
	assert_true(xdr_nfs_fh3(&w.xdrs, &dir));
	assert_int_equal(xdr_wire_counted(&w, name_len), 0);
	ret = xdr_wire_decode(&w, (xdrproc_t)xdr_LOOKUP3args,
			      sizeof(LOOKUP3args));
	xdr_wire_close(&w);
	return ret;
}

static void test_filename_bound_is_1024(void **state)
{
	(void)state;
	/* 256..1024 decode, so the handler can answer NAMETOOLONG. */
	assert_int_equal(lookup_name_decode(NFS3_MAXNAMLEN + 1), 0);
	assert_int_equal(lookup_name_decode(NFS3_NAMELEN_BOUND), 0);
	assert_int_equal(lookup_name_decode(NFS3_NAMELEN_BOUND + 1), -EBADMSG);
}

static int getattr_fh_decode(u_int fh_len)
{
	struct xdr_wire w;
	int ret;

	assert_int_equal(xdr_wire_open(&w, 8192), 0);
	assert_int_equal(xdr_wire_counted(&w, fh_len), 0);
	ret = xdr_wire_decode(&w, (xdrproc_t)xdr_GETATTR3args,
			      sizeof(GETATTR3args));
	xdr_wire_close(&w);
	return ret;
}

static void test_handle_bound_is_64(void **state)
{
	(void)state;
	assert_int_equal(getattr_fh_decode(NFS3_FHSIZE), 0);
	assert_int_equal(getattr_fh_decode(NFS3_FHSIZE + 1), -EBADMSG);
	assert_int_equal(getattr_fh_decode(4096), -EBADMSG);
}

static int symlink_path_decode(u_int path_len)
{
	SYMLINK3args head = { .where = dirop_make("l"),
			      .symlink = { .symlink_attributes =
						   sattr_make() } };
	struct xdr_wire w;
	int ret;

	assert_int_equal(xdr_wire_open(&w, 16384), 0);
	assert_true(xdr_diropargs3(&w.xdrs, &head.where));
	assert_true(xdr_sattr3(&w.xdrs, &head.symlink.symlink_attributes));
	assert_int_equal(xdr_wire_counted(&w, path_len), 0);
	ret = xdr_wire_decode(&w, (xdrproc_t)xdr_SYMLINK3args,
			      sizeof(SYMLINK3args));
	xdr_wire_close(&w);
	return ret;
}

static void test_path_bound_is_4096(void **state)
{
	(void)state;
	assert_int_equal(symlink_path_decode(NFS3_MAXPATHLEN + 1), 0);
	assert_int_equal(symlink_path_decode(NFS3_PATHLEN_BOUND), 0);
	assert_int_equal(symlink_path_decode(NFS3_PATHLEN_BOUND + 1), -EBADMSG);
}

static int write_data_decode(u_int data_len)
{
	WRITE3args head = { .file = fh_make(0, 16),
			    .count = data_len,
			    .stable = UNSTABLE };
	struct xdr_wire w;
	int ret;

	/* The whole payload is present: only the bound can refuse it. */
	assert_int_equal(xdr_wire_open(&w, NFS3_DATA_BOUND + 4096), 0);
	assert_true(xdr_nfs_fh3(&w.xdrs, &head.file));
	assert_true(xdr_offset3(&w.xdrs, &head.offset));
	assert_true(xdr_count3(&w.xdrs, &head.count));
	assert_true(xdr_stable_how(&w.xdrs, &head.stable));
	assert_int_equal(xdr_wire_counted(&w, data_len), 0);
	ret = xdr_wire_decode(&w, (xdrproc_t)xdr_WRITE3args,
			      sizeof(WRITE3args));
	xdr_wire_close(&w);
	return ret;
}

static void test_write_data_bound_is_1mib(void **state)
{
	(void)state;
	assert_int_equal(write_data_decode(NFS3_DATA_BOUND), 0);
	assert_int_equal(write_data_decode(NFS3_DATA_BOUND + 1), -EBADMSG);
}

static void test_read_reply_above_bound_fails_to_encode(void **state)
{
	READ3res res = { .status = NFS3_OK };
	size_t len = 0, buf_len = 2 * NFS3_DATA_BOUND;
	uint8_t *buf = malloc(buf_len);
	char *data = calloc(1, NFS3_DATA_BOUND + 1);

	(void)state;
	assert_non_null(buf);
	assert_non_null(data);
	res.READ3res_u.resok.file_attributes = attr_none();
	res.READ3res_u.resok.data.data_len = NFS3_DATA_BOUND + 1;
	res.READ3res_u.resok.data.data_val = data;
	assert_int_equal(xdr_roundtrip_encode((xdrproc_t)xdr_READ3res, &res,
					      buf, buf_len, &len),
			 -EMSGSIZE);
	res.READ3res_u.resok.data.data_len = NFS3_DATA_BOUND;
	assert_int_equal(xdr_roundtrip_encode((xdrproc_t)xdr_READ3res, &res,
					      buf, buf_len, &len),
			 0);
	free(data);
	free(buf);
}

static void test_truncated_args_fail_to_decode(void **state)
{
	READ3args args = { .file = fh_make(0, 32), .offset = 1, .count = 2 };
	uint8_t buf[128];
	size_t len = 0, cut;

	(void)state;
	assert_int_equal(xdr_roundtrip_encode((xdrproc_t)xdr_READ3args, &args,
					      buf, sizeof(buf), &len),
			 0);
	for (cut = 0; cut < len; cut += 4) {
		READ3args out;

		memset(&out, 0, sizeof(out));
		assert_int_equal(xdr_roundtrip_decode((xdrproc_t)xdr_READ3args,
						      buf, cut, &out),
				 -EBADMSG);
		xdr_free((xdrproc_t)xdr_READ3args, &out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_getattr_roundtrips),
		cmocka_unit_test(test_setattr_roundtrips),
		cmocka_unit_test(test_lookup_roundtrips),
		cmocka_unit_test(test_access_roundtrips),
		cmocka_unit_test(test_readlink_roundtrips),
		cmocka_unit_test(test_read_roundtrips),
		cmocka_unit_test(test_write_roundtrips),
		cmocka_unit_test(test_create_roundtrips),
		cmocka_unit_test(test_mkdir_roundtrips),
		cmocka_unit_test(test_symlink_roundtrips),
		cmocka_unit_test(test_mknod_roundtrips),
		cmocka_unit_test(test_remove_rmdir_roundtrip),
		cmocka_unit_test(test_rename_roundtrips),
		cmocka_unit_test(test_link_roundtrips),
		cmocka_unit_test(test_readdir_roundtrips),
		cmocka_unit_test(test_readdirplus_roundtrips),
		cmocka_unit_test(test_fsstat_fsinfo_pathconf_roundtrip),
		cmocka_unit_test(test_commit_roundtrips),
		cmocka_unit_test(test_filename_bound_is_1024),
		cmocka_unit_test(test_handle_bound_is_64),
		cmocka_unit_test(test_path_bound_is_4096),
		cmocka_unit_test(test_write_data_bound_is_1mib),
		cmocka_unit_test(test_read_reply_above_bound_fails_to_encode),
		cmocka_unit_test(test_truncated_args_fail_to_decode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
