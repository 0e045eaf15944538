// SPDX-License-Identifier: Apache-2.0
/*
 * dirscan: what a datastore's directory holds, for the thin-provisioning
 * alarms.  ESXi keeps a VM's disk on an NFS datastore as a descriptor
 * (disk.vmdk) and a flat extent (disk-flat.vmdk) whose logical size is the
 * disk's; a thin disk is a sparse flat extent, fewer bytes allocated than
 * its size.  The sum of the flat extents' logical sizes is what the
 * datastore has promised, the sum of allocated blocks what it holds.
 */
#include "nfsd/alarm/alarm.h"
#include "nfsd/snap/snap.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SCAN_FLAT_SUFFIX "-flat.vmdk"
#define SCAN_BLOCK_BYTES 512 /* st_blocks counts 512-byte units */

struct scan_walk {
	struct alarm_scan *out;
	uint64_t entries;
	dev_t dev;
};

static bool scan_is_flat_extent(const char *name)
{
	size_t len = strlen(name), slen = strlen(SCAN_FLAT_SUFFIX);

	return len > slen && !strcmp(name + len - slen, SCAN_FLAT_SUFFIX);
}

static void scan_account_file(struct alarm_scan *out, const char *name,
			      const struct stat *st)
{
	uint64_t allocated = (uint64_t)st->st_blocks * SCAN_BLOCK_BYTES;
	uint64_t logical = (uint64_t)st->st_size;

	out->files++;
	out->allocated_bytes += allocated;
	if (!scan_is_flat_extent(name)) {
		return;
	}
	out->disks++;
	out->provisioned_bytes += logical;
	if (allocated < logical) {
		out->thin_disks++;
		out->thin_provisioned_bytes += logical;
	}
}

/* Walks the directory open on @fd (takes).  Entries that vanish while
 * we look are skipped: VMs are created and deleted under us. */
static int scan_walk_dir(struct scan_walk *w, int fd, unsigned depth)
{
	struct dirent *de;
	struct stat st;
	DIR *d = fdopendir(fd);
	int err = 0;

	if (!d) {
		err = -errno;
		close(fd);
		return err;
	}
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de) {
			err = -errno;
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) {
			continue;
		}
		/* Snapshots' disks are not provisioned twice. */
		if (depth == 0 && !strcmp(de->d_name, SNAP_DIR_NAME)) {
			continue;
		}
		if (++w->entries > ALARM_SCAN_MAX_ENTRIES) {
			err = -E2BIG;
			break;
		}
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW)) {
			if (errno == ENOENT) {
				continue;
			}
			err = -errno;
			break;
		}
		if (S_ISREG(st.st_mode)) {
			scan_account_file(w->out, de->d_name, &st);
			continue;
		}
		if (!S_ISDIR(st.st_mode) || st.st_dev != w->dev ||
		    depth + 1 >= ALARM_SCAN_MAX_DEPTH) {
			continue;
		}
		int sub =
			openat(dirfd(d), de->d_name,
			       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0) {
			if (errno == ENOENT) {
				continue;
			}
			err = -errno;
			break;
		}
		err = scan_walk_dir(w, sub, depth + 1);
		if (err) {
			break;
		}
	}
	closedir(d);
	return err;
}

int alarm_scan_dir(const char *dir, struct alarm_scan *out)
{
	struct scan_walk w = { .out = out };
	struct stat st;
	int fd, err;

	memset(out, 0, sizeof(*out));
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		return -errno;
	}
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	w.dev = st.st_dev;
	return scan_walk_dir(&w, fd, 0);
}
