// SPDX-License-Identifier: Apache-2.0
/*
 * xdr_cstring: peeks at the length word, decodes with xdr_string(), and
 * compares the two lengths.
 */
#include "nfsd/proto/xdr_cstring.h"

#include <stdint.h>
#include <string.h>

bool_t xdr_cstring(XDR *xdrs, char **sp, u_int bound)
{
	uint32_t wire_len;
	u_int pos;

	if (xdrs->x_op != XDR_DECODE) {
		return xdr_string(xdrs, sp, bound);
	}
	pos = xdr_getpos(xdrs);
	if (!xdr_uint32_t(xdrs, &wire_len) || !xdr_setpos(xdrs, pos)) {
		return FALSE;
	}
	if (!xdr_string(xdrs, sp, bound)) {
		return FALSE;
	}
	return strlen(*sp) == wire_len;
}
