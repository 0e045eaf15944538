/* SPDX-License-Identifier: Apache-2.0 */
/*
 * local: the local-directory backend of a datastore (store/local/).  Only
 * store/store_open.c and the store's own tests name it: the server reaches
 * a local store through its ops table (store.h) alone.
 */
#ifndef DSNFS_STORE_LOCAL_H
#define DSNFS_STORE_LOCAL_H

#include <stddef.h>
#include <stdint.h>

#include "nfsd/store/store.h"

/* A cache bound above this is refused (store_local_cache_resize()). */
#define STORE_FCACHE_MAX_ENTRIES STORE_CACHE_MAX_ENTRIES

/*
 * Opens a local-directory datastore rooted at @path.  @state_dir keeps the
 * server secret that signs handles (created on first use).  *out returns
 * owned: free with st->ops->close().  Errors name the path in errbuf.
 */
int store_local_open(const char *name, const char *path, uint32_t export_id,
		     const char *state_dir, struct store **out, char *errbuf,
		     size_t errlen);

/*
 * Bounds the open-file cache of @st (borrowed; made by store_local_open())
 * to @max_entries resolved files, each holding one or two descriptors (an
 * O_PATH one, and one for I/O once read or written).  The least recently
 * used past the bound are evicted; one still in use keeps its descriptors
 * until its request is done.  Any thread, while @st serves.  Returns 0,
 * -EINVAL (0 or over STORE_FCACHE_MAX_ENTRIES) or -ENOMEM.  It is the
 * store's ops->cache_resize.
 */
int store_local_cache_resize(struct store *st, size_t max_entries);

/*
 * Reads up to @count bytes at @off_bytes from @ref's descriptor (borrowed),
 * looping over short reads until @count or the end of the file; *nread is
 * the count read; a read at or past INT64_MAX reads nothing, one that
 * would pass it stops there (a file cannot be larger).  Returns 0 or
 * -errno.
 */
int store_file_ref_pread(const struct store_file_ref *ref, uint64_t off_bytes,
			 void *buf, uint32_t count, uint32_t *nread);

#endif
