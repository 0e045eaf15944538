/* SPDX-License-Identifier: Apache-2.0 */
/*
 * repl plan: which blocks of a file an incremental replication transfer
 * sends (docs/replication.md).  Both snapshots of a local datastore are
 * reflink copies: a block the live file did not write between them is
 * still the same physical block in both (FIEMAP says so), so it did not
 * change.  Everything else is a candidate; the transfer then compares the
 * xxh64 of each candidate block against the base snapshot's and sends
 * only those that differ (which also covers a file system that shares
 * nothing or has no FIEMAP: every block is a candidate there).
 *
 * The planner itself is pure (extent lists in, ranges out) and unit
 * tested; repl_plan_fiemap() reads a file's extents.
 */
#ifndef DSNFS_REPL_PLAN_H
#define DSNFS_REPL_PLAN_H

#include <stddef.h>
#include <stdint.h>

/* One mapped extent of a file, as FIEMAP gives it. */
struct repl_extent {
	uint64_t logical;
	uint64_t physical;
	uint64_t length;
	uint32_t flags; /* REPL_EXTENT_* */
};

/* Where the physical address does not name a stable block (delayed
 * allocation, inline, encoded, unknown): never counted as shared. */
#define REPL_EXTENT_UNSURE 1u

struct repl_range {
	uint64_t off;
	uint64_t len;
};

/*
 * The ranges of [0, @size) of the new snapshot's file (@cur, @ncur
 * extents sorted by logical) that may differ from the base snapshot's
 * file (@base, @nbase; @base_size bytes; @base NULL with @base_size 0 for
 * a file that is new), in units of @block (a power of two): a block is
 * left out when both are holes there, or when both map it to the same
 * physical block within the base's size.  Adjacent blocks are merged;
 * the last range ends at @size.  Returns 0 and *out (owned: free(); NULL
 * when nothing changed) with *nout, -EINVAL (a bad @block) or -ENOMEM.
 */
int repl_plan_changed(const struct repl_extent *cur, size_t ncur,
		      const struct repl_extent *base, size_t nbase,
		      uint64_t size, uint64_t base_size, uint64_t block,
		      struct repl_range **out, size_t *nout);

/* The extents of open file @fd (FIEMAP, synced first).  Returns 0 and
 * *out (owned: free()) with *n, -EOPNOTSUPP (no FIEMAP here) or -errno. */
int repl_plan_fiemap(int fd, struct repl_extent **out, size_t *n);

#endif
