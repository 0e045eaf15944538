/* SPDX-License-Identifier: Apache-2.0 */
/*
 * repl_int: the service's state (service.c), shared with the reverse
 * (reverse.c) only.
 */
#ifndef DSNFS_REPL_INT_H
#define DSNFS_REPL_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "nfsd/export/export.h"
#include "nfsd/repl/guard.h"
#include "nfsd/repl/peer.h"
#include "nfsd/repl/relation.h"
#include "nfsd/repl/service.h"

struct repl_client;

/* One [replication NAME] of this server, with the means of both ends:
 * its entry in the peers (what a destination takes) and, when the other
 * end's URL is known, a client and a thread (what a source sends). */
struct repl_item {
	struct repl_service *svc;
	struct repl_rel_config cfg;
	struct export *exp; /* its datastore */
	struct repl_guard guard;
	char root[4096];
	char manifest[PATH_MAX + 64];
	char hello[REPL_IDENTITY_MAX + 80];
	struct repl_client *client; /* NULL: this end never sends */
	struct repl_relation rel; /* the thread's while @running */
	pthread_t thread;
	bool thread_ok;
	/* Under the service's lock: */
	bool reversed; /* the roles swapped (reverse.h) */
	bool want; /* a transfer asked for (the clock or by hand) */
	bool running; /* a transfer, break, resync or reverse under way */
	struct repl_sched_state sched;
	int64_t last_attempt_s;
	char error[512];
	char alarm[320];
	struct repl_relation shown; /* @rel as of its last change */
};

struct repl_service {
	pthread_mutex_t lock; /* after the peers' lock, never before */
	pthread_cond_t wake;
	bool stop; /* also cancels the clients' calls */
	struct export_table *exports;
	struct admin_ops *ops;
	char state_dir[PATH_MAX];
	struct repl_peers peers;
	struct repl_item *item[REPL_PEERS_MAX];
	size_t n;
	pthread_t clock;
	bool clock_ok;
};

/* Whether @x's end is the relation's source now. */
static inline bool repl__item_sends(const struct repl_item *x)
{
	return (x->cfg.role == REPL_ROLE_SOURCE) != x->reversed;
}

/* The read-only switch of @x's datastore for NFS clients.  Here, not in
 * service.c, because the reverse (reverse.c) flips it too and service.c
 * calls reverse.c: the calls go one way. */
static inline void repl__item_replica(struct repl_item *x, bool on)
{
	if (on) {
		__atomic_store_n(&x->exp->replica_logged, false,
				 __ATOMIC_RELAXED);
	}
	__atomic_store_n(&x->exp->replica, on, __ATOMIC_RELEASE);
}

#endif
