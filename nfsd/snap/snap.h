/* SPDX-License-Identifier: Apache-2.0 */
/*
 * snap: native datastore snapshots (docs/admin-api.md), as ANF offers them: a
 * snapshot is a copy-on-write copy of the datastore's whole tree, made by
 * FICLONE of every file (XFS with reflink=1, btrfs), in the hidden area
 * ROOT/.snapshot/NAME, and made read-only by the file system itself: every
 * file and directory in it, and .snapshot, carry FS_IMMUTABLE_FL, which
 * refuses writes, removals and renames to root too (EPERM), so NFS
 * clients, ESXi as root among them, can read a snapshot but not change
 * it.  A snapshot costs the metadata of its files at first; blocks are
 * shared until the live datastore writes them.  Where the file system
 * cannot share blocks, a snapshot is refused (-EOPNOTSUPP), never made by
 * copying.  Each file is copied atomically (one FICLONE); the tree is
 * not one point in time while clients write (quiesce the VMs first).
 *
 * A restore reverts the live tree to the snapshot in place: a regular file
 * that is in both keeps its inode (its NFS file handle stays valid) and
 * gets the snapshot's data (truncated, then FICLONEd), mode, owner and
 * times; one made after the snapshot is removed (its handle answers
 * NFS3ERR_STALE); one removed since comes back as a new file (a new
 * handle).  Directories likewise.  Hard links in the datastore become
 * separate files in a snapshot (and after a restore).
 *
 * Which directories of .snapshot are snapshots is said by a manifest in
 * the server's state directory (@manifest, one file per datastore;
 * manifest.c), never by what exists under .snapshot: a directory a
 * client planted there is neither listed nor restorable.  A snapshot is
 * built under .snapshot/.NAME.tmp (mode 0700, a dot name), in new inodes
 * (FICLONE, never a hard link), sealed (a file with another link, planted
 * from outside, fails the snapshot and is never flagged: a live disk is
 * never made immutable), renamed into place and recorded.  A datastore
 * without a manifest (snapshotted before it existed) adopts, at its
 * first create or delete, the directories whose whole tree is sealed:
 * only the server, with CAP_LINUX_IMMUTABLE, can have made those.
 *
 * Every call blocks (one FICLONE or unlink per file): run it off the
 * event loops.  Not thread-safe for one datastore: the caller serialises
 * its snapshot calls.
 */
#ifndef DSNFS_SNAP_H
#define DSNFS_SNAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nfsd/snap/naming.h"

/* Directory levels copied; deeper ones fail the snapshot (-ELOOP). */
#define SNAP_MAX_DEPTH 32

struct snap_stats {
	uint64_t files; /* regular files cloned */
	uint64_t dirs;
	uint64_t bytes; /* their logical sizes */
	uint64_t removed; /* restore: entries made after the snapshot */
};

/*
 * Makes snapshot @name of the datastore rooted at @root (borrowed): the
 * tree but .snapshot, in .snapshot/.NAME.tmp, then sealed, renamed to NAME
 * and recorded in @manifest.  Returns 0 with @st filled (may be NULL), -EEXIST,
 * -EOPNOTSUPP (no reflink on this file system), -EPERM (FS_IMMUTABLE_FL
 * refused: CAP_LINUX_IMMUTABLE is needed), or another -errno, all with
 * the reason in @errbuf; on failure nothing is left.
 */
int snap_create(const char *root, const char *manifest, const char *name,
		struct snap_stats *st, char *errbuf, size_t errlen);

/* snap_create() with the snapshot's time (what the manifest and GET say
 * it was made at, its directory's times) @created_s, UTC seconds; 0:
 * now.  A replication destination gives its copy of a source snapshot
 * the source's time. */
int snap_create_at(const char *root, const char *manifest, const char *name,
		   int64_t created_s, struct snap_stats *st, char *errbuf,
		   size_t errlen);

/*
 * What a create (@exists false) or a delete or restore (@exists true) of
 * snapshot @name would first refuse, checked before it is started in the
 * background: a bad name (-EINVAL), a file system that cannot share
 * blocks (-EOPNOTSUPP, create), a snapshot that exists (-EEXIST) or does
 * not (-ENOENT).  Returns 0 or that error with the reason in @errbuf;
 * changes nothing.
 */
int snap_check(const char *root, const char *manifest, const char *name,
	       bool exists, char *errbuf, size_t errlen);

/* Removes snapshot @name (out of the manifest first).  Returns 0, -ENOENT
 * (not in the manifest) or -errno with the reason. */
int snap_delete(const char *root, const char *manifest, const char *name,
		char *errbuf, size_t errlen);

/* Reverts the live tree to snapshot @name (see the head of this file).
 * Returns 0 with @st filled (may be NULL) or -errno with the reason; a
 * restore that fails half way leaves a tree part reverted. */
int snap_restore(const char *root, const char *manifest, const char *name,
		 struct snap_stats *st, char *errbuf, size_t errlen);

/*
 * Makes directory @dest (new; on the file system of @root) a writable copy
 * of snapshot @name of the datastore rooted at @root, sharing every block
 * with it (FICLONE of each file: new inodes, none immutable), its root
 * with the mode and owner of @root.  The snapshot must be one the server
 * sealed.  Returns 0 with @st filled (may be NULL), or -errno with the
 * reason (-EOPNOTSUPP / -EXDEV: no block sharing there; -EEXIST: @dest
 * exists), nothing left at @dest.
 */
int snap_clone_tree(const char *root, const char *name, const char *dest,
		    struct snap_stats *st, char *errbuf, size_t errlen);

/* Removes what snap_clone_tree() made at @dest (a new datastore that
 * could not be recorded).  Returns 0 or -errno. */
int snap_clone_remove(const char *dest);

struct snap_entry {
	char name[SNAP_NAME_MAX + 1];
	int64_t created_s; /* UTC: when it was made */
};

/* The snapshots of @root that @manifest names and that are still the
 * directories the server made, by name.  Returns 0 and *out (owned: free())
 * with *n (none: *out NULL, *n 0), or -errno. */
int snap_list(const char *root, const char *manifest, struct snap_entry **out,
	      size_t *n);

#endif
