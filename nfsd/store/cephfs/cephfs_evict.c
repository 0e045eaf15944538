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
 * The mount itself sees it, though: the MDS drops the connection of the
 * session it evicts, and libcephfs marks its session "stale" for good
 * (its option client_reconnect_stale is off).  So every mount has an
 * admin socket in the state directory, and while the datastore is down
 * with a call in libcephfs past the bound, the monitor has a thread ask it
 * `mds_sessions` (struct cephfs_ask, below), and goes on meanwhile.  It
 * needs no cap of the cluster, so a key restricted to the datastore's path
 * will do.  Two answers in a row, STORE_CEPHFS_UNLISTED_MS apart, with the
 * session of rank 0 (which holds the root every mount looked up) stale:
 * the MDS evicted it, and the gateway blocklists its own mount, as Ceph
 * would have (the mon cap `allow command "osd blocklist"`), and the
 * eviction path takes over: a new mount and a new write verifier, so
 * clients send their UNSTABLE writes again.  The blocklist comes first
 * because the old mount's cache could otherwise still write to the OSDs
 * behind the new one.  A session that is open (the MDS hung, an OSD that
 * does not answer) or gone (the MDS failed over) is never taken for an
 * eviction.
 *
 * The calls waiting in the old mount must still come back.  libcephfs
 * learns of its blocklist from an OSD map, and asks for one map, once,
 * when the MDS drops its connection: most often the blocklist's (the
 * COMMIT answered 0.4 s after it).  After a snapshot was deleted, though,
 * the map that queued its removal came first (2.5-3.5 s after the
 * rmsnap, in t2122), the mount asked for none after it, and a COMMIT
 * whose fsync waited for the MDS to acknowledge its caps' flush waited
 * for good (past 120 s; gdb and the client log: Client::wait_sync_caps).
 * So once blocklisted, while calls still wait, the mount is told
 * `kick_stale_sessions` through the same socket: it drops the stale
 * session and its caps, whose waiters wake; the fsync's confirming
 * getattr opens a new session, which the MDS refuses (blocklisted), and
 * the call fails (measured: 0.46 s after the blocklist).  Whatever a call
 * of the dead mount returns, a 0 included, answers -EAGAIN
 * (cephfs_health.c).
 *
 * Until stop 44 the gateway asked the MDS (`session ls`) through a client
 * of its own: that needed mds 'allow *', which `ceph fs authorize` keys
 * do not have.
 *
 * At mount, the setting is read from the monitors (`config get mds`,
 * through the backend's librados handle) and a false one said in the
 * log: recovery then takes seconds more.
 */
#include "nfsd/store/cephfs/cephfs_int.h"

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

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
			 "false): an eviction of this gateway is found only "
			 "once a call waits, then the gateway blocklists "
			 "itself (its key needs the mon cap allow command "
			 "\"osd blocklist\"); set it true, Ceph's default",
			 sc->base.name, sc->cluster);
	}
	rados_buffer_free(out);
	rados_buffer_free(status);
}

int store__cephfs_session_state(const char *json, size_t len, uint64_t id)
{
	json_t *root = json_loadb(json, len, 0, NULL);
	json_t *sessions = json_object_get(root, "sessions");
	json_t *self = json_object_get(root, "id");
	json_t *s;
	size_t i;
	int rc = -ENOENT;

	if (!json_is_array(sessions) || !json_is_integer(self)) {
		json_decref(root);
		return -EINVAL;
	}
	if ((uint64_t)json_integer_value(self) != id) {
		json_decref(root);
		return -ESTALE; /* another client's socket */
	}
	json_array_foreach(sessions, i, s)
	{
		json_t *mds = json_object_get(s, "mds");
		const char *state =
			json_string_value(json_object_get(s, "state"));

		if (json_is_integer(mds) && json_integer_value(mds) == 0) {
			rc = !state ? -EINVAL : strcmp(state, "stale") ? 1 : 0;
			break;
		}
	}
	json_decref(root);
	return rc;
}

