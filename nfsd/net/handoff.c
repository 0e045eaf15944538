// SPDX-License-Identifier: Apache-2.0
/*
 * handoff: how other threads reach a worker's loop (loop.c): each posts
 * to one of the worker's locked queues, then wakes it by its ev_async.
 * The accepting loop posts new connections (and, past max_conns, the
 * idle one to close for them); the blocking-work threads post the calls
 * they finished.  The worker drains the queues in worker_wake_cb.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nfsd/base/log.h"
#include "nfsd/base/sockaddr.h"
#include "nfsd/net/net_int.h"

void net_worker_defer_done(struct worker *w, struct rpc_call *call)
{
	call->next = NULL;
	pthread_mutex_lock(&w->lock);
	if (w->done_tail) {
		w->done_tail->next = call;
	} else {
		w->done_head = call;
	}
	w->done_tail = call;
	pthread_mutex_unlock(&w->lock);
	ev_async_send(w->loop, &w->wake);
}

/* Asks the worker holding the victim @ev names to close it; a failure
 * leaves the count past max_conns, by at most NET_EVICT_SLACK. */
static void net_evict_post(struct net *net, const struct net_evict_order *ev,
			   const struct sockaddr *for_peer)
{
	struct worker *w = &net->workers[ev->worker];
	struct net_evict *e = calloc(1, sizeof(*e));

	if (!e) {
		return;
	}
	memcpy(e->addr, ev->addr, sizeof(e->addr));
	e->host_conns = ev->host_conns;
	sockaddr_format_host(for_peer, e->for_peer, sizeof(e->for_peer));
	pthread_mutex_lock(&w->lock);
	e->next = w->evicts;
	w->evicts = e;
	pthread_mutex_unlock(&w->lock);
	ev_async_send(w->loop, &w->wake);
}

/* Gives an accepted socket to the next worker (takes @fd). */
void net__handoff(struct net *net, int fd, const struct sockaddr *peer,
		  socklen_t peer_len, unsigned spread)
{
	struct worker *w = &net->workers[net__place_conn(net, spread)];
	struct net_evict_order ev;
	enum net_admit_verdict verdict;
	struct net_handoff *h;

	verdict = net__admit_conn(net, peer, w->id, spread, &ev);
	if (verdict == NET_ADMIT_REFUSED) {
		ev_tstamp now = ev_now(net->main_loop);

		close(fd);
		/* One line a second at most: a flood must not flood the log. */
		if (now - net->last_refusal_log >= 1.0) {
			log_warn(
				"net: connection refused: limit of %u per host "
				"reached, or of %u in total with no idle "
				"connection to close (%llu refused so far)",
				net->limits.max_conns_per_host,
				net->limits.max_conns,
				(unsigned long long)net->refused_conns);
			net->last_refusal_log = now;
		}
		return;
	}
	if (verdict == NET_ADMIT_EVICT) {
		net_evict_post(net, &ev, peer);
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		close(fd);
		net__release_conn(net, peer, w->id, spread);
		return;
	}
	h->fd = fd;
	h->spread = spread;
	if (peer_len > sizeof(h->peer)) {
		peer_len = sizeof(h->peer);
	}
	memcpy(&h->peer, peer, peer_len);
	h->peer_len = peer_len;
	pthread_mutex_lock(&w->lock);
	h->next = w->incoming;
	w->incoming = h;
	pthread_mutex_unlock(&w->lock);
	ev_async_send(w->loop, &w->wake);
}
