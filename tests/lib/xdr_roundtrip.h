/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xdr_roundtrip: test helpers for the generated XDR routines.  A value is
 * encoded, decoded into fresh zeroed storage and encoded again; both
 * encodings must be equal byte for byte and the decoder must consume every
 * byte, which proves that decoding lost nothing.  The same encodings seed
 * the fuzz targets (tests/fuzz/corpus/).
 */
#ifndef DSNFS_TESTS_XDR_ROUNDTRIP_H
#define DSNFS_TESTS_XDR_ROUNDTRIP_H

#include <stddef.h>
#include <stdint.h>
#include <rpc/rpc.h>

/*
 * Input of tests/fuzz/fuzz_args.c: one selector byte, then XDR arguments.
 * Selectors 0..21 are NFSv3 procedures, FUZZ_ARGS_SEL_MOUNT_BASE + n is
 * MOUNT v3 procedure n, FUZZ_ARGS_SEL_PMAP_BASE + n portmapper v2
 * procedure n, FUZZ_ARGS_SEL_RPCB_BASE + n rpcbind v4 procedure n.
 */
#define FUZZ_ARGS_SEL_MOUNT_BASE 32
#define FUZZ_ARGS_SEL_PMAP_BASE 48
#define FUZZ_ARGS_SEL_RPCB_BASE 56 /* rpcbind v4 (RFC 1833 2) */

/* Largest encoding the helpers handle. */
#define XDR_ROUNDTRIP_BUF_MAX (2u * 1024 * 1024)

/*
 * Encodes *obj with @proc into @buf (borrowed, @len bytes).  Sets *out_len.
 * Returns 0, or -EMSGSIZE when @proc fails (too small a buffer, or a value
 * above a field's bound).
 */
int xdr_roundtrip_encode(xdrproc_t proc, const void *obj, uint8_t *buf,
			 size_t len, size_t *out_len);

/*
 * Decodes @buf (borrowed, @len bytes) into *obj, which must be zeroed, with
 * @proc.  Returns 0, or -EBADMSG when decoding fails or leaves bytes
 * unconsumed.  On success and on failure *obj may hold allocations: release
 * them with xdr_free(proc, obj).
 */
int xdr_roundtrip_decode(xdrproc_t proc, const uint8_t *buf, size_t len,
			 void *obj);

/*
 * Encode -> decode -> encode of *obj (borrowed), @size bytes of storage.
 * Returns 0 and *decoded (returns owned: release with
 * xdr_roundtrip_release(proc, *decoded)), -EMSGSIZE when encoding fails,
 * -EBADMSG when decoding fails, -EPROTO when the re-encoding differs,
 * -ENOMEM.
 */
int xdr_roundtrip(xdrproc_t proc, const void *obj, size_t size, void **decoded);

/* xdr_free()s and frees what xdr_roundtrip() returned.  Takes @obj. */
void xdr_roundtrip_release(xdrproc_t proc, void *obj);

/*
 * When the environment variable DSNFS_FUZZ_SEED_DIR names a directory,
 * writes <dir>/<name> = the byte @selector followed by the encoding of *obj
 * (the input format of tests/fuzz/fuzz_args.c).  Returns 0 (also when the
 * variable is unset) or a negative errno.
 */
int xdr_roundtrip_seed_write(const char *name, uint8_t selector, xdrproc_t proc,
			     const void *obj);

/*
 * Hand-built wire bytes, for values the generated encoders refuse to
 * produce (a length above a field's bound).  Append with the xdr_*
 * primitives on w->xdrs or with xdr_wire_counted().
 */
struct xdr_wire {
	uint8_t *buf;
	size_t cap;
	XDR xdrs;
};

/* Allocates @cap bytes and starts encoding.  Returns 0 or -ENOMEM. */
int xdr_wire_open(struct xdr_wire *w, size_t cap);

/* Appends a counted opaque/string of @len bytes of 'n'.  Returns 0,
 * -EMSGSIZE (no room) or -ENOMEM. */
int xdr_wire_counted(struct xdr_wire *w, u_int len);

/* Decodes the bytes appended so far with @proc into zeroed storage of
 * @size bytes, then xdr_free()s it.  Returns 0, -EBADMSG or -ENOMEM. */
int xdr_wire_decode(struct xdr_wire *w, xdrproc_t proc, size_t size);

/* Frees what xdr_wire_open() allocated. */
void xdr_wire_close(struct xdr_wire *w);

#endif
