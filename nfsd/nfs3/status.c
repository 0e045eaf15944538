// SPDX-License-Identifier: Apache-2.0
/*
 * status: the one place a negative errno becomes an nfsstat3 (RFC 1813
 * 2.6).  Store ops return errno values plus the NFS-specific STORE_E*
 * codes of store/store.h; everything the handlers report goes through
 * nfs3__status_from_errno().
 */
#include <errno.h>

#include "nfsd/base/base.h"
#include "nfsd/nfs3/nfs3_int.h"

struct nfs3_status_map {
	int err; /* positive errno or STORE_E* */
	nfsstat3 status;
	const char *name;
};

static const struct nfs3_status_map nfs3_status_table[] = {
	{ 0, NFS3_OK, "NFS3_OK" },
	{ EPERM, NFS3ERR_PERM, "NFS3ERR_PERM" },
	{ ENOENT, NFS3ERR_NOENT, "NFS3ERR_NOENT" },
	{ EIO, NFS3ERR_IO, "NFS3ERR_IO" },
	{ ENXIO, NFS3ERR_NXIO, "NFS3ERR_NXIO" },
	{ EACCES, NFS3ERR_ACCES, "NFS3ERR_ACCES" },
	{ EEXIST, NFS3ERR_EXIST, "NFS3ERR_EXIST" },
	{ EXDEV, NFS3ERR_XDEV, "NFS3ERR_XDEV" },
	{ ENODEV, NFS3ERR_NODEV, "NFS3ERR_NODEV" },
	{ ENOTDIR, NFS3ERR_NOTDIR, "NFS3ERR_NOTDIR" },
	{ EISDIR, NFS3ERR_ISDIR, "NFS3ERR_ISDIR" },
	{ EINVAL, NFS3ERR_INVAL, "NFS3ERR_INVAL" },
	{ EFBIG, NFS3ERR_FBIG, "NFS3ERR_FBIG" },
	{ ENOSPC, NFS3ERR_NOSPC, "NFS3ERR_NOSPC" },
	{ EROFS, NFS3ERR_ROFS, "NFS3ERR_ROFS" },
	{ EMLINK, NFS3ERR_MLINK, "NFS3ERR_MLINK" },
	{ ENAMETOOLONG, NFS3ERR_NAMETOOLONG, "NFS3ERR_NAMETOOLONG" },
	{ ENOTEMPTY, NFS3ERR_NOTEMPTY, "NFS3ERR_NOTEMPTY" },
	{ EDQUOT, NFS3ERR_DQUOT, "NFS3ERR_DQUOT" },
	{ ESTALE, NFS3ERR_STALE, "NFS3ERR_STALE" },
	{ EREMOTE, NFS3ERR_REMOTE, "NFS3ERR_REMOTE" },
	{ STORE_EBADHANDLE, NFS3ERR_BADHANDLE, "NFS3ERR_BADHANDLE" },
	{ STORE_ENOTSYNC, NFS3ERR_NOT_SYNC, "NFS3ERR_NOT_SYNC" },
	{ STORE_EBADCOOKIE, NFS3ERR_BAD_COOKIE, "NFS3ERR_BAD_COOKIE" },
	{ STORE_ENOTSUPP, NFS3ERR_NOTSUPP, "NFS3ERR_NOTSUPP" },
	{ STORE_ETOOSMALL, NFS3ERR_TOOSMALL, "NFS3ERR_TOOSMALL" },
	{ STORE_EBADTYPE, NFS3ERR_BADTYPE, "NFS3ERR_BADTYPE" },
	/* Not NFS3 codes, but with an obvious nearest one. */
	{ EOPNOTSUPP, NFS3ERR_NOTSUPP, "NFS3ERR_NOTSUPP" },
	{ EOVERFLOW, NFS3ERR_FBIG, "NFS3ERR_FBIG" },
	{ ELOOP, NFS3ERR_INVAL, "NFS3ERR_INVAL" },
	/* Out of memory or a busy resource passes: the client retries
	 * later (knfsd maps both to JUKEBOX too). */
	{ ENOMEM, NFS3ERR_JUKEBOX, "NFS3ERR_JUKEBOX" },
	{ EAGAIN, NFS3ERR_JUKEBOX, "NFS3ERR_JUKEBOX" },
	/* Out of descriptors after the file cache gave some back
	 * (store/local/local_fd.c): transient too. */
	{ EMFILE, NFS3ERR_JUKEBOX, "NFS3ERR_JUKEBOX" },
	{ ENFILE, NFS3ERR_JUKEBOX, "NFS3ERR_JUKEBOX" },
};

/* Names of the codes no errno produces. */
static const struct nfs3_status_map nfs3_status_extra[] = {
	{ 0, NFS3ERR_SERVERFAULT, "NFS3ERR_SERVERFAULT" },
};

nfsstat3 nfs3__status_from_errno(int err)
{
	int pos = err < 0 ? -err : err;

	for (size_t i = 0; i < ARRAY_SIZE(nfs3_status_table); i++) {
		if (nfs3_status_table[i].err == pos) {
			return nfs3_status_table[i].status;
		}
	}
	/* An unknown failure of the backend: NFS3ERR_IO rather than
	 * SERVERFAULT, which ESXi treats as a broken server. */
	return NFS3ERR_IO;
}

const char *nfs3__status_name(nfsstat3 status)
{
	for (size_t i = 0; i < ARRAY_SIZE(nfs3_status_table); i++) {
		if (nfs3_status_table[i].status == status) {
			return nfs3_status_table[i].name;
		}
	}
	for (size_t i = 0; i < ARRAY_SIZE(nfs3_status_extra); i++) {
		if (nfs3_status_extra[i].status == status) {
			return nfs3_status_extra[i].name;
		}
	}
	return "NFS3ERR_?";
}
