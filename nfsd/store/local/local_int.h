/* SPDX-License-Identifier: Apache-2.0 */
/*
 * local_int: what the files of the local-directory backend share
 * (local*.c, obj.c, fcache.c, zero_first.c, the backend's journal in
 * ilog/, and their unit tests only), on top of the common internals
 * (store_int.h): the local object, its cache, the store, and the ops.
 * obj.c owns one resolved object, fcache.c caches them, zero_first.c
 * zeroes VMFS's first writes, local*.c are the ops table.  The journal's
 * writer is reached through ilog/ilog.h.
 */
#ifndef DSNFS_STORE_LOCAL_INT_H
#define DSNFS_STORE_LOCAL_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "nfsd/base/base.h"
#include "nfsd/store/local/local.h"
#include "nfsd/store/store.h"
#include "nfsd/store/store_int.h"
#include "nfsd/store/store_obj.h"
#include "nfsd/store/syncgroup.h"

struct local_obj;

/* ---- VMFS zeroing on first write (zero_first.c) ------------------------ */

/*
 * Before a write of @count bytes at @off_bytes through @fd, when @st has
 * zero_on_first_write: writes and flushes zeros over the holes and
 * unwritten extents of the 1 MiB blocks it touches (below the end of
 * file).  *locked says whether it took @obj's zero_lock, held until
 * store__zero_first_end(), which the caller always calls after its write,
 * also when this fails.  Returns 0 or -errno (the write must not go on).
 */
int store__zero_first_begin(struct store *st, struct local_obj *obj, int fd,
			    uint64_t off_bytes, uint32_t count, bool *locked);
void store__zero_first_end(struct local_obj *obj, bool locked);

/* ---- resolved objects (obj.c) ------------------------------------------ */

/*
 * One resolved file of the local backend: the object head every backend
 * shares (store.h: its reference count and handle) and what this backend
 * keeps.  Everything but the reference count, the io descriptor and the
 * fcache links is set before the object is published and read-only
 * afterwards, so ops read it without a lock.
 */
struct local_obj {
	struct store_obj base;
	/* fcache.c's, under its mutex */
	uint64_t hash;
	struct local_obj *hash_next;
	struct local_obj *lru_prev, *lru_next;
	bool cached;

	enum store_ftype type;
	dev_t dev;
	ino_t ino;
	/* O_PATH|O_NOFOLLOW, or O_RDWR for a regular file we created. */
	int fd;
	/* Read/write descriptor of a regular file, opened on first use:
	 * -1 until then, may equal fd. */
	atomic_int io_fd;
	/* 0, or -errno why io_fd could only be opened read-only. */
	atomic_int io_write_err;
	/* Group commit of the stable writes and COMMITs through io_fd. */
	struct store_syncgroup sync;
	/* Intent log (ilog.h): held across a stable write's pwrite and its
	 * append, so that the file and the log see overlapping writes in
	 * the same order. */
	pthread_mutex_t ilog_order;
	/* The LSN a flush must reach to cover this file's last record; 0:
	 * none.  Replay would re-apply records past the log's head. */
	_Atomic uint64_t ilog_lsn;
	/* Where the file's last WRITE ended: a stable write starting here
	 * continues a sequential stream (store__ilog_inplace_rule). */
	_Atomic uint64_t write_end;
	/* ilog.c's, under its lock: on its dirty list (holding a ref). */
	bool ilog_dirty;
	struct local_obj *ilog_next;
	/* local_direct.c: the O_DIRECT descriptor of in-place stable
	 * writes, -1 until the first; direct_refused once the file system
	 * refused it (the buffered path from then on). */
	atomic_int direct_fd;
	atomic_bool direct_refused;
	/* zero_first.c: held by every write into a block with a hole. */
	pthread_mutex_t zero_lock;
};

/* The local object whose head @o is (an object of a local store). */
static inline struct local_obj *local_obj(struct store_obj *o)
{
	return container_of(o, struct local_obj, base);
}

static inline const struct local_obj *local_obj_const(const struct store_obj *o)
{
	return container_of(o, const struct local_obj, base);
}

