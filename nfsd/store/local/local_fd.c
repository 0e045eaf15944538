// SPDX-License-Identifier: Apache-2.0
/*
 * local_fd: the local backend's opens when the process is out of
 * descriptors.  Every cached file holds one or two, so the export's own
 * cache is where some can be found at once: on EMFILE or ENFILE it gives
 * back a quarter of its entries (store__fcache_relieve()) and the open is
 * tried once more.  If that fails too, the error goes up (nfs3/status.c
 * makes it NFS3ERR_JUKEBOX: the client retries later).
 */
#include "nfsd/store/local/local_int.h"

#include <errno.h>
#include <fcntl.h>

int store__local_openat(struct store_local *sl, int dirfd, const char *name,
			int flags, mode_t mode)
{
	int fd = openat(dirfd, name, flags, mode);

	if (fd >= 0) {
		return fd;
	}
	fd = -errno;
	if (store__fcache_relieve(sl->fc, fd)) {
		fd = openat(dirfd, name, flags, mode);
		if (fd < 0) {
			fd = -errno;
		}
	}
	return fd;
}

int store__local_kfh_open(struct store_local *sl, const struct store_kfh *kfh,
			  int flags)
{
	int fd = store__kfh_open(sl->root_fd, kfh, flags);

	if (fd < 0 && store__fcache_relieve(sl->fc, fd)) {
		fd = store__kfh_open(sl->root_fd, kfh, flags);
	}
	return fd;
}

int store__local_io_fd(struct store_local *sl, struct local_obj *obj, int *fd,
		       int *write_err)
{
	int err = store__obj_io_fd(obj, fd, write_err);

	if (err && store__fcache_relieve(sl->fc, err)) {
		err = store__obj_io_fd(obj, fd, write_err);
	}
	return err;
}
