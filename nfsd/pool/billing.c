// SPDX-License-Identifier: Apache-2.0
/*
 * billing: turns the ledger's events into explained bill lines.  Each pool's
 * life is cut at its events into periods of constant state; each period,
 * clipped to [from, to), gives one capacity line and, for a Flexible pool
 * with purchased throughput, one throughput line.  All arithmetic is on
 * integers (billing.h, "Money is exact").
 */
#include "nfsd/pool/billing.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One pool name's life while the events are walked. */
struct billing_track {
	struct pool state;
	bool alive;
	int64_t since_s;
};

struct billing_run {
	const struct billing_prices *prices;
	int64_t from_s, to_s;
	struct billing_track *tracks;
	size_t ntracks;
	struct billing_line *lines;
	size_t nlines, cap;
};

static int billing_line_push(struct billing_run *run,
			     const struct billing_line *line)
{
	struct billing_line *grown;
	size_t want;

	if (run->nlines == run->cap) {
		want = run->cap ? run->cap * 2 : 16;
		grown = realloc(run->lines, want * sizeof(*grown));
		if (!grown) {
			return -ENOMEM;
		}
		run->lines = grown;
		run->cap = want;
	}
	run->lines[run->nlines++] = *line;
	return 0;
}

/* The lines of one pool's period [a, b), clipped to the bill's period. */
static int billing_period(struct billing_run *run, size_t order,
			  const struct pool *st, int64_t a, int64_t b)
{
	int64_t from = a > run->from_s ? a : run->from_s;
	int64_t to = b < run->to_s ? b : run->to_s;
	struct billing_line line;
	uint64_t secs;
	int err;

	if (to <= from) {
		return 0;
	}
	secs = (uint64_t)(to - from);
	memset(&line, 0, sizeof(line));
	memcpy(line.pool, st->name, sizeof(line.pool));
	line.pool_order = order;
	line.from_s = from;
	line.to_s = to;
	line.level = st->level;
	line.size_tib = st->size_tib;
	line.item = BILLING_ITEM_CAPACITY;
	line.quantity = (uint64_t)st->size_tib * POOL_GIB_PER_TIB;
	line.unit_price_pico = run->prices->capacity_pico[st->level];
	line.amount_quanta =
		(unsigned __int128)line.quantity * secs * line.unit_price_pico;
	err = billing_line_push(run, &line);
	if (err || st->level != POOL_LEVEL_FLEXIBLE || !st->purchased_mibps) {
		return err;
	}
	line.item = BILLING_ITEM_THROUGHPUT;
	line.quantity = st->purchased_mibps;
	line.unit_price_pico = run->prices->throughput_pico;
	line.amount_quanta =
		(unsigned __int128)line.quantity * secs * line.unit_price_pico;
	return billing_line_push(run, &line);
}

static struct billing_track *billing_track_get(struct billing_run *run,
					       const char *name, size_t *order)
{
	for (size_t i = 0; i < run->ntracks; i++) {
		if (!strcmp(run->tracks[i].state.name, name)) {
			*order = i;
			return &run->tracks[i];
		}
	}
	*order = run->ntracks;
	memset(&run->tracks[run->ntracks], 0, sizeof(run->tracks[0]));
	snprintf(run->tracks[run->ntracks].state.name, POOL_NAME_MAX, "%s",
		 name);
	return &run->tracks[run->ntracks++];
}

static int billing_walk(struct billing_run *run,
			const struct pool_event *events, size_t n, char *errbuf,
			size_t errlen)
{
	char why[160];
	int err;

	for (size_t i = 0; i < n; i++) {
		const struct pool_event *ev = &events[i];
		struct billing_track *tr;
		size_t order;

		if (i && ev->time_s < events[i - 1].time_s) {
			snprintf(errbuf, errlen,
				 "event %zu: time goes backwards", i);
			return -EINVAL;
		}
		if ((unsigned)ev->level >= POOL_LEVEL_COUNT) {
			snprintf(errbuf, errlen, "event %zu: unknown level", i);
			return -EINVAL;
		}
		tr = billing_track_get(run, ev->pool, &order);
		if (tr->alive) {
			err = billing_period(run, order, &tr->state,
					     tr->since_s, ev->time_s);
			if (err) {
				goto nomem;
			}
		}
		err = pool_event_apply(ev, &tr->alive, &tr->state, why,
				       sizeof(why));
		if (err) {
			snprintf(errbuf, errlen, "event %zu: %s", i, why);
			return err;
		}
		tr->since_s = ev->time_s;
	}
	for (size_t i = 0; i < run->ntracks; i++) {
		struct billing_track *tr = &run->tracks[i];

		if (!tr->alive) {
			continue;
		}
		err = billing_period(run, i, &tr->state, tr->since_s,
				     run->to_s);
		if (err) {
			goto nomem;
		}
	}
	return 0;
nomem:
	snprintf(errbuf, errlen, "out of memory");
	return err;
}

