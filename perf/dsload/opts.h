/* SPDX-License-Identifier: Apache-2.0 */
/*
 * opts: dsload's command line into struct dsload_opts.  One option table
 * serves the three commands (run, sweep, profile); list-valued options
 * (--hosts 1,2,4) give one value to `run` and a range to `sweep`.
 */
#ifndef DSLOAD_OPTS_H
#define DSLOAD_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "perf/dsload/fleet.h"

#define OPTS_LIST_MAX 16
#define OPTS_PATH_MAX 512

enum dsload_cmd {
	DSLOAD_CMD_RUN = 0,
	DSLOAD_CMD_SWEEP,
	DSLOAD_CMD_PROFILE,
	DSLOAD_CMD_HELP,
	DSLOAD_CMD_VERSION,
};

struct opts_list {
	unsigned n;
	unsigned v[OPTS_LIST_MAX];
};

struct dsload_opts {
	enum dsload_cmd cmd;
	struct fleet_spec spec;
	struct workload w;
	/* lists: run uses the first value (read_pcts: one phase each) */
	struct opts_list hosts, ndatastores, vms, vmdks, read_pcts;
	bool vmdks_auto; /* sweep: VMDKs per VM = datastores */
	bool datastores_named; /* -D ds1,ds2 rather than a count */
	bool placement_set;
	bool prefill;
	bool pause_between_phases;
	bool show_jobs; /* per-VMDK rows in the summary */
	/* given on the command line: a profile's own values yield to them */
	bool runtime_set, ramp_set, iodepth_set, vmdk_size_set, threads_set;
	bool vm_iops_set;
	uint16_t admin_port; /* dsnfsd's admin endpoint: the server view */
	char json_path[OPTS_PATH_MAX];
	char csv_path[OPTS_PATH_MAX];
	char out_dir[OPTS_PATH_MAX];
	char corners[128]; /* sweep: comma list of corner names */
	char model[OPTS_PATH_MAX]; /* sweep: draw this profile's model */
	/* profile */
	char profile[OPTS_PATH_MAX];
	char profile_dir[OPTS_PATH_MAX];
	char server_config[OPTS_PATH_MAX];
	char dsnfsd[OPTS_PATH_MAX];
	double scale; /* 0: from the server config, else 1 */
	bool no_ceiling;
	bool no_verify; /* profile: its default is to verify */
};

/* Parses argv.  Returns 0, or -EINVAL with the reason in @errbuf. */
int opts_parse(int argc, char **argv, struct dsload_opts *o, char *errbuf,
	       size_t errlen);

/* The usage text. */
void opts_usage(FILE *out);

/* "64k" -> 65536; k, m, g (powers of 1024).  Returns 0 or -EINVAL. */
int opts_size_parse(const char *s, uint64_t *out);

/* "1,2,4" -> {1, 2, 4}, each in [min, max].  Returns 0 or -EINVAL. */
int opts_list_parse(const char *s, unsigned min, unsigned max,
		    struct opts_list *out);

/* Fills spec->datastores with ds1 .. dsN. */
void opts_datastores_count(struct fleet_spec *spec, unsigned n);

#endif
