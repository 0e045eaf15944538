// SPDX-License-Identifier: Apache-2.0
/*
 * test_nfs3_args: the NFSv3 argument decoders of nfsd/nfs3/args.c.  Every
 * argument that carries a name or a symlink path round-trips as with the
 * generated routine, and fails to decode when the name holds a NUL byte
 * (the generated routine takes "a\0b" for "a").
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nfsd/base/base.h"
#include "nfsd/nfs3/nfs3_int.h"
#include "tests/lib/xdr_roundtrip.h"

/* The name every case carries; its '#' becomes a NUL on the wire. */
#define MARKED_NAME "nul#name"

static char fh_bytes[] = "0123456789abcdef";
static char marked[] = MARKED_NAME;
static char plain[] = "plain";
static char target[] = "target";

static nfs_fh3 fh(void)
{
	nfs_fh3 f = { .data = { .data_len = 16, .data_val = fh_bytes } };

	return f;
}

static diropargs3 dirop(char *name)
{
	diropargs3 d = { .dir = fh(), .name = name };

	return d;
}

static LOOKUP3args lookup_args;
static CREATE3args create_args;
static MKDIR3args mkdir_args;
static SYMLINK3args symlink_args;
static SYMLINK3args symlink_path_args;
static MKNOD3args mknod_args;
static REMOVE3args remove_args;
static RMDIR3args rmdir_args;
static RENAME3args rename_from_args;
static RENAME3args rename_to_args;
static LINK3args link_args;

/* Each case's arguments carry MARKED_NAME once, as a name or a path. */
static int cases_setup(void **state)
{
	(void)state;
	lookup_args.what = dirop(marked);
	create_args.where = dirop(marked);
	create_args.how.mode = GUARDED;
	mkdir_args.where = dirop(marked);
	symlink_args.where = dirop(marked);
	symlink_args.symlink.symlink_data = target;
	symlink_path_args.where = dirop(plain);
	symlink_path_args.symlink.symlink_data = marked;
	mknod_args.where = dirop(marked);
	mknod_args.what.type = NF3FIFO;
	remove_args.object = dirop(marked);
	rmdir_args.object = dirop(marked);
	rename_from_args.from = dirop(marked);
	rename_from_args.to = dirop(plain);
	rename_to_args.from = dirop(plain);
	rename_to_args.to = dirop(marked);
	link_args.file = fh();
	link_args.link = dirop(marked);
	return 0;
}

struct args_case {
	const char *what;
	xdrproc_t strict; /* ours */
	xdrproc_t generated; /* rpcgen's */
	const void *obj;
	size_t size;
};

static const struct args_case cases[] = {
	{ "LOOKUP", (xdrproc_t)nfs3__xdr_LOOKUP3args,
	  (xdrproc_t)xdr_LOOKUP3args, &lookup_args,
	  sizeof(struct nfs3_lookup_args) },
	{ "CREATE", (xdrproc_t)nfs3__xdr_CREATE3args,
	  (xdrproc_t)xdr_CREATE3args, &create_args, sizeof(CREATE3args) },
	{ "MKDIR", (xdrproc_t)nfs3__xdr_MKDIR3args, (xdrproc_t)xdr_MKDIR3args,
	  &mkdir_args, sizeof(MKDIR3args) },
	{ "SYMLINK name", (xdrproc_t)nfs3__xdr_SYMLINK3args,
	  (xdrproc_t)xdr_SYMLINK3args, &symlink_args, sizeof(SYMLINK3args) },
	{ "SYMLINK path", (xdrproc_t)nfs3__xdr_SYMLINK3args,
	  (xdrproc_t)xdr_SYMLINK3args, &symlink_path_args,
	  sizeof(SYMLINK3args) },
	{ "MKNOD", (xdrproc_t)nfs3__xdr_MKNOD3args, (xdrproc_t)xdr_MKNOD3args,
	  &mknod_args, sizeof(MKNOD3args) },
	{ "REMOVE", (xdrproc_t)nfs3__xdr_REMOVE3args,
	  (xdrproc_t)xdr_REMOVE3args, &remove_args, sizeof(REMOVE3args) },
	{ "RMDIR", (xdrproc_t)nfs3__xdr_RMDIR3args, (xdrproc_t)xdr_RMDIR3args,
	  &rmdir_args, sizeof(RMDIR3args) },
	{ "RENAME from", (xdrproc_t)nfs3__xdr_RENAME3args,
	  (xdrproc_t)xdr_RENAME3args, &rename_from_args, sizeof(RENAME3args) },
	{ "RENAME to", (xdrproc_t)nfs3__xdr_RENAME3args,
	  (xdrproc_t)xdr_RENAME3args, &rename_to_args, sizeof(RENAME3args) },
	{ "LINK", (xdrproc_t)nfs3__xdr_LINK3args, (xdrproc_t)xdr_LINK3args,
	  &link_args, sizeof(LINK3args) },
};

/* Encodes @c's arguments into @buf and turns the '#' of the marked name
 * into a NUL byte; returns the encoded length. */
static size_t encode_with_nul(const struct args_case *c, uint8_t *buf,
			      size_t cap)
{
	size_t len = 0;
	uint8_t *mark;

	assert_int_equal(
		xdr_roundtrip_encode(c->generated, c->obj, buf, cap, &len), 0);
	mark = memmem(buf, len, MARKED_NAME, strlen(MARKED_NAME));
	assert_non_null(mark);
	mark[strchr(MARKED_NAME, '#') - MARKED_NAME] = '\0';
	return len;
}

