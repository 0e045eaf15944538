// SPDX-License-Identifier: Apache-2.0
/*
 * local_sync: namespace and attribute changes made durable before the
 * reply.  RFC 1813 (section 4, "Synchronous modifying operations" and
 * "Stable storage") has the server commit a modifying call's metadata to
 * stable storage before it answers, as it does a FILE_SYNC write's data:
 * a CREATE answered and then lost to a power cut leaves the client a
 * handle that answers STALE and a VM folder without its disk.
 * knfsd does it with commit_metadata() on the parent (and the child).
 *
 * Here: fsync(2) of the directory an entry was made in, removed from or
 * renamed across (a journaling file system commits the whole transaction:
 * the new inode, the link counts), of a new file, and of the object a
 * SETATTR changed (the export root's file system, syncfs(2), for a
 * symlink or a device node, which cannot be opened to be synced).
 * Concurrent calls share the journal's commits, as stable writes share
 * the group commit.
 */
#include "nfsd/store/local/local_int.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int store__local_sync_dir(const struct local_obj *dir)
{
	int fd = openat(dir->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int err = 0;

	if (fd < 0) {
		return -errno;
	}
	if (fsync(fd) != 0) {
		err = -errno;
	}
	close(fd);
	return err;
}

int store__local_sync_obj(struct store_local *sl, struct local_obj *obj)
{
	int write_err;
	int err;
	int fd;

	switch (obj->type) {
	case STORE_DIR:
		return store__local_sync_dir(obj);
	case STORE_REG:
		err = store__local_io_fd(sl, obj, &fd, &write_err);
		if (err) {
			return err;
		}
		return fsync(fd) != 0 ? -errno : 0;
	default:
		return syncfs(sl->root_fd) != 0 ? -errno : 0;
	}
}
