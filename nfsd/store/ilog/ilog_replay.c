// SPDX-License-Identifier: Apache-2.0
/*
 * ilog_replay: brings the files up to date from the intent log at start
 * (ilog.h).  Records after the checkpoint are written again to their files,
 * found by handle through the store whose export id the handle carries;
 * writing a byte range twice is harmless because nothing that replaced
 * those bytes can be stable (COMMIT and size changes settle first).  A
 * file that is gone (ESTALE: removed since) or an export no longer served
 * skips its records.  The first record that is not whole ends the replay:
 * a bad checksum followed by nothing valid is a torn tail (a warning: the
 * flush that wrote it never returned, so nobody was told it was stable);
 * one followed by a valid record is corruption (an error: the records after
 * it are lost).  Every file written is fsynced before the log is reused.
 *
 * SYNCED records (a large write made stable in its file, ilog.h) are
 * gathered by a first pass over the same records: a WRITE record of a
 * file is then replayed except where a later SYNCED range of that file
 * covers it (the record is older than upto), since those bytes in the
 * file are newer and stable.  The first pass stops where the second does.
 */
#include "nfsd/store/ilog/ilog_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nfsd/base/log.h"

/* A SYNCED record: @fh's bytes [off, end) are stable and newer than its
 * records ending at or below @upto. */
struct store_ilog_mask {
	struct store_fh fh;
	uint64_t upto, off, end;
};

struct store_ilog_span {
	uint64_t off, end;
};

struct store_ilog_replay {
	const char *path;
	int fd;
	const struct store_ilog_super *sb;
	struct store *const *stores;
	size_t nstores;
	uint8_t *buf; /* STORE_ILOG_REC_MAX */
	struct local_obj **touched; /* owned references */
	size_t ntouched, cap;
	/* The SYNCED records, by handle then LSN (first pass). */
	struct store_ilog_mask *masks;
	size_t nmasks, mask_cap;
	/* Scratch: the masked parts of one record, by offset. */
	struct store_ilog_span *spans;
	size_t span_cap;
	uint64_t masked; /* records replayed in part or not at all */
};

/* Reads @len bytes of the ring at @lsn (across its end).  0, -ENODATA on
 * a short file, or -errno. */
static int store_ilog_ring_read(const struct store_ilog_replay *r, uint64_t lsn,
				uint8_t *buf, size_t len)
{
	uint64_t ring = r->sb->ring_bytes;
	uint64_t room = ring - lsn % ring;
	size_t first = len < room ? len : (size_t)room;
	size_t done = 0;
	int err;

	err = store__pread_full(r->fd, buf, first,
				STORE_ILOG_DATA_OFF + lsn % ring, &done);
	if (!err && done == first && first < len) {
		size_t more = 0;

		err = store__pread_full(r->fd, buf + first, len - first,
					STORE_ILOG_DATA_OFF, &more);
		done += more;
	}
	if (err) {
		return err;
	}
	return done == len ? 0 : -ENODATA;
}

static struct store *store_ilog_replay_store(const struct store_ilog_replay *r,
					     const struct store_fh *fh)
{
	uint32_t id;

	if (store_fh_export_id(fh, &id) != 0) {
		return NULL;
	}
	for (size_t i = 0; i < r->nstores; i++) {
		if (r->stores[i]->export_id == id) {
			return r->stores[i];
		}
	}
	return NULL;
}

/* Keeps a reference on @obj until the final fsync (once per file). */
static int store_ilog_replay_touch(struct store_ilog_replay *r,
				   struct local_obj *obj)
{
	for (size_t i = 0; i < r->ntouched; i++) {
		if (r->touched[i] == obj) {
			return 0;
		}
	}
	if (r->ntouched == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		struct local_obj **t = realloc(r->touched, cap * sizeof(*t));

		if (!t) {
			return -ENOMEM;
		}
		r->touched = t;
		r->cap = cap;
	}
	store__obj_ref(obj);
	r->touched[r->ntouched++] = obj;
	return 0;
}

static int store_ilog_fh_cmp(const struct store_fh *a, const struct store_fh *b)
{
	if (a->len != b->len) {
		return a->len < b->len ? -1 : 1;
	}
	return memcmp(a->data, b->data, a->len);
}

