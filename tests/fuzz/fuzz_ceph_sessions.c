// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_ceph_sessions: the parser of libcephfs's `mds_sessions` answer
 * (store__cephfs_session_state, nfsd/store/cephfs/cephfs_evict.c), which
 * the gateway reads from its mount's admin socket to tell an eviction
 * without a blocklist.  Any bytes: the answer is one of the five it
 * documents, read within them (AddressSanitizer), and the same when the
 * bytes are read again.  Seeds: tests/fuzz/corpus/ceph_sessions/.
 */
/* First: it sets _FILE_OFFSET_BITS for libcephfs. */
#include "nfsd/store/cephfs/cephfs_int.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int rc = store__cephfs_session_state((const char *)data, size, 4145);

	if (rc != 1 && rc != 0 && rc != -ENOENT && rc != -ESTALE &&
	    rc != -EINVAL) {
		abort();
	}
	if (store__cephfs_session_state((const char *)data, size, 4145) != rc) {
		abort();
	}
	return 0;
}
