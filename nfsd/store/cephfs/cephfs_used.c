// SPDX-License-Identifier: Apache-2.0
/*
 * cephfs_used: the bytes a file of the cephfs backend holds.  CephFS
 * reports st_blocks from the size (a 2 TiB thin VMDK would count as 2 TiB
 * whatever it holds), so the gateway counts the file's objects in its data
 * pool instead, through librados: object k of inode I is "I.k" (hex,
 * "%llx.%08llx"), and exists once any byte of it was written.  used bytes
 * = objects that exist x the layout's object size (4 MiB by default),
 * never above the size rounded up to 4 KiB: allocation at object
 * granularity, as a quota should count a thin disk.
 *
 * The objects are looked at once per file per gateway (one rados stat per
 * object the size spans, 256 in flight), then this gateway's writes set
 * the bits of the objects they touch, and its size changes clear the bits
 * past a new end (CephFS removes those objects) or add clear ones (a file
 * grown by a SETATTR is a hole there): a SETATTR costs no stat.
 * Writes made through another gateway are seen when this gateway next
 * looks (after a size change here, or once the object left its cache).
 */
#include "nfsd/store/cephfs/cephfs_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STORE_CEPHFS_USED_WINDOW 256
/* Bitmaps above this many objects (64 TiB of 4 MiB objects) are not
 * made: such a file counts its size. */
#define STORE_CEPHFS_USED_MAX_OBJECTS (1ull << 24)
#define STORE_CEPHFS_BLOCK_BYTES 4096ull

bool store__cephfs_rados_open(struct store_cephfs *sc, const char *conf,
			      const char *user)
{
	if (pthread_mutex_init(&sc->rados_lock, NULL) != 0) {
		return false;
	}
	if (rados_create(&sc->rados, user) != 0) {
		pthread_mutex_destroy(&sc->rados_lock);
		return false;
	}
	if (rados_conf_read_file(sc->rados, conf) != 0 ||
	    rados_conf_set(sc->rados, "rados_mon_op_timeout", "10") != 0 ||
	    rados_conf_set(sc->rados, "rados_osd_op_timeout", "30") != 0 ||
	    rados_connect(sc->rados) != 0) {
		rados_shutdown(sc->rados);
		pthread_mutex_destroy(&sc->rados_lock);
		return false;
	}
	return true;
}

void store__cephfs_rados_close(struct store_cephfs *sc)
{
	if (!sc->rados_ok) {
		return;
	}
	for (size_t i = 0; i < sc->npools; i++) {
		rados_ioctx_destroy(sc->pool_io[i]);
	}
	rados_shutdown(sc->rados);
	pthread_mutex_destroy(&sc->rados_lock);
}

/* The I/O context of data pool @pool (borrowed), or NULL. */
static rados_ioctx_t store_cephfs_pool(struct store_cephfs *sc, int64_t pool)
{
	rados_ioctx_t io = NULL;

	pthread_mutex_lock(&sc->rados_lock);
	for (size_t i = 0; i < sc->npools; i++) {
		if (sc->pool_id[i] == pool) {
			io = sc->pool_io[i];
		}
	}
	if (io == NULL && sc->npools < 4 &&
	    rados_ioctx_create2(sc->rados, pool, &io) == 0) {
		sc->pool_id[sc->npools] = pool;
		sc->pool_io[sc->npools++] = io;
	}
	pthread_mutex_unlock(&sc->rados_lock);
	return io;
}

static void store_cephfs_bit_set(struct cephfs_obj *o, uint64_t k)
{
	if (k >= o->used_nbits) {
		return;
	}
	if (!(o->used_bits[k / 8] & (1u << (k % 8)))) {
		o->used_bits[k / 8] |= (uint8_t)(1u << (k % 8));
		o->used_objects++;
	}
}

/* Stats objects [@first, @first + @n) of @o into its bitmap. */
static int store_cephfs_stat_window(rados_ioctx_t io, struct cephfs_obj *o,
				    uint64_t first, size_t n)
{
	rados_completion_t c[STORE_CEPHFS_USED_WINDOW];
	uint64_t psize;
	time_t pmtime;
	char name[48];
	size_t made = 0;
	int err = 0;

	for (; made < n; made++) {
		snprintf(name, sizeof(name), "%" PRIx64 ".%08" PRIx64, o->ino,
			 first + made);
		if (rados_aio_create_completion2(NULL, NULL, &c[made]) != 0) {
			err = -ENOMEM;
			break;
		}
		/* psize and pmtime are not read: existence is the answer. */
		if (rados_aio_stat(io, name, c[made], &psize, &pmtime) != 0) {
			rados_aio_release(c[made]);
			err = -EIO;
			break;
		}
	}
	for (size_t i = 0; i < made; i++) {
		rados_aio_wait_for_complete(c[i]);
		if (rados_aio_get_return_value(c[i]) == 0) {
			store_cephfs_bit_set(o, first + i);
		}
		rados_aio_release(c[i]);
	}
	return err;
}

