/* SPDX-License-Identifier: Apache-2.0 */
/*
 * profile: a published profile, a table of scenarios (fleet shape,
 * workload, published figure, baseline and published ratio), read from
 * perf/profiles/NAME.ini, and its runner (`dsload profile NAME`).
 *
 * The runner fits the traffic model (model.h) to the scenarios the file
 * names in `fit` (at most MODEL_FIT_MAX), measures the machine's uncapped
 * ceiling, lowers the scale until the model's largest capped figure is at
 * most a third of it, starts dsnfsd with the fitted caps at that scale,
 * and runs every scenario on a fresh fleet.  Each measured figure (IOPS or
 * MiB/s, averaged over its read mixes) is divided by its baseline's; the
 * verdict counts the predicted rows only: each must land within 15 % of
 * the published ratio (or inside the published range).  The file format
 * is in docs/dsload.md and in anf-avs.ini.
 */
#ifndef DSLOAD_PROFILE_H
#define DSLOAD_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perf/dsload/model.h"
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
	unsigned nconnect; /* connections per host and datastore */
	bool fitted; /* named in the profile's fit */
	/* A claim without a figure of its own (Microsoft: one nconnect=4
	 * datastore close to four): predicted, run and checked, shown
	 * apart; not in the verdict on the published table */
	bool claim;
};

struct profile {
	char name[64];
	char source[128];
	double ramp_s, run_s;
	unsigned iodepth;
	uint64_t vmdk_bytes;
	unsigned threads;
	bool verify; /* tag every write, check every read (default yes) */
	double volume_mibps; /* the model's given volume limit */
	char fit[MODEL_FIT_MAX][PROFILE_ID_MAX]; /* the fitted scenarios */
	size_t nfit;
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

/* The figure @s must give in published units: its published figure, or
 * the middle of its ratio times its baseline's. */
double profile_target(const struct profile *p,
		      const struct profile_scenario *s);

/* The model's shape of @s. */
void profile_model_shape(const struct profile_scenario *s,
			 struct model_shape *out);

/*
 * Fits the model to the fitted scenarios of @p into @m.  Returns 0 with
 * *rms_log (may be NULL), or -EINVAL with the reason in @errbuf.
 */
int profile_fit(const struct profile *p, struct model_params *m,
		double *rms_log, char *errbuf, size_t errlen);

/*
 * Writes @out_path: the dsnfsd config @base_path with its [traffic]
 * section's scale and model keys replaced by @m at @scale (the other
 * keys and sections kept).  Returns 0 or -errno with @errbuf.
 */
int profile_config_write(const char *base_path, const char *out_path,
			 const struct model_params *m, double scale,
			 char *errbuf, size_t errlen);

/* `dsload profile NAME`.  Returns the exit status: 0 when every predicted
 * ratio passes and the runs were clean. */
int profile_main(const struct dsload_opts *o);

#endif
