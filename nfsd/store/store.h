/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store: the backend interface of a datastore.  A datastore (= one export =
 * one volume) is a `struct store` whose ops table reaches files only through
 * opaque, reference-counted objects resolved from file handles, so that a
 * backend other than a local directory can stand behind the same NFSv3 code.
 * This header is the table alone: the backends live in rooms of their own,
 * store/local/ (a local directory, local/local.h, with its intent log in
 * store/ilog/) and store/cephfs/ (a CephFS directory through libcephfs,
 * cephfs/cephfs.h); store/store_open.h opens either from its parameters,
 * so nothing above store/ knows which one it talks to.
 *
 * Every op returns 0 or a negative errno.  Besides the errno values the ops
 * may return the NFS-specific codes below (the Linux kernel's numbers), which
 * nfs3/status.c maps to their nfsstat3.  All ops are thread-safe: they run on
 * loop threads and on the blocking-work threads of rpc/dispatch.
 *
 * Conventions of every backend:
 * - Ops check no permission of the caller; they act with the server's
 *   privileges.  The nfs3 layer checks access (and squashes) before it
 *   calls.  The cred of the create ops makes the caller the new object's
 *   owner unless sattr sets uid/gid.
 * - A name that is empty or contains '/' gives -EACCES (a legal reply of
 *   every NFSv3 procedure taking a name), longer than STORE_NAME_MAX
 *   -ENAMETOOLONG.  "." and ".." as the name to change give -EEXIST
 *   (create, mkdir, symlink, mknod, link), -EACCES (remove) or -EINVAL
 *   (rmdir, rename).
 * - -ESTALE: the handle was ours but its file is gone or lies outside the
 *   export.  -EACCES from lookup: the name is a mount point (not crossed).
 * - -EISDIR / -EINVAL: read, write, commit or a size change on a directory
 *   / on another non-regular file.  -EFBIG: a write or size past INT64_MAX;
 *   a read there is not an error: it stops at INT64_MAX (none at or past
 *   it), as a read stops at the end of the file.
 * - -STORE_ENOTSUPP from an EXCLUSIVE create: the backend cannot keep the
 *   verifier (the client falls back to GUARDED).
 */
#ifndef DSNFS_STORE_H
#define DSNFS_STORE_H

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* File handle bytes on the wire; ESXi refuses handles longer than 56. */
#define STORE_FH_MAX 56
#define STORE_NAME_MAX 255 /* NFS3ERR_NAMETOOLONG above this */
#define STORE_PATH_MAX 1024 /* symlink target bound */

#define STORE_EBADHANDLE 521 /* NFS3ERR_BADHANDLE: not one of our handles */
#define STORE_ENOTSYNC 522 /* NFS3ERR_NOT_SYNC: SETATTR guard mismatch */
#define STORE_EBADCOOKIE 523 /* NFS3ERR_BAD_COOKIE */
#define STORE_ENOTSUPP 524 /* NFS3ERR_NOTSUPP */
#define STORE_ETOOSMALL 525 /* NFS3ERR_TOOSMALL */
#define STORE_EBADTYPE 527 /* NFS3ERR_BADTYPE */

struct store_fh {
	uint32_t len;
	uint8_t data[STORE_FH_MAX];
};

/* Values equal ftype3 (RFC 1813 2.5). */
enum store_ftype {
	STORE_REG = 1,
	STORE_DIR = 2,
	STORE_BLK = 3,
	STORE_CHR = 4,
	STORE_LNK = 5,
	STORE_SOCK = 6,
	STORE_FIFO = 7,
};

struct store_attr {
	enum store_ftype type;
	uint32_t mode; /* permission bits only: 07777 */
	uint32_t nlink;
	uint32_t uid;
	uint32_t gid;
	uint64_t size_bytes;
	uint64_t used_bytes;
	uint32_t rdev_major;
	uint32_t rdev_minor;
	uint64_t fsid;
	uint64_t fileid;
	struct timespec atime;
	struct timespec mtime;
	struct timespec ctime;
};

enum store_time_how {
	STORE_TIME_DONT_CHANGE = 0,
	STORE_TIME_SERVER = 1,
	STORE_TIME_CLIENT = 2,
};

/* What to change (sattr3). */
struct store_sattr {
	bool set_mode, set_uid, set_gid, set_size;
	uint32_t mode;
	uint32_t uid;
	uint32_t gid;
	uint64_t size_bytes;
	enum store_time_how atime_how, mtime_how;
	struct timespec atime, mtime;
};

/* The caller's identity (AUTH_SYS, after squashing). Borrowed by every op. */
struct store_cred {
	uint32_t uid;
	uint32_t gid;
	uint32_t ngroups;
	const uint32_t *groups;
};

struct store_fsstat {
	uint64_t total_bytes, free_bytes, avail_bytes;
	uint64_t total_files, free_files, avail_files;
};

/* Values equal stable_how (RFC 1813 3.3.7). */
enum store_stable {
	STORE_UNSTABLE = 0,
	STORE_DATA_SYNC = 1,
	STORE_FILE_SYNC = 2,
};

/* Values equal createmode3 (RFC 1813 3.3.8). */
enum store_create_how {
	STORE_CREATE_UNCHECKED = 0,
	STORE_CREATE_GUARDED = 1,
	STORE_CREATE_EXCLUSIVE = 2,
};

struct store;
struct store_obj; /* a resolved file; opaque, reference counted */
struct store_ilog; /* an intent log of stable writes (store/ilog/ilog.h) */
struct store_tree; /* storage-side file I/O (store/store_tree.h) */
struct store_snap_ops; /* native snapshots (store/store_tree.h) */

/*
 * A descriptor that a regular file's data can be read from (pread(2),
 * sendfile(2)) and the reference that keeps it open: call unref(ref) once,
 * on any thread, when done with it.  The descriptor is the store's own
 * (never dup'ed): do not close it, seek it or change its flags.
 */
struct store_file_ref {
	int fd;
	void (*unref)(void *ref);
	void *ref;
};

/*
 * The end of a stable write that did not block (store_ops.write_async):
 * @err is 0 (stable) or the -errno of the log (the write is then not
 * stable: a failed sync).  Called once, on a thread of the store's.
 */
typedef void (*store_write_done_fn)(void *arg, int err);

/* A write_async in flight: the caller's storage, the store's until done
 * is called (the store links and fills it). */
struct store_write_wait {
	struct store_write_wait *next;
	uint64_t end_lsn;
	store_write_done_fn done;
	void *arg;
	/* Set before done when the store wrote the bytes after write_async
	 * returned (a direct write through a ring): the file's attributes
	 * after the write, for the reply (the caller's stat was too early). */
	bool after_set;
	struct store_attr after;
	/* Set by write_async before it returns when the bytes go in later
	 * (after_set then says whether the attributes came): the caller
	 * skips a stat that would only be overwritten. */
	bool after_later;
};

/*
 * Called by readdir for each entry after the given cookie, in order.
 * @cookie is the value that resumes the listing after this entry.
 * Returns 0 to go on, 1 to stop (the reply is full), or a negative errno
 * that readdir then returns.
 */
typedef int (*store_readdir_fn)(void *arg, const char *name, uint64_t fileid,
				uint64_t cookie);

struct store_ops {
	/* Resolves a handle of this store. *out returns owned (unref it).
	 * -STORE_EBADHANDLE for a malformed or forged handle, -ESTALE for a
	 * file that is gone. */
	int (*resolve)(struct store *st, const struct store_fh *fh,
		       struct store_obj **out);
	void (*obj_ref)(struct store_obj *obj);
	void (*obj_unref)(struct store_obj *obj);
	/* The handle of @obj (a copy into *fh). */
	void (*obj_fh)(const struct store_obj *obj, struct store_fh *fh);
	/* The handle of the store's root directory. */
	int (*root)(struct store *st, struct store_obj **out);

	int (*getattr)(struct store *st, struct store_obj *obj,
		       struct store_attr *attr);
	int (*setattr)(struct store *st, struct store_obj *obj,
		       const struct store_sattr *sattr,
		       const struct store_cred *cred);
	/* Never follows symlinks; ".." of the root is the root itself. */
	int (*lookup)(struct store *st, struct store_obj *dir, const char *name,
		      struct store_obj **out);
	/* Copies the target into buf (not NUL-terminated), sets *len. */
	int (*readlink)(struct store *st, struct store_obj *obj, char *buf,
			size_t buflen, size_t *len);

	/* *eof is true exactly when the read reached the end of the file. */
	int (*read)(struct store *st, struct store_obj *obj, uint64_t off_bytes,
		    void *buf, uint32_t count, uint32_t *nread, bool *eof);
	/* Writes all of buf (short writes are looped).  With DATA_SYNC or
	 * FILE_SYNC the data (and for FILE_SYNC the metadata) is on stable
	 * storage when it returns: may block, call it off the loop then.
	 * *sync_failed (write and commit) is set when the error came from
	 * the sync itself: the file's earlier unstable data may then be lost
	 * (a writeback error), where a write refused before the sync (ENOSPC
	 * from the write, EFBIG) loses nothing acknowledged. */
	int (*write)(struct store *st, struct store_obj *obj,
		     uint64_t off_bytes, const void *buf, uint32_t count,
		     enum store_stable stable, bool *sync_failed);
	/* Optional (may be NULL): a DATA_SYNC or FILE_SYNC write that does
	 * not block, for the loop (an intent log, store/ilog/ilog.h): the data
	 * goes to the file, and @done(@arg, err) is called once, later, on
	 * another thread, when it is stable.  Returns 0 then; -EAGAIN when
	 * it cannot go on without blocking (no log, its ring or batch full,
	 * the file busy, a large write that is synced in its file): nothing is
	 * acknowledged and the caller uses write on a work thread (its bytes
	 * may be in the file already: the same bytes again); another -errno as
	 * write (done is never called).
	 * @w (borrowed until done) is the store's meanwhile. */
	int (*write_async)(struct store *st, struct store_obj *obj,
			   uint64_t off_bytes, const void *buf, uint32_t count,
			   struct store_write_wait *w, store_write_done_fn done,
			   void *arg);
	/* Flushes the file to stable storage.  Blocks. */
	int (*commit)(struct store *st, struct store_obj *obj,
		      uint64_t off_bytes, uint32_t count, bool *sync_failed);

	/* EXCLUSIVE keeps verf with the file so that a retried CREATE with
	 * the same verifier succeeds (-EEXIST with another verifier). */
	int (*create)(struct store *st, struct store_obj *dir, const char *name,
		      enum store_create_how how,
		      const struct store_sattr *sattr, const uint8_t verf[8],
		      const struct store_cred *cred, struct store_obj **out);
	int (*mkdir)(struct store *st, struct store_obj *dir, const char *name,
		     const struct store_sattr *sattr,
		     const struct store_cred *cred, struct store_obj **out);
	int (*symlink)(struct store *st, struct store_obj *dir,
		       const char *name, const char *target,
		       const struct store_sattr *sattr,
		       const struct store_cred *cred, struct store_obj **out);
	int (*mknod)(struct store *st, struct store_obj *dir, const char *name,
		     enum store_ftype type, uint32_t rdev_major,
		     uint32_t rdev_minor, const struct store_sattr *sattr,
		     const struct store_cred *cred, struct store_obj **out);
	int (*remove)(struct store *st, struct store_obj *dir,
		      const char *name);
	int (*rmdir)(struct store *st, struct store_obj *dir, const char *name);
	int (*rename)(struct store *st, struct store_obj *from_dir,
		      const char *from_name, struct store_obj *to_dir,
		      const char *to_name);
	int (*link)(struct store *st, struct store_obj *obj,
		    struct store_obj *dir, const char *name);

	/* Lists @dir from @cookie (0 = start), calling @cb for each entry
	 * including "." and "..".  Blocks on large directories. */
	int (*readdir)(struct store *st, struct store_obj *dir, uint64_t cookie,
		       store_readdir_fn cb, void *arg);
	int (*fsstat)(struct store *st, struct store_fsstat *fs);
	/* Optional (may be NULL): the object's path inside the datastore
	 * ("/dir/disk.vmdk") for trace lines; best effort, -ENOENT when
	 * the backend cannot tell. */
	int (*path)(struct store *st, const struct store_obj *obj, char *buf,
		    size_t len);
	/* Frees the store and everything it holds. */
	void (*close)(struct store *st);

	/* Optional (may be NULL: use resolve, then getattr): resolve, and
	 * the object's attributes from the same look at the file, so that
	 * a call that needs both costs one stat. */
	int (*resolve_attr)(struct store *st, const struct store_fh *fh,
			    struct store_obj **out, struct store_attr *attr);
	/* Optional (may be NULL: READ uses read): the descriptor of regular
	 * file @obj to read its data from, without a copy (sendfile) and
	 * without a stat.  *ref returns owned.  -EISDIR / -EINVAL for a
	 * directory / another non-regular file. */
	int (*read_ref)(struct store *st, struct store_obj *obj,
			struct store_file_ref *ref);
	/* Set exactly when read_ref is: reads up to @count bytes at
	 * @off_bytes from @ref (borrowed, from read_ref of this store),
	 * looping over short reads until @count or the end of the file;
	 * *nread is the count read; a read at or past INT64_MAX reads
	 * nothing, one that would pass it stops there. */
	int (*ref_pread)(struct store *st, const struct store_file_ref *ref,
			 uint64_t off_bytes, void *buf, uint32_t count,
			 uint32_t *nread);
	/* Optional (may be NULL: store_read_sized uses read): read for a
	 * caller that has just taken the file's attributes, so that a READ
	 * costs one stat, not two: up to @count bytes at @off_bytes (the
	 * caller bounds @count by @size_bytes), *eof when the read came
	 * short or reached @size_bytes; no stat of its own.  Unused when
	 * read_ref is set. */
	int (*read_sized)(struct store *st, struct store_obj *obj,
			  uint64_t size_bytes, uint64_t off_bytes, void *buf,
			  uint32_t count, uint32_t *nread, bool *eof);
	/* Optional (may be NULL: the backend keeps no descriptors): bounds
	 * the store's cache of resolved files to @max_entries, each holding
	 * up to two descriptors; the least recently used past the bound are
	 * evicted, one still in use keeps its descriptors until its request
	 * is done.  Any thread, while the store serves.  Returns 0, -EINVAL
	 * (0 or over STORE_CACHE_MAX_ENTRIES) or -ENOMEM. */
	int (*cache_resize)(struct store *st, size_t max_entries);

	/* Optional (may be NULL: no storage-side operations): opens the
	 * file-I/O table the admin API's VAAI operations use
	 * (store/store_tree.h).  *out owned: (*out)->close(*out).  Blocks;
	 * any thread. */
	int (*tree_open)(struct store *st, struct store_tree **out,
			 char *errbuf, size_t errlen);
	/* NULL: the backend has no native snapshots (store/store_tree.h). */
	const struct store_snap_ops *snap;
};

/* A cache bound above this is refused (store_ops.cache_resize). */
#define STORE_CACHE_MAX_ENTRIES (1u << 24)

struct store {
	const struct store_ops *ops;
	char name[64]; /* datastore name, e.g. "ds1" */
	uint32_t export_id; /* carried in every handle of this store */
	/* Concurrent stable writes and COMMITs of one file share one sync
	 * (store/syncgroup.h).  True when opened; set before serving
	 * ([server] group_commit), read-only afterwards. */
	bool group_commit;
	/* Every op may wait on a remote cluster (the cephfs backend): the
	 * nfs3 layer then runs each call of this store on a work thread.
	 * Set when opened, read-only afterwards. */
	bool blocking;
	/* NULL, or the intent log its stable writes go to (borrowed: the
	 * server owns it and closes it after the store).  Set before
	 * serving, read-only afterwards. */
	struct store_ilog *ilog;
	/* The largest file the backend takes (FSINFO's maxfilesize; a
	 * write or size past it is EFBIG), 0 for no limit of its own: see
	 * store_max_file_bytes().  Set when opened, read-only afterwards. */
	uint64_t max_file_bytes;
	/* VMFS's zeroing on first write (local/local_int.h): a datastore
	 * option, changed by a reload while writes run. */
	_Atomic bool zero_on_first_write;
	/* 1 MiB blocks zeroed so far, for /metrics. */
	_Atomic uint64_t zeroed_blocks;
	/* The backend's cluster does not answer (cephfs): every op answers
	 * -EAGAIN (NFS3ERR_JUKEBOX) at once until the backend sees it back.
	 * Set and cleared by the backend, read by anyone (/metrics). */
	_Atomic bool unavailable;
	/* The backend's session is gone for good (a cephfs client evicted
	 * and blocklisted by its cluster): it answers -EAGAIN and never
	 * comes back; the server opens the store anew and publishes the
	 * new one (server/recovery.c).  Set by the backend only. */
	_Atomic bool reopen;
	/* Another gateway took this datastore over and fenced this one
	 * (its RADOS intent log's clients blocklisted): unavailable for
	 * good, never opened anew by itself (a new mount would take the
	 * log back); an operator restarts the gateway (docs/ceph.md).
	 * Set by the backend only; read by /metrics and the admin API. */
	_Atomic bool fenced;
};

/* The largest file @st takes: its backend's limit, else what a size3
 * offset can say on every file system we serve (2^63 - 1). */
static inline uint64_t store_max_file_bytes(const struct store *st)
{
	return st->max_file_bytes ? st->max_file_bytes : (uint64_t)INT64_MAX;
}

/*
 * The calls of a store, one per op: nothing outside store/ reads the ops
 * table.  Each is the op itself; the optional ops' wrappers own their
 * fallbacks, so that a caller never asks what its backend can do.
 */
static inline int store_resolve(struct store *st, const struct store_fh *fh,
				struct store_obj **out)
{
	return st->ops->resolve(st, fh, out);
}

static inline void store_obj_ref(struct store *st, struct store_obj *obj)
{
	st->ops->obj_ref(obj);
}

static inline void store_obj_unref(struct store *st, struct store_obj *obj)
{
	st->ops->obj_unref(obj);
}

static inline void store_obj_fh(struct store *st, const struct store_obj *obj,
				struct store_fh *fh)
{
	st->ops->obj_fh(obj, fh);
}

static inline int store_root(struct store *st, struct store_obj **out)
{
	return st->ops->root(st, out);
}

static inline int store_getattr(struct store *st, struct store_obj *obj,
				struct store_attr *attr)
{
	return st->ops->getattr(st, obj, attr);
}

static inline int store_setattr(struct store *st, struct store_obj *obj,
				const struct store_sattr *sattr,
				const struct store_cred *cred)
{
	return st->ops->setattr(st, obj, sattr, cred);
}

static inline int store_lookup(struct store *st, struct store_obj *dir,
			       const char *name, struct store_obj **out)
{
	return st->ops->lookup(st, dir, name, out);
}

static inline int store_readlink(struct store *st, struct store_obj *obj,
				 char *buf, size_t buflen, size_t *len)
{
	return st->ops->readlink(st, obj, buf, buflen, len);
}

static inline int store_read(struct store *st, struct store_obj *obj,
			     uint64_t off_bytes, void *buf, uint32_t count,
			     uint32_t *nread, bool *eof)
{
	return st->ops->read(st, obj, off_bytes, buf, count, nread, eof);
}

static inline int store_write(struct store *st, struct store_obj *obj,
			      uint64_t off_bytes, const void *buf,
			      uint32_t count, enum store_stable stable,
			      bool *sync_failed)
{
	return st->ops->write(st, obj, off_bytes, buf, count, stable,
			      sync_failed);
}

/* Whether a stable write may go through store_write_async() (the backend
 * has it and the store writes to an intent log); else store_write() on a
 * work thread. */
static inline bool store_can_write_async(const struct store *st)
{
	return st->ops->write_async != NULL && st->ilog != NULL;
}

/* ops->write_async; -EAGAIN (use store_write) when the backend has none. */
static inline int store_write_async(struct store *st, struct store_obj *obj,
				    uint64_t off_bytes, const void *buf,
				    uint32_t count, struct store_write_wait *w,
				    store_write_done_fn done, void *arg)
{
	if (!st->ops->write_async) {
		return -EAGAIN;
	}
	return st->ops->write_async(st, obj, off_bytes, buf, count, w, done,
				    arg);
}

static inline int store_commit(struct store *st, struct store_obj *obj,
			       uint64_t off_bytes, uint32_t count,
			       bool *sync_failed)
{
	return st->ops->commit(st, obj, off_bytes, count, sync_failed);
}

static inline int store_create(struct store *st, struct store_obj *dir,
			       const char *name, enum store_create_how how,
			       const struct store_sattr *sattr,
			       const uint8_t verf[8],
			       const struct store_cred *cred,
			       struct store_obj **out)
{
	return st->ops->create(st, dir, name, how, sattr, verf, cred, out);
}

static inline int store_mkdir(struct store *st, struct store_obj *dir,
			      const char *name, const struct store_sattr *sattr,
			      const struct store_cred *cred,
			      struct store_obj **out)
{
	return st->ops->mkdir(st, dir, name, sattr, cred, out);
}

static inline int store_symlink(struct store *st, struct store_obj *dir,
				const char *name, const char *target,
				const struct store_sattr *sattr,
				const struct store_cred *cred,
				struct store_obj **out)
{
	return st->ops->symlink(st, dir, name, target, sattr, cred, out);
}

static inline int store_mknod(struct store *st, struct store_obj *dir,
			      const char *name, enum store_ftype type,
			      uint32_t rdev_major, uint32_t rdev_minor,
			      const struct store_sattr *sattr,
			      const struct store_cred *cred,
			      struct store_obj **out)
{
	return st->ops->mknod(st, dir, name, type, rdev_major, rdev_minor,
			      sattr, cred, out);
}

static inline int store_remove(struct store *st, struct store_obj *dir,
			       const char *name)
{
	return st->ops->remove(st, dir, name);
}

static inline int store_rmdir(struct store *st, struct store_obj *dir,
			      const char *name)
{
	return st->ops->rmdir(st, dir, name);
}

static inline int store_rename(struct store *st, struct store_obj *from_dir,
			       const char *from_name, struct store_obj *to_dir,
			       const char *to_name)
{
	return st->ops->rename(st, from_dir, from_name, to_dir, to_name);
}

static inline int store_link(struct store *st, struct store_obj *obj,
			     struct store_obj *dir, const char *name)
{
	return st->ops->link(st, obj, dir, name);
}

static inline int store_readdir(struct store *st, struct store_obj *dir,
				uint64_t cookie, store_readdir_fn cb, void *arg)
{
	return st->ops->readdir(st, dir, cookie, cb, arg);
}

static inline int store_fsstat_get(struct store *st, struct store_fsstat *fs)
{
	return st->ops->fsstat(st, fs);
}

/* ops->path; -ENOENT when the backend cannot tell. */
static inline int store_path(struct store *st, const struct store_obj *obj,
			     char *buf, size_t len)
{
	if (!st->ops->path) {
		return -ENOENT;
	}
	return st->ops->path(st, obj, buf, len);
}

/*
 * Whether @obj is the directory @area of the datastore's root ("/NAME",
 * a string that outlives the store: the snapshot area) or lies in it:
 * 1 yes, 0 no, -ENOENT when the backend cannot tell (area.c).  A "no" is
 * remembered on the object, since nothing moves a file into the area.
 */
int store_in_area(struct store *st, struct store_obj *obj, const char *area);

static inline void store_close(struct store *st)
{
	st->ops->close(st);
}

/* ops->resolve_attr; without it, resolve and then getattr (the object is
 * dropped when getattr fails). */
static inline int store_resolve_attr(struct store *st,
				     const struct store_fh *fh,
				     struct store_obj **out,
				     struct store_attr *attr)
{
	int err;

	if (st->ops->resolve_attr) {
		return st->ops->resolve_attr(st, fh, out, attr);
	}
	err = st->ops->resolve(st, fh, out);
	if (err) {
		return err;
	}
	err = st->ops->getattr(st, *out, attr);
	if (err) {
		st->ops->obj_unref(*out);
		*out = NULL;
	}
	return err;
}

/* ops->read_ref; -STORE_ENOTSUPP when the backend reads through no
 * descriptor (copy with store_read_sized() then). */
static inline int store_read_ref(struct store *st, struct store_obj *obj,
				 struct store_file_ref *ref)
{
	if (!st->ops->read_ref) {
		return -STORE_ENOTSUPP;
	}
	return st->ops->read_ref(st, obj, ref);
}

/*
 * The copy of a READ of regular file @obj whose size @size_bytes the
 * caller took with its attributes: with a descriptor (read_ref), at most
 * @size_bytes - @off_bytes bytes of @count, read without a stat, and *eof
 * when the read reached that size or the file ended sooner; else the
 * backend's read_sized (the same, through the backend's own read), or its
 * read, which says eof itself (read.c).
 */
int store_read_sized(struct store *st, struct store_obj *obj,
		     uint64_t size_bytes, uint64_t off_bytes, void *buf,
		     uint32_t count, uint32_t *nread, bool *eof);

/* The most bytes store_read_sized() puts in its buffer for these
 * arguments: the buffer to give it. */
static inline uint32_t store_read_sized_max(const struct store *st,
					    uint64_t size_bytes,
					    uint64_t off_bytes, uint32_t count)
{
	if (!st->ops->read_ref && !st->ops->read_sized) {
		return count;
	}
	if (off_bytes >= size_bytes) {
		return 0;
	}
	return size_bytes - off_bytes < count
		       ? (uint32_t)(size_bytes - off_bytes)
		       : count;
}

/* ops->cache_resize; 0 when the backend keeps no descriptors. */
static inline int store_cache_resize(struct store *st, size_t max_entries)
{
	if (!st->ops->cache_resize) {
		return 0;
	}
	return st->ops->cache_resize(st, max_entries);
}

/* ops->tree_open; -EOPNOTSUPP, the datastore named in @errbuf, when the
 * backend has no storage-side operations. */
int store_tree_open(struct store *st, struct store_tree **out, char *errbuf,
		    size_t errlen);

/* Whether the backend tells a file's path and opens its storage-side
 * tree (store_path(), store_tree_open()). */
static inline bool store_tree_offered(const struct store *st)
{
	return st->ops->path != NULL && st->ops->tree_open != NULL;
}

/* The backend's native snapshots, or NULL when it has none. */
static inline const struct store_snap_ops *store_snap(const struct store *st)
{
	return st->ops->snap;
}

/*
 * Reads the export id out of any of our handles without resolving it, so
 * the caller can find the store.  Returns 0, or -STORE_EBADHANDLE when fh is
 * not in our format.
 */
int store_fh_export_id(const struct store_fh *fh, uint32_t *export_id);

#endif
