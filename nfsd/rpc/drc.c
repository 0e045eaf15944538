// SPDX-License-Identifier: Apache-2.0
/*
 * drc: a chained hash table of entries plus an LRU list of the finished
 * ones.  In-progress entries are never evicted (their reply is coming);
 * finished ones leave from the cold end when either bound is passed.
 * Removed entries wait on a spare list for the next miss, and replies up
 * to DRC_INLINE_REPLY_BYTES (WRITE's, COMMIT's) are kept inside their
 * entry: once the cache has filled, a WRITE costs no malloc here (issue
 * 7).  Entries ever allocated (live + spare) stay <= max_entries.
 */
#include "nfsd/rpc/drc.h"
#include "nfsd/base/sockaddr.h"
#include "nfsd/rpc/auth.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

/* WRITE's reply with its attributes is 164 bytes, mark room included. */
#define DRC_INLINE_REPLY_BYTES 192

enum drc_state {
	DRC_ENTRY_RUNNING,
	DRC_ENTRY_DONE,
};

struct drc_entry {
	struct drc_key key;
	enum drc_state state;
	uint8_t *reply;
	size_t reply_len;
	struct drc_entry *hash_next;
	struct drc_entry *lru_prev, *lru_next; /* DONE entries only */
	uint8_t inline_reply[DRC_INLINE_REPLY_BYTES];
};

struct drc {
	pthread_mutex_t lock;
	struct drc_entry **buckets;
	size_t nbuckets; /* a power of two */
	size_t max_entries, max_bytes;
	size_t entries, bytes;
	struct drc_entry *lru_head, *lru_tail; /* head = most recent */
	struct drc_entry *spare; /* removed entries, linked by hash_next */
	struct drc_stats stats;
};

/* Frees @e's reply when it is not stored inline. */
static void drc_entry_drop_reply(struct drc_entry *e)
{
	if (e->reply != e->inline_reply) {
		free(e->reply);
	}
	e->reply = NULL;
	e->reply_len = 0;
}

int drc_new(size_t max_entries, size_t max_bytes, struct drc **out)
{
	struct drc *drc = calloc(1, sizeof(*drc));
	size_t n = 64;

	if (!drc) {
		return -ENOMEM;
	}
	while (n < max_entries) {
		n *= 2;
	}
	drc->buckets = calloc(n, sizeof(*drc->buckets));
	if (!drc->buckets) {
		free(drc);
		return -ENOMEM;
	}
	drc->nbuckets = n;
	drc->max_entries = max_entries;
	drc->max_bytes = max_bytes;
	pthread_mutex_init(&drc->lock, NULL);
	*out = drc;
	return 0;
}

void drc_free(struct drc *drc)
{
	for (size_t i = 0; i < drc->nbuckets; i++) {
		struct drc_entry *e = drc->buckets[i];

		while (e) {
			struct drc_entry *next = e->hash_next;
			drc_entry_drop_reply(e);
			free(e);
			e = next;
		}
	}
	while (drc->spare) {
		struct drc_entry *next = drc->spare->hash_next;
		free(drc->spare);
		drc->spare = next;
	}
	free(drc->buckets);
	pthread_mutex_destroy(&drc->lock);
	free(drc);
}

void drc_key_addr(struct drc_key *key, const struct sockaddr *addr)
{
	sockaddr_key(addr, key->addr);
	key->port = sockaddr_port(addr);
}

void drc_key_cred(struct drc_key *key, const struct rpc_cred *cred)
{
	uint32_t n = cred->ngroups < RPC_AUTH_SYS_MAX_GROUPS
			     ? cred->ngroups
			     : RPC_AUTH_SYS_MAX_GROUPS;
	uint32_t ids[4 + RPC_AUTH_SYS_MAX_GROUPS];

	ids[0] = cred->flavor;
	ids[1] = cred->uid;
	ids[2] = cred->gid;
	ids[3] = n;
	memcpy(&ids[4], cred->groups, n * sizeof(ids[0]));
	key->cred_hash = XXH3_64bits(ids, (4 + n) * sizeof(ids[0]));
}

static size_t drc_bucket(const struct drc *drc, const struct drc_key *key)
{
	return (size_t)XXH3_64bits(key, sizeof(*key)) & (drc->nbuckets - 1);
}

