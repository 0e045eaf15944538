// SPDX-License-Identifier: Apache-2.0
/*
 * profile_file: the profile file format (see perf/profiles/anf-avs.ini),
 * parsed with libinih:
 *
 *   [profile]            name, source, ramp, runtime, iodepth, vmdk_size,
 *                        threads, verify (yes | no), fit (a comma list
 *                        of at most five scenario IDs), volume_mibps (the
 *                        model's given volume limit)
 *   [scenario ID]        hosts, vms, vmdks, datastores, placement,
 *                        bs, random_pct, read_pcts (comma list),
 *                        metric (iops | mibps), published (a number),
 *                        published_text, baseline (an ID), ratio (1.76 or
 *                        1.03-1.16), ceiling (yes | no), nconnect
 *                        (1 to 8, ESXi 8's nConnect), claim (yes: a
 *                        claim without a figure, shown apart)
 */
#include "perf/dsload/esxi.h"
#include "perf/dsload/profile.h"

#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROFILE_SECTION "scenario "

struct profile_parse {
	struct profile *p;
	char *errbuf;
	size_t errlen;
	bool failed;
};

static int profile_double(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < 0) {
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int profile_unsigned(const char *s, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9') {
		return -EINVAL;
	}
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max) {
		return -EINVAL;
	}
	*out = (unsigned)v;
	return 0;
}

