// SPDX-License-Identifier: Apache-2.0
/*
 * cephfs_health: whether a cephfs datastore's cluster answers, and how many
 * work threads its calls may hold.  Every op of the store passes through
 * store__cephfs_call_enter() and _leave() (cephfs_guard.c):
 *
 *   - up: a call enters libcephfs if fewer than call_cap are in it;
 *     one more waits for a place while the calls in it move (the oldest
 *     is younger than STORE_CEPHFS_SLOW_MS, or another came back within
 *     it), then answers -EAGAIN (NFS3ERR_JUKEBOX);
 *   - down: set when a call has been in libcephfs for STORE_CEPHFS_BOUND_MS
 *     (libcephfs has no timeout of its own that leaves a file usable: see
 *     docs/ceph.md), or returned a connection error (-ENOTCONN,
 *     -ESHUTDOWN which is Ceph's EBLOCKLISTED, -ETIMEDOUT, -ECONNREFUSED);
 *     every new call answers -EAGAIN at once, touching nothing of ceph;
 *   - up again: the monitor thread, once every call in libcephfs has
 *     returned and a getattr of the root and a statfs (through the mon)
 *     answer;
 *   - evicted (-ESHUTDOWN, Ceph's EBLOCKLISTED): this mount is done for;
 *     store.reopen asks the server for a new store (server/recovery.c),
 *     unless another gateway took the datastore's RADOS log over: then
 *     store.fenced, down for good (cephfs_fence.c);
 *   - evicted without a blocklist: no call fails, they wait; while down
 *     with a call stuck the monitor asks the mount whether its session
 *     with the MDS is still open, and when it is not, blocklists the
 *     mount itself, which makes it the case above, and tells the mount
 *     to drop its stale session, which wakes calls that wait for its
 *     caps (cephfs_evict.c).
 *
 * Calls waiting in libcephfs are never abandoned: when the cluster is
 * back they complete and their replies go out, so nothing acknowledged is
 * lost and nothing is acknowledged that is not done.  A call that comes
 * back from a mount that is done for (evicted, fenced, blocklisted by the
 * gateway) answers -EAGAIN whatever it returned: the client asks again,
 * of the new mount.
 */
#include "nfsd/store/cephfs/cephfs_int.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>

#include "nfsd/base/log.h"

/* An absolute CLOCK_MONOTONIC time @ms from now, for the condvar. */
static struct timespec store_cephfs_deadline(uint64_t ms)
{
	uint64_t t = store__cephfs_now_ns() + ms * 1000000ull;

	return (struct timespec){ .tv_sec = (time_t)(t / 1000000000ull),
				  .tv_nsec = (long)(t % 1000000000ull) };
}

bool store__cephfs_conn_err(int rc)
{
	return rc == -ENOTCONN || rc == -ESHUTDOWN || rc == -ETIMEDOUT ||
	       rc == -ECONNREFUSED;
}

/* The start of the oldest call in libcephfs, or 0 (none); under lock. */
static uint64_t store_cephfs_oldest(const struct store_cephfs_health *h)
{
	uint64_t oldest = 0;

	for (unsigned i = 0; i < h->cap; i++) {
		if (h->start_ns[i] && (!oldest || h->start_ns[i] < oldest)) {
			oldest = h->start_ns[i];
		}
	}
	return oldest;
}

/* Under lock. */
static void store_cephfs_mark_down(struct store_cephfs *sc, const char *why,
				   int err)
{
	struct store_cephfs_health *h = &sc->health;

	if (atomic_load(&sc->base.unavailable)) {
		return;
	}
	atomic_store(&sc->base.unavailable, true);
	h->down_since_ns = store__cephfs_now_ns();
	h->outages++;
	pthread_cond_broadcast(&h->wake);
	pthread_cond_broadcast(&h->room); /* they answer -EAGAIN now */
	/* @err 0: a call has waited the bound. */
	if (err) {
		log_error("cephfs: %s: cluster %s does not answer (%s: %s): "
			  "calls answer NFS3ERR_JUKEBOX until it is back",
			  sc->base.name, sc->cluster, why, strerror(-err));
	} else {
		log_error("cephfs: %s: cluster %s does not answer (%s %d ms): "
			  "calls answer NFS3ERR_JUKEBOX until it is back",
			  sc->base.name, sc->cluster, why,
			  STORE_CEPHFS_BOUND_MS);
	}
}

