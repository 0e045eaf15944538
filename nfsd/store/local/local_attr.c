// SPDX-License-Identifier: Apache-2.0
/*
 * local_attr: attributes of the local backend: GETATTR, SETATTR, READLINK
 * and FSSTAT (RFC 1813 3.3.1, 3.3.2, 3.3.5, 3.3.18).
 *
 * fileid is st_ino and fsid is the export id, so that every datastore is a
 * filesystem of its own to the client even when two share a disk.
 * used_bytes is st_blocks * 512.  SETATTR applies owner and group first
 * (chown clears set-id bits), then mode, size and times.  The mode of a
 * symlink is left alone, as knfsd does: Linux has no lchmod.  SETATTR does
 * not check the caller's permission (see local.c).
 */
#include "nfsd/store/local/local_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "nfsd/store/ilog/ilog.h"

void store__local_attr_from_stat(const struct store *st, const struct stat *sb,
				 struct store_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->type = store__ftype_from_mode(sb->st_mode);
	attr->mode = sb->st_mode & 07777;
	attr->nlink = (uint32_t)sb->st_nlink;
	attr->uid = sb->st_uid;
	attr->gid = sb->st_gid;
	attr->size_bytes = (uint64_t)sb->st_size;
	attr->used_bytes = (uint64_t)sb->st_blocks * 512;
	attr->rdev_major = major(sb->st_rdev);
	attr->rdev_minor = minor(sb->st_rdev);
	attr->fsid = st->export_id;
	attr->fileid = sb->st_ino;
	attr->atime = sb->st_atim;
	attr->mtime = sb->st_mtim;
	attr->ctime = sb->st_ctim;
}

int store__local_getattr(struct store *st, struct store_obj *sobj,
			 struct store_attr *attr)
{
	struct local_obj *obj = local_obj(sobj);
	struct stat sb;

	if (fstat(obj->fd, &sb) != 0) {
		return -errno;
	}
	store__local_attr_from_stat(st, &sb, attr);
	return 0;
}

static struct timespec store_local_time(enum store_time_how how,
					const struct timespec *ts)
{
	struct timespec out = { .tv_sec = 0, .tv_nsec = UTIME_OMIT };

	if (how == STORE_TIME_SERVER) {
		out.tv_nsec = UTIME_NOW;
	} else if (how == STORE_TIME_CLIENT) {
		out = *ts;
	}
	return out;
}

static int store_local_truncate(struct store *st, struct local_obj *obj,
				uint64_t size_bytes)
{
	int write_err;
	int err;
	int fd;

	if (size_bytes > INT64_MAX) {
		return -EFBIG;
	}
	/* Replaying older records after a shrink would bring bytes back. */
	if (st->ilog) {
		err = store__ilog_settle(st->ilog, obj);
		if (err) {
			return err;
		}
	}
	err = store__obj_io_fd(obj, &fd, &write_err);
	if (err) {
		return err;
	}
	if (write_err) {
		return write_err;
	}
	if (ftruncate(fd, (off_t)size_bytes) != 0) {
		return -errno;
	}
	return 0;
}

int store__local_sattr_apply(struct store *st, struct local_obj *obj,
			     const struct store_sattr *sattr)
{
	struct timespec times[2];
	char path[32];
	int err;

	if (sattr->set_uid || sattr->set_gid) {
		if (fchownat(obj->fd, "", sattr->set_uid ? sattr->uid : -1u,
			     sattr->set_gid ? sattr->gid : -1u,
			     AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
			return -errno;
		}
	}
	if (sattr->set_mode && obj->type != STORE_LNK) {
		store__proc_fd_path(obj->fd, path, sizeof(path));
		if (fchmodat(AT_FDCWD, path, sattr->mode & 07777, 0) != 0) {
			return -errno;
		}
	}
	if (sattr->set_size) {
		err = store_local_truncate(st, obj, sattr->size_bytes);
		if (err) {
			return err;
		}
	}
	if (sattr->atime_how != STORE_TIME_DONT_CHANGE ||
	    sattr->mtime_how != STORE_TIME_DONT_CHANGE) {
		times[0] = store_local_time(sattr->atime_how, &sattr->atime);
		times[1] = store_local_time(sattr->mtime_how, &sattr->mtime);
		if (utimensat(obj->fd, "", times,
			      AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
			return -errno;
		}
	}
	return 0;
}

int store__local_setattr(struct store *st, struct store_obj *sobj,
			 const struct store_sattr *sattr,
			 const struct store_cred *cred)
{
	struct local_obj *obj = local_obj(sobj);
	int err;

	(void)cred;
	err = store__local_sattr_apply(st, obj, sattr);
	/* Durable before the reply, as every change (local_sync.c). */
	return err ? err : store__local_sync_obj(store__local(st), obj);
}

int store__local_readlink(struct store *st, struct store_obj *sobj, char *buf,
			  size_t buflen, size_t *len)
{
	struct local_obj *obj = local_obj(sobj);
	char target[STORE_PATH_MAX + 1];
	ssize_t n;

	(void)st;
	if (obj->type != STORE_LNK) {
		return -EINVAL;
	}
	n = readlinkat(obj->fd, "", target, sizeof(target));
	if (n < 0) {
		return -errno;
	}
	if ((size_t)n > STORE_PATH_MAX || (size_t)n > buflen) {
		return -ENAMETOOLONG;
	}
	memcpy(buf, target, (size_t)n);
	*len = (size_t)n;
	return 0;
}

int store__local_fsstat(struct store *st, struct store_fsstat *fs)
{
	struct store_local *sl = store__local(st);
	struct statvfs sv;

	if (fstatvfs(sl->root_fd, &sv) != 0) {
		return -errno;
	}
	store__fsstat_from_statvfs(&sv, fs);
	return 0;
}
