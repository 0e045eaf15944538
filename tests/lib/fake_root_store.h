/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fake_root_store: a datastore that has only a root directory, for tests
 * of code that needs a store's root handle (MOUNT).  It counts object
 * references so a test can assert that every root() was unref'd, and can
 * be told to fail root().  Every other op is NULL.
 */
#ifndef DSNFS_TESTS_FAKE_ROOT_STORE_H
#define DSNFS_TESTS_FAKE_ROOT_STORE_H

#include <stdint.h>

#include "nfsd/store/store.h"

/*
 * Creates a store named @name whose root handle is "ROOT" followed by
 * @export_id (big endian) and @name, at most STORE_FH_MAX bytes.  *out
 * returns owned: free with (*out)->ops->close(*out).  Returns 0 or -ENOMEM.
 */
int fake_root_store_new(const char *name, uint32_t export_id,
			struct store **out);

/* Root objects handed out and not yet unref'd. */
int fake_root_store_refs(const struct store *st);

/* Makes root() return @err (a negative errno; 0 to succeed again). */
void fake_root_store_fail_root(struct store *st, int err);

/* Copies the root handle root() would return into @fh. */
void fake_root_store_fh(const struct store *st, struct store_fh *fh);

#endif
