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
 * - present at both, inside both files, but written in between: the
 *   OSDs hash each whole 64 KiB block below both objects' sizes at both
 *   snapshots (rados_checksum, xxhash64, which honours the read
 *   snapshot): the blocks whose hashes differ are candidates, and what
 *   lies past them up to the larger size; the others are left out
 *   unread (the whole object when the hashes cannot be had);
 * - anything else (new, gone, an error of one stat, an object the
 *   file's end cuts): a candidate whole.
 *
 * The engine (lanes.c) reads each candidate block at both snapshots and
 * compares the bytes before it sends anything.
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
/* The blocks hashed: the replication engine's (REPL_BLOCK). */
#define SNAPREAD_BLOCK 65536u
/* Hashes of one object at most (objects up to 64 MiB). */
#define SNAPREAD_BLOCKS_MAX 1024u

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
/* Whether object @k lies inside both files (or their sizes are the
 * same): past the base's end its bytes are not the base file's. */
static bool snapread_inside(const struct snapread *s, uint64_t k)
{
	uint64_t both = s->size < s->base_size ? s->size : s->base_size;

	return s->size == s->base_size || (k + 1) * s->obj_bytes <= both;
}

static bool snapread_candidate(const struct snapread *s, uint64_t k,
			       const struct snapread_stat *c,
			       const struct snapread_stat *b)
{
	if (c->rc == -ENOENT && b->rc == -ENOENT) {
		return false;
	}
	if (c->rc != 0 || b->rc != 0) {
		return true;
	}
	return !(c->version != 0 && c->version == b->version &&
		 c->size == b->size && c->mtime == b->mtime &&
		 snapread_inside(s, k));
}

/* [@off, @off + @len) as a candidate, cut at the file's end. */
static int snapread_add(struct snapread *s, uint64_t off, uint64_t len)
{
	if (off >= s->size) {
		return 0;
	}
	len = s->size - off < len ? s->size - off : len;
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

static uint64_t snapread_le64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--) {
		v = v << 8 | p[i];
	}
	return v;
}

/* The OSD's xxhash64 of each SNAPREAD_BLOCK of the first @n blocks of
 * object @name at @io's read snapshot, into @out.  0 or -errno. */
static int snapread_sums(rados_ioctx_t io, const char *name, size_t n,
			 uint64_t *out)
{
	unsigned char res[4 + 8 * SNAPREAD_BLOCKS_MAX];
	const char seed[8] = { 0 };
	uint32_t count;
	int rc;

	rc = rados_checksum(io, name, LIBRADOS_CHECKSUM_TYPE_XXHASH64, seed,
			    sizeof(seed), n * SNAPREAD_BLOCK, 0, SNAPREAD_BLOCK,
			    (char *)res, 4 + 8 * n);
	if (rc < 0) {
		return rc;
	}
	count = (uint32_t)res[0] | (uint32_t)res[1] << 8 |
		(uint32_t)res[2] << 16 | (uint32_t)res[3] << 24;
	if (count != n) {
		return -EIO;
	}
	for (size_t i = 0; i < n; i++) {
		out[i] = snapread_le64(res + 4 + 8 * i);
	}
	return 0;
}

/* Object @k, @csize and @bsize bytes at the two snapshots and inside
 * both files, was written in between: its whole blocks below both sizes
 * whose hashes differ, and what lies past them up to the larger size
 * (the whole object when the hashes cannot be had). */
static int snapread_blocks(struct snapread *s, uint64_t k, uint64_t csize,
			   uint64_t bsize)
{
	uint64_t cur[SNAPREAD_BLOCKS_MAX], base[SNAPREAD_BLOCKS_MAX];
	uint64_t off = k * s->obj_bytes;
	uint64_t osize = csize > bsize ? csize : bsize;
	size_t n = (size_t)((csize < bsize ? csize : bsize) / SNAPREAD_BLOCK);
	char name[48];
	int err = 0;

	snprintf(name, sizeof(name), "%" PRIx64 ".%08" PRIx64, s->ino, k);
	if (n > SNAPREAD_BLOCKS_MAX ||
	    (n && snapread_sums(s->cur, name, n, cur)) ||
	    (n && snapread_sums(s->base, name, n, base))) {
		return snapread_add(s, off, s->obj_bytes);
	}
	for (size_t i = 0; i < n && !err; i++) {
		if (cur[i] != base[i]) {
			err = snapread_add(s, off + i * SNAPREAD_BLOCK,
					   SNAPREAD_BLOCK);
		}
	}
	/* Past the smaller object's last whole block: compared by the
	 * engine.  Past the larger's size both read zeros. */
	if (!err && osize > n * SNAPREAD_BLOCK) {
		err = snapread_add(s, off + n * SNAPREAD_BLOCK,
				   osize - n * SNAPREAD_BLOCK);
	}
	return err;
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
			} else if (!snapread_candidate(s, k + i, &cs[i],
						       &bs[i])) {
				continue;
			} else if (cs[i].rc == 0 && bs[i].rc == 0 &&
				   snapread_inside(s, k + i)) {
				err = snapread_blocks(s, k + i, cs[i].size,
						      bs[i].size);
			} else {
				err = snapread_add(s, (k + i) * s->obj_bytes,
						   s->obj_bytes);
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
