/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report: what a phase measured, for people (a fio-like summary), for
 * programs (JSON through jansson) and for spreadsheets (CSV).  Every
 * format has the same rows: total, then per datastore, per host, per VM
 * and per VMDK (job), each with IOPS, MiB/s and latency (mean, p50, p99,
 * p99.9) by direction and in all.
 *
 * Beside the client's rows go the server's (srvview.h), when dsnfsd's
 * admin endpoint was sampled: per datastore, per host and in total, with
 * their ratio to the client's figures.
 */
#ifndef DSLOAD_REPORT_H
#define DSLOAD_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "perf/dsload/fleet.h"

/* The name of @g's row: "all", "ds1", "127.0.1.1", "vm3",
 * "vm3-disk0@ds1". */
void report_group_name(const struct phase_result *r,
		       const struct dstats_group *g, char *buf, size_t len);

/* The fio-like summary of @r (borrowed); VMDK rows only with @show_jobs. */
void report_text(FILE *out, const struct phase_result *r, bool show_jobs);

/* Appends @r as an object to the JSON array @phases.  Returns 0 or
 * -ENOMEM. */
int report_json_phase(json_t *phases, const struct phase_result *r);

/* Writes @root (borrowed) to @path, indented.  Returns 0 or -errno. */
int report_json_write(const char *path, json_t *root);

/* The CSV header line, then one line per row of @r under run name @run. */
void report_csv_header(FILE *out);
int report_csv_phase(FILE *out, const char *run, const struct phase_result *r);

/* ---- the server's view (report_server.c) ------------------------------ */

/* The server rows of @r, or why there are none. */
void report_server_text(FILE *out, const struct phase_result *r);

/* @r's server view as JSON: null when not sampled, {"unavailable": why}
 * when sampling failed.  Returns a new reference. */
json_t *report_server_json(const struct phase_result *r);

/* The server rows as CSV lines (levels server-total, server-datastore,
 * server-host; the client-only columns empty). */
void report_server_csv(FILE *out, const char *run,
		       const struct phase_result *r);

#endif
