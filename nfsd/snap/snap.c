/*
 * snap: datastore snapshots by name (snap.h): the hidden area, a probe
 * that the file system shares blocks, snapshots made under a temporary
 * name and renamed into place, and the immutable flag taken off only for
 * as long as a change of the area needs it.
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

int snap_name_check(const char *name, char *errbuf, size_t errlen)
{
	size_t len = strlen(name);

	if (len == 0 || len > SNAP_NAME_MAX) {
		snprintf(errbuf, errlen,
			 "snapshot name: 1 to %d characters are needed",
			 SNAP_NAME_MAX);
		return -EINVAL;
	}
	if (strchr(name, '/') || strstr(name, "..") || name[0] == '.') {
		snprintf(errbuf, errlen,
			 "snapshot '%.64s': a name has no '/', no '..' and "
			 "does not start with '.'",
			 name);
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		      c == '-')) {
			snprintf(errbuf, errlen,
				 "snapshot '%.64s': only letters, digits, "
				 "'.', '_' and '-'",
				 name);
			return -EINVAL;
		}
	}
	return 0;
}

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

int snap_create(const char *root, const char *name, struct snap_stats *st,
		char *errbuf, size_t errlen)
{
	struct snap_stats local = { 0 };
	struct timespec now[2];
	struct snap_area a;
	char tmp[SNAP_NAME_MAX + 8];
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
	if (!faccessat(a.area_fd, name, F_OK, AT_SYMLINK_NOFOLLOW)) {
		snprintf(errbuf, errlen, "snapshot '%s' exists", name);
		err = -EEXIST;
		goto cleanup;
	}
	snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
	(void)snap__tree_remove(a.area_fd, tmp, 0); /* a crash's leftover */
	clock_gettime(CLOCK_REALTIME, &now[0]);
	now[1] = now[0];
	if (mkdirat(a.area_fd, tmp, 0755)) {
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
	/* Its time is when it was taken: what GET lists as created. */
	if (futimens(fd, now) || renameat(a.area_fd, tmp, a.area_fd, name)) {
		err = -errno;
		snprintf(errbuf, errlen, "snapshot '%s': %s", name,
			 strerror(-err));
		goto cleanup_tmp;
	}
	err = snap__tree_immutable(fd, true, 0);
	if (err) {
		snprintf(errbuf, errlen,
			 "snapshot '%s': cannot make it read-only (%s): "
			 "FS_IMMUTABLE_FL needs CAP_LINUX_IMMUTABLE",
			 name, strerror(-err));
		(void)snap__tree_immutable(fd, false, 0);
		(void)snap__tree_remove(a.area_fd, name, 0);
	}
	goto cleanup;
cleanup_tmp:
	(void)snap__tree_remove(a.area_fd, tmp, 0);
cleanup:
	if (fd >= 0) {
		close(fd);
	}
	snap_area_close(&a);
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

int snap_check(const char *root, const char *name, bool exists, char *errbuf,
	       size_t errlen)
{
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
	if (err == -ENOENT) {
		if (!exists) {
			return 0;
		}
		snprintf(errbuf, errlen, "snapshot '%s': does not exist", name);
	}
	if (err) {
		return err;
	}
	fd = snap_open(&a, name, errbuf, errlen);
	snap_area_close(&a);
	if (fd >= 0) {
		close(fd);
		if (!exists) {
			snprintf(errbuf, errlen, "snapshot '%s' exists", name);
			return -EEXIST;
		}
		return 0;
	}
	return exists || fd != -ENOENT ? fd : 0;
}

int snap_delete(const char *root, const char *name, char *errbuf, size_t errlen)
{
	struct snap_area a;
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
	fd = snap_open(&a, name, errbuf, errlen);
	if (fd < 0) {
		snap_area_close(&a);
		return fd;
	}
	err = snap__tree_immutable(fd, false, 0);
	close(fd);
	if (!err) {
		err = snap__tree_remove(a.area_fd, name, 0);
	}
	if (err) {
		snprintf(errbuf, errlen, "snapshot '%s': delete: %s", name,
			 strerror(-err));
	}
	snap_area_close(&a);
	return err;
}

int snap_restore(const char *root, const char *name, struct snap_stats *st,
		 char *errbuf, size_t errlen)
{
	struct snap_stats local = { 0 };
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
	fd = snap_open(&a, name, errbuf, errlen);
	if (fd < 0) {
		snap_area_close(&a);
		return fd;
	}
	err = snap__tree_revert(fd, a.root_fd, 0, true, st);
	if (err) {
		snprintf(errbuf, errlen,
			 "snapshot '%s': restore: %s (the datastore is "
			 "partly reverted; restore again)",
			 name, strerror(-err));
	}
	close(fd);
	snap_area_close(&a);
	return err;
}

static int snap_info_cmp(const void *a, const void *b)
{
	return strcmp(((const struct snap_entry *)a)->name,
		      ((const struct snap_entry *)b)->name);
}

int snap_list(const char *root, struct snap_entry **out, size_t *n)
{
	struct snap_entry *list = NULL;
	struct snap_area a;
	char **names = NULL;
	char err[256];
	size_t k = 0, count = 0;
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
	rc = snap__names_get(a.area_fd, &names);
	if (rc) {
		goto cleanup;
	}
	while (names[count]) {
		count++;
	}
	list = calloc(count ? count : 1, sizeof(*list));
	if (!list) {
		rc = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; names[i] && k < SNAP_LIST_MAX; i++) {
		struct stat s;

		if (names[i][0] == '.' ||
		    fstatat(a.area_fd, names[i], &s, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISDIR(s.st_mode) || strlen(names[i]) > SNAP_NAME_MAX) {
			continue;
		}
		snprintf(list[k].name, sizeof(list[k].name), "%s", names[i]);
		list[k].created_s = (int64_t)s.st_mtim.tv_sec;
		k++;
	}
	qsort(list, k, sizeof(*list), snap_info_cmp);
	*out = k ? list : NULL;
	*n = k;
	if (!k) {
		free(list);
	}
cleanup:
	snap__names_free(names);
	snap_area_close(&a);
	return rc;
}
