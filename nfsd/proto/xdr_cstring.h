/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xdr_cstring: xdr_string() for names and paths that are used as C
 * strings.  The generated xdr_string() keeps the bytes after a NUL, so
 * "a\0b" would be read as "a" by everything after the decoder.
 */
#ifndef DSNFS_PROTO_XDR_CSTRING_H
#define DSNFS_PROTO_XDR_CSTRING_H

#include <rpc/rpc.h>

/* As xdr_string(xdrs, sp, bound), but decoding fails when the string holds
 * a NUL byte (its wire length is not its C length).  Encode and free are
 * xdr_string()'s own. */
bool_t xdr_cstring(XDR *xdrs, char **sp, u_int bound);

#endif
