// SPDX-License-Identifier: Apache-2.0
/*
 * test_cephfs_state: the state directory of the CephFS unit tests
 * (test_store_cephfs*.c).  A CephFS directory's handles are signed with
 * the key of <state_dir>/cephfs.key and the directory remembers that
 * key's id, so every test binary that opens a directory of the suite's
 * cluster (its root, for one) uses the same state directory: one beside
 * the cluster's ceph.conf, made on first use.
 */
#ifndef DSNFS_TEST_CEPHFS_STATE_H
#define DSNFS_TEST_CEPHFS_STATE_H

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* @conf's directory + "/dsnfs-unit-state" in @out; NULL when too long or
 * it cannot be made. */
static inline const char *test_cephfs_state(const char *conf, char *out,
					    size_t len)
{
	const char *slash = strrchr(conf, '/');
	int n = slash ? (int)(slash - conf) : 1;

	if ((size_t)snprintf(out, len, "%.*s/dsnfs-unit-state", n,
			     slash ? conf : ".") >= len) {
		return NULL;
	}
	if (mkdir(out, 0700) != 0 && errno != EEXIST) {
		return NULL;
	}
	return out;
}

#endif
