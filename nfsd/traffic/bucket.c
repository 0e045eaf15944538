// SPDX-License-Identifier: Apache-2.0
/*
 * bucket: token bucket arithmetic (bucket.h).  All in 128-bit integers:
 * rate x elapsed nanoseconds cannot overflow for any 64-bit rate over any
 * 64-bit span.
 */
#include "nfsd/traffic/bucket.h"

#include <errno.h>

static __int128 bucket_burst_nano(const struct token_bucket *b)
{
	return (__int128)b->burst * TOKEN_BUCKET_NS_PER_S;
}

/* The most the level may reach now: the burst, and while a waiter is owed
 * its late wake-up, the catch-up on top (bucket.h). */
static __int128 bucket_cap_nano(const struct token_bucket *b)
{
	__int128 cap = bucket_burst_nano(b);

	if (b->waiting) {
		cap += (__int128)b->rate_per_s * TOKEN_BUCKET_CATCHUP_MS *
		       (TOKEN_BUCKET_NS_PER_S / 1000);
	}
	return cap;
}

/* Brings the level up to @now_ns at the current rate. */
static void bucket_refill(struct token_bucket *b, int64_t now_ns)
{
	uint64_t dt_ns;
	__int128 gap;

	if (now_ns <= b->last_ns) {
		return;
	}
	dt_ns = (uint64_t)now_ns - (uint64_t)b->last_ns;
	b->last_ns = now_ns;
	if (!b->rate_per_s) {
		return;
	}
	gap = bucket_cap_nano(b) - b->level_nano;
	/* Compare before multiplying: a long idle span times a high rate
	 * would not fit even 128 bits. */
	if (gap <= 0 || (__int128)dt_ns > gap / b->rate_per_s) {
		b->level_nano = bucket_cap_nano(b);
	} else {
		b->level_nano += (__int128)b->rate_per_s * dt_ns;
	}
}

int token_bucket_init(struct token_bucket *b, uint64_t rate_per_s,
		      uint64_t burst, int64_t now_ns)
{
	if (rate_per_s && !burst) {
		return -EINVAL;
	}
	b->rate_per_s = rate_per_s;
	b->burst = burst;
	b->waiting = false;
	b->level_nano = bucket_burst_nano(b);
	b->last_ns = now_ns;
	return 0;
}

int token_bucket_set_rate(struct token_bucket *b, uint64_t rate_per_s,
			  uint64_t burst, int64_t now_ns)
{
	bool was_unlimited = b->rate_per_s == 0;

	if (rate_per_s && !burst) {
		return -EINVAL;
	}
	bucket_refill(b, now_ns);
	b->rate_per_s = rate_per_s;
	b->burst = burst;
	/* Tokens of the old rate are kept up to the new burst only. */
	b->waiting = false;
	if (was_unlimited || b->level_nano > bucket_burst_nano(b)) {
		b->level_nano = bucket_burst_nano(b);
	}
	return 0;
}

uint64_t token_bucket_time_until(struct token_bucket *b, uint64_t n,
				 int64_t now_ns)
{
	if (!b->rate_per_s || !n) {
		return 0;
	}
	bucket_refill(b, now_ns);
	if (b->level_nano > 0) {
		return 0;
	}
	b->waiting = true;
	/* The first nanosecond at which the level is above zero. */
	return (uint64_t)(-b->level_nano / b->rate_per_s) + 1;
}

uint64_t token_bucket_time_to_earn(const struct token_bucket *b, uint64_t n)
{
	__int128 need = (__int128)n * TOKEN_BUCKET_NS_PER_S;

	if (!b->rate_per_s || !n) {
		return 0;
	}
	need = (need + b->rate_per_s - 1) / b->rate_per_s;
	return need > INT64_MAX ? INT64_MAX : (uint64_t)need;
}

bool token_bucket_full(struct token_bucket *b, int64_t now_ns)
{
	if (!b->rate_per_s) {
		return true;
	}
	bucket_refill(b, now_ns);
	return b->level_nano >= bucket_burst_nano(b);
}

void token_bucket_take(struct token_bucket *b, uint64_t n, int64_t now_ns)
{
	if (!b->rate_per_s || !n) {
		return;
	}
	bucket_refill(b, now_ns);
	b->level_nano -= (__int128)n * TOKEN_BUCKET_NS_PER_S;
	/* Owed no more once the catch-up is spent (the waiters of one late
	 * wake-up share it). */
	if (b->level_nano <= bucket_burst_nano(b)) {
		b->waiting = false;
	}
}

bool token_bucket_try_take(struct token_bucket *b, uint64_t n, int64_t now_ns)
{
	if (token_bucket_time_until(b, n, now_ns)) {
		return false;
	}
	token_bucket_take(b, n, now_ns);
	return true;
}

int64_t token_bucket_tokens(struct token_bucket *b, int64_t now_ns)
{
	bucket_refill(b, now_ns);
	return (int64_t)(b->level_nano / TOKEN_BUCKET_NS_PER_S);
}
