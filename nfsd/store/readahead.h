/* SPDX-License-Identifier: Apache-2.0 */
/*
 * readahead: when to read a file ahead of its readers, for a backend
 * whose reads cross a network (cephfs).  A client reading a VMDK in
 * order keeps many READs in flight (ESXi, dsload: 16), and the work
 * threads take them in any order; libcephfs's own readahead wants each
 * read to start where the one before ended, so it almost never fires,
 * and every 64 KiB READ becomes one OSD read (docs/ceph.md, "Sequential
 * READ").  Here a run is a stream of reads each within @near_bytes of
 * the furthest end seen (the order inside that window does not matter);
 * once a run is @streak reads and @start_bytes long, a prefetch keeps
 * the file read up to @ahead_bytes past it, in pieces that end on a
 * @chunk_bytes boundary (the backend's object size: one OSD read each).
 * A piece starts no further ahead than the run has read: the window
 * grows with the run, as Linux's does, so that a client's few small
 * READs cannot make the gateway read much from the cluster (a run is
 * read ahead at most its own bytes and one chunk more).
 *
 * Whether it helped is measured, not assumed: a prefetch only fills the
 * backend's cache, which it keeps only while it may (CephFS's Fc
 * capability; another client writing the file takes it away).  Reads in
 * a prefetched range should then take less than @hit_ns; if none of
 * RA_PROBES in a row does, the run stops prefetching (its reads are
 * read twice otherwise) until a new run starts.
 *
 * Pure state, no locks, no I/O: the caller serializes the calls on one
 * file and does the reading (cephfs_prefetch.c).  A prefetch is queued
 * at most once per file (@busy) and runs for one run (@run): one that
 * ends after its run was replaced counts for nothing.
 */
#ifndef DSNFS_STORE_READAHEAD_H
#define DSNFS_STORE_READAHEAD_H

#include <stdbool.h>
#include <stdint.h>

#define STORE_RA_PROBES 16

struct store_ra_params {
	uint64_t near_bytes; /* how far out of order a run's read may be */
	uint32_t streak; /* reads of a run before it is read ahead */
	uint64_t start_bytes; /* and bytes */
	uint64_t ahead_bytes; /* how far past the run to keep read */
	uint64_t chunk_bytes; /* one prefetch read, aligned to its size */
	uint64_t hit_ns; /* a read the prefetch served takes less */
};

/* One file's state; zero is a file never read. */
struct store_ra {
	uint64_t run; /* counts runs: a new one on a read far from @hi */
	uint64_t hi; /* the furthest end a read of the run reached */
	uint64_t run_bytes; /* read by the run */
	uint32_t streak; /* reads in the run */
	uint64_t ahead_start; /* the run's prefetched range, done */
	uint64_t ahead_end;
	bool busy; /* a prefetch is queued or reading */
	bool at_eof; /* a prefetch met the end of the file */
	bool stopped; /* prefetched reads were no faster */
	uint16_t probes, slow; /* reads timed in the prefetched range */
};

/*
 * A read of @n bytes at @off took @took_ns.  True when the caller must
 * queue a prefetch of the file (@busy is now set: one queue at a time).
 */
bool store_ra_note(struct store_ra *ra, const struct store_ra_params *p,
		   uint64_t off, uint32_t n, uint64_t took_ns);

/*
 * The prefetch's next piece: true with *off and *len (and *run, for
 * store_ra_done); false when the run is read far enough ahead, stopped,
 * at the end of the file, or not (or no longer: a new run) long enough (@busy
 * is then cleared: the next note may queue again).
 */
bool store_ra_next(struct store_ra *ra, const struct store_ra_params *p,
		   uint64_t *off, uint64_t *len, uint64_t *run);

/*
 * The piece of run @run at @off, @len bytes asked, ended with @got bytes
 * read (fewer: the end of the file), or failed (@failed: the run stops
 * prefetching).  @busy stays set: ask store_ra_next again.
 */
void store_ra_done(struct store_ra *ra, uint64_t run, uint64_t off,
		   uint64_t len, uint64_t got, bool failed);

/* The queued prefetch will not run (the backend refused the call):
 * @busy is cleared, the next note may queue again. */
void store_ra_cancel(struct store_ra *ra);

#endif
