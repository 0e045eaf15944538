// SPDX-License-Identifier: Apache-2.0
/*
 * ledger: `dsnfsctl ledger`, the capacity ledger as text, one event a
 * line, and the ledger reading shared with `dsnfsctl bill`.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "nfsd/ctl/ctl.h"
#include "nfsd/pool/billing.h"
#include "nfsd/pool/ledger.h"

int ctl_ledger_read(const char *path, struct pool_event **events, size_t *n)
{
	struct pool_ledger_recovery rec;
	struct pool_ledger *l;
	char err[300];
	int rc;

	rc = pool_ledger_open(path, POOL_LEDGER_READ_ONLY, &l, &rec, err,
			      sizeof(err));
	if (rc) {
		fprintf(stderr, "dsnfsctl: ledger: %s\n", err);
		return rc;
	}
	if (rec.torn) {
		fprintf(stderr,
			"dsnfsctl: ledger: %s: last record at offset %" PRIu64
			" (%" PRIu64 " bytes) ignored: %s\n",
			path, rec.offset, rec.dropped_bytes, rec.why);
	}
	rc = pool_ledger_events(l, events, n);
	pool_ledger_close(l);
	if (rc) {
		fprintf(stderr, "dsnfsctl: ledger: out of memory\n");
	}
	return rc;
}

int ctl_ledger_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "ledger", required_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = NULL;
	struct pool_event *evs;
	char when[32];
	size_t n;
	int c;

	while ((c = getopt_long(argc, argv, "l:", opts, NULL)) != -1) {
		if (c != 'l') {
			return CTL_EXIT_USAGE;
		}
		path = optarg;
	}
	if (!path || optind != argc) {
		fprintf(stderr, "usage: dsnfsctl ledger --ledger FILE\n");
		return CTL_EXIT_USAGE;
	}
	if (ctl_ledger_read(path, &evs, &n)) {
		return CTL_EXIT_FAIL;
	}
	for (size_t i = 0; i < n; i++) {
		const struct pool_event *ev = &evs[i];

		billing_time_format(ev->time_s, when, sizeof(when));
		printf("%s %-18s %s %s %" PRIu32 " TiB", when,
		       pool_event_type_name(ev->type), ev->pool,
		       pool_level_name(ev->level), ev->size_tib);
		if (ev->level == POOL_LEVEL_FLEXIBLE) {
			printf(" %d+%" PRIu32 " MiB/s",
			       POOL_FLEX_BASELINE_MIBPS, ev->purchased_mibps);
		}
		putchar('\n');
	}
	free(evs);
	return CTL_EXIT_OK;
}
