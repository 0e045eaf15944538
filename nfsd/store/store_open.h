/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store_open: how the server opens, and closes, the store of a datastore
 * without knowing its backend (store/local/ or store/cephfs/), and the
 * intent log of the local backend's stable writes (store/ilog/, its calls
 * in store_ilog.h).  The
 * parameters are the datastore's config keys, copied out of struct config
 * so that store/ does not depend on the config module.
 */
#ifndef DSNFS_STORE_OPEN_H
#define DSNFS_STORE_OPEN_H

#include <stddef.h>
#include <stdint.h>

#include "nfsd/store/store.h"
#include "nfsd/store/store_ilog.h"

enum store_backend {
	STORE_BACKEND_LOCAL = 0, /* a directory of this machine */
	STORE_BACKEND_CEPHFS = 1, /* a CephFS directory, through libcephfs */
};

/* Borrowed by store_open() for the call only. */
struct store_params {
	enum store_backend backend;
	const char *name; /* datastore name */
	uint32_t export_id;
	/* local: keeps handle.secret; cephfs: unused (the secret is kept
	 * in the cluster, shared by every gateway) */
	const char *state_dir;
	const char *path; /* local: the directory served */
	const char *ceph_conf; /* cephfs: a ceph.conf */
	const char *ceph_path; /* cephfs: the CephFS directory served */
	const char *ceph_user; /* cephfs: client id ("admin") */
	const char *ceph_fs; /* cephfs: file system name; "": the default */
	/* cephfs: the most calls waiting in libcephfs at once, i.e. the
	 * work threads a lost cluster can hold (0: 1) */
	unsigned call_cap;
	/* cephfs: how far ahead of files read in order to read (0: not;
	 * store/readahead.h) */
	uint64_t ceph_readahead_bytes;
	/* cephfs: non-NULL logs DATA_SYNC and FILE_SYNC writes in RADOS
	 * (intent_log = rados; store/cephfs/cephfs_rlog.h), in the object of
	 * this gateway name, with a ring of rlog_ring_bytes (at most 64 MiB)
	 * and a checkpoint at least every rlog_checkpoint_ms (0: by size only);
	 * a stable write of rlog_inplace_min_bytes or more goes in place (0:
	 * none does).
	 */
	const char *rlog_gateway;
	uint64_t rlog_ring_bytes;
	uint32_t rlog_checkpoint_ms;
	uint32_t rlog_inplace_min_bytes;
};

/*
 * Opens the store @p describes.  *out returns owned: free with
 * st->ops->close().  Returns 0 or -errno with the datastore's directory
 * (local) or cluster (cephfs) named in errbuf.  May block (a cluster that
 * does not answer: up to the backend's mount timeout).
 */
int store_open(const struct store_params *p, struct store **out, char *errbuf,
	       size_t errlen);

#endif