static int store_ilog_mask_cmp(const void *pa, const void *pb)
{
	const struct store_ilog_mask *a = pa, *b = pb;

	return store_ilog_fh_cmp(&a->fh, &b->fh);
}

static int store_ilog_span_cmp(const void *pa, const void *pb)
{
	const struct store_ilog_span *a = pa, *b = pb;

	if (a->off != b->off) {
		return a->off < b->off ? -1 : 1;
	}
	return 0;
}

/* First pass: keeps a SYNCED record. */
static int store_ilog_mask_add(struct store_ilog_replay *r,
			       const struct store_ilog_rec *rec)
{
	struct store_ilog_mask *m;

	if (r->nmasks == r->mask_cap) {
		size_t cap = r->mask_cap ? r->mask_cap * 2 : 64;

		m = realloc(r->masks, cap * sizeof(*m));
		if (!m) {
			return -ENOMEM;
		}
		r->masks = m;
		r->mask_cap = cap;
	}
	m = &r->masks[r->nmasks++];
	m->fh = rec->fh;
	m->upto = rec->upto_lsn;
	m->off = rec->off_bytes;
	m->end = rec->off_bytes + rec->data_len;
	return 0;
}

/* The parts of WRITE record @rec that later SYNCED ranges cover, into
 * r->spans by offset; their count, or -ENOMEM. */
static ssize_t store_ilog_spans(struct store_ilog_replay *r,
				const struct store_ilog_rec *rec)
{
	struct store_ilog_mask key = { .fh = rec->fh };
	uint64_t off = rec->off_bytes, end = off + rec->data_len;
	const struct store_ilog_mask *m;
	size_t n = 0;

	m = r->nmasks ? bsearch(&key, r->masks, r->nmasks, sizeof(key),
				store_ilog_mask_cmp)
		      : NULL;
	if (!m) {
		return 0;
	}
	/* bsearch finds any of the file's: back to its first. */
	while (m > r->masks && !store_ilog_fh_cmp(&m[-1].fh, &rec->fh)) {
		m--;
	}
	for (; m < r->masks + r->nmasks && !store_ilog_fh_cmp(&m->fh, &rec->fh);
	     m++) {
		if (rec->lsn >= m->upto || m->end <= off || m->off >= end) {
			continue;
		}
		if (n == r->span_cap) {
			size_t cap = r->span_cap ? r->span_cap * 2 : 16;
			struct store_ilog_span *sp =
				realloc(r->spans, cap * sizeof(*sp));

			if (!sp) {
				return -ENOMEM;
			}
			r->spans = sp;
			r->span_cap = cap;
		}
		r->spans[n].off = m->off > off ? m->off : off;
		r->spans[n].end = m->end < end ? m->end : end;
		n++;
	}
	if (n > 1) {
		qsort(r->spans, n, sizeof(*r->spans), store_ilog_span_cmp);
	}
	return (ssize_t)n;
}

/* Writes @rec's data to @fd but for the parts newer bytes cover. */
static int store_ilog_replay_write(struct store_ilog_replay *r, int fd,
				   const struct store_ilog_rec *rec)
{
	uint64_t pos = rec->off_bytes, end = pos + rec->data_len;
	ssize_t n = store_ilog_spans(r, rec);
	int err = 0;

	if (n < 0) {
		return (int)n;
	}
	if (n > 0) {
		r->masked++;
	}
	for (ssize_t i = 0; i <= n && !err; i++) {
		uint64_t stop = i < n ? r->spans[i].off : end;

		if (stop > pos) {
			err = store__pwrite_full(
				fd, rec->data + (pos - rec->off_bytes),
				(size_t)(stop - pos), pos);
		}
		if (i < n && r->spans[i].end > pos) {
			pos = r->spans[i].end;
		}
	}
	return err;
}

