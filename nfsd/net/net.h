/* SPDX-License-Identifier: Apache-2.0 */
/*
 * net: the event loops.  One main loop (listeners, signals) and N worker
 * loops, one per thread (libev).  An accepted connection is handed to one
 * worker for its whole life, so nothing on the per-connection path takes a
 * lock; work crosses threads only through a queue owned by the receiving
 * loop plus an ev_async (docs/architecture.md, "Threads").
 */
#ifndef DSNFS_NET_H
#define DSNFS_NET_H

#include <stdbool.h>
#include <pthread.h>
#include <stdint.h>

#include "nfsd/rpc/dispatch.h"

struct ev_loop;
struct worker;
struct net_listener;

struct net_limits {
	uint32_t max_record_bytes; /* larger records close the conn */
	uint32_t max_inflight; /* per conn; reading pauses above */
	uint32_t max_output_bytes; /* per conn; reading pauses above */
	uint32_t max_conns; /* in total; past it an idle conn makes room */
	uint32_t max_conns_per_host; /* per client address */
	uint32_t idle_timeout_ms; /* 0: never; nothing in flight */
	uint32_t record_timeout_ms; /* a started record must end by then */
	uint32_t memory_trim_ms; /* after a close, quiet this long: trim */
};

struct net_host_count;
struct traffic;

struct net {
	struct ev_loop *main_loop; /* borrowed: the caller's */
	struct rpc_dispatcher *dispatcher; /* borrowed */
	struct net_limits limits;
	struct worker *workers;
	unsigned nworkers;
	unsigned next_worker; /* where ties in net__place_conn start */
	struct net_listener *listeners;
	bool stopped;

	/* Connection admission (net/conn_limit.c); shared by all loops. */
	pthread_mutex_t admit_lock;
	uint32_t nconns;
	struct net_host_count *hosts[256];
	uint64_t refused_conns;
	uint64_t evict_orders; /* admitted at the limit, a victim chosen */
	/* Live connections per TCP listener and worker, [listener *
	 * nworkers + worker] (net__place_conn); TCP listeners are numbered
	 * in net_listen order, the later ones past NET_SPREAD_MAX share the
	 * last number. */
	uint32_t *spread_conns;
	unsigned nspread;
	double last_refusal_log;

	/* Admission of the TCP connections' calls (net/call_queue.c). */
	struct traffic *traffic; /* borrowed; NULL: no admission */
	struct rpc_admission admission;
};

/*
 * Prepares @net and starts @nworkers worker threads, each running its own
 * loop.  @main_loop and @dispatcher are borrowed and must outlive net.
 * Returns 0 or -errno.
 */
int net_start(struct net *net, struct ev_loop *main_loop,
	      struct rpc_dispatcher *dispatcher,
	      const struct net_limits *limits, unsigned nworkers);

/*
 * Listens on @addr:@port over TCP (and over UDP too when @udp) from the
 * main loop; port 0 picks a free port, returned in *bound_port.  UDP
 * datagrams are answered on the main loop with @udp_dispatcher (borrowed,
 * must outlive net); work it defers comes back to the main loop.
 * Returns 0 or -errno.
 */
int net_listen(struct net *net, const char *addr, int port, bool udp,
	       struct rpc_dispatcher *udp_dispatcher, int *bound_port);

/* TCP connections worker loop @worker holds now, of every listener (the
 * counts that place new ones).  Any thread. */
uint32_t net_loop_conns(struct net *net, unsigned worker);

/*
 * Stops listening, closes every connection, stops and joins the workers.
 * Call from the main thread after the main loop returned; then stop the
 * work pool (which hands back what it still runs), then net_free().
 */
void net_stop(struct net *net);

/* Finishes requests handed back after net_stop (their replies are dropped)
 * and frees the workers. */
void net_free(struct net *net);

/*
 * Charges the calls of every TCP connection to its flows, one per
 * connection x datastore, in @t (borrowed; must outlive net, and every
 * connection), and admits them through @t (traffic.h): a call that must
 * wait is queued in its flow, whose ev_timer on the connection's loop runs
 * it when its turn comes; the loop never sleeps.  Returns the hook to set
 * as the TCP dispatcher's admission (it lives as long as @net).  Call
 * after net_start() and before the first connection.
 */
const struct rpc_admission *net_admission_init(struct net *net,
					       struct traffic *t);

/* Called when deferred work is done; see rpc_transport_ops.defer_done. */
void net_worker_defer_done(struct worker *w, struct rpc_call *call);

#endif
