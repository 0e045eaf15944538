// SPDX-License-Identifier: Apache-2.0
/*
 * cephfs_evict: an eviction of this gateway that the cluster did not
 * blocklist.  Ceph blocklists a client its MDS evicts, by default; the
 * gateway learns of it from the -ESHUTDOWN its calls then get
 * (cephfs_health.c) and mounts the datastore anew.  With
 * `mds_session_blocklist_on_evict = false` the evicted client is told
 * nothing: measured on Pacific, a COMMIT's ceph_ll_fsync waited for good
 * (over 400 s), and before this file the datastore stayed down until
 * dsnfsd restarted.
 *
 * So while the datastore is down with a call in libcephfs past the bound,
 * the monitor asks the MDS of rank 0 for its sessions (`session ls`: rank
 * 0 holds the root, which every mount looked up).  Two answers in a row,
 * STORE_CEPHFS_UNLISTED_MS apart, without this mount's session: the MDS
 * evicted it, and the gateway blocklists its own mount, as Ceph would
 * have.  Its waiting calls then fail with -ESHUTDOWN (measured: the
 * COMMIT answered 0.4 s after the blocklist) and the eviction path takes
 * over: a new mount and a new write verifier, so clients send their
 * UNSTABLE writes again.  The blocklist comes first because the old
 * mount's cache could otherwise still write to the OSDs behind the new
 * one.  A hung MDS answers nothing and so is never taken for an eviction
 * (the ask waits on the monitor thread, as its probe does), and a session
 * the MDS lists proves the stuck call waits on something else (an OSD).
 *
 * At mount, the setting is read from the monitors (`config get mds`,
 * through the backend's librados handle) and a false one said in the
 * log: recovery then takes seconds more and needs MDS commands.
 */
#include "nfsd/store/cephfs/cephfs_int.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
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
			 "false): an eviction of this gateway is found only by "
			 "asking the MDS for its sessions once a call waits "
			 "(its key needs mds 'allow *'), then the gateway "
			 "blocklists itself; set it true, Ceph's default",
			 sc->base.name, sc->cluster);
	}
	rados_buffer_free(out);
	rados_buffer_free(status);
}

int store__cephfs_sessions_have(const char *json, size_t len, uint64_t id)
{
	json_t *root = json_loadb(json, len, 0, NULL);
	json_t *s;
	size_t i;
	int rc = 0;

	if (!json_is_array(root)) {
		json_decref(root);
		return -EINVAL;
	}
	json_array_foreach(root, i, s)
	{
		json_t *sid = json_object_get(s, "id");

		if (json_is_integer(sid) &&
		    (uint64_t)json_integer_value(sid) == id) {
			rc = 1;
			break;
		}
	}
	json_decref(root);
	return rc;
}

int store__cephfs_session_listed(struct store_cephfs *sc)
{
	const char *cmd[] = { "{\"prefix\": \"session ls\", "
			      "\"format\": \"json\"}" };
	char *out = NULL, *outs = NULL;
	size_t out_len = 0, outs_len = 0;
	int rc;

	rc = ceph_mds_command(sc->cm, "0", cmd, 1, "", 0, &out, &out_len, &outs,
			      &outs_len);
	if (!rc) {
		rc = store__cephfs_sessions_have(out, out_len,
						 ceph_get_instance_id(sc->cm));
	}
	ceph_buffer_free(out);
	ceph_buffer_free(outs);
	return rc;
}

int store__cephfs_blocklist(rados_t rados, const char *addrs, unsigned secs,
			    char *bad, size_t badlen)
{
	char copy[STORE_CEPHFS_ADDRS_MAX];
	char *save = NULL;

	snprintf(copy, sizeof(copy), "%s", addrs);
	for (char *a = strtok_r(copy, "[], ", &save); a;
	     a = strtok_r(NULL, "[], ", &save)) {
		int rc = rados_blocklist_add(rados, a, secs);

		if (rc < 0) {
			snprintf(bad, badlen, "%s", a);
			return rc;
		}
	}
	return 0;
}

int store__cephfs_blocklist_self(struct store_cephfs *sc)
{
	char bad[STORE_CEPHFS_ADDRS_MAX];
	char *addrs = NULL;
	int rc;

	if (!sc->rados_ok) {
		return -ENOTCONN; /* no librados handle to ask the mon with */
	}
	rc = ceph_getaddrs(sc->cm, &addrs);
	if (!rc && addrs) {
		rc = store__cephfs_blocklist(sc->rados, addrs,
					     STORE_CEPHFS_FENCE_S, bad,
					     sizeof(bad));
	}
	free(addrs);
	return rc;
}
