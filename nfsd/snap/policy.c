// SPDX-License-Identifier: Apache-2.0
/*
 * snap/policy: the schedules, names and retention of snapshot policies
 * (policy.h), pure functions of their arguments.
 */
#include "nfsd/snap/policy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static const char *const policy_kind_names[SNAP_POLICY_KINDS] = {
	[SNAP_POLICY_HOURLY] = "hourly",
	[SNAP_POLICY_DAILY] = "daily",
	[SNAP_POLICY_WEEKLY] = "weekly",
	[SNAP_POLICY_MONTHLY] = "monthly",
};

static const char *const policy_wday_names[7] = { "sun", "mon", "tue", "wed",
						  "thu", "fri", "sat" };

const char *snap_policy_kind_name(enum snap_policy_kind kind)
{
	return kind < SNAP_POLICY_KINDS ? policy_kind_names[kind] : "?";
}

int snap_policy_kind_parse(const char *name, enum snap_policy_kind *out)
{
	for (int k = 0; k < SNAP_POLICY_KINDS; k++) {
		if (!strcmp(name, policy_kind_names[k])) {
			*out = (enum snap_policy_kind)k;
			return 0;
		}
	}
	return -EINVAL;
}

/* A decimal in [lo, hi] that is all of @s. */
static int policy_num(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	if (!*s || *s == '-' || *s == '+') {
		return -EINVAL;
	}
	v = strtol(s, &end, 10);
	if (*end || v < lo || v > hi) {
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* "HH:MM" (@hourly: ":MM") into @s. */
static int policy_time_parse(const char *t, bool hourly,
			     struct snap_policy_sched *s)
{
	char hh[8];
	const char *colon = strchr(t, ':');
	long h = 0, m;

	if (!colon || (size_t)(colon - t) >= sizeof(hh) ||
	    (hourly != (colon == t))) {
		return -EINVAL;
	}
	memcpy(hh, t, (size_t)(colon - t));
	hh[colon - t] = '\0';
	if ((!hourly && policy_num(hh, 0, 23, &h)) ||
	    policy_num(colon + 1, 0, 59, &m) || strlen(colon + 1) != 2) {
		return -EINVAL;
	}
	s->hour = (uint8_t)h;
	s->minute = (uint8_t)m;
	return 0;
}

/* "mon,fri" (weekly) or "1,15" (monthly) into @s. */
static int policy_days_parse(enum snap_policy_kind kind, char *days,
			     struct snap_policy_sched *s)
{
	char *save = NULL;

	for (char *d = strtok_r(days, ",", &save); d;
	     d = strtok_r(NULL, ",", &save)) {
		long v = -1;

		if (kind == SNAP_POLICY_WEEKLY) {
			for (int i = 0; i < 7; i++) {
				if (!strcasecmp(d, policy_wday_names[i])) {
					v = i;
				}
			}
			if (v < 0) {
				return -EINVAL;
			}
			s->wdays |= (uint8_t)(1u << v);
		} else {
			if (policy_num(d, 1, 31, &v)) {
				return -EINVAL;
			}
			s->mdays |= 1u << v;
		}
	}
	return (s->wdays || s->mdays) ? 0 : -EINVAL;
}

static const char *const policy_forms[SNAP_POLICY_KINDS] = {
	[SNAP_POLICY_HOURLY] = "':MM keep N'",
	[SNAP_POLICY_DAILY] = "'HH:MM keep N'",
	[SNAP_POLICY_WEEKLY] = "'DAYS HH:MM keep N' (DAYS: mon,fri)",
	[SNAP_POLICY_MONTHLY] = "'DAYS HH:MM keep N' (DAYS: 1,15)",
};

int snap_policy_sched_parse(enum snap_policy_kind kind, const char *text,
			    struct snap_policy_sched *out, char *errbuf,
			    size_t errlen)
{
	struct snap_policy_sched s = { .on = true };
	char buf[160], *tok[5], *save = NULL;
	size_t n = 0, want = kind <= SNAP_POLICY_DAILY ? 3 : 4;
	long keep;
	int err = 0;

	if (kind >= SNAP_POLICY_KINDS) {
		return -EINVAL;
	}
	if (!strcmp(text, "off")) {
		memset(out, 0, sizeof(*out));
		return 0;
	}
	if (strlen(text) >= sizeof(buf)) {
		err = -EINVAL;
		goto bad;
	}
	strcpy(buf, text);
	for (char *t = strtok_r(buf, " \t", &save); t && n < 5;
	     t = strtok_r(NULL, " \t", &save)) {
		tok[n++] = t;
	}
	if (n != want || strcmp(tok[n - 2], "keep") ||
	    policy_num(tok[n - 1], 1, SNAP_POLICY_MAX_SNAPSHOTS, &keep)) {
		err = -EINVAL;
		goto bad;
	}
	s.keep = (uint16_t)keep;
	if (want == 4 && policy_days_parse(kind, tok[0], &s)) {
		err = -EINVAL;
		goto bad;
	}
	if (policy_time_parse(tok[n - 3], kind == SNAP_POLICY_HOURLY, &s)) {
		err = -EINVAL;
		goto bad;
	}
	*out = s;
	return 0;
bad:
	snprintf(errbuf, errlen,
		 "%s schedule '%.64s': %s is needed (UTC; keep 1..%d), or "
		 "'off'",
		 policy_kind_names[kind], text, policy_forms[kind],
		 SNAP_POLICY_MAX_SNAPSHOTS);
	return err;
}

void snap_policy_sched_format(enum snap_policy_kind kind,
			      const struct snap_policy_sched *s, char *buf,
			      size_t len)
{
	char days[128] = "";
	size_t used = 0;

	if (!s->on) {
		snprintf(buf, len, "off");
		return;
	}
	for (int d = 0; kind == SNAP_POLICY_WEEKLY && d < 7; d++) {
		if (s->wdays & (1u << d)) {
			used += (size_t)snprintf(
				days + used, sizeof(days) - used, "%s%s",
				used ? "," : "", policy_wday_names[d]);
		}
	}
	for (int d = 1; kind == SNAP_POLICY_MONTHLY && d <= 31; d++) {
		if (s->mdays & (1u << d)) {
			used += (size_t)snprintf(days + used,
						 sizeof(days) - used, "%s%d",
						 used ? "," : "", d);
		}
	}
	if (kind == SNAP_POLICY_HOURLY) {
		snprintf(buf, len, ":%02u keep %u", s->minute, s->keep);
	} else {
		snprintf(buf, len, "%s%s%02u:%02u keep %u", days,
			 used ? " " : "", s->hour, s->minute, s->keep);
	}
}

bool snap_policy_any(const struct snap_policy *p)
{
	for (int k = 0; k < SNAP_POLICY_KINDS; k++) {
		if (p->k[k].on) {
			return true;
		}
	}
	return false;
}

int snap_policy_check(const struct snap_policy *p, char *errbuf, size_t errlen)
{
	unsigned sum = 0;

	for (int k = 0; k < SNAP_POLICY_KINDS; k++) {
		sum += p->k[k].on ? p->k[k].keep : 0;
	}
	if (sum > SNAP_POLICY_MAX_SNAPSHOTS) {
		snprintf(errbuf, errlen,
			 "snapshot policy: the snapshots to keep add up to %u, "
			 "more than the %d a datastore holds",
			 sum, SNAP_POLICY_MAX_SNAPSHOTS);
		return -EINVAL;
	}
	return 0;
}

#define DAY_S 86400
/* Days looked back for a monthly day (31 comes back within 62 days). */
#define POLICY_LOOKBACK_DAYS 100

int64_t snap_policy_slot(enum snap_policy_kind kind,
			 const struct snap_policy_sched *s, int64_t now)
{
	int64_t day, t;

	if (!s->on || now < 0) {
		return -1;
	}
	if (kind == SNAP_POLICY_HOURLY) {
		t = now - now % 3600 + s->minute * 60;
		return t > now ? t - 3600 : t;
	}
	day = now - now % DAY_S;
	for (int back = 0; back <= POLICY_LOOKBACK_DAYS; back++, day -= DAY_S) {
		time_t d = (time_t)day;
		struct tm tm;

		t = day + s->hour * 3600 + s->minute * 60;
		if (t > now || !gmtime_r(&d, &tm)) {
			continue;
		}
		if (kind == SNAP_POLICY_DAILY ||
		    (kind == SNAP_POLICY_WEEKLY &&
		     (s->wdays & (1u << tm.tm_wday))) ||
		    (kind == SNAP_POLICY_MONTHLY &&
		     (s->mdays & (1u << tm.tm_mday)))) {
			return t;
		}
	}
	return -1;
}

unsigned snap_policy_due(const struct snap_policy *p,
			 struct snap_policy_state *st, int64_t now,
			 int64_t slots[SNAP_POLICY_KINDS])
{
	unsigned due = 0;

	for (int k = 0; k < SNAP_POLICY_KINDS; k++) {
		slots[k] = snap_policy_slot((enum snap_policy_kind)k, &p->k[k],
					    now);
		if (!st->primed) {
			st->last[k] = slots[k];
		} else if (slots[k] >= 0 && slots[k] > st->last[k]) {
			due |= 1u << k;
		}
	}
	st->primed = true;
	return due;
}

void snap_policy_done(struct snap_policy_state *st, enum snap_policy_kind kind,
		      int64_t slot)
{
	if (kind < SNAP_POLICY_KINDS && slot > st->last[kind]) {
		st->last[kind] = slot;
	}
}

void snap_policy_name(enum snap_policy_kind kind, int64_t slot, char *buf,
		      size_t len)
{
	time_t t = (time_t)slot;
	struct tm tm;

	if (!gmtime_r(&t, &tm)) {
		memset(&tm, 0, sizeof(tm));
	}
	snprintf(buf, len, "%s-%04d-%02d-%02d_%02d%02d",
		 snap_policy_kind_name(kind), tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min);
}

int snap_policy_name_parse(const char *name, enum snap_policy_kind *kind,
			   int64_t *slot)
{
	char k[16], back[64];
	struct tm tm = { 0 };
	int y, mo, d, h, mi, used = 0;

	if (sscanf(name, "%15[a-z]-%4d-%2d-%2d_%2d%2d%n", k, &y, &mo, &d, &h,
		   &mi, &used) != 6 ||
	    name[used] || snap_policy_kind_parse(k, kind)) {
		return -EINVAL;
	}
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	*slot = (int64_t)timegm(&tm);
	/* Only the exact form: it must print back the same. */
	snap_policy_name(*kind, *slot, back, sizeof(back));
	return strcmp(back, name) ? -EINVAL : 0;
}

void snap_policy_plan(size_t total, size_t nkind, unsigned keep,
		      struct snap_policy_plan *out)
{
	size_t excess = nkind + 1 > keep ? nkind + 1 - keep : 0;

	memset(out, 0, sizeof(*out));
	if (total + 1 - excess > SNAP_POLICY_MAX_SNAPSHOTS) {
		out->refused = true;
		return;
	}
	/* Made first, then the oldest go (a failed snapshot loses
	 * nothing); at the limit the oldest go first, only as many as
	 * keep the datastore at 255. */
	if (total + 1 > SNAP_POLICY_MAX_SNAPSHOTS) {
		out->del_before = total + 1 - SNAP_POLICY_MAX_SNAPSHOTS;
	}
	out->del_after = excess - out->del_before;
}
