// SPDX-License-Identifier: Apache-2.0
/*
 * cephfs_snap: native snapshots of a cephfs datastore (store/store_tree.h)
 * with CephFS's own: a snapshot of the directory served is a mkdir in its
 * ".snap" (ceph_mksnap on the mount's root, which is that directory), made
 * by the MDS at one point in time for the whole tree, read-only, sharing
 * every object with the live tree until it is written (RADOS
 * self-managed snapshots).  The time it was made is kept in the
 * snapshot's metadata ("dsnfs.created_s").  CephFS has no rollback: a
 * restore copies the snapshot back into the live tree (cephfs_restore.c).
 *
 * A file system refuses new snapshots unless `ceph fs set FS
 * allow_new_snaps true` (Pacific's default for a new file system): -EPERM
 * from the MDS; and a cephx user whose mds cap lacks the "s" flag
 * ("allow rw", not "allow rws") may neither make nor remove one: -EACCES
 * (t2122).  Both are the cluster's settings, not failures: -EOPNOTSUPP
 * (the API's 422) with the reason and the setting that allows it.
 */
#include "nfsd/store/cephfs/cephfs_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nfsd/store/store_tree.h"

#define SNAP_CREATED_KEY "dsnfs.created_s"

/* 0 when snapshot @name exists, -ENOENT when not, or -errno. */
static int snap_exists(struct store_cephfs *sc, const char *name)
{
	struct ceph_statx stx;
	char path[SNAP_NAME_MAX + 16];

	snprintf(path, sizeof(path), "/.snap/%s", name);
	return store__cephfs_err(ceph_statx(sc->cm, path, &stx, CEPH_STATX_INO,
					    AT_SYMLINK_NOFOLLOW));
}

static int cephfs_snap_check(struct store *st, const char *name, bool exists,
			     char *errbuf, size_t errlen)
{
	struct store_cephfs *sc = store__cephfs(st);
	int err;

	err = snap_name_check(name, errbuf, errlen);
	if (err) {
		return err;
	}
	err = snap_exists(sc, name);
	if (err && err != -ENOENT) {
		snprintf(errbuf, errlen, "volume %s: snapshot %s: %s", st->name,
			 name, strerror(-err));
		return err;
	}
	if (exists && err == -ENOENT) {
		snprintf(errbuf, errlen, "volume %s: no snapshot %s", st->name,
			 name);
		return -ENOENT;
	}
	if (!exists && !err) {
		snprintf(errbuf, errlen, "volume %s: snapshot %s exists",
			 st->name, name);
		return -EEXIST;
	}
	return 0;
}

/* @err of ceph_mksnap/ceph_rmsnap (@verb) as the caller's answer, with
 * its reason in @errbuf (see the head of this file). */
static int snap_fail(const struct store *st, const char *name, const char *verb,
		     int err, char *errbuf, size_t errlen)
{
	if (err == -EACCES) {
		snprintf(errbuf, errlen,
			 "volume %s: snapshot %s: %s: Permission denied: the "
			 "gateway's cephx user may not make or remove "
			 "snapshots here: its mds cap needs the 's' flag "
			 "(`ceph fs authorize FS client.USER PATH rws`)",
			 st->name, name, verb);
		return -EOPNOTSUPP;
	}
	snprintf(errbuf, errlen, "volume %s: snapshot %s: %s: %s", st->name,
		 name, verb, strerror(-err));
	return err;
}

static int cephfs_snap_create(struct store *st, const char *name,
			      struct snap_stats *out, char *errbuf,
			      size_t errlen)
{
	struct store_cephfs *sc = store__cephfs(st);
	char when[24];
	struct snap_metadata md = { .key = SNAP_CREATED_KEY, .value = when };
	int err;

	err = cephfs_snap_check(st, name, false, errbuf, errlen);
	if (err) {
		return err;
	}
	snprintf(when, sizeof(when), "%lld", (long long)time(NULL));
	err = store__cephfs_err(ceph_mksnap(sc->cm, "/", name, 0755, &md, 1));
	if (err == -EPERM) {
		snprintf(errbuf, errlen,
			 "volume %s: the CephFS refuses new snapshots (EPERM): "
			 "allow them with `ceph fs set FS allow_new_snaps "
			 "true`, and give the gateway's cephx user the 's' "
			 "flag (`allow rws`)",
			 st->name);
		return -EOPNOTSUPP;
	}
	if (err) {
		return snap_fail(st, name, "mksnap", err, errbuf, errlen);
	}
	if (out) {
		memset(out, 0, sizeof(*out));
	}
	return 0;
}

