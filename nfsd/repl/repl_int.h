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
struct repl_src;

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
	/* A datastore served through its store (CephFS, src.h): a source
	 * only; NULL: the local datastore at @root. */
	struct repl_src *src;
	struct repl_client *client; /* NULL: this end never sends */
	bool api; /* made through POST /replications (relfile.h) */
	/* Ends the thread and fails the client's calls at once
	 * (-ECANCELED): the server stops or the relation is deleted. */
	bool cancel;
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
	/* @item and @n change at run time (POST and DELETE /replications,
	 * registry.c): held for writing there, for reading by whatever
	 * walks them or uses an item; taken before the peers' lock and the
	 * service's lock. */
	pthread_rwlock_t list;
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

/* The other end's admin endpoint and datastore, as @c names them ("":
 * not known: this end never sends). */
static inline void repl__other(const struct repl_rel_config *c,
			       const char **url, const char **datastore)
{
	bool src = c->role == REPL_ROLE_SOURCE;

	*url = src ? c->url : c->src_url;
	*datastore = src ? c->dst_datastore : c->src_datastore;
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

/* Opens relation @c (@api: made through the API) as the list's last
 * item (the list held for writing, or the start): its datastore, its
 * peer entry, its client.  On failure the item may be left last in the
 * list, for repl__item_free().  Returns 0 or -errno with the reason. */
int repl__service_add(struct repl_service *s, const struct repl_rel_config *c,
		      bool api, char *errbuf, size_t errlen);

/* Starts @x's thread when this end may send.  Returns 0 or -errno. */
int repl__item_start(struct repl_item *x);

/* Stops @x's thread (a transfer under way ends at its next message),
 * frees its client and @x; its datastore writable again. */
void repl__item_free(struct repl_item *x);

/* Whether relations @a and @b may both be on this server: a datastore
 * that is the destination of one is in no other.  Returns 0 or -EINVAL
 * with the reason. */
int repl__check_pair(const struct repl_rel_config *a,
		     const struct repl_rel_config *b, char *errbuf,
		     size_t errlen);

/* Whether the relations of @cfg may run together on this server.
 * Returns 0 or -errno with the reason. */
int repl__service_check(const struct repl_config *cfg, char *errbuf,
			size_t errlen);

/* Starts the listed relations' threads and the clock.  Returns 0 or
 * -errno with the reason. */
int repl__service_threads(struct repl_service *s, char *errbuf, size_t errlen);

#endif
