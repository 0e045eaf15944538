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
 */
#include "nfsd/store/store_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nfsd/base/log.h"

struct store_ilog_replay {
	const char *path;
	int fd;
	const struct store_ilog_super *sb;
	struct store *const *stores;
	size_t nstores;
	uint8_t *buf; /* STORE_ILOG_REC_MAX */
	struct store_obj **touched; /* owned references */
	size_t ntouched, cap;
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
				   struct store_obj *obj)
{
	for (size_t i = 0; i < r->ntouched; i++) {
		if (r->touched[i] == obj) {
			return 0;
		}
	}
	if (r->ntouched == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		struct store_obj **t = realloc(r->touched, cap * sizeof(*t));

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

/* Writes one record's data to its file: 0, 1 (skipped), or -errno. */
static int store_ilog_replay_apply(struct store_ilog_replay *r,
				   const struct store_ilog_rec *rec)
{
	struct store *st = store_ilog_replay_store(r, &rec->fh);
	struct store_obj *obj;
	int write_err;
	int err;
	int fd;

	if (!st) {
		return 1;
	}
	err = st->ops->resolve(st, &rec->fh, &obj);
	if (err == -ESTALE || err == -STORE_EBADHANDLE) {
		return 1;
	}
	if (err) {
		return err;
	}
	err = store__local_io_fd(store__local(st), obj, &fd, &write_err);
	if (!err && write_err) {
		err = write_err;
	}
	if (!err) {
		err = store__pwrite_full(fd, rec->data, rec->data_len,
					 rec->off_bytes);
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
	store__obj_unref(obj);
}

/* Whether a whole, valid WRITE record follows @rec (past the pads of its
 * batch): then @rec is corruption, not the torn end of the last flush. */
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
		if (next.type == STORE_ILOG_REC_WRITE) {
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

static int store_ilog_replay_run(struct store_ilog_replay *r, uint64_t *applied,
				 uint64_t *skipped)
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
			if (head_ok && rec.type == STORE_ILOG_REC_WRITE) {
				memcpy(rec.fh.data,
				       r->buf + STORE_ILOG_HEAD_BYTES,
				       rec.fh.len);
			}
			store_ilog_replay_stop(r, lsn, err, &rec, head_ok,
					       *applied);
			break;
		}
		if (err) {
			return err;
		}
		if (rec.type == STORE_ILOG_REC_WRITE) {
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
	err = store_ilog_replay_run(&r, applied, skipped);
	sync_err = store_ilog_replay_sync(&r);
	free(r.buf);
	if (!err) {
		err = sync_err;
	}
	if (!err && (*applied || *skipped)) {
		log_info("ilog: %s: replayed %" PRIu64
			 " records, skipped %" PRIu64
			 " (file gone or export not served), %zu files "
			 "fsynced",
			 path, *applied, *skipped, r.ntouched);
	}
	return err;
}