static int billing_line_cmp(const void *a, const void *b)
{
	const struct billing_line *x = a, *y = b;

	if (x->pool_order != y->pool_order) {
		return x->pool_order < y->pool_order ? -1 : 1;
	}
	if (x->from_s != y->from_s) {
		return x->from_s < y->from_s ? -1 : 1;
	}
	return (int)x->item - (int)y->item;
}

int billing_compute(const struct pool_event *events, size_t n,
		    const struct billing_prices *prices, int64_t from_s,
		    int64_t to_s, struct billing_bill *out, char *errbuf,
		    size_t errlen)
{
	struct billing_run run = { .prices = prices,
				   .from_s = from_s,
				   .to_s = to_s };
	int err;

	memset(out, 0, sizeof(*out));
	if (from_s >= to_s) {
		snprintf(errbuf, errlen, "the period is empty: from >= to");
		return -EINVAL;
	}
	run.tracks = calloc(n ? n : 1, sizeof(*run.tracks));
	if (!run.tracks) {
		snprintf(errbuf, errlen, "out of memory");
		return -ENOMEM;
	}
	err = billing_walk(&run, events, n, errbuf, errlen);
	free(run.tracks);
	if (err) {
		free(run.lines);
		return err;
	}
	if (run.nlines) {
		qsort(run.lines, run.nlines, sizeof(*run.lines),
		      billing_line_cmp);
	}
	out->from_s = from_s;
	out->to_s = to_s;
	memcpy(out->currency, prices->currency, sizeof(out->currency));
	out->lines = run.lines;
	out->nlines = run.nlines;
	for (size_t i = 0; i < run.nlines; i++) {
		out->total_quanta += run.lines[i].amount_quanta;
	}
	return 0;
}

void billing_bill_fini(struct billing_bill *bill)
{
	free(bill->lines);
	bill->lines = NULL;
	bill->nlines = 0;
}

unsigned __int128 billing_bill_pool_total(const struct billing_bill *bill,
					  const char *pool)
{
	unsigned __int128 sum = 0;

	for (size_t i = 0; i < bill->nlines; i++) {
		if (!strcmp(bill->lines[i].pool, pool)) {
			sum += bill->lines[i].amount_quanta;
		}
	}
	return sum;
}

void billing_amount_format(unsigned __int128 quanta, char *buf, size_t len)
{
	/* Millionths of the currency, rounded half up. */
	const uint64_t q_per_micro = BILLING_QUANTA_PER_UNIT / 1000000;
	unsigned __int128 micro = (quanta + q_per_micro / 2) / q_per_micro;
	unsigned __int128 units = micro / 1000000;

	if (units > UINT64_MAX) {
		snprintf(buf, len, "overflow");
		return;
	}
	snprintf(buf, len, "%" PRIu64 ".%06" PRIu64, (uint64_t)units,
		 (uint64_t)(micro % 1000000));
}

int billing_line_format(const struct billing_line *line, const char *currency,
			char *buf, size_t len)
{
	uint64_t secs = (uint64_t)(line->to_s - line->from_s);
	/* Hours to 6 decimals, rounded half up, for reading only. */
	uint64_t micro_h = (secs * 1000000 + BILLING_SECONDS_PER_HOUR / 2) /
			   BILLING_SECONDS_PER_HOUR;
	char from[32], to[32], price[40], amount[48];
	bool cap = line->item == BILLING_ITEM_CAPACITY;

	billing_time_format(line->from_s, from, sizeof(from));
	billing_time_format(line->to_s, to, sizeof(to));
	billing_price_format(line->unit_price_pico, price, sizeof(price));
	billing_amount_format(line->amount_quanta, amount, sizeof(amount));
	return snprintf(buf, len,
			"%s %s .. %s %s %" PRIu32 " TiB: %" PRIu64 ".%06" PRIu64
			" h x %" PRIu64 " %s x %s %s per %s = "
			"%s %s",
			line->pool, from, to, pool_level_name(line->level),
			line->size_tib, micro_h / 1000000, micro_h % 1000000,
			line->quantity, cap ? "GiB" : "MiB/s above baseline",
			price, currency, cap ? "GiB-hour" : "MiB/s-hour",
			amount, currency);
}
