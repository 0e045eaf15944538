/*
 * fcache: a bounded cache of resolved objects, keyed by the bytes of their
 * wire handle, so that resolving a handle costs a hash lookup instead of an
 * open_by_handle_at(2).  A chained hash table (xxh3 of the handle; a power
 * of two buckets, at least as many as entries) plus an LRU list, under one
 * mutex: every entry is touched for a few instructions only.  The cache
 * holds one reference on each cached object; eviction drops it, so an
 * object in use by a request lives until that request unrefs it.
 *
 * The keys are handles whose MAC was checked, so a client cannot choose
 * colliding keys.  Whether a cached file still exists is the resolver's
 * to check (local.c revalidates and calls store__fcache_drop()).
 */
#include "nfsd/store/store_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

struct store_fcache {
	pthread_mutex_t lock;
	struct store_obj **buckets;
	size_t nbuckets; /* power of two */
	size_t count;
	size_t max_entries;
	/* Most recently used first. */
	struct store_obj *lru_head, *lru_tail;
};

int store__fcache_new(size_t max_entries, struct store_fcache **out)
{
	struct store_fcache *fc;
	size_t n = 16;
	int err;

	if (max_entries == 0 || max_entries > (1u << 24)) {
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

static bool store_fcache_key_eq(const struct store_obj *obj,
				const struct store_fh *fh)
{
	return obj->fh.len == fh->len &&
	       memcmp(obj->fh.data, fh->data, fh->len) == 0;
}

static void store_fcache_lru_unlink(struct store_fcache *fc,
				    struct store_obj *obj)
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
				  struct store_obj *obj)
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
static struct store_obj *store_fcache_find(struct store_fcache *fc,
					   const struct store_fh *fh,
					   uint64_t hash)
{
	struct store_obj *obj = fc->buckets[hash & (fc->nbuckets - 1)];

	while (obj != NULL) {
		if (obj->hash == hash && store_fcache_key_eq(obj, fh)) {
			return obj;
		}
		obj = obj->hash_next;
	}
	return NULL;
}

/* Unlinks @obj under the lock; the caller then drops the cache's ref. */
static void store_fcache_unlink(struct store_fcache *fc, struct store_obj *obj)
{
	struct store_obj **pp = &fc->buckets[obj->hash & (fc->nbuckets - 1)];

	while (*pp != obj) {
		pp = &(*pp)->hash_next;
	}
	*pp = obj->hash_next;
	obj->hash_next = NULL;
	store_fcache_lru_unlink(fc, obj);
	obj->cached = false;
	fc->count--;
}

struct store_obj *store__fcache_get(struct store_fcache *fc,
				    const struct store_fh *fh)
{
	uint64_t hash = store_fcache_hash(fh);
	struct store_obj *obj;

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

struct store_obj *store__fcache_put(struct store_fcache *fc,
				    struct store_obj *obj)
{
	uint64_t hash = store_fcache_hash(&obj->fh);
	struct store_obj *victim = NULL;
	struct store_obj *old;
	size_t b;

	pthread_mutex_lock(&fc->lock);
	old = store_fcache_find(fc, &obj->fh, hash);
	if (old != NULL) {
		store__obj_ref(old);
		store_fcache_lru_unlink(fc, old);
		store_fcache_lru_push(fc, old);
		pthread_mutex_unlock(&fc->lock);
		store__obj_unref(obj);
		return old;
	}
	if (fc->count >= fc->max_entries) {
		victim = fc->lru_tail;
		store_fcache_unlink(fc, victim);
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
	/* Outside the lock: the last unref closes descriptors. */
	store__obj_unref(victim);
	return obj;
}

void store__fcache_drop(struct store_fcache *fc, const struct store_fh *fh)
{
	uint64_t hash = store_fcache_hash(fh);
	struct store_obj *obj;

	pthread_mutex_lock(&fc->lock);
	obj = store_fcache_find(fc, fh, hash);
	if (obj != NULL) {
		store_fcache_unlink(fc, obj);
	}
	pthread_mutex_unlock(&fc->lock);
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

void store__fcache_free(struct store_fcache *fc)
{
	struct store_obj *obj;

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
