/* SPDX-License-Identifier: Apache-2.0 */
/*
 * profile_int: the state of one `dsload profile` run, shared by its
 * runner (profile.c) and its report (profile_report.c: the fit, the
 * table, CSV, JSON and the plot).
 */
#ifndef DSLOAD_PROFILE_INT_H
#define DSLOAD_PROFILE_INT_H

#include <jansson.h>
#include <stdio.h>

#include "perf/dsload/profile.h"
#include "perf/dsload/run.h"
#include "perf/dsload/server.h"

struct profile_result {
	bool ran;
	unsigned flows;
	double figure; /* measured, averaged over the read mixes */
	double model; /* the model's figure, published units */
	double ceiling; /* the same scenario on the uncapped server */
	bool ceiling_ran;
};

/* Everything one profile run shares. */
struct profile_ctx {
	const struct dsload_opts *o;
	const struct profile *p;
	struct fleet_spec base; /* server, ports, datastore names */
	double scale; /* the one the capped runs used */
	double scale_start; /* the config's (or --scale) before lowering */
	struct model_params m;
	double rms_log; /* of the fit */
	double ceiling[2]; /* the largest uncapped figure: [0] IOPS, [1] MiB/s
			    */
	struct run_sink sink; /* runs.csv, profile.json, the outcome */
	uint16_t admin_port; /* the server's view; 0: none */
	bool uncapped; /* running the ceiling */
	struct profile_result r[PROFILE_SCENARIOS_MAX];
	char ds_args[FLEET_DS_MAX][SERVER_EXPORT_ARG_MAX]; /* -e NAME=DIR */
};

/* The fit: each parameter, its value and meaning, the fitted rows. */
void profile__fit_print(FILE *out, const struct profile_ctx *c);

/* The table of every row; returns how many predicted rows failed. */
unsigned profile__table(FILE *out, const struct profile_ctx *c);

/* The claim rows (profile.h): the model's ratio against the claim, and
 * after the runs (@measured) the measured one.  Returns how many the
 * measured ratios missed (0 before the runs). */
unsigned profile__claims(FILE *out, const struct profile_ctx *c, bool measured);

/* profile.csv, one line per row. */
void profile__csv_write(const char *path, const struct profile_ctx *c);

/* Adds "fit" and "rows" to the profile.json document @root. */
void profile__json_add(json_t *root, const struct profile_ctx *c);

/* DIR/profile.dat, profile.gp, profile.png and profile.svg: measured,
 * published and the model against flows, one panel per block size. */
void profile__plot(const char *dir, const struct profile_ctx *c);

#endif
