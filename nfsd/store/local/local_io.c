// SPDX-License-Identifier: Apache-2.0
/*
 * local_io: READ, WRITE and COMMIT of the local backend (RFC 1813 3.3.6,
 * 3.3.7, 3.3.21) on the object's read/write descriptor (see obj.c).
 *
 * READ sets eof when off + nread reaches the size fstat(2) reports after
 * the read, so a read at or past the end returns 0 bytes with eof.  The
 * nfs3 READ uses read_ref instead when it can: the object's own descriptor
 * and a reference on the object, which keeps that descriptor open while a
 * reply is sent from it (sendfile) or read into a buffer, and no stat (the
 * caller has the attributes from resolve_attr).  WRITE
 * writes everything; DATA_SYNC adds fdatasync(2), FILE_SYNC fsync(2).
 * COMMIT uses fdatasync(2) on the whole file: it makes the data and the
 * metadata needed to read it back (the size) stable, which is what COMMIT
 * promises; timestamps may lag.  With an intent log (store.h ilog, see
 * ilog.h) DATA_SYNC and FILE_SYNC writes are logged instead of synced (a
 * large one, or one continuing the file's sequential stream, is
 * fdatasynced in place, its log record only a range), and
 * a COMMIT of a file with records first waits for a checkpoint of them.  A
 * read-only file (EROFS, immutable) reads but refuses writes with the reason
 * its read/write open failed.
 */
#include "nfsd/store/local/local_int.h"

#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include "nfsd/store/ilog/ilog.h"

/* Reads up to @count bytes at @off_bytes, none at or past INT64_MAX (the
 * largest offset a file has); *nread says how many came. */
static int store_local_pread(int fd, uint64_t off_bytes, void *buf,
			     uint32_t count, uint32_t *nread)
{
	size_t done = 0;
	int err;

	*nread = 0;
	if (off_bytes >= INT64_MAX) {
		return 0;
	}
	if (count > INT64_MAX - off_bytes) {
		count = (uint32_t)(INT64_MAX - off_bytes);
	}
	err = store__pread_full(fd, buf, count, off_bytes, &done);
	*nread = (uint32_t)done;
	return err;
}

/* store_file_ref.unref of the local backend: the object's reference. */
static void store_local_file_unref(void *ref)
{
	store__obj_unref(ref);
}

int store__local_read_ref(struct store *st, struct store_obj *sobj,
			  struct store_file_ref *ref)
{
	struct local_obj *obj = local_obj(sobj);
	int write_err;
	int err;
	int fd;

	err = store__local_io_fd(store__local(st), obj, &fd, &write_err);
	if (err) {
		return err;
	}
	/* The descriptor lives as long as the object (closed by its last
	 * unref, never replaced): a reference keeps it open, no dup. */
	store__obj_ref(obj);
	ref->fd = fd;
	ref->unref = store_local_file_unref;
	ref->ref = obj;
	return 0;
}

/* The copying READ is read_ref's descriptor, read, and its size after. */
int store__local_read(struct store *st, struct store_obj *sobj,
		      uint64_t off_bytes, void *buf, uint32_t count,
		      uint32_t *nread, bool *eof)
{
	struct store_file_ref ref;
	struct stat sb;
	int err;

	err = store__local_read_ref(st, sobj, &ref);
	if (err) {
		return err;
	}
	err = store_file_ref_pread(&ref, off_bytes, buf, count, nread);
	if (!err && fstat(ref.fd, &sb) != 0) {
		err = -errno;
	}
	ref.unref(ref.ref);
	if (err) {
		return err;
	}
	*eof = off_bytes + *nread >= (uint64_t)sb.st_size;
	return 0;
}

int store_file_ref_pread(const struct store_file_ref *ref, uint64_t off_bytes,
			 void *buf, uint32_t count, uint32_t *nread)
{
	return store_local_pread(ref->fd, off_bytes, buf, count, nread);
}

