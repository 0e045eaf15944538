/* SPDX-License-Identifier: Apache-2.0 */
/*
 * repl undo: the transfer a destination is applying and has not yet
 * committed (docs/replication.md, "Atomic per transfer").  From BEGIN
 * until COMMIT the destination keeps STATE_DIR/repl-NAME.applying, one
 * line "TRANSFER BASE" (BASE: the destination's snapshot the transfer
 * applies on top of, the last one committed; "" for a baseline), written
 * to a temporary name, fsync'd and renamed into place.  A transfer that
 * does not commit is undone (the tree reverted to BASE by snap_restore,
 * a baseline's tree emptied but for .snapshot) at ABORT, at the
 * destination's start, at a break and at the BEGIN of another transfer;
 * the BEGIN of the same transfer resumes it.  So the live tree is the
 * last replica again as soon as a transfer fails, and a break never
 * leaves a transfer half applied.  While a transfer is being applied,
 * the live tree is part applied (readers of the destination may see it;
 * the snapshot BASE is whole throughout).
 *
 * While a marker is kept, only the BEGIN that made it may have its
 * operations applied: a tree operation without a marker is refused with
 * -ESTALE ("no transfer is being applied": the destination restarted or
 * aborted it), so a source never writes on top of an undone tree.
 *
 * Every @l here comes from repl_local_open(): the tree operations an undo
 * or a baseline's BEGIN needs (PRUNE, EMPTY) go through l->pub.call, so
 * dst_local.c calls this file and not the other way round.
 */
#ifndef DSNFS_REPL_UNDO_H
#define DSNFS_REPL_UNDO_H

#include <stdbool.h>
#include <stddef.h>

#include "nfsd/repl/dst.h"
#include "nfsd/snap/naming.h"

struct repl_applying {
	char name[SNAP_NAME_MAX + 1]; /* the transfer */
	char base[SNAP_NAME_MAX + 1]; /* "" a baseline */
};

/* Reads marker @path into *out.  Returns 0, -ENOENT (none) or -errno
 * (-EINVAL: not a marker). */
int repl_applying_load(const char *path, struct repl_applying *out);

/* Whether @l keeps a marker (false when @l has none configured). */
bool repl_undo_pending(const struct repl_local *l);

/* Undoes the transfer @l's marker names, if any, and removes the
 * marker.  Returns 0 or -errno with the reason (the marker then stays:
 * the undo is tried again at the next BEGIN, break or start). */
int repl_undo_run(struct repl_local *l, char *errbuf, size_t errlen);

/* BEGIN @m (wire.h) on @l: see REPL_OP_BEGIN.  Returns 0 with r->value,
 * or -errno with the reason in r->reason: -ENOTEMPTY (a baseline into a
 * datastore that holds something), -ENOENT (BASE is not a snapshot of
 * the destination: resync). */
int repl_undo_begin(struct repl_local *l, const struct repl_msg *m,
		    struct repl_result *r);

/* COMMIT @m: the destination's snapshot of the transfer, then the
 * marker goes.  -ESTALE when the marker does not name it. */
int repl_undo_commit(struct repl_local *l, const struct repl_msg *m,
		     struct repl_result *r);

/* -ESTALE with the reason when @l keeps no marker (a tree operation
 * outside a transfer); 0 when it does or has none configured. */
int repl_undo_check(const struct repl_local *l, struct repl_result *r);

#endif
