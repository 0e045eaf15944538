/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bucket: a token bucket on an injected monotonic clock (nanoseconds), the
 * building block of every traffic limit.  Tokens are bytes or operations.
 *
 * The level is kept in nano-tokens (tokens x 1e9) so refills never round:
 * refills add exactly rate x time, up to the cap (the burst; see the
 * catch-up below).  A
 * take may overdraw the bucket (the level goes negative, a debt): a request
 * may start whenever the level is above zero and pays its full size, so a
 * request larger than the burst still passes, and large and small requests
 * sharing a bucket wait for the same moment (no starvation of the large
 * ones).  The long-run rate is exact; the overshoot is at most one request
 * (and the catch-up).
 *
 * A waiter that comes back late (its loop was descheduled: a busy machine)
 * must not lose what the bucket earned meanwhile, or a capped flow falls
 * below its cap under load.  So from a refusal until the takes bring the
 * level back to the burst, the bucket holds up to TOKEN_BUCKET_CATCHUP_MS
 * of its rate above its burst: a waiter back late takes the tokens its
 * lateness earned (and the waiters behind it on the same wake-up), so the
 * long-run rate stays the rate.  A waiter back on time finds the level
 * just above zero, as without it.  The price: over any span the tokens
 * granted are at most rate x time + burst + the catch-up.
 *
 * Not thread-safe: the owner serialises calls (traffic.c holds a mutex per
 * shared bucket; a flow's own buckets belong to its loop thread).
 */
#ifndef DSNFS_TRAFFIC_BUCKET_H
#define DSNFS_TRAFFIC_BUCKET_H

#include <stdbool.h>
#include <stdint.h>

#define TOKEN_BUCKET_NS_PER_S INT64_C(1000000000)
/* How much lateness of a waiter's wake-up the bucket makes good. */
#define TOKEN_BUCKET_CATCHUP_MS 50

struct token_bucket {
	uint64_t rate_per_s; /* tokens per second; 0: unlimited */
	uint64_t burst; /* the most tokens it holds */
	__int128 level_nano; /* tokens x 1e9; below zero: debt */
	int64_t last_ns; /* when level_nano was last brought up to date */
	/* Someone was refused, and the takes since left more than the burst
	 * (or none came): the cap is burst + TOKEN_BUCKET_CATCHUP_MS of the
	 * rate. */
	bool waiting;
};

/* Starts a full bucket.  @rate_per_s 0 makes it unlimited.  Returns 0, or
 * -EINVAL when a limited bucket has no burst. */
int token_bucket_init(struct token_bucket *b, uint64_t rate_per_s,
		      uint64_t burst, int64_t now_ns);

/*
 * Changes the rate and burst at @now_ns: tokens earned so far at the old
 * rate are kept (at most the new burst), a debt is kept, and the new rate
 * applies from now on.  A bucket that was unlimited starts full.  Returns 0
 * or -EINVAL (as token_bucket_init()).
 */
int token_bucket_set_rate(struct token_bucket *b, uint64_t rate_per_s,
			  uint64_t burst, int64_t now_ns);

/* Nanoseconds until a take of @n tokens may happen (0: now).  A take of 0
 * tokens, or an unlimited bucket, never waits.  Clock readings older than
 * the last one count as the last one. */
uint64_t token_bucket_time_until(struct token_bucket *b, uint64_t n,
				 int64_t now_ns);

/* Nanoseconds the bucket needs to earn @n tokens at its rate, whatever its
 * level (0 when unlimited). */
uint64_t token_bucket_time_to_earn(const struct token_bucket *b, uint64_t n);

/* True when the bucket holds its whole burst (always, when unlimited):
 * tokens earned from now on are lost unless someone takes some. */
bool token_bucket_full(struct token_bucket *b, int64_t now_ns);

/* Takes @n tokens if token_bucket_time_until() is 0; returns whether. */
bool token_bucket_try_take(struct token_bucket *b, uint64_t n, int64_t now_ns);

/* Takes @n tokens unconditionally (may deepen a debt): for a hierarchy
 * whose every level said 0 to token_bucket_time_until(). */
void token_bucket_take(struct token_bucket *b, uint64_t n, int64_t now_ns);

/* The tokens in the bucket now (negative: debt), rounded toward zero. */
int64_t token_bucket_tokens(struct token_bucket *b, int64_t now_ns);

#endif
