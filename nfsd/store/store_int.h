/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store_int: declarations shared by the files of nfsd/store/ and their unit
 * tests only.  handle.c turns kernel file handles into our signed wire
 * handles and back, secret.c keeps the key that signs them, fcache.c caches
 * resolved objects, obj.c owns one resolved object, local*.c are the
 * local-directory backend behind the store_ops table, and ilog*.c the
 * intent log of its stable writes (ilog.h).
 */
#ifndef DSNFS_STORE_INT_H
#define DSNFS_STORE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <nettle/hmac.h>

#include "nfsd/base/base.h"
#include "nfsd/store/ilog/ilog.h"
#include "nfsd/store/local/local.h"
#include "nfsd/store/store.h"
#include "nfsd/store/store_obj.h"
#include "nfsd/store/store_open.h"
#include "nfsd/store/syncgroup.h"

struct local_obj;

/* ---- full-length I/O (fdio.c) ------------------------------------------ */

/*
 * Reads up to @len bytes at @off_bytes, looping over short reads until
 * @len or the end of the file; *done is the count read (also on error).
 * The caller keeps off_bytes + len <= INT64_MAX.  Returns 0 or -errno.
 */
int store__pread_full(int fd, void *buf, size_t len, uint64_t off_bytes,
		      size_t *done);
/* Writes all @len bytes at @off_bytes (same bound).  Returns 0 or -errno. */
int store__pwrite_full(int fd, const void *buf, size_t len, uint64_t off_bytes);

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

/* ---- handle keys (secret.c) ------------------------------------------- */

/* The key of HMAC-SHA-256, the MAC of our handles (handle.c). */
#define STORE_KEY_BYTES 32
#define STORE_KEY_FILE "handle.key"
/* The keyed-xxh3 secret of version-1 handles: read if present, never made
 * (XXH3_SECRET_DEFAULT_SIZE, above XXH3_SECRET_SIZE_MIN). */
#define STORE_SECRET_BYTES 192
#define STORE_SECRET_FILE "handle.secret"

struct store_secret {
	uint8_t key[STORE_KEY_BYTES];
	/* @key set up for HMAC once (store__secret_keyed()): a handle's MAC
	 * copies it rather than hashing the key again, which had cost half
	 * of a READ's user-space instructions. */
	struct hmac_sha256_ctx keyed;
	/* Version-1 handles (keyed xxh3) are accepted only with this. */
	bool legacy_ok;
	uint8_t legacy[STORE_SECRET_BYTES];
};

/*
 * Reads the key file @file of @state_dir (exactly @len bytes) into @out;
 * when there is none and @create, makes one from getrandom() (or from
 * @seed when not NULL: an adopted key), 0600, written to a temporary file,
 * fsynced, renamed into place without replacing one another process made
 * meanwhile, the directory fsynced.  A file of the wrong size or type, with
 * group or other permission bits, or not owned by our uid is refused.
 * Returns 0, -ENOENT (none, and not @create), or -errno with the file named
 * in errbuf (optional).
 */
int store__key_load(const char *state_dir, const char *file, uint8_t *out,
		    size_t len, bool create, const uint8_t *seed, char *errbuf,
		    size_t errlen);

/*
 * The keys of a local datastore: <state_dir>/handle.key (made on first
 * use) and, when it exists, the version-1 secret <state_dir>/handle.secret
 * (handles issued before the upgrade stay valid).  Borrows state_dir.
 */
/* Sets up @sec->keyed from @sec->key: after every change of the key. */
void store__secret_keyed(struct store_secret *sec);

int store__secret_load(const char *state_dir, struct store_secret *out,
		       char *errbuf, size_t errlen);

/* ---- file handles (handle.c) ------------------------------------------- */

/* 2: HMAC-SHA-256 truncated to 64 bits; 1: keyed xxh3 (accepted only
 * with the legacy secret, never issued). */
#define STORE_FH_VERSION 2
#define STORE_FH_VERSION_XXH3 1
#define STORE_FH_HEAD_BYTES 7 /* version, export id, kernel type, length */
#define STORE_FH_MAC_BYTES 8
/* Longest kernel f_handle that fits: 41 bytes (ext4 and xfs use 8..16). */
#define STORE_KFH_MAX (STORE_FH_MAX - STORE_FH_HEAD_BYTES - STORE_FH_MAC_BYTES)

