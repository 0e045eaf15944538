/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ratelimit: at most one log line per interval for a message a client can
 * provoke on every call (a refused NFS call, a refused portmapper SET), so
 * that a client cannot flood the log; the lines held back are counted and
 * the next line says how many.  Lock-free, any thread.
 */
#ifndef DSNFS_RATELIMIT_H
#define DSNFS_RATELIMIT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

struct ratelimit {
	_Atomic int64_t next_ns; /* the next line may go from then on */
	_Atomic uint64_t held; /* lines held back since the last one */
};

#define RATELIMIT_INTERVAL_NS 1000000000LL

/* True when a line may go now; *held returns how many were held back
 * before it (and the count restarts).  False: count this one as held. */
static inline bool ratelimit_take(struct ratelimit *rl, uint64_t *held)
{
	struct timespec ts;
	int64_t now, next;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
	next = atomic_load_explicit(&rl->next_ns, memory_order_relaxed);
	if (now < next ||
	    !atomic_compare_exchange_strong(&rl->next_ns, &next,
					    now + RATELIMIT_INTERVAL_NS)) {
		atomic_fetch_add_explicit(&rl->held, 1, memory_order_relaxed);
		return false;
	}
	*held = atomic_exchange(&rl->held, 0);
	return true;
}

/* "" or " (N more not logged)" for a line after @held were held back. */
static inline const char *ratelimit_held_note(uint64_t held, char *buf,
					      size_t len)
{
	if (held == 0) {
		return "";
	}
	snprintf(buf, len, " (%llu more not logged)", (unsigned long long)held);
	return buf;
}

#endif
