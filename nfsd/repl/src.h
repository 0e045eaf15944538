/* SPDX-License-Identifier: Apache-2.0 */
/*
 * repl src: what the transfer engine needs of the source datastore
 * (docs/replication.md, "CephFS datastores"): its snapshots (made,
 * deleted, listed by the relation) and, for one snapshot, its tree
 * (directories, symlinks, regular files read by range from several
 * threads at once) and which ranges of a file may differ from the same
 * file in the base snapshot.  Two kinds:
 *
 * - src_local.c: a datastore on a local file system (nfsd/snap: reflink
 *   snapshots under ROOT/.snapshot, the manifest); a tree is a
 *   directory, the changed ranges come from FIEMAP (plan.h);
 * - src_store.c: a datastore reached through its store's ops (the
 *   cephfs backend): the snapshots are the store's native ones
 *   (store_tree.h), a tree is walked from the root's .snapshot/NAME with
 *   the store's lookup, readdir, getattr, readlink and read, and the
 *   changed ranges come from the store (store_snapread.h: RADOS objects
 *   on CephFS), or are the whole file where it cannot tell.
 *
 * Every call blocks: run it off the event loops.  Errors are -errno.
 */
#ifndef DSNFS_REPL_SRC_H
#define DSNFS_REPL_SRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "nfsd/repl/guard.h"
#include "nfsd/repl/plan.h"
#include "nfsd/snap/snap.h"

struct export;
struct repl_src;
struct repl_src_tree;
struct repl_src_dir;
struct repl_src_file;

/* The longest name of a directory entry a tree hands out. */
#define REPL_SRC_NAME_MAX 255

struct repl_src_tree_ops {
	/* Directory @rel ("" the tree's root) for reading.  *out owned
	 * (dir_close).  -ENOTDIR, -ENOENT. */
	int (*dir_open)(struct repl_src_tree *t, const char *rel,
			struct repl_src_dir **out);
	/* The next entry but "." and "..": its name into @name
	 * (REPL_SRC_NAME_MAX + 1 bytes) and, when @st is not NULL, what
	 * lstat(2) says of it.  Returns 1, 0 at the end, or -errno. */
	int (*dir_next)(struct repl_src_dir *d, char *name, struct stat *st);
	void (*dir_close)(struct repl_src_dir *d);
	/* The target of symlink @rel into @buf (NUL-terminated).  Returns
	 * its length or -errno. */
	int (*readlink)(struct repl_src_tree *t, const char *rel, char *buf,
			size_t len);
	/* Regular file @rel (never a symlink followed) for reading, and its
	 * attributes into *st.  *out owned (file_close).  -EINVAL: not a
	 * regular file. */
	int (*file_open)(struct repl_src_tree *t, const char *rel,
			 struct repl_src_file **out, struct stat *st);
	/* Reads up to @len bytes at @off from @f; several threads may read
	 * one file at once.  Returns the bytes read (fewer only at the end
	 * of the file) or -errno. */
	ssize_t (*pread)(struct repl_src_file *f, void *buf, size_t len,
			 uint64_t off);
	void (*file_close)(struct repl_src_file *f);
	/*
	 * The ranges of @cur (@size bytes; a file of this tree) that may
	 * differ from @base (@base_size bytes; a file of the base tree, which
	 * the same source opened; NULL: none, the whole file), in units of
	 * REPL_BLOCK, sorted, merged; what is left out is the same in both
	 * without being read.  *out owned (free(); NULL when none).
	 */
	int (*changed)(struct repl_src_tree *t, struct repl_src_file *cur,
		       struct repl_src_file *base, uint64_t size,
		       uint64_t base_size, struct repl_range **out, size_t *n);
	void (*close)(struct repl_src_tree *t); /* frees it */
};

/* One snapshot's tree (or, for the unit tests, a plain directory). */
struct repl_src_tree {
	const struct repl_src_tree_ops *ops;
};

/* The head of an open file: its tree's ops (f->ops->pread(f, ...)). */
struct repl_src_file {
	const struct repl_src_tree_ops *ops;
};

struct repl_src_ops {
	/* Snapshot @name made (REPL_GUARD_CREATE), deleted or restored,
	 * under the datastore's guard.  The reason in @errbuf. */
	int (*snap)(struct repl_src *s, enum repl_guard_op op, const char *name,
		    char *errbuf, size_t errlen);
	/* 0 when snapshot @name is there, -ENOENT when not, or -errno. */
	int (*snap_check)(struct repl_src *s, const char *name);
	/* The datastore's snapshots by name; *out owned (free()). */
	int (*snap_list)(struct repl_src *s, struct snap_entry **out,
			 size_t *n);
	/* The tree of snapshot @name.  *out owned (its close). */
	int (*tree_open)(struct repl_src *s, const char *name,
			 struct repl_src_tree **out, char *errbuf,
			 size_t errlen);
	void (*free)(struct repl_src *s); /* NULL: not allocated */
};

struct repl_src {
	const struct repl_src_ops *ops;
};

/* A local datastore at @root (its manifest @manifest, snapshots under
 * @guard; NULL: none), kept in @l (no allocation: nothing to free).  All
 * three are borrowed while @l is used. */
struct repl_src_local {
	struct repl_src pub;
	const char *root, *manifest;
	const struct repl_guard *guard;
};

void repl_src_local_init(struct repl_src_local *l, const char *root,
			 const char *manifest, const struct repl_guard *guard);

/* The tree of directory @dir (borrowed while it is open): what a local
 * datastore's snapshot is, and what the unit tests hand the engine.
 * *out owned (its close).  Returns 0 or -errno. */
int repl_src_dir_tree(const char *dir, struct repl_src_tree **out);

/* A datastore served through the store of @exp (borrowed: it outlives
 * the source; export_store() at each call, -EAGAIN while there is none:
 * its cluster was down at start), with native snapshots (store_snap()),
 * made under @guard (borrowed; NULL: none).  *out owned:
 * repl_src_free().  Returns 0, -EOPNOTSUPP (the store has no native
 * snapshots) or -ENOMEM. */
int repl_src_store_new(const struct export *exp, const struct repl_guard *guard,
		       struct repl_src **out);

/* s->ops->free(s) when there is one; @s may be NULL. */
void repl_src_free(struct repl_src *s);

#endif