/* Writes one record's data to its file: 0, 1 (skipped), or -errno. */
static int store_ilog_replay_apply(struct store_ilog_replay *r,
				   const struct store_ilog_rec *rec)
{
	struct store *st = store_ilog_replay_store(r, &rec->fh);
	struct store_obj *sobj;
	struct local_obj *obj;
	int write_err;
	int err;
	int fd;

	if (!st) {
		return 1;
	}
	err = st->ops->resolve(st, &rec->fh, &sobj);
	if (err == -ESTALE || err == -STORE_EBADHANDLE) {
		return 1;
	}
	if (err) {
		return err;
	}
	obj = local_obj(sobj);
	err = store__local_io_fd(store__local(st), obj, &fd, &write_err);
	if (!err && write_err) {
		err = write_err;
	}
	if (!err) {
		err = store_ilog_replay_write(r, fd, rec);
	}
	if (!err) {
		err = store_ilog_replay_touch(r, obj);
	}
	store__obj_unref(obj);
	return err;
}

/* Names a record's file for the log: "ds1:/dir/f" or its export id. */
static void store_ilog_rec_name(const struct store_ilog_replay *r,
				const struct store_ilog_rec *rec, char *buf,
				size_t len)
{
	struct store *st = store_ilog_replay_store(r, &rec->fh);
	struct store_obj *obj;
	char path[1024];
	uint32_t id = 0;

	store_fh_export_id(&rec->fh, &id);
	snprintf(buf, len, "export %u, a file of %u-byte handle", id,
		 rec->fh.len);
	if (!st || st->ops->resolve(st, &rec->fh, &obj) != 0) {
		return;
	}
	if (st->ops->path && st->ops->path(st, obj, path, sizeof(path)) == 0) {
		snprintf(buf, len, "%s:%s", st->name, path);
	}
	st->ops->obj_unref(obj);
}

/* Whether a whole, valid WRITE or SYNCED record follows @rec (past the pads of
 * its batch): then @rec is corruption, not the torn end of the last flush. */
static bool store_ilog_next_valid(struct store_ilog_replay *r,
				  const struct store_ilog_rec *rec)
{
	struct store_ilog_rec next;
	uint64_t lsn = rec->lsn + rec->rec_len;

	for (int i = 0; i < 4; i++) {
		if (store_ilog_ring_read(r, lsn, r->buf,
					 STORE_ILOG_HEAD_BYTES) ||
		    store__ilog_head_decode(r->buf, STORE_ILOG_HEAD_BYTES,
					    r->sb->salt, lsn, &next) ||
		    store_ilog_ring_read(r, lsn, r->buf, next.rec_len) ||
		    store__ilog_rec_decode(r->buf, next.rec_len, r->sb->salt,
					   lsn, &next)) {
			return false;
		}
		if (next.type != STORE_ILOG_REC_PAD) {
			return true;
		}
		lsn += next.rec_len;
	}
	return false;
}

/* Logs why replay stops at @lsn (@err from the decoder). */
static void store_ilog_replay_stop(struct store_ilog_replay *r, uint64_t lsn,
				   int err, const struct store_ilog_rec *head,
				   bool head_ok, uint64_t applied)
{
	uint64_t off = STORE_ILOG_DATA_OFF + lsn % r->sb->ring_bytes;
	char name[1200] = "unknown file";
	const char *why =
		err == -EBADMSG ? "checksum mismatch" : "fields out of bounds";
	struct store_ilog_rec copy;

	if (head_ok) {
		copy = *head;
		store_ilog_rec_name(r, &copy, name, sizeof(name));
	}
	if (head_ok && !store_ilog_next_valid(r, head)) {
		log_warn("ilog: %s: torn tail at log offset %" PRIu64
			 " (lsn %" PRIu64 ", %s, file offset %" PRIu64
			 "): %s; dropped (never acknowledged); %" PRIu64
			 " records replayed",
			 r->path, off, lsn, name, head->off_bytes, why,
			 applied);
		return;
	}
	log_error("ilog: %s: corrupt record at log offset %" PRIu64
		  " (lsn %" PRIu64 ", %s, file offset %" PRIu64
		  "): %s; replay stops here, records after it are lost; "
		  "%" PRIu64 " records replayed",
		  r->path, off, lsn, name, head_ok ? head->off_bytes : 0, why,
		  applied);
}

/* Fsyncs and releases the files replay wrote; the first error. */
static int store_ilog_replay_sync(struct store_ilog_replay *r)
{
	int first = 0;

	for (size_t i = 0; i < r->ntouched; i++) {
		int fd = atomic_load(&r->touched[i]->io_fd);

		if (fsync(fd) != 0 && !first) {
			first = -errno;
		}
		store__obj_unref(r->touched[i]);
	}
	free(r->touched);
	return first;
}

