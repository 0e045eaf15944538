// SPDX-License-Identifier: Apache-2.0
/*
 * fcache: a bounded cache of resolved objects, keyed by the bytes of their
 * wire handle, so that resolving a handle costs a hash lookup instead of an
 * open_by_handle_at(2).  A chained hash table (xxh3 of the handle; a power
 * of two buckets, at least as many as entries) plus an LRU list, under one
 * mutex: every entry is touched for a few instructions only.  The cache
 * holds one reference on each cached object.  It evicts only objects no
 * one else holds (store_fcache_evict_idle()), so a file has at most one
 * live object: past the bound while its entries are in use, back under it
 * as they are let go.
 *
 * The keys are handles whose MAC was checked, so a client cannot choose
 * colliding keys.  Whether a cached file still exists is the resolver's
 * to check (local.c revalidates and calls store__fcache_drop()).
 *
 * The bound is the server's to set, from its descriptor budget shared by
 * the exports (nfsd/server/fd_budget.c); it may change while serving (a SIGHUP
 * adds exports), and the table grows with it.  When an open fails for
 * want of descriptors, the cache gives back a quarter of its entries so
 * that the open can be retried (store__fcache_relieve()).
 */
#include "nfsd/store/local/local_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <xxhash.h>

#include "nfsd/base/log.h"

struct store_fcache {
	pthread_mutex_t lock;
	struct local_obj **buckets;
	size_t nbuckets; /* power of two */
	size_t count;
	size_t max_entries;
	/* Most recently used first. */
	struct local_obj *lru_head, *lru_tail;
	/* Out of descriptors: one warning a second, with what it did. */
	time_t relieve_logged; /* CLOCK_MONOTONIC seconds */
	uint64_t relieved, relieve_calls; /* since the last warning */
};

int store__fcache_new(size_t max_entries, struct store_fcache **out)
{
	struct store_fcache *fc;
	size_t n = 16;
	int err;

	if (max_entries == 0 || max_entries > STORE_FCACHE_MAX_ENTRIES) {
		return -EINVAL;
	}
	while (n < max_entries) {
		n <<= 1;
	}
	fc = calloc(1, sizeof(*fc));
	if (fc == NULL) {
		return -ENOMEM;
	}
	fc->buckets = calloc(n, sizeof(*fc->buckets));
	if (fc->buckets == NULL) {
		err = -ENOMEM;
		goto out_free;
	}
	err = -pthread_mutex_init(&fc->lock, NULL);
	if (err) {
		goto out_buckets;
	}
	fc->nbuckets = n;
	fc->max_entries = max_entries;
	*out = fc;
	return 0;

out_buckets:
	free(fc->buckets);
out_free:
	free(fc);
	return err;
}

static uint64_t store_fcache_hash(const struct store_fh *fh)
{
	return XXH3_64bits(fh->data, fh->len);
}

static bool store_fcache_key_eq(const struct local_obj *obj,
				const struct store_fh *fh)
{
	return obj->base.fh.len == fh->len &&
	       memcmp(obj->base.fh.data, fh->data, fh->len) == 0;
}

static void store_fcache_lru_unlink(struct store_fcache *fc,
				    struct local_obj *obj)
{
	if (obj->lru_prev != NULL) {
		obj->lru_prev->lru_next = obj->lru_next;
	} else {
		fc->lru_head = obj->lru_next;
	}
	if (obj->lru_next != NULL) {
		obj->lru_next->lru_prev = obj->lru_prev;
	} else {
		fc->lru_tail = obj->lru_prev;
	}
	obj->lru_prev = NULL;
	obj->lru_next = NULL;
}

static void store_fcache_lru_push(struct store_fcache *fc,
				  struct local_obj *obj)
{
	obj->lru_prev = NULL;
	obj->lru_next = fc->lru_head;
	if (fc->lru_head != NULL) {
		fc->lru_head->lru_prev = obj;
	} else {
		fc->lru_tail = obj;
	}
	fc->lru_head = obj;
}

/* Finds @fh under the lock; NULL when absent. */
static struct local_obj *store_fcache_find(struct store_fcache *fc,
					   const struct store_fh *fh,
					   uint64_t hash)
{
	struct local_obj *obj = fc->buckets[hash & (fc->nbuckets - 1)];

	while (obj != NULL) {
		if (obj->hash == hash && store_fcache_key_eq(obj, fh)) {
			return obj;
		}
		obj = obj->hash_next;
	}
	return NULL;
}

