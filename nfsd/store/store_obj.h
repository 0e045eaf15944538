/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store_obj: the head of a resolved file, the part every backend shares.
 * Callers above store/ hold `struct store_obj *` as an opaque token
 * (store.h); each backend embeds this head in its own object (struct
 * local_obj, struct cephfs_obj) and finds that object from it with
 * container_of(), never by a cast between unrelated types.
 */
#ifndef DSNFS_STORE_OBJ_H
#define DSNFS_STORE_OBJ_H

#include <stdatomic.h>

#include "nfsd/base/base.h"
#include "nfsd/store/store.h"

struct store_obj {
	/* References: the last unref (ops->obj_unref) frees the object. */
	atomic_uint refs;
	/* Its wire handle: set before the object is published, read-only
	 * afterwards. */
	struct store_fh fh;
	/* The top-level directory this object was found to lie outside
	 * (store_in_area(), area.c), or NULL: not asked, or not known. */
	_Atomic(const char *) outside_area;
};

#endif
