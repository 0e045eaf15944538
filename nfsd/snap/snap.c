// SPDX-License-Identifier: Apache-2.0
/*
 * snap: datastore snapshots by name (snap.h): the hidden area, a probe
 * that the file system shares blocks, snapshots made under a temporary
 * name, sealed and renamed into place, the immutable flag taken off only
 * for as long as a change of the area needs it, and the manifest
 * (manifest.c) that says which directories are snapshots.
 */
#include "nfsd/snap/snap_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The datastore's root and its .snapshot (made when @create), both
 * opened; the area writable (its flag off) when @unlock. */
struct snap_area {
	int root_fd;
	int area_fd;
	bool unlocked;
};

static void snap_area_close(struct snap_area *a)
{
	if (a->area_fd >= 0) {
		if (a->unlocked) {
			(void)snap__flags_set(a->area_fd, true);
		}
		close(a->area_fd);
	}
	if (a->root_fd >= 0) {
		close(a->root_fd);
	}
	a->root_fd = a->area_fd = -1;
}

static int snap_area_open(struct snap_area *a, const char *root, bool create,
			  bool unlock, char *errbuf, size_t errlen)
{
	int err;

	a->unlocked = false;
	a->area_fd = -1;
	/* The configured path is trusted (it may be a symlink). */
	a->root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (a->root_fd < 0) {
		err = -errno;
		snprintf(errbuf, errlen, "%s: %s", root, strerror(-err));
		return err;
	}
	if (create && mkdirat(a->root_fd, SNAP_DIR_NAME, 0755) &&
	    errno != EEXIST) {
		err = -errno;
		snprintf(errbuf, errlen, "%s: %s", SNAP_DIR_NAME,
			 strerror(-err));
		goto fail;
	}
	a->area_fd = openat(a->root_fd, SNAP_DIR_NAME,
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (a->area_fd < 0) {
		err = -errno;
		if (err != -ENOENT) {
			snprintf(errbuf, errlen, "%s: %s", SNAP_DIR_NAME,
				 strerror(-err));
		}
		goto fail;
	}
	if (unlock) {
		err = snap__flags_set(a->area_fd, false);
		if (err) {
			snprintf(errbuf, errlen,
				 "%s: cannot change its immutable flag (%s): "
				 "snapshots need a file system with "
				 "FS_IMMUTABLE_FL and CAP_LINUX_IMMUTABLE",
				 SNAP_DIR_NAME, strerror(-err));
			goto fail;
		}
		a->unlocked = true;
	}
	return 0;
fail:
	snap_area_close(a);
	return err;
}

/* Whether the file system of @root shares blocks: FICLONE of a one-byte
 * file.  Unnamed files (O_TMPFILE): nothing appears, nothing is left. */
static int snap_probe(const char *root, char *errbuf, size_t errlen)
{
	int a = -1, b = -1, err = 0;

	a = open(root, O_RDWR | O_TMPFILE | O_CLOEXEC, 0600);
	b = open(root, O_RDWR | O_TMPFILE | O_CLOEXEC, 0600);
	if (a < 0 || b < 0 || pwrite(a, "x", 1, 0) != 1) {
		err = -errno;
		snprintf(errbuf, errlen, "%s: probe: %s", root, strerror(-err));
	} else if (ioctl(b, FICLONE, a)) {
		err = -errno;
		snprintf(errbuf, errlen,
			 "the datastore's file system cannot share blocks "
			 "(FICLONE: %s): native snapshots need XFS with "
			 "reflink=1 or btrfs",
			 strerror(-err));
		err = -EOPNOTSUPP;
	}
	if (a >= 0) {
		close(a);
	}
	if (b >= 0) {
		close(b);
	}
	return err;
}

/* A crash's leftover @name of the area (.NAME.tmp, .NAME.del), its flags
 * cleared, removed. */
static void snap_leftover_remove(int area_fd, const char *name)
{
	int fd = openat(area_fd, name,
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd >= 0) {
		(void)snap__tree_immutable(fd, false, true, 0);
		close(fd);
	}
	(void)snap__tree_remove(area_fd, name, 0);
}

/*
 * The manifest of the datastore.  When there is none yet (a datastore
 * snapshotted before the manifest existed, or never), the snapshots the
 * server made are adopted: a directory of .snapshot with a good name whose
 * whole tree is sealed (FS_IMMUTABLE_FL on every directory and file, no
 * file with another link), which no NFS client can make: the flag needs
 * CAP_LINUX_IMMUTABLE on the server.  Saved when @save (create and delete,
 * which the caller serialises); a list or a check only reads.
 */
static int snap_manifest_get(const struct snap_area *a, const char *manifest,
			     bool save, struct snap_manifest *m, char *errbuf,
			     size_t errlen)
{
	char **names = NULL;
	int err;

	err = snap__manifest_load(manifest, m, errbuf, errlen);
	if (err != -ENOENT) {
		return err;
	}
	err = 0;
	memset(m, 0, sizeof(*m));
	if (a->area_fd >= 0) {
		err = snap__names_get(a->area_fd, &names);
		for (size_t i = 0; !err && names[i]; i++) {
			struct snap_manifest_entry e = { 0 };
			char why[128];
			struct stat s;
			int fd;

			if (snap_name_check(names[i], why, sizeof(why))) {
				continue;
			}
			fd = openat(a->area_fd, names[i],
				    O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					    O_CLOEXEC);
			if (fd < 0) {
				continue;
			}
			if (!fstat(fd, &s) &&
			    snap__tree_is_sealed(fd, 0) == 1) {
				snprintf(e.name, sizeof(e.name), "%s",
					 names[i]);
				e.created_s = (int64_t)s.st_mtim.tv_sec;
				e.ino = (uint64_t)s.st_ino;
				err = snap__manifest_add(m, &e);
			}
			close(fd);
		}
		snap__names_free(names);
		if (err) {
			snprintf(errbuf, errlen, "%s: adopting snapshots: %s",
				 SNAP_DIR_NAME, strerror(-err));
			snap__manifest_free(m);
			return err;
		}
	}
	if (save) {
		err = snap__manifest_save(manifest, m, errbuf, errlen);
		if (err) {
			snap__manifest_free(m);
		}
	}
	return err;
}

/* Opens snapshot @name of the open area: its descriptor, or -errno. */
static int snap_open(const struct snap_area *a, const char *name, char *errbuf,
		     size_t errlen)
{
	int fd;

	fd = openat(a->area_fd, name,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		fd = -errno;
		snprintf(errbuf, errlen, "snapshot '%s': %s", name,
			 fd == -ENOENT ? "does not exist" : strerror(-fd));
	}
	return fd;
}

/* Whether something named @name is in the area (a planted directory, a
 * crash's leftover). */
static bool snap_area_has(const struct snap_area *a, const char *name)
{
	return a->area_fd >= 0 &&
	       !faccessat(a->area_fd, name, F_OK, AT_SYMLINK_NOFOLLOW);
}

/* Whether a new snapshot may not be named @name: -EEXIST with the
 * reason when the manifest lists it or the area holds something by that
 * name (a directory the server did not make), else 0. */
static int snap_name_taken(const struct snap_area *a,
			   const struct snap_manifest *m, const char *name,
			   char *errbuf, size_t errlen)
{
	bool listed = snap__manifest_find(m, name) >= 0;

	if (!listed && !snap_area_has(a, name)) {
		return 0;
	}
	snprintf(errbuf, errlen, "snapshot '%s' exists%s", name,
		 listed ? ""
			: " (" SNAP_DIR_NAME "/NAME is a directory this "
			  "server did not make: remove it on the server)");
	return -EEXIST;
}

/* Opens snapshot @name if the manifest names it and .snapshot/NAME is the
 * directory the server made (same inode, same file system): its
 * descriptor, or -ENOENT with the reason. */
static int snap_open_listed(const struct snap_area *a,
			    const struct snap_manifest *m, const char *name,
			    char *errbuf, size_t errlen)
{
	int i = snap__manifest_find(m, name);
	struct stat s, as;
	int fd;

	if (i < 0) {
		snprintf(errbuf, errlen, "snapshot '%s': does not exist%s",
			 name,
			 snap_area_has(a, name)
				 ? " (" SNAP_DIR_NAME "/NAME is a directory "
				   "this server did not make: not a snapshot)"
				 : "");
		return -ENOENT;
	}
	if (a->area_fd < 0) {
		snprintf(errbuf, errlen, "snapshot '%s': does not exist", name);
		return -ENOENT;
	}
	fd = snap_open(a, name, errbuf, errlen);
	if (fd < 0) {
		return fd;
	}
	if (fstat(fd, &s) || fstat(a->area_fd, &as) ||
	    (uint64_t)s.st_ino != m->e[i].ino || s.st_dev != as.st_dev) {
		snprintf(errbuf, errlen,
			 "snapshot '%s': " SNAP_DIR_NAME "/%s is not the "
			 "directory the server made (it was replaced): refused",
			 name, name);
		close(fd);
		return -ENOENT;
	}
	return fd;
}

/* Seals the built tree @fd (every file and directory below it immutable,
 * none with another link), publishes it as @name by rename, seals its top
 * and records it in @m and the manifest.  On failure the tree is
 * unsealed; the caller removes whatever name it has. */
static int snap_publish(struct snap_area *a, const char *manifest,
			struct snap_manifest *m, int fd, const char *tmp,
			const char *name, const struct timespec *now,
			bool *renamed, char *errbuf, size_t errlen)
{
	struct snap_manifest_entry e = { 0 };
	struct stat s;
	int err;

	err = snap__tree_immutable(fd, true, false, 0);
	if (err) {
		snprintf(errbuf, errlen,
			 "snapshot '%s': cannot make it read-only (%s)%s", name,
			 strerror(-err),
			 err == -EMLINK
				 ? ": a file in it has another link (made "
				   "from outside while it was built); refused"
				 : ": FS_IMMUTABLE_FL needs "
				   "CAP_LINUX_IMMUTABLE");
		return err;
	}
	/* Its time is when it was taken: what GET lists as created. */
	if (futimens(fd, now) || renameat(a->area_fd, tmp, a->area_fd, name)) {
		err = -errno;
		snprintf(errbuf, errlen, "snapshot '%s': %s", name,
			 strerror(-err));
		return err;
	}
	*renamed = true;
	err = snap__flags_set(fd, true);
	if (!err && fstat(fd, &s)) {
		err = -errno;
	}
	if (err) {
		snprintf(errbuf, errlen, "snapshot '%s': %s", name,
			 strerror(-err));
		return err;
	}
	snprintf(e.name, sizeof(e.name), "%s", name);
	e.created_s = (int64_t)now->tv_sec;
	e.ino = (uint64_t)s.st_ino;
	err = snap__manifest_add(m, &e);
	if (!err) {
		err = snap__manifest_save(manifest, m, errbuf, errlen);
	} else {
		snprintf(errbuf, errlen, "snapshot '%s': %s", name,
			 strerror(-err));
	}
	return err;
}

int snap_create(const char *root, const char *manifest, const char *name,
		struct snap_stats *st, char *errbuf, size_t errlen)
{
	return snap_create_at(root, manifest, name, 0, st, errbuf, errlen);
}

int snap_create_at(const char *root, const char *manifest, const char *name,
		   int64_t created_s, struct snap_stats *st, char *errbuf,
		   size_t errlen)
{
	struct snap_stats local = { 0 };
	struct snap_manifest m = { 0 };
	struct timespec now[2];
	struct snap_area a;
	char tmp[SNAP_NAME_MAX + 8];
	bool renamed = false;
	int fd = -1, err;

	err = snap_name_check(name, errbuf, errlen);
	if (err) {
		return err;
	}
	st = st ? st : &local;
	memset(st, 0, sizeof(*st));
	/* Before .snapshot is made: a refused datastore keeps no trace. */
	err = snap_probe(root, errbuf, errlen);
	if (err) {
		return err;
	}
	err = snap_area_open(&a, root, true, true, errbuf, errlen);
	if (err) {
		return err;
	}
	err = snap_manifest_get(&a, manifest, true, &m, errbuf, errlen);
	if (err) {
		goto cleanup;
	}
	err = snap_name_taken(&a, &m, name, errbuf, errlen);
	if (err) {
		goto cleanup;
	}
	snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
	snap_leftover_remove(a.area_fd, tmp);
	clock_gettime(CLOCK_REALTIME, &now[0]);
	if (created_s > 0) {
		/* A replica of another datastore's snapshot: its time. */
		now[0].tv_sec = (time_t)created_s;
		now[0].tv_nsec = 0;
	}
	now[1] = now[0];
	/* Built under a dot name the NFS layer hides and refuses changes
	 * in, 0700: no client is meant to see it before it is sealed. */
	if (mkdirat(a.area_fd, tmp, 0700)) {
		err = -errno;
		snprintf(errbuf, errlen, "%s/%s: %s", SNAP_DIR_NAME, tmp,
			 strerror(-err));
		goto cleanup;
	}
	fd = openat(a.area_fd, tmp,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	err = fd < 0 ? -errno : snap__tree_clone(a.root_fd, fd, 0, true, st);
	if (err) {
		snprintf(errbuf, errlen, "snapshot '%s': %s%s", name,
			 strerror(-err),
			 err == -EOPNOTSUPP || err == -EXDEV
				 ? " (a file the file system cannot share)"
				 : "");
		goto cleanup_tmp;
	}
	err = snap_publish(&a, manifest, &m, fd, tmp, name, &now[0], &renamed,
			   errbuf, errlen);
cleanup_tmp:
	if (err) {
		if (fd >= 0) {
			(void)snap__tree_immutable(fd, false, true, 0);
		}
		(void)snap__tree_remove(a.area_fd, renamed ? name : tmp, 0);
	}
cleanup:
	if (fd >= 0) {
		close(fd);
	}
	snap__manifest_free(&m);
	snap_area_close(&a);
	return err;
}

int snap_check(const char *root, const char *manifest, const char *name,
	       bool exists, char *errbuf, size_t errlen)
{
	struct snap_manifest m = { 0 };
	struct snap_area a;
	int fd, err;

	err = snap_name_check(name, errbuf, errlen);
	if (!err && !exists) {
		err = snap_probe(root, errbuf, errlen);
	}
	if (err) {
		return err;
	}
	err = snap_area_open(&a, root, false, false, errbuf, errlen);
	if (err && err != -ENOENT) {
		return err;
	}
	err = snap_manifest_get(&a, manifest, false, &m, errbuf, errlen);
	if (err) {
		goto out;
	}
	if (exists) {
		fd = snap_open_listed(&a, &m, name, errbuf, errlen);
		err = fd < 0 ? fd : 0;
		if (fd >= 0) {
			close(fd);
		}
	} else {
		err = snap_name_taken(&a, &m, name, errbuf, errlen);
	}
out:
	snap__manifest_free(&m);
	if (a.root_fd >= 0) {
		snap_area_close(&a);
	}
	return err;
}

int snap_delete(const char *root, const char *manifest, const char *name,
		char *errbuf, size_t errlen)
{
	struct snap_manifest m = { 0 };
	struct snap_area a;
	char gone[SNAP_NAME_MAX + 8];
	int fd, err;

	err = snap_name_check(name, errbuf, errlen);
	if (err) {
		return err;
	}
	err = snap_area_open(&a, root, false, true, errbuf, errlen);
	if (err == -ENOENT) {
		snprintf(errbuf, errlen, "snapshot '%s': does not exist", name);
	}
	if (err) {
		return err;
	}
	err = snap_manifest_get(&a, manifest, true, &m, errbuf, errlen);
	if (err) {
		goto out;
	}
	fd = snap_open_listed(&a, &m, name, errbuf, errlen);
	if (fd < 0) {
		err = fd;
		goto out;
	}
	/* Out of the manifest first: a crash then leaves a directory that
	 * is no snapshot, never a listed snapshot half removed. */
	snap__manifest_del(&m, name);
	err = snap__manifest_save(manifest, &m, errbuf, errlen);
	if (err) {
		close(fd);
		goto out;
	}
	/* Then out of sight (a dot name) before anything in it can
	 * change, and removed. */
	snprintf(gone, sizeof(gone), ".%s.del", name);
	snap_leftover_remove(a.area_fd, gone);
	err = snap__flags_set(fd, false);
	if (!err && renameat(a.area_fd, name, a.area_fd, gone)) {
		err = -errno;
	}
	if (!err) {
		err = snap__tree_immutable(fd, false, true, 0);
	}
	close(fd);
	if (!err) {
		err = snap__tree_remove(a.area_fd, gone, 0);
	}
	if (err) {
		snprintf(errbuf, errlen, "snapshot '%s': delete: %s", name,
			 strerror(-err));
	}
out:
	snap__manifest_free(&m);
	snap_area_close(&a);
	return err;
}

int snap_restore(const char *root, const char *manifest, const char *name,
		 struct snap_stats *st, char *errbuf, size_t errlen)
{
	struct snap_stats local = { 0 };
	struct snap_manifest m = { 0 };
	struct snap_area a;
	int fd, err;

	err = snap_name_check(name, errbuf, errlen);
	if (err) {
		return err;
	}
	st = st ? st : &local;
	memset(st, 0, sizeof(*st));
	err = snap_area_open(&a, root, false, false, errbuf, errlen);
	if (err == -ENOENT) {
		snprintf(errbuf, errlen, "snapshot '%s': does not exist", name);
	}
	if (err) {
		return err;
	}
	err = snap_manifest_get(&a, manifest, false, &m, errbuf, errlen);
	if (err) {
		goto out;
	}
	fd = snap_open_listed(&a, &m, name, errbuf, errlen);
	if (fd < 0) {
		err = fd;
		goto out;
	}
	err = snap__tree_revert(fd, a.root_fd, 0, true, st);
	if (err) {
		snprintf(errbuf, errlen,
			 "snapshot '%s': restore: %s (the datastore is "
			 "partly reverted; restore again)",
			 name, strerror(-err));
	}
	close(fd);
out:
	snap__manifest_free(&m);
	snap_area_close(&a);
	return err;
}

static int snap_info_cmp(const void *a, const void *b)
{
	return strcmp(((const struct snap_entry *)a)->name,
		      ((const struct snap_entry *)b)->name);
}

int snap_list(const char *root, const char *manifest, struct snap_entry **out,
	      size_t *n)
{
	struct snap_manifest m = { 0 };
	struct snap_entry *list = NULL;
	struct snap_area a;
	char err[256];
	size_t k = 0;
	int rc;

	*out = NULL;
	*n = 0;
	rc = snap_area_open(&a, root, false, false, err, sizeof(err));
	if (rc == -ENOENT) {
		return 0; /* never snapshotted */
	}
	if (rc) {
		return rc;
	}
	rc = snap_manifest_get(&a, manifest, false, &m, err, sizeof(err));
	if (rc) {
		goto cleanup;
	}
	list = calloc(m.n ? m.n : 1, sizeof(*list));
	if (!list) {
		rc = -ENOMEM;
		goto cleanup;
	}
	/* Only what the manifest names and is still the directory made. */
	for (size_t i = 0; i < m.n; i++) {
		int fd =
			snap_open_listed(&a, &m, m.e[i].name, err, sizeof(err));

		if (fd < 0) {
			continue;
		}
		close(fd);
		snprintf(list[k].name, sizeof(list[k].name), "%s", m.e[i].name);
		list[k].created_s = m.e[i].created_s;
		k++;
	}
	qsort(list, k, sizeof(*list), snap_info_cmp);
	*out = k ? list : NULL;
	*n = k;
	if (!k) {
		free(list);
	}
cleanup:
	snap__manifest_free(&m);
	snap_area_close(&a);
	return rc;
}
