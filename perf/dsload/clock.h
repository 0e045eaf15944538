/* SPDX-License-Identifier: Apache-2.0 */
/*
 * clock: the monotonic clock in nanoseconds, the one time base of dsload
 * (latencies, phase windows, timeouts).
 */
#ifndef DSLOAD_CLOCK_H
#define DSLOAD_CLOCK_H

#include <stdint.h>
#include <time.h>

#define DSLOAD_NS_PER_S INT64_C(1000000000)
#define DSLOAD_NS_PER_MS INT64_C(1000000)

static inline int64_t dsload_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * DSLOAD_NS_PER_S + ts.tv_nsec;
}

static inline double dsload_ns_to_s(int64_t ns)
{
	return (double)ns / (double)DSLOAD_NS_PER_S;
}

#endif
