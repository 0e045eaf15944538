// SPDX-License-Identifier: Apache-2.0
/*
 * conn_limit: connection limits, in total and per client address, so that
 * a host opening connections in a loop cannot use up the server's
 * descriptors and memory (each conn costs a struct, watchers and, while a
 * record arrives, its buffer).  Counted at accept on the main loop,
 * uncounted at close on the worker loops, hence one mutex.
 *
 * Full is not locked out (Linux knfsd svc_check_conn_limits()
 * closes its oldest connection when a new one would pass the limit): at
 * max_conns a connection from an address under its own cap is still
 * admitted, and the server makes room by closing an idle connection of
 * the host that holds the most (net__conn_evict, conn_evict.c, on that host's
 * busiest loop).  A host with the most connections that connects again only
 * trades one of its own idle connections for the new one, so at the
 * limit every host is driven towards an equal share and a handful of
 * addresses cannot keep the others out.  While victims close, the count
 * may pass max_conns by at most NET_EVICT_SLACK; past that (every
 * connection busy) new ones are refused as before.
 *
 * The same counts place connections: each TCP listener's live
 * connections are kept even over the worker loops (net__place_conn).
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "nfsd/base/base.h"
#include "nfsd/base/log.h"
#include "nfsd/base/sockaddr.h"
#include "nfsd/net/net_int.h"

struct net_host_count {
	uint8_t addr[16];
	uint32_t conns;
	struct net_host_count *next;
	uint32_t per_worker[]; /* net->nworkers counters: where they live */
};

static struct net_host_count **admit_slot(struct net *net,
					  const uint8_t addr[16])
{
	size_t b = (size_t)XXH3_64bits(addr, 16) % ARRAY_SIZE(net->hosts);
	struct net_host_count **pp = &net->hosts[b];

	while (*pp && memcmp((*pp)->addr, addr, 16) != 0) {
		pp = &(*pp)->next;
	}
	return pp;
}

/* The host with the most connections, or NULL when none.  A tie goes to
 * @self (the connecting host, may be NULL): a host that holds as many as
 * any other trades its own, so equal shares stay equal.  Scans every
 * host: only a full server calls it. */
static struct net_host_count *admit_busiest_host(struct net *net,
						 struct net_host_count *self)
{
	struct net_host_count *best = self;

	for (size_t i = 0; i < ARRAY_SIZE(net->hosts); i++) {
		for (struct net_host_count *h = net->hosts[i]; h; h = h->next) {
			if (!best || h->conns > best->conns) {
				best = h;
			}
		}
	}
	return best;
}

/* The worker holding the most of @h's connections. */
static unsigned admit_busiest_worker(const struct net *net,
				     const struct net_host_count *h)
{
	unsigned best = 0;

	for (unsigned i = 1; i < net->nworkers; i++) {
		if (h->per_worker[i] > h->per_worker[best]) {
			best = i;
		}
	}
	return best;
}

/* Chooses whose idle connection makes room for one more; false when the
 * slack is used up (victims not closed yet, or none of them idle). */
static bool admit_choose_victim(struct net *net, struct net_host_count *self,
				struct net_evict_order *ev)
{
	const struct net_limits *lim = &net->limits;
	struct net_host_count *big;

	if (net->nconns - lim->max_conns >= NET_EVICT_SLACK) {
		return false;
	}
	big = admit_busiest_host(net, self);
	if (!big) {
		return false;
	}
	memcpy(ev->addr, big->addr, 16);
	ev->worker = admit_busiest_worker(net, big);
	ev->host_conns = big->conns;
	return true;
}

/* The counter of @spread's connections on @worker; admit_lock held. */
static uint32_t *spread_slot(struct net *net, unsigned spread, unsigned worker)
{
	if (spread >= NET_SPREAD_MAX) {
		spread = NET_SPREAD_MAX - 1;
	}
	return &net->spread_conns[spread * net->nworkers + worker];
}

