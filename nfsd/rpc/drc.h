/* SPDX-License-Identifier: Apache-2.0 */
/*
 * drc: the duplicate request cache.  A client that loses its connection
 * retransmits every call it has no reply for, often on a new connection
 * from a new port.  For a procedure that is not idempotent (REMOVE, RENAME,
 * CREATE, WRITE ...) running it twice gives a wrong answer (a retried
 * REMOVE says NOENT), so the first reply is kept and sent again.
 *
 * An entry is keyed by the client's address and source port (as knfsd:
 * the Linux client reconnects from the port it had, so that its
 * retransmissions find their replies), the caller's credential (an xxh3
 * of flavor, uid, gid and groups), the XID, the program, version and
 * procedure, and an xxh3 of the argument length and first 256 bytes (as
 * knfsd's RC_CSUMLEN), so an XID reused for other work is not mistaken
 * for a retransmission, and another user of the same machine who sends a
 * call with someone's XID is not answered with their reply.  Memory
 * is bounded by an entry count and a byte budget; the least recently used
 * finished entries go first.  Thread-safe (one mutex): every worker loop
 * shares the cache, since a retransmission may arrive on any of them.
 */
#ifndef DSNFS_RPC_DRC_H
#define DSNFS_RPC_DRC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define DRC_DEFAULT_MAX_ENTRIES 16384
#define DRC_DEFAULT_MAX_BYTES (32u * 1024 * 1024)

struct drc;
struct drc_entry;

struct drc_key {
	uint8_t addr[16]; /* IPv4 as v4-mapped IPv6 */
	uint32_t port; /* the client's source port */
	uint32_t xid;
	uint32_t prog, vers, proc;
	uint64_t args_hash;
	uint64_t cred_hash; /* drc_key_cred() */
};

enum drc_verdict {
	DRC_NEW, /* first time: run it, then drc_finish() */
	DRC_IN_PROGRESS, /* the original still runs: drop this copy */
	DRC_REPLAY, /* done before: send the copy in *reply */
};

struct drc_stats {
	uint64_t hits, in_progress, misses, evictions;
	size_t entries, bytes;
};

/* *out returns owned: drc_free(). Returns 0 or -ENOMEM. */
int drc_new(size_t max_entries, size_t max_bytes, struct drc **out);
void drc_free(struct drc *drc);

/* Fills the key's address and port from a socket address. */
void drc_key_addr(struct drc_key *key, const struct sockaddr *addr);

struct rpc_cred;

/* Fills the key's credential hash from the call's credential. */
void drc_key_cred(struct drc_key *key, const struct rpc_cred *cred);

/*
 * Looks @key up.  DRC_NEW: an in-progress entry was made; *entry returns
 * it (borrowed; hand it to drc_finish or drc_forget exactly once).
 * DRC_REPLAY: *reply returns owned a malloc'd copy of the cached reply of
 * *reply_len bytes (the caller sends or frees it).  When the cache is full
 * of in-progress entries, answers DRC_NEW with *entry = NULL (uncached).
 */
enum drc_verdict drc_lookup(struct drc *drc, const struct drc_key *key,
			    struct drc_entry **entry, uint8_t **reply,
			    size_t *reply_len);

/* Stores a copy of the reply (borrowed) in @entry and marks it done. */
void drc_finish(struct drc *drc, struct drc_entry *entry, const uint8_t *reply,
		size_t reply_len);

/* Drops @entry: the call was dropped or failed before a reply. */
void drc_forget(struct drc *drc, struct drc_entry *entry);

void drc_stats_get(struct drc *drc, struct drc_stats *out);

#endif
