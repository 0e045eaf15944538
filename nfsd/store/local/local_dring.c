// SPDX-License-Identifier: Apache-2.0
/*
 * local_dring: the in-place direct write (local_direct.c's rules) of a
 * stable WRITE the loop parks, through the intent log's ring
 * (store/dring.h).  The loop checks the write and queues it; the ring's
 * thread writes it, merged with the file's writes it meets, and then,
 * still off the loop, stats the file for the reply's post-op attributes
 * and logs the SYNCED record the write may need (local_io.c's
 * store_local_write_inplace, the same steps on a work thread).
 *
 * Why: on a work thread each such write held the thread for its whole
 * flush and cost a hand-off there and back (docs/bench.md, "Intent log":
 * 15% of the server's CPU at 64 KiB FILE_SYNC, context switches 30%).
 */
#include "nfsd/store/local/local_int.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "nfsd/base/base.h"
#include "nfsd/store/dring.h"
#include "nfsd/store/ilog/ilog.h"

struct local_dwrite {
	struct store_dring_write dw;
	struct store *st;
	struct local_obj *obj; /* a reference until the end */
	int io_fd; /* borrowed from obj */
	uint64_t upto; /* obj's ilog_lsn before the write began */
	struct store_write_wait *w;
	store_write_done_fn done;
	void *arg;
};

/* The file's attributes after the write, for the reply. */
static void local_dwrite_attr_after(struct local_dwrite *d)
{
	struct stat sb;

	if (fstat(d->io_fd, &sb) == 0) {
		store__local_attr_from_stat(d->st, &sb, &d->w->after);
		d->w->after_set = true;
	}
}

/* On the ring's thread, once. */
static void local_dwrite_end(struct store_dring_write *dw, int err)
{
	struct local_dwrite *d = container_of(dw, struct local_dwrite, dw);
	bool direct = true;
	bool sync_failed = false;

	if (err == -EINVAL) {
		/* The disk wants more alignment, or the file system no
		 * direct writes: never again for this file, and this one
		 * the buffered way, here (once a file). */
		atomic_store(&d->obj->direct_refused, true);
		direct = false;
		err = store__local_inplace_buffered(d->st, d->obj, d->io_fd,
						    dw->off, dw->src, dw->len,
						    &d->upto, &sync_failed);
	}
	if (!err) {
		local_dwrite_attr_after(d);
		err = store__ilog_append_synced_async(
			d->st->ilog, d->obj, dw->off, dw->len, d->upto, direct,
			d->w, d->done, d->arg);
	}
	/* 0: a SYNCED record's flush calls done; 1: nothing to wait for. */
	if (err != 0) {
		d->done(d->arg, err == 1 ? 0 : err);
	}
	store__obj_unref(d->obj);
	free(d);
}

int store__local_write_direct_async(struct store *st, struct local_obj *obj,
				    int io_fd, uint64_t off_bytes,
				    const void *buf, uint32_t count,
				    struct store_write_wait *w,
				    store_write_done_fn done, void *arg)
{
	struct store_dring *ring = store__ilog_dring(st->ilog);
	struct local_dwrite *d;
	int fd;

	if (!ring) {
		return -EAGAIN;
	}
	fd = store__local_direct_target(st, obj, io_fd, off_bytes, count);
	if (fd < 0) {
		return -EAGAIN;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		return -EAGAIN;
	}
	d->dw.fd = fd;
	d->dw.off = off_bytes;
	d->dw.len = count;
	d->dw.src = buf;
	d->dw.done = local_dwrite_end;
	d->st = st;
	d->obj = obj;
	d->io_fd = io_fd;
	/* As on a work thread: read before the write begins, no ilog_order
	 * (local_io.c, store_local_write_inplace). */
	d->upto = atomic_load(&obj->ilog_lsn);
	d->w = w;
	d->done = done;
	d->arg = arg;
	w->after_set = false;
	w->after_later = true;
	store__obj_ref(obj);
	store_dring_submit(ring, &d->dw);
	return 0;
}
