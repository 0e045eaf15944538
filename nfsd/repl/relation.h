/* SPDX-License-Identifier: Apache-2.0 */
/*
 * repl relation: a replication relation between a source datastore and a
 * destination datastore (docs/replication.md), its state and its
 * transfers: each transfer takes a snapshot of the source
 * (repl-NAME-SEQ), applies it to the destination (xfer.h) against the
 * last snapshot both sides hold, and commits it as the destination's
 * snapshot of the same name; then the older pair goes.  The relation's
 * state (the last common snapshot, the sequence, broken or not) is one
 * file in the server's state directory, replaced atomically.
 *
 * The destination is a datastore this process reaches (@dst_root) or
 * one of another dsnfsd (@to: client.h, the admin API over HTTP).
 */
#ifndef DSNFS_REPL_RELATION_H
#define DSNFS_REPL_RELATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nfsd/repl/sched.h"
#include "nfsd/repl/xfer.h"
#include "nfsd/snap/naming.h"

struct repl_src;

struct repl_relation {
	const char *name; /* [A-Za-z0-9_-]+ */
	const char *src_root, *src_manifest;
	/* The source datastore (src.h; borrowed); NULL: the local one at
	 * @src_root, its snapshots under @src_guard. */
	struct repl_src *src;
	const char *dst_root, *dst_manifest; /* when @to is NULL */
	/* The destination on another dsnfsd (client.h); NULL: @dst_root,
	 * a datastore of this process. */
	struct repl_dst *to;
	/* With @to: HELLO's argument (peer.h repl_hello_arg()), sent
	 * before each transfer, so that the destination refuses to be the
	 * source datastore or another than the one meant; NULL: none. */
	const char *hello;
	const char *state_dir; /* its state file and journal go here */
	enum repl_schedule schedule;
	/* The locks of the snapshot calls (guard.h) on the source and, with
	 * @dst_root, on the destination; NULL: none. */
	const struct repl_guard *src_guard, *dst_guard;

	/* What the relation did (read by /metrics). */
	char last[SNAP_NAME_MAX + 1]; /* the last common snapshot; "" none */
	uint64_t seq;
	bool broken; /* the destination is writable: no transfers */
	int64_t last_ok_s; /* when the last transfer ended well */
	/* When the source snapshot of @last (the last committed replica)
	 * was taken: what the lag counts from. */
	int64_t last_snap_s;
	int64_t pending_s; /* the same, of the transfer not committed yet */
	int last_err; /* the last transfer's failure (-errno); 0: it went */
	int64_t last_err_s; /* when it failed */
	uint64_t bytes_total, transfers_ok, transfers_failed;
	struct repl_xfer_stats last_stats; /* summed over its steps */
	/* The snapshot the destination's live tree is at: the last one a
	 * transfer committed there (a carried one when a transfer stopped
	 * in the middle of its chain); "": @last. */
	char tip[SNAP_NAME_MAX + 1];
	/* A step whose COMMIT was sent and is not known to be made ("":
	 * none): the next transfer asks the destination (HASSNAP). */
	char committing[SNAP_NAME_MAX + 1];
	/* The source's own snapshots (chain.h) the last transfer carried to
	 * the destination and deleted there; all carried. */
	uint64_t last_snapshots, last_snapshots_deleted, snapshots_total;
};

/* Checks @r (a name, two roots that are distinct datastores: neither
 * inside the other; with @to, the destination's HELLO does that check)
 * and loads its state file.  Returns 0 or -errno with
 * the reason (-EINVAL: the destination is the source datastore or in
 * it). */
int repl_relation_open(struct repl_relation *r, char *errbuf, size_t errlen);

/* One transfer (see the head of this file) at time @now: first the
 * source's snapshots the destination lacks (chain.h), oldest first, each
 * its own step (BEGIN .. COMMIT, an incremental from the one before),
 * the deleted ones deleted there, then the replica; a transfer a kill
 * cut is resumed from its journal (the step it was in).  Returns 0 or
 * -errno with the reason (-EPERM: the relation is broken; -ENOSPC: the
 * destination is full or holds 255 snapshots). */
int repl_relation_transfer(struct repl_relation *r, int64_t now, char *errbuf,
			   size_t errlen);

/* Break (the DR failover): the destination stops taking transfers and
 * may be written by its clients.  Returns 0 or -errno. */
int repl_relation_break(struct repl_relation *r, char *errbuf, size_t errlen);

/* Resync after a break: reverts the destination to the last common
 * snapshot (@tip: the newest both hold, a carried one when the last
 * transfer stopped in its chain; what its clients wrote since the
 * break is lost, as ANF's resync) and ends the break; the next transfer
 * sends only what the source changed since.  Returns 0 or -errno. */
int repl_relation_resync(struct repl_relation *r, char *errbuf, size_t errlen);

/* Seconds the destination's replica is behind @now (the age of the
 * source snapshot of the last committed replica: a failed transfer does
 * not make it younger); -1 before a baseline. */
int64_t repl_relation_lag(const struct repl_relation *r, int64_t now);

/* The reverse (reverse.h): this side becomes the relation's source at
 * @common, the last snapshot both hold (repl-NAME-SEQ): its last
 * replica, its sequence, not broken; a transfer cut before (its journal,
 * its source snapshot) is dropped.  Returns 0 or -errno with the
 * reason. */
int repl_relation_adopt(struct repl_relation *r, const char *common,
			int64_t now, char *errbuf, size_t errlen);

/* The sequence of snapshot @name of relation @rel ("repl-REL-SEQ"), or
 * 0 when it is not one. */
uint64_t repl_relation_seq_of(const char *rel, const char *name);

#endif
