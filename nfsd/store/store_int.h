/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store_int: what every backend of nfsd/store/ shares, and their unit
 * tests only: fdio.c's full-length I/O, secret.c's handle keys, handle.c's
 * signed wire handles around a kernel (or backend) handle, and convert.c's
 * conversions and name checks.  Each backend adds its own room's header
 * on top (local/local_int.h, cephfs/cephfs_int.h, ilog/ilog_int.h) and
 * sees no other backend's.
 */
#ifndef DSNFS_STORE_INT_H
#define DSNFS_STORE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <nettle/hmac.h>

#include "nfsd/base/base.h"
#include "nfsd/store/store.h"
#include "nfsd/store/store_obj.h"
#include "nfsd/store/syncgroup.h"

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

/* ---- conversions and checks both backends share (convert.c) ------------ */

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

/* 0, or -EACCES for an empty name or one containing '/', -ENAMETOOLONG
 * above STORE_NAME_MAX bytes. */
int store__name_check(const char *name);
/* True for "." and "..". */
bool store__name_is_dot(const char *name);

#endif
