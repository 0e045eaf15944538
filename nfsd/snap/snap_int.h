/* SPDX-License-Identifier: Apache-2.0 */
/*
 * snap_int: the snap module's own declarations: the tree walks of tree.c
 * that snap.c runs.  Each takes directory descriptors (borrowed) and
 * returns 0 or -errno.
 */
#ifndef DSNFS_SNAP_INT_H
#define DSNFS_SNAP_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "nfsd/snap/snap.h"

/* The names in directory @dirfd but "." and ".." included, in a
 * NULL-terminated array (owned: snap__names_free()). */
int snap__names_get(int dirfd, char ***out);
void snap__names_free(char **names);

/* FICLONE of regular file @name of @sdir into @ddir (new, or with
 * @replace the one there, emptied first: same inode), with @st's mode,
 * owner and times. */
int snap__file_clone(int sdir, int ddir, const char *name,
		     const struct stat *st, bool replace);

/* Copies the tree of @sdir into the empty @ddir; @top leaves out
 * .snapshot.  Counts into @st. */
int snap__tree_clone(int sdir, int ddir, unsigned depth, bool top,
		     struct snap_stats *st);

/* FS_IMMUTABLE_FL on or off one file or directory. */
int snap__flags_set(int fd, bool immutable);
/* Whether @fd carries FS_IMMUTABLE_FL: 1, 0 or -errno. */
int snap__flags_get(int fd);

/* ... over the tree of @dirfd, @dirfd included when @top_too.  A regular
 * file with another link (st_nlink > 1: not one a snapshot made, a link
 * to a live file planted in the tree) is never flagged: setting fails
 * with -EMLINK, clearing leaves it alone. */
int snap__tree_immutable(int dirfd, bool immutable, bool top_too,
			 unsigned depth);

/* 1 when every directory and regular file of the tree of @dirfd, @dirfd
 * included, carries FS_IMMUTABLE_FL and no regular file has another link
 * (a tree only the server can have made), else 0, or -errno. */
int snap__tree_is_sealed(int dirfd, unsigned depth);

/* ---- manifest.c: the snapshots of a datastore, in the state directory */

struct snap_manifest_entry {
	char name[SNAP_NAME_MAX + 1];
	int64_t created_s;
	uint64_t ino; /* of .snapshot/NAME when it was made */
};

struct snap_manifest {
	struct snap_manifest_entry *e; /* owned */
	size_t n;
};

/* Reads @path into @m (release: snap__manifest_free()).  Returns 0,
 * -ENOENT (no manifest yet; nothing in @errbuf) or -errno with the
 * reason. */
int snap__manifest_load(const char *path, struct snap_manifest *m, char *errbuf,
			size_t errlen);
/* Replaces @path by @m: temporary file, fsync, rename, fsync of the
 * directory.  Returns 0 or -errno with the reason. */
int snap__manifest_save(const char *path, const struct snap_manifest *m,
			char *errbuf, size_t errlen);
void snap__manifest_free(struct snap_manifest *m);
/* The index of @name in @m, or -1. */
int snap__manifest_find(const struct snap_manifest *m, const char *name);
int snap__manifest_add(struct snap_manifest *m,
		       const struct snap_manifest_entry *e);
void snap__manifest_del(struct snap_manifest *m, const char *name);

/* Removes @name of @dirfd, a whole tree if a directory (none of it
 * immutable). */
int snap__tree_remove(int dirfd, const char *name, unsigned depth);

/* Makes the tree of @ldir what the tree of @sdir is, in place; @top
 * leaves .snapshot alone. */
int snap__tree_revert(int sdir, int ldir, unsigned depth, bool top,
		      struct snap_stats *st);

#endif
