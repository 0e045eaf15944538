// SPDX-License-Identifier: Apache-2.0
/*
 * cephfs_obj: the objects of the cephfs backend, one per inode, with their
 * handle, and the cache that keeps the recently used ones (and the open
 * file of their I/O: opening one asks the MDS for capabilities) so that a
 * READ or WRITE costs no open.  A handle is resolved by inode number
 * (cephfs_resolve.c: ceph_ll_lookup_inode, the client's cache, else one
 * MDS lookup), which is what makes it valid on any gateway and after a
 * restart.  An object in a
 * CephFS snapshot (reached through the root's .snapshot, CephFS's .snap)
 * is the pair inode and snapid: its handle carries both (16 bytes), and
 * resolves with ceph_ll_lookup_vino on any gateway too.
 */
#include "nfsd/store/cephfs/cephfs_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t store_cephfs_bucket(uint64_t ino)
{
	return (size_t)((ino * 0x9e3779b97f4a7c15ull) >> 54) %
	       STORE_CEPHFS_CACHE_BUCKETS;
}

static void store_cephfs_fh_make(struct store_cephfs *sc, uint64_t ino,
				 uint64_t snapid, struct store_fh *fh)
{
	struct store_kfh kfh;

	memset(&kfh, 0, sizeof(kfh));
	kfh.type = STORE_CEPHFS_FH_TYPE;
	/* Live objects keep the 8-byte body of every earlier handle. */
	kfh.len = snapid == CEPH_NOSNAP ? 8 : 16;
	for (int i = 0; i < 8; i++) {
		kfh.f_handle[i] = (uint8_t)(ino >> (56 - 8 * i));
		kfh.f_handle[8 + i] = (uint8_t)(snapid >> (56 - 8 * i));
	}
	store__fh_encode(&sc->secret, sc->base.export_id, &kfh, fh);
}

void store__cephfs_obj_ref(struct store_obj *obj)
{
	atomic_fetch_add(&obj->refs, 1);
}

void store__cephfs_obj_unref(struct store_obj *obj)
{
	struct cephfs_obj *o = store__cephfs_obj(obj);

	if (o == NULL || atomic_fetch_sub(&o->base.refs, 1) != 1) {
		return;
	}
	if (o->io != NULL) {
		ceph_ll_close(o->sc->cm, o->io);
	}
	ceph_ll_put(o->sc->cm, o->in);
	store__syncgroup_fini(&o->sync);
	pthread_cond_destroy(&o->fsync_done);
	pthread_mutex_destroy(&o->lock);
	free(o->used_bits);
	free(o);
}

struct cephfs_obj *store__cephfs_cache_find(struct store_cephfs *sc,
					    uint64_t ino, uint64_t snapid)
{
	struct cephfs_obj *o = sc->buckets[store_cephfs_bucket(ino)];

	for (; o != NULL; o = o->hash_next) {
		if (o->ino == ino && o->snapid == snapid) {
			store__cephfs_obj_ref(store__cephfs_pub(o));
			return o;
		}
	}
	return NULL;
}

/* Unlinks @o from the hash chain and the FIFO.  Under the cache lock;
 * the caller drops the cache's reference after unlocking. */
static void store_cephfs_cache_unlink(struct store_cephfs *sc,
				      struct cephfs_obj *o)
{
	struct cephfs_obj **pp = &sc->buckets[store_cephfs_bucket(o->ino)];
	struct cephfs_obj *prev = NULL;

	while (*pp != o) {
		pp = &(*pp)->hash_next;
	}
	*pp = o->hash_next;
	for (struct cephfs_obj *f = sc->fifo_head; f != NULL;
	     prev = f, f = f->fifo_next) {
		if (f != o) {
			continue;
		}
		if (prev) {
			prev->fifo_next = f->fifo_next;
		} else {
			sc->fifo_head = f->fifo_next;
		}
		if (sc->fifo_tail == f) {
			sc->fifo_tail = prev;
		}
		break;
	}
	o->cached = false;
	sc->cached--;
}

/* Caches @o (holding a reference of the cache's), evicting the oldest
 * entry when full: returned for the caller to unref after unlocking. */
