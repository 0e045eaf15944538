// SPDX-License-Identifier: Apache-2.0
/*
 * bill: `dsnfsctl bill`, the explained bill of a period from a ledger file
 * and a price list, offline (billing.h).  One line per pool and period of
 * constant state, a subtotal per pool, the total.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/ctl/ctl.h"
#include "nfsd/pool/billing.h"

struct bill_args {
	const char *ledger;
	const char *prices;
	const char *from;
	const char *to;
};

static int bill_parse(int argc, char **argv, struct bill_args *a)
{
	static const struct option opts[] = {
		{ "ledger", required_argument, NULL, 'l' },
		{ "prices", required_argument, NULL, 'p' },
		{ "from", required_argument, NULL, 'f' },
		{ "to", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(a, 0, sizeof(*a));
	while ((c = getopt_long(argc, argv, "l:p:f:t:", opts, NULL)) != -1) {
		if (c == 'l') {
			a->ledger = optarg;
		} else if (c == 'p') {
			a->prices = optarg;
		} else if (c == 'f') {
			a->from = optarg;
		} else if (c == 't') {
			a->to = optarg;
		} else {
			return -1;
		}
	}
	if (!a->ledger || !a->from || !a->to || optind != argc) {
		return -1;
	}
	return 0;
}

static void bill_print(const struct billing_bill *bill, const char *prices)
{
	char from[32], to[32], amount[48], line[512];

	billing_time_format(bill->from_s, from, sizeof(from));
	billing_time_format(bill->to_s, to, sizeof(to));
	printf("bill %s .. %s, %s, prices: %s\n", from, to, bill->currency,
	       prices ? prices : "built-in");
	for (size_t i = 0; i < bill->nlines; i++) {
		const struct billing_line *l = &bill->lines[i];

		billing_line_format(l, bill->currency, line, sizeof(line));
		printf("  %s\n", line);
		if (i + 1 < bill->nlines &&
		    bill->lines[i + 1].pool_order == l->pool_order) {
			continue;
		}
		billing_amount_format(billing_bill_pool_total(bill, l->pool),
				      amount, sizeof(amount));
		printf("pool %s: %s %s\n", l->pool, amount, bill->currency);
	}
	billing_amount_format(bill->total_quanta, amount, sizeof(amount));
	printf("total: %s %s\n", amount, bill->currency);
}

int ctl_bill_main(int argc, char **argv)
{
	struct billing_prices prices;
	struct billing_bill bill;
	struct pool_event *evs;
	struct bill_args a;
	int64_t from, to;
	char err[300];
	size_t n;
	int rc;

	if (bill_parse(argc, argv, &a)) {
		fprintf(stderr, "usage: dsnfsctl bill --ledger FILE [--prices "
				"FILE] --from TIME --to TIME\n");
		return CTL_EXIT_USAGE;
	}
	if (billing_time_parse(a.from, &from) ||
	    billing_time_parse(a.to, &to)) {
		fprintf(stderr, "dsnfsctl: bill: a time is UTC 2024-01-31, "
				"2024-01-31T12:00:00Z or @EPOCH\n");
		return CTL_EXIT_USAGE;
	}
	if (a.prices) {
		if (billing_prices_load(a.prices, &prices, err, sizeof(err))) {
			fprintf(stderr, "dsnfsctl: bill: %s\n", err);
			return CTL_EXIT_FAIL;
		}
	} else {
		billing_prices_default(&prices);
	}
	if (ctl_ledger_read(a.ledger, &evs, &n)) {
		return CTL_EXIT_FAIL;
	}
	rc = billing_compute(evs, n, &prices, from, to, &bill, err,
			     sizeof(err));
	free(evs);
	if (rc) {
		fprintf(stderr, "dsnfsctl: bill: %s: %s\n", a.ledger, err);
		return CTL_EXIT_FAIL;
	}
	bill_print(&bill, a.prices);
	billing_bill_fini(&bill);
	return CTL_EXIT_OK;
}