/*
 * Makes an object with one reference (the caller's) around @fd, which it
 * takes (closed by the last unref), for the file described by @stat with
 * wire handle @fh.  When @io_fd_rw is true @fd is also its read/write
 * descriptor.  Returns 0 or -ENOMEM / -errno of the sync group's init (fd
 * closed then too).
 */
int store__obj_new(int fd, bool io_fd_rw, const struct stat *stat,
		   const struct store_fh *fh, struct local_obj **out);
void store__obj_ref(struct local_obj *obj);
/* Drops one reference; the last one closes the descriptors and frees. */
void store__obj_unref(struct local_obj *obj);

/*
 * Returns in *fd a read/write descriptor of regular file @obj (read-only
 * when the file cannot be opened for writing; then *write_err says why,
 * else 0).  Borrowed: valid while the caller holds its reference.  -EISDIR
 * for a directory, -EINVAL for other types, or the open's -errno.
 */
int store__obj_io_fd(struct local_obj *obj, int *fd, int *write_err);

/* Writes "/proc/self/fd/N" for @fd into buf: the magic link that names the
 * open inode itself, never a path that could be swapped. */
void store__proc_fd_path(int fd, char *buf, size_t len);

/* ---- object cache (fcache.c) ------------------------------------------- */

/* The bound of a store's cache until the server sets it from its
 * descriptor budget (store_local_cache_resize()). */
#define STORE_FCACHE_DEFAULT_ENTRIES 4096

struct store_fcache;

/* Returns owned (free with store__fcache_free()), 0 or -ENOMEM/-EINVAL. */
int store__fcache_new(size_t max_entries, struct store_fcache **out);
/* Drops the cache's references; objects others still hold live on. */
void store__fcache_free(struct store_fcache *fc);

/* Returns the cached object for @fh with a new reference (owned), or NULL.
 * Marks it most recently used. */
struct local_obj *store__fcache_get(struct store_fcache *fc,
				    const struct store_fh *fh);

/*
 * Caches @obj.  Takes the caller's reference on @obj and returns owned the
 * object to use: @obj itself (now also held by the cache), or the object
 * already cached under the same handle (then @obj is unreferenced).  When
 * full, evicts the least recently used entry that no one else holds; with
 * every entry in use it goes past its bound (in-use objects keep their
 * descriptors open anyway): a file has at most one live object.
 */
struct local_obj *store__fcache_put(struct store_fcache *fc,
				    struct local_obj *obj);

/* Forgets the entry for @fh, if any (its file found unlinked). */
void store__fcache_drop(struct store_fcache *fc, const struct store_fh *fh);
/* Drops the entry of @fh if its file has no link left (an unlink or a
 * rename took its last name): its space can be freed once its holders let
 * go.  A file another hard link keeps stays cached, one object per file. */
void store__fcache_drop_unlinked(struct store_fcache *fc,
				 const struct store_fh *fh);

/* Number of cached entries. */
size_t store__fcache_count(struct store_fcache *fc);

/* Sets the bound to @max_entries (1..STORE_FCACHE_MAX_ENTRIES), evicting
 * the least recently used entries past it that no one else holds.  0, -EINVAL
 * or -ENOMEM (the table could not grow: the old bound stays). */
int store__fcache_resize(struct store_fcache *fc, size_t max_entries);

/*
 * After an open failed with @err: when the process is out of descriptors
 * (-EMFILE, -ENFILE), evicts a quarter of @fc's entries (at least one),
 * the least recently used of those no request holds, so that their
 * descriptors close, and returns true: the caller retries its open once.
 * False for any other error, or when no entry could be evicted.
 */
bool store__fcache_relieve(struct store_fcache *fc, int err);

/* ---- the local backend (local*.c) -------------------------------------- */

/* Bound of the ".." walk that proves a directory lies inside the export. */
#define STORE_LOCAL_DEPTH_MAX 4096

/* Extended attribute keeping the verifier of an EXCLUSIVE create. */
#define STORE_LOCAL_VERF_XATTR "trusted.dsnfs.verf"

