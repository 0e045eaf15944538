// SPDX-License-Identifier: Apache-2.0
/*
 * prices: the price list (etc/prices.conf, INI through libinih) as exact
 * integers of 1e-12 currency.  Decimal text is converted digit by digit,
 * never through a float: 0.000403 is 403000000 pico, not 402999999.
 */
#include "nfsd/pool/billing.h"

#include <errno.h>
#include <ini.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define PRICES_DECIMALS 12
#define PRICES_SECTION "prices"

void billing_prices_default(struct billing_prices *out)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->currency, sizeof(out->currency), "USD");
	out->capacity_pico[POOL_LEVEL_STANDARD] = UINT64_C(202000000);
	out->capacity_pico[POOL_LEVEL_PREMIUM] = UINT64_C(403000000);
	out->capacity_pico[POOL_LEVEL_ULTRA] = UINT64_C(538000000);
	out->capacity_pico[POOL_LEVEL_FLEXIBLE] = UINT64_C(202000000);
	out->throughput_pico = UINT64_C(3072000000);
}

int billing_price_parse(const char *text, uint64_t *pico)
{
	uint64_t units = 0, frac = 0;
	unsigned decimals = 0;
	const char *p = text;

	if (*p < '0' || *p > '9') {
		return -EINVAL;
	}
	for (; *p >= '0' && *p <= '9'; p++) {
		units = units * 10 + (uint64_t)(*p - '0');
		if (units >= BILLING_PRICE_MAX_UNITS) {
			return -EINVAL;
		}
	}
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9') {
			return -EINVAL;
		}
		for (; *p >= '0' && *p <= '9'; p++) {
			if (++decimals > PRICES_DECIMALS) {
				return -EINVAL;
			}
			frac = frac * 10 + (uint64_t)(*p - '0');
		}
	}
	if (*p) {
		return -EINVAL;
	}
	for (; decimals < PRICES_DECIMALS; decimals++) {
		frac *= 10;
	}
	*pico = units * BILLING_PICO_PER_UNIT + frac;
	return 0;
}

void billing_price_format(uint64_t pico, char *buf, size_t len)
{
	char frac[PRICES_DECIMALS + 1];
	int keep = PRICES_DECIMALS;

	snprintf(frac, sizeof(frac), "%012" PRIu64,
		 pico % BILLING_PICO_PER_UNIT);
	while (keep > 6 && frac[keep - 1] == '0') {
		keep--;
	}
	snprintf(buf, len, "%" PRIu64 ".%.*s", pico / BILLING_PICO_PER_UNIT,
		 keep, frac);
}

struct prices_parse {
	struct billing_prices *prices;
	char why[128];
};

static uint64_t *prices_slot(struct billing_prices *pr, const char *key)
{
	if (!strcmp(key, "standard")) {
		return &pr->capacity_pico[POOL_LEVEL_STANDARD];
	}
	if (!strcmp(key, "premium")) {
		return &pr->capacity_pico[POOL_LEVEL_PREMIUM];
	}
	if (!strcmp(key, "ultra")) {
		return &pr->capacity_pico[POOL_LEVEL_ULTRA];
	}
	if (!strcmp(key, "flexible")) {
		return &pr->capacity_pico[POOL_LEVEL_FLEXIBLE];
	}
	if (!strcmp(key, "flexible_throughput")) {
		return &pr->throughput_pico;
	}
	return NULL;
}

static int prices_ini_handler(void *user, const char *section, const char *key,
			      const char *value)
{
	struct prices_parse *p = user;
	uint64_t *slot;
	size_t len;

	if (strcmp(section, PRICES_SECTION)) {
		snprintf(p->why, sizeof(p->why), "unknown section [%.64s]",
			 section);
		return 0;
	}
	if (!strcmp(key, "currency")) {
		len = strlen(value);
		if (len == 0 || len >= sizeof(p->prices->currency)) {
			snprintf(p->why, sizeof(p->why),
				 "currency: 1 to %d characters",
				 BILLING_CURRENCY_MAX - 1);
			return 0;
		}
		memcpy(p->prices->currency, value, len + 1);
		return 1;
	}
	slot = prices_slot(p->prices, key);
	if (!slot) {
		snprintf(p->why, sizeof(p->why),
			 "[prices]: unknown key '%.64s'", key);
		return 0;
	}
	if (billing_price_parse(value, slot)) {
		snprintf(p->why, sizeof(p->why),
			 "%.32s: '%.32s' is not a price (digits, at most 12 "
			 "decimals)",
			 key, value);
		return 0;
	}
	return 1;
}

static int prices_result(int rc, const char *name, const struct prices_parse *p,
			 char *errbuf, size_t errlen)
{
	if (rc == 0) {
		return 0;
	}
	if (rc == -1) {
		snprintf(errbuf, errlen, "%s: cannot open", name);
		return -ENOENT;
	}
	if (rc == -2) {
		snprintf(errbuf, errlen, "%s: out of memory", name);
		return -ENOMEM;
	}
	snprintf(errbuf, errlen, "%s:%d: %s", name, rc,
		 p->why[0] ? p->why : "syntax error");
	return -EINVAL;
}

int billing_prices_load(const char *path, struct billing_prices *out,
			char *errbuf, size_t errlen)
{
	struct prices_parse p = { .prices = out };

	billing_prices_default(out);
	return prices_result(ini_parse(path, prices_ini_handler, &p), path, &p,
			     errbuf, errlen);
}

int billing_prices_parse(const char *name, const char *text,
			 struct billing_prices *out, char *errbuf,
			 size_t errlen)
{
	struct prices_parse p = { .prices = out };

	billing_prices_default(out);
	return prices_result(ini_parse_string(text, prices_ini_handler, &p),
			     name, &p, errbuf, errlen);
}
