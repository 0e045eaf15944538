// SPDX-License-Identifier: Apache-2.0
/*
 * cephfs_fence: a gateway that another one fenced.  A datastore with a
 * RADOS intent log is taken over by a gateway started with the same
 * intent_log_gateway name: it blocklists the addresses the log's header
 * records (this gateway's librados and libcephfs clients) before it
 * replays the log and serves (cephfs_rlog_open.c).  A gateway that was
 * cut off (a partition) and comes back finds its calls failing with
 * -ESHUTDOWN (Ceph's EBLOCKLISTED).  It must then stop serving the
 * datastore for good: a new mount would open the same log, find the new
 * owner's header not closed, and fence the gateway that took over.  How
 * it learns so: the log's own writes (cephfs_rlog.c), or the monitor's
 * look at the log's header after an eviction (cephfs_rlog_fence.c).
 */
#include "nfsd/store/cephfs/cephfs_int.h"

#include "nfsd/base/log.h"

void store__cephfs_fenced(struct store_cephfs *sc, const char *why)
{
	/* Unavailable first: a reader that sees fenced sees it down. */
	atomic_store(&sc->base.unavailable, true);
	if (atomic_exchange(&sc->base.fenced, true)) {
		return;
	}
	log_error("cephfs: %s: fenced: another gateway took this datastore "
		  "over and blocklisted this gateway's clients (%s): its "
		  "calls answer NFS3ERR_JUKEBOX and it is not mounted again; "
		  "restart dsnfsd once the datastore is handed back "
		  "(docs/ceph.md, \"A gateway cut off\")",
		  sc->base.name, why);
}