struct store_local {
	struct store base;
	/* O_RDONLY|O_DIRECTORY: the mount fd of open_by_handle_at(). */
	int root_fd;
	dev_t root_dev;
	ino_t root_ino;
	/* The root as /proc/self/fd names it; empty when unknown. */
	char root_path[4096];
	size_t root_path_len;
	struct store_secret secret;
	struct store_fcache *fc;
	struct local_obj *root; /* one reference held for the store's life */
	/* STATE_DIR/snapshots-NAME.manifest: which .snapshot directories
	 * are snapshots (nfsd/snap/); empty when the name is too long. */
	char snap_manifest[4096 + 128];
};

static inline struct store_local *store__local(struct store *st)
{
	return container_of(st, struct store_local, base);
}

/*
 * Makes the object for @fd, opened relative to a directory of the export
 * (it lies inside by construction): checks its filesystem, builds its
 * handle and caches it.  Takes @fd; *out returns owned.  @io_fd_rw as in
 * store__obj_new().  -EACCES for an object on another filesystem (a mount
 * point inside the export is not crossed).
 */
int store__local_obj_from_fd(struct store_local *sl, int fd, bool io_fd_rw,
			     struct local_obj **out);

/*
 * Opens that, out of descriptors (EMFILE, ENFILE), relieve @sl's cache and
 * retry once (local_fd.c): openat(2) with @flags and @mode, open_by_handle
 * of @kfh under the export root, the I/O descriptor of @obj
 * (store__obj_io_fd()).  Return the descriptor (or 0 for _io_fd) or
 * -errno.
 */
int store__local_openat(struct store_local *sl, int dirfd, const char *name,
			int flags, mode_t mode);
int store__local_kfh_open(struct store_local *sl, const struct store_kfh *kfh,
			  int flags);
int store__local_io_fd(struct store_local *sl, struct local_obj *obj, int *fd,
		       int *write_err);

/* Makes the entries of directory @dir durable (local_sync.c: fsync of
 * the directory).  Returns 0 or -errno. */
int store__local_sync_dir(const struct local_obj *dir);
/* Makes @obj's attributes durable (fsync, or syncfs for what cannot be
 * opened).  Returns 0 or -errno. */
int store__local_sync_obj(struct store_local *sl, struct local_obj *obj);

/* Applies @sattr to @obj of @st (owner, then mode, size, times; a size
 * change first settles the file's intent-log records).  Borrows all. */
int store__local_sattr_apply(struct store *st, struct local_obj *obj,
			     const struct store_sattr *sattr);

/* The ops of local_attr.c, local_io.c, local_ns.c and local_dir.c. */
int store__local_getattr(struct store *st, struct store_obj *obj,
			 struct store_attr *attr);
/* Fills @attr of store @st from @sb (borrowed), as getattr does. */
void store__local_attr_from_stat(const struct store *st, const struct stat *sb,
				 struct store_attr *attr);
int store__local_read_ref(struct store *st, struct store_obj *obj,
			  struct store_file_ref *ref);
/* ops->ref_pread: store_file_ref_pread() on a ref of read_ref. */
int store__local_ref_pread(struct store *st, const struct store_file_ref *ref,
			   uint64_t off_bytes, void *buf, uint32_t count,
			   uint32_t *nread);
int store__local_setattr(struct store *st, struct store_obj *obj,
			 const struct store_sattr *sattr,
			 const struct store_cred *cred);
int store__local_readlink(struct store *st, struct store_obj *obj, char *buf,
			  size_t buflen, size_t *len);
int store__local_fsstat(struct store *st, struct store_fsstat *fs);
int store__local_read(struct store *st, struct store_obj *obj,
		      uint64_t off_bytes, void *buf, uint32_t count,
		      uint32_t *nread, bool *eof);
int store__local_write(struct store *st, struct store_obj *obj,
		       uint64_t off_bytes, const void *buf, uint32_t count,
		       enum store_stable stable, bool *sync_failed);
/*
 * local_direct.c: writes @count bytes of @buf at @off_bytes of @obj
 * (@io_fd its read/write descriptor) with O_DIRECT and RWF_DSYNC when
 * only data moves (whole 4 KiB blocks, all written, inside the size).
 * Returns 0 (the bytes stable), -EAGAIN (not done: take the buffered
 * path) or -errno of the write (some bytes may be written).
 */