static void test_args_round_trip_as_generated(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		void *decoded = NULL;

		print_message("%s\n", cases[i].what);
		assert_int_equal(xdr_roundtrip(cases[i].strict, cases[i].obj,
					       cases[i].size, &decoded),
				 0);
		xdr_roundtrip_release(cases[i].strict, decoded);
	}
}

static void test_name_with_nul_fails_to_decode(void **state)
{
	uint8_t buf[512];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct args_case *c = &cases[i];
		size_t len = encode_with_nul(c, buf, sizeof(buf));
		void *ours = calloc(1, c->size);
		void *theirs = calloc(1, c->size);

		print_message("%s\n", c->what);
		assert_non_null(ours);
		assert_non_null(theirs);
		assert_int_equal(
			xdr_roundtrip_decode(c->strict, buf, len, ours),
			-EBADMSG);
		/* What the fix is for: rpcgen's routine accepts it. */
		assert_int_equal(
			xdr_roundtrip_decode(c->generated, buf, len, theirs),
			0);
		xdr_free(c->strict, ours);
		xdr_free(c->generated, theirs);
		free(ours);
		free(theirs);
	}
}

static void test_empty_name_still_decodes(void **state)
{
	static char empty[] = "";
	struct nfs3_lookup_args in = { .a = { .what = dirop(empty) } };
	void *decoded = NULL;

	(void)state;
	/* An empty name is the handler's to refuse (NFS3ERR_ACCES). */
	assert_int_equal(xdr_roundtrip((xdrproc_t)nfs3__xdr_LOOKUP3args, &in,
				       sizeof(in), &decoded),
			 0);
	assert_string_equal(((LOOKUP3args *)decoded)->what.name, "");
	xdr_roundtrip_release((xdrproc_t)nfs3__xdr_LOOKUP3args, decoded);
}

/* nfs3__xdr_WRITE3args decodes what xdr_WRITE3args encodes, leaving the
 * data in the buffer it was decoded from, and refuses data over the 1 MiB
 * bound or cut short. */
static void test_write_args_decode_in_place(void **state)
{
	static char data[5000];
	static char fh_bytes[8] = "handle!";
	WRITE3args in = { 0 };
	struct nfs3_write_args w;
	WRITE3args *out = &w.a;
	uint8_t *buf = malloc(2 * 1024 * 1024);
	size_t len;
	XDR xdrs;

	(void)state;
	assert_non_null(buf);
	memset(data, 0x5a, sizeof(data));
	in.file.data.data_len = sizeof(fh_bytes);
	in.file.data.data_val = fh_bytes;
	in.offset = 1ull << 40;
	in.count = sizeof(data);
	in.stable = FILE_SYNC;
	in.data.data_len = sizeof(data);
	in.data.data_val = data;
	assert_int_equal(xdr_roundtrip_encode((xdrproc_t)xdr_WRITE3args, &in,
					      buf, 2 * 1024 * 1024, &len),
			 0);
	memset(&w, 0, sizeof(w));
	xdrmem_create(&xdrs, (char *)buf, (u_int)len, XDR_DECODE);
	assert_true(nfs3__xdr_WRITE3args(&xdrs, &w));
	assert_int_equal(xdr_getpos(&xdrs), len);
	xdr_destroy(&xdrs);
	assert_int_equal(out->offset, in.offset);
	assert_int_equal(out->stable, FILE_SYNC);
	assert_int_equal(out->file.data.data_len, sizeof(fh_bytes));
	assert_ptr_equal(out->file.data.data_val, w.fh);
	assert_memory_equal(w.fh, fh_bytes, sizeof(fh_bytes));
	assert_int_equal(out->data.data_len, sizeof(data));
	/* Not copied: the data is where it was on the wire. */
	assert_ptr_equal(out->data.data_val, buf + len - sizeof(data));
	xdr_free((xdrproc_t)nfs3__xdr_WRITE3args, (char *)&w);
	assert_null(out->data.data_val);
	assert_null(out->file.data.data_val);

	/* Cut short: the data is not all there. */
	memset(&w, 0, sizeof(w));
	xdrmem_create(&xdrs, (char *)buf, (u_int)(len - 8), XDR_DECODE);
	assert_false(nfs3__xdr_WRITE3args(&xdrs, &w));
	xdr_destroy(&xdrs);
	xdr_free((xdrproc_t)nfs3__xdr_WRITE3args, (char *)&w);

	/* A data length over the bound fails before any allocation. */
	size_t len_pos = len - sizeof(data) - 4;
	buf[len_pos] = 0x00;
	buf[len_pos + 1] = 0x10;
	buf[len_pos + 2] = 0x00;
	buf[len_pos + 3] = 0x01;
	memset(&w, 0, sizeof(w));
	xdrmem_create(&xdrs, (char *)buf, (u_int)len, XDR_DECODE);
	assert_false(nfs3__xdr_WRITE3args(&xdrs, &w));
	xdr_destroy(&xdrs);
	assert_null(out->data.data_val);
	xdr_free((xdrproc_t)nfs3__xdr_WRITE3args, (char *)&w);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_args_round_trip_as_generated,
				       cases_setup),
		cmocka_unit_test_setup(test_name_with_nul_fails_to_decode,
				       cases_setup),
		cmocka_unit_test(test_empty_name_still_decodes),
		cmocka_unit_test(test_write_args_decode_in_place),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
