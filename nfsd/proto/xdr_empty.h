/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xdr_empty: the XDR routine of "void" arguments and results (RFC 4506
 * 4.16) with the signature of the generated routines, for procedure tables
 * whose decode/encode slots must not be NULL.  libtirpc's xdr_void() takes
 * no arguments, so casting it to xdrproc_t is a function-type mismatch.
 */
#ifndef DSNFS_PROTO_XDR_EMPTY_H
#define DSNFS_PROTO_XDR_EMPTY_H

#include <rpc/rpc.h>

/* Encodes and decodes nothing; always TRUE.  @obj is ignored. */
bool_t xdr_empty(XDR *xdrs, void *obj);

#endif
