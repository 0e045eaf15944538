// SPDX-License-Identifier: Apache-2.0
/*
 * manifest: which snapshots a local datastore has, kept in the state
 * directory (docs/security.md section 3): a directory under .snapshot is
 * a snapshot only if this file names it, with the device and inode
 * number it had when the server made it.  A directory that a client
 * planted, or one put in the place of a snapshot, is neither listed nor
 * restorable.  The file is text, one snapshot a line after a version
 * line:
 *
 *   dsnfs-snapshots 1
 *   NAME CREATED_S INO
 *
 * (the inode number only: a device number can change across reboots, an
 * inode number of a directory the server keeps immutable does not).
 *
 * and is replaced atomically: a temporary file, fsync, rename, fsync of
 * the directory.  A crash leaves the old manifest or the new one.
 */
#include "nfsd/snap/snap_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MANIFEST_MAGIC "dsnfs-snapshots 1"

void snap__manifest_free(struct snap_manifest *m)
{
	free(m->e);
	m->e = NULL;
	m->n = 0;
}

int snap__manifest_find(const struct snap_manifest *m, const char *name)
{
	for (size_t i = 0; i < m->n; i++) {
		if (!strcmp(m->e[i].name, name)) {
			return (int)i;
		}
	}
	return -1;
}

int snap__manifest_add(struct snap_manifest *m,
		       const struct snap_manifest_entry *e)
{
	struct snap_manifest_entry *p;

	if (m->n >= SNAP_LIST_MAX) {
		return -ENOSPC;
	}
	p = realloc(m->e, (m->n + 1) * sizeof(*p));
	if (!p) {
		return -ENOMEM;
	}
	m->e = p;
	m->e[m->n++] = *e;
	return 0;
}

void snap__manifest_del(struct snap_manifest *m, const char *name)
{
	int i = snap__manifest_find(m, name);

	if (i >= 0) {
		m->e[i] = m->e[m->n - 1];
		m->n--;
	}
}

static int manifest_parse_line(char *line, struct snap_manifest_entry *e)
{
	char name[SNAP_NAME_MAX + 2];
	long long created;
	unsigned long long ino;
	char err[128];

	if (sscanf(line, "%64s %lld %llu", name, &created, &ino) != 3 ||
	    snap_name_check(name, err, sizeof(err))) {
		return -EINVAL;
	}
	memset(e, 0, sizeof(*e));
	memcpy(e->name, name, strlen(name) + 1); /* checked: fits */
	e->created_s = (int64_t)created;
	e->ino = (uint64_t)ino;
	return 0;
}

int snap__manifest_load(const char *path, struct snap_manifest *m, char *errbuf,
			size_t errlen)
{
	char line[256];
	unsigned lineno = 1;
	FILE *f;
	int err = 0;

	memset(m, 0, sizeof(*m));
	f = fopen(path, "re");
	if (!f) {
		err = -errno;
		if (err != -ENOENT) {
			snprintf(errbuf, errlen, "%s: %s", path,
				 strerror(-err));
		}
		return err;
	}
	if (!fgets(line, sizeof(line), f) ||
	    strncmp(line, MANIFEST_MAGIC "\n", sizeof(MANIFEST_MAGIC))) {
		snprintf(errbuf, errlen,
			 "%s: not a snapshot manifest (its first line is not "
			 "'" MANIFEST_MAGIC "')",
			 path);
		fclose(f);
		return -EINVAL;
	}
	while (!err && fgets(line, sizeof(line), f)) {
		struct snap_manifest_entry e;

		lineno++;
		err = manifest_parse_line(line, &e);
		if (err) {
			snprintf(errbuf, errlen, "%s:%u: a bad line", path,
				 lineno);
		} else if (snap__manifest_find(m, e.name) >= 0) {
			snprintf(errbuf, errlen, "%s:%u: '%s' twice", path,
				 lineno, e.name);
			err = -EINVAL;
		} else {
			err = snap__manifest_add(m, &e);
		}
	}
	if (!err && ferror(f)) {
		err = -EIO;
		snprintf(errbuf, errlen, "%s: read error", path);
	}
	fclose(f);
	if (err) {
		snap__manifest_free(m);
	}
	return err;
}

/* The directory of @path, opened: fsync(2) of it makes a rename last. */
static int manifest_dir_open(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	int fd;

	if (!slash) {
		snprintf(dir, sizeof(dir), ".");
	} else if (slash == path) {
		snprintf(dir, sizeof(dir), "/");
	} else {
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int snap__manifest_save(const char *path, const struct snap_manifest *m,
			char *errbuf, size_t errlen)
{
	char tmp[PATH_MAX];
	FILE *f = NULL;
	int fd = -1, dfd, err = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) {
		return -ENAMETOOLONG;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		err = -errno;
		goto fail;
	}
	fprintf(f, MANIFEST_MAGIC "\n");
	for (size_t i = 0; i < m->n; i++) {
		fprintf(f, "%s %" PRId64 " %" PRIu64 "\n", m->e[i].name,
			m->e[i].created_s, m->e[i].ino);
	}
	if (fflush(f) || fsync(fd)) {
		err = -errno;
		goto fail;
	}
	fclose(f);
	f = NULL;
	fd = -1;
	if (rename(tmp, path)) {
		err = -errno;
		goto fail;
	}
	dfd = manifest_dir_open(path);
	if (dfd >= 0) {
		if (fsync(dfd)) {
			err = -errno;
		}
		close(dfd);
	}
	if (err) {
		snprintf(errbuf, errlen, "%s: fsync of its directory: %s", path,
			 strerror(-err));
	}
	return err;
fail:
	snprintf(errbuf, errlen, "%s: cannot write it: %s", path,
		 strerror(-err));
	if (f) {
		fclose(f);
	} else if (fd >= 0) {
		close(fd);
	}
	unlink(tmp);
	return err;
}
