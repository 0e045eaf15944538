/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stats: what a job (one VMDK's I/O generator) counts during the measured
 * window of a phase, and the sums of jobs by VM, host, datastore and in
 * total.  A job's counters are touched by its loop thread only; sums are
 * made after the loops stop.
 */
#ifndef DSLOAD_STATS_H
#define DSLOAD_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "perf/dsload/hist.h"

enum dstats_dir {
	DSTATS_READ = 0,
	DSTATS_WRITE,
	DSTATS_DIRS,
};

struct dstats {
	uint64_t ops[DSTATS_DIRS]; /* completed in the window */
	uint64_t bytes[DSTATS_DIRS];
	struct lat_hist lat[DSTATS_DIRS];
	/* The counters below cover the whole phase, ramp included. */
	uint64_t errors; /* I/Os that failed (NFS or RPC error) */
	uint64_t nospc; /* of which NFS3ERR_NOSPC */
	uint64_t mismatches; /* verification units that failed */
	uint64_t verified; /* verification units checked */
	uint64_t commits; /* COMMIT calls answered */
	uint64_t verf_changes; /* write verifier changes seen (restarts) */
	uint64_t resent; /* unstable writes resent after a change */
};

/* Where a job sits in the fleet: the keys it is summed by. */
struct dstats_key {
	unsigned host;
	unsigned vm; /* numbered across the fleet */
	unsigned datastore;
};

enum dstats_level {
	DSTATS_LEVEL_JOB = 0,
	DSTATS_LEVEL_VM,
	DSTATS_LEVEL_HOST,
	DSTATS_LEVEL_DATASTORE,
	DSTATS_LEVEL_TOTAL,
	DSTATS_LEVELS,
};

/* One sum: the jobs of one VM, host or datastore (id), or all (id 0). */
struct dstats_group {
	enum dstats_level level;
	unsigned id;
	size_t njobs;
	struct dstats s;
};

void dstats_init(struct dstats *s);

/* Adds every counter of @src (borrowed) to @dst. */
void dstats_merge(struct dstats *dst, const struct dstats *src);

/* Both directions' latencies in one histogram (@out is overwritten). */
void dstats_lat_all(const struct dstats *s, struct lat_hist *out);

/* Operations per second and MiB per second over @seconds (> 0), of one
 * direction, or of both when @dir is DSTATS_DIRS. */
double dstats_iops(const struct dstats *s, enum dstats_dir dir, double seconds);
double dstats_mibps(const struct dstats *s, enum dstats_dir dir,
		    double seconds);

/*
 * Sums @jobs (borrowed, @njobs of them, job i placed at keys[i]) at
 * @level: one group per distinct id, in increasing id order (job level:
 * id = job index).  Returns 0 with *out (owned: free()) and *nout, or
 * -ENOMEM.  With no jobs, TOTAL still gives one empty group.
 */
int dstats_aggregate(const struct dstats *jobs, const struct dstats_key *keys,
		     size_t njobs, enum dstats_level level,
		     struct dstats_group **out, size_t *nout);

const char *dstats_level_name(enum dstats_level level);

#endif
