// SPDX-License-Identifier: Apache-2.0
/*
 * stats: per-job counters and their sums (see stats.h).
 */
#include "perf/dsload/stats.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void dstats_init(struct dstats *s)
{
	memset(s, 0, sizeof(*s));
	for (int d = 0; d < DSTATS_DIRS; d++) {
		lat_hist_init(&s->lat[d]);
	}
}

void dstats_merge(struct dstats *dst, const struct dstats *src)
{
	for (int d = 0; d < DSTATS_DIRS; d++) {
		dst->ops[d] += src->ops[d];
		dst->bytes[d] += src->bytes[d];
		lat_hist_merge(&dst->lat[d], &src->lat[d]);
	}
	dst->errors += src->errors;
	dst->nospc += src->nospc;
	dst->mismatches += src->mismatches;
	dst->verified += src->verified;
	dst->commits += src->commits;
	dst->verf_changes += src->verf_changes;
	dst->resent += src->resent;
}

void dstats_lat_all(const struct dstats *s, struct lat_hist *out)
{
	lat_hist_init(out);
	for (int d = 0; d < DSTATS_DIRS; d++) {
		lat_hist_merge(out, &s->lat[d]);
	}
}

static uint64_t dstats_sum(const uint64_t *v, enum dstats_dir dir)
{
	return dir == DSTATS_DIRS ? v[DSTATS_READ] + v[DSTATS_WRITE] : v[dir];
}

double dstats_iops(const struct dstats *s, enum dstats_dir dir, double seconds)
{
	return (double)dstats_sum(s->ops, dir) / seconds;
}

double dstats_mibps(const struct dstats *s, enum dstats_dir dir, double seconds)
{
	return (double)dstats_sum(s->bytes, dir) / (1024.0 * 1024.0) / seconds;
}

static unsigned dstats_id(const struct dstats_key *k, size_t job,
			  enum dstats_level level)
{
	switch (level) {
	case DSTATS_LEVEL_JOB:
		return (unsigned)job;
	case DSTATS_LEVEL_VM:
		return k->vm;
	case DSTATS_LEVEL_HOST:
		return k->host;
	case DSTATS_LEVEL_DATASTORE:
		return k->datastore;
	case DSTATS_LEVEL_TOTAL:
	case DSTATS_LEVELS:
		break;
	}
	return 0;
}

int dstats_aggregate(const struct dstats *jobs, const struct dstats_key *keys,
		     size_t njobs, enum dstats_level level,
		     struct dstats_group **out, size_t *nout)
{
	struct dstats_group *all = NULL, *groups = NULL;
	unsigned max_id = 0;
	size_t n = 0;

	for (size_t i = 0; i < njobs; i++) {
		unsigned id = dstats_id(&keys[i], i, level);

		if (id > max_id) {
			max_id = id;
		}
	}
	all = calloc((size_t)max_id + 1, sizeof(*all));
	if (!all) {
		return -ENOMEM;
	}
	for (unsigned id = 0; id <= max_id; id++) {
		all[id].level = level;
		all[id].id = id;
		dstats_init(&all[id].s);
	}
	for (size_t i = 0; i < njobs; i++) {
		struct dstats_group *g = &all[dstats_id(&keys[i], i, level)];

		g->njobs++;
		dstats_merge(&g->s, &jobs[i]);
	}
	for (unsigned id = 0; id <= max_id; id++) {
		n += all[id].njobs > 0 || level == DSTATS_LEVEL_TOTAL;
	}
	groups = calloc(n ? n : 1, sizeof(*groups));
	if (!groups) {
		free(all);
		return -ENOMEM;
	}
	n = 0;
	for (unsigned id = 0; id <= max_id; id++) {
		if (all[id].njobs > 0 || level == DSTATS_LEVEL_TOTAL) {
			groups[n++] = all[id];
		}
	}
	free(all);
	*out = groups;
	*nout = n;
	return 0;
}

const char *dstats_level_name(enum dstats_level level)
{
	switch (level) {
	case DSTATS_LEVEL_JOB:
		return "job";
	case DSTATS_LEVEL_VM:
		return "vm";
	case DSTATS_LEVEL_HOST:
		return "host";
	case DSTATS_LEVEL_DATASTORE:
		return "datastore";
	case DSTATS_LEVEL_TOTAL:
	case DSTATS_LEVELS:
		break;
	}
	return "total";
}
