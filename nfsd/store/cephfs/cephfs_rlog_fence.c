// SPDX-License-Identifier: Apache-2.0
/*
 * cephfs_rlog_fence: whether another gateway took a RADOS log over, asked
 * after an eviction of this gateway's mount (cephfs_health.c's monitor;
 * cephfs_fence.c says what being fenced means).  Two ways to learn it:
 * the log's own client gets -ESHUTDOWN (only a takeover blocklists it: an
 * MDS eviction blocklists the libcephfs client alone), or, once the mount
 * is evicted, a read of the header with that client fails so or finds
 * other owners' addresses.  Otherwise the MDS alone evicted the mount
 * (session_autoclose, an operator's evict) and it is mounted anew as
 * before (server/recovery.c).
 */
#include "nfsd/store/cephfs/cephfs_rlog.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The verdict on the header @rc bytes long read into @hdr. */
static int store_rlog_fence_verdict(struct store_rlog *rl, int rc,
				    const uint8_t *hdr)
{
	struct store_rlog_owner now;
	struct store_ilog_super sb;

	if (rc == -ESHUTDOWN) {
		return 1;
	}
	if (rc < 0) {
		return rc;
	}
	/* Removed, or not a log's any more: not ours either. */
	if (rc < (int)STORE_RLOG_HEADER_BYTES ||
	    store__rlog_header_decode(hdr, &sb, &now)) {
		return 1;
	}
	return strcmp(now.addr[0], rl->owner.addr[0]) != 0 ||
	       strcmp(now.addr[1], rl->owner.addr[1]) != 0;
}

int store__cephfs_rlog_fence_poll(struct store_rlog *rl)
{
	int rc;

	pthread_mutex_lock(&rl->lock);
	rc = rl->err == -ESHUTDOWN;
	pthread_mutex_unlock(&rl->lock);
	if (rc) {
		return 1;
	}
	if (!rl->fence_hdr) {
		rl->fence_hdr = malloc(STORE_RLOG_HEADER_BYTES);
		if (!rl->fence_hdr) {
			return -ENOMEM;
		}
	}
	if (!rl->fence_read) {
		rc = rados_aio_create_completion2(NULL, NULL, &rl->fence_read);
		if (rc < 0) {
			rl->fence_read = NULL;
			return rc;
		}
		rc = rados_aio_read(rl->io, rl->oid, rl->fence_read,
				    (char *)rl->fence_hdr,
				    STORE_RLOG_HEADER_BYTES, 0);
		if (rc < 0) {
			rados_aio_release(rl->fence_read);
			rl->fence_read = NULL;
			return rc;
		}
	}
	if (!rados_aio_is_complete(rl->fence_read)) {
		return -EINPROGRESS;
	}
	rc = rados_aio_get_return_value(rl->fence_read);
	rados_aio_release(rl->fence_read);
	rl->fence_read = NULL;
	rc = store_rlog_fence_verdict(rl, rc, rl->fence_hdr);
	if (rc == 1) {
		/* Nothing more of ours goes to the log, the clean mark at
		 * close included: it is the new owner's. */
		pthread_mutex_lock(&rl->lock);
		if (!rl->err) {
			rl->err = -ESHUTDOWN;
		}
		store__cephfs_rlog_wake_failed(rl);
		pthread_mutex_unlock(&rl->lock);
	}
	return rc;
}

void store__cephfs_rlog_fence_drop(struct store_rlog *rl)
{
	if (rl->fence_read) {
		rados_aio_cancel(rl->io, rl->fence_read);
		rados_aio_wait_for_complete(rl->fence_read);
		rados_aio_release(rl->fence_read);
		rl->fence_read = NULL;
	}
	free(rl->fence_hdr);
	rl->fence_hdr = NULL;
}
