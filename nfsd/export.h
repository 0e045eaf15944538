/*
 * export: the table of datastores this server exports, and who may use
 * them.  An export is a path ("/ds1"), a store, and a client list of CIDR
 * rules, checked at MNT and again on every NFS call (RFC 1813 5.1: the
 * server may refuse any request, not only MNT).  The table is built from
 * the config before the loops start and read-only afterwards.
 */
#ifndef DSNFS_EXPORT_H
#define DSNFS_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "nfsd/store/store.h"

struct quota;

#define EXPORT_MAX_CLIENTS 32
#define EXPORT_ANON_ID 65534

/* One client rule: an address and prefix ("10.0.0.0/8", "127.0.0.1"). */
struct export_client {
	int family; /* AF_INET or AF_INET6 */
	uint8_t addr[16];
	uint8_t prefix_len;
};

enum export_squash {
	EXPORT_SQUASH_NONE = 0,
	EXPORT_SQUASH_ROOT, /* uid 0 -> anonuid (default, like knfsd) */
	EXPORT_SQUASH_ALL,
};

struct export
{
	char name[64]; /* "ds1" */
	char path[80]; /* what MNT asks for: "/ds1" */
	char dir[4096]; /* the directory on our disk */
	uint32_t id;
	bool read_only;
	bool secure; /* clients must use a privileged port (< 1024) */
	enum export_squash squash;
	uint32_t anon_uid, anon_gid;
	struct export_client clients[EXPORT_MAX_CLIENTS];
	size_t nclients; /* 0 = everyone */
	struct store *store;
	/* What the datastore allocated, and its quota (quota.h); NULL when
	 * nothing is counted (tests).  Owned by whoever built the table. */
	struct quota *quota;
};

struct export_table {
	struct export *exports;
	size_t count;
};

/* Finds an export by its MNT path ("/ds1", trailing slashes ignored).
 * Returns borrowed, or NULL. */
struct export *export_find_by_path(const struct export_table *tab,
				   const char *path);

/*
 * Finds the export that @path lies in: "/ds1" or "/ds1/sub/dir" (clients
 * such as libnfs mount a subdirectory of an export).  *rest returns the
 * part after the export path, borrowed from @path, without leading
 * slashes ("" for the export itself).  Returns borrowed, or NULL.
 */
struct export *export_find_by_prefix(const struct export_table *tab,
				     const char *path, const char **rest);

/* Finds an export by the id carried in a file handle. Borrowed, or NULL. */
struct export *export_find_by_id(const struct export_table *tab, uint32_t id);

/* True when a client at @addr may use @exp: its address is on the list,
 * and with `secure` its port is privileged (below 1024). */
bool export_client_allowed(const struct export *exp,
			   const struct sockaddr *addr);

/* Parses "ADDR[/PREFIX]" into *out.  Returns 0 or -EINVAL. */
int export_client_parse(const char *text, struct export_client *out);

/* Stable export id from a datastore name (used when the config gives none):
 * the low 32 bits of xxh64(name); never 0. */
uint32_t export_id_from_name(const char *name);

#endif
