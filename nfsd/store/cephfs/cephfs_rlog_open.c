// SPDX-License-Identifier: Apache-2.0
/*
 * cephfs_rlog_open: opening the RADOS intent log of a cephfs datastore
 * (cephfs_rlog.h), and closing it.  In order, before the datastore
 * serves: connect librados (a client of the log's own, whose address the
 * header records), read the header; when the last owner did not close
 * cleanly (a crash, a kill, a failover), blocklist the addresses it
 * recorded (its librados and libcephfs clients) and wait for the OSD map
 * that carries them, so nothing it still has in flight lands after the
 * replay; replay the records after the head into CephFS and fsync the
 * files; then write a fresh header (a new salt: the old records end any
 * later replay) naming this gateway's clients, and start the threads.
 */
#include "nfsd/store/cephfs/cephfs_rlog.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "nfsd/base/log.h"

/* Replay reads the ring in pieces of this size. */
#define STORE_RLOG_READ_BYTES (4u << 20)

static int store_rlog_refuse(char *errbuf, size_t errlen,
			     const struct store_rlog *rl, int err,
			     const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int store_rlog_refuse(char *errbuf, size_t errlen,
			     const struct store_rlog *rl, int err,
			     const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (errbuf && errlen) {
		snprintf(errbuf, errlen,
			 "datastore %s: intent_log rados %s/%s: %s",
			 rl->sc->base.name, rl->pool, rl->oid, why);
	}
	return err;
}

/* Connects the log's librados client and opens the file system's data
 * pool. */
static int store_rlog_connect(struct store_rlog *rl,
			      const struct store_rlog_params *p, char *errbuf,
			      size_t errlen)
{
	int rc;

	rc = ceph_get_default_data_pool_name(rl->sc->cm, rl->pool,
					     sizeof(rl->pool));
	if (rc < 0) {
		return store_rlog_refuse(errbuf, errlen, rl, rc,
					 "data pool: %s", strerror(-rc));
	}
	rc = rados_create(&rl->rados, p->ceph_user);
	if (rc < 0) {
		return store_rlog_refuse(errbuf, errlen, rl, rc,
					 "rados_create: %s", strerror(-rc));
	}
	/* No OSD op timeout: a log write waits for a cluster that is
	 * away (the health monitor answers JUKEBOX meanwhile) instead of
	 * failing the log for good. */
	rc = rados_conf_read_file(rl->rados, p->ceph_conf);
	if (!rc) {
		rc = rados_conf_set(rl->rados, "rados_mon_op_timeout", "10");
	}
	if (!rc) {
		rc = rados_connect(rl->rados);
	}
	if (!rc) {
		rc = rados_ioctx_create(rl->rados, rl->pool, &rl->io);
	}
	if (rc < 0) {
		rados_shutdown(rl->rados);
		rl->rados = NULL;
		return store_rlog_refuse(errbuf, errlen, rl, rc,
					 "cannot connect: %s", strerror(-rc));
	}
	return 0;
}

/* Blocklists every address of the list @addrs. */
static int store_rlog_fence_list(struct store_rlog *rl, const char *addrs,
				 char *errbuf, size_t errlen)
{
	char bad[STORE_CEPHFS_ADDRS_MAX];
	int rc = store__cephfs_blocklist(rl->rados, addrs, STORE_CEPHFS_FENCE_S,
					 bad, sizeof(bad));

	if (rc < 0) {
		return store_rlog_refuse(
			errbuf, errlen, rl, rc,
			"cannot fence the last owner's client %s "
			"(rados_blocklist_add: %s; the log is not "
			"replayed while it may still write): refused",
			bad, strerror(-rc));
	}
	return 0;
}

/* Fences the last owner of a log it did not close. */
static int store_rlog_fence(struct store_rlog *rl,
			    const struct store_rlog_owner *old, char *errbuf,
			    size_t errlen)
{
	int rc = 0;

	for (int i = 0; i < 2 && !rc; i++) {
		rc = store_rlog_fence_list(rl, old->addr[i], errbuf, errlen);
	}
	/* Our later reads and writes go after the map that fences it. */
	if (!rc) {
		rc = rados_wait_for_latest_osdmap(rl->rados);
	}
	if (rc < 0) {
		return rc;
	}
	log_warn("rlog: %s: %s/%s: the last owner, gateway %s, did not close "
		 "its log: fenced its clients %s and %s (blocklisted for %u "
		 "s) before the replay",
		 rl->sc->base.name, rl->pool, rl->oid, old->gateway,
		 old->addr[0][0] ? old->addr[0] : "-",
		 old->addr[1][0] ? old->addr[1] : "-", STORE_CEPHFS_FENCE_S);
	return 0;
}

/* Reads the old ring from @sb's head on, unwrapped, into a new buffer of
 * sb->ring_bytes (bytes the object does not have read as zeros). */
static int store_rlog_read_ring(struct store_rlog *rl,
				const struct store_ilog_super *sb,
				uint8_t **out)
{
	uint64_t ring = sb->ring_bytes;
	uint8_t *buf = calloc(1, ring);

	if (!buf) {
		return -ENOMEM;
	}
	for (uint64_t done = 0; done < ring;) {
		uint64_t pos = (sb->head_lsn + done) % ring;
		uint64_t n =
			ring - pos < ring - done ? ring - pos : ring - done;
		int rc;

		if (n > STORE_RLOG_READ_BYTES) {
			n = STORE_RLOG_READ_BYTES;
		}
		rc = rados_read(rl->io, rl->oid, (char *)buf + done, n,
				STORE_RLOG_HEADER_BYTES + pos);
		if (rc < 0) {
			free(buf);
			return rc;
		}
		done += n;
	}
	*out = buf;
	return 0;
}

/* Replay's state: the files it wrote (each held once, linked through
 * rlog_next) and its counters. */
struct store_rlog_replay {
	struct store_rlog *rl;
	struct cephfs_obj *files;
	uint64_t skipped;
};

/* store_rlog_rec_fn: one WRITE record into its file. */
static int store_rlog_replay_rec(void *arg, const struct store_ilog_rec *rec)
{
	struct store_rlog_replay *rp = arg;
	struct store_cephfs *sc = rp->rl->sc;
	struct store_obj *obj = NULL;
	struct cephfs_obj *o;
	struct Fh *fh;
	int err;

	err = store__cephfs_resolve(&sc->base, &rec->fh, &obj);
	/* Removed since (its handle is the inode), or not ours. */
	if (err == -ESTALE || err == -STORE_EBADHANDLE) {
		rp->skipped++;
		return 0;
	}
	if (err) {
		return err;
	}
	o = store__cephfs_obj(obj);
	err = o->snapid == CEPH_NOSNAP ? store__cephfs_obj_io(o, &fh) : -EROFS;
	if (!err) {
		err = store__cephfs_write_all(sc, fh, rec->off_bytes, rec->data,
					      rec->data_len);
	}
	if (!err && !o->rlog_dirty) {
		o->rlog_dirty = true;
		o->rlog_next = rp->files;
		rp->files = o;
		return 0;
	}
	store__cephfs_obj_unref(obj);
	return err;
}

/* Fsyncs and drops the files replay wrote.  0 or the first -errno. */
static int store_rlog_replay_sync(struct store_rlog_replay *rp)
{
	int first = 0;

	while (rp->files) {
		struct cephfs_obj *o = rp->files;
		int rc;

		rp->files = o->rlog_next;
		o->rlog_dirty = false;
		o->rlog_next = NULL;
		rc = store__cephfs_sync_fh(o, STORE_FILE_SYNC);
		if (rc && !first) {
			first = rc;
		}
		store__cephfs_obj_unref(store__cephfs_pub(o));
	}
	return first;
}

/* Replays the log of @sb into CephFS. */
static int store_rlog_replay(struct store_rlog *rl,
			     const struct store_ilog_super *sb, char *errbuf,
			     size_t errlen)
{
	struct store_rlog_replay rp = { .rl = rl };
	struct store_rlog_scan_end end;
	uint8_t *ring;
	int err;

	err = store_rlog_read_ring(rl, sb, &ring);
	if (err) {
		return store_rlog_refuse(errbuf, errlen, rl, err,
					 "cannot read the log: %s",
					 strerror(-err));
	}
	store__rlog_scan(ring, sb->ring_bytes, sb->salt, sb->head_lsn,
			 store_rlog_replay_rec, &rp, &end);
	free(ring);
	/* The files written so far are made stable even when the replay
	 * stopped: what was replayed stays replayed. */
	err = store_rlog_replay_sync(&rp);
	if (end.err == -EBADMSG || end.err == -EINVAL) {
		log_error("rlog: %s: %s/%s: the record at LSN %" PRIu64
			  " is corrupt (%s): replay stops there, %" PRIu64
			  " records replayed; nothing after it is",
			  rl->sc->base.name, rl->pool, rl->oid, end.end_lsn,
			  end.err == -EBADMSG ? "checksum"
					      : "a field out of "
						"bounds",
			  end.records);
	} else if (end.err) {
		return store_rlog_refuse(errbuf, errlen, rl, end.err,
					 "replay: a write into CephFS failed "
					 "at LSN %" PRIu64 ": %s (the log is "
					 "kept)",
					 end.end_lsn, strerror(-end.err));
	}
	if (err) {
		return store_rlog_refuse(errbuf, errlen, rl, err,
					 "replay: fsync failed: %s (the log "
					 "is kept)",
					 strerror(-err));
	}
	rl->stats.replayed = end.records;
	rl->stats.replay_skipped = rp.skipped;
	log_info("rlog: %s: %s/%s: replayed %" PRIu64 " records (%" PRIu64
		 " of removed files skipped), LSN %" PRIu64 " to %" PRIu64,
		 rl->sc->base.name, rl->pool, rl->oid, end.records, rp.skipped,
		 sb->head_lsn, end.end_lsn);
	return 0;
}

/* Reads the header: fences and replays an old log.  *seq: the next
 * header's. */
static int store_rlog_recover(struct store_rlog *rl, uint64_t *seq,
			      char *errbuf, size_t errlen)
{
	uint8_t *hdr = calloc(1, STORE_RLOG_HEADER_BYTES);
	struct store_rlog_owner old;
	struct store_ilog_super sb;
	int rc;

	*seq = 1;
	if (!hdr) {
		return -ENOMEM;
	}
	rc = rados_read(rl->io, rl->oid, (char *)hdr, STORE_RLOG_HEADER_BYTES,
			0);
	if (rc == -ENOENT || rc == 0) {
		free(hdr);
		return 0;
	}
	if (rc < 0) {
		free(hdr);
		return store_rlog_refuse(errbuf, errlen, rl, rc,
					 "cannot read the header: %s",
					 strerror(-rc));
	}
	rc = store__rlog_header_decode(hdr, &sb, &old);
	free(hdr);
	if (rc) {
		/* Not ours to overwrite: an operator looks first. */
		return store_rlog_refuse(errbuf, errlen, rl, -EINVAL,
					 "the object exists but its header "
					 "is %s: refused, left as it was",
					 rc == -ENODATA ? "not a log's"
							: "damaged");
	}
	*seq = sb.seq + 1;
	if (old.clean) {
		return 0;
	}
	rc = store_rlog_fence(rl, &old, errbuf, errlen);
	return rc ? rc : store_rlog_replay(rl, &sb, errbuf, errlen);
}

/* This gateway's clients, for the header (the next owner fences them). */
static void store_rlog_owner_set(struct store_rlog *rl, const char *gateway)
{
	char *a = NULL;

	snprintf(rl->owner.gateway, sizeof(rl->owner.gateway), "%s", gateway);
	if (rados_getaddrs(rl->rados, &a) == 0 && a) {
		snprintf(rl->owner.addr[0], sizeof(rl->owner.addr[0]), "%s", a);
	}
	free(a);
	a = NULL;
	if (ceph_getaddrs(rl->sc->cm, &a) == 0 && a) {
		snprintf(rl->owner.addr[1], sizeof(rl->owner.addr[1]), "%s", a);
	}
	free(a);
	rl->owner.clean = false;
}

/* A fresh log: new salt, head 0, the object truncated to its header (no
 * old bytes left to read as records). */
static int store_rlog_start(struct store_rlog *rl, uint64_t seq)
{
	uint8_t *hdr = calloc(1, STORE_RLOG_HEADER_BYTES);
	int rc;

	if (!hdr) {
		return -ENOMEM;
	}
	if (getrandom(&rl->sb.salt, sizeof(rl->sb.salt), 0) !=
	    sizeof(rl->sb.salt)) {
		free(hdr);
		return -EIO;
	}
	rl->sb.head_lsn = 0;
	rl->sb.seq = seq;
	rl->sb.ring_bytes = rl->ring_bytes;
	store__rlog_header_encode(hdr, &rl->sb, &rl->owner);
	rc = rados_write_full(rl->io, rl->oid, (const char *)hdr,
			      STORE_RLOG_HEADER_BYTES);
	free(hdr);
	return rc < 0 ? rc : 0;
}

static int store_rlog_init(struct store_rlog *rl)
{
	lsnwait_init(&rl->durable);
	if (pthread_mutex_init(&rl->lock, NULL) ||
	    pthread_cond_init(&rl->flush_cv, NULL) ||
	    pthread_cond_init(&rl->space_cv, NULL) ||
	    pthread_cond_init(&rl->flusher_cv, NULL) ||
	    pthread_cond_init(&rl->ckpt_cv, NULL)) {
		return -ENOMEM;
	}
	for (unsigned i = 0; i < STORE_RLOG_STRIPES; i++) {
		if (pthread_mutex_init(&rl->order[i], NULL)) {
			return -ENOMEM;
		}
	}
	for (unsigned i = 0; i < STORE_RLOG_NBUF; i++) {
		rl->buf[i] = malloc(STORE_ILOG_BATCH_BYTES);
		if (!rl->buf[i]) {
			return -ENOMEM;
		}
	}
	return 0;
}

/* Frees @rl (threads stopped). */
static void store_rlog_free(struct store_rlog *rl)
{
	/* Abandoned with files not checkpointed: their references. */
	while (rl->dirty) {
		struct cephfs_obj *o = rl->dirty;

		rl->dirty = o->rlog_next;
		o->rlog_dirty = false;
		store__cephfs_obj_unref(store__cephfs_pub(o));
	}
	if (rl->rados) {
		store__cephfs_rlog_fence_drop(rl);
		rados_ioctx_destroy(rl->io);
		rados_shutdown(rl->rados);
	}
	for (unsigned i = 0; i < STORE_RLOG_NBUF; i++) {
		free(rl->buf[i]);
	}
	pthread_cond_destroy(&rl->ckpt_cv);
	pthread_cond_destroy(&rl->flusher_cv);
	pthread_cond_destroy(&rl->space_cv);
	pthread_cond_destroy(&rl->flush_cv);
	pthread_mutex_destroy(&rl->lock);
	/* Never-initialized mutexes are zeros: destroying them is a no-op
	 * in glibc, as for the conds above. */
	for (unsigned i = 0; i < STORE_RLOG_STRIPES; i++) {
		pthread_mutex_destroy(&rl->order[i]);
	}
	free(rl);
}

/* Stops the threads (they finish what is queued unless the log failed). */
static void store_rlog_stop(struct store_rlog *rl)
{
	if (!rl->threads) {
		return;
	}
	pthread_mutex_lock(&rl->lock);
	rl->stop = true;
	pthread_cond_broadcast(&rl->flusher_cv);
	pthread_cond_broadcast(&rl->ckpt_cv);
	pthread_mutex_unlock(&rl->lock);
	pthread_join(rl->flusher, NULL);
	pthread_join(rl->ckpt, NULL);
	rl->threads = false;
}

int store__cephfs_rlog_open(struct store_cephfs *sc,
			    const struct store_rlog_params *p, char *errbuf,
			    size_t errlen)
{
	struct store_rlog *rl = calloc(1, sizeof(*rl));
	uint64_t seq;
	int err;

	if (!rl) {
		return -ENOMEM;
	}
	rl->sc = sc;
	rl->ring_bytes = p->ring_bytes < STORE_RLOG_RING_MAX
				 ? p->ring_bytes
				 : STORE_RLOG_RING_MAX;
	rl->checkpoint_ms = p->checkpoint_ms;
	rl->inplace_min_bytes = p->inplace_min_bytes;
	err = store__rlog_oid(rl->oid, sizeof(rl->oid), sc->base.name,
			      p->gateway);
	if (!err) {
		err = store_rlog_init(rl);
	}
	if (err || rl->ring_bytes < STORE_ILOG_RING_MIN ||
	    rl->ring_bytes % STORE_ILOG_BLOCK) {
		err = store_rlog_refuse(errbuf, errlen, rl, err ? err : -EINVAL,
					"cannot set up: %s",
					err ? strerror(-err)
					    : "ring size out of bounds");
		goto out_free;
	}
	err = store_rlog_connect(rl, p, errbuf, errlen);
	if (!err) {
		err = store_rlog_recover(rl, &seq, errbuf, errlen);
	}
	if (err) {
		goto out_free;
	}
	store_rlog_owner_set(rl, p->gateway);
	err = store_rlog_start(rl, seq);
	if (err) {
		store_rlog_refuse(errbuf, errlen, rl, err,
				  "cannot write the header: %s",
				  strerror(-err));
		goto out_free;
	}
	if (pthread_create(&rl->flusher, NULL, store__cephfs_rlog_flusher_main,
			   rl) != 0) {
		err = -EAGAIN;
		goto out_free;
	}
	if (pthread_create(&rl->ckpt, NULL, store__cephfs_rlog_ckpt_main, rl) !=
	    0) {
		pthread_mutex_lock(&rl->lock);
		rl->stop = true;
		pthread_cond_broadcast(&rl->flusher_cv);
		pthread_mutex_unlock(&rl->lock);
		pthread_join(rl->flusher, NULL);
		err = -EAGAIN;
		goto out_free;
	}
	rl->threads = true;
	log_info("rlog: %s: stable writes logged in %s/%s (ring %" PRIu64
		 " MiB, checkpoint every %u ms; gateway %s, clients %s, %s)",
		 sc->base.name, rl->pool, rl->oid, rl->ring_bytes >> 20,
		 rl->checkpoint_ms, p->gateway, rl->owner.addr[0],
		 rl->owner.addr[1]);
	sc->rlog = rl;
	return 0;

out_free:
	store_rlog_free(rl);
	return err;
}

void store__cephfs_rlog_close(struct store_rlog *rl)
{
	uint8_t hdr[STORE_RLOG_HEADER_BYTES];
	struct store_ilog_stats st;
	int err;

	if (!rl) {
		return;
	}
	pthread_mutex_lock(&rl->lock);
	while (!rl->err && rl->tail_lsn > rl->head_lsn) {
		store__cephfs_rlog_checkpoint_locked(rl);
	}
	err = rl->err;
	st = rl->stats;
	pthread_mutex_unlock(&rl->lock);
	store_rlog_stop(rl);
	/* Clean: the next owner replays nothing and fences no one. */
	if (!err) {
		rl->owner.clean = true;
		store__rlog_header_encode(hdr, &rl->sb, &rl->owner);
		err = store__cephfs_rlog_put_header(rl, hdr);
	}
	log_info("rlog: %s: %s/%s closed%s: %" PRIu64 " records, %" PRIu64
		 " flushes, %" PRIu64 " checkpoints, %" PRIu64
		 " full waits; %" PRIu64 " stable writes in place",
		 rl->sc->base.name, rl->pool, rl->oid,
		 err ? " (not clean: the next start replays it)" : "",
		 st.records, st.flushes, st.checkpoints, st.full_waits,
		 (uint64_t)atomic_load(&rl->inplace_writes));
	store_rlog_free(rl);
}

void store__cephfs_rlog_abandon(struct store_rlog *rl)
{
	if (!rl) {
		return;
	}
	pthread_mutex_lock(&rl->lock);
	rl->err = -ECANCELED;
	store__cephfs_rlog_wake_failed(rl);
	pthread_mutex_unlock(&rl->lock);
	store_rlog_stop(rl);
	store_rlog_free(rl);
}

int store_cephfs_rlog_open(struct store *st, const struct store_rlog_params *p,
			   char *errbuf, size_t errlen)
{
	struct store_rlog_params q = *p;

	if (!q.ceph_user || !q.ceph_user[0]) {
		q.ceph_user = "admin";
	}
	return store__cephfs_rlog_open(store__cephfs(st), &q, errbuf, errlen);
}
