// SPDX-License-Identifier: Apache-2.0
/*
 * xdr_fast: the READ reply in two parts.  xdr_READ3res() would copy up to
 * 1 MiB of file data into the reply buffer (88% of dsnfsd's user-space
 * instructions on 64 KiB reads, docs/bench.md); instead the head is encoded
 * and the data buffer goes to writev as it is.
 */
#include "nfsd/proto/xdr_fast.h"

bool_t xdr_READ3res_head(XDR *xdrs, READ3res *objp)
{
	READ3resok *ok = &objp->READ3res_u.resok;

	if (xdrs->x_op != XDR_ENCODE || objp->status != NFS3_OK) {
		return xdr_READ3res(xdrs, objp);
	}
	return xdr_nfsstat3(xdrs, &objp->status) &&
	       xdr_post_op_attr(xdrs, &ok->file_attributes) &&
	       xdr_count3(xdrs, &ok->count) && xdr_bool(xdrs, &ok->eof) &&
	       xdr_u_int(xdrs, &ok->data.data_len);
}
