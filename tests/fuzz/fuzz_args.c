/*
 * fuzz_args: libFuzzer target for the argument decoders of NFSv3 (RFC 1813
 * 3) and MOUNT v3 (RFC 1813 5), the code that reads untrusted bytes first.
 * Input: one selector byte (mod 64; 0..21 = NFSv3 procedure, 32..37 =
 * MOUNT procedure, see FUZZ_ARGS_SEL_MOUNT_BASE), then XDR arguments.
 * Each input is decoded and released with xdr_free(); a value that
 * decodes must re-encode to the bytes it was decoded from, modulo the
 * non-canonical inputs XDR accepts (nonzero booleans, padding), so the
 * check is that encoding is a fixed point after one round.
 * Seeds: tests/fuzz/corpus/args/, written by the tests/unit/test_xdr_*
 * tests with DSNFS_FUZZ_SEED_DIR set.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mount3.h"
#include "nfs3_prot.h"
#include "nfsd/proto/xdr_empty.h"
#include "tests/lib/xdr_roundtrip.h"

struct fuzz_args_decoder {
	xdrproc_t decode;
	size_t size;
};

/* Room for the largest arguments of either program. */
union fuzz_args_storage {
	SETATTR3args setattr;
	LOOKUP3args lookup;
	WRITE3args write;
	CREATE3args create;
	MKDIR3args mkdir;
	SYMLINK3args symlink;
	MKNOD3args mknod;
	RENAME3args rename;
	LINK3args link;
	READDIR3args readdir;
	READDIRPLUS3args readdirplus;
	dirpath path;
};

static const struct fuzz_args_decoder nfs3_decoders[] = {
	[NFSPROC3_NULL] = { (xdrproc_t)xdr_empty, 0 },
	[NFSPROC3_GETATTR] = { (xdrproc_t)xdr_GETATTR3args,
			       sizeof(GETATTR3args) },
	[NFSPROC3_SETATTR] = { (xdrproc_t)xdr_SETATTR3args,
			       sizeof(SETATTR3args) },
	[NFSPROC3_LOOKUP] = { (xdrproc_t)xdr_LOOKUP3args, sizeof(LOOKUP3args) },
	[NFSPROC3_ACCESS] = { (xdrproc_t)xdr_ACCESS3args, sizeof(ACCESS3args) },
	[NFSPROC3_READLINK] = { (xdrproc_t)xdr_READLINK3args,
				sizeof(READLINK3args) },
	[NFSPROC3_READ] = { (xdrproc_t)xdr_READ3args, sizeof(READ3args) },
	[NFSPROC3_WRITE] = { (xdrproc_t)xdr_WRITE3args, sizeof(WRITE3args) },
	[NFSPROC3_CREATE] = { (xdrproc_t)xdr_CREATE3args, sizeof(CREATE3args) },
	[NFSPROC3_MKDIR] = { (xdrproc_t)xdr_MKDIR3args, sizeof(MKDIR3args) },
	[NFSPROC3_SYMLINK] = { (xdrproc_t)xdr_SYMLINK3args,
			       sizeof(SYMLINK3args) },
	[NFSPROC3_MKNOD] = { (xdrproc_t)xdr_MKNOD3args, sizeof(MKNOD3args) },
	[NFSPROC3_REMOVE] = { (xdrproc_t)xdr_REMOVE3args, sizeof(REMOVE3args) },
	[NFSPROC3_RMDIR] = { (xdrproc_t)xdr_RMDIR3args, sizeof(RMDIR3args) },
	[NFSPROC3_RENAME] = { (xdrproc_t)xdr_RENAME3args, sizeof(RENAME3args) },
	[NFSPROC3_LINK] = { (xdrproc_t)xdr_LINK3args, sizeof(LINK3args) },
	[NFSPROC3_READDIR] = { (xdrproc_t)xdr_READDIR3args,
			       sizeof(READDIR3args) },
	[NFSPROC3_READDIRPLUS] = { (xdrproc_t)xdr_READDIRPLUS3args,
				   sizeof(READDIRPLUS3args) },
	[NFSPROC3_FSSTAT] = { (xdrproc_t)xdr_FSSTAT3args, sizeof(FSSTAT3args) },
	[NFSPROC3_FSINFO] = { (xdrproc_t)xdr_FSINFO3args, sizeof(FSINFO3args) },
	[NFSPROC3_PATHCONF] = { (xdrproc_t)xdr_PATHCONF3args,
				sizeof(PATHCONF3args) },
	[NFSPROC3_COMMIT] = { (xdrproc_t)xdr_COMMIT3args, sizeof(COMMIT3args) },
};

