/* SPDX-License-Identifier: Apache-2.0 */
/*
 * run: the commands.  `dsload run` builds one fleet and runs its phases
 * (an optional prefill, then one phase per --read-pct value); sweep.c and
 * profile.c build many fleets through run_fleet_phases().
 */
#ifndef DSLOAD_RUN_H
#define DSLOAD_RUN_H

#include <jansson.h>
#include <stdio.h>

#include "perf/dsload/fleet.h"
#include "perf/dsload/opts.h"

/* Exit statuses. */
#define DSLOAD_EXIT_OK 0
#define DSLOAD_EXIT_FAILED 1 /* mismatches, I/O errors, lost server */
#define DSLOAD_EXIT_USAGE 2 /* bad options, or the fleet could not start */

/* A phase's outcome, summed: what decides the exit status. */
struct run_outcome {
	uint64_t mismatches;
	uint64_t errors;
	uint64_t verf_changes;
	uint64_t resent;
	bool stopped; /* a job stopped on an error */
};

/* Adds @r (borrowed) to @out. */
void run_outcome_add(struct run_outcome *out, const struct phase_result *r);

/* Prints "dsload: ok" or what failed; returns the exit status. */
int run_outcome_report(FILE *out, const struct run_outcome *o);

/* Where the phases of one run report to, and what they add up. */
struct run_sink {
	FILE *out; /* the text summaries */
	json_t *json; /* an array to append phases to, or NULL */
	FILE *csv; /* or NULL */
	const char *run_name; /* the CSV's run column */
	bool show_jobs; /* per-VMDK rows in the text */
	bool pause; /* SIGUSR1 before every phase but the first */
	const char *admin_host; /* dsnfsd's admin endpoint, for the */
	uint16_t admin_port; /* server's view; 0: none */
	struct run_outcome oc;
};

/*
 * Runs @n workloads @ws (borrowed) on @f in order, reporting each to
 * @sink, with the server's view when sink->admin_port is set.  Each
 * result is kept in @results[i] when @results is not NULL (owned by the
 * caller: fleet_result_fini()).  Returns 0, or -errno when a phase could
 * not start (message printed).
 */
int run_fleet_phases(struct fleet *f, const struct workload *ws, size_t n,
		     struct run_sink *sink, struct phase_result *results);

/* The server's view of one window: samples @host:@port's /volumes and
 * /hosts at each edge (a struct fleet_observer), then computes. */
struct run_admin {
	const char *host;
	uint16_t port;
	const struct fleet *fleet; /* the client's totals, at each sample */
	struct srv_sample a, b;
	struct progress_sample ca, cb;
	int err;
	char errmsg[192];
};

/* The observer that fills @ra; reset @ra before each phase. */
void run_admin_observer(struct run_admin *ra, struct fleet_observer *obs);

/* Blocks SIGUSR1 in the calling thread (and the threads it starts), so
 * --pause-between-phases can sigwait() for it. */
void run_signals_block(void);

/* `dsload run`.  Returns the exit status. */
int run_main(const struct dsload_opts *o);

#endif
