/* SPDX-License-Identifier: Apache-2.0 */
/*
 * portmap_int: what the files of nfsd/portmap/ share: the registry
 * (registry.c) as the procedures (procs.c) see it.
 */
#ifndef DSNFS_PORTMAP_INT_H
#define DSNFS_PORTMAP_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/socket.h>

#include "nfsd/portmap/portmap.h"
#include "pmap.h"

struct portmap_registry {
	pthread_mutex_t lock; /* guards maps and count */
	pmap2_mapping maps[PORTMAP_REGISTRY_MAX];
	size_t count;
	/* The address the RPC listeners are bound to, for the universal
	 * addresses of rpcbind 3 and 4 (rpcb.c); set before the listeners open
	 * (portmap_registry_set_listen()), read-only after. */
	struct sockaddr_storage listen;
	bool listen_set;
};

/*
 * Copies the registry into a DUMP reply.  *out returns owned: one
 * allocation (NULL when empty) released with free(*out).  Returns 0 or
 * -ENOMEM.
 */
int portmap__registry_dump(struct portmap_registry *reg, pmap2_list *out);

#endif
