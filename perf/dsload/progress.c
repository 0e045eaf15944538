// SPDX-License-Identifier: Apache-2.0
/*
 * progress: formatting of the once-a-second line (see progress.h).
 */
#include "perf/dsload/progress.h"

#include <stdio.h>

#include "perf/dsload/clock.h"

/* "12.3k" style: three significant digits at most. */
static void progress_si(char *buf, size_t len, double v)
{
	if (v >= 1e6) {
		snprintf(buf, len, "%.2fM", v / 1e6);
	} else if (v >= 1e4) {
		snprintf(buf, len, "%.1fk", v / 1e3);
	} else {
		snprintf(buf, len, "%.0f", v);
	}
}

char *progress_format(char *buf, size_t len, const char *name, double elapsed_s,
		      bool ramping, const struct progress_sample *prev,
		      const struct progress_sample *cur)
{
	double dt = dsload_ns_to_s(cur->at_ns - prev->at_ns);
	uint64_t ops[DSTATS_DIRS], all;
	char iops[DSTATS_DIRS][16];
	double mib[DSTATS_DIRS], lat_ms;

	if (dt <= 0) {
		dt = 1e-9;
	}
	for (int d = 0; d < DSTATS_DIRS; d++) {
		ops[d] = cur->ops[d] - prev->ops[d];
		progress_si(iops[d], sizeof(iops[d]), (double)ops[d] / dt);
		mib[d] = (double)(cur->bytes[d] - prev->bytes[d]) /
			 (1024.0 * 1024.0) / dt;
	}
	all = ops[DSTATS_READ] + ops[DSTATS_WRITE];
	lat_ms = all ? (double)(cur->lat_ns - prev->lat_ns) / (double)all / 1e6
		     : 0.0;
	snprintf(buf, len,
		 "[%-14.14s %4.0fs %-4s] r %6s IOPS %8.1f MiB/s | w %6s IOPS "
		 "%8.1f MiB/s | lat %7.3f ms | err %llu | mism %llu",
		 name, elapsed_s, ramping ? "ramp" : "run", iops[DSTATS_READ],
		 mib[DSTATS_READ], iops[DSTATS_WRITE], mib[DSTATS_WRITE],
		 lat_ms, (unsigned long long)cur->errors,
		 (unsigned long long)cur->mismatches);
	return buf;
}
