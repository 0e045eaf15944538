// SPDX-License-Identifier: Apache-2.0
/*
 * snap/volclone: the record of the datastores made from snapshots
 * (volclone.h).
 */
#include "nfsd/snap/volclone.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nfsd/base/fileio.h"

#define VOLCLONE_MAGIC "dsnfs-volume-clones 1"

void snap_volclones_free(struct snap_volclones *c)
{
	free(c->v);
	c->v = NULL;
	c->n = 0;
}

struct snap_volclone *snap_volclones_find(const struct snap_volclones *c,
					  const char *name)
{
	for (size_t i = 0; i < c->n; i++) {
		if (!strcmp(c->v[i].name, name)) {
			return &c->v[i];
		}
	}
	return NULL;
}

const struct snap_volclone *
snap_volclones_pinning(const struct snap_volclones *c, const char *source,
		       const char *snap)
{
	for (size_t i = 0; i < c->n; i++) {
		if (c->v[i].pinned && !strcmp(c->v[i].source, source) &&
		    !strcmp(c->v[i].snap, snap)) {
			return &c->v[i];
		}
	}
	return NULL;
}

int snap_volclones_add(struct snap_volclones *c, const struct snap_volclone *v)
{
	struct snap_volclone *p;

	if (snap_volclones_find(c, v->name)) {
		return -EEXIST;
	}
	if (c->n >= SNAP_VOLCLONE_MAX) {
		return -ENOSPC;
	}
	p = realloc(c->v, (c->n + 1) * sizeof(*p));
	if (!p) {
		return -ENOMEM;
	}
	c->v = p;
	c->v[c->n++] = *v;
	return 0;
}

static void volclone_path(const char *state_dir, char *buf, size_t len)
{
	snprintf(buf, len, "%.3900s/" SNAP_VOLCLONE_FILE, state_dir);
}

/* "NAME SOURCE SNAP PINNED DIR" (DIR the rest of the line). */
static int volclone_parse(char *line, struct snap_volclone *v)
{
	int pinned, used = 0;

	memset(v, 0, sizeof(*v));
	line[strcspn(line, "\n")] = '\0';
	if (sscanf(line, "%63s %63s %63s %d %n", v->name, v->source, v->snap,
		   &pinned, &used) != 4 ||
	    !used || line[used] != '/' ||
	    strlen(line + used) >= sizeof(v->dir) || (pinned & ~1)) {
		return -EINVAL;
	}
	v->pinned = pinned;
	memcpy(v->dir, line + used, strlen(line + used) + 1);
	return 0;
}

int snap_volclones_load(const char *state_dir, struct snap_volclones *c,
			char *errbuf, size_t errlen)
{
	char path[PATH_MAX], line[4400];
	unsigned lineno = 1;
	FILE *f;
	int err = 0;

	memset(c, 0, sizeof(*c));
	volclone_path(state_dir, path, sizeof(path));
	f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT) {
			return 0;
		}
		err = -errno;
		snprintf(errbuf, errlen, "%s: %s", path, strerror(-err));
		return err;
	}
	if (!fgets(line, sizeof(line), f) ||
	    strcmp(line, VOLCLONE_MAGIC "\n")) {
		snprintf(errbuf, errlen, "%s: not a record of volume clones",
			 path);
		fclose(f);
		return -EINVAL;
	}
	while (!err && fgets(line, sizeof(line), f)) {
		struct snap_volclone v;

		lineno++;
		err = volclone_parse(line, &v);
		if (!err) {
			err = snap_volclones_add(c, &v);
		}
		if (err) {
			snprintf(errbuf, errlen, "%s:%u: a bad line", path,
				 lineno);
		}
	}
	fclose(f);
	if (err) {
		snap_volclones_free(c);
	}
	return err;
}

static void volclone_print(FILE *f, const void *arg)
{
	const struct snap_volclones *c = arg;

	fprintf(f, VOLCLONE_MAGIC "\n");
	for (size_t i = 0; i < c->n; i++) {
		fprintf(f, "%s %s %s %d %s\n", c->v[i].name, c->v[i].source,
			c->v[i].snap, c->v[i].pinned ? 1 : 0, c->v[i].dir);
	}
}

int snap_volclones_save(const char *state_dir, const struct snap_volclones *c,
			char *errbuf, size_t errlen)
{
	char path[PATH_MAX];

	volclone_path(state_dir, path, sizeof(path));
	return fileio_replace_printed(path, volclone_print, c, errbuf, errlen);
}
