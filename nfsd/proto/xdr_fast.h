/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xdr_fast: hand-written replacements for generated XDR routines where the
 * generated one costs too much (docs/architecture.md, "Generated XDR").
 * The .x files do not change.
 */
#ifndef DSNFS_PROTO_XDR_FAST_H
#define DSNFS_PROTO_XDR_FAST_H

#include <stddef.h>
#include <stdint.h>

#include "nfs3_prot.h"

/*
 * Encodes a READ3res up to and including the data's length word: the data
 * bytes and their padding are sent from their own buffer or straight from
 * the file (READ zero copy, request_reply_payload: data_val is NULL and
 * data_len the count).  A failed READ encodes
 * whole.  Encode only.
 */
bool_t xdr_READ3res_head(XDR *xdrs, READ3res *objp);

#endif
