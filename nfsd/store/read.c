// SPDX-License-Identifier: Apache-2.0
/*
 * read: the fallbacks of the store calls too long to be inline (store.h):
 * READ's copy, by descriptor or by the backend's read, and the storage-side
 * table of a backend that may have none.
 */
#include "nfsd/store/store.h"

#include <errno.h>
#include <stdio.h>

int store_read_sized(struct store *st, struct store_obj *obj,
		     uint64_t size_bytes, uint64_t off_bytes, void *buf,
		     uint32_t count, uint32_t *nread, bool *eof)
{
	struct store_file_ref ref;
	int err;

	/* The size the caller's attributes say: no stat per READ. */
	count = store_read_sized_max(st, size_bytes, off_bytes, count);
	if (!st->ops->read_ref) {
		if (st->ops->read_sized) {
			return st->ops->read_sized(st, obj, size_bytes,
						   off_bytes, buf, count, nread,
						   eof);
		}
		return st->ops->read(st, obj, off_bytes, buf, count, nread,
				     eof);
	}
	err = st->ops->read_ref(st, obj, &ref);
	if (err) {
		return err;
	}
	*nread = 0;
	err = st->ops->ref_pread(st, &ref, off_bytes, buf, count, nread);
	ref.unref(ref.ref);
	if (err) {
		return err;
	}
	/* A short read met the end of a file that shrank since the stat. */
	*eof = *nread < count || off_bytes + *nread >= size_bytes;
	return 0;
}

int store_tree_open(struct store *st, struct store_tree **out, char *errbuf,
		    size_t errlen)
{
	if (!st->ops->tree_open) {
		snprintf(errbuf, errlen,
			 "volume %s: its backend has no storage-side "
			 "operations",
			 st->name);
		return -EOPNOTSUPP;
	}
	return st->ops->tree_open(st, out, errbuf, errlen);
}