/* The mount is done for: the server mounts the datastore anew. */
static void store_cephfs_reopen(struct store_cephfs *sc)
{
	if (atomic_exchange(&sc->base.reopen, true)) {
		return;
	}
	log_error("cephfs: %s: cluster %s evicted this gateway's session: "
		  "the datastore is mounted anew",
		  sc->base.name, sc->cluster);
}

/* ESHUTDOWN is Ceph's EBLOCKLISTED: the cluster evicted this client, and
 * every call of this mount fails so from now on (measured: write, fsync,
 * getattr, lookup, mkdir at once; statfs still answers).  With a RADOS
 * log, another gateway may have taken the datastore over (cephfs_fence.c):
 * the monitor asks the log (cephfs_rlog_fence.c) before anything is
 * mounted anew.  Under lock. */
static void store_cephfs_evicted(struct store_cephfs *sc, int rc)
{
	struct store_cephfs_health *h = &sc->health;

	if (rc != -ESHUTDOWN || h->fence_pending ||
	    atomic_load(&sc->base.reopen) || atomic_load(&sc->base.fenced)) {
		return;
	}
	if (sc->rlog) {
		h->fence_pending = true;
		pthread_cond_broadcast(&h->wake);
		return;
	}
	store_cephfs_reopen(sc);
}

/* Down with a call stuck past the bound: has the mount's admin socket
 * asked whether its session is still its own (cephfs_evict.c), at most
 * every STORE_CEPHFS_UNLISTED_MS.  After two answers "stale", the mount
 * blocklists itself: its waiting calls then fail with -ESHUTDOWN, and it
 * is taken for evicted at once, should one of them not come back.  A
 * session still open, or an answer that cannot say, starts the count
 * again.
 * Under lock, dropped for the blocklist (a mon command, bounded by
 * rados_mon_op_timeout). */
static void store_cephfs_unlisted_step(struct store_cephfs *sc, uint64_t now)
{
	struct store_cephfs_health *h = &sc->health;
	uint64_t oldest = store_cephfs_oldest(h);
	int rc;

	if (h->self_fenced || !oldest ||
	    now - oldest < STORE_CEPHFS_BOUND_MS * 1000000ull ||
	    now - h->session_ask_ns < STORE_CEPHFS_UNLISTED_MS * 1000000ull) {
		return;
	}
	/* It never waits: an ask in flight says -EINPROGRESS, and is looked
	 * at again at the next tick. */
	rc = h->session_listed(sc);
	if (rc == -EINPROGRESS) {
		return;
	}
	h->session_ask_ns = store__cephfs_now_ns();
	if (rc != 0) {
		if (rc < 0) {
			log_debug("cephfs: %s: its session's state: %s",
				  sc->base.name, strerror(-rc));
		}
		h->unlisted = 0;
		return;
	}
	if (++h->unlisted < 2) {
		return;
	}
	h->self_fenced = true;
	pthread_mutex_unlock(&h->lock);
	rc = h->blocklist_self(sc);
	pthread_mutex_lock(&h->lock);
	if (rc) {
		log_error("cephfs: %s: cluster %s evicted this gateway's "
			  "session without blocklisting it, and the gateway "
			  "cannot blocklist itself (%s): the datastore stays "
			  "down until dsnfsd restarts",
			  sc->base.name, sc->cluster, strerror(-rc));
		return;
	}
	h->blocklisted = true;
	log_error("cephfs: %s: cluster %s evicted this gateway's session "
		  "without blocklisting it: blocklisted its own client, so "
		  "that the calls that wait fail",
		  sc->base.name, sc->cluster);
	store_cephfs_evicted(sc, -ESHUTDOWN);
}

