// SPDX-License-Identifier: Apache-2.0
/*
 * cephfs_statfs: FSSTAT of a cephfs datastore (RFC 1813 3.3.18) through
 * ceph_ll_statfs, which asks the cluster's mon, not the MDS or the OSDs.
 * A hung mon (or a lost quorum) must not take a datastore whose data path
 * answers for down: measured with the mon SIGSTOPped 20 s, one FSSTAT that
 * waited 5 s marked the store down, and 146 writes that would have gone
 * through answered NFS3ERR_JUKEBOX (t2120).  So a statfs is not one of
 * the guard's calls (cephfs_guard.c): its wait counts toward no bound and
 * its error marks nothing down.  One thread per store asks the mon at a
 * time; an FSSTAT that comes meanwhile, or whose ask failed, is answered
 * with the last figures the mon gave (FSSTAT's counts are a snapshot of a
 * moving total anyway), or NFS3ERR_JUKEBOX before the first.  At most one
 * work thread per datastore waits on the mon, however many FSSTATs ESXi
 * sends.
 */
#include "nfsd/store/cephfs/cephfs_int.h"

#include <errno.h>
#include <string.h>
#include <sys/statvfs.h>

#include "nfsd/base/log.h"

void store__cephfs_statfs_init(struct cephfs_statfs *sf)
{
	memset(sf, 0, sizeof(*sf));
	pthread_mutex_init(&sf->lock, NULL);
}

void store__cephfs_statfs_destroy(struct cephfs_statfs *sf)
{
	pthread_mutex_destroy(&sf->lock);
}

/* The last answer, or -EAGAIN when the mon never gave one.  Under lock. */
static int store_cephfs_statfs_last(const struct cephfs_statfs *sf,
				    struct statvfs *sv)
{
	if (!sf->have_last) {
		return -EAGAIN;
	}
	*sv = sf->last;
	return 0;
}

int store__cephfs_fsstat(struct store *st, struct store_fsstat *fs)
{
	struct store_cephfs *sc = store__cephfs(st);
	struct cephfs_statfs *sf = &sc->statfs;
	struct statvfs sv;
	int rc;

	/* Down: as every call, answered without touching the cluster. */
	if (store__cephfs_refused_down(sc)) {
		return -EAGAIN;
	}
	pthread_mutex_lock(&sf->lock);
	if (sf->asking) {
		rc = store_cephfs_statfs_last(sf, &sv);
		pthread_mutex_unlock(&sf->lock);
		goto out;
	}
	sf->asking = true;
	pthread_mutex_unlock(&sf->lock);

	rc = ceph_ll_statfs(sc->cm, sc->root->in, &sv);

	pthread_mutex_lock(&sf->lock);
	sf->asking = false;
	if (rc == 0) {
		sf->last = sv;
		sf->have_last = true;
	} else if (sf->have_last || store__cephfs_conn_err(rc)) {
		/* Whatever the mon said (a connection's error or another):
		 * the last figures stand, as the head says. */
		log_debug("cephfs: %s: statfs: %s; the last figures answer",
			  sc->base.name, strerror(-store__cephfs_err(rc)));
		rc = store_cephfs_statfs_last(sf, &sv);
	} else {
		rc = store__cephfs_err(rc);
	}
	pthread_mutex_unlock(&sf->lock);
out:
	if (rc) {
		return rc;
	}
	store__fsstat_from_statvfs(&sv, fs);
	return 0;
}
