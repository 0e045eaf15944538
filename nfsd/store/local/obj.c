// SPDX-License-Identifier: Apache-2.0
/*
 * obj: one resolved file of the local backend, shared by reference count
 * between the fcache and the requests using it.  An object holds an O_PATH
 * descriptor (it never follows a symlink and opens nothing with side
 * effects: no FIFO blocks, no device driver runs) and, for a regular file,
 * a read/write descriptor opened on first use, and the sync group
 * (syncgroup.h) that lets concurrent stable writers of that descriptor
 * share one fsync.  Every request resolving the same handle while the
 * object is cached shares it, whatever its connection or loop; an object
 * evicted from the fcache (or dropped as stale) while in use lives on for
 * its requests, and the next resolve opens a new object with a new group
 * and a new descriptor.  The group's sticky error lasts as long as the
 * object: a reopened descriptor no longer sees a writeback error that an
 * fsync already reported (errseq_t), so it is lost with the object.
 *
 * Reopening: an O_PATH descriptor can neither read, write, truncate nor
 * chmod.  The store reopens it through its /proc/self/fd/N magic link,
 * which the kernel resolves to the open inode itself rather than to a path
 * (no rename or symlink swap can redirect it); this needs /proc mounted,
 * which store_local_open() checks.
 */
#include "nfsd/store/local/local_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void store__proc_fd_path(int fd, char *buf, size_t len)
{
	snprintf(buf, len, "/proc/self/fd/%d", fd);
}

int store__obj_new(int fd, bool io_fd_rw, const struct stat *stat,
		   const struct store_fh *fh, struct local_obj **out)
{
	struct local_obj *obj;
	int err;

	obj = calloc(1, sizeof(*obj));
	if (obj == NULL) {
		close(fd);
		return -ENOMEM;
	}
	err = store__syncgroup_init(&obj->sync);
	if (err) {
		free(obj);
		close(fd);
		return err;
	}
	err = pthread_mutex_init(&obj->ilog_order, NULL);
	if (!err) {
		err = pthread_mutex_init(&obj->zero_lock, NULL);
		if (err) {
			pthread_mutex_destroy(&obj->ilog_order);
		}
	}
	if (err) {
		store__syncgroup_fini(&obj->sync);
		free(obj);
		close(fd);
		return -err;
	}
	atomic_init(&obj->ilog_lsn, 0);
	atomic_init(&obj->base.refs, 1);
	obj->base.fh = *fh;
	obj->type = store__ftype_from_mode(stat->st_mode);
	obj->dev = stat->st_dev;
	obj->ino = stat->st_ino;
	obj->fd = fd;
	atomic_init(&obj->io_fd, io_fd_rw ? fd : -1);
	atomic_init(&obj->io_write_err, 0);
	atomic_init(&obj->direct_fd, -1);
	atomic_init(&obj->direct_refused, false);
	*out = obj;
	return 0;
}

void store__obj_ref(struct local_obj *obj)
{
	atomic_fetch_add_explicit(&obj->base.refs, 1, memory_order_relaxed);
}

void store__obj_unref(struct local_obj *obj)
{
	int io_fd;

	if (obj == NULL) {
		return;
	}
	if (atomic_fetch_sub_explicit(&obj->base.refs, 1,
				      memory_order_acq_rel) != 1) {
		return;
	}
	io_fd = atomic_load(&obj->io_fd);
	if (io_fd >= 0 && io_fd != obj->fd) {
		close(io_fd);
	}
	if (atomic_load(&obj->direct_fd) >= 0) {
		close(atomic_load(&obj->direct_fd));
	}
	close(obj->fd);
	pthread_mutex_destroy(&obj->zero_lock);
	pthread_mutex_destroy(&obj->ilog_order);
	store__syncgroup_fini(&obj->sync);
	free(obj);
}

/* Opens @obj for I/O: read/write, or read-only when writing is refused. */
static int store_obj_open_io(struct local_obj *obj, int *write_err)
{
	char path[32];
	int fd;
	int err;

	store__proc_fd_path(obj->fd, path, sizeof(path));
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		*write_err = 0;
		return fd;
	}
	err = -errno;
	if (err != -EROFS && err != -EACCES && err != -EPERM &&
	    err != -ETXTBSY) {
		return err;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return -errno;
	}
	*write_err = err;
	return fd;
}

int store__obj_io_fd(struct local_obj *obj, int *fd, int *write_err)
{
	int expected = -1;
	int werr = 0;
	int cur;
	int nfd;

	if (obj->type != STORE_REG) {
		return obj->type == STORE_DIR ? -EISDIR : -EINVAL;
	}
	cur = atomic_load_explicit(&obj->io_fd, memory_order_acquire);
	if (cur >= 0) {
		*fd = cur;
		*write_err = atomic_load(&obj->io_write_err);
		return 0;
	}
	nfd = store_obj_open_io(obj, &werr);
	if (nfd < 0) {
		return nfd;
	}
	/* Two threads may race here; the loser closes its descriptor. */
	atomic_store(&obj->io_write_err, werr);
	if (!atomic_compare_exchange_strong_explicit(&obj->io_fd, &expected,
						     nfd, memory_order_acq_rel,
						     memory_order_acquire)) {
		close(nfd);
		nfd = expected;
	}
	*fd = nfd;
	*write_err = atomic_load(&obj->io_write_err);
	return 0;
}
