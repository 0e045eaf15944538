/* SPDX-License-Identifier: Apache-2.0 */
/*
 * repl lanes: a transfer's WRITEs sent while the next chunk is read
 * (docs/replication.md, "Speed").  One WRITE at a time, each waiting for
 * its answer, leaves the source idle while the destination writes and
 * the destination idle while the source reads; here each lane is a
 * thread with a chunk buffer (REPL_WRITE_MAX) and its own connection to
 * the destination (repl_dst's dup: lane 0 uses the transfer's own, the
 * others a copy; a destination without dup has one lane) that reads its
 * chunk of the snapshot, leaves out the blocks the base has the same,
 * and sends the runs left: the source reads several chunks at once while
 * others travel and the destination writes one.  The WRITEs of a file may land
 * in any order (they never overlap); every other operation waits for the lanes
 * to be idle (repl_lanes_drain()), so a file's ATTRS, and its journal record,
 * come after all its WRITEs were answered.  The first failure is kept and
 * returned by the next take or drain; the WRITEs queued after it are
 * dropped.
 */
#ifndef DSNFS_REPL_LANES_H
#define DSNFS_REPL_LANES_H

#include <stddef.h>
#include <stdint.h>

#include "nfsd/repl/dst.h"

#define REPL_LANES_MAX 4u

struct repl_lanes;
struct repl_lane;
struct repl_src_file;

/* Up to @n (1 .. REPL_LANES_MAX) lanes to @to (borrowed).  Returns 0 or
 * -errno with the reason. */
int repl_lanes_new(struct repl_dst *to, unsigned n, struct repl_lanes **out,
		   char *errbuf, size_t errlen);

/* Waits for an idle lane (*lane).  Returns 0, or the first failure's
 * -errno (its reason in @errbuf). */
int repl_lanes_take(struct repl_lanes *p, struct repl_lane **lane, char *errbuf,
		    size_t errlen);

/*
 * Hands @lane the chunk [@off, @off + @len) (at most REPL_WRITE_MAX) of
 * snapshot file @sf (src.h), for the destination's @path: the lane reads
 * it, leaves out the blocks the base @bf (NULL: none; @bsize bytes) has
 * the same bytes at, and sends each run of contiguous blocks left as one
 * WRITE.  @sf and @bf (borrowed) stay open until the lanes are drained.
 */
void repl_lane_chunk(struct repl_lane *lane, const char *path,
		     struct repl_src_file *sf, struct repl_src_file *bf,
		     uint64_t bsize, uint64_t off, size_t len);

/* Waits until every lane is idle; adds the bytes answered since the
 * last drain to *@sent.  Returns 0 or the first failure's -errno. */
int repl_lanes_drain(struct repl_lanes *p, uint64_t *sent, char *errbuf,
		     size_t errlen);

/* Drains, stops the threads, closes the copies of the destination. */
void repl_lanes_free(struct repl_lanes *p);

#endif
