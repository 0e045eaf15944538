/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nfsc: NFSv3, MOUNT v3 and portmapper calls from the client side,
 * encoded and decoded with the generated XDR (the .x files of nfsd/proto),
 * over a
 * rpcconn.  Two speeds: nfsc_call_sync() for setup (runs the loop until the
 * reply, allocates freely), and the READ/WRITE helpers for the I/O path,
 * which put WRITE data in place and hand READ data out without a copy.
 */
#ifndef DSLOAD_NFSC_H
#define DSLOAD_NFSC_H

#include <stddef.h>
#include <stdint.h>

#include "mount3.h"
#include "nfs3_prot.h"
#include "perf/dsload/rpcconn.h"
#include "pmap.h"

/* Room for a call header (mark, AUTH_SYS with a 64-byte machine name). */
#define NFSC_HDR_MAX 160
/* WRITE3args before its data: fh (4 + 64), offset, count, stable, len. */
#define NFSC_WRITE_ARGS_MAX (4 + NFS3_FHSIZE + 8 + 4 + 4 + 4)

/* A file handle kept by value. */
struct nfsc_fh {
	uint32_t len;
	uint8_t data[NFS3_FHSIZE];
};

/* A borrowed nfs_fh3 view of @fh (valid while @fh is). */
static inline nfs_fh3 nfsc_fh3(const struct nfsc_fh *fh)
{
	nfs_fh3 v = { .data = { .data_len = fh->len,
				.data_val = (char *)fh->data } };

	return v;
}

/* Copies @src (borrowed) into @dst; -EINVAL when longer than 64 bytes. */
int nfsc_fh_set(struct nfsc_fh *dst, const char *data, uint32_t len);

/*
 * Encodes a call of @proc with @args (borrowed) by @args_fn into
 * call->buf.  Returns the record length (mark included), or -ENOBUFS.
 */
int nfsc_encode(struct rpcconn *c, struct rpcconn_call *call, uint32_t prog,
		uint32_t vers, uint32_t proc, xdrproc_t args_fn,
		const void *args);

/* Decodes a reply body into @res with @res_fn; the caller releases what
 * it allocated with xdr_free(@res_fn, @res).  Returns 0 or -EBADMSG. */
int nfsc_decode(const uint8_t *body, size_t len, xdrproc_t res_fn, void *res);

/*
 * Sends one call and runs @c's loop until its reply, or @timeout_ms.
 * @res (zeroed by the caller) is decoded by @res_fn, which may be NULL
 * for a void result; the caller xdr_free()s it after a 0 return.
 * Returns 0, -ETIMEDOUT, -ENOMEM, or the call's error (rpcconn_done_fn).
 */
int nfsc_call_sync(struct rpcconn *c, uint32_t prog, uint32_t vers,
		   uint32_t proc, xdrproc_t args_fn, const void *args,
		   xdrproc_t res_fn, void *res, int timeout_ms);

/*
 * Encodes WRITE (@count bytes at @off_bytes of @fh, @stable) into
 * call->buf, all but the data: *data points where the caller writes
 * @count bytes (the XDR padding is already zero).  Returns the record
 * length, or -ENOBUFS.
 */
int nfsc_write_encode(struct rpcconn *c, struct rpcconn_call *call,
		      const struct nfsc_fh *fh, uint64_t off_bytes,
		      uint32_t count, enum stable_how stable, uint8_t **data);

/* The parts of a WRITE reply dsload uses. */
struct nfsc_write_res {
	nfsstat3 status;
	uint32_t count;
	enum stable_how committed;
	uint8_t verf[NFS3_WRITEVERFSIZE];
};

/* Returns 0 with *res filled, or -EBADMSG. */
int nfsc_write_decode(const uint8_t *body, size_t len,
		      struct nfsc_write_res *res);

/* Encodes READ; returns the record length or -ENOBUFS. */
int nfsc_read_encode(struct rpcconn *c, struct rpcconn_call *call,
		     const struct nfsc_fh *fh, uint64_t off_bytes,
		     uint32_t count);

/*
 * Decodes a READ reply.  On NFS3_OK, *data borrows the payload inside
 * @body (valid as @body is) and *data_len is its length, checked against
 * what is left of @body.  Returns 0 (see *status) or -EBADMSG.
 */
int nfsc_read_decode(const uint8_t *body, size_t len, nfsstat3 *status,
		     bool *eof, const uint8_t **data, uint32_t *data_len);

/* COMMIT of the whole file; returns the record length or -ENOBUFS. */
int nfsc_commit_encode(struct rpcconn *c, struct rpcconn_call *call,
		       const struct nfsc_fh *fh);

/* Returns 0 with *status and @verf (on NFS3_OK), or -EBADMSG. */
int nfsc_commit_decode(const uint8_t *body, size_t len, nfsstat3 *status,
		       uint8_t verf[NFS3_WRITEVERFSIZE]);

/* A short name for an NFS status ("NFS3ERR_NOSPC"); "NFS3ERR_other"
 * for the rarer ones. */
const char *nfsc_status_name(nfsstat3 status);

#endif
