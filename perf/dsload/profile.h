/*
 * profile: a published profile, a table of scenarios (fleet shape,
 * workload, published figure, baseline and published ratio), read from
 * perf/profiles/NAME.ini, and its runner (`dsload profile NAME`): each
 * scenario runs on a fresh fleet; its measured figure (IOPS or MiB/s,
 * averaged over its read mixes) is divided by its baseline's, and that
 * ratio must land within 15 % of the published one (or inside the
 * published range).  The runner also measures the uncapped ceiling of
 * the machine, so that a reader sees the caps, not the CPU, shaped the
 * result.  The file format is in docs/dsload.md and in anf-avs.ini.
 */
#ifndef DSLOAD_PROFILE_H
#define DSLOAD_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perf/dsload/opts.h"

#define PROFILE_SCENARIOS_MAX 32
#define PROFILE_ID_MAX 16
#define PROFILE_TOLERANCE 0.15

struct profile_scenario {
	char id[PROFILE_ID_MAX];
	unsigned hosts, vms, vmdks, datastores;
	enum place_policy policy;
	uint32_t bs_bytes;
	unsigned random_pct;
	struct opts_list read_pcts; /* one phase each; the figure averages */
	bool mibps; /* the figure is MiB/s, else IOPS */
	double published; /* 0 when the source gives a ratio only */
	char published_text[64];
	char baseline[PROFILE_ID_MAX];
	double ratio_lo, ratio_hi; /* equal unless the source gives a range */
	bool ceiling; /* also run against the uncapped server */
};

struct profile {
	char name[64];
	char source[128];
	double ramp_s, run_s;
	unsigned iodepth;
	uint64_t vmdk_bytes;
	unsigned threads;
	double vm_iops; /* one VM's ceiling, as published (scaled at run) */
	size_t n;
	struct profile_scenario s[PROFILE_SCENARIOS_MAX];
};

/*
 * Reads a profile file.  Returns 0, -ENOENT, or -EINVAL with the file,
 * line or scenario in @errbuf (unknown keys, bad values, a baseline that
 * names no scenario, a scenario without a ratio).
 */
int profile_load(const char *path, struct profile *p, char *errbuf,
		 size_t errlen);

/* The scenario called @id, or NULL. */
const struct profile_scenario *profile_find(const struct profile *p,
					    const char *id);

/*
 * Whether a measured ratio passes: inside [lo, hi], or within
 * PROFILE_TOLERANCE of their middle.
 */
bool profile_ratio_ok(double measured, double lo, double hi);

/* `dsload profile NAME`.  Returns the exit status: 0 when every ratio
 * passes. */
int profile_main(const struct dsload_opts *o);

#endif
