// SPDX-License-Identifier: Apache-2.0
/*
 * convert: what both backends turn from the system's terms into the
 * store's: a file type from st_mode, a MKNOD's type into the mode and
 * device number mknod(2) takes, statvfs(3) figures into FSSTAT's, and the
 * attributes a new object is given; and the check of a name a client
 * sends, the same on every backend.
 */
#include "nfsd/store/store_int.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>

enum store_ftype store__ftype_from_mode(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFDIR:
		return STORE_DIR;
	case S_IFBLK:
		return STORE_BLK;
	case S_IFCHR:
		return STORE_CHR;
	case S_IFLNK:
		return STORE_LNK;
	case S_IFSOCK:
		return STORE_SOCK;
	case S_IFIFO:
		return STORE_FIFO;
	default:
		return STORE_REG;
	}
}

int store__node_mode(enum store_ftype type, uint32_t rdev_major,
		     uint32_t rdev_minor, mode_t *fmt, dev_t *rdev)
{
	*rdev = 0;
	switch (type) {
	case STORE_CHR:
		*fmt = S_IFCHR;
		*rdev = makedev(rdev_major, rdev_minor);
		return 0;
	case STORE_BLK:
		*fmt = S_IFBLK;
		*rdev = makedev(rdev_major, rdev_minor);
		return 0;
	case STORE_SOCK:
		*fmt = S_IFSOCK;
		return 0;
	case STORE_FIFO:
		*fmt = S_IFIFO;
		return 0;
	default:
		return -STORE_EBADTYPE;
	}
}

void store__fsstat_from_statvfs(const struct statvfs *sv,
				struct store_fsstat *fs)
{
	fs->total_bytes = (uint64_t)sv->f_blocks * sv->f_frsize;
	fs->free_bytes = (uint64_t)sv->f_bfree * sv->f_frsize;
	fs->avail_bytes = (uint64_t)sv->f_bavail * sv->f_frsize;
	fs->total_files = sv->f_files;
	fs->free_files = sv->f_ffree;
	fs->avail_files = sv->f_favail;
	/* A file system with no limit on files (CephFS: f_files counts
	 * those in use, f_ffree is -1) would break RFC 1813's tfiles >=
	 * ffiles >= afiles: no limit is 2^64 - 1 slots, less those used. */
	if (sv->f_ffree > sv->f_files) {
		fs->total_files = UINT64_MAX;
		fs->free_files = UINT64_MAX - sv->f_files;
	}
	if (fs->avail_files > fs->free_files) {
		fs->avail_files = fs->free_files;
	}
}

void store__new_obj_sattr(const struct store_sattr *sattr,
			  const struct store_cred *cred, enum store_ftype type,
			  struct store_sattr *out)
{
	*out = sattr ? *sattr : (struct store_sattr){ 0 };
	if (cred != NULL) {
		if (!out->set_uid) {
			out->set_uid = true;
			out->uid = cred->uid;
		}
		if (!out->set_gid) {
			out->set_gid = true;
			out->gid = cred->gid;
		}
	}
	if (type != STORE_REG) {
		out->set_size = false;
	}
}

int store__name_check(const char *name)
{
	size_t len = strnlen(name, STORE_NAME_MAX + 1);

	if (len == 0) {
		return -EACCES;
	}
	if (len > STORE_NAME_MAX) {
		return -ENAMETOOLONG;
	}
	if (memchr(name, '/', len) != NULL) {
		return -EACCES;
	}
	return 0;
}

bool store__name_is_dot(const char *name)
{
	return strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
}
