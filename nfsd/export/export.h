/* SPDX-License-Identifier: Apache-2.0 */
/*
 * export: the table of datastores this server exports, and who may use
 * them.  An export is a path ("/ds1"), a store, and a client list of CIDR
 * rules, checked at MNT and again on every NFS call (RFC 1813 5.1: the
 * server may refuse any request, not only MNT).
 *
 * The table is built from the config before the loops start; a SIGHUP
 * (server_reconfigure(), main thread) may then change it while calls run
 * on the worker loops:
 *   - an export's options (read_only, secure, squash, anon ids, clients)
 *     change in place under the table's lock: readers on other threads
 *     read them only through export_access_get() or between
 *     export_table_read_lock() and _unlock();
 *   - an export leaves by being marked removed (lookups no longer find it,
 *     so its handles answer STALE); its slot and store stay until the
 *     server closes, because calls in flight may still use them;
 *   - an export arrives in the next free slot, published by
 *     export_table_publish() once complete.  Slots never move (the array
 *     is allocated at its full capacity), so a borrowed struct export
 *     stays valid for the life of the table.
 * name, path, dir, id, store and quota never change once published, with
 * one exception: a store that could not open at start (store_down) is
 * published later by the server's recovery thread, once complete; read
 * it through export_store().
 */
#ifndef DSNFS_EXPORT_H
#define DSNFS_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <pthread.h>
#include <stdatomic.h>
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
	/* The root directory's fileid (0: unknown): where .snapshot is. */
	uint64_t root_fileid;
	/* Options: see the head of this file for who may read them. */
	bool read_only;
	bool snapshot_dir; /* .snapshot at the root is seen over NFS */
	bool secure; /* clients must use a privileged port (< 1024) */
	enum export_squash squash;
	uint32_t anon_uid, anon_gid;
	struct export_client clients[EXPORT_MAX_CLIENTS];
	size_t nclients; /* 0 = everyone (clients = *) */
	/* The list is the default one (loopback only): refusals say so. */
	bool clients_default;
	/* No longer in the config (atomic; export_table_remove()). */
	bool removed;
	/* The destination of a replication relation not broken
	 * (nfsd/repl/service.h; atomic): read-only to NFS clients, as
	 * read_only, until the break.  @replica_logged: its first refusal
	 * was logged. */
	bool replica;
	bool replica_logged;
	/* The store is not a directory of this machine (backend cephfs):
	 * @dir is "", and what needs a local directory (snapshots, VAAI
	 * clones, the admin scans) does not apply.  False: backend local. */
	bool remote_store;
	/* Its store could not open at start (a Ceph cluster down): store is
	 * NULL and its calls answer NFS3ERR_JUKEBOX, not STALE, so that
	 * clients keep their handles, until the recovery thread publishes
	 * the store (atomic, release) and clears this (atomic). */
	bool store_down;
	struct store *store; /* read with export_store() */
	/* The datastore's own intent log ([datastore] intent_log), owned;
	 * NULL when it has none (the store may use the server's). */
	struct store_ilog *ilog;
	/* What the datastore allocated, and its quota (quota.h); NULL when
	 * nothing is counted (tests).  Owned by whoever built the table. */
	struct quota *quota;
	/* Bumped by every sync of this datastore that failed (nfs3/rw.c):
	 * its write verifier changes, the other datastores' stay.  Kept by
	 * the slot across a removal and a re-add, so it never goes back. */
	_Atomic uint32_t write_verf_gen;
};

struct export_table {
	struct export *exports; /* room for cap; slots never move */
	size_t count; /* published slots (atomic), removed ones included */
	size_t cap;
	/* Guards the options of every export.  A zeroed lock is a valid,
	 * unlocked one (glibc), so a table in a test needs no init. */
	pthread_rwlock_t lock;
};

/* Why a client may not use an export (export_client_check()). */
enum export_refusal {
	EXPORT_ALLOWED = 0,
	EXPORT_REFUSED_PORT, /* secure, and the source port is >= 1024 */
	EXPORT_REFUSED_ADDR, /* the address is not on the clients list */
	EXPORT_REFUSED_ADDR_DEFAULT, /* no list given: loopback only */
};

