/* SPDX-License-Identifier: Apache-2.0 */
/*
 * repl chain: the source's own snapshots a relation carries to its
 * destination besides its replica (docs/replication.md, "Snapshots"),
 * as ANF's replication does ("a 1:1 replica of the source volume,
 * including all snapshots").  Every snapshot of the source but the
 * replication engine's own (repl-*) is carried: by hand or by a
 * snapshot policy.  The source keeps which ones the destination holds
 * (STATE_DIR/repl-NAME.snapshots, one "NAME CREATED_S" a line after a
 * version line, replaced atomically); at each transfer the source's
 * list against that record says which to send (not held yet, oldest
 * first, each an incremental from the one before) and which to delete
 * on the destination (held, but no longer on the source: its retention
 * or a delete by hand; or on the source again under the same name but
 * made at another time).  This file is the record and that plan; the
 * transfers are relation.c's.
 */
#ifndef DSNFS_REPL_CHAIN_H
#define DSNFS_REPL_CHAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nfsd/snap/naming.h"

struct snap_entry;

struct repl_snap {
	char name[SNAP_NAME_MAX + 1];
	int64_t created_s; /* the source's time of it */
};

struct repl_snaps {
	struct repl_snap *s; /* owned */
	size_t n;
};

/* Whether snapshot @name of a source is carried: not a replica of the
 * replication engine ("repl-..."). */
bool repl_chain_carried(const char *name);

/* Reads record @path into @out (absent: empty).  Returns 0 or -errno
 * with the reason (-EINVAL: not a record). */
int repl_snaps_load(const char *path, struct repl_snaps *out, char *errbuf,
		    size_t errlen);
/* Replaces @path by @s: temporary file, fsync, rename, fsync of the
 * directory.  Returns 0 or -errno with the reason. */
int repl_snaps_save(const char *path, const struct repl_snaps *s, char *errbuf,
		    size_t errlen);
/* The index of @name in @s, or -1. */
int repl_snaps_find(const struct repl_snaps *s, const char *name);
/* Adds (or updates) @name made at @created_s.  0 or -ENOMEM. */
int repl_snaps_add(struct repl_snaps *s, const char *name, int64_t created_s);
void repl_snaps_del(struct repl_snaps *s, const char *name);
void repl_snaps_free(struct repl_snaps *s);

/*
 * The plan of a transfer: the source's snapshots @src (@ns, snap_list())
 * against the record @held.  *send: the carried ones the record lacks
 * (or holds with another time), by time then name; *gone: the record's
 * that the source no longer has with that time.  Returns 0 (both owned
 * by the caller, repl_snaps_free()) or -ENOMEM.
 */
int repl_chain_plan(const struct snap_entry *src, size_t ns,
		    const struct repl_snaps *held, struct repl_snaps *send,
		    struct repl_snaps *gone);

#endif