static struct cephfs_obj *store_cephfs_cache_put(struct store_cephfs *sc,
						 struct cephfs_obj *o)
{
	struct cephfs_obj *old = NULL;
	size_t b = store_cephfs_bucket(o->ino);

	if (sc->cached >= STORE_CEPHFS_CACHE_ENTRIES && sc->fifo_head) {
		old = sc->fifo_head;
		store_cephfs_cache_unlink(sc, old);
	}
	store__cephfs_obj_ref(store__cephfs_pub(o));
	o->cached = true;
	o->hash_next = sc->buckets[b];
	sc->buckets[b] = o;
	o->fifo_next = NULL;
	if (sc->fifo_tail) {
		sc->fifo_tail->fifo_next = o;
	} else {
		sc->fifo_head = o;
	}
	sc->fifo_tail = o;
	sc->cached++;
	return old;
}

void store__cephfs_cache_drop(struct store_cephfs *sc, uint64_t ino)
{
	struct cephfs_obj *o;

	pthread_mutex_lock(&sc->cache_lock);
	o = store__cephfs_cache_find(sc, ino, CEPH_NOSNAP);
	if (o != NULL) {
		store_cephfs_cache_unlink(sc, o);
	}
	pthread_mutex_unlock(&sc->cache_lock);
	if (o != NULL) {
		/* the find's reference and the cache's */
		store__cephfs_obj_unref(store__cephfs_pub(o));
		store__cephfs_obj_unref(store__cephfs_pub(o));
	}
}

void store__cephfs_cache_clear(struct store_cephfs *sc)
{
	struct cephfs_obj *o;

	for (;;) {
		pthread_mutex_lock(&sc->cache_lock);
		o = sc->fifo_head;
		if (o != NULL) {
			store_cephfs_cache_unlink(sc, o);
		}
		pthread_mutex_unlock(&sc->cache_lock);
		if (o == NULL) {
			return;
		}
		store__cephfs_obj_unref(store__cephfs_pub(o));
	}
}

int store__cephfs_obj_get(struct store_cephfs *sc, Inode *in,
			  const struct ceph_statx *stx, struct cephfs_obj **out)
{
	struct cephfs_obj *o, *had, *old;
	int err;

	pthread_mutex_lock(&sc->cache_lock);
	/* libcephfs reports an inode's snapid as its stx_dev. */
	had = store__cephfs_cache_find(sc, stx->stx_ino, stx->stx_dev);
	pthread_mutex_unlock(&sc->cache_lock);
	if (had != NULL) {
		ceph_ll_put(sc->cm, in);
		*out = had;
		return 0;
	}
	o = calloc(1, sizeof(*o));
	if (o == NULL) {
		ceph_ll_put(sc->cm, in);
		return -ENOMEM;
	}
	atomic_init(&o->base.refs, 1);
	o->sc = sc;
	o->in = in;
	o->ino = stx->stx_ino;
	o->snapid = stx->stx_dev;
	o->type = store__ftype_from_mode(stx->stx_mode);
	store_cephfs_fh_make(sc, o->ino, o->snapid, &o->base.fh);
	err = pthread_mutex_init(&o->lock, NULL);
	if (err) {
		ceph_ll_put(sc->cm, in);
		free(o);
		return -err;
	}
	err = store__syncgroup_init(&o->sync);
	if (err) {
		pthread_mutex_destroy(&o->lock);
		ceph_ll_put(sc->cm, in);
		free(o);
		return err;
	}
	pthread_cond_init(&o->fsync_done, NULL);
	pthread_mutex_lock(&sc->cache_lock);
	had = store__cephfs_cache_find(sc, o->ino, o->snapid);
	old = had ? NULL : store_cephfs_cache_put(sc, o);
	pthread_mutex_unlock(&sc->cache_lock);
	if (old != NULL) {
		store__cephfs_obj_unref(store__cephfs_pub(old));
	}
	if (had != NULL) {
		/* Another thread made it first. */
		store__cephfs_obj_unref(store__cephfs_pub(o));
		o = had;
	}
	*out = o;
	return 0;
}