/* One pass from the head to the first record that is not whole: with
 * @gather, keeps the SYNCED records and says nothing; else writes the
 * WRITE records and logs where and why it stopped. */
static int store_ilog_replay_run(struct store_ilog_replay *r, bool gather,
				 uint64_t *applied, uint64_t *skipped)
{
	const uint64_t salt = r->sb->salt;
	uint64_t lsn = r->sb->head_lsn;
	struct store_ilog_rec rec;
	int err;

	/* Lsn and salt end the log; the ring size bounds a broken one. */
	while (lsn - r->sb->head_lsn < r->sb->ring_bytes) {
		bool head_ok;

		if (store_ilog_ring_read(r, lsn, r->buf,
					 STORE_ILOG_HEAD_BYTES)) {
			break;
		}
		err = store__ilog_head_decode(r->buf, STORE_ILOG_HEAD_BYTES,
					      salt, lsn, &rec);
		if (err == -ENODATA) {
			break;
		}
		head_ok = err == 0;
		if (!err) {
			err = store_ilog_ring_read(r, lsn, r->buf, rec.rec_len);
			if (err == -ENODATA) {
				err = -EBADMSG;
			}
		}
		if (!err) {
			err = store__ilog_rec_decode(r->buf, rec.rec_len, salt,
						     lsn, &rec);
		}
		if (err == -EBADMSG || err == -EINVAL) {
			/* The handle as read, to name the file (it may be
			 * the part that is corrupt: the log says so). */
			if (head_ok && rec.type != STORE_ILOG_REC_PAD) {
				memcpy(rec.fh.data,
				       r->buf + STORE_ILOG_HEAD_BYTES,
				       rec.fh.len);
			}
			if (!gather) {
				store_ilog_replay_stop(r, lsn, err, &rec,
						       head_ok, *applied);
			}
			break;
		}
		if (err) {
			return err;
		}
		if (gather && rec.type == STORE_ILOG_REC_SYNCED) {
			err = store_ilog_mask_add(r, &rec);
			if (err) {
				return err;
			}
		}
		if (!gather && rec.type == STORE_ILOG_REC_WRITE) {
			err = store_ilog_replay_apply(r, &rec);
			if (err < 0) {
				char name[1200];

				store_ilog_rec_name(r, &rec, name,
						    sizeof(name));
				log_error("ilog: %s: replay: write to %s at "
					  "offset %" PRIu64 " failed: %s",
					  r->path, name, rec.off_bytes,
					  strerror(-err));
				return err;
			}
			if (err == 1) {
				(*skipped)++;
			} else {
				(*applied)++;
			}
		}
		lsn += rec.rec_len;
	}
	return 0;
}

int store__ilog_replay(const char *path, int fd,
		       const struct store_ilog_super *sb,
		       struct store *const *stores, size_t nstores,
		       uint64_t *applied, uint64_t *skipped)
{
	struct store_ilog_replay r = {
		.path = path,
		.fd = fd,
		.sb = sb,
		.stores = stores,
		.nstores = nstores,
	};
	int err;
	int sync_err;

	r.buf = malloc(STORE_ILOG_REC_MAX);
	if (!r.buf) {
		return -ENOMEM;
	}
	err = store_ilog_replay_run(&r, true, applied, skipped);
	if (!err) {
		if (r.nmasks > 1) {
			qsort(r.masks, r.nmasks, sizeof(*r.masks),
			      store_ilog_mask_cmp);
		}
		err = store_ilog_replay_run(&r, false, applied, skipped);
	}
	sync_err = store_ilog_replay_sync(&r);
	free(r.buf);
	free(r.masks);
	free(r.spans);
	if (!err) {
		err = sync_err;
	}
	if (!err && (*applied || *skipped)) {
		log_info("ilog: %s: replayed %" PRIu64
			 " records, skipped %" PRIu64
			 " (file gone or export not served), %zu files "
			 "fsynced; %zu ranges synced in place, %" PRIu64
			 " records kept off them",
			 path, *applied, *skipped, r.ntouched, r.nmasks,
			 r.masked);
	}
	return err;
}
