/* SPDX-License-Identifier: Apache-2.0 */
/*
 * repl lanes: a transfer's WRITEs sent while the next chunk is read
 * (docs/replication.md, "Speed").  One WRITE at a time, each waiting for
 * its answer, leaves the source idle while the destination writes and
 * the destination idle while the source reads; here each lane is a
 * thread with a chunk buffer (REPL_WRITE_MAX) and its own connection to
 * the destination (repl_dst's dup: lane 0 uses the transfer's own, the
 * others a copy; a destination without dup has one lane), so the source
 * reads chunk k+2 while chunk k+1 travels and the destination writes
 * chunk k.  The WRITEs of a file may land in any order (they never
 * overlap); every other operation waits for the lanes to be idle
 * (repl_lanes_drain()), so a file's ATTRS, and its journal record, come
 * after all its WRITEs were answered.  The first failure is kept and
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

/* Up to @n (1 .. REPL_LANES_MAX) lanes to @to (borrowed).  Returns 0 or
 * -errno with the reason. */
int repl_lanes_new(struct repl_dst *to, unsigned n, struct repl_lanes **out,
		   char *errbuf, size_t errlen);

/* Waits for an idle lane: *lane and its buffer *buf (REPL_WRITE_MAX
 * bytes) for the next chunk.  Returns 0, or the first failure's -errno
 * (its reason in @errbuf). */
int repl_lanes_take(struct repl_lanes *p, struct repl_lane **lane,
		    unsigned char **buf, char *errbuf, size_t errlen);

/* Queues on @lane a WRITE of @len bytes of its buffer from @boff, at
 * @off of @path (at most REPL_WRITE_BLOCKS runs a lane). */
void repl_lane_add(struct repl_lane *lane, const char *path, uint64_t off,
		   size_t boff, size_t len);

/* Hands @lane its WRITEs (none: it is idle again). */
void repl_lane_go(struct repl_lane *lane);

/* Waits until every lane is idle; adds the bytes answered since the
 * last drain to *@sent.  Returns 0 or the first failure's -errno. */
int repl_lanes_drain(struct repl_lanes *p, uint64_t *sent, char *errbuf,
		     size_t errlen);

/* Drains, stops the threads, closes the copies of the destination. */
void repl_lanes_free(struct repl_lanes *p);

#endif