/* Makes @o's bitmap for @size_bytes from the pool.  Under o->lock. */
static int store_cephfs_measure(struct store_cephfs *sc, struct cephfs_obj *o,
				uint64_t size_bytes)
{
	struct ceph_file_layout layout;
	rados_ioctx_t io;
	uint64_t n;
	int err;

	memset(&layout, 0, sizeof(layout));
	ceph_ll_file_layout(sc->cm, o->in, &layout);
	if (layout.fl_object_size == 0) {
		return -EINVAL;
	}
	io = store_cephfs_pool(sc, (int64_t)layout.fl_pg_pool);
	if (io == NULL) {
		return -EIO;
	}
	n = (size_bytes + layout.fl_object_size - 1) / layout.fl_object_size;
	if (n > STORE_CEPHFS_USED_MAX_OBJECTS) {
		return -EFBIG;
	}
	free(o->used_bits);
	o->used_bits = calloc(1, (size_t)(n / 8 + 1));
	if (o->used_bits == NULL) {
		return -ENOMEM;
	}
	o->used_nbits = n;
	o->used_objects = 0;
	o->object_bytes = layout.fl_object_size;
	for (uint64_t k = 0; k < n; k += STORE_CEPHFS_USED_WINDOW) {
		err = store_cephfs_stat_window(
			io, o, k,
			(size_t)(n - k < STORE_CEPHFS_USED_WINDOW
					 ? n - k
					 : STORE_CEPHFS_USED_WINDOW));
		if (err) {
			return err;
		}
	}
	o->used_known = true;
	return 0;
}

uint64_t store__cephfs_used_bytes(struct store_cephfs *sc, struct cephfs_obj *o,
				  const struct ceph_statx *stx)
{
	uint64_t cap = (stx->stx_size + STORE_CEPHFS_BLOCK_BYTES - 1) /
		       STORE_CEPHFS_BLOCK_BYTES * STORE_CEPHFS_BLOCK_BYTES;
	uint64_t used;

	/* A snapshot's objects are RADOS clones the head's stat cannot
	 * see: its own st_blocks then. */
	if (o == NULL || o->type != STORE_REG || !sc->rados_ok ||
	    o->snapid != CEPH_NOSNAP) {
		return stx->stx_blocks * 512;
	}
	pthread_mutex_lock(&o->lock);
	/* A file grown through another gateway: its new objects too. */
	if ((!o->used_known ||
	     (stx->stx_size + o->object_bytes - 1) / o->object_bytes >
		     o->used_nbits) &&
	    store_cephfs_measure(sc, o, stx->stx_size) != 0) {
		o->used_known = false;
		pthread_mutex_unlock(&o->lock);
		return cap;
	}
	used = o->used_objects * o->object_bytes;
	pthread_mutex_unlock(&o->lock);
	return used < cap ? used : cap;
}

/* Makes @o's bitmap cover @n objects: bits past @n are cleared (and
 * uncounted), new ones are clear.  Under o->lock; false (the bitmap then
 * forgotten) when it cannot grow. */
static bool store_cephfs_bits_cover(struct cephfs_obj *o, uint64_t n)
{
	uint8_t *bits;

	for (uint64_t k = n; k < o->used_nbits; k++) {
		if (o->used_bits[k / 8] & (1u << (k % 8))) {
			o->used_bits[k / 8] &= (uint8_t) ~(1u << (k % 8));
			o->used_objects--;
		}
	}
	if (n <= o->used_nbits) {
		o->used_nbits = n;
		return true;
	}
	bits = n <= STORE_CEPHFS_USED_MAX_OBJECTS
		       ? realloc(o->used_bits, (size_t)(n / 8 + 1))
		       : NULL;
	if (bits == NULL) {
		o->used_known = false;
		return false;
	}
	memset(bits + o->used_nbits / 8 + 1, 0,
	       (size_t)(n / 8 - o->used_nbits / 8));
	/* the rest of the old last byte is already zero */
	o->used_bits = bits;
	o->used_nbits = n;
	return true;
}

void store__cephfs_used_wrote(struct cephfs_obj *o, uint64_t off_bytes,
			      uint64_t len)
{
	uint64_t first, last;

	if (len == 0) {
		return;
	}
	pthread_mutex_lock(&o->lock);
	if (!o->used_known) {
		pthread_mutex_unlock(&o->lock);
		return;
	}
	first = off_bytes / o->object_bytes;
	last = (off_bytes + len - 1) / o->object_bytes;
	if (last >= o->used_nbits && !store_cephfs_bits_cover(o, last + 1)) {
		pthread_mutex_unlock(&o->lock);
		return;
	}
	for (uint64_t k = first; k <= last; k++) {
		store_cephfs_bit_set(o, k);
	}
	pthread_mutex_unlock(&o->lock);
}

void store__cephfs_used_resized(struct cephfs_obj *o, uint64_t size_bytes)
{
	pthread_mutex_lock(&o->lock);
	if (o->used_known) {
		(void)store_cephfs_bits_cover(o, (size_bytes + o->object_bytes -
						  1) / o->object_bytes);
	}
	pthread_mutex_unlock(&o->lock);
}

int store__cephfs_used_object(struct store_cephfs *sc, struct cephfs_obj *o,
			      uint64_t size_bytes, uint64_t k,
			      uint32_t *object_bytes)
{
	int rc;

	if (o->type != STORE_REG || !sc->rados_ok || o->snapid != CEPH_NOSNAP) {
		return -EOPNOTSUPP;
	}
	pthread_mutex_lock(&o->lock);
	rc = 0;
	if (!o->used_known ||
	    (size_bytes + o->object_bytes - 1) / o->object_bytes >
		    o->used_nbits) {
		rc = store_cephfs_measure(sc, o, size_bytes);
		o->used_known = rc == 0;
	}
	if (rc == 0) {
		*object_bytes = o->object_bytes;
		rc = k < o->used_nbits &&
		     (o->used_bits[k / 8] & (1u << (k % 8)));
	}
	pthread_mutex_unlock(&o->lock);
	return rc;
}