static const struct fuzz_args_decoder mount_decoders[] = {
	[MOUNTPROC3_NULL] = { (xdrproc_t)xdr_empty, 0 },
	[MOUNTPROC3_MNT] = { (xdrproc_t)xdr_dirpath, sizeof(dirpath) },
	[MOUNTPROC3_DUMP] = { (xdrproc_t)xdr_empty, 0 },
	[MOUNTPROC3_UMNT] = { (xdrproc_t)xdr_dirpath, sizeof(dirpath) },
	[MOUNTPROC3_UMNTALL] = { (xdrproc_t)xdr_empty, 0 },
	[MOUNTPROC3_EXPORT] = { (xdrproc_t)xdr_empty, 0 },
};

static const struct fuzz_args_decoder *fuzz_args_pick(uint8_t selector)
{
	unsigned sel = selector % 64u;
	size_t n_nfs3 = sizeof(nfs3_decoders) / sizeof(nfs3_decoders[0]);
	size_t n_mount = sizeof(mount_decoders) / sizeof(mount_decoders[0]);

	if (sel < n_nfs3) {
		return &nfs3_decoders[sel];
	}
	if (sel >= FUZZ_ARGS_SEL_MOUNT_BASE &&
	    sel - FUZZ_ARGS_SEL_MOUNT_BASE < n_mount) {
		return &mount_decoders[sel - FUZZ_ARGS_SEL_MOUNT_BASE];
	}
	return NULL;
}

/* Decodes @len bytes into zeroed *obj; sets *used.  Returns false when
 * decoding fails.  Either way *obj may hold allocations (xdr_free it). */
static bool fuzz_args_decode(const struct fuzz_args_decoder *d,
			     const uint8_t *buf, size_t len, void *obj,
			     size_t *used)
{
	bool ok;
	XDR xdrs;

	memset(obj, 0, sizeof(union fuzz_args_storage));
	xdrmem_create(&xdrs, (char *)buf, (u_int)len, XDR_DECODE);
	ok = d->decode(&xdrs, obj);
	*used = xdr_getpos(&xdrs);
	xdr_destroy(&xdrs);
	return ok;
}

/* encode(decode(encode(v))) == encode(v), consuming every byte. */
static void fuzz_args_check_fixed_point(const struct fuzz_args_decoder *d,
					void *value, size_t room)
{
	union fuzz_args_storage again;
	uint8_t *enc1 = malloc(room), *enc2 = malloc(room);
	size_t len1, len2, used;

	if (!enc1 || !enc2) {
		goto out;
	}
	if (xdr_roundtrip_encode(d->decode, value, enc1, room, &len1) < 0) {
		abort();
	}
	if (!fuzz_args_decode(d, enc1, len1, &again, &used) || used != len1) {
		abort();
	}
	if (xdr_roundtrip_encode(d->decode, &again, enc2, room, &len2) < 0 ||
	    len1 != len2 || memcmp(enc1, enc2, len1) != 0) {
		abort();
	}
	xdr_free(d->decode, (char *)&again);
out:
	free(enc2);
	free(enc1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct fuzz_args_decoder *d;
	union fuzz_args_storage args;
	size_t used;

	if (size < 1 || size > XDR_ROUNDTRIP_BUF_MAX) {
		return 0;
	}
	d = fuzz_args_pick(data[0]);
	if (!d) {
		return 0;
	}
	if (fuzz_args_decode(d, data + 1, size - 1, &args, &used)) {
		/* A value re-encodes into no more bytes than it came from. */
		fuzz_args_check_fixed_point(d, &args, size);
	}
	xdr_free(d->decode, (char *)&args);
	return 0;
}
