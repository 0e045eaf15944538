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

bool export_is_live(const struct export *exp)
{
	return !__atomic_load_n(&exp->removed, __ATOMIC_RELAXED);
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

bool export_client_allowed(const struct export *exp,
			   const struct sockaddr *addr)
{
	uint8_t bytes[16];
	int family;

	if (exp->secure && sockaddr_port(addr) >= 1024) {
		return false;
	}
	if (exp->nclients == 0) {
		return true;
	}
	family = export_addr_bytes(addr, bytes);
	for (size_t i = 0; i < exp->nclients; i++) {
		const struct export_client *c = &exp->clients[i];

		if (c->family == family &&
		    export_prefix_match(bytes, c->addr, c->prefix_len)) {
			return true;
		}
	}
	return false;
}

int export_access_get(const struct export_table *tab, const struct export *exp,
		      const struct sockaddr *addr, struct export_access *out)
{
	int err = 0;

	export_table_read_lock(tab);
	if (export_client_allowed(exp, addr)) {
		out->read_only = exp->read_only;
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
