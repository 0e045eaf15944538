// SPDX-License-Identifier: Apache-2.0
/*
 * report: the text summary (see report.h), modelled on fio's: one block
 * per phase, a header naming the workload and the fleet, then a table
 * with one row per total / datastore / host / VM (/ VMDK).
 */
#include "perf/dsload/report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define REPORT_STOPS_SHOWN 16

void report_group_name(const struct phase_result *r,
		       const struct dstats_group *g, char *buf, size_t len)
{
	switch (g->level) {
	case DSTATS_LEVEL_JOB:
		snprintf(buf, len, "vm%u-disk%u@%s", r->keys[g->id].vm,
			 r->job_disk[g->id],
			 r->ds_names[r->keys[g->id].datastore]);
		break;
	case DSTATS_LEVEL_VM:
		snprintf(buf, len, "vm%u", g->id);
		break;
	case DSTATS_LEVEL_HOST:
		snprintf(buf, len, "127.0.1.%u", g->id + 1);
		break;
	case DSTATS_LEVEL_DATASTORE:
		snprintf(buf, len, "%s", r->ds_names[g->id]);
		break;
	case DSTATS_LEVEL_TOTAL:
	case DSTATS_LEVELS:
		snprintf(buf, len, "all");
		break;
	}
}

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

static void report_row(FILE *out, const struct phase_result *r,
		       const struct dstats_group *g)
{
	const struct dstats *s = &g->s;
	struct lat_hist all;
	char name[96];

	dstats_lat_all(s, &all);
	report_group_name(r, g, name, sizeof(name));
	fprintf(out,
		"%-9s %-20s %10.0f %10.0f %10.0f %9.1f %8.3f %8.3f %8.3f "
		"%8.3f %6" PRIu64 " %6" PRIu64 "\n",
		dstats_level_name(g->level), name,
		dstats_iops(s, DSTATS_DIRS, r->window_s),
		dstats_iops(s, DSTATS_READ, r->window_s),
		dstats_iops(s, DSTATS_WRITE, r->window_s),
		dstats_mibps(s, DSTATS_DIRS, r->window_s),
		lat_hist_mean_ns(&all) / 1e6,
		ms(lat_hist_percentile_ns(&all, 50.0)),
		ms(lat_hist_percentile_ns(&all, 99.0)),
		ms(lat_hist_percentile_ns(&all, 99.9)), s->errors,
		s->mismatches);
}

static void report_level(FILE *out, const struct phase_result *r,
			 enum dstats_level level)
{
	struct dstats_group *groups;
	size_t n;

	if (dstats_aggregate(r->jobs, r->keys, r->njobs, level, &groups, &n)) {
		return;
	}
	for (size_t i = 0; i < n; i++) {
		report_row(out, r, &groups[i]);
	}
	free(groups);
}

static void report_dir_line(FILE *out, const char *what, const struct dstats *s,
			    enum dstats_dir d, double window_s)
{
	const struct lat_hist *h = &s->lat[d];

	if (s->ops[d] == 0) {
		return;
	}
	fprintf(out,
		"  %-5s: IOPS=%.0f, BW=%.1f MiB/s, lat (ms): min=%.3f "
		"mean=%.3f p50=%.3f p99=%.3f p99.9=%.3f max=%.3f, ios=%" PRIu64
		"\n",
		what, dstats_iops(s, d, window_s), dstats_mibps(s, d, window_s),
		ms(h->min_ns), lat_hist_mean_ns(h) / 1e6,
		ms(lat_hist_percentile_ns(h, 50.0)),
		ms(lat_hist_percentile_ns(h, 99.0)),
		ms(lat_hist_percentile_ns(h, 99.9)), ms(h->max_ns), s->ops[d]);
}

/* One line per VMDK whose generator stopped (a VM ESXi would pause). */
static void report_stops(FILE *out, const struct phase_result *r)
{
	struct dstats_group g = { .level = DSTATS_LEVEL_JOB };
	unsigned shown = 0, stopped = 0;
	char name[96];

	for (size_t i = 0; i < r->njobs; i++) {
		if (!r->job_stop[i][0]) {
			continue;
		}
		if (stopped++ >= REPORT_STOPS_SHOWN) {
			continue;
		}
		g.id = (unsigned)i;
		report_group_name(r, &g, name, sizeof(name));
		fprintf(out, "  STOPPED %s: %s\n", name, r->job_stop[i]);
		shown++;
	}
	if (stopped > shown) {
		fprintf(out, "  STOPPED: %u more VMDK(s)\n", stopped - shown);
	}
}