int store__cephfs_obj_io(struct cephfs_obj *o, struct Fh **out)
{
	int rc = 0;

	if (o->type == STORE_DIR) {
		return -EISDIR;
	}
	if (o->type != STORE_REG) {
		return -EINVAL;
	}
	pthread_mutex_lock(&o->lock);
	if (o->io == NULL) {
		/* A snapshot's file is read-only (EROFS for O_RDWR). */
		rc = ceph_ll_open(o->sc->cm, o->in,
				  o->snapid == CEPH_NOSNAP ? O_RDWR : O_RDONLY,
				  &o->io, o->sc->root_perms);
		if (rc) {
			o->io = NULL;
		}
	}
	*out = o->io;
	pthread_mutex_unlock(&o->lock);
	return store__cephfs_err(rc);
}

int store__cephfs_sync_confirm(struct store_cephfs *sc, struct cephfs_obj *o)
{
	struct ceph_statx stx;
	int rc;

	/* With the session up the caps answer at once.  Torn down, the
	 * caps are gone and the MDS is asked, which a blocklisted client
	 * cannot reach: -ESHUTDOWN once libcephfs has seen the OSD map
	 * that blocklists it, -EPERM when its new session is refused
	 * first (the same fact). */
	rc = store__cephfs_err(ceph_ll_getattr(
		sc->cm, o->in, &stx, CEPH_STATX_SIZE, 0, sc->root_perms));
	return rc == -EPERM ? -ESHUTDOWN : rc;
}

/* Whether an fsync of @o has waited its share; under lock.  The oldest
 * decides: a stream of new fsyncs holds no write back longer than the
 * old ones take (each is quick once writes wait). */
static bool store_cephfs_fsync_starved(const struct cephfs_obj *o,
				       uint64_t now_ns)
{
	const uint64_t fair_ns = STORE_CEPHFS_FSYNC_FAIR_MS * 1000000ull;

	for (const struct cephfs_fsync *f = o->fsyncs; f; f = f->next) {
		if (now_ns - f->since_ns >= fair_ns) {
			return true;
		}
	}
	return false;
}

void store__cephfs_write_fair(struct cephfs_obj *o)
{
	/* No fsync, the common case: no lock.  One that begins meanwhile
	 * has not waited yet. */
	if (atomic_load_explicit(&o->fsyncs, memory_order_relaxed) == NULL) {
		return;
	}
	pthread_mutex_lock(&o->lock);
	while (store_cephfs_fsync_starved(o, store__cephfs_now_ns())) {
		pthread_cond_wait(&o->fsync_done, &o->lock);
	}
	pthread_mutex_unlock(&o->lock);
}

int store__cephfs_sync_fh(void *arg, enum store_stable level)
{
	struct cephfs_obj *o = arg;
	struct cephfs_fsync me = { .since_ns = store__cephfs_now_ns() };
	struct cephfs_fsync **at;
	int rc;

	pthread_mutex_lock(&o->lock);
	me.next = o->fsyncs;
	atomic_store(&o->fsyncs, &me);
	pthread_mutex_unlock(&o->lock);
	rc = store__cephfs_err(
		ceph_ll_fsync(o->sc->cm, o->io, level == STORE_DATA_SYNC));
	pthread_mutex_lock(&o->lock);
	if (o->fsyncs == &me) {
		atomic_store(&o->fsyncs, me.next);
	} else {
		for (at = &o->fsyncs->next; *at != &me; at = &(*at)->next) {
		}
		*at = me.next;
	}
	pthread_cond_broadcast(&o->fsync_done);
	pthread_mutex_unlock(&o->lock);
	/* The size and mtime go with the caps, which a fenced gateway's
	 * fsync drops with a 0. */
	return rc ? rc : store__cephfs_sync_confirm(o->sc, o);
}

int store__cephfs_write_all(struct store_cephfs *sc, struct Fh *fh,
			    uint64_t off_bytes, const void *buf, uint32_t count)
{
	uint32_t done = 0;

	while (done < count) {
		int rc = ceph_ll_write(sc->cm, fh, (int64_t)(off_bytes + done),
				       count - done, (const char *)buf + done);

		if (rc < 0) {
			return store__cephfs_err(rc);
		}
		if (rc == 0) {
			return -EIO;
		}
		done += (uint32_t)rc;
	}
	return 0;
}