static bool drc_key_equal(const struct drc_key *a, const struct drc_key *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

static void drc_lru_unlink(struct drc *drc, struct drc_entry *e)
{
	if (e->lru_prev) {
		e->lru_prev->lru_next = e->lru_next;
	} else {
		drc->lru_head = e->lru_next;
	}
	if (e->lru_next) {
		e->lru_next->lru_prev = e->lru_prev;
	} else {
		drc->lru_tail = e->lru_prev;
	}
	e->lru_prev = e->lru_next = NULL;
}

static void drc_lru_push(struct drc *drc, struct drc_entry *e)
{
	e->lru_prev = NULL;
	e->lru_next = drc->lru_head;
	if (drc->lru_head) {
		drc->lru_head->lru_prev = e;
	}
	drc->lru_head = e;
	if (!drc->lru_tail) {
		drc->lru_tail = e;
	}
}

/* Unlinks @e from its bucket and puts it on the spare list. */
static void drc_remove(struct drc *drc, struct drc_entry *e)
{
	struct drc_entry **pp = &drc->buckets[drc_bucket(drc, &e->key)];

	while (*pp != e) {
		pp = &(*pp)->hash_next;
	}
	*pp = e->hash_next;
	if (e->state == DRC_ENTRY_DONE) {
		drc_lru_unlink(drc, e);
	}
	drc->entries--;
	drc->bytes -= e->reply_len;
	drc_entry_drop_reply(e);
	e->hash_next = drc->spare;
	drc->spare = e;
}

/* Evicts finished entries until both bounds hold with room for @spare more
 * entries (or no finished entry is left). */
static void drc_trim(struct drc *drc, size_t spare)
{
	while ((drc->entries + spare > drc->max_entries ||
		drc->bytes > drc->max_bytes) &&
	       drc->lru_tail) {
		drc_remove(drc, drc->lru_tail);
		drc->stats.evictions++;
	}
}

enum drc_verdict drc_lookup(struct drc *drc, const struct drc_key *key,
			    struct drc_entry **entry, uint8_t **reply,
			    size_t *reply_len)
{
	size_t b = drc_bucket(drc, key);
	struct drc_entry *e;
	enum drc_verdict verdict = DRC_NEW;

	*entry = NULL;
	pthread_mutex_lock(&drc->lock);
	for (e = drc->buckets[b]; e; e = e->hash_next) {
		if (drc_key_equal(&e->key, key)) {
			break;
		}
	}
	if (e && e->state == DRC_ENTRY_RUNNING) {
		drc->stats.in_progress++;
		verdict = DRC_IN_PROGRESS;
	} else if (e) {
		*reply = malloc(e->reply_len);
		if (*reply) {
			memcpy(*reply, e->reply, e->reply_len);
			*reply_len = e->reply_len;
			drc_lru_unlink(drc, e);
			drc_lru_push(drc, e);
			drc->stats.hits++;
			verdict = DRC_REPLAY;
		} else {
			/* Cannot copy: drop, the client will ask again. */
			verdict = DRC_IN_PROGRESS;
		}
	} else {
		drc->stats.misses++;
		drc_trim(drc, 1);
		if (drc->entries < drc->max_entries) {
			e = drc->spare;
			if (e) {
				drc->spare = e->hash_next;
				memset(e, 0,
				       offsetof(struct drc_entry,
						inline_reply));
			} else {
				e = calloc(1, sizeof(*e));
			}
			if (e) {
				e->key = *key;
				e->state = DRC_ENTRY_RUNNING;
				e->hash_next = drc->buckets[b];
				drc->buckets[b] = e;
				drc->entries++;
				*entry = e;
			}
		}
	}
	pthread_mutex_unlock(&drc->lock);
	return verdict;
}

void drc_finish(struct drc *drc, struct drc_entry *entry, const uint8_t *reply,
		size_t reply_len)
{
	uint8_t *copy = reply_len <= DRC_INLINE_REPLY_BYTES
				? entry->inline_reply
				: malloc(reply_len);

	pthread_mutex_lock(&drc->lock);
	if (!copy) {
		drc_remove(drc, entry);
		pthread_mutex_unlock(&drc->lock);
		return;
	}
	memcpy(copy, reply, reply_len);
	entry->reply = copy;
	entry->reply_len = reply_len;
	entry->state = DRC_ENTRY_DONE;
	drc->bytes += reply_len;
	drc_lru_push(drc, entry);
	drc_trim(drc, 0);
	pthread_mutex_unlock(&drc->lock);
}

void drc_forget(struct drc *drc, struct drc_entry *entry)
{
	pthread_mutex_lock(&drc->lock);
	drc_remove(drc, entry);
	pthread_mutex_unlock(&drc->lock);
}

void drc_stats_get(struct drc *drc, struct drc_stats *out)
{
	pthread_mutex_lock(&drc->lock);
	*out = drc->stats;
	out->entries = drc->entries;
	out->bytes = drc->bytes;
	pthread_mutex_unlock(&drc->lock);
}
