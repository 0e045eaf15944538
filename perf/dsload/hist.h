/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hist: a latency histogram in the manner of HdrHistogram, log-linear and
 * of fixed size.  Values (nanoseconds) below 2^LAT_HIST_SUB_BITS are
 * counted exactly; above, each power of two is cut into 2^LAT_HIST_SUB_BITS
 * equal buckets, so a bucket is never wider than 1/128 of its lower bound.
 * A percentile is reported as the middle of its bucket: its relative error
 * is at most 2^-(LAT_HIST_SUB_BITS + 1) = 0.39 % (LAT_HIST_REL_ERROR).
 * Values at or above 2^LAT_HIST_MAX_EXP ns (about 137 s) land in the last
 * bucket.  Memory: LAT_HIST_BUCKETS counters (32 KiB), whatever the count.
 */
#ifndef DSLOAD_HIST_H
#define DSLOAD_HIST_H

#include <stdint.h>

#define LAT_HIST_SUB_BITS 7
#define LAT_HIST_SUB (1u << LAT_HIST_SUB_BITS)
#define LAT_HIST_MAX_EXP 37
#define LAT_HIST_BUCKETS                                                       \
	((LAT_HIST_MAX_EXP - LAT_HIST_SUB_BITS + 1) * LAT_HIST_SUB)
#define LAT_HIST_REL_ERROR (1.0 / (2.0 * LAT_HIST_SUB))

struct lat_hist {
	uint64_t count;
	uint64_t sum_ns;
	uint64_t min_ns;
	uint64_t max_ns;
	uint64_t buckets[LAT_HIST_BUCKETS];
};

/* Empties @h. */
void lat_hist_init(struct lat_hist *h);

/* Counts one value of @ns nanoseconds. */
void lat_hist_add(struct lat_hist *h, uint64_t ns);

/* Adds every count of @src (borrowed) to @dst. */
void lat_hist_merge(struct lat_hist *dst, const struct lat_hist *src);

/* The mean, exact; 0 when empty. */
double lat_hist_mean_ns(const struct lat_hist *h);

/*
 * The value below which @pct percent (0 < pct <= 100) of the counts lie,
 * the middle of its bucket (within LAT_HIST_REL_ERROR of the true value),
 * clamped to [min, max].  0 when empty.
 */
uint64_t lat_hist_percentile_ns(const struct lat_hist *h, double pct);

/* Bucket index of @ns, and the [lo, hi] range a bucket covers (tests). */
uint32_t lat_hist_index(uint64_t ns);
void lat_hist_bucket_range(uint32_t idx, uint64_t *lo_ns, uint64_t *hi_ns);

#endif
