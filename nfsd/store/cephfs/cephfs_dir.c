// SPDX-License-Identifier: Apache-2.0
/*
 * cephfs_dir: READDIR of the cephfs backend (RFC 1813 3.3.16; READDIRPLUS
 * builds on it), through ceph_ll_opendir / ceph_readdir_r.  Each call opens
 * its own directory stream and seeks it to the cookie.
 *
 * Cookies are CephFS's directory offsets (ceph_telldir after an entry):
 * the MDS orders a directory by the hash of its names and the offset holds
 * that hash (and the fragment), so a cookie means the same position on
 * every gateway and after a restart, and stays valid while other names
 * come and go.  ".." of the export root reports the root's fileid, so
 * nothing outside the export shows.
 */
#include "nfsd/store/cephfs/cephfs_int.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>

int store__cephfs_readdir(struct store *st, struct store_obj *dirp,
			  uint64_t cookie, store_readdir_fn cb, void *arg)
{
	struct store_cephfs *sc = store__cephfs(st);
	struct cephfs_obj *dir = store__cephfs_obj(dirp);
	struct ceph_dir_result *dr;
	struct dirent de;
	uint64_t fileid;
	int64_t next;
	int rc;

	if (dir->type != STORE_DIR) {
		return -ENOTDIR;
	}
	if (cookie > INT64_MAX) {
		return -STORE_EBADCOOKIE;
	}
	rc = ceph_ll_opendir(sc->cm, dir->in, &dr, sc->root_perms);
	if (rc) {
		return store__cephfs_err(rc);
	}
	if (cookie != 0) {
		ceph_seekdir(sc->cm, dr, (int64_t)cookie);
	}
	for (;;) {
		rc = ceph_readdir_r(sc->cm, dr, &de);
		if (rc <= 0) {
			rc = store__cephfs_err(rc);
			break;
		}
		next = ceph_telldir(sc->cm, dr);
		if (next < 0) {
			rc = store__cephfs_err((int)next);
			break;
		}
		fileid = de.d_ino;
		if (store__cephfs_is_root(sc, dir) &&
		    strcmp(de.d_name, "..") == 0) {
			fileid = sc->root_ino;
		}
		rc = cb(arg, de.d_name, fileid, (uint64_t)next);
		if (rc != 0) {
			rc = rc < 0 ? rc : 0;
			break;
		}
	}
	ceph_ll_releasedir(sc->cm, dr);
	return rc;
}
