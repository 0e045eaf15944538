// SPDX-License-Identifier: Apache-2.0
/*
 * profile_fit: a profile's scenarios as the model's points, the fit of
 * the model to the scenarios the profile names, and the dsnfsd config
 * that carries the fitted caps (profile.h).
 */
#include "perf/dsload/profile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/base/base.h"
#include "perf/dsload/conf_copy.h"

double profile_target(const struct profile *p, const struct profile_scenario *s)
{
	const struct profile_scenario *b = profile_find(p, s->baseline);

	if (s->published > 0) {
		return s->published;
	}
	if (!b || b == s || b->published <= 0) {
		return 0;
	}
	return (s->ratio_lo + s->ratio_hi) / 2 * b->published;
}

void profile_model_shape(const struct profile_scenario *s,
			 struct model_shape *out)
{
	memset(out, 0, sizeof(*out));
	out->place.hosts = s->hosts;
	out->place.vms = s->vms;
	out->place.vmdks = s->vmdks;
	out->place.datastores = s->datastores;
	out->place.policy = s->policy;
	out->nconnect = s->nconnect ? s->nconnect : 1;
	out->bs_bytes = s->bs_bytes;
	out->mibps = s->mibps;
}

int profile_fit(const struct profile *p, struct model_params *m,
		double *rms_log, char *errbuf, size_t errlen)
{
	struct model_point pts[MODEL_FIT_MAX];
	size_t n = 0;

	memset(m, 0, sizeof(*m));
	m->volume_mibps = p->volume_mibps;
	for (size_t i = 0; i < p->n && n < MODEL_FIT_MAX; i++) {
		const struct profile_scenario *s = &p->s[i];

		if (!s->fitted) {
			continue;
		}
		profile_model_shape(s, &pts[n].shape);
		pts[n].target = profile_target(p, s);
		if (pts[n].target <= 0) {
			snprintf(errbuf, errlen,
				 "fit: scenario %s has no figure to fit (no "
				 "published figure, nor a baseline with one)",
				 s->id);
			return -EINVAL;
		}
		n++;
	}
	if (!n) {
		snprintf(errbuf, errlen,
			 "fit: the profile names no scenario "
			 "to fit (fit = ID, ...)");
		return -EINVAL;
	}
	if (model_fit(pts, n, m, rms_log)) {
		snprintf(errbuf, errlen,
			 "fit: the model cannot take these "
			 "scenarios");
		return -EINVAL;
	}
	return 0;
}

/* The [traffic] keys the fit writes: a base config's own are dropped. */
static bool profile_config_key_ours(const char *line)
{
	static const char *const keys[] = {
		"scale",	   "flow_mibps",	"flow_iops",
		"host_mibps",	   "host_iops",		"volume_iops",
		"host_contention", "volume_contention",
	};
	size_t len;

	while (*line == ' ' || *line == '\t') {
		line++;
	}
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		len = strlen(keys[i]);
		if (!strncmp(line, keys[i], len) &&
		    (line[len] == ' ' || line[len] == '=' ||
		     line[len] == '\t')) {
			return true;
		}
	}
	return false;
}

static void profile_config_traffic(FILE *out, const struct model_params *m,
				   double scale)
{
	fprintf(out,
		"[traffic]\n"
		"; written by dsload profile: the model fitted to the "
		"published table\n"
		"scale = %.6g\n"
		"flow_iops = %.0f\n"
		"flow_mibps = %.0f\n"
		"host_mibps = %.0f\n"
		"host_contention = %.6f\n"
		"volume_contention = %.6f\n",
		scale, m->v[MODEL_FLOW_IOPS], m->v[MODEL_FLOW_MIBPS],
		m->v[MODEL_HOST_MIBPS], m->v[MODEL_CONTENTION],
		m->v[MODEL_CONTENTION]);
}

int profile_config_write(const char *base_path, const char *out_path,
			 const struct model_params *m, double scale,
			 char *errbuf, size_t errlen)
{
	FILE *in, *out;
	char line[1024];
	bool in_traffic = false, wrote = false;
	int err;

	err = conf_copy_open(base_path, &in, out_path, &out, errbuf, errlen);
	if (err) {
		return err;
	}
	fprintf(out, "; %s with the fitted [traffic] caps (dsload profile)\n",
		base_path);
	while (fgets(line, sizeof(line), in)) {
		const char *t = line;

		while (*t == ' ' || *t == '\t') {
			t++;
		}
		if (*t == '[') {
			in_traffic = !strncmp(t, "[traffic]", 9);
			if (in_traffic) {
				profile_config_traffic(out, m, scale);
				wrote = true;
				continue;
			}
		}
		if (in_traffic && profile_config_key_ours(t)) {
			continue;
		}
		fputs(line, out);
	}
	if (!wrote) {
		fputc('\n', out);
		profile_config_traffic(out, m, scale);
	}
	return conf_copy_close(in, out, out_path, errbuf, errlen);
}
