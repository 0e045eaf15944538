// SPDX-License-Identifier: Apache-2.0
/*
 * cephfs_snapread: which objects of a file may differ between two CephFS
 * snapshots (store_snapread.h), asked of RADOS without reading data.
 *
 * Object k of inode I is "I.k" in the file's data pool (cephfs_used.c);
 * a CephFS snapshot is a RADOS self-managed snapshot of that pool, so a
 * stat with the I/O context's read snapshot set to the snapshot's id
 * (rados_ioctx_snap_set_read) answers for the object as it was then:
 * the clone that snapshot kept, or the head when nothing wrote the
 * object since.  An object written between the base snapshot and the
 * new one was cloned for the base at its first write, and the head's
 * version rose with each write: the two stats answer different versions.
 * An object nothing wrote in between is the same clone (or head) for
 * both: the same version, size and time.  Pacific's C API has no
 * list_snaps (the clones' overlap), so:
 *
 * - absent at both snapshots: a hole in both, left out;
 * - present at both with the same version (non-zero), size and mtime,
 *   and wholly inside both sizes (or the sizes equal): the same, left
 *   out unread;
 * - anything else (new, gone, written, an error of one stat, an object
 *   the file's end cuts): a candidate, its 64 KiB blocks read and
 *   compared with the base's by the engine (lanes.c).
 *
 * The gateway's own buffered writes reach RADOS first (ceph_sync_fs),
 * so a snapshot's data is in its objects when they are asked.  At most
 * SNAPREAD_WINDOW objects are asked at once, two stats each.  A layout
 * with striping (stripe_count > 1, or a stripe unit other than the
 * object) is not this simple mapping: -EOPNOTSUPP, the file whole.
 */
#include "nfsd/store/cephfs/cephfs_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nfsd/store/store_snapread.h"

/* Objects asked at once: two stats each, 256 in flight. */
#define SNAPREAD_WINDOW 128

struct snapread_stat {
	int rc; /* 0, -ENOENT or another -errno */
	uint64_t size;
	time_t mtime;
	uint64_t version;
};

struct snapread {
	rados_ioctx_t cur, base; /* base NULL: no base */
	uint64_t ino, obj_bytes, size, base_size;
	struct store_range *r;
	size_t n, cap;
};

/* Stats objects [@first, @first + @count) at both snapshots. */
static int snapread_window(struct snapread *s, uint64_t first, size_t count,
			   struct snapread_stat *cs, struct snapread_stat *bs)
{
	rados_completion_t cc[SNAPREAD_WINDOW], bc[SNAPREAD_WINDOW];
	size_t made = 0;
	char name[48];
	int err = 0;

	for (; made < count; made++) {
		snprintf(name, sizeof(name), "%" PRIx64 ".%08" PRIx64, s->ino,
			 first + made);
		bc[made] = NULL;
		if (rados_aio_create_completion2(NULL, NULL, &cc[made]) != 0) {
			err = -ENOMEM;
			break;
		}
		if (rados_aio_stat(s->cur, name, cc[made], &cs[made].size,
				   &cs[made].mtime) != 0) {
			rados_aio_release(cc[made]);
			err = -EIO;
			break;
		}
		if (s->base &&
		    (rados_aio_create_completion2(NULL, NULL, &bc[made]) != 0 ||
		     rados_aio_stat(s->base, name, bc[made], &bs[made].size,
				    &bs[made].mtime) != 0)) {
			/* Not asked: the base's answer is an error, the
			 * object a candidate. */
			if (bc[made]) {
				rados_aio_release(bc[made]);
			}
			bc[made] = NULL;
		}
	}
	for (size_t i = 0; i < made; i++) {
		rados_aio_wait_for_complete(cc[i]);
		cs[i].rc = rados_aio_get_return_value(cc[i]);
		cs[i].version = rados_aio_get_version(cc[i]);
		rados_aio_release(cc[i]);
		bs[i].rc = -ENOENT;
		bs[i].version = 0;
		if (s->base) {
			bs[i].rc = -EIO;
		}
		if (bc[i]) {
			rados_aio_wait_for_complete(bc[i]);
			bs[i].rc = rados_aio_get_return_value(bc[i]);
			bs[i].version = rados_aio_get_version(bc[i]);
			rados_aio_release(bc[i]);
		}
	}
	return err;
}

/* Whether object @k may differ (see the head of this file). */
static bool snapread_candidate(const struct snapread *s, uint64_t k,
			       const struct snapread_stat *c,
			       const struct snapread_stat *b)
{
	uint64_t end = (k + 1) * s->obj_bytes;
	uint64_t both = s->size < s->base_size ? s->size : s->base_size;

	if (c->rc == -ENOENT && b->rc == -ENOENT) {
		return false;
	}
	if (c->rc != 0 || b->rc != 0) {
		return true;
	}
	return !(c->version != 0 && c->version == b->version &&
		 c->size == b->size && c->mtime == b->mtime &&
		 (s->size == s->base_size || end <= both));
}

