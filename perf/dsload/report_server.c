// SPDX-License-Identifier: Apache-2.0
/*
 * report_server: the server's view of a phase (srvview.h) in the text,
 * JSON and CSV reports, beside the client's (see report.h).
 */
#include <stdlib.h>
#include <string.h>

#include "perf/dsload/report.h"

static double rate_iops(const struct srv_rate *r)
{
	return r->iops[SRV_READ] + r->iops[SRV_WRITE];
}

static double rate_mibps(const struct srv_rate *r)
{
	return r->mibps[SRV_READ] + r->mibps[SRV_WRITE];
}

/* Mean latency of READs and WRITEs together, weighted by their rates. */
static double rate_lat_ms(const struct srv_rate *r)
{
	double n = rate_iops(r);

	if (n <= 0) {
		return 0;
	}
	return (r->lat_ms[SRV_READ] * r->iops[SRV_READ] +
		r->lat_ms[SRV_WRITE] * r->iops[SRV_WRITE]) /
	       n;
}

static void report_server_row(FILE *out, const char *level,
			      const struct srv_rate *r)
{
	fprintf(out, "%-11s %-18s %10.0f %10.0f %10.0f %9.1f %8.3f\n", level,
		r->name, rate_iops(r), r->iops[SRV_READ], r->iops[SRV_WRITE],
		rate_mibps(r), rate_lat_ms(r));
}

static double ratio(double server, double client)
{
	return client > 0 ? server / client : 0.0;
}

void report_server_text(FILE *out, const struct phase_result *r)
{
	const struct srv_view *v = &r->server;

	if (!v->sampled) {
		fprintf(out, "  server view: not sampled (--admin-port: "
			     "dsnfsd's admin endpoint)\n");
		return;
	}
	if (!v->ok) {
		fprintf(out, "  server view: unavailable: %s\n", v->why);
		return;
	}
	/* Ratios against the client's counts over the same interval as the
	 * server's samples, not over the client's window: sampling late (a
	 * busy machine) then costs nothing. */
	fprintf(out,
		"  server view (dsnfsd /volumes and /hosts over %.2f s): "
		"server/client IOPS %.2f, MiB/s %.2f",
		v->seconds, ratio(rate_iops(&v->total), v->client_iops),
		ratio(rate_mibps(&v->total), v->client_mibps));
	if (v->client_write_mibps > 0) {
		fprintf(out, ", write bytes %.2f (write amplification)",
			ratio(v->total.mibps[SRV_WRITE],
			      v->client_write_mibps));
	}
	fputc('\n', out);
	fprintf(out, "%-11s %-18s %10s %10s %10s %9s %8s\n", "level", "name",
		"IOPS", "r-IOPS", "w-IOPS", "MiB/s", "mean-ms");
	report_server_row(out, "server", &v->total);
	for (size_t i = 0; i < v->nvol; i++) {
		report_server_row(out, "server-ds", &v->vol[i]);
	}
	for (size_t i = 0; i < v->nhost; i++) {
		report_server_row(out, "server-host", &v->host[i]);
	}
}

static json_t *report_server_rate(const struct srv_rate *r)
{
	static const char *const dirs[SRV_DIRS] = { "read", "write", "other" };
	json_t *o = json_pack("{s:s, s:f, s:f, s:f}", "name", r->name, "iops",
			      rate_iops(r), "mib_per_s", rate_mibps(r),
			      "lat_mean_ms", rate_lat_ms(r));

	for (int d = 0; o && d < SRV_DIRS; d++) {
		json_object_set_new(o, dirs[d],
				    json_pack("{s:f, s:f, s:f}", "iops",
					      r->iops[d], "mib_per_s",
					      r->mibps[d], "lat_mean_ms",
					      r->lat_ms[d]));
	}
	return o;
}

json_t *report_server_json(const struct phase_result *r)
{
	const struct srv_view *v = &r->server;
	json_t *o, *vols, *hosts;

	if (!v->sampled) {
		return json_null();
	}
	if (!v->ok) {
		return json_pack("{s:s}", "unavailable", v->why);
	}
	vols = json_array();
	hosts = json_array();
	for (size_t i = 0; i < v->nvol; i++) {
		json_array_append_new(vols, report_server_rate(&v->vol[i]));
	}
	for (size_t i = 0; i < v->nhost; i++) {
		json_array_append_new(hosts, report_server_rate(&v->host[i]));
	}
	o = json_pack("{s:f, s:o, s:o, s:o, s:{s:f, s:f, s:f}}", "seconds",
		      v->seconds, "total", report_server_rate(&v->total),
		      "datastores", vols, "hosts", hosts,
		      "client_same_interval", "iops", v->client_iops,
		      "mib_per_s", v->client_mibps, "write_mib_per_s",
		      v->client_write_mibps);
	return o ? o : json_null();
}

static void report_server_csv_row(FILE *out, const char *run,
				  const struct phase_result *r,
				  const char *level, const struct srv_rate *s)
{
	const struct workload *w = &r->w;

	fprintf(out,
		"%s,%s,%s,%s,,%u,%u,%u,%u,%s,%u,%u,%u,%u,%u,%u,%.3f,%.1f,%.1f,"
		"%.1f,%.2f,%.2f,%.2f,%.4f,,,,,,\n",
		run, w->name, level, s->name, r->shape.hosts, r->shape.vms,
		r->shape.vmdks, r->shape.datastores,
		place_policy_name(r->shape.policy), r->flows, r->nconnect,
		w->bs_bytes, w->read_pct, w->random_pct, w->iodepth,
		r->server.seconds, rate_iops(s), s->iops[SRV_READ],
		s->iops[SRV_WRITE], rate_mibps(s), s->mibps[SRV_READ],
		s->mibps[SRV_WRITE], rate_lat_ms(s));
}

void report_server_csv(FILE *out, const char *run, const struct phase_result *r)
{
	const struct srv_view *v = &r->server;

	if (!v->ok) {
		return;
	}
	report_server_csv_row(out, run, r, "server-total", &v->total);
	for (size_t i = 0; i < v->nvol; i++) {
		report_server_csv_row(out, run, r, "server-datastore",
				      &v->vol[i]);
	}
	for (size_t i = 0; i < v->nhost; i++) {
		report_server_csv_row(out, run, r, "server-host", &v->host[i]);
	}
}