/*
 * What ESXi would have done: the connections after sharing, then one line
 * per datastore with its heartbeats, APD starts, volumes marked down, APD
 * timeouts, the longest time from the first failed heartbeat back to
 * service, and the hosts still without it at the phase's end.
 */
static void report_esxi(FILE *out, const struct phase_result *r)
{
	fprintf(out,
		"  esxi %u: nconnect %u, %u connection(s) per host, %u "
		"datastore(s) sharing one (SunRPC.MaxConnPerIP)\n",
		r->esxi_version, r->nconnect, r->conns_per_host,
		r->shared_datastores);
	for (unsigned d = 0; d < r->shape.datastores && d < FLEET_DS_MAX; d++) {
		const struct fleet_esxi_ds *e = &r->esxi[d];

		fprintf(out,
			"  esxi %s: heartbeats %" PRIu64 " (%" PRIu64
			" failed), APD start %" PRIu64 ", marked down %" PRIu64
			", APD timeout %" PRIu64 ", back in service %" PRIu64
			" time(s)",
			r->ds_names[d], e->hb.sent, e->hb.failures,
			e->hb.apd_starts, e->hb.downs, e->hb.apd_timeouts,
			e->hb.recoveries);
		if (e->hb.recoveries) {
			fprintf(out, " after %.2f s (longest)",
				(double)e->hb.outage_max_ns / 1e9);
		}
		fprintf(out, "; %u host(s) without it at the end\n",
			e->hosts_unavailable);
	}
}

void report_text(FILE *out, const struct phase_result *r, bool show_jobs)
{
	const struct workload *w = &r->w;
	struct dstats_group *total;
	size_t n;

	fprintf(out,
		"\n== phase %s: %u KiB blocks, %u%% read, %u%% random, "
		"iodepth %u per VMDK, %s%s\n",
		w->name, w->bs_bytes / 1024, w->read_pct, w->random_pct,
		w->iodepth,
		w->stable == UNSTABLE ? "UNSTABLE+COMMIT" : "FILE_SYNC",
		w->verify ? ", verified" : "");
	fprintf(out,
		"   fleet: %u host(s) x %u VM(s) x %u VMDK(s), %u datastore(s) "
		"placed %s: %u flow(s), nconnect %u; window %.2f s%s\n",
		r->shape.hosts, r->shape.vms, r->shape.vmdks,
		r->shape.datastores, place_policy_name(r->shape.policy),
		r->flows, r->nconnect, r->window_s,
		w->one_pass ? " (one pass)" : "");
	if (dstats_aggregate(r->jobs, r->keys, r->njobs, DSTATS_LEVEL_TOTAL,
			     &total, &n) == 0) {
		report_dir_line(out, "read", &total[0].s, DSTATS_READ,
				r->window_s);
		report_dir_line(out, "write", &total[0].s, DSTATS_WRITE,
				r->window_s);
		fprintf(out,
			"  verify: %" PRIu64 " units checked, %" PRIu64
			" mismatches; commits %" PRIu64
			", verifier changes %" PRIu64 ", writes resent %" PRIu64
			"; errors %" PRIu64 " (NOSPC %" PRIu64 ")\n",
			total[0].s.verified, total[0].s.mismatches,
			total[0].s.commits, total[0].s.verf_changes,
			total[0].s.resent, total[0].s.errors, total[0].s.nospc);
		free(total);
	}
	fprintf(out,
		"  connections: %" PRIu64 " breaks, %" PRIu64
		" reconnects, %" PRIu64 " calls resent, %" PRIu64
		" timeouts; heartbeats %" PRIu64 " (%" PRIu64
		" failed); .lck refreshes %" PRIu64 "\n",
		r->conn.breaks, r->conn.reconnects, r->conn.resent,
		r->conn.timeouts, r->conn.heartbeats,
		r->conn.heartbeat_failures, r->conn.lck_refreshes);
	report_esxi(out, r);
	report_stops(out, r);
	fprintf(out, "%-9s %-20s %10s %10s %10s %9s %8s %8s %8s %8s %6s %6s\n",
		"level", "name", "IOPS", "r-IOPS", "w-IOPS", "MiB/s", "mean-ms",
		"p50-ms", "p99-ms", "p99.9-ms", "errors", "mism");
	report_level(out, r, DSTATS_LEVEL_TOTAL);
	report_level(out, r, DSTATS_LEVEL_DATASTORE);
	report_level(out, r, DSTATS_LEVEL_HOST);
	report_level(out, r, DSTATS_LEVEL_VM);
	if (show_jobs) {
		report_level(out, r, DSTATS_LEVEL_JOB);
	}
	report_server_text(out, r);
}
