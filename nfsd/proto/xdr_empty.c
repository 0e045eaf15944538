// SPDX-License-Identifier: Apache-2.0
/*
 * xdr_empty: the XDR routine of void (see xdr_empty.h).
 */
#include "nfsd/proto/xdr_empty.h"

bool_t xdr_empty(XDR *xdrs, void *obj)
{
	(void)xdrs;
	(void)obj;
	return TRUE;
}
