/* SPDX-License-Identifier: Apache-2.0 */
/*
 * billing: what a period costs, as a pure function of the capacity ledger's
 * events, a price list and the period [from, to).  A pool costs its
 * provisioned GiB x hours x its level's price per GiB-hour, prorated to the
 * second; a Flexible pool also costs its purchased MiB/s (above the 128
 * MiB/s baseline) x hours x the price per MiB/s-hour.  Volumes never enter
 * a bill: 4 x 20 TiB and 20 x 4 TiB volumes in an 80 TiB pool cost the same.
 *
 * Money is exact: prices are integers of 1e-12 currency ("pico"), and an
 * amount is an integer of 1/(3600 x 10^12) currency ("quanta"), the unit in
 * which GiB x seconds x price per GiB-hour needs no rounding.  Rounding
 * happens only when an amount is printed.
 */
#ifndef DSNFS_POOL_BILLING_H
#define DSNFS_POOL_BILLING_H

#include <stddef.h>
#include <stdint.h>

#include "nfsd/pool/ledger.h"
#include "nfsd/pool/pool.h"

#define BILLING_PICO_PER_UNIT UINT64_C(1000000000000)
#define BILLING_SECONDS_PER_HOUR 3600
#define BILLING_QUANTA_PER_UNIT                                                \
	(BILLING_SECONDS_PER_HOUR * BILLING_PICO_PER_UNIT)
/* A price is below this many currency units per GiB-hour or MiB/s-hour. */
#define BILLING_PRICE_MAX_UNITS 1000000
#define BILLING_CURRENCY_MAX 8

struct billing_prices {
	char currency[BILLING_CURRENCY_MAX]; /* "USD" */
	uint64_t capacity_pico[POOL_LEVEL_COUNT]; /* per provisioned GiB-hour */
	uint64_t throughput_pico; /* Flexible: per purchased MiB/s-hour */
};

enum billing_item {
	BILLING_ITEM_CAPACITY = 0, /* provisioned GiB */
	BILLING_ITEM_THROUGHPUT, /* Flexible purchased MiB/s */
};

/* One explained line: one pool, one period in which nothing changed, one
 * item.  amount_quanta = quantity x seconds x unit_price_pico. */
struct billing_line {
	char pool[POOL_NAME_MAX];
	size_t pool_order; /* the pool's rank in the bill (first seen) */
	int64_t from_s, to_s;
	enum pool_level level;
	uint32_t size_tib;
	enum billing_item item;
	uint64_t quantity; /* GiB, or MiB/s */
	uint64_t unit_price_pico;
	unsigned __int128 amount_quanta;
};

struct billing_bill {
	int64_t from_s, to_s;
	char currency[BILLING_CURRENCY_MAX];
	struct billing_line *lines; /* owned; by pool, then time */
	size_t nlines;
	unsigned __int128 total_quanta;
};

/* ---- prices (prices.c) ------------------------------------------------- */

/*
 * The built-in price list: Standard 0.000202, Premium 0.000403, Ultra
 * 0.000538 USD per GiB-hour (ANF list prices); Flexible 0.000202 per
 * GiB-hour and 0.003072 per MiB/s-hour (lab assumptions, see
 * etc/prices.conf).
 */
void billing_prices_default(struct billing_prices *out);

/*
 * Reads a price list (INI, one [prices] section: currency, standard,
 * premium, ultra, flexible, flexible_throughput) on top of the defaults.
 * Returns 0, or -errno / -EINVAL with "FILE:LINE: what" in errbuf.
 */
int billing_prices_load(const char *path, struct billing_prices *out,
			char *errbuf, size_t errlen);

/* Same from a string (tests); @name stands for the file in messages. */
int billing_prices_parse(const char *name, const char *text,
			 struct billing_prices *out, char *errbuf,
			 size_t errlen);

/* "0.000403" -> 403000000 pico.  At most 12 decimals, no sign, below
 * BILLING_PRICE_MAX_UNITS.  Returns 0 or -EINVAL. */
int billing_price_parse(const char *text, uint64_t *pico);

/* Prints a pico price with at least 6 decimals: "0.000403". */
void billing_price_format(uint64_t pico, char *buf, size_t len);

/* ---- bills (billing.c) ------------------------------------------------- */

/*
 * Bills [@from_s, @to_s) from @events (borrowed, in ledger order) and
 * @prices.  A pool alive after the last event is billed up to @to_s.
 * Returns 0 and fills @out (owned: billing_bill_fini()), or -EINVAL (an
 * event breaks a pool's life cycle, times go backwards, from >= to) /
 * -ENOMEM, with the reason in errbuf.
 */
int billing_compute(const struct pool_event *events, size_t n,
		    const struct billing_prices *prices, int64_t from_s,
		    int64_t to_s, struct billing_bill *out, char *errbuf,
		    size_t errlen);

/* Frees what billing_compute() put in @bill. */
void billing_bill_fini(struct billing_bill *bill);

/* The sum of @pool's lines (0 when it has none). */
unsigned __int128 billing_bill_pool_total(const struct billing_bill *bill,
					  const char *pool);

/* Prints an amount rounded half up to 6 decimals: "23773.409280". */
void billing_amount_format(unsigned __int128 quanta, char *buf, size_t len);

/*
 * One line, explained: "p1 2024-01-01T00:00:00Z .. 2024-01-31T00:00:00Z
 * Premium 80 TiB: 720.000000 h x 81920 GiB x 0.000403 USD per GiB-hour =
 * 23773.409280 USD".  Returns the length snprintf would write.
 */
int billing_line_format(const struct billing_line *line, const char *currency,
			char *buf, size_t len);

/* ---- time (isotime.c) -------------------------------------------------- */

/* Parses UTC "2024-01-31", "2024-01-31T12:00[:00][Z]" (a space for the T
 * too) or "@1706702400" into seconds since the epoch.  Returns 0 or
 * -EINVAL. */
int billing_time_parse(const char *text, int64_t *out_s);

/* "2024-01-31T12:00:00Z" (needs 21 bytes). */
void billing_time_format(int64_t t_s, char *buf, size_t len);

#endif