unsigned net__place_conn(struct net *net, unsigned spread)
{
	unsigned n = net->nworkers;
	unsigned best = net->next_worker++ % n;

	pthread_mutex_lock(&net->admit_lock);
	for (unsigned i = 1; i < n; i++) {
		unsigned w = (best + i) % n;

		if (*spread_slot(net, spread, w) <
		    *spread_slot(net, spread, best)) {
			best = w;
		}
	}
	pthread_mutex_unlock(&net->admit_lock);
	return best;
}

uint32_t net__spread_conns(struct net *net, unsigned spread, unsigned worker)
{
	uint32_t n;

	pthread_mutex_lock(&net->admit_lock);
	n = *spread_slot(net, spread, worker);
	pthread_mutex_unlock(&net->admit_lock);
	return n;
}

uint32_t net_loop_conns(struct net *net, unsigned worker)
{
	uint32_t n = 0;

	pthread_mutex_lock(&net->admit_lock);
	for (unsigned i = 0; i < NET_SPREAD_MAX && worker < net->nworkers;
	     i++) {
		n += *spread_slot(net, i, worker);
	}
	pthread_mutex_unlock(&net->admit_lock);
	return n;
}

enum net_admit_verdict net__admit_conn(struct net *net,
				       const struct sockaddr *peer,
				       unsigned worker, unsigned spread,
				       struct net_evict_order *ev)
{
	const struct net_limits *lim = &net->limits;
	enum net_admit_verdict verdict = NET_ADMIT_OK;
	struct net_host_count **pp, *h;
	uint8_t addr[16];

	sockaddr_key(peer, addr);
	pthread_mutex_lock(&net->admit_lock);
	pp = admit_slot(net, addr);
	h = *pp;
	if (lim->max_conns_per_host && h &&
	    h->conns >= lim->max_conns_per_host) {
		goto refuse;
	}
	if (lim->max_conns && net->nconns >= lim->max_conns) {
		if (!admit_choose_victim(net, h, ev)) {
			goto refuse;
		}
		verdict = NET_ADMIT_EVICT;
	}
	if (!h) {
		h = calloc(1, sizeof(*h) +
				      net->nworkers * sizeof(h->per_worker[0]));
		if (!h) {
			goto refuse;
		}
		memcpy(h->addr, addr, 16);
		*pp = h;
	}
	h->conns++;
	if (worker < net->nworkers) {
		h->per_worker[worker]++;
		(*spread_slot(net, spread, worker))++;
	}
	net->nconns++;
	if (verdict == NET_ADMIT_EVICT) {
		net->evict_orders++;
	}
	pthread_mutex_unlock(&net->admit_lock);
	return verdict;
refuse:
	net->refused_conns++;
	pthread_mutex_unlock(&net->admit_lock);
	return NET_ADMIT_REFUSED;
}

void net__release_conn(struct net *net, const struct sockaddr *peer,
		       unsigned worker, unsigned spread)
{
	struct net_host_count **pp, *h;
	uint8_t addr[16];

	sockaddr_key(peer, addr);
	pthread_mutex_lock(&net->admit_lock);
	pp = admit_slot(net, addr);
	h = *pp;
	if (h) {
		net->nconns--;
		if (worker < net->nworkers) {
			uint32_t *on_loop = spread_slot(net, spread, worker);

			if (h->per_worker[worker] > 0) {
				h->per_worker[worker]--;
			}
			if (*on_loop > 0) {
				(*on_loop)--;
			}
		}
		if (--h->conns == 0) {
			*pp = h->next;
			free(h);
		}
	}
	pthread_mutex_unlock(&net->admit_lock);
}

void net__admit_fini(struct net *net)
{
	for (size_t i = 0; i < ARRAY_SIZE(net->hosts); i++) {
		while (net->hosts[i]) {
			struct net_host_count *h = net->hosts[i];
			net->hosts[i] = h->next;
			free(h);
		}
	}
	free(net->spread_conns);
	net->spread_conns = NULL;
	pthread_mutex_destroy(&net->admit_lock);
}