/* The commands the monitor sends the mount's admin socket. */
static const char cephfs_cmd_sessions[] = "{\"prefix\": \"mds_sessions\"}";
static const char cephfs_cmd_kick[] = "{\"prefix\": \"kick_stale_sessions\"}";

/* One ask of the mount's own admin socket, on a thread of its own.  The
 * command takes the libcephfs client's lock, which a call may hold a
 * while: the monitor never waits for it.  The monitor and the thread each
 * hold a reference; the last one frees it, so a store may close, and let
 * go of an ask, while it waits. */
struct cephfs_ask {
	_Atomic int refs;
	_Atomic bool done;
	const char *cmd; /* one of the two above */
	int rc; /* the answer (session_listed's for mds_sessions), once done */
	uint64_t started_ns;
	uint64_t session; /* the mount's, looked for (mds_sessions) */
	char asok[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

static void cephfs_ask_put(struct cephfs_ask *a)
{
	if (atomic_fetch_sub(&a->refs, 1) == 1) {
		free(a);
	}
}

static void *cephfs_ask_run(void *arg)
{
	struct cephfs_ask *a = arg;
	char *out = NULL;
	size_t out_len = 0;
	int rc;

	rc = store__cephfs_asok_command(a->asok, a->cmd, &out, &out_len);
	if (!rc && a->cmd == cephfs_cmd_sessions) {
		rc = store__cephfs_session_state(out, out_len, a->session);
	}
	free(out);
	a->rc = rc;
	atomic_store(&a->done, true);
	cephfs_ask_put(a);
	return NULL;
}

/* Starts an ask of @cmd; -errno when no thread could be made. */
static int cephfs_ask_start(struct store_cephfs *sc, const char *cmd)
{
	struct cephfs_ask *a = calloc(1, sizeof(*a));
	pthread_t t;
	int err;

	if (!a) {
		return -ENOMEM;
	}
	atomic_init(&a->refs, 2);
	a->cmd = cmd;
	a->started_ns = store__cephfs_now_ns();
	if (cmd == cephfs_cmd_sessions) {
		a->session = ceph_get_instance_id(sc->cm);
	}
	snprintf(a->asok, sizeof(a->asok), "%s", sc->asok);
	err = pthread_create(&t, NULL, cephfs_ask_run, a);
	if (err) {
		free(a);
		return -err;
	}
	pthread_detach(t); /* its reference frees the ask */
	sc->ask = a;
	return 0;
}

/* @cmd's answer once its ask is done, -EINPROGRESS while one runs (of
 * @cmd or not: one at a time), else -errno; it never waits. */
static int cephfs_ask_step(struct store_cephfs *sc, const char *cmd)
{
	struct cephfs_ask *a = sc->ask;
	int rc;

	if (!sc->asok[0]) {
		return -ENOTSOCK; /* no admin socket to ask */
	}
	if (a && atomic_load(&a->done)) {
		/* Asked before this outage, or something else: says nothing
		 * of it. */
		bool current = a->started_ns >= sc->health.down_since_ns &&
			       a->cmd == cmd;

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
		/* Stuck: its thread is let go of, bounded. */
		sc->asks_abandoned++;
		log_warn("cephfs: %s: the mount's admin socket %s did not "
			 "answer %s in %d s (%u asks given up)",
			 sc->base.name, sc->asok,
			 a->cmd == cephfs_cmd_kick ? "kick_stale_sessions"
						   : "mds_sessions",
			 STORE_CEPHFS_ASK_MAX_MS / 1000, sc->asks_abandoned);
		sc->ask = NULL;
		cephfs_ask_put(a);
	}
	if (sc->asks_abandoned >= STORE_CEPHFS_ASKS_ABANDONED_MAX) {
		return -EDEADLK;
	}
	rc = cephfs_ask_start(sc, cmd);
	return rc ? rc : -EINPROGRESS;
}

int store__cephfs_session_listed(struct store_cephfs *sc)
{
	return cephfs_ask_step(sc, cephfs_cmd_sessions);
}

int store__cephfs_kick_stale(struct store_cephfs *sc)
{
	return cephfs_ask_step(sc, cephfs_cmd_kick);
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
