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
 * the monitor has the MDS of rank 0 asked for its sessions (`session ls`:
 * rank 0 holds the root, which every mount looked up) by a thread and a
 * client of their own (struct cephfs_ask, below), and goes on meanwhile.
 * Two answers in a row, STORE_CEPHFS_UNLISTED_MS apart, without this
 * mount's session, from an MDS up:active: the MDS evicted it, and the
 * gateway blocklists its own mount, as Ceph would have.  Its waiting calls then
 * fail with -ESHUTDOWN (measured: the COMMIT answered 0.4 s after the
 * blocklist) and the eviction path takes over: a new mount and a new write
 * verifier, so clients send their UNSTABLE writes again.  The blocklist comes
 * first because the old mount's cache could otherwise still write to the OSDs
 * behind the new one.  A hung MDS answers nothing and so is never taken for an
 * eviction (an ask not answered in 30 s is given up, at most four per store),
 * and a session the MDS lists proves the stuck call waits on something else (an
 * OSD).
 *
 * At mount, the setting is read from the monitors (`config get mds`,
 * through the backend's librados handle) and a false one said in the
 * log: recovery then takes seconds more and needs MDS commands.
 */
#include "nfsd/store/cephfs/cephfs_int.h"

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
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

int store__cephfs_mds_active(const char *json, size_t len)
{
	json_t *root = json_loadb(json, len, 0, NULL);
	const char *state = json_string_value(json_object_get(root, "state"));
	json_t *rank = json_object_get(root, "whoami");
	int rc = -EINVAL;

	if (state && json_is_integer(rank)) {
		rc = !strcmp(state, "up:active") &&
		     json_integer_value(rank) == 0;
	}
	json_decref(root);
	return rc;
}

/* One ask of the MDS, on a thread of its own with a client of its own:
 * made from the datastore's ceph.conf and user, started (ceph_init) but
 * never mounted, released after.  Not the datastore's mount: asked
 * through it while the whole cluster restarted, that mount missed its
 * reconnect to the new MDS, which waited out mds_reconnect_timeout and
 * evicted it (t2105 found it).  Not on the monitor thread: a command sent
 * to an MDS that died before the fsmap said so waits for good in a client
 * that follows no mdsmap (t2105 found that too: the datastore never came
 * back).  The monitor and the thread each hold a reference; the last one
 * frees it, so a store may close, and let go of an ask, while it waits. */
struct cephfs_ask {
	_Atomic int refs;
	_Atomic bool done;
	int rc; /* session_listed's answer, once done */
	uint64_t started_ns;
	uint64_t session; /* the mount's, looked for */
	char conf[4096];
	char user[128];
};

static void cephfs_ask_put(struct cephfs_ask *a)
{
	if (atomic_fetch_sub(&a->refs, 1) == 1) {
		free(a);
	}
}

/* MDS command @json to rank 0 through @cm; its output, to free with
 * ceph_buffer_free, in @out. */
static int cephfs_ask_rank0(struct ceph_mount_info *cm, const char *json,
			    char **out, size_t *out_len)
{
	const char *cmd[] = { json };
	char *outs = NULL;
	size_t outs_len = 0;
	int rc;

	*out = NULL;
	*out_len = 0;
	rc = ceph_mds_command(cm, "0", cmd, 1, "", 0, out, out_len, &outs,
			      &outs_len);
	ceph_buffer_free(outs);
	return rc;
}

/* The session's absence counts only from an MDS that is up:active as
 * rank 0 when asked next: one that replays its journal or waits for its
 * clients' reconnects may not list them yet. */
static int cephfs_ask_listed(struct ceph_mount_info *cm, uint64_t session)
{
	char *out = NULL;
	size_t out_len = 0;
	int rc;

	rc = cephfs_ask_rank0(
		cm, "{\"prefix\": \"session ls\", \"format\": \"json\"}", &out,
		&out_len);
	if (!rc) {
		rc = store__cephfs_sessions_have(out, out_len, session);
	}
	ceph_buffer_free(out);
	if (rc != 0) {
		return rc;
	}
	rc = cephfs_ask_rank0(cm,
			      "{\"prefix\": \"status\", \"format\": \"json\"}",
			      &out, &out_len);
	if (!rc) {
		rc = store__cephfs_mds_active(out, out_len);
		rc = rc == 1 ? 0 : rc == 0 ? -EAGAIN : rc;
	}
	ceph_buffer_free(out);
	return rc;
}

static void *cephfs_ask_run(void *arg)
{
	struct cephfs_ask *a = arg;
	struct ceph_mount_info *cm = NULL;
	int rc = ceph_create(&cm, a->user);

	if (!rc) {
		rc = store__cephfs_configure(cm, a->conf);
		if (!rc) {
			rc = ceph_init(cm);
		}
		if (!rc) {
			rc = cephfs_ask_listed(cm, a->session);
		}
		ceph_release(cm);
	}
	a->rc = rc;
	atomic_store(&a->done, true);
	cephfs_ask_put(a);
	return NULL;
}

/* Starts an ask; -errno when no thread could be made. */
static int cephfs_ask_start(struct store_cephfs *sc)
{
	struct cephfs_ask *a = calloc(1, sizeof(*a));
	pthread_attr_t attr;
	pthread_t t;
	int err;

	if (!a) {
		return -ENOMEM;
	}
	atomic_init(&a->refs, 2);
	a->started_ns = store__cephfs_now_ns();
	a->session = ceph_get_instance_id(sc->cm);
	snprintf(a->conf, sizeof(a->conf), "%s", sc->conf_path);
	snprintf(a->user, sizeof(a->user), "%s", sc->user);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&t, &attr, cephfs_ask_run, a);
	pthread_attr_destroy(&attr);
	if (err) {
		free(a);
		return -err;
	}
	sc->ask = a;
	return 0;
}