/* The mount blocklisted itself (above), yet calls still wait in it.
 * libcephfs learns of a blocklist from an OSD map, and an idle mount is
 * sent one map after its MDS dropped it, then none: when that one was
 * another's (measured: after a snapshot was deleted, its removal made the
 * next epoch), the blocklist's never comes, and a COMMIT waiting for the
 * MDS to acknowledge its caps' flush waited for good.  Told to drop its
 * stale session (`kick_stale_sessions`), the mount drops those caps and
 * wakes their waiters: the fsync returns, the getattr that confirms it
 * opens a new session, which the MDS refuses (blocklisted), and the call
 * fails.  Again every STORE_CEPHFS_UNLISTED_MS while one waits.  Under
 * lock; it never waits. */
static void store_cephfs_kick_step(struct store_cephfs *sc, uint64_t now)
{
	struct store_cephfs_health *h = &sc->health;
	int rc;

	if (now - h->kick_ns < STORE_CEPHFS_UNLISTED_MS * 1000000ull) {
		return;
	}
	rc = h->kick_stale(sc);
	if (!h->kicked) {
		h->kicked = true;
		log_info("cephfs: %s: calls still wait in the blocklisted "
			 "mount: telling it to drop its stale MDS session, so "
			 "that they fail",
			 sc->base.name);
	}
	if (rc == -EINPROGRESS) {
		return;
	}
	h->kick_ns = now;
	if (rc) {
		log_debug("cephfs: %s: dropping its stale MDS session: %s",
			  sc->base.name, strerror(-rc));
	}
}

/* The monitor's step while an eviction's cause is not known; under lock,
 * dropped for the look at the log (it never waits). */
static void store_cephfs_fence_step(struct store_cephfs *sc)
{
	struct store_cephfs_health *h = &sc->health;
	int rc;

	pthread_mutex_unlock(&h->lock);
	rc = store__cephfs_rlog_fence_poll(sc->rlog);
	pthread_mutex_lock(&h->lock);
	if (rc == 1) {
		h->fence_pending = false;
		store__cephfs_fenced(sc, "its mount is evicted and its RADOS "
					 "log names another gateway's clients");
	} else if (rc == 0) {
		h->fence_pending = false;
		store_cephfs_reopen(sc);
	} else if (rc != -EINPROGRESS) {
		log_debug("cephfs: %s: reading the RADOS log's header after "
			  "an eviction: %s; again",
			  sc->base.name, strerror(-rc));
	}
}

bool store__cephfs_refused_down(struct store_cephfs *sc)
{
	if (!atomic_load(&sc->base.unavailable)) {
		return false;
	}
	atomic_fetch_add(&sc->health.refused, 1);
	return true;
}