/* What a call may do in an export, copied out under the table's lock. */
struct export_access {
	/* Set also when export_access_get() refuses: the rule that did. */
	enum export_refusal refusal;
	bool read_only;
	bool replica; /* read_only because it is a replication destination */
	bool snapshot_dir;
	enum export_squash squash;
	uint32_t anon_uid, anon_gid;
};

/* @exp's store, or NULL while it is down (store_down) or after none
 * opened: an acquire load, so that a store published by the recovery
 * thread is seen whole. */
static inline struct store *export_store(const struct export *exp)
{
	return __atomic_load_n(&exp->store, __ATOMIC_ACQUIRE);
}

/* True while @exp's store is not there because its cluster was down at
 * start (NFS3ERR_JUKEBOX, not STALE). */
static inline bool export_store_down(const struct export *exp)
{
	return __atomic_load_n(&exp->store_down, __ATOMIC_ACQUIRE);
}

/* The number of published slots (removed exports included): slots below
 * it may be read, whatever thread publishes more. */
size_t export_table_count(const struct export_table *tab);

/* Finds an export by its MNT path ("/ds1", trailing slashes ignored),
 * removed ones skipped.  Returns borrowed, or NULL. */
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

/* Finds an export by the id carried in a file handle, removed ones
 * skipped (their handles are STALE).  Borrowed, or NULL. */
struct export *export_find_by_id(const struct export_table *tab, uint32_t id);

/* Whether a client at @addr may use @exp: its address is on the list
 * (the default list is loopback only), and with `secure` its port is
 * privileged (below 1024).  EXPORT_ALLOWED or the rule that refuses.
 * Reads the options without the lock: for a table no other thread
 * changes (tests), or inside export_table_read_lock(). */
enum export_refusal export_client_check(const struct export *exp,
					const struct sockaddr *addr);

/* export_client_check() == EXPORT_ALLOWED. */
bool export_client_allowed(const struct export *exp,
			   const struct sockaddr *addr);

/*
 * The one log line's reason for refusal @r of a client at @addr by the
 * export named @name: which rule refused and how to allow the client
 * ("source port 40123 is not privileged (secure = true); to allow it, use
 * a port below 1024 or set secure = false in [datastore ds1]").
 */
void export_refusal_format(enum export_refusal r, const char *name,
			   const struct sockaddr *addr, char *buf, size_t len);

/*
 * export_client_check() and what the call may do, read under @tab's
 * lock (a SIGHUP may be changing @exp's options on another thread).
 * @exp is borrowed from @tab.  Returns 0 with *out filled, or -EACCES
 * when the client may not use the export (out->refusal says why).
 */
int export_access_get(const struct export_table *tab, const struct export *exp,
		      const struct sockaddr *addr, struct export_access *out);

/* Shared lock on the options of every export of @tab (held briefly: no
 * blocking call inside).  The lock is not part of the table's value, so
 * a const table can be locked. */
void export_table_read_lock(const struct export_table *tab);
void export_table_read_unlock(const struct export_table *tab);

/* Exclusive lock, to change options (main thread, SIGHUP). */
void export_table_write_lock(struct export_table *tab);
void export_table_write_unlock(struct export_table *tab);

/*
 * Makes tab->exports[tab->count], filled by the caller (options, store,
 * quota), visible to lookups on every thread.  Returns 0, or -ENOSPC when
 * the table is at its capacity.
 */
int export_table_publish(struct export_table *tab);

/* False once @exp was removed (export_table_set_removed()).  Inline: every
 * NFS call asks it of the export it kept (nfs3/fh.c). */
static inline bool export_is_live(const struct export *exp)
{
	return !__atomic_load_n(&exp->removed, __ATOMIC_RELAXED);
}

/* Marks @exp removed (or back, with @removed false): lookups skip it
 * from now on.  Its slot and store stay. */
void export_table_set_removed(struct export *exp, bool removed);

/* Parses "ADDR[/PREFIX]" into *out.  Returns 0 or -EINVAL. */
int export_client_parse(const char *text, struct export_client *out);

/* Stable export id from a datastore name (used when the config gives none):
 * the low 32 bits of xxh64(name); never 0. */
uint32_t export_id_from_name(const char *name);

#endif