int store__cephfs_session_listed(struct store_cephfs *sc)
{
	struct cephfs_ask *a = sc->ask;
	int rc;

	if (a && atomic_load(&a->done)) {
		/* Asked before this outage: says nothing of it. */
		bool current = a->started_ns >= sc->health.down_since_ns;

		rc = a->rc;
		sc->ask = NULL;
		cephfs_ask_put(a);
		if (current) {
			return rc;
		}
		a = NULL;
	}
	if (a) {
		if (store__cephfs_now_ns() - a->started_ns <
		    STORE_CEPHFS_ASK_MAX_MS * 1000000ull) {
			return -EINPROGRESS;
		}
		/* Stuck: its thread and client are let go of, bounded. */
		sc->ask = NULL;
		cephfs_ask_put(a);
		sc->asks_abandoned++;
		log_warn("cephfs: %s: the MDS of cluster %s did not answer "
			 "session ls in %d s (%u asks given up)",
			 sc->base.name, sc->cluster,
			 STORE_CEPHFS_ASK_MAX_MS / 1000, sc->asks_abandoned);
	}
	if (sc->asks_abandoned >= STORE_CEPHFS_ASKS_ABANDONED_MAX) {
		return -EDEADLK;
	}
	rc = cephfs_ask_start(sc);
	return rc ? rc : -EINPROGRESS;
}

void store__cephfs_ask_close(struct store_cephfs *sc)
{
	if (sc->ask) {
		cephfs_ask_put(sc->ask);
		sc->ask = NULL;
	}
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
	char bad[STORE_CEPHFS_ADDRS_MAX] = "";
	char *addrs = NULL;
	int rc;

	if (!sc->rados_ok) {
		return -ENOTCONN; /* no librados handle to ask the mon with */
	}
	rc = ceph_getaddrs(sc->cm, &addrs);
	if (!rc && !addrs) {
		rc = -ENOENT; /* nothing to blocklist is no fence */
	}
	if (!rc) {
		rc = store__cephfs_blocklist(sc->rados, addrs,
					     STORE_CEPHFS_FENCE_S, bad,
					     sizeof(bad));
	}
	if (rc) {
		log_debug("cephfs: %s: blocklisting %s: %s", sc->base.name,
			  rc == -ENOENT || !bad[0] ? "this mount" : bad,
			  strerror(-rc));
	}
	free(addrs);
	return rc;
}
