/*
 * admit: connection limits, in total and per client address, so that a
 * host opening connections in a loop cannot use up the server's
 * descriptors and memory (each conn costs a struct, watchers and, while a
 * record arrives, its buffer).  Counted at accept on the main loop,
 * uncounted at close on the worker loops, hence one mutex.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "nfsd/base.h"
#include "nfsd/log.h"
#include "nfsd/net/net_int.h"
#include "nfsd/sockaddr.h"

struct net_host_count {
	uint8_t addr[16];
	uint32_t conns;
	struct net_host_count *next;
};

static struct net_host_count **admit_slot(struct net *net,
					  const uint8_t addr[16])
{
	size_t b = (size_t)XXH3_64bits(addr, 16) % ARRAY_SIZE(net->hosts);
	struct net_host_count **pp = &net->hosts[b];

	while (*pp && memcmp((*pp)->addr, addr, 16) != 0)
		pp = &(*pp)->next;
	return pp;
}

bool net__admit_conn(struct net *net, const struct sockaddr *peer)
{
	const struct net_limits *lim = &net->limits;
	struct net_host_count **pp, *h;
	uint8_t addr[16];
	bool ok = false;

	sockaddr_key(peer, addr);
	pthread_mutex_lock(&net->admit_lock);
	pp = admit_slot(net, addr);
	h = *pp;
	if (lim->max_conns && net->nconns >= lim->max_conns)
		goto refuse;
	if (lim->max_conns_per_host && h && h->conns >= lim->max_conns_per_host)
		goto refuse;
	if (!h) {
		h = calloc(1, sizeof(*h));
		if (!h)
			goto refuse;
		memcpy(h->addr, addr, 16);
		*pp = h;
	}
	h->conns++;
	net->nconns++;
	ok = true;
	goto out;
refuse:
	net->refused_conns++;
out:
	pthread_mutex_unlock(&net->admit_lock);
	return ok;
}

void net__release_conn(struct net *net, const struct sockaddr *peer)
{
	struct net_host_count **pp, *h;
	uint8_t addr[16];

	sockaddr_key(peer, addr);
	pthread_mutex_lock(&net->admit_lock);
	pp = admit_slot(net, addr);
	h = *pp;
	if (h) {
		net->nconns--;
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
	pthread_mutex_destroy(&net->admit_lock);
}
