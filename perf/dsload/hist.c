// SPDX-License-Identifier: Apache-2.0
/*
 * hist: log-linear latency histogram (see hist.h for the error bound).
 * Bucket index: values below 2^SUB_BITS map to themselves; a value whose
 * highest set bit is e >= SUB_BITS keeps its top SUB_BITS + 1 bits, so it
 * falls in row e - SUB_BITS + 1, column (v >> (e - SUB_BITS)) - 2^SUB_BITS.
 */
#include "perf/dsload/hist.h"

#include <string.h>

void lat_hist_init(struct lat_hist *h)
{
	memset(h, 0, sizeof(*h));
}

uint32_t lat_hist_index(uint64_t ns)
{
	uint32_t e, shift;

	if (ns < LAT_HIST_SUB) {
		return (uint32_t)ns;
	}
	e = 63u - (uint32_t)__builtin_clzll(ns);
	if (e >= LAT_HIST_MAX_EXP) {
		return LAT_HIST_BUCKETS - 1;
	}
	shift = e - LAT_HIST_SUB_BITS;
	return (shift + 1) * LAT_HIST_SUB +
	       (uint32_t)((ns >> shift) - LAT_HIST_SUB);
}

void lat_hist_bucket_range(uint32_t idx, uint64_t *lo_ns, uint64_t *hi_ns)
{
	uint32_t row = idx / LAT_HIST_SUB, col = idx % LAT_HIST_SUB, shift;

	if (row == 0) {
		*lo_ns = idx;
		*hi_ns = idx;
		return;
	}
	shift = row - 1;
	*lo_ns = (uint64_t)(LAT_HIST_SUB + col) << shift;
	*hi_ns = *lo_ns + ((uint64_t)1 << shift) - 1;
}

void lat_hist_add(struct lat_hist *h, uint64_t ns)
{
	if (h->count == 0 || ns < h->min_ns) {
		h->min_ns = ns;
	}
	if (ns > h->max_ns) {
		h->max_ns = ns;
	}
	h->count++;
	h->sum_ns += ns;
	h->buckets[lat_hist_index(ns)]++;
}

void lat_hist_merge(struct lat_hist *dst, const struct lat_hist *src)
{
	if (src->count == 0) {
		return;
	}
	if (dst->count == 0 || src->min_ns < dst->min_ns) {
		dst->min_ns = src->min_ns;
	}
	if (src->max_ns > dst->max_ns) {
		dst->max_ns = src->max_ns;
	}
	dst->count += src->count;
	dst->sum_ns += src->sum_ns;
	for (uint32_t i = 0; i < LAT_HIST_BUCKETS; i++) {
		dst->buckets[i] += src->buckets[i];
	}
}

double lat_hist_mean_ns(const struct lat_hist *h)
{
	return h->count ? (double)h->sum_ns / (double)h->count : 0.0;
}

uint64_t lat_hist_percentile_ns(const struct lat_hist *h, double pct)
{
	uint64_t rank, seen = 0, lo, hi, mid;

	if (h->count == 0) {
		return 0;
	}
	if (pct >= 100.0) {
		return h->max_ns;
	}
	/* The smallest value with at least pct % of the counts at or below
	 * it: rank ceil(pct / 100 * count), counted from 1. */
	rank = (uint64_t)((pct / 100.0) * (double)h->count);
	if ((double)rank < (pct / 100.0) * (double)h->count) {
		rank++;
	}
	if (rank == 0) {
		rank = 1;
	}
	for (uint32_t i = 0; i < LAT_HIST_BUCKETS; i++) {
		seen += h->buckets[i];
		if (seen < rank) {
			continue;
		}
		lat_hist_bucket_range(i, &lo, &hi);
		mid = lo + (hi - lo) / 2;
		if (mid < h->min_ns) {
			mid = h->min_ns;
		}
		if (mid > h->max_ns) {
			mid = h->max_ns;
		}
		return mid;
	}
	return h->max_ns;
}
