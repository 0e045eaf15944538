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
 * never touches it.  Each run of changed blocks is one WRITE carrying
 * the xxh64 of the source snapshot's bytes; the destination compares it
 * with the xxh64 of the bytes it received before it writes them (-EIO on
 * a mismatch); each file
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
struct repl_src;
struct repl_src_tree;

/* The unit of comparison and transfer. */
#define REPL_BLOCK (64u << 10)

struct repl_xfer_args {
	const char *name; /* the transfer's name: the destination's snapshot */
	/* The source snapshot's tree and the base snapshot's (src.h,
	 * borrowed; @base_tree NULL: a baseline).  NULL @src_tree: the
	 * directories @src and @base (NULL: a baseline) instead. */
	struct repl_src_tree *src_tree, *base_tree;
	const char *src;
	const char *base;
	const char *dst; /* the destination datastore's root */
	const char *journal; /* the transfer's journal (a resume's state) */
	/* The destination's snapshot manifest: with it the transfer ends
	 * with snap_create(dst, dst_manifest, name); NULL: no snapshot (a
	 * file system without reflink, the unit tests). */
	const char *dst_manifest;
	/* Where the operations go (dst.h); NULL: a repl_local on @dst and
	 * @dst_manifest, its transfer marker @dst_applying (undo.h; NULL:
	 * none) and its snapshots under @dst_guard (guard.h; NULL: none). */
	struct repl_dst *to;
	const char *dst_applying;
	const struct repl_guard *dst_guard;
	/* The base's name on the destination (BEGIN); NULL or "": a
	 * baseline. */
	const char *base_name;
	/* The source snapshot's time: the destination's snapshot gets it
	 * (0: the destination's now). */
	int64_t created_s;
	/* The source datastore and its manifest: with them, the source
	 * snapshot @name must still be listed when its tree has been
	 * walked, else the transfer fails (-ENOENT) and is not committed
	 * (a delete, retention's, took it while it was read; snap.h
	 * deletes it from the manifest before it touches its tree). NULL:
	 * not checked.  @from (src.h) checks the same where it is set. */
	const char *src_root, *src_manifest;
	struct repl_src *from;
};

struct repl_xfer_stats {
	uint64_t files; /* regular files applied by this run */
	uint64_t files_resumed; /* already applied by a run before (journal) */
	uint64_t candidate_bytes; /* blocks read and compared: not shown the
				   * same by FIEMAP or the store (src.h) */
	uint64_t sent_bytes; /* blocks written to the destination */
	uint64_t removed; /* entries removed from the destination */
	/* The journal named this transfer but the destination had undone
	 * it (it restarted, or an ABORT): applied from its start again. */
	bool restarted;
};

/* Whether @err is the transport's (client.h: the destination was not
 * reached or did not answer), not an operation's refusal: the
 * destination may still hold the transfer in part, for a resume. */
bool repl_err_transport(int err);

/*
 * Runs transfer @a (see the head of this file): BEGIN on the destination
 * (undo.h), the tree, COMMIT.  A baseline refuses a destination that
 * holds anything but .snapshot (-ENOTEMPTY) unless the destination is
 * resuming the same transfer.  The journal counts only when BEGIN says
 * the destination still holds the transfer in part (else it starts
 * again: @st->restarted).  Returns 0 with @st filled (the journal
 * removed), or -errno with the reason (-ENOSPC: the destination is
 * full); a failure that is not the transport's is followed by ABORT
 * (the destination's tree back at its last replica); the journal is kept
 * for the next run either way.
 */
int repl_xfer_run(const struct repl_xfer_args *a, struct repl_xfer_stats *st,
		  char *errbuf, size_t errlen);

#endif