int store__cephfs_call_enter(struct store_cephfs *sc, unsigned *slot)
{
	struct store_cephfs_health *h = &sc->health;
	int rc = -EAGAIN;

	/* Down: answered without the lock or the cluster. */
	if (store__cephfs_refused_down(sc)) {
		return -EAGAIN;
	}
	pthread_mutex_lock(&h->lock);
	for (;;) {
		uint64_t oldest, now;

		if (atomic_load(&sc->base.unavailable)) {
			break;
		}
		if (h->inflight < h->cap) {
			for (unsigned i = 0; i < h->cap; i++) {
				if (!h->start_ns[i]) {
					h->start_ns[i] = store__cephfs_now_ns();
					*slot = i;
					break;
				}
			}
			h->inflight++;
			rc = 0;
			break;
		}
		/* Full: wait while the calls in it move.  The oldest one
		 * stuck for SLOW_MS and none back for as long means the
		 * place will not come soon; an old call beside others that
		 * complete (a COMMIT flushing much, on a busy cluster) is
		 * only load, and JUKEBOX for it would stall the client for
		 * seconds (the Linux client waits 5 s before it retries). */
		oldest = store_cephfs_oldest(h);
		now = store__cephfs_now_ns();
		if (oldest &&
		    now - oldest >= STORE_CEPHFS_SLOW_MS * 1000000ull &&
		    now - h->last_leave_ns >=
			    STORE_CEPHFS_SLOW_MS * 1000000ull) {
			break;
		}
		struct timespec until = store_cephfs_deadline(50);

		h->waiting++;
		pthread_cond_timedwait(&h->room, &h->lock, &until);
		h->waiting--;
	}
	pthread_mutex_unlock(&h->lock);
	if (rc) {
		atomic_fetch_add(&h->refused, 1);
	}
	return rc;
}

int store__cephfs_call_leave(struct store_cephfs *sc, unsigned slot, int rc)
{
	struct store_cephfs_health *h = &sc->health;
	bool done_for;

	pthread_mutex_lock(&h->lock);
	h->start_ns[slot] = 0;
	h->inflight--;
	h->last_leave_ns = store__cephfs_now_ns();
	if (store__cephfs_conn_err(rc)) {
		store_cephfs_mark_down(sc, "a call failed", rc);
	}
	store_cephfs_evicted(sc, rc);
	/* One place: one waiter.  The monitor waits for the last call
	 * back only while down (it probes then). */
	if (h->waiting) {
		pthread_cond_signal(&h->room);
	}
	if (!h->inflight && atomic_load(&sc->base.unavailable)) {
		pthread_cond_broadcast(&h->wake);
	}
	/* What a dead mount answers rests on a session the cluster dropped:
	 * a sync whose caps' flush was never acknowledged returns 0 once
	 * they are dropped (store_cephfs_kick_step), and a 0 must not reach
	 * a client under the write verifier of its lost UNSTABLE writes. */
	done_for = h->blocklisted || atomic_load(&sc->base.reopen) ||
		   atomic_load(&sc->base.fenced);
	pthread_mutex_unlock(&h->lock);
	return done_for || store__cephfs_conn_err(rc) ? -EAGAIN : rc;
}

/* The root's attributes and a statfs (one mon round trip, bounded by
 * rados_mon_op_timeout).  Pacific's ceph_ll_getattr() refuses
 * AT_STATX_FORCE_SYNC (-EINVAL, measured), so the getattr may be answered
 * from the caps: the MDS and the OSDs are vouched for by the calls that
 * waited on them having all come back (the monitor probes only then). */
static int store_cephfs_probe(struct store_cephfs *sc)
{
	struct ceph_statx stx;
	struct statvfs vfs;
	int rc;

	rc = ceph_ll_getattr(sc->cm, sc->root->in, &stx, CEPH_STATX_MODE, 0,
			     sc->root_perms);
	if (!rc) {
		rc = ceph_statfs(sc->cm, "/", &vfs);
	}
	return rc;
}

