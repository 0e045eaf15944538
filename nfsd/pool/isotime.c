// SPDX-License-Identifier: Apache-2.0
/*
 * isotime: the UTC timestamps of bills and ledgers, ISO 8601 in and out.
 * Only UTC: a bill's period means the same wherever it is printed.
 */
#include "nfsd/pool/billing.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static bool isotime_fields_valid(const struct tm *tm)
{
	return tm->tm_year >= 70 && tm->tm_year <= 8099 && tm->tm_mon >= 0 &&
	       tm->tm_mon <= 11 && tm->tm_mday >= 1 && tm->tm_mday <= 31 &&
	       tm->tm_hour >= 0 && tm->tm_hour <= 23 && tm->tm_min >= 0 &&
	       tm->tm_min <= 59 && tm->tm_sec >= 0 && tm->tm_sec <= 59;
}

static int isotime_epoch(const char *text, int64_t *out_s)
{
	long long v;
	char *end;

	if (text[0] < '0' || text[0] > '9') {
		return -EINVAL;
	}
	errno = 0;
	v = strtoll(text, &end, 10);
	if (errno || *end) {
		return -EINVAL;
	}
	*out_s = (int64_t)v;
	return 0;
}

int billing_time_parse(const char *text, int64_t *out_s)
{
	struct tm tm, check;
	int n = 0, date_len = 0;
	const char *p;
	time_t t;

	if (text[0] == '@') {
		return isotime_epoch(text + 1, out_s);
	}
	memset(&tm, 0, sizeof(tm));
	if (sscanf(text, "%4d-%2d-%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
		   &date_len) != 3 ||
	    date_len != 10) {
		return -EINVAL;
	}
	p = text + date_len;
	if (*p == 'T' || *p == ' ') {
		p++;
		if (sscanf(p, "%2d:%2d%n", &tm.tm_hour, &tm.tm_min, &n) != 2 ||
		    n != 5) {
			return -EINVAL;
		}
		p += n;
		if (*p == ':') {
			p++;
			if (sscanf(p, "%2d%n", &tm.tm_sec, &n) != 1 || n != 2) {
				return -EINVAL;
			}
			p += n;
		}
		if (*p == 'Z') {
			p++;
		}
	}
	if (*p) {
		return -EINVAL;
	}
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	if (!isotime_fields_valid(&tm)) {
		return -EINVAL;
	}
	check = tm;
	t = timegm(&tm);
	/* timegm() normalises 31 February into March: refuse it. */
	if (tm.tm_mday != check.tm_mday || tm.tm_mon != check.tm_mon) {
		return -EINVAL;
	}
	*out_s = (int64_t)t;
	return 0;
}

void billing_time_format(int64_t t_s, char *buf, size_t len)
{
	time_t t = (time_t)t_s;
	struct tm tm;

	if (!gmtime_r(&t, &tm) ||
	    !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm)) {
		snprintf(buf, len, "@%" PRId64, t_s);
	}
}
