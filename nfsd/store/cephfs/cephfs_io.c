// SPDX-License-Identifier: Apache-2.0
/*
 * cephfs_io: READ, WRITE and COMMIT of the cephfs backend (RFC 1813 3.3.6,
 * 3.3.7, 3.3.21) through the object's open file (ceph_ll_read,
 * ceph_ll_write, ceph_ll_fsync).
 *
 * Durability, as on the local backend: an UNSTABLE write may stay in the
 * gateway's client cache until COMMIT; DATA_SYNC is written and
 * ceph_ll_fsync(dataonly) (the OSDs have it: with the pool's replicas);
 * FILE_SYNC and COMMIT ceph_ll_fsync the data and the metadata (size,
 * mtime, through the MDS).  Concurrent stable writes and COMMITs of one
 * file share one sync (syncgroup.h), with the same sticky error: after a
 * failed sync no caller of that open file is told its data is stable.
 * With the RADOS intent log (intent_log = rados; cephfs_rlog.h) a
 * DATA_SYNC or FILE_SYNC write below intent_log_inplace_min_bytes is
 * stable once its record is in the log; a larger one goes in place, as
 * COMMIT does: after a checkpoint of the file's records, then synced.
 */
#include "nfsd/store/cephfs/cephfs_rlog.h"

#include <errno.h>
#include <stdint.h>

/*
 * Up to @count bytes at @off_bytes into @buf, over short reads until
 * @count or the end of the file (a read of 0): the count in *nread; *end
 * when the read stopped short (it met the end) or at INT64_MAX.
 */
static int store_cephfs_read_at(struct store_cephfs *sc, struct cephfs_obj *o,
				uint64_t off_bytes, void *buf, uint32_t count,
				uint32_t *nread, bool *end)
{
	uint32_t done = 0;
	uint64_t t0;
	struct Fh *fh;
	int rc;

	*nread = 0;
	*end = false;
	rc = store__cephfs_obj_io(o, &fh);
	if (rc) {
		return rc;
	}
	if (off_bytes >= INT64_MAX) {
		*end = true;
		return 0;
	}
	if (count > INT64_MAX - off_bytes) {
		count = (uint32_t)(INT64_MAX - off_bytes);
	}
	t0 = store__cephfs_now_ns();
	while (done < count) {
		rc = ceph_ll_read(sc->cm, fh, (int64_t)(off_bytes + done),
				  count - done, (char *)buf + done);
		if (rc < 0) {
			return store__cephfs_err(rc);
		}
		if (rc == 0) {
			break;
		}
		done += (uint32_t)rc;
	}
	store__cephfs_prefetch_note(o, off_bytes, done,
				    store__cephfs_now_ns() - t0);
	*nread = done;
	*end = done < count || off_bytes + done >= INT64_MAX;
	return 0;
}

int store__cephfs_read(struct store *st, struct store_obj *obj,
		       uint64_t off_bytes, void *buf, uint32_t count,
		       uint32_t *nread, bool *eof)
{
	struct store_cephfs *sc = store__cephfs(st);
	struct cephfs_obj *o = store__cephfs_obj(obj);
	struct ceph_statx stx;
	uint32_t done;
	bool end;
	int rc;

	*nread = 0;
	rc = store_cephfs_read_at(sc, o, off_bytes, buf, count, &done, &end);
	if (rc) {
		return rc;
	}
	if (off_bytes >= INT64_MAX) {
		*eof = true;
		return 0;
	}
	rc = ceph_ll_getattr(sc->cm, o->in, &stx, CEPH_STATX_SIZE, 0,
			     sc->root_perms);
	if (rc) {
		return store__cephfs_err(rc);
	}
	*nread = done;
	*eof = off_bytes + done >= stx.stx_size;
	return 0;
}

int store__cephfs_read_sized(struct store *st, struct store_obj *obj,
			     uint64_t size_bytes, uint64_t off_bytes, void *buf,
			     uint32_t count, uint32_t *nread, bool *eof)
{
	bool end;
	int rc;

	rc = store_cephfs_read_at(store__cephfs(st), store__cephfs_obj(obj),
				  off_bytes, buf, count, nread, &end);
	if (rc) {
		return rc;
	}
	/* A file that shrank since the caller's stat ends sooner (a short
	 * read); one that grew is read up to the size the caller reports. */
	*eof = end || off_bytes + *nread >= size_bytes;
	return 0;
}

/* @o's data (and with FILE_SYNC its metadata) stable; with a RADOS log,
 * after a checkpoint of the file's records: newer bytes written over
 * logged ones must not be undone by a replay of them once stable. */
static int store_cephfs_sync(struct store *st, struct cephfs_obj *o,
			     enum store_stable level, bool *sync_failed)
{
	int err = 0;

	if (o->sc->rlog) {
		err = store__cephfs_rlog_settle(o->sc->rlog, o);
	}
	if (!err) {
		err = store__syncgroup_sync(&o->sync, level, st->group_commit,
					    store__cephfs_sync_fh, o);
	}
	*sync_failed = err != 0;
	return err;
}

int store__cephfs_write(struct store *st, struct store_obj *obj,
			uint64_t off_bytes, const void *buf, uint32_t count,
			enum store_stable stable, bool *sync_failed)
{
	struct store_cephfs *sc = store__cephfs(st);
	struct cephfs_obj *o = store__cephfs_obj(obj);
	struct Fh *fh;
	int rc;

	*sync_failed = false;
	/* A snapshot's file: libcephfs asserts on a write to it. */
	if (o->snapid != CEPH_NOSNAP) {
		return -EROFS;
	}
	rc = store__cephfs_obj_io(o, &fh);
	if (rc) {
		return rc;
	}
	if (off_bytes > INT64_MAX || count > INT64_MAX - off_bytes) {
		return -EFBIG;
	}
	if (stable != STORE_UNSTABLE && sc->rlog &&
	    store__cephfs_rlog_takes(sc->rlog, count)) {
		rc = store__cephfs_rlog_write(sc->rlog, o, fh, off_bytes, buf,
					      count, sync_failed);
		if (!rc) {
			store__cephfs_used_wrote(o, off_bytes, count);
		}
		return rc;
	}
	store__cephfs_write_fair(o);
	rc = store__cephfs_write_all(sc, fh, off_bytes, buf, count);
	if (rc) {
		return rc;
	}
	store__cephfs_used_wrote(o, off_bytes, count);
	if (stable == STORE_UNSTABLE) {
		return 0;
	}
	return store_cephfs_sync(st, o, stable, sync_failed);
}

int store__cephfs_commit(struct store *st, struct store_obj *obj,
			 uint64_t off_bytes, uint32_t count, bool *sync_failed)
{
	struct cephfs_obj *o = store__cephfs_obj(obj);
	struct Fh *fh;
	int rc;

	(void)off_bytes;
	(void)count;
	*sync_failed = false;
	rc = store__cephfs_obj_io(o, &fh);
	if (rc || o->snapid != CEPH_NOSNAP) {
		return rc; /* a snapshot holds nothing unstable */
	}
	return store_cephfs_sync(st, o, STORE_FILE_SYNC, sync_failed);
}