static void *store_cephfs_monitor(void *arg)
{
	struct store_cephfs *sc = arg;
	struct store_cephfs_health *h = &sc->health;

	pthread_mutex_lock(&h->lock);
	while (!h->stopping) {
		struct timespec until =
			store_cephfs_deadline(STORE_CEPHFS_TICK_MS);
		uint64_t oldest, now;
		int rc;

		pthread_cond_timedwait(&h->wake, &h->lock, &until);
		if (h->stopping) {
			break;
		}
		now = store__cephfs_now_ns();
		if (!atomic_load(&sc->base.unavailable)) {
			oldest = store_cephfs_oldest(h);
			if (oldest && now - oldest >= STORE_CEPHFS_BOUND_MS *
							      1000000ull) {
				store_cephfs_mark_down(sc, "a call waited", 0);
			}
			continue;
		}
		/* Down: calls still in libcephfs hold on to what they were
		 * given; back up only when all of them have come back. */
		if (h->inflight && h->blocklisted) {
			store_cephfs_kick_step(sc, now);
		}
		if (h->fence_pending) {
			store_cephfs_fence_step(sc);
			continue;
		}
		/* Evicted or fenced: this mount never answers again. */
		if (h->inflight && !atomic_load(&sc->base.reopen) &&
		    !atomic_load(&sc->base.fenced)) {
			store_cephfs_unlisted_step(sc, now);
		}
		if (h->inflight || atomic_load(&sc->base.reopen) ||
		    atomic_load(&sc->base.fenced) ||
		    now - h->probe_ns < 1000000000ull) {
			continue;
		}
		h->probe_ns = now;
		pthread_mutex_unlock(&h->lock);
		rc = h->probe(sc);
		if (rc) {
			log_debug("cephfs: %s: probe: %s", sc->base.name,
				  strerror(-rc));
		}
		pthread_mutex_lock(&h->lock);
		store_cephfs_evicted(sc, rc);
		if (rc || h->inflight || h->stopping) {
			continue;
		}
		atomic_store(&sc->base.unavailable, false);
		h->unlisted = 0;
		log_info("cephfs: %s: cluster %s answers again after %" PRIu64
			 " ms: serving",
			 sc->base.name, sc->cluster,
			 (store__cephfs_now_ns() - h->down_since_ns) / 1000000);
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

int store__cephfs_health_start(struct store_cephfs *sc, unsigned cap)
{
	struct store_cephfs_health *h = &sc->health;
	pthread_condattr_t attr;
	int err;

	if (cap < 1) {
		cap = 1;
	}
	if (cap > STORE_CEPHFS_CALLS_MAX) {
		cap = STORE_CEPHFS_CALLS_MAX;
	}
	h->cap = cap;
	if (!h->probe) {
		h->probe = store_cephfs_probe;
	}
	if (!h->session_listed) {
		h->session_listed = store__cephfs_session_listed;
	}
	if (!h->blocklist_self) {
		h->blocklist_self = store__cephfs_blocklist_self;
	}
	if (!h->kick_stale) {
		h->kick_stale = store__cephfs_kick_stale;
	}
	err = pthread_mutex_init(&h->lock, NULL);
	if (err) {
		return -err;
	}
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	err = pthread_cond_init(&h->wake, &attr);
	if (err) {
		pthread_condattr_destroy(&attr);
		goto out_lock;
	}
	err = pthread_cond_init(&h->room, &attr);
	pthread_condattr_destroy(&attr);
	if (err) {
		goto out_wake;
	}
	err = pthread_create(&h->monitor, NULL, store_cephfs_monitor, sc);
	if (err) {
		goto out_room;
	}
	return 0;

out_room:
	pthread_cond_destroy(&h->room);
out_wake:
	pthread_cond_destroy(&h->wake);
out_lock:
	pthread_mutex_destroy(&h->lock);
	return -err;
}

void store__cephfs_health_stop(struct store_cephfs *sc)
{
	struct store_cephfs_health *h = &sc->health;

	pthread_mutex_lock(&h->lock);
	h->stopping = true;
	pthread_cond_broadcast(&h->wake);
	pthread_mutex_unlock(&h->lock);
	pthread_join(h->monitor, NULL);
	if (h->outages || atomic_load(&h->refused)) {
		log_info("cephfs: %s: %" PRIu64 " outages, %" PRIu64
			 " calls answered NFS3ERR_JUKEBOX",
			 sc->base.name, h->outages, atomic_load(&h->refused));
	}
	pthread_cond_destroy(&h->room);
	pthread_cond_destroy(&h->wake);
	pthread_mutex_destroy(&h->lock);
}
