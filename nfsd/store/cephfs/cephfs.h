/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cephfs: the CephFS backend of a datastore (store/cephfs/): a directory
 * of a CephFS, reached through libcephfs's low-level (ceph_ll_*) calls.
 * Only store/store_open.c and the store's own tests name it: the server
 * reaches a cephfs store through its ops table (store.h) alone.
 */
#ifndef DSNFS_STORE_CEPHFS_H
#define DSNFS_STORE_CEPHFS_H

#include <stddef.h>
#include <stdint.h>

#include "nfsd/store/store.h"

/*
 * Mounts the CephFS directory @ceph_path of the cluster that @ceph_conf
 * names as client @ceph_user (file system @ceph_fs, or the default when
 * NULL or ""), and opens the datastore @name on it.  Its handles are signed
 * with the key <@state_dir>/cephfs.key, made by the first gateway
 * and copied by the operator to the others (cephfs_key.c), so that every
 * gateway signs the same handles; a gateway whose key is not the one the
 * directory's handles are signed with is refused (-ENOKEY).  Blocks up to the
 * client mount timeout (10 s) when the cluster does not answer.  At most
 * @call_cap calls of the store wait in libcephfs at once (the work threads it
 * may hold; 0 is taken as 1); a cluster lost later makes its calls answer
 * -EAGAIN until it is back (cephfs_health.c).  Its MDS session is named
 * after the RADOS log's @gateway when the datastore has one (NULL: none),
 * else after this gateway's host and @state_dir; the session of that name
 * left by a dead run is reset before the mount (cephfs_reclaim.c).  *out
 * returns owned: free with st->ops->close().  Returns 0 or -errno with the
 * datastore and the cluster named in errbuf.
 */
int store_cephfs_open(const char *name, uint32_t export_id,
		      const char *ceph_conf, const char *ceph_path,
		      const char *ceph_user, const char *ceph_fs,
		      const char *state_dir, const char *gateway,
		      unsigned call_cap, struct store **out, char *errbuf,
		      size_t errlen);

/*
 * Reads files of cephfs store @st that are read in order up to
 * @ahead_bytes ahead of their readers, into libcephfs's cache
 * (store/readahead.h); 0: not at all.  A store opens without (the server
 * sets dsnfsd.conf's ceph_readahead_mib, store_open.c).  Before @st
 * serves.  Returns 0 or -errno (threads).
 */
int store_cephfs_readahead(struct store *st, uint64_t ahead_bytes);

/* The RADOS log of a cephfs store (store_open.h's rlog fields). */
struct store_rlog_params {
	const char *ceph_conf;
	const char *ceph_user; /* NULL or "": admin */
	const char *gateway; /* names the log's object with the datastore */
	uint64_t ring_bytes; /* at most 64 MiB */
	uint32_t checkpoint_ms; /* a checkpoint at least this often; 0: none */
	/* A stable write of at least this many bytes goes in place, not
	 * into the log (cephfs_io.c); 0: every one into the log. */
	uint32_t inplace_min_bytes;
};

/*
 * Logs the stable writes of cephfs store @st in RADOS (cephfs_rlog.h):
 * the object "dsnfs.ilog.<datastore>.<gateway>" of the file system's
 * data pool, through a librados client of @p's ceph_conf as its
 * ceph_user.  A log its last owner did not close is fenced (blocklist)
 * and replayed first.  Before @st serves.  Returns 0 or -errno with the
 * reason in @errbuf (@st stays open, without a log).
 */
int store_cephfs_rlog_open(struct store *st, const struct store_rlog_params *p,
			   char *errbuf, size_t errlen);

#endif