static int profile_ratio(const char *s, double *lo, double *hi)
{
	char buf[64], *dash;

	if (strlen(s) >= sizeof(buf)) {
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", s);
	dash = strchr(buf, '-');
	if (dash) {
		*dash = '\0';
	}
	if (profile_double(buf, lo)) {
		return -EINVAL;
	}
	if (!dash) {
		*hi = *lo;
		return 0;
	}
	if (profile_double(dash + 1, hi) || *hi < *lo) {
		return -EINVAL;
	}
	return 0;
}

static int profile_yes_no(const char *s, bool *out)
{
	if (strcmp(s, "yes") && strcmp(s, "no")) {
		return -EINVAL;
	}
	*out = !strcmp(s, "yes");
	return 0;
}

/* "D1, S1, D2": at most MODEL_FIT_MAX IDs, checked against the scenarios
 * once the file is read. */
static int profile_fit_list(struct profile *p, const char *value)
{
	char buf[256], *save = NULL, *tok;

	if (strlen(value) >= sizeof(buf)) {
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", value);
	p->nfit = 0;
	for (tok = strtok_r(buf, ", ", &save); tok;
	     tok = strtok_r(NULL, ", ", &save)) {
		if (p->nfit == MODEL_FIT_MAX || strlen(tok) >= PROFILE_ID_MAX) {
			return -EINVAL;
		}
		snprintf(p->fit[p->nfit++], PROFILE_ID_MAX, "%s", tok);
	}
	return p->nfit ? 0 : -EINVAL;
}

static int profile_key_general(struct profile *p, const char *key,
			       const char *value)
{
	uint64_t size;

	if (!strcmp(key, "name")) {
		snprintf(p->name, sizeof(p->name), "%s", value);
		return 0;
	}
	if (!strcmp(key, "source")) {
		snprintf(p->source, sizeof(p->source), "%s", value);
		return 0;
	}
	if (!strcmp(key, "ramp")) {
		return profile_double(value, &p->ramp_s);
	}
	if (!strcmp(key, "runtime")) {
		if (profile_double(value, &p->run_s) || p->run_s <= 0) {
			return -EINVAL;
		}
		return 0;
	}
	if (!strcmp(key, "iodepth")) {
		return profile_unsigned(value, 1024, &p->iodepth);
	}
	if (!strcmp(key, "volume_mibps")) {
		return profile_double(value, &p->volume_mibps);
	}
	if (!strcmp(key, "verify")) {
		return profile_yes_no(value, &p->verify);
	}
	if (!strcmp(key, "fit")) {
		return profile_fit_list(p, value);
	}
	if (!strcmp(key, "threads")) {
		return profile_unsigned(value, FLEET_THREADS_MAX, &p->threads);
	}
	if (!strcmp(key, "vmdk_size")) {
		if (opts_size_parse(value, &size) || size < FLEET_VMDK_MIN) {
			return -EINVAL;
		}
		p->vmdk_bytes = size;
		return 0;
	}
	return -EINVAL;
}

static int profile_key_scenario(struct profile_scenario *s, const char *key,
				const char *value)
{
	uint64_t size;

	if (!strcmp(key, "hosts")) {
		return profile_unsigned(value, FLEET_HOSTS_MAX, &s->hosts);
	}
	if (!strcmp(key, "vms")) {
		return profile_unsigned(value, 1024, &s->vms);
	}
	if (!strcmp(key, "vmdks")) {
		return profile_unsigned(value, 1024, &s->vmdks);
	}
	if (!strcmp(key, "datastores")) {
		return profile_unsigned(value, FLEET_DS_MAX, &s->datastores);
	}
	if (!strcmp(key, "placement")) {
		return place_policy_parse(value, &s->policy);
	}
	if (!strcmp(key, "bs")) {
		if (opts_size_parse(value, &size) || size == 0 ||
		    size > 1024 * 1024) {
			return -EINVAL;
		}
		s->bs_bytes = (uint32_t)size;
		return 0;
	}
	if (!strcmp(key, "random_pct")) {
		return profile_unsigned(value, 100, &s->random_pct);
	}
	if (!strcmp(key, "read_pcts")) {
		return opts_list_parse(value, 0, 100, &s->read_pcts);
	}
	if (!strcmp(key, "metric")) {
		if (strcmp(value, "iops") && strcmp(value, "mibps")) {
			return -EINVAL;
		}
		s->mibps = !strcmp(value, "mibps");
		return 0;
	}
	if (!strcmp(key, "published")) {
		return profile_double(value, &s->published);
	}
	if (!strcmp(key, "published_text")) {
		snprintf(s->published_text, sizeof(s->published_text), "%s",
			 value);
		return 0;
	}
	if (!strcmp(key, "baseline")) {
		if (strlen(value) >= sizeof(s->baseline)) {
			return -EINVAL;
		}
		snprintf(s->baseline, sizeof(s->baseline), "%s", value);
		return 0;
	}
	if (!strcmp(key, "ratio")) {
		return profile_ratio(value, &s->ratio_lo, &s->ratio_hi);
	}
	if (!strcmp(key, "ceiling")) {
		return profile_yes_no(value, &s->ceiling);
	}
	if (!strcmp(key, "claim")) {
		return profile_yes_no(value, &s->claim);
	}
	if (!strcmp(key, "nconnect")) {
		return profile_unsigned(value, ESXI_NCONNECT_MAX,
					&s->nconnect) ||
				       s->nconnect == 0
			       ? -EINVAL
			       : 0;
	}
	return -EINVAL;
}

static struct profile_scenario *profile_scenario_get(struct profile *p,
						     const char *id)
{
	struct profile_scenario *s;

	for (size_t i = 0; i < p->n; i++) {
		if (!strcmp(p->s[i].id, id)) {
			return &p->s[i];
		}
	}
	if (p->n == PROFILE_SCENARIOS_MAX || strlen(id) >= PROFILE_ID_MAX ||
	    !*id) {
		return NULL;
	}
	s = &p->s[p->n++];
	memset(s, 0, sizeof(*s));
	snprintf(s->id, sizeof(s->id), "%s", id);
	s->hosts = s->vms = s->vmdks = s->datastores = 1;
	s->policy = PLACE_SPREAD;
	s->bs_bytes = 8192;
	s->random_pct = 100;
	s->read_pcts = (struct opts_list){ 1, { 50 } };
	s->ratio_lo = s->ratio_hi = -1;
	s->nconnect = 1;
	return s;
}

static int profile_ini_cb(void *user, const char *section, const char *key,
			  const char *value)
{
	struct profile_parse *pp = user;
	size_t plen = strlen(PROFILE_SECTION);
	struct profile_scenario *s;
	int err;

	if (!strcmp(section, "profile")) {
		err = profile_key_general(pp->p, key, value);
	} else if (!strncmp(section, PROFILE_SECTION, plen)) {
		s = profile_scenario_get(pp->p, section + plen);
		err = s ? profile_key_scenario(s, key, value) : -EINVAL;
	} else {
		err = -EINVAL;
	}
	if (err && !pp->failed) {
		snprintf(pp->errbuf, pp->errlen, "[%s] %s = %s: not understood",
			 section, key, value);
		pp->failed = true;
	}
	return err ? 0 : 1;
}

const struct profile_scenario *profile_find(const struct profile *p,
					    const char *id)
{
	for (size_t i = 0; i < p->n; i++) {
		if (!strcmp(p->s[i].id, id)) {
			return &p->s[i];
		}
	}
	return NULL;
}

int profile_load(const char *path, struct profile *p, char *errbuf,
		 size_t errlen)
{
	struct profile_parse pp = { p, errbuf, errlen, false };
	char msg[256];
	int line;

	memset(p, 0, sizeof(*p));
	p->ramp_s = 1.0;
	p->run_s = 4.0;
	p->iodepth = 32;
	p->vmdk_bytes = 256ull << 20;
	p->threads = 2;
	p->verify = true;
	line = ini_parse(path, profile_ini_cb, &pp);
	if (line == -1) {
		snprintf(errbuf, errlen, "%s: cannot open", path);
		return -ENOENT;
	}
	if (line != 0) {
		snprintf(msg, sizeof(msg), "%s", pp.failed ? errbuf : "syntax");
		snprintf(errbuf, errlen, "%s:%d: %s", path, line, msg);
		return -EINVAL;
	}
	for (size_t i = 0; i < p->n; i++) {
		const struct profile_scenario *s = &p->s[i];

		if (!s->baseline[0] || !profile_find(p, s->baseline) ||
		    s->ratio_lo < 0) {
			snprintf(errbuf, errlen,
				 "%s: [scenario %s] needs a baseline naming a "
				 "scenario and a ratio",
				 path, s->id);
			return -EINVAL;
		}
	}
	if (p->n == 0) {
		snprintf(errbuf, errlen, "%s: no [scenario ID]", path);
		return -EINVAL;
	}
	for (size_t i = 0; i < p->nfit; i++) {
		struct profile_scenario *s =
			(struct profile_scenario *)profile_find(p, p->fit[i]);

		if (!s) {
			snprintf(errbuf, errlen,
				 "%s: fit names %s, which is no scenario", path,
				 p->fit[i]);
			return -EINVAL;
		}
		s->fitted = true;
	}
	return 0;
}

bool profile_ratio_ok(double measured, double lo, double hi)
{
	double mid = (lo + hi) / 2.0;

	if (measured >= lo && measured <= hi) {
		return true;
	}
	return mid > 0 && fabs(measured / mid - 1.0) <= PROFILE_TOLERANCE;
}
