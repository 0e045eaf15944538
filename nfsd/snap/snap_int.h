/*
 * snap_int: the snap module's own declarations: the tree walks of tree.c
 * that snap.c runs.  Each takes directory descriptors (borrowed) and
 * returns 0 or -errno.
 */
#ifndef DSNFS_SNAP_INT_H
#define DSNFS_SNAP_INT_H

#include <stdbool.h>
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

/* ... over the tree of @dirfd, @dirfd included. */
int snap__tree_immutable(int dirfd, bool immutable, unsigned depth);

/* Removes @name of @dirfd, a whole tree if a directory (none of it
 * immutable). */
int snap__tree_remove(int dirfd, const char *name, unsigned depth);

/* Makes the tree of @ldir what the tree of @sdir is, in place; @top
 * leaves .snapshot alone. */
int snap__tree_revert(int sdir, int ldir, unsigned depth, bool top,
		      struct snap_stats *st);

#endif
