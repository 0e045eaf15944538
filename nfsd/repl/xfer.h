/* SPDX-License-Identifier: Apache-2.0 */
/*
 * repl xfer: one replication transfer (docs/replication.md) from a
 * snapshot of the source datastore to the destination's tree: a baseline
 * (every file of the snapshot, holes left out) or an incremental (only
 * the blocks that differ from the base snapshot, the last one both sides
 * hold: plan.h picks the candidates by FIEMAP, then each candidate block
 * is compared by xxh64 with the base's and sent only when it differs).
 * Entries the snapshot no longer has are removed from the destination.
 *
 * The destination's tree is the staging area; the replica its clients can
 * trust is the destination's last snapshot (@commit): a snapshot of its
 * own, made only when every file of the transfer is applied and checked,
 * immutable, so a transfer that dies (kill -9, a cut connection, ENOSPC)
 * never touches it.  Each written block is read back and its xxh64
 * compared with the source snapshot's (-EIO on a mismatch); each file
 * applied is recorded in @journal (fdatasync), and a transfer started
 * again with the same @name skips the files recorded: applying a file is
 * idempotent (same source snapshot, same base), so the file a kill cut
 * half way is simply applied again.
 *
 * Blocks the caller: run it off the event loops.
 */
#ifndef DSNFS_REPL_XFER_H
#define DSNFS_REPL_XFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct repl_dst;

/* The unit of comparison and transfer. */
#define REPL_BLOCK (64u << 10)

struct repl_xfer_args {
	const char *name; /* the transfer's name: the destination's snapshot */
	const char *src; /* the source snapshot's directory */
	const char *base; /* the base snapshot's directory; NULL: baseline */
	const char *dst; /* the destination datastore's root */
	const char *journal; /* the transfer's journal (a resume's state) */
	/* The destination's snapshot manifest: with it the transfer ends
	 * with snap_create(dst, dst_manifest, name); NULL: no snapshot (a
	 * file system without reflink, the unit tests). */
	const char *dst_manifest;
	/* Where the operations go (dst.h); NULL: a repl_local on @dst and
	 * @dst_manifest. */
	struct repl_dst *to;
};

struct repl_xfer_stats {
	uint64_t files; /* regular files applied by this run */
	uint64_t files_resumed; /* already applied by a run before (journal) */
	uint64_t candidate_bytes; /* blocks FIEMAP did not show shared */
	uint64_t sent_bytes; /* blocks written to the destination */
	uint64_t removed; /* entries removed from the destination */
};

/*
 * Runs transfer @a (see the head of this file).  A baseline refuses a
 * destination that holds anything but .snapshot (-ENOTEMPTY) unless it is
 * resuming the same transfer (@a->journal names @a->name).  Returns 0
 * with @st filled (the journal removed), or -errno with the reason
 * (-ENOSPC: the destination is full; the journal is kept for a resume).
 */
int repl_xfer_run(const struct repl_xfer_args *a, struct repl_xfer_stats *st,
		  char *errbuf, size_t errlen);

#endif
