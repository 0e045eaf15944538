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

/*
 * Runs @n workloads @ws (borrowed) on @f in order, printing each summary
 * to @out and appending it to @json (may be NULL) and @csv (may be NULL)
 * under @run_name; with @pause, waits for SIGUSR1 before every phase but
 * the first.  Each result is kept in @results[i] when @results is not
 * NULL (owned by the caller: fleet_result_fini()).  Returns 0, or -errno
 * when a phase could not start (message printed).
 */
int run_fleet_phases(struct fleet *f, const struct workload *ws, size_t n,
		     bool pause, bool show_jobs, FILE *out, json_t *json,
		     FILE *csv, const char *run_name, struct run_outcome *oc,
		     struct phase_result *results);

/* Blocks SIGUSR1 in the calling thread (and the threads it starts), so
 * --pause-between-phases can sigwait() for it. */
void run_signals_block(void);

/* `dsload run`.  Returns the exit status. */
int run_main(const struct dsload_opts *o);

#endif
