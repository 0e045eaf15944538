// SPDX-License-Identifier: Apache-2.0
/*
 * snap/clone: a new datastore's tree made from a snapshot (snap.h,
 * snap_clone_tree): FICLONE of every file of ROOT/.snapshot/NAME into a
 * new directory, so that the new datastore shares every block with the
 * snapshot until one side writes.  The clone's files are new inodes
 * without FS_IMMUTABLE_FL (writable); XFS and btrfs count each shared
 * extent's references, so the clone never reads through the snapshot.
 */
#include "nfsd/snap/snap_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

/* ROOT/.snapshot/NAME, opened without following a symlink anywhere, and
 * sealed (FS_IMMUTABLE_FL: only the server makes that), or -errno. */
static int clone_source_open(const char *root, const char *name, char *errbuf,
			     size_t errlen)
{
	int rfd, afd = -1, fd = -1, err = 0;

	rfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rfd >= 0) {
		afd = openat(rfd, SNAP_DIR_NAME,
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (afd >= 0) {
		fd = openat(afd, name,
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0) {
		err = -errno;
		snprintf(errbuf, errlen, "snapshot '%s': %s", name,
			 err == -ENOENT ? "does not exist" : strerror(-err));
	} else if (snap__flags_get(fd) != 1) {
		err = -ENOENT;
		snprintf(errbuf, errlen,
			 "snapshot '%s': not a snapshot the server made", name);
		close(fd);
	}
	if (afd >= 0) {
		close(afd);
	}
	if (rfd >= 0) {
		close(rfd);
	}
	return err ? err : fd;
}

int snap_clone_tree(const char *root, const char *name, const char *dest,
		    struct snap_stats *st, char *errbuf, size_t errlen)
{
	struct snap_stats local = { 0 };
	struct stat rs, ds;
	int sfd, dfd = -1, err;

	st = st ? st : &local;
	memset(st, 0, sizeof(*st));
	err = snap_name_check(name, errbuf, errlen);
	if (err) {
		return err;
	}
	sfd = clone_source_open(root, name, errbuf, errlen);
	if (sfd < 0) {
		return sfd;
	}
	if (stat(root, &rs)) {
		err = -errno;
		snprintf(errbuf, errlen, "%s: %s", root, strerror(-err));
		goto out;
	}
	/* 0700 while it is built: nothing serves it yet. */
	if (mkdir(dest, 0700)) {
		err = -errno;
		snprintf(errbuf, errlen, "%s: %s", dest, strerror(-err));
		goto out;
	}
	dfd = open(dest, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &ds)) {
		err = -errno;
	} else if (ds.st_dev != rs.st_dev) {
		err = -EXDEV;
	} else {
		err = snap__tree_clone(sfd, dfd, 0, false, st);
	}
	/* The new datastore's root as the source's live one. */
	if (!err && (fchown(dfd, rs.st_uid, rs.st_gid) ||
		     fchmod(dfd, rs.st_mode & 07777))) {
		err = -errno;
	}
	if (err) {
		snprintf(errbuf, errlen, "a volume from snapshot '%s': %s%s",
			 name, strerror(-err),
			 err == -EOPNOTSUPP || err == -EXDEV
				 ? " (the file system cannot share the "
				   "snapshot's blocks: XFS with reflink=1 or "
				   "btrfs, the new directory on the same one)"
				 : "");
		if (dfd >= 0) {
			close(dfd);
			dfd = -1;
		}
		(void)snap__tree_remove(AT_FDCWD, dest, 0);
	}
out:
	if (dfd >= 0) {
		close(dfd);
	}
	close(sfd);
	return err;
}

int snap_clone_remove(const char *dest)
{
	return snap__tree_remove(AT_FDCWD, dest, 0);
}