/* Unlinks @obj under the lock; the caller then drops the cache's ref. */
static void store_fcache_unlink(struct store_fcache *fc, struct local_obj *obj)
{
	struct local_obj **pp = &fc->buckets[obj->hash & (fc->nbuckets - 1)];

	while (*pp != obj) {
		pp = &(*pp)->hash_next;
	}
	*pp = obj->hash_next;
	obj->hash_next = NULL;
	store_fcache_lru_unlink(fc, obj);
	obj->cached = false;
	fc->count--;
}

/*
 * Evicts up to @want of the least recently used entries that only the
 * cache holds, under the lock; *n says how many.  An entry in use is never
 * evicted: one object per file.  A resolve of a file while a request (or
 * the intent log) still holds its evicted object would make a second one,
 * and two objects of a file disagree on what it logged (ilog_lsn), so a
 * replay could write older logged bytes over newer synced ones.  Evicting
 * it would close nothing either.  An entry found in use counts as used
 * (moved to the head), so the next walk does not look at it again; each
 * entry is looked at once.  A reference is only taken under the lock or
 * from another, so one seen alone here stays alone.
 */
static struct local_obj *store_fcache_evict_idle(struct store_fcache *fc,
						 size_t want, size_t *n)
{
	struct local_obj *victims = NULL;
	struct local_obj *obj = fc->lru_tail;
	size_t left = fc->count;

	*n = 0;
	while (obj != NULL && *n < want && left-- > 0) {
		struct local_obj *prev = obj->lru_prev;

		if (atomic_load(&obj->base.refs) == 1) {
			store_fcache_unlink(fc, obj);
			obj->hash_next = victims;
			victims = obj;
			(*n)++;
		} else {
			store_fcache_lru_unlink(fc, obj);
			store_fcache_lru_push(fc, obj);
		}
		obj = prev;
	}
	return victims;
}

/* Outside the lock: the last unref closes descriptors. */
static void store_fcache_victims_unref(struct local_obj *victims)
{
	while (victims != NULL) {
		struct local_obj *next = victims->hash_next;

		victims->hash_next = NULL;
		store__obj_unref(victims);
		victims = next;
	}
}

struct local_obj *store__fcache_get(struct store_fcache *fc,
				    const struct store_fh *fh)
{
	uint64_t hash = store_fcache_hash(fh);
	struct local_obj *obj;

	pthread_mutex_lock(&fc->lock);
	obj = store_fcache_find(fc, fh, hash);
	if (obj != NULL) {
		store__obj_ref(obj);
		store_fcache_lru_unlink(fc, obj);
		store_fcache_lru_push(fc, obj);
	}
	pthread_mutex_unlock(&fc->lock);
	return obj;
}

struct local_obj *store__fcache_put(struct store_fcache *fc,
				    struct local_obj *obj)
{
	uint64_t hash = store_fcache_hash(&obj->base.fh);
	struct local_obj *victims = NULL;
	struct local_obj *old;
	size_t b, n;

	pthread_mutex_lock(&fc->lock);
	old = store_fcache_find(fc, &obj->base.fh, hash);
	if (old != NULL) {
		store__obj_ref(old);
		store_fcache_lru_unlink(fc, old);
		store_fcache_lru_push(fc, old);
		pthread_mutex_unlock(&fc->lock);
		store__obj_unref(obj);
		return old;
	}
	if (fc->count >= fc->max_entries) {
		victims = store_fcache_evict_idle(
			fc, fc->count - fc->max_entries + 1, &n);
	}
	obj->hash = hash;
	b = hash & (fc->nbuckets - 1);
	obj->hash_next = fc->buckets[b];
	fc->buckets[b] = obj;
	store_fcache_lru_push(fc, obj);
	obj->cached = true;
	fc->count++;
	/* The caller's reference passes to the cache; one more for it. */
	store__obj_ref(obj);
	pthread_mutex_unlock(&fc->lock);
	store_fcache_victims_unref(victims);
	return obj;
}

/* The cache's reference to the entry of @fh if it is @obj, else NULL;
 * the entry is unlinked. */
static struct local_obj *store_fcache_take(struct store_fcache *fc,
					   const struct store_fh *fh,
					   uint64_t hash, struct local_obj *obj)
{
	struct local_obj *found = store_fcache_find(fc, fh, hash);

	if (found == NULL || (obj != NULL && found != obj)) {
		return NULL;
	}
	store_fcache_unlink(fc, found);
	return found;
}

void store__fcache_drop(struct store_fcache *fc, const struct store_fh *fh)
{
	uint64_t hash = store_fcache_hash(fh);
	struct local_obj *obj;

	pthread_mutex_lock(&fc->lock);
	obj = store_fcache_take(fc, fh, hash, NULL);
	pthread_mutex_unlock(&fc->lock);
	store__obj_unref(obj);
}