int store__local_ref_pread(struct store *st, const struct store_file_ref *ref,
			   uint64_t off_bytes, void *buf, uint32_t count,
			   uint32_t *nread)
{
	(void)st;
	return store_file_ref_pread(ref, off_bytes, buf, count, nread);
}

/*
 * A stable write with the intent log on: the data to the file (page cache),
 * its record to the log, in the same order for the file and the log (the
 * object's ilog_order), then the wait for a flush covering the record.
 * The file's own fsync comes at a checkpoint.  A failure of the log is a
 * failed sync: the write's bytes are in the file but not acknowledged.
 */
static int store_local_write_logged(struct store *st, struct local_obj *obj,
				    int fd, uint64_t off_bytes, const void *buf,
				    uint32_t count, bool *sync_failed)
{
	int64_t end;
	int err;

	pthread_mutex_lock(&obj->ilog_order);
	err = store__pwrite_full(fd, buf, count, off_bytes);
	if (err) {
		pthread_mutex_unlock(&obj->ilog_order);
		return err;
	}
	end = store__ilog_append(st->ilog, obj, off_bytes, buf, count);
	pthread_mutex_unlock(&obj->ilog_order);
	err = end < 0 ? (int)end : store__ilog_wait(st->ilog, end);
	*sync_failed = err != 0;
	return err;
}

/*
 * A large stable write with the intent log on (at least its inplace_min
 * bytes; ilog.h): written to the file and made stable there, O_DIRECT
 * over blocks the file holds (local_direct.c), else with one fdatasync
 * shared by the file's writes in flight (its sync group), so the log does
 * not carry the bytes too.  fdatasync, as the log gives a logged
 * write: data and size stable, timestamps later.  After the sync, a SYNCED
 * record when the file has records replay could write over these bytes,
 * and the wait for its flush; upto is read with the bytes written under
 * ilog_order, so it splits the file's records into older and newer.
 */
static int store_local_write_inplace(struct store *st, struct local_obj *obj,
				     int fd, uint64_t off_bytes,
				     const void *buf, uint32_t count,
				     bool *sync_failed)
{
	bool direct = false;
	uint64_t upto;
	int64_t end;
	int err = -EAGAIN;

	/* O_DIRECT (local_direct.c) needs no ilog_order: upto read before
	 * the write began holds only records older than these bytes, and a
	 * record racing with them is a concurrent write, which either order
	 * may follow.  Not holding it lets the file's writes overlap. */
	if (store__ilog_inplace_direct(st->ilog)) {
		upto = atomic_load(&obj->ilog_lsn);
		err = store__local_write_direct(st, obj, fd, off_bytes, buf,
						count);
		direct = err != -EAGAIN;
	}
	if (err == -EAGAIN) {
		err = store__local_inplace_buffered(st, obj, fd, off_bytes, buf,
						    count, &upto, sync_failed);
	}
	if (err) {
		/* A direct write's error may be its flush's (RWF_DSYNC). */
		*sync_failed = *sync_failed || direct;
		return err;
	}
	end = store__ilog_append_synced(st->ilog, obj, off_bytes, count, upto,
					direct);
	err = end > 0 ? store__ilog_wait(st->ilog, end) : (int)end;
	*sync_failed = err != 0;
	return err;
}

/* Whether a stable write of @count bytes at @off_bytes of @obj goes in
 * place: large, or the next of the file's sequential stream (ilog.h). */
static bool store_local_inplace(const struct store *st, struct local_obj *obj,
				uint64_t off_bytes, uint32_t count)
{
	return store__ilog_inplace(st->ilog, atomic_load(&obj->write_end),
				   off_bytes, count);
}

/* The descriptor a write of @count at @off_bytes goes through (borrowed
 * from @obj): the write's refusal if the file cannot be written, -EFBIG
 * past INT64_MAX. */
static int store_local_write_fd(struct store *st, struct local_obj *obj,
				uint64_t off_bytes, uint32_t count, int *fd)
{
	int write_err;
	int err;

	err = store__local_io_fd(store__local(st), obj, fd, &write_err);
	if (err) {
		return err;
	}
	if (write_err) {
		return write_err;
	}
	if (off_bytes > INT64_MAX || count > INT64_MAX - off_bytes) {
		return -EFBIG;
	}
	return 0;
}

