// SPDX-License-Identifier: Apache-2.0
/*
 * cephfs_reclaim: the name of a mount's MDS session, and the reclaim of
 * the session its gateway's previous run left.  A gateway that dies (a
 * crash, SIGKILL, a power cut) leaves its session open at the MDS with
 * the capabilities it held, until the MDS times it out (session_timeout,
 * 60 s).  Measured under cephx with a key restricted to the datastore's
 * path: the restarted gateway's ceph_mount waited for it, 62 s (with
 * client.admin it mounted at once).  So every mount names its session
 * (ceph_set_uuid) and, before it mounts, asks the MDS to reset the
 * session of that name, should one be left (ceph_start_reclaim with
 * CEPH_RECLAIM_RESET, as nfs-ganesha's FSAL_CEPH does): the MDS evicts
 * it at once, blocklisting it as its mds_session_blocklist_on_evict says,
 * and its capabilities go with it.
 *
 * The name is the datastore's and, with a RADOS log, its gateway's
 * (intent_log_gateway): a gateway that takes over a dead one's log, under
 * its name, resets the dead one's session too, before its mount (measured
 * under such a key: that mount waited 60 s for the MDS otherwise), then
 * fences and replays.  Without a log, the name is this gateway's run on
 * this machine: the host and the state directory (two gateways of one
 * machine have two); a gateway of another machine never resets it.  Two
 * gateways serving one datastore at once must have two names, as their
 * logs must (dsnfsd.conf(5)).  Within one process a
 * second live store of the same name (a test's two gateways of one
 * datastore) would reset the first's session: it mounts unnamed.  A store
 * being replaced after an eviction does not count: its session is gone.
 */
#include "nfsd/store/cephfs/cephfs_int.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nfsd/base/log.h"

int store__cephfs_session_uuid(const char *host, const char *state_dir,
			       const char *gateway, const char *name, char *out,
			       size_t outlen)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a, 64 bits */
	int n;

	if (gateway && gateway[0]) {
		n = snprintf(out, outlen, "dsnfsd-gw-%s-%s", gateway, name);
	} else {
		for (const char *p = state_dir; *p; p++) {
			h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
		}
		n = snprintf(out, outlen, "dsnfsd-%s-%016llx-%s", host,
			     (unsigned long long)h, name);
	}
	return n < 0 || (size_t)n >= outlen ? -ENAMETOOLONG : 0;
}

/* This process's stores whose sessions have a name, linked through
 * their named_next. */
static pthread_mutex_t cephfs_named_lock = PTHREAD_MUTEX_INITIALIZER;
static struct store_cephfs *cephfs_named;

/* Adds @sc, named @sc->session, unless a live store has that name: true
 * when added. */
static bool cephfs_name_take(struct store_cephfs *sc)
{
	bool taken = false;

	pthread_mutex_lock(&cephfs_named_lock);
	for (struct store_cephfs *o = cephfs_named; o; o = o->named_next) {
		if (!strcmp(o->session, sc->session) &&
		    !atomic_load(&o->base.reopen)) {
			taken = true;
			break;
		}
	}
	if (!taken) {
		sc->named_next = cephfs_named;
		cephfs_named = sc;
	}
	pthread_mutex_unlock(&cephfs_named_lock);
	return !taken;
}

void store__cephfs_unname(struct store_cephfs *sc)
{
	pthread_mutex_lock(&cephfs_named_lock);
	for (struct store_cephfs **p = &cephfs_named; *p;
	     p = &(*p)->named_next) {
		if (*p == sc) {
			*p = sc->named_next;
			break;
		}
	}
	pthread_mutex_unlock(&cephfs_named_lock);
	sc->session[0] = '\0';
}

void store__cephfs_reclaim(struct store_cephfs *sc, struct ceph_mount_info *cm,
			   const char *state_dir, const char *gateway)
{
	char host[256] = "", dir[PATH_MAX];
	const char *uuid = sc->session;
	int rc;

	if (!state_dir || !state_dir[0] || !realpath(state_dir, dir) ||
	    gethostname(host, sizeof(host) - 1) != 0 ||
	    store__cephfs_session_uuid(host, dir, gateway, sc->base.name,
				       sc->session, sizeof(sc->session)) != 0) {
		sc->session[0] = '\0';
		return; /* no name: a session like any other */
	}
	if (!cephfs_name_take(sc)) {
		log_debug("cephfs: %s: session %s is another store's of this "
			  "process: this one mounts unnamed",
			  sc->base.name, uuid);
		sc->session[0] = '\0';
		return;
	}
	rc = ceph_start_reclaim(cm, uuid, CEPH_RECLAIM_RESET);
	if (rc == 0) {
		log_info("cephfs: %s: reset the MDS session %s left by a "
			 "previous run of this gateway",
			 sc->base.name, uuid);
	} else if (rc != -ENOENT) {
		log_warn("cephfs: %s: the MDS did not reset the session %s "
			 "of a previous run of this gateway (%s): a session it "
			 "left is timed out by the MDS (session_timeout)",
			 sc->base.name, uuid, strerror(-rc));
	}
	ceph_finish_reclaim(cm);
	ceph_set_uuid(cm, uuid);
}
