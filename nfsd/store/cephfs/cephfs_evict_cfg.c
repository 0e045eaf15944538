// SPDX-License-Identifier: Apache-2.0
/*
 * cephfs_evict_cfg: whether the cluster blocklists a client its MDS
 * evicts.  The gateway learns of an eviction from the -ESHUTDOWN a
 * blocklisted client gets (cephfs_health.c), and mounts anew.  An
 * eviction without a blocklist (`mds_session_blocklist_on_evict = false`)
 * tells the client nothing: measured on Pacific, a COMMIT's ceph_ll_fsync
 * then waited for good (over 400 s), and the datastore stayed down until
 * dsnfsd was restarted (docs/ceph.md, "A cluster down, or lost").  Ceph
 * blocklists by default; the setting is read once at mount from the
 * monitors (`config get mds`, through the backend's librados handle) and
 * a false one said in the log.
 */
#include "nfsd/store/cephfs/cephfs_int.h"

#include <errno.h>
#include <string.h>

#include "nfsd/base/log.h"

void store__cephfs_evict_cfg_check(struct store_cephfs *sc)
{
	const char *cmd[] = { "{\"prefix\": \"config get\", \"who\": \"mds\", "
			      "\"key\": \"mds_session_blocklist_on_evict\"}" };
	char *out = NULL, *status = NULL;
	size_t out_len = 0, status_len = 0;
	int rc;

	if (!sc->rados_ok) {
		return;
	}
	rc = rados_mon_command(sc->rados, cmd, 1, NULL, 0, &out, &out_len,
			       &status, &status_len);
	if (rc) {
		log_debug("cephfs: %s: config get mds "
			  "mds_session_blocklist_on_evict: %s",
			  sc->base.name, strerror(-rc));
	} else if (out_len >= 5 && !strncmp(out, "false", 5)) {
		log_warn("cephfs: %s: cluster %s evicts clients without "
			 "blocklisting them (mds_session_blocklist_on_evict = "
			 "false): an eviction of this gateway would leave the "
			 "datastore's calls waiting until dsnfsd restarts; set "
			 "it true, Ceph's default",
			 sc->base.name, sc->cluster);
	}
	rados_buffer_free(out);
	rados_buffer_free(status);
}
