// SPDX-License-Identifier: Apache-2.0
/*
 * export: lookups in the export table, CIDR client checks, and the lock
 * and publication rules that let a SIGHUP change the table while calls
 * run (export.h).
 */
#include "nfsd/export/export.h"
#include "nfsd/base/sockaddr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

static size_t export_path_len(const char *path)
{
	size_t len = strlen(path);

	while (len > 1 && path[len - 1] == '/') {
		len--;
	}
	return len;
}

size_t export_table_count(const struct export_table *tab)
{
	/* Pairs with the release in export_table_publish(): a slot below
	 * the count is complete. */
	return __atomic_load_n(&tab->count, __ATOMIC_ACQUIRE);
}

struct export *export_find_by_path(const struct export_table *tab,
				   const char *path)
{
	size_t len = export_path_len(path);
	size_t count = export_table_count(tab);

	for (size_t i = 0; i < count; i++) {
		struct export *exp = &tab->exports[i];

		if (!export_is_live(exp)) {
			continue;
		}
		if (strlen(exp->path) == len &&
		    memcmp(exp->path, path, len) == 0) {
			return exp;
		}
	}
	return NULL;
}

struct export *export_find_by_prefix(const struct export_table *tab,
				     const char *path, const char **rest)
{
	size_t count = export_table_count(tab);

	for (size_t i = 0; i < count; i++) {
		struct export *exp = &tab->exports[i];
		size_t len = strlen(exp->path);

		if (!export_is_live(exp)) {
			continue;
		}
		if (strncmp(path, exp->path, len) != 0) {
			continue;
		}
		if (path[len] != '\0' && path[len] != '/') {
			continue;
		}
		path += len;
		while (*path == '/') {
			path++;
		}
		*rest = path;
		return exp;
	}
	return NULL;
}

struct export *export_find_by_id(const struct export_table *tab, uint32_t id)
{
	size_t count = export_table_count(tab);

	for (size_t i = 0; i < count; i++) {
		if (tab->exports[i].id == id &&
		    export_is_live(&tab->exports[i])) {
			return &tab->exports[i];
		}
	}
	return NULL;
}

static bool export_prefix_match(const uint8_t *a, const uint8_t *b,
				unsigned prefix_len)
{
	unsigned full = prefix_len / 8, rest = prefix_len % 8;

	if (memcmp(a, b, full) != 0) {
		return false;
	}
	if (rest == 0) {
		return true;
	}
	uint8_t mask = (uint8_t)(0xff << (8 - rest));
	return (a[full] & mask) == (b[full] & mask);
}

/* The address bytes to match rules with: an IPv4 client arriving as
 * ::ffff:a.b.c.d is matched as IPv4. */
static int export_addr_bytes(const struct sockaddr *addr, uint8_t out[16])
{
	uint8_t key[16];

	if (addr->sa_family != AF_INET && addr->sa_family != AF_INET6) {
		return AF_UNSPEC;
	}
	sockaddr_key(addr, key);
	if (IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)key)) {
		memcpy(out, &key[12], 4);
		return AF_INET;
	}
	memcpy(out, key, 16);
	return AF_INET6;
}

enum export_refusal export_client_check(const struct export *exp,
					const struct sockaddr *addr)
{
	uint8_t bytes[16];
	int family;

	/* The address first: a stranger is told about the list, not the
	 * port. */
	if (exp->nclients > 0) {
		bool listed = false;

		family = export_addr_bytes(addr, bytes);
		for (size_t i = 0; i < exp->nclients && !listed; i++) {
			const struct export_client *c = &exp->clients[i];

			listed = c->family == family &&
				 export_prefix_match(bytes, c->addr,
						     c->prefix_len);
		}
		if (!listed) {
			return exp->clients_default
				       ? EXPORT_REFUSED_ADDR_DEFAULT
				       : EXPORT_REFUSED_ADDR;
		}
	}
	if (exp->secure && sockaddr_port(addr) >= 1024) {
		return EXPORT_REFUSED_PORT;
	}
	return EXPORT_ALLOWED;
}

bool export_client_allowed(const struct export *exp,
			   const struct sockaddr *addr)
{
	return export_client_check(exp, addr) == EXPORT_ALLOWED;
}

