// SPDX-License-Identifier: Apache-2.0
/*
 * report_out: the machine-readable forms of a phase (see report.h): JSON
 * through jansson and CSV, with the same rows as the text summary.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/base/base.h"
#include "perf/dsload/report.h"

static const enum dstats_level report_levels[] = {
	DSTATS_LEVEL_TOTAL, DSTATS_LEVEL_DATASTORE, DSTATS_LEVEL_HOST,
	DSTATS_LEVEL_VM,    DSTATS_LEVEL_JOB,
};

static json_t *report_json_lat(const struct lat_hist *h)
{
	return json_pack("{s:I, s:f, s:f, s:f, s:f, s:f, s:f}", "samples",
			 (json_int_t)h->count, "min_ms", h->min_ns / 1e6,
			 "mean_ms", lat_hist_mean_ns(h) / 1e6, "p50_ms",
			 lat_hist_percentile_ns(h, 50.0) / 1e6, "p99_ms",
			 lat_hist_percentile_ns(h, 99.0) / 1e6, "p99_9_ms",
			 lat_hist_percentile_ns(h, 99.9) / 1e6, "max_ms",
			 h->max_ns / 1e6);
}

static json_t *report_json_dir(const struct dstats *s, enum dstats_dir d,
			       double window_s)
{
	return json_pack("{s:I, s:I, s:f, s:f, s:o}", "ios",
			 (json_int_t)s->ops[d], "bytes",
			 (json_int_t)s->bytes[d], "iops",
			 dstats_iops(s, d, window_s), "mib_per_s",
			 dstats_mibps(s, d, window_s), "lat",
			 report_json_lat(&s->lat[d]));
}

static json_t *report_json_group(const struct phase_result *r,
				 const struct dstats_group *g)
{
	const struct dstats *s = &g->s;
	struct lat_hist all;
	char name[96];

	dstats_lat_all(s, &all);
	report_group_name(r, g, name, sizeof(name));
	return json_pack(
		"{s:s, s:s, s:I, s:f, s:f, s:o, s:o, s:o, s:I, s:I, s:I, s:I, "
		"s:s?}",
		"level", dstats_level_name(g->level), "name", name, "vmdks",
		(json_int_t)g->njobs, "iops",
		dstats_iops(s, DSTATS_DIRS, r->window_s), "mib_per_s",
		dstats_mibps(s, DSTATS_DIRS, r->window_s), "lat",
		report_json_lat(&all), "read",
		report_json_dir(s, DSTATS_READ, r->window_s), "write",
		report_json_dir(s, DSTATS_WRITE, r->window_s), "errors",
		(json_int_t)s->errors, "nospc", (json_int_t)s->nospc,
		"mismatches", (json_int_t)s->mismatches, "verified_units",
		(json_int_t)s->verified, "stopped",
		g->level == DSTATS_LEVEL_JOB && r->job_stop[g->id][0]
			? r->job_stop[g->id]
			: NULL);
}

/* What ESXi would have done (report.c, report_esxi()): NULL on no memory,
 * which the caller's json_object_set_new() refuses. */
static json_t *report_esxi_json(const struct phase_result *r)
{
	json_t *ds = json_array();
	json_t *o;

	for (unsigned d = 0; ds && d < r->shape.datastores && d < FLEET_DS_MAX;
	     d++) {
		const struct fleet_esxi_ds *e = &r->esxi[d];

		if (json_array_append_new(
			    ds,
			    json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, "
				      "s:f, s:I}",
				      "name", r->ds_names[d], "heartbeats",
				      (json_int_t)e->hb.sent,
				      "heartbeat_failures",
				      (json_int_t)e->hb.failures, "apd_starts",
				      (json_int_t)e->hb.apd_starts,
				      "marked_down", (json_int_t)e->hb.downs,
				      "apd_timeouts",
				      (json_int_t)e->hb.apd_timeouts,
				      "back_in_service",
				      (json_int_t)e->hb.recoveries,
				      "outage_max_s",
				      (double)e->hb.outage_max_ns / 1e9,
				      "hosts_unavailable",
				      (json_int_t)e->hosts_unavailable))) {
			json_decref(ds);
			return NULL;
		}
	}
	if (!ds) {
		return NULL;
	}
	o = json_pack("{s:I, s:I, s:I, s:o}", "version",
		      (json_int_t)r->esxi_version, "connections_per_host",
		      (json_int_t)r->conns_per_host, "shared_datastores",
		      (json_int_t)r->shared_datastores, "datastores", ds);
	return o;
}