static int cephfs_snap_remove(struct store *st, const char *name, char *errbuf,
			      size_t errlen)
{
	struct store_cephfs *sc = store__cephfs(st);
	int err;

	err = cephfs_snap_check(st, name, true, errbuf, errlen);
	if (err) {
		return err;
	}
	err = store__cephfs_err(ceph_rmsnap(sc->cm, "/", name));
	return err ? snap_fail(st, name, "rmsnap", err, errbuf, errlen) : 0;
}

/* When snapshot @name was made: its metadata, else its directory's
 * ctime (the tree's at that point in time). */
static int64_t snap_created(struct store_cephfs *sc, const char *name)
{
	struct snap_info info;
	struct ceph_statx stx;
	char path[SNAP_NAME_MAX + 16];
	int64_t when = 0;

	snprintf(path, sizeof(path), "/.snap/%s", name);
	if (ceph_get_snap_info(sc->cm, path, &info) == 0) {
		for (size_t i = 0; i < info.nr_snap_metadata; i++) {
			if (!strcmp(info.snap_metadata[i].key,
				    SNAP_CREATED_KEY)) {
				when = strtoll(info.snap_metadata[i].value,
					       NULL, 10);
			}
		}
		ceph_free_snap_info_buffer(&info);
	}
	if (!when && ceph_statx(sc->cm, path, &stx, CEPH_STATX_CTIME,
				AT_SYMLINK_NOFOLLOW) == 0) {
		when = (int64_t)stx.stx_ctime.tv_sec;
	}
	return when;
}

/* "_NAME_INO": a snapshot of a directory above the one served, which
 * CephFS lists in every .snap below it. */
static bool snap_is_parents(const char *name)
{
	const char *u = strrchr(name, '_');

	return name[0] == '_' && u && u != name && u[1] &&
	       strspn(u + 1, "0123456789") == strlen(u + 1);
}

static int snap_info_cmp(const void *a, const void *b)
{
	return strcmp(((const struct snap_entry *)a)->name,
		      ((const struct snap_entry *)b)->name);
}

static int cephfs_snap_list(struct store *st, struct snap_entry **out,
			    size_t *n)
{
	struct store_cephfs *sc = store__cephfs(st);
	struct ceph_dir_result *dirp;
	struct snap_entry *list = NULL;
	struct dirent *de;
	char why[8];
	size_t count = 0;
	int err;

	*out = NULL;
	*n = 0;
	err = store__cephfs_err(ceph_opendir(sc->cm, "/.snap", &dirp));
	if (err) {
		return err;
	}
	while ((de = ceph_readdir(sc->cm, dirp)) != NULL &&
	       count < SNAP_LIST_MAX) {
		struct snap_entry *grown;

		if (snap_name_check(de->d_name, why, sizeof(why)) ||
		    snap_is_parents(de->d_name)) {
			continue;
		}
		grown = realloc(list, (count + 1) * sizeof(*list));
		if (!grown) {
			err = -ENOMEM;
			break;
		}
		list = grown;
		/* snap_name_check() bounded it to SNAP_NAME_MAX bytes. */
		memcpy(list[count].name, de->d_name, strlen(de->d_name) + 1);
		count++;
	}
	ceph_closedir(sc->cm, dirp);
	if (err) {
		free(list);
		return err;
	}
	for (size_t i = 0; i < count; i++) {
		list[i].created_s = snap_created(sc, list[i].name);
	}
	if (count) {
		qsort(list, count, sizeof(*list), snap_info_cmp);
	}
	*out = list;
	*n = count;
	return 0;
}

const struct store_snap_ops store__cephfs_snap_ops = {
	.check = cephfs_snap_check,
	.create = cephfs_snap_create,
	.remove = cephfs_snap_remove,
	.restore = store__cephfs_snap_restore,
	.list = cephfs_snap_list,
	.changed = store__cephfs_snap_changed,
};
