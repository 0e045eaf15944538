// SPDX-License-Identifier: Apache-2.0
/*
 * tree: the walks behind snapshots, on directory descriptors only (never
 * a path below the root, never a symlink followed): clone a tree with
 * FICLONE (new inodes: a snapshot never shares an inode with the live
 * tree), set or clear FS_IMMUTABLE_FL over a tree (never on a file with
 * another link), tell whether a tree is sealed, remove a tree, and
 * revert a tree to another in place.  Each walk is bounded by
 * SNAP_MAX_DEPTH.
 */
#include "nfsd/snap/snap_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

static bool tree_skip(const char *name, bool top)
{
	return !strcmp(name, ".") || !strcmp(name, "..") ||
	       (top && !strcmp(name, SNAP_DIR_NAME));
}

static int tree_openat(int dirfd, const char *name, int flags)
{
	int fd = openat(dirfd, name, flags | O_NOFOLLOW | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* The names in directory @fd (borrowed), in a NULL-terminated array
 * (owned: tree_names_free()), so that a walk may change the directory. */
static int tree_names(int fd, char ***out)
{
	int dup_fd = dup(fd);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;
	DIR *d;
	int err = 0;

	if (dup_fd < 0) {
		return -errno;
	}
	d = fdopendir(dup_fd);
	if (!d) {
		err = -errno;
		close(dup_fd);
		return err;
	}
	rewinddir(d);
	while (!err) {
		errno = 0;
		de = readdir(d);
		if (!de) {
			err = -errno;
			break;
		}
		if (n + 2 > cap) {
			size_t ncap = cap ? cap * 2 : 32;
			char **p = realloc(names, ncap * sizeof(*p));

			if (!p) {
				err = -ENOMEM;
				break;
			}
			names = p;
			cap = ncap;
		}
		names[n] = strdup(de->d_name);
		if (!names[n]) {
			err = -ENOMEM;
			break;
		}
		names[++n] = NULL;
	}
	closedir(d);
	if (err || !names) {
		snap__names_free(names);
		if (err) {
			return err;
		}
		names = calloc(1, sizeof(*names));
		if (!names) {
			return -ENOMEM;
		}
	}
	*out = names;
	return 0;
}

void snap__names_free(char **names)
{
	for (size_t i = 0; names && names[i]; i++) {
		free(names[i]);
	}
	free(names);
}

int snap__names_get(int dirfd, char ***out)
{
	return tree_names(dirfd, out);
}

/* Mode, owner and times of @st onto @fd (a file or directory). */
static int tree_meta_set(int fd, const struct stat *st)
{
	struct timespec ts[2] = { st->st_atim, st->st_mtim };

	if (fchown(fd, st->st_uid, st->st_gid) ||
	    fchmod(fd, st->st_mode & 07777) || futimens(fd, ts)) {
		return -errno;
	}
	return 0;
}

static int tree_symlink_copy(int sdir, int ddir, const char *name,
			     const struct stat *st)
{
	struct timespec ts[2] = { st->st_atim, st->st_mtim };
	char target[4096];
	ssize_t n = readlinkat(sdir, name, target, sizeof(target) - 1);

	if (n < 0) {
		return -errno;
	}
	target[n] = '\0';
	if (symlinkat(target, ddir, name) ||
	    fchownat(ddir, name, st->st_uid, st->st_gid, AT_SYMLINK_NOFOLLOW) ||
	    utimensat(ddir, name, ts, AT_SYMLINK_NOFOLLOW)) {
		return -errno;
	}
	return 0;
}

int snap__file_clone(int sdir, int ddir, const char *name,
		     const struct stat *st, bool replace)
{
	int sfd, dfd, err = 0;

	sfd = tree_openat(sdir, name, O_RDONLY | O_NONBLOCK);
	if (sfd < 0) {
		return sfd;
	}
	dfd = tree_openat(ddir, name,
			  replace ? O_WRONLY : O_WRONLY | O_CREAT | O_EXCL);
	if (dfd < 0) {
		err = dfd;
		goto cleanup_src;
	}
	/* FICLONE leaves a longer destination's tail: empty it first; the
	 * inode (and its NFS handle) stays. */
	if ((replace && ftruncate(dfd, 0)) || ioctl(dfd, FICLONE, sfd)) {
		err = -errno;
		goto cleanup_dst;
	}
	err = tree_meta_set(dfd, st);
cleanup_dst:
	close(dfd);
cleanup_src:
	close(sfd);
	return err;
}

int snap__tree_clone(int sdir, int ddir, unsigned depth, bool top,
		     struct snap_stats *st)
{
	char **names;
	int err;

	if (depth >= SNAP_MAX_DEPTH) {
		return -ELOOP;
	}
	err = tree_names(sdir, &names);
	if (err) {
		return err;
	}
	for (size_t i = 0; names[i] && !err; i++) {
		const char *name = names[i];
		struct stat s;

		if (tree_skip(name, top)) {
			continue;
		}
		if (fstatat(sdir, name, &s, AT_SYMLINK_NOFOLLOW)) {
			err = errno == ENOENT ? 0 : -errno;
			continue;
		}
		if (S_ISREG(s.st_mode)) {
			err = snap__file_clone(sdir, ddir, name, &s, false);
			st->files++;
			st->bytes += (uint64_t)s.st_size;
		} else if (S_ISLNK(s.st_mode)) {
			err = tree_symlink_copy(sdir, ddir, name, &s);
		} else if (S_ISDIR(s.st_mode)) {
			int sub_s, sub_d;

			if (mkdirat(ddir, name, 0700)) {
				err = -errno;
				break;
			}
			sub_s = tree_openat(sdir, name, O_RDONLY | O_DIRECTORY);
			sub_d = tree_openat(ddir, name, O_RDONLY | O_DIRECTORY);
			if (sub_s >= 0 && sub_d >= 0) {
				err = snap__tree_clone(sub_s, sub_d, depth + 1,
						       false, st);
				if (!err) {
					err = tree_meta_set(sub_d, &s);
				}
				st->dirs++;
			} else {
				err = sub_s < 0 ? sub_s : sub_d;
			}
			if (sub_s >= 0) {
				close(sub_s);
			}
			if (sub_d >= 0) {
				close(sub_d);
			}
		}
		/* Devices, FIFOs and sockets are not VM data: left out. */
	}
	snap__names_free(names);
	return err;
}

int snap__flags_set(int fd, bool immutable)
{
	int flags;

	if (ioctl(fd, FS_IOC_GETFLAGS, &flags)) {
		return -errno;
	}
	if (immutable == !!(flags & FS_IMMUTABLE_FL)) {
		return 0;
	}
	flags = immutable ? flags | FS_IMMUTABLE_FL : flags & ~FS_IMMUTABLE_FL;
	return ioctl(fd, FS_IOC_SETFLAGS, &flags) ? -errno : 0;
}

int snap__flags_get(int fd)
{
	int flags;

	if (ioctl(fd, FS_IOC_GETFLAGS, &flags)) {
		return -errno;
	}
	return !!(flags & FS_IMMUTABLE_FL);
}

int snap__tree_immutable(int dirfd, bool immutable, bool top_too,
			 unsigned depth)
{
	char **names;
	int err;

	if (depth >= SNAP_MAX_DEPTH) {
		return -ELOOP;
	}
	/* Clearing goes top down (an immutable directory cannot change),
	 * setting bottom up. */
	if (!immutable && top_too) {
		err = snap__flags_set(dirfd, false);
		if (err) {
			return err;
		}
	}
	err = tree_names(dirfd, &names);
	if (err) {
		return err;
	}
	for (size_t i = 0; !err && names[i]; i++) {
		struct stat s;
		int fd;

		if (tree_skip(names[i], false) ||
		    fstatat(dirfd, names[i], &s, AT_SYMLINK_NOFOLLOW) ||
		    !(S_ISREG(s.st_mode) || S_ISDIR(s.st_mode))) {
			continue; /* symlinks cannot carry the flag */
		}
		fd = tree_openat(dirfd, names[i], O_RDONLY | O_NONBLOCK);
		if (fd < 0) {
			err = fd;
			break;
		}
		/* Looked at on the open file: a link to a live disk planted
		 * in the tree must never freeze that disk. */
		if (fstat(fd, &s)) {
			err = -errno;
		} else if (S_ISDIR(s.st_mode)) {
			err = snap__tree_immutable(fd, immutable, true,
						   depth + 1);
		} else if (!S_ISREG(s.st_mode)) {
			err = 0;
		} else if (s.st_nlink != 1) {
			err = immutable ? -EMLINK : 0;
		} else {
			err = snap__flags_set(fd, immutable);
		}
		close(fd);
	}
	snap__names_free(names);
	if (!err && immutable && top_too) {
		err = snap__flags_set(dirfd, true);
	}
	return err;
}

int snap__tree_is_sealed(int dirfd, unsigned depth)
{
	char **names;
	int rc;

	if (depth >= SNAP_MAX_DEPTH) {
		return 0;
	}
	rc = snap__flags_get(dirfd);
	if (rc <= 0) {
		return rc;
	}
	rc = tree_names(dirfd, &names);
	if (rc) {
		return rc;
	}
	rc = 1;
	for (size_t i = 0; rc == 1 && names[i]; i++) {
		struct stat s;
		int fd;

		if (tree_skip(names[i], false) ||
		    fstatat(dirfd, names[i], &s, AT_SYMLINK_NOFOLLOW) ||
		    !(S_ISREG(s.st_mode) || S_ISDIR(s.st_mode))) {
			continue;
		}
		fd = tree_openat(dirfd, names[i], O_RDONLY | O_NONBLOCK);
		if (fd < 0) {
			rc = fd;
			break;
		}
		if (fstat(fd, &s)) {
			rc = -errno;
		} else if (S_ISDIR(s.st_mode)) {
			rc = snap__tree_is_sealed(fd, depth + 1);
		} else if (S_ISREG(s.st_mode)) {
			rc = s.st_nlink == 1 ? snap__flags_get(fd) : 0;
		}
		close(fd);
	}
	snap__names_free(names);
	return rc;
}

int snap__tree_remove(int dirfd, const char *name, unsigned depth)
{
	struct stat s;
	char **names;
	int fd, err;

	if (fstatat(dirfd, name, &s, AT_SYMLINK_NOFOLLOW)) {
		return errno == ENOENT ? 0 : -errno;
	}
	if (!S_ISDIR(s.st_mode)) {
		return unlinkat(dirfd, name, 0) ? -errno : 0;
	}
	if (depth >= SNAP_MAX_DEPTH) {
		return -ELOOP;
	}
	fd = tree_openat(dirfd, name, O_RDONLY | O_DIRECTORY);
	if (fd < 0) {
		return fd;
	}
	err = tree_names(fd, &names);
	if (!err) {
		for (size_t i = 0; !err && names[i]; i++) {
			if (!tree_skip(names[i], false)) {
				err = snap__tree_remove(fd, names[i],
							depth + 1);
			}
		}
		snap__names_free(names);
	}
	close(fd);
	if (!err && unlinkat(dirfd, name, AT_REMOVEDIR)) {
		err = -errno;
	}
	return err;
}

int snap__tree_revert(int sdir, int ldir, unsigned depth, bool top,
		      struct snap_stats *st)
{
	char **names;
	int err;

	if (depth >= SNAP_MAX_DEPTH) {
		return -ELOOP;
	}
	/* What the snapshot does not hold (or holds as another type) goes. */
	err = tree_names(ldir, &names);
	if (err) {
		return err;
	}
	for (size_t i = 0; !err && names[i]; i++) {
		struct stat ls, ss;

		if (tree_skip(names[i], top) ||
		    fstatat(ldir, names[i], &ls, AT_SYMLINK_NOFOLLOW)) {
			continue;
		}
		if (fstatat(sdir, names[i], &ss, AT_SYMLINK_NOFOLLOW) ||
		    (ls.st_mode & S_IFMT) != (ss.st_mode & S_IFMT) ||
		    S_ISLNK(ls.st_mode)) {
			err = snap__tree_remove(ldir, names[i], depth + 1);
			st->removed += !S_ISLNK(ls.st_mode);
		}
	}
	snap__names_free(names);
	if (err) {
		return err;
	}
	/* Then every entry of the snapshot, in place where it can be. */
	err = tree_names(sdir, &names);
	if (err) {
		return err;
	}
	for (size_t i = 0; !err && names[i]; i++) {
		const char *name = names[i];
		struct stat ss, ls;
		bool have;

		if (tree_skip(name, top) ||
		    fstatat(sdir, name, &ss, AT_SYMLINK_NOFOLLOW)) {
			continue;
		}
		have = !fstatat(ldir, name, &ls, AT_SYMLINK_NOFOLLOW);
		if (S_ISREG(ss.st_mode)) {
			err = snap__file_clone(sdir, ldir, name, &ss, have);
			st->files++;
			st->bytes += (uint64_t)ss.st_size;
		} else if (S_ISLNK(ss.st_mode)) {
			err = tree_symlink_copy(sdir, ldir, name, &ss);
		} else if (S_ISDIR(ss.st_mode)) {
			int sub_s, sub_l;

			if (!have && mkdirat(ldir, name, 0700)) {
				err = -errno;
				break;
			}
			sub_s = tree_openat(sdir, name, O_RDONLY | O_DIRECTORY);
			sub_l = tree_openat(ldir, name, O_RDONLY | O_DIRECTORY);
			if (sub_s >= 0 && sub_l >= 0) {
				err = snap__tree_revert(sub_s, sub_l, depth + 1,
							false, st);
				if (!err) {
					err = tree_meta_set(sub_l, &ss);
				}
				st->dirs++;
			} else {
				err = sub_s < 0 ? sub_s : sub_l;
			}
			if (sub_s >= 0) {
				close(sub_s);
			}
			if (sub_l >= 0) {
				close(sub_l);
			}
		}
	}
	snap__names_free(names);
	return err;
}
