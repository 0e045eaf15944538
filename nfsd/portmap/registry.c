// SPDX-License-Identifier: Apache-2.0
/*
 * registry: the mappings of the built-in portmapper (RFC 1833 3: SET,
 * UNSET, GETPORT, DUMP), a fixed array under a mutex: a handful of
 * programs register, every worker loop may ask.
 */
#include "nfsd/portmap/portmap_int.h"

#include <errno.h>
#include <stdlib.h>

#include "nfsd/base/sockaddr.h"

int portmap_registry_new(struct portmap_registry **out)
{
	struct portmap_registry *reg = calloc(1, sizeof(*reg));
	int err;

	if (!reg) {
		return -ENOMEM;
	}
	err = pthread_mutex_init(&reg->lock, NULL);
	if (err) {
		free(reg);
		return -err;
	}
	*out = reg;
	return 0;
}

void portmap_registry_free(struct portmap_registry *reg)
{
	if (!reg) {
		return;
	}
	pthread_mutex_destroy(&reg->lock);
	free(reg);
}

int portmap_registry_set_listen(struct portmap_registry *reg, const char *addr)
{
	socklen_t len;
	int err = sockaddr_parse(addr, 0, &reg->listen, &len);

	reg->listen_set = err == 0;
	return err;
}

/* Index of (@prog, @vers, @prot), or reg->count.  Lock held. */
static size_t portmap_registry_find(const struct portmap_registry *reg,
				    uint32_t prog, uint32_t vers, uint32_t prot)
{
	size_t i;

	for (i = 0; i < reg->count; i++) {
		const pmap2_mapping *m = &reg->maps[i];

		if (m->prog == prog && m->vers == vers && m->prot == prot) {
			break;
		}
	}
	return i;
}

int portmap_registry_set(struct portmap_registry *reg, uint32_t prog,
			 uint32_t vers, uint32_t prot, uint32_t port)
{
	int err = 0;

	if ((prot != IPPROTO_TCP && prot != IPPROTO_UDP) || port == 0 ||
	    port > 65535) {
		return -EINVAL;
	}
	pthread_mutex_lock(&reg->lock);
	if (portmap_registry_find(reg, prog, vers, prot) < reg->count) {
		err = -EEXIST;
	} else if (reg->count == PORTMAP_REGISTRY_MAX) {
		err = -ENOSPC;
	} else {
		reg->maps[reg->count++] = (pmap2_mapping){
			.prog = prog, .vers = vers, .prot = prot, .port = port
		};
	}
	pthread_mutex_unlock(&reg->lock);
	return err;
}

int portmap_registry_unset(struct portmap_registry *reg, uint32_t prog,
			   uint32_t vers)
{
	size_t i = 0, removed = 0;

	pthread_mutex_lock(&reg->lock);
	while (i < reg->count) {
		if (reg->maps[i].prog == prog && reg->maps[i].vers == vers) {
			/* Keep registration order: DUMP lists it. */
			reg->count--;
			for (size_t j = i; j < reg->count; j++) {
				reg->maps[j] = reg->maps[j + 1];
			}
			removed++;
		} else {
			i++;
		}
	}
	pthread_mutex_unlock(&reg->lock);
	return removed ? 0 : -ENOENT;
}

uint32_t portmap_registry_getport(struct portmap_registry *reg, uint32_t prog,
				  uint32_t vers, uint32_t prot)
{
	uint32_t port = 0;
	size_t i;

	pthread_mutex_lock(&reg->lock);
	i = portmap_registry_find(reg, prog, vers, prot);
	if (i < reg->count) {
		port = reg->maps[i].port;
	}
	pthread_mutex_unlock(&reg->lock);
	return port;
}

size_t portmap_registry_count(struct portmap_registry *reg)
{
	size_t count;

	pthread_mutex_lock(&reg->lock);
	count = reg->count;
	pthread_mutex_unlock(&reg->lock);
	return count;
}

int portmap__registry_dump(struct portmap_registry *reg, pmap2_list *out)
{
	struct pmap2_node *nodes = NULL;
	size_t i;
	int err = 0;

	pthread_mutex_lock(&reg->lock);
	if (reg->count == 0) {
		goto unlock;
	}
	nodes = calloc(reg->count, sizeof(*nodes));
	if (!nodes) {
		err = -ENOMEM;
		goto unlock;
	}
	for (i = 0; i < reg->count; i++) {
		nodes[i].map = reg->maps[i];
		nodes[i].next = i + 1 < reg->count ? &nodes[i + 1] : NULL;
	}
unlock:
	pthread_mutex_unlock(&reg->lock);
	*out = nodes;
	return err;
}
