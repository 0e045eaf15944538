// SPDX-License-Identifier: Apache-2.0
/*
 * run: `dsload run` and the phase loop shared by every command (see
 * run.h).
 */
#include "perf/dsload/run.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perf/dsload/admin.h"
#include "perf/dsload/clock.h"
#include "perf/dsload/report.h"

#define RUN_PREFILL_BS (256u * 1024u)
#define RUN_ADMIN_TIMEOUT_MS 2000
#define RUN_ADMIN_TRIES 3
#define RUN_ADMIN_FAST_NS (20 * DSLOAD_NS_PER_MS)

void run_signals_block(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
}

static void run_pause(const char *next)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	fprintf(stderr,
		"dsload: paused before phase %s: kill -USR1 %d to go on\n",
		next, (int)getpid());
	sigwait(&set, &sig);
	fprintf(stderr, "dsload: resuming\n");
}

void run_outcome_add(struct run_outcome *out, const struct phase_result *r)
{
	uint64_t changes = 0;

	/* Every VMDK sees a restart: count the restarts, not the sightings. */
	for (size_t i = 0; i < r->njobs; i++) {
		out->mismatches += r->jobs[i].mismatches;
		out->errors += r->jobs[i].errors;
		out->resent += r->jobs[i].resent;
		if (r->jobs[i].verf_changes > changes) {
			changes = r->jobs[i].verf_changes;
		}
	}
	out->verf_changes += changes;
	if (r->fatal) {
		out->stopped = true;
	}
}

int run_outcome_report(FILE *out, const struct run_outcome *o)
{
	if (o->verf_changes) {
		fprintf(out,
			"dsload: the server's write verifier changed %" PRIu64
			" time(s) (a restart): %" PRIu64
			" unstable write(s) sent again\n",
			o->verf_changes, o->resent);
	}
	if (o->mismatches || o->errors || o->stopped) {
		fprintf(out,
			"dsload: FAILED: %" PRIu64
			" verification mismatch(es), "
			"%" PRIu64 " I/O error(s)%s\n",
			o->mismatches, o->errors,
			o->stopped ? ", VMDK generator(s) stopped" : "");
		return DSLOAD_EXIT_FAILED;
	}
	fprintf(out, "dsload: ok\n");
	return DSLOAD_EXIT_OK;
}

/* The client's totals halfway between @x and @y. */
static void run_progress_mid(const struct progress_sample *x,
			     const struct progress_sample *y,
			     struct progress_sample *mid)
{
	*mid = *y;
	mid->at_ns = x->at_ns + (y->at_ns - x->at_ns) / 2;
	for (int d = 0; d < DSTATS_DIRS; d++) {
		mid->ops[d] = x->ops[d] + (y->ops[d] - x->ops[d]) / 2;
		mid->bytes[d] = x->bytes[d] + (y->bytes[d] - x->bytes[d]) / 2;
	}
}

/*
 * GETs @path and dates it: the server reads its counters somewhere
 * inside the request, so the middle of the request is the sample's time,
 * within half its duration, and the client's totals are taken for the
 * same instant (halfway between before and after).  A slow request is
 * asked again, up to RUN_ADMIN_TRIES times, and the fastest one kept.
 */
static int run_admin_dated_get(struct run_admin *ra, const char *path,
			       char **body, struct progress_sample *client)
{
	int64_t best = INT64_MAX;
	int err = 0;

	*body = NULL;
	for (int i = 0; i < RUN_ADMIN_TRIES && best > RUN_ADMIN_FAST_NS; i++) {
		struct progress_sample before, after;
		char *b = NULL;

		fleet_progress_sample(ra->fleet, &before);
		err = admin_get(ra->host, ra->port, path, RUN_ADMIN_TIMEOUT_MS,
				&b, ra->errmsg, sizeof(ra->errmsg));
		if (err) {
			break;
		}
		fleet_progress_sample(ra->fleet, &after);
		if (after.at_ns - before.at_ns < best) {
			free(*body);
			*body = b;
			best = after.at_ns - before.at_ns;
			run_progress_mid(&before, &after, client);
		} else {
			free(b);
		}
	}
	if (err) {
		free(*body);
		*body = NULL;
	}
	return err;
}

static void run_admin_window(void *arg, bool end, int64_t now_ns)
{
	struct run_admin *ra = arg;
	struct progress_sample *client = end ? &ra->cb : &ra->ca, unused;
	char *vols = NULL, *hosts = NULL;
	int err;

	(void)now_ns;
	if (ra->err) {
		return;
	}
	err = run_admin_dated_get(ra, "/volumes", &vols, client);
	if (!err) {
		err = run_admin_dated_get(ra, "/hosts", &hosts, &unused);
	}
	if (!err) {
		err = srv_sample_parse(vols, hosts, client->at_ns,
				       end ? &ra->b : &ra->a, ra->errmsg,
				       sizeof(ra->errmsg));
	}
	free(vols);
	free(hosts);
	ra->err = err;
}

void run_admin_observer(struct run_admin *ra, struct fleet_observer *obs)
{
	obs->window = run_admin_window;
	obs->arg = ra;
}

