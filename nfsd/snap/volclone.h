/* SPDX-License-Identifier: Apache-2.0 */
/*
 * snap/volclone: the datastores made from snapshots (POST /volumes with
 * a snapshot, nfsd/admin/volclone.c), kept in STATE_DIR/volume-clones so
 * that the server serves them again after a restart or a SIGHUP (each
 * one the config of its source datastore with its own name and
 * directory), and so that their source snapshot is not deleted while one
 * depends on it (pinned; a split ends that).  Text, replaced atomically:
 *
 *   dsnfs-volume-clones 1
 *   NAME SOURCE SNAPSHOT PINNED DIR
 */
#ifndef DSNFS_SNAP_VOLCLONE_H
#define DSNFS_SNAP_VOLCLONE_H

#include <stdbool.h>
#include <stddef.h>

#define SNAP_VOLCLONE_FILE "volume-clones"
#define SNAP_VOLCLONE_MAX 64

struct snap_volclone {
	char name[64];
	char source[64];
	char snap[64];
	bool pinned; /* the source snapshot may not be deleted */
	char dir[4096];
};

struct snap_volclones {
	struct snap_volclone *v; /* owned */
	size_t n;
};

/* Reads STATE_DIR's record (absent: none).  Returns 0 or -errno with the
 * reason. */
int snap_volclones_load(const char *state_dir, struct snap_volclones *c,
			char *errbuf, size_t errlen);
int snap_volclones_save(const char *state_dir, const struct snap_volclones *c,
			char *errbuf, size_t errlen);
/* Appends a copy of @v: 0, -EEXIST (its name is taken) or -ENOSPC. */
int snap_volclones_add(struct snap_volclones *c, const struct snap_volclone *v);
struct snap_volclone *snap_volclones_find(const struct snap_volclones *c,
					  const char *name);
/* The first clone that pins snapshot @snap of @source, or NULL. */
const struct snap_volclone *
snap_volclones_pinning(const struct snap_volclones *c, const char *source,
		       const char *snap);
void snap_volclones_free(struct snap_volclones *c);

#endif