void store__fcache_drop_unlinked(struct store_fcache *fc,
				 const struct store_fh *fh)
{
	uint64_t hash = store_fcache_hash(fh);
	struct local_obj *obj, *taken = NULL;
	struct stat sb;

	pthread_mutex_lock(&fc->lock);
	obj = store_fcache_find(fc, fh, hash);
	if (obj != NULL) {
		store__obj_ref(obj);
	}
	pthread_mutex_unlock(&fc->lock);
	if (obj == NULL) {
		return;
	}
	/* Another hard link keeps the file, and its one object with it:
	 * a second object would not know what the first logged. */
	if (fstat(obj->fd, &sb) != 0 || sb.st_nlink == 0) {
		pthread_mutex_lock(&fc->lock);
		taken = store_fcache_take(fc, fh, hash, obj);
		pthread_mutex_unlock(&fc->lock);
	}
	store__obj_unref(taken);
	store__obj_unref(obj);
}

size_t store__fcache_count(struct store_fcache *fc)
{
	size_t n;

	pthread_mutex_lock(&fc->lock);
	n = fc->count;
	pthread_mutex_unlock(&fc->lock);
	return n;
}

/* Moves every entry to @buckets (@n of them, a power of two). */
static void store_fcache_rehash(struct store_fcache *fc,
				struct local_obj **buckets, size_t n)
{
	for (size_t i = 0; i < fc->nbuckets; i++) {
		struct local_obj *obj = fc->buckets[i];

		while (obj != NULL) {
			struct local_obj *next = obj->hash_next;
			size_t b = obj->hash & (n - 1);

			obj->hash_next = buckets[b];
			buckets[b] = obj;
			obj = next;
		}
	}
	free(fc->buckets);
	fc->buckets = buckets;
	fc->nbuckets = n;
}

int store__fcache_resize(struct store_fcache *fc, size_t max_entries)
{
	struct local_obj **buckets = NULL;
	struct local_obj *victims = NULL;
	size_t n = 16;

	if (max_entries == 0 || max_entries > STORE_FCACHE_MAX_ENTRIES) {
		return -EINVAL;
	}
	while (n < max_entries) {
		n <<= 1;
	}
	pthread_mutex_lock(&fc->lock);
	if (n > fc->nbuckets) {
		/* Rare (a reload): allocating under the lock is simpler than
		 * racing another resize. */
		buckets = calloc(n, sizeof(*buckets));
		if (buckets == NULL) {
			pthread_mutex_unlock(&fc->lock);
			return -ENOMEM;
		}
		store_fcache_rehash(fc, buckets, n);
	}
	fc->max_entries = max_entries;
	if (fc->count > max_entries) {
		size_t evicted;

		victims = store_fcache_evict_idle(fc, fc->count - max_entries,
						  &evicted);
	}
	pthread_mutex_unlock(&fc->lock);
	store_fcache_victims_unref(victims);
	return 0;
}

bool store__fcache_relieve(struct store_fcache *fc, int err)
{
	struct local_obj *victims;
	uint64_t calls = 0, evicted = 0;
	struct timespec now;
	size_t count, n;

	if (err != -EMFILE && err != -ENFILE) {
		return false;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	pthread_mutex_lock(&fc->lock);
	count = fc->count;
	victims =
		store_fcache_evict_idle(fc, count / 4 > 0 ? count / 4 : 1, &n);
	fc->relieve_calls++;
	fc->relieved += n;
	if (now.tv_sec != fc->relieve_logged) {
		fc->relieve_logged = now.tv_sec;
		calls = fc->relieve_calls;
		evicted = fc->relieved;
		fc->relieve_calls = 0;
		fc->relieved = 0;
	}
	pthread_mutex_unlock(&fc->lock);
	store_fcache_victims_unref(victims);
	if (calls) {
		log_warn(
			"store: out of descriptors (%s): %llu opens failed "
			"since "
			"the last warning; %llu cached files evicted for their "
			"retries, %zu left",
			err == -EMFILE ? "EMFILE" : "ENFILE",
			(unsigned long long)calls, (unsigned long long)evicted,
			count - n);
	}
	return n > 0;
}

int store_local_cache_resize(struct store *st, size_t max_entries)
{
	return store__fcache_resize(store__local(st)->fc, max_entries);
}

void store__fcache_free(struct store_fcache *fc)
{
	struct local_obj *obj;

	if (fc == NULL) {
		return;
	}
	while ((obj = fc->lru_head) != NULL) {
		store_fcache_unlink(fc, obj);
		store__obj_unref(obj);
	}
	pthread_mutex_destroy(&fc->lock);
	free(fc->buckets);
	free(fc);
}
