// SPDX-License-Identifier: Apache-2.0
/*
 * cephfs_attr: attributes of the cephfs backend: GETATTR, SETATTR and
 * READLINK (RFC 1813 3.3.1, 3.3.2, 3.3.5), through ceph_ll_getattr /
 * ceph_ll_setattr / ceph_ll_readlink (FSSTAT: cephfs_statfs.c).
 *
 * fileid is the CephFS inode number and fsid the export id, as on the
 * local backend.  used_bytes is not st_blocks (CephFS reports a sparse
 * file's st_blocks as its size): cephfs_used.c counts the file's RADOS
 * objects.  SETATTR applies owner and group, mode, size and times in one
 * ceph_ll_setattr (the MDS orders them), then ceph_ll_sync_inode and a
 * getattr that proves the sync was one (store__cephfs_sync_confirm): it
 * is stable when answered; a symlink's mode is left alone.
 */
#include "nfsd/store/cephfs/cephfs_rlog.h"

#include <errno.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <time.h>

void store__cephfs_attr_from_statx(const struct store_cephfs *sc,
				   struct cephfs_obj *o,
				   const struct ceph_statx *stx,
				   struct store_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->type = store__ftype_from_mode(stx->stx_mode);
	attr->mode = stx->stx_mode & 07777;
	attr->nlink = stx->stx_nlink;
	attr->uid = stx->stx_uid;
	attr->gid = stx->stx_gid;
	attr->size_bytes = stx->stx_size;
	attr->used_bytes =
		store__cephfs_used_bytes((struct store_cephfs *)sc, o, stx);
	attr->rdev_major = major(stx->stx_rdev);
	attr->rdev_minor = minor(stx->stx_rdev);
	attr->fsid = sc->base.export_id;
	attr->fileid = stx->stx_ino;
	attr->atime = stx->stx_atime;
	attr->mtime = stx->stx_mtime;
	attr->ctime = stx->stx_ctime;
}

int store__cephfs_getattr(struct store *st, struct store_obj *obj,
			  struct store_attr *attr)
{
	struct store_cephfs *sc = store__cephfs(st);
	struct cephfs_obj *o = store__cephfs_obj(obj);
	struct ceph_statx stx;
	int rc;

	rc = ceph_ll_getattr(sc->cm, o->in, &stx, STORE_CEPHFS_WANT, 0,
			     sc->root_perms);
	if (rc) {
		return store__cephfs_err(rc);
	}
	store__cephfs_attr_from_statx(sc, o, &stx, attr);
	return 0;
}

int store__cephfs_sattr_apply(struct store_cephfs *sc, struct cephfs_obj *o,
			      const struct store_sattr *sattr)
{
	struct ceph_statx stx;
	struct timespec now;
	int mask = 0;
	int rc;

	memset(&stx, 0, sizeof(stx));
	/* "Server time" is ours, given explicitly: libcephfs's *_NOW flags
	 * still read the time from the statx. */
	clock_gettime(CLOCK_REALTIME, &now);
	if (sattr->set_uid) {
		stx.stx_uid = sattr->uid;
		mask |= CEPH_SETATTR_UID;
	}
	if (sattr->set_gid) {
		stx.stx_gid = sattr->gid;
		mask |= CEPH_SETATTR_GID;
	}
	if (sattr->set_mode && o->type != STORE_LNK) {
		stx.stx_mode = (uint16_t)(sattr->mode & 07777);
		mask |= CEPH_SETATTR_MODE;
	}
	if (sattr->set_size) {
		if (o->type == STORE_DIR) {
			return -EISDIR;
		}
		if (o->type != STORE_REG) {
			return -EINVAL;
		}
		if (sattr->size_bytes > INT64_MAX) {
			return -EFBIG;
		}
		stx.stx_size = sattr->size_bytes;
		mask |= CEPH_SETATTR_SIZE;
	}
	if (sattr->atime_how == STORE_TIME_SERVER) {
		stx.stx_atime = now;
		mask |= CEPH_SETATTR_ATIME;
	} else if (sattr->atime_how == STORE_TIME_CLIENT) {
		stx.stx_atime = sattr->atime;
		mask |= CEPH_SETATTR_ATIME;
	}
	if (sattr->mtime_how == STORE_TIME_SERVER) {
		stx.stx_mtime = now;
		mask |= CEPH_SETATTR_MTIME;
	} else if (sattr->mtime_how == STORE_TIME_CLIENT) {
		stx.stx_mtime = sattr->mtime;
		mask |= CEPH_SETATTR_MTIME;
	}
	if (mask == 0) {
		return 0;
	}
	/* A size change must not be undone by a replay of older records
	 * (cephfs_rlog.h): they are checkpointed first, and no stable write
	 * of the file lands between that and the change. */
	if (sattr->set_size && sc->rlog) {
		rc = store__cephfs_rlog_size_begin(sc->rlog, o);
		if (rc) {
			return rc;
		}
	}
	rc = ceph_ll_setattr(sc->cm, o->in, &stx, mask, sc->root_perms);
	if (sattr->set_size && sc->rlog) {
		store__cephfs_rlog_size_end(sc->rlog, o);
	}
	if (!rc && sattr->set_size) {
		store__cephfs_used_resized(o, sattr->size_bytes);
	}
	/* Stable when answered (RFC 1813 3.3.2): libcephfs applies a
	 * change it holds the caps for (a larger size, the times, the mode)
	 * in its cache alone, and a gateway that dies before the next cap
	 * flush would lose it.  The inode's sync sends it to the MDS; its 0
	 * is not proof when this gateway was fenced meanwhile. */
	if (!rc) {
		rc = ceph_ll_sync_inode(sc->cm, o->in, 0);
	}
	rc = store__cephfs_err(rc);
	return rc ? rc : store__cephfs_sync_confirm(sc, o);
}

int store__cephfs_setattr(struct store *st, struct store_obj *obj,
			  const struct store_sattr *sattr,
			  const struct store_cred *cred)
{
	(void)cred;
	if (store__cephfs_obj(obj)->snapid != CEPH_NOSNAP) {
		return -EROFS; /* in a snapshot */
	}
	return store__cephfs_sattr_apply(store__cephfs(st),
					 store__cephfs_obj(obj), sattr);
}

int store__cephfs_readlink(struct store *st, struct store_obj *obj, char *buf,
			   size_t buflen, size_t *len)
{
	struct store_cephfs *sc = store__cephfs(st);
	struct cephfs_obj *o = store__cephfs_obj(obj);
	char target[STORE_PATH_MAX + 1];
	int rc;

	if (o->type != STORE_LNK) {
		return -EINVAL;
	}
	rc = ceph_ll_readlink(sc->cm, o->in, target, sizeof(target),
			      sc->root_perms);
	if (rc < 0) {
		return store__cephfs_err(rc);
	}
	if ((size_t)rc > STORE_PATH_MAX || (size_t)rc > buflen) {
		return -ENAMETOOLONG;
	}
	memcpy(buf, target, (size_t)rc);
	*len = (size_t)rc;
	return 0;
}