static int snapread_add(struct snapread *s, uint64_t k)
{
	uint64_t off = k * s->obj_bytes;
	uint64_t len =
		s->size - off < s->obj_bytes ? s->size - off : s->obj_bytes;

	if (s->n && s->r[s->n - 1].off + s->r[s->n - 1].len == off) {
		s->r[s->n - 1].len += len;
		return 0;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct store_range *grown = realloc(s->r, cap * sizeof(*grown));

		if (!grown) {
			return -ENOMEM;
		}
		s->r = grown;
		s->cap = cap;
	}
	s->r[s->n].off = off;
	s->r[s->n].len = len;
	s->n++;
	return 0;
}

/* An I/O context of pool @pool reading at snapshot @snapid.  Owned. */
static int snapread_ioctx(struct store_cephfs *sc, int64_t pool,
			  uint64_t snapid, rados_ioctx_t *out)
{
	int rc = rados_ioctx_create2(sc->rados, pool, out);

	if (rc) {
		return rc;
	}
	rados_ioctx_snap_set_read(*out, snapid);
	return 0;
}

static int snapread_run(struct snapread *s)
{
	struct snapread_stat cs[SNAPREAD_WINDOW], bs[SNAPREAD_WINDOW];
	uint64_t nobj = (s->size + s->obj_bytes - 1) / s->obj_bytes;
	int err = 0;

	for (uint64_t k = 0; k < nobj && !err; k += SNAPREAD_WINDOW) {
		size_t count = nobj - k < SNAPREAD_WINDOW ? (size_t)(nobj - k)
							  : SNAPREAD_WINDOW;

		err = snapread_window(s, k, count, cs, bs);
		for (size_t i = 0; i < count && !err; i++) {
			if (cs[i].rc != 0 && cs[i].rc != -ENOENT) {
				err = cs[i].rc; /* the new snapshot's own */
			} else if (snapread_candidate(s, k + i, &cs[i],
						      &bs[i])) {
				err = snapread_add(s, k + i);
			}
		}
	}
	return err;
}

int store__cephfs_snap_changed(struct store *st, struct store_obj *curp,
			       struct store_obj *basep, uint64_t size,
			       uint64_t base_size, struct store_range **out,
			       size_t *n)
{
	struct store_cephfs *sc = store__cephfs(st);
	struct cephfs_obj *cur = store__cephfs_obj(curp);
	struct cephfs_obj *base = basep ? store__cephfs_obj(basep) : NULL;
	struct ceph_file_layout layout;
	struct snapread s = { .size = size, .base_size = base_size };
	int err;

	*out = NULL;
	*n = 0;
	/* Another inode under the base's name (the file replaced): its
	 * objects are not this one's; the engine compares it whole. */
	if (!sc->rados_ok || cur->type != STORE_REG ||
	    cur->snapid == CEPH_NOSNAP || cur->snapid == CEPH_SNAPDIR ||
	    (base && (base->ino != cur->ino || base->snapid == CEPH_NOSNAP ||
		      base->snapid == CEPH_SNAPDIR))) {
		return -EOPNOTSUPP;
	}
	memset(&layout, 0, sizeof(layout));
	ceph_ll_file_layout(sc->cm, cur->in, &layout);
	if (layout.fl_object_size == 0 || layout.fl_stripe_count != 1 ||
	    layout.fl_stripe_unit != layout.fl_object_size) {
		return -EOPNOTSUPP;
	}
	if (!size) {
		return 0;
	}
	/* A snapshot's data still in this client's buffers is not in its
	 * objects yet. */
	err = store__cephfs_err(ceph_sync_fs(sc->cm));
	if (err) {
		return err;
	}
	s.ino = cur->ino;
	s.obj_bytes = layout.fl_object_size;
	err = snapread_ioctx(sc, (int64_t)layout.fl_pg_pool, cur->snapid,
			     &s.cur);
	if (err) {
		return err;
	}
	if (base) {
		err = snapread_ioctx(sc, (int64_t)layout.fl_pg_pool,
				     base->snapid, &s.base);
	}
	if (!err) {
		err = snapread_run(&s);
	}
	if (s.base) {
		rados_ioctx_destroy(s.base);
	}
	rados_ioctx_destroy(s.cur);
	if (err) {
		free(s.r);
		return err;
	}
	*out = s.r;
	*n = s.n;
	return 0;
}