int store__local_write(struct store *st, struct store_obj *sobj,
		       uint64_t off_bytes, const void *buf, uint32_t count,
		       enum store_stable stable, bool *sync_failed)
{
	struct local_obj *obj = local_obj(sobj);
	bool inplace;
	bool logged;
	bool zlocked;
	int err;
	int fd;

	*sync_failed = false;
	err = store_local_write_fd(st, obj, off_bytes, count, &fd);
	if (err) {
		return err;
	}
	logged = stable != STORE_UNSTABLE && st->ilog;
	inplace = logged && store_local_inplace(st, obj, off_bytes, count);
	/* Set before the write: a stream's next WRITE may arrive while this
	 * one syncs. */
	atomic_store(&obj->write_end, off_bytes + count);
	err = store__zero_first_begin(st, obj, fd, off_bytes, count, &zlocked);
	if (!err && inplace) {
		err = store_local_write_inplace(st, obj, fd, off_bytes, buf,
						count, sync_failed);
	} else if (!err && logged) {
		err = store_local_write_logged(st, obj, fd, off_bytes, buf,
					       count, sync_failed);
	} else if (!err) {
		err = store__pwrite_full(fd, buf, count, off_bytes);
	}
	store__zero_first_end(obj, zlocked);
	if (err || logged || stable == STORE_UNSTABLE) {
		return err;
	}
	return store__local_wsync(st, obj, fd, stable, sync_failed);
}

int store__local_write_async(struct store *st, struct store_obj *sobj,
			     uint64_t off_bytes, const void *buf,
			     uint32_t count, struct store_write_wait *w,
			     store_write_done_fn done, void *arg)
{
	struct local_obj *obj = local_obj(sobj);
	int err;
	int fd;

	/* Zeroing blocks writes to disk: a work thread's job, not the
	 * loop's. */
	if (!st->ilog || atomic_load(&st->zero_on_first_write)) {
		return -EAGAIN;
	}
	err = store_local_write_fd(st, obj, off_bytes, count, &fd);
	if (err) {
		return err;
	}
	/* A large or sequential write is synced in its file: through the
	 * log's ring when it can go direct, else a work thread's job. */
	if (store_local_inplace(st, obj, off_bytes, count)) {
		err = store__local_write_direct_async(st, obj, fd, off_bytes,
						      buf, count, w, done, arg);
		if (!err) {
			atomic_store(&obj->write_end, off_bytes + count);
		}
		return err;
	}
	/* A work thread holds it while it waits for ring space: the loop
	 * never waits for it. */
	if (pthread_mutex_trylock(&obj->ilog_order) != 0) {
		return -EAGAIN;
	}
	err = store__pwrite_full(fd, buf, count, off_bytes);
	if (!err) {
		err = store__ilog_append_async(st->ilog, obj, off_bytes, buf,
					       count, w, done, arg);
	}
	pthread_mutex_unlock(&obj->ilog_order);
	/* -EAGAIN: a work thread writes it again and sets it then. */
	if (err != -EAGAIN) {
		atomic_store(&obj->write_end, off_bytes + count);
	}
	return err;
}

int store__local_commit(struct store *st, struct store_obj *sobj,
			uint64_t off_bytes, uint32_t count, bool *sync_failed)
{
	struct local_obj *obj = local_obj(sobj);
	int write_err;
	int err;
	int fd;

	*sync_failed = false;
	(void)off_bytes;
	(void)count;
	err = store__local_io_fd(store__local(st), obj, &fd, &write_err);
	if (err) {
		return err;
	}
	/* Newer UNSTABLE bytes over logged ones: once they are stable a
	 * replay of the old records would undo them. */
	if (st->ilog) {
		err = store__ilog_settle(st->ilog, obj);
		if (err) {
			*sync_failed = true;
			return err;
		}
	}
	return store__local_wsync(st, obj, fd, STORE_DATA_SYNC, sync_failed);
}
