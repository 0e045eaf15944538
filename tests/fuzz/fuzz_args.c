// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_args: libFuzzer target for the argument decoders of NFSv3 (RFC 1813
 * 3) and MOUNT v3 (RFC 1813 5), the code that reads untrusted bytes first.
 * Input: one selector byte (mod 64; 0..21 = NFSv3 procedure, 32..37 =
 * MOUNT procedure, 48.. = portmapper v2 procedure, 56.. = rpcbind v4
 * procedure, see FUZZ_ARGS_SEL_MOUNT_BASE / _PMAP_BASE / _RPCB_BASE),
 * then XDR arguments.
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
#include "pmap.h"
#include "rpcb4.h"
#include "nfsd/mount/mount.h"
#include "nfsd/nfs3/nfs3.h"
#include "nfsd/portmap/portmap.h"
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
	pmap2_mapping mapping;
	rpcb4_entry rpcb;
	char nfs3_any[NFS3_ARGS_MAX_BYTES]; /* nfs3/args.c's room included */
};

/*
 * The decoders come from the programs' own procedure tables, so the fuzzer
 * exercises exactly what dispatch runs (nfs3/args.c's name checks too).
 */
static struct rpc_program fuzz_nfs3_prog, fuzz_mount_prog, fuzz_pmap_prog,
	fuzz_rpcb_prog;
static struct portmap_registry *fuzz_pmap_reg;
static struct nfs3_service fuzz_nfs3_svc;
static struct mount_service *fuzz_mount_svc;
static struct export_table fuzz_exports;

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	nfs3_program_init(&fuzz_nfs3_prog, &fuzz_nfs3_svc);
	if (mount_service_new(&fuzz_exports, &fuzz_mount_svc) != 0) {
		abort();
	}
	mount_program_init(&fuzz_mount_prog, fuzz_mount_svc);
	if (portmap_registry_new(&fuzz_pmap_reg) != 0) {
		abort();
	}
	portmap_program_init(&fuzz_pmap_prog, fuzz_pmap_reg);
	portmap_rpcb_program_init(&fuzz_rpcb_prog, fuzz_pmap_reg, 4);
	return 0;
}

static bool fuzz_args_pick(uint8_t selector, struct fuzz_args_decoder *d)
{
	unsigned sel = selector % 64u;
	const struct rpc_proc *proc = NULL;

	if (sel < fuzz_nfs3_prog.nprocs) {
		proc = &fuzz_nfs3_prog.procs[sel];
	} else if (sel >= FUZZ_ARGS_SEL_MOUNT_BASE &&
		   sel - FUZZ_ARGS_SEL_MOUNT_BASE < fuzz_mount_prog.nprocs) {
		proc = &fuzz_mount_prog.procs[sel - FUZZ_ARGS_SEL_MOUNT_BASE];
	} else if (sel >= FUZZ_ARGS_SEL_PMAP_BASE &&
		   sel - FUZZ_ARGS_SEL_PMAP_BASE < fuzz_pmap_prog.nprocs) {
		proc = &fuzz_pmap_prog.procs[sel - FUZZ_ARGS_SEL_PMAP_BASE];
	} else if (sel >= FUZZ_ARGS_SEL_RPCB_BASE &&
		   sel - FUZZ_ARGS_SEL_RPCB_BASE < fuzz_rpcb_prog.nprocs) {
		proc = &fuzz_rpcb_prog.procs[sel - FUZZ_ARGS_SEL_RPCB_BASE];
	}
	if (!proc || !proc->decode ||
	    proc->args_size > sizeof(union fuzz_args_storage)) {
		return false;
	}
	d->decode = proc->decode;
	d->size = proc->args_size;
	return true;
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
	struct fuzz_args_decoder d;
	union fuzz_args_storage args;
	size_t used;

	if (size < 1 || size > XDR_ROUNDTRIP_BUF_MAX) {
		return 0;
	}
	if (!fuzz_args_pick(data[0], &d)) {
		return 0;
	}
	if (fuzz_args_decode(&d, data + 1, size - 1, &args, &used)) {
		/* A value re-encodes into no more bytes than it came from. */
		fuzz_args_check_fixed_point(&d, &args, size);
	}
	xdr_free(d.decode, (char *)&args);
	return 0;
}