int report_json_phase(json_t *phases, const struct phase_result *r)
{
	const struct workload *w = &r->w;
	json_t *phase, *rows, *ds;
	struct dstats_group *groups;
	size_t n;

	ds = json_array();
	rows = json_array();
	if (!ds || !rows) {
		goto fail;
	}
	for (unsigned d = 0; d < r->shape.datastores; d++) {
		json_array_append_new(ds, json_string(r->ds_names[d]));
	}
	for (size_t l = 0; l < ARRAY_SIZE(report_levels); l++) {
		if (dstats_aggregate(r->jobs, r->keys, r->njobs,
				     report_levels[l], &groups, &n)) {
			goto fail;
		}
		for (size_t i = 0; i < n; i++) {
			json_array_append_new(rows,
					      report_json_group(r, &groups[i]));
		}
		free(groups);
	}
	phase = json_pack(
		"{s:s, s:{s:I, s:I, s:I, s:I, s:f, s:f, s:s, s:I, s:b, s:b},"
		" s:{s:I, s:I, s:I, s:o, s:s, s:I, s:I}, s:f, s:o,"
		" s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I}, s:s?, s:o}",
		"phase", w->name, "workload", "bs", (json_int_t)w->bs_bytes,
		"read_pct", (json_int_t)w->read_pct, "random_pct",
		(json_int_t)w->random_pct, "iodepth", (json_int_t)w->iodepth,
		"ramp_s", w->ramp_s, "runtime_s", w->run_s, "stable",
		w->stable == UNSTABLE ? "unstable" : "file_sync",
		"commit_every", (json_int_t)w->commit_every, "verify",
		(int)w->verify, "one_pass", (int)w->one_pass, "fleet", "hosts",
		(json_int_t)r->shape.hosts, "vms_per_host",
		(json_int_t)r->shape.vms, "vmdks_per_vm",
		(json_int_t)r->shape.vmdks, "datastores", ds, "placement",
		place_policy_name(r->shape.policy), "flows",
		(json_int_t)r->flows, "nconnect", (json_int_t)r->nconnect,
		"window_s", r->window_s, "rows", rows, "connections", "breaks",
		(json_int_t)r->conn.breaks, "reconnects",
		(json_int_t)r->conn.reconnects, "calls_resent",
		(json_int_t)r->conn.resent, "timeouts",
		(json_int_t)r->conn.timeouts, "heartbeats",
		(json_int_t)r->conn.heartbeats, "heartbeat_failures",
		(json_int_t)r->conn.heartbeat_failures, "lck_refreshes",
		(json_int_t)r->conn.lck_refreshes, "stopped",
		r->fatal ? r->fatal_msg : NULL, "server",
		report_server_json(r));
	if (!phase || json_object_set_new(phase, "esxi", report_esxi_json(r))) {
		json_decref(phase);
		return -ENOMEM;
	}
	return json_array_append_new(phases, phase) ? -ENOMEM : 0;
fail:
	json_decref(ds);
	json_decref(rows);
	return -ENOMEM;
}

int report_json_write(const char *path, json_t *root)
{
	if (json_dump_file(root, path, JSON_INDENT(2) | JSON_SORT_KEYS)) {
		return -EIO;
	}
	return 0;
}

void report_csv_header(FILE *out)
{
	fputs("run,phase,level,name,vmdks,hosts,vms_per_host,vmdks_per_vm,"
	      "datastores,placement,flows,nconnect,bs,read_pct,random_pct,"
	      "iodepth,window_s,iops,read_iops,write_iops,mib_per_s,"
	      "read_mib_per_s,write_mib_per_s,lat_mean_ms,lat_p50_ms,"
	      "lat_p99_ms,lat_p99_9_ms,errors,nospc,mismatches\n",
	      out);
}

int report_csv_phase(FILE *out, const char *run, const struct phase_result *r)
{
	const struct workload *w = &r->w;
	struct dstats_group *groups;
	struct lat_hist all;
	char name[96];
	size_t n;

	for (size_t l = 0; l < ARRAY_SIZE(report_levels); l++) {
		if (dstats_aggregate(r->jobs, r->keys, r->njobs,
				     report_levels[l], &groups, &n)) {
			return -ENOMEM;
		}
		for (size_t i = 0; i < n; i++) {
			const struct dstats *s = &groups[i].s;

			dstats_lat_all(s, &all);
			report_group_name(r, &groups[i], name, sizeof(name));
			fprintf(out,
				"%s,%s,%s,%s,%zu,%u,%u,%u,%u,%s,%u,%u,%u,%u,%u,"
				"%u,%.3f,%.1f,%.1f,%.1f,%.2f,%.2f,%.2f,%.4f,"
				"%.4f,%.4f,%.4f,%" PRIu64 ",%" PRIu64
				",%" PRIu64 "\n",
				run, w->name,
				dstats_level_name(groups[i].level), name,
				groups[i].njobs, r->shape.hosts, r->shape.vms,
				r->shape.vmdks, r->shape.datastores,
				place_policy_name(r->shape.policy), r->flows,
				r->nconnect, w->bs_bytes, w->read_pct,
				w->random_pct, w->iodepth, r->window_s,
				dstats_iops(s, DSTATS_DIRS, r->window_s),
				dstats_iops(s, DSTATS_READ, r->window_s),
				dstats_iops(s, DSTATS_WRITE, r->window_s),
				dstats_mibps(s, DSTATS_DIRS, r->window_s),
				dstats_mibps(s, DSTATS_READ, r->window_s),
				dstats_mibps(s, DSTATS_WRITE, r->window_s),
				lat_hist_mean_ns(&all) / 1e6,
				lat_hist_percentile_ns(&all, 50.0) / 1e6,
				lat_hist_percentile_ns(&all, 99.0) / 1e6,
				lat_hist_percentile_ns(&all, 99.9) / 1e6,
				s->errors, s->nospc, s->mismatches);
		}
		free(groups);
	}
	report_server_csv(out, run, r);
	return 0;
}