void export_refusal_format(enum export_refusal r, const char *name,
			   const struct sockaddr *addr, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN + 8];

	sockaddr_format_host(addr, host, sizeof(host));
	switch (r) {
	case EXPORT_ALLOWED:
		snprintf(buf, len, "allowed");
		break;
	case EXPORT_REFUSED_PORT:
		snprintf(buf, len,
			 "source port %u is not privileged (secure = true); "
			 "to allow it, use a port below 1024 (a client run as "
			 "root) or set secure = false in [datastore %s]",
			 (unsigned)sockaddr_port(addr), name);
		break;
	case EXPORT_REFUSED_ADDR:
		snprintf(buf, len,
			 "%s is not in clients; to allow it, add it to "
			 "clients in [datastore %s]",
			 host, name);
		break;
	case EXPORT_REFUSED_ADDR_DEFAULT:
		snprintf(buf, len,
			 "%s is not loopback (no clients given: loopback "
			 "only); to allow it, list it in clients in "
			 "[datastore %s]",
			 host, name);
		break;
	}
}

int export_access_get(const struct export_table *tab, const struct export *exp,
		      const struct sockaddr *addr, struct export_access *out)
{
	int err = 0;

	export_table_read_lock(tab);
	out->refusal = export_client_check(exp, addr);
	if (out->refusal == EXPORT_ALLOWED) {
		out->replica = __atomic_load_n(&exp->replica, __ATOMIC_ACQUIRE);
		out->read_only = exp->read_only || out->replica;
		out->snapshot_dir = exp->snapshot_dir;
		out->squash = exp->squash;
		out->anon_uid = exp->anon_uid;
		out->anon_gid = exp->anon_gid;
	} else {
		err = -EACCES;
	}
	export_table_read_unlock(tab);
	return err;
}

void export_table_read_lock(const struct export_table *tab)
{
	pthread_rwlock_rdlock((pthread_rwlock_t *)&tab->lock);
}

void export_table_read_unlock(const struct export_table *tab)
{
	pthread_rwlock_unlock((pthread_rwlock_t *)&tab->lock);
}

void export_table_write_lock(struct export_table *tab)
{
	pthread_rwlock_wrlock(&tab->lock);
}

void export_table_write_unlock(struct export_table *tab)
{
	pthread_rwlock_unlock(&tab->lock);
}

int export_table_publish(struct export_table *tab)
{
	if (tab->count >= tab->cap) {
		return -ENOSPC;
	}
	__atomic_store_n(&tab->count, tab->count + 1, __ATOMIC_RELEASE);
	return 0;
}

void export_table_set_removed(struct export *exp, bool removed)
{
	__atomic_store_n(&exp->removed, removed, __ATOMIC_RELAXED);
}

int export_client_parse(const char *text, struct export_client *out)
{
	char addr[64];
	const char *slash = strchr(text, '/');
	size_t len = slash ? (size_t)(slash - text) : strlen(text);
	unsigned max_prefix;

	if (len == 0 || len >= sizeof(addr)) {
		return -EINVAL;
	}
	memcpy(addr, text, len);
	addr[len] = '\0';
	memset(out, 0, sizeof(*out));
	if (inet_pton(AF_INET, addr, out->addr) == 1) {
		out->family = AF_INET;
		max_prefix = 32;
	} else if (inet_pton(AF_INET6, addr, out->addr) == 1) {
		out->family = AF_INET6;
		max_prefix = 128;
	} else {
		return -EINVAL;
	}
	out->prefix_len = (uint8_t)max_prefix;
	if (slash) {
		char *end;
		unsigned long prefix = strtoul(slash + 1, &end, 10);

		if (slash[1] == '\0' || *end != '\0' || prefix > max_prefix) {
			return -EINVAL;
		}
		out->prefix_len = (uint8_t)prefix;
	}
	/* Peers in ::ffff:a.b.c.d are matched as IPv4 (export_addr_bytes),
	 * so a rule written that way is stored as the IPv4 rule it means. */
	if (out->family == AF_INET6 &&
	    IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)out->addr) &&
	    out->prefix_len >= 96) {
		memmove(out->addr, out->addr + 12, 4);
		memset(out->addr + 4, 0, 12);
		out->family = AF_INET;
		out->prefix_len -= 96;
	}
	return 0;
}

uint32_t export_id_from_name(const char *name)
{
	uint32_t id = (uint32_t)XXH64(name, strlen(name), 0);

	return id ? id : 1;
}