int store__local_write_direct(struct store *st, struct local_obj *obj,
			      int io_fd, uint64_t off_bytes, const void *buf,
			      uint32_t count);
/* local_direct.c: the O_DIRECT descriptor a direct write of @count bytes
 * at @off_bytes goes through (borrowed from @obj), or -EAGAIN when it
 * must take the buffered path (the rules above). */
int store__local_direct_target(struct store *st, struct local_obj *obj,
			       int io_fd, uint64_t off_bytes, uint32_t count);
/*
 * local_dring.c: that direct write for a parked WRITE, through the intent
 * log's ring: 0 when queued (@done(@arg, err) called once, off the loop,
 * when it is stable, @w->after filled), -EAGAIN when it cannot go there
 * (no ring, or the buffered path's rules): nothing was written.
 */
int store__local_write_direct_async(struct store *st, struct local_obj *obj,
				    int io_fd, uint64_t off_bytes,
				    const void *buf, uint32_t count,
				    struct store_write_wait *w,
				    store_write_done_fn done, void *arg);
/* local_wsync.c: fsync (STORE_FILE_SYNC) or fdatasync of @obj's file
 * through @fd, shared by the file's writers in flight (its sync group).
 * 0 or -errno (*@sync_failed when it failed). */
int store__local_wsync(struct store *st, struct local_obj *obj, int fd,
		       enum store_stable level, bool *sync_failed);
/*
 * local_wsync.c: an in-place stable write the buffered way: pwrite under
 * the file's ilog_order, *@upto_lsn read there, then the file's shared
 * fdatasync.  0 or -errno (*@sync_failed when the sync failed).
 */
int store__local_inplace_buffered(struct store *st, struct local_obj *obj,
				  int fd, uint64_t off_bytes, const void *buf,
				  uint32_t count, uint64_t *upto_lsn,
				  bool *sync_failed);
int store__local_write_async(struct store *st, struct store_obj *obj,
			     uint64_t off_bytes, const void *buf,
			     uint32_t count, struct store_write_wait *w,
			     store_write_done_fn done, void *arg);
int store__local_commit(struct store *st, struct store_obj *obj,
			uint64_t off_bytes, uint32_t count, bool *sync_failed);
int store__local_create(struct store *st, struct store_obj *dir,
			const char *name, enum store_create_how how,
			const struct store_sattr *sattr, const uint8_t verf[8],
			const struct store_cred *cred, struct store_obj **out);
int store__local_mkdir(struct store *st, struct store_obj *dir,
		       const char *name, const struct store_sattr *sattr,
		       const struct store_cred *cred, struct store_obj **out);
int store__local_symlink(struct store *st, struct store_obj *dir,
			 const char *name, const char *target,
			 const struct store_sattr *sattr,
			 const struct store_cred *cred, struct store_obj **out);
int store__local_mknod(struct store *st, struct store_obj *dir,
		       const char *name, enum store_ftype type,
		       uint32_t rdev_major, uint32_t rdev_minor,
		       const struct store_sattr *sattr,
		       const struct store_cred *cred, struct store_obj **out);
int store__local_remove(struct store *st, struct store_obj *dir,
			const char *name);
int store__local_rmdir(struct store *st, struct store_obj *dir,
		       const char *name);
int store__local_rename(struct store *st, struct store_obj *from_dir,
			const char *from_name, struct store_obj *to_dir,
			const char *to_name);
int store__local_link(struct store *st, struct store_obj *obj,
		      struct store_obj *dir, const char *name);
int store__local_readdir(struct store *st, struct store_obj *dir,
			 uint64_t cookie, store_readdir_fn cb, void *arg);

/* local_tree.c: the storage-side operations (store/store_tree.h). */
struct store_tree;
struct store_snap_ops;
int store__local_tree_open(struct store *st, struct store_tree **out,
			   char *errbuf, size_t errlen);
extern const struct store_snap_ops store__local_snap_ops;

#endif