/* A kernel file handle as name_to_handle_at() returns it, reduced to what
 * our wire handle carries. */
struct store_kfh {
	uint8_t type; /* struct file_handle.handle_type (FILEID_*) */
	uint8_t len; /* bytes used in f_handle: 1..STORE_KFH_MAX */
	uint8_t f_handle[STORE_KFH_MAX];
};

/*
 * Gets the kernel handle of @name relative to @dirfd (name_to_handle_at;
 * @flags may hold AT_EMPTY_PATH; symlinks are never followed).  Returns 0,
 * -EOVERFLOW when the filesystem's handle does not fit in ours, or the
 * syscall's -errno.
 */
int store__kfh_get(int dirfd, const char *name, int flags,
		   struct store_kfh *out);

/*
 * Opens the object named by @kfh on the filesystem of @mount_fd (which must
 * not be an O_PATH descriptor) with open_by_handle_at(@flags | O_CLOEXEC).
 * Needs CAP_DAC_READ_SEARCH.  Returns the descriptor (>= 0) or -errno.
 */
int store__kfh_open(int mount_fd, const struct store_kfh *kfh, int flags);

/* Wraps @kfh into our wire format for @export_id, signed with @sec. */
void store__fh_encode(const struct store_secret *sec, uint32_t export_id,
		      const struct store_kfh *kfh, struct store_fh *out);

/*
 * Checks the layout and the MAC of @fh and unpacks it.  Returns 0 or
 * -STORE_EBADHANDLE (wrong version, length or MAC; a version-1 handle
 * without sec->legacy_ok).  Reads at most min(fh->len, STORE_FH_MAX)
 * bytes.
 */
int store__fh_decode(const struct store_secret *sec, const struct store_fh *fh,
		     uint32_t *export_id, struct store_kfh *kfh);

/* Whether @fh (decoded) is a version-1 handle: a store keys its objects
 * by the version-2 handle of the same kernel handle. */
bool store__fh_is_legacy(const struct store_fh *fh);

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
	/* ilog.c's, under its lock: on its dirty list (holding a ref). */
	bool ilog_dirty;
	struct local_obj *ilog_next;
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

/* ---- conversions both backends share (convert.c) ----------------------- */

/* Maps st_mode to ftype3. */
enum store_ftype store__ftype_from_mode(mode_t mode);

/* MKNOD's @type as mknod(2)'s file format and device number.  Returns 0,
 * or -STORE_EBADTYPE for a type that is not a node. */
int store__node_mode(enum store_ftype type, uint32_t rdev_major,
		     uint32_t rdev_minor, mode_t *fmt, dev_t *rdev);

/* What a new object of @type is given: @sattr (may be NULL), owned by
 * @cred (may be NULL) unless it names an owner, a size only for a regular
 * file. */
void store__new_obj_sattr(const struct store_sattr *sattr,
			  const struct store_cred *cred, enum store_ftype type,
			  struct store_sattr *out);

struct statvfs;
/* statvfs(3) figures as FSSTAT's. */
void store__fsstat_from_statvfs(const struct statvfs *sv,
				struct store_fsstat *fs);

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
 * already cached under the same handle (then @obj is unreferenced).  Evicts
 * the least recently used entry when full.
 */
struct local_obj *store__fcache_put(struct store_fcache *fc,
				    struct local_obj *obj);

/* Forgets the entry for @fh, if any (a removed name, a stale object). */
void store__fcache_drop(struct store_fcache *fc, const struct store_fh *fh);

/* Number of cached entries. */
size_t store__fcache_count(struct store_fcache *fc);

/* Sets the bound to @max_entries (1..STORE_FCACHE_MAX_ENTRIES), evicting
 * the least recently used entries past it.  0, -EINVAL or -ENOMEM (the
 * table could not grow: the old bound stays). */
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

/* 0, or -EACCES for an empty name or one containing '/', -ENAMETOOLONG
 * above STORE_NAME_MAX bytes. */
int store__name_check(const char *name);
/* True for "." and "..". */
bool store__name_is_dot(const char *name);

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
