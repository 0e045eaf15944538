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
#include "perf/dsload/report.h"

#define RUN_PREFILL_BS (256u * 1024u)
#define RUN_ADMIN_TIMEOUT_MS 2000

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
		if (r->jobs[i].verf_changes > changes)
			changes = r->jobs[i].verf_changes;
	}
	out->verf_changes += changes;
	if (r->fatal)
		out->stopped = true;
}

int run_outcome_report(FILE *out, const struct run_outcome *o)
{
	if (o->verf_changes)
		fprintf(out,
			"dsload: the server's write verifier changed %" PRIu64
			" time(s) (a restart): %" PRIu64
			" unstable write(s) sent again\n",
			o->verf_changes, o->resent);
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

static void run_admin_window(void *arg, bool end, int64_t now_ns)
{
	struct run_admin *ra = arg;
	char *vols = NULL, *hosts = NULL;
	int err;

	if (ra->err)
		return;
	err = admin_get(ra->host, ra->port, "/volumes", RUN_ADMIN_TIMEOUT_MS,
			&vols, ra->errmsg, sizeof(ra->errmsg));
	if (!err)
		err = admin_get(ra->host, ra->port, "/hosts",
				RUN_ADMIN_TIMEOUT_MS, &hosts, ra->errmsg,
				sizeof(ra->errmsg));
	if (!err)
		err = srv_sample_parse(vols, hosts, now_ns,
				       end ? &ra->b : &ra->a, ra->errmsg,
				       sizeof(ra->errmsg));
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
		if (!ra)
			return -ENOMEM;
		run_admin_observer(ra, &obs);
	}
	for (size_t i = 0; i < n && !err; i++) {
		struct phase_result r;

		if (sink->pause && i > 0)
			run_pause(ws[i].name);
		if (ra) {
			memset(ra, 0, sizeof(*ra));
			ra->port = sink->admin_port;
			ra->host = sink->admin_host;
		}
		err = fleet_run(f, &ws[i], ra ? &obs : NULL, &r, errbuf,
				sizeof(errbuf));
		if (err) {
			fprintf(stderr, "dsload: phase %s: %s\n", ws[i].name,
				errbuf);
			break;
		}
		if (ra)
			run_admin_view(ra, &r);
		report_text(sink->out, &r, sink->show_jobs);
		fflush(sink->out);
		if (sink->json)
			report_json_phase(sink->json, &r);
		if (sink->csv)
			report_csv_phase(sink->csv, sink->run_name, &r);
		run_outcome_add(&sink->oc, &r);
		if (results)
			results[i] = r;
		else
			fleet_result_fini(&r);
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
		if (ws[n].bs_bytes > o->spec.vmdk_bytes)
			ws[n].bs_bytes = (uint32_t)o->spec.vmdk_bytes;
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

	if (!csv)
		fprintf(stderr, "dsload: %s: %s\n", path, strerror(errno));
	else
		report_csv_header(csv);
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
		if (!json_path[0])
			snprintf(json_path, sizeof(json_path), "%s/run.json",
				 o->out_dir);
		if (!csv_path[0])
			snprintf(csv_path, sizeof(csv_path), "%s/run.csv",
				 o->out_dir);
	}
	if (csv_path[0] && !(sink.csv = run_csv_open(csv_path)))
		return DSLOAD_EXIT_USAGE;
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
	if (root && report_json_write(json_path, root))
		fprintf(stderr, "dsload: %s: cannot write\n", json_path);
out:
	json_decref(root);
	if (sink.csv)
		fclose(sink.csv);
	return status;
}
