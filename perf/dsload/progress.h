/* SPDX-License-Identifier: Apache-2.0 */
/*
 * progress: the live line dsload prints on stderr once a second, from
 * the loops' published totals: the last second's IOPS, MiB/s and mean
 * latency by direction, and the error and mismatch counts so far.  On a
 * terminal the line is rewritten in place; otherwise one line a second.
 */
#ifndef DSLOAD_PROGRESS_H
#define DSLOAD_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "perf/dsload/stats.h"

/* A snapshot of the totals (summed over loops). */
struct progress_sample {
	int64_t at_ns;
	uint64_t ops[DSTATS_DIRS];
	uint64_t bytes[DSTATS_DIRS];
	uint64_t lat_ns;
	uint64_t errors;
	uint64_t mismatches;
};

/*
 * Formats the line for the interval @prev -> @cur (borrowed) into @buf:
 * "[name   3s ramp] r 12.3k IOPS 96.1 MiB/s | w ... | lat 1.234 ms |
 * err 0 | mism 0".  @elapsed_s is the time since the phase started,
 * @ramping says whether it is still in its ramp.  Returns @buf.
 */
char *progress_format(char *buf, size_t len, const char *name, double elapsed_s,
		      bool ramping, const struct progress_sample *prev,
		      const struct progress_sample *cur);

#endif