/* The server's view of phase @r from @ra's samples. */
static void run_admin_view(const struct run_admin *ra, struct phase_result *r)
{
	double sec = dsload_ns_to_s(ra->cb.at_ns - ra->ca.at_ns);
	uint64_t ops = 0, bytes = 0;

	if (ra->err) {
		memset(&r->server, 0, sizeof(r->server));
		r->server.sampled = true;
		snprintf(r->server.why, sizeof(r->server.why), "%s",
			 ra->errmsg);
		return;
	}
	srv_view_compute(&ra->a, &ra->b,
			 (const char(*)[SRV_NAME_MAX])r->ds_names,
			 r->shape.datastores, "127.0.1.", &r->server);
	if (sec <= 0) {
		return;
	}
	for (int d = 0; d < DSTATS_DIRS; d++) {
		ops += ra->cb.ops[d] - ra->ca.ops[d];
		bytes += ra->cb.bytes[d] - ra->ca.bytes[d];
	}
	r->server.client_iops = (double)ops / sec;
	r->server.client_mibps = (double)bytes / (1024.0 * 1024.0) / sec;
	r->server.client_write_mibps = (double)(ra->cb.bytes[DSTATS_WRITE] -
						ra->ca.bytes[DSTATS_WRITE]) /
				       (1024.0 * 1024.0) / sec;
}

int run_fleet_phases(struct fleet *f, const struct workload *ws, size_t n,
		     struct run_sink *sink, struct phase_result *results)
{
	struct run_admin *ra = NULL;
	struct fleet_observer obs = { 0 };
	char errbuf[512];
	int err = 0;

	if (sink->admin_port) {
		ra = calloc(1, sizeof(*ra));
		if (!ra) {
			return -ENOMEM;
		}
		run_admin_observer(ra, &obs);
	}
	for (size_t i = 0; i < n && !err; i++) {
		struct phase_result r;

		if (sink->pause && i > 0) {
			run_pause(ws[i].name);
		}
		if (ra) {
			memset(ra, 0, sizeof(*ra));
			ra->port = sink->admin_port;
			ra->host = sink->admin_host;
			ra->fleet = f;
		}
		err = fleet_run(f, &ws[i], ra ? &obs : NULL, &r, errbuf,
				sizeof(errbuf));
		if (err) {
			fprintf(stderr, "dsload: phase %s: %s\n", ws[i].name,
				errbuf);
			break;
		}
		if (ra) {
			run_admin_view(ra, &r);
		}
		report_text(sink->out, &r, sink->show_jobs);
		fflush(sink->out);
		if (sink->json) {
			report_json_phase(sink->json, &r);
		}
		if (sink->csv) {
			report_csv_phase(sink->csv, sink->run_name, &r);
		}
		run_outcome_add(&sink->oc, &r);
		if (results) {
			results[i] = r;
		} else {
			fleet_result_fini(&r);
		}
	}
	free(ra);
	return err;
}

/* The phases of `dsload run`: the prefill, then one per read %. */
static size_t run_workloads(const struct dsload_opts *o, struct workload *ws)
{
	size_t n = 0;

	if (o->prefill) {
		ws[n] = o->w;
		ws[n].bs_bytes = RUN_PREFILL_BS;
		if (ws[n].bs_bytes > o->spec.vmdk_bytes) {
			ws[n].bs_bytes = (uint32_t)o->spec.vmdk_bytes;
		}
		ws[n].read_pct = 0;
		ws[n].random_pct = 0;
		ws[n].iodepth = 4;
		ws[n].one_pass = true;
		snprintf(ws[n].name, sizeof(ws[n].name), "prefill");
		n++;
	}
	for (unsigned i = 0; i < o->read_pcts.n; i++, n++) {
		ws[n] = o->w;
		ws[n].read_pct = o->read_pcts.v[i];
		workload_name_set(&ws[n]);
	}
	return n;
}

static FILE *run_csv_open(const char *path)
{
	FILE *csv = fopen(path, "w");

	if (!csv) {
		fprintf(stderr, "dsload: %s: %s\n", path, strerror(errno));
	} else {
		report_csv_header(csv);
	}
	return csv;
}

int run_main(const struct dsload_opts *o)
{
	struct workload ws[OPTS_LIST_MAX + 1];
	struct run_sink sink = { .out = stdout,
				 .run_name = "run",
				 .show_jobs = o->show_jobs,
				 .pause = o->pause_between_phases,
				 .admin_host = o->spec.server,
				 .admin_port = o->admin_port };
	char errbuf[512], json_path[OPTS_PATH_MAX + 16];
	char csv_path[OPTS_PATH_MAX + 16];
	struct fleet *f = NULL;
	json_t *root = NULL;
	size_t n = run_workloads(o, ws);
	int err, status;

	snprintf(json_path, sizeof(json_path), "%s", o->json_path);
	snprintf(csv_path, sizeof(csv_path), "%s", o->csv_path);
	if (o->out_dir[0]) {
		mkdir(o->out_dir, 0755);
		if (!json_path[0]) {
			snprintf(json_path, sizeof(json_path), "%s/run.json",
				 o->out_dir);
		}
		if (!csv_path[0]) {
			snprintf(csv_path, sizeof(csv_path), "%s/run.csv",
				 o->out_dir);
		}
	}
	if (csv_path[0] && !(sink.csv = run_csv_open(csv_path))) {
		return DSLOAD_EXIT_USAGE;
	}
	if (json_path[0]) {
		sink.json = json_array();
		root = json_pack("{s:s, s:s, s:o}", "command", "run", "server",
				 o->spec.server, "phases", sink.json);
	}
	run_signals_block();
	err = fleet_new(&o->spec, &f, errbuf, sizeof(errbuf));
	if (err) {
		fprintf(stderr, "dsload: %s\n", errbuf);
		status = DSLOAD_EXIT_USAGE;
		goto out;
	}
	err = run_fleet_phases(f, ws, n, &sink, NULL);
	fleet_free(f);
	if (err) {
		status = DSLOAD_EXIT_USAGE;
		goto out;
	}
	status = run_outcome_report(stdout, &sink.oc);
	if (root && report_json_write(json_path, root)) {
		fprintf(stderr, "dsload: %s: cannot write\n", json_path);
	}
out:
	json_decref(root);
	if (sink.csv) {
		fclose(sink.csv);
	}
	return status;
}
