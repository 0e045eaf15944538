/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sweep: `dsload sweep`, the flow-scaling experiment.  For every fleet
 * shape in hosts x datastores (x VMs x VMDKs) it runs the four corners
 * (64 KiB sequential write and read, 8 KiB random write and read), then
 * prints one table, and writes under --out (default dsload-sweep/):
 * sweep.csv (every row of every phase), sweep.json, sweep.dat and
 * sweep.gp, and sweep.svg drawn by gnuplot: MiB/s and IOPS against the
 * number of flows (host x datastore connections carrying I/O).
 */
#ifndef DSLOAD_SWEEP_H
#define DSLOAD_SWEEP_H

#include <stddef.h>

#include "perf/dsload/opts.h"

struct sweep_corner {
	const char *name;
	uint32_t bs_bytes;
	unsigned read_pct;
	unsigned random_pct;
	bool mibps; /* the figure that matters: MiB/s, else IOPS */
};

/* A corner by name ("seqread", "seqwrite", "randread", "randwrite"), or
 * NULL. */
const struct sweep_corner *sweep_corner_find(const char *name);

/* Parses a comma list of corner names into @out (up to 4).  Returns the
 * count, or -EINVAL. */
int sweep_corners_parse(const char *list, const struct sweep_corner **out,
			size_t max);

/* `dsload sweep`.  Returns the exit status. */
int sweep_main(const struct dsload_opts *o);

#endif
