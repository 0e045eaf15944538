/*
 * sweep: hosts x datastores x four corners, a table and a plot (see
 * sweep.h).  Each fleet shape is a fresh fleet; its corners run as phases
 * of that fleet, writes first, so that the reads find data (and, with
 * --verify, check it).
 */
#include "perf/dsload/sweep.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perf/dsload/report.h"
#include "perf/dsload/run.h"

#define SWEEP_CORNERS_MAX 4
#define SWEEP_ROWS_MAX 1024
#define SWEEP_PATH_MAX (OPTS_PATH_MAX + 32)

static const struct sweep_corner sweep_corners[] = {
	{ "seqwrite", 65536, 0, 0, true },
	{ "seqread", 65536, 100, 0, true },
	{ "randwrite", 8192, 0, 100, false },
	{ "randread", 8192, 100, 100, false },
};

/* One line of the table: one corner on one fleet shape. */
struct sweep_row {
	unsigned hosts, datastores, vms, vmdks, flows;
	const struct sweep_corner *corner;
	double iops, mibps, lat_mean_ms, lat_p99_ms;
	uint64_t errors, mismatches;
};

const struct sweep_corner *sweep_corner_find(const char *name)
{
	for (size_t i = 0; i < sizeof(sweep_corners) / sizeof(*sweep_corners);
	     i++) {
		if (!strcmp(sweep_corners[i].name, name))
			return &sweep_corners[i];
	}
	return NULL;
}

int sweep_corners_parse(const char *list, const struct sweep_corner **out,
			size_t max)
{
	char buf[128], *save = NULL, *tok;
	size_t n = 0;

	if (strlen(list) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		const struct sweep_corner *c = sweep_corner_find(tok);

		if (!c || n == max)
			return -EINVAL;
		out[n++] = c;
	}
	return n ? (int)n : -EINVAL;
}

static void sweep_row_fill(struct sweep_row *row, const struct phase_result *r)
{
	struct dstats total;
	struct lat_hist all;

	dstats_init(&total);
	for (size_t i = 0; i < r->njobs; i++)
		dstats_merge(&total, &r->jobs[i]);
	dstats_lat_all(&total, &all);
	row->flows = r->flows;
	row->iops = dstats_iops(&total, DSTATS_DIRS, r->window_s);
	row->mibps = dstats_mibps(&total, DSTATS_DIRS, r->window_s);
	row->lat_mean_ms = lat_hist_mean_ns(&all) / 1e6;
	row->lat_p99_ms = lat_hist_percentile_ns(&all, 99.0) / 1e6;
	row->errors = total.errors;
	row->mismatches = total.mismatches;
}

static void sweep_table(FILE *out, const struct sweep_row *rows, size_t n)
{
	fprintf(out, "\n== sweep: %zu row(s)\n", n);
	fprintf(out, "%5s %5s %4s %5s %5s  %-9s %10s %9s %8s %8s %6s %6s\n",
		"hosts", "ds", "vms", "vmdks", "flows", "corner", "IOPS",
		"MiB/s", "mean-ms", "p99-ms", "errors", "mism");
	for (size_t i = 0; i < n; i++) {
		const struct sweep_row *r = &rows[i];

		fprintf(out,
			"%5u %5u %4u %5u %5u  %-9s %10.0f %9.1f %8.3f %8.3f "
			"%6llu %6llu\n",
			r->hosts, r->datastores, r->vms, r->vmdks, r->flows,
			r->corner->name, r->iops, r->mibps, r->lat_mean_ms,
			r->lat_p99_ms, (unsigned long long)r->errors,
			(unsigned long long)r->mismatches);
	}
}

static int sweep_row_cmp(const void *a, const void *b)
{
	const struct sweep_row *x = a, *y = b;

	if (x->corner != y->corner)
		return x->corner < y->corner ? -1 : 1;
	return (x->flows > y->flows) - (x->flows < y->flows);
}

/* sweep.dat: one gnuplot data block per corner, points by flows. */
static int sweep_dat_write(const char *path, struct sweep_row *rows, size_t n,
			   const struct sweep_corner **corners, size_t ncorners)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	qsort(rows, n, sizeof(*rows), sweep_row_cmp);
	for (size_t c = 0; c < ncorners; c++) {
		fprintf(f, "# %s: flows hosts datastores IOPS MiB/s\n",
			corners[c]->name);
		for (size_t i = 0; i < n; i++) {
			if (rows[i].corner == corners[c])
				fprintf(f, "%u %u %u %.1f %.2f\n",
					rows[i].flows, rows[i].hosts,
					rows[i].datastores, rows[i].iops,
					rows[i].mibps);
		}
		fprintf(f, "\n\n");
	}
	return fclose(f) ? -errno : 0;
}

/* One panel: the corners measured in MiB/s (@mibps) or in IOPS, as
 * points labelled hosts x datastores. */
static void sweep_gp_panel(FILE *f, const char *dat,
			   const struct sweep_corner **corners, size_t ncorners,
			   bool mibps)
{
	int col = mibps ? 5 : 4;
	bool first = true;

	for (size_t c = 0; c < ncorners; c++) {
		if (corners[c]->mibps != mibps)
			continue;
		fprintf(f,
			"%s '%s' index %zu using 1:%d with points pt 7 "
			"title '%s', \\\n    '' index %zu using "
			"1:%d:(sprintf(\"%%dx%%d\", $2, $3)) with labels "
			"offset 2.5,0 notitle",
			first ? "plot" : ", \\\n    ", dat, c, col,
			corners[c]->name, c, col);
		first = false;
	}
	fprintf(f, "%s\n", first ? "plot 0 notitle" : "");
}

static int sweep_gp_write(const char *path, const char *dat, const char *svg,
			  const struct sweep_corner **corners, size_t ncorners)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	fprintf(f,
		"# dsload sweep: throughput and IOPS against flows "
		"(host x datastore connections);\n"
		"# each point is labelled hosts x datastores\n"
		"set terminal svg size 900,900 dynamic enhanced\n"
		"set output '%s'\n"
		"set multiplot layout 2,1 title 'dsload sweep: one TCP flow "
		"per host and datastore'\n"
		"set grid\n"
		"set key top left\n"
		"set xlabel 'flows (hosts x datastores)'\n"
		"set xrange [0:*]\n"
		"set xtics 1\n"
		"set offsets 0.5, 0.5, 0, 0\n"
		"set yrange [0:*]\n"
		"set ylabel 'MiB/s'\n"
		"set title '64 KiB sequential'\n",
		svg);
	sweep_gp_panel(f, dat, corners, ncorners, true);
	fprintf(f, "set ylabel 'IOPS'\nset title '8 KiB random'\n");
	sweep_gp_panel(f, dat, corners, ncorners, false);
	fprintf(f, "unset multiplot\n");
	return fclose(f) ? -errno : 0;
}

/* Runs gnuplot on @script; a missing gnuplot is a warning. */
static void sweep_plot(const char *script)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		execlp("gnuplot", "gnuplot", script, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0)
		fprintf(stderr,
			"dsload: gnuplot %s failed (is gnuplot-nox "
			"installed?); "
			"the data is in the .dat file\n",
			script);
}

/* One fleet shape: the corners as phases.  Returns 0 or -errno. */
static int sweep_point(const struct dsload_opts *o, struct fleet_spec *spec,
		       const struct sweep_corner **corners, size_t ncorners,
		       struct run_sink *sink, struct sweep_row *rows,
		       size_t *nrows)
{
	struct workload ws[SWEEP_CORNERS_MAX];
	struct phase_result res[SWEEP_CORNERS_MAX];
	char errbuf[512], run[64];
	struct fleet *f;
	int err;

	for (size_t c = 0; c < ncorners; c++) {
		ws[c] = o->w;
		ws[c].bs_bytes = corners[c]->bs_bytes;
		ws[c].read_pct = corners[c]->read_pct;
		ws[c].random_pct = corners[c]->random_pct;
		workload_name_set(&ws[c]);
	}
	snprintf(run, sizeof(run), "h%u-d%u-v%u-k%u", spec->hosts,
		 spec->ndatastores, spec->vms, spec->vmdks);
	fprintf(stderr, "dsload: sweep point %s\n", run);
	err = fleet_new(spec, &f, errbuf, sizeof(errbuf));
	if (err) {
		fprintf(stderr, "dsload: %s: %s\n", run, errbuf);
		return err;
	}
	sink->run_name = run;
	err = run_fleet_phases(f, ws, ncorners, sink, res);
	fleet_free(f);
	if (err)
		return err;
	for (size_t c = 0; c < ncorners && *nrows < SWEEP_ROWS_MAX; c++) {
		struct sweep_row *row = &rows[(*nrows)++];

		row->hosts = spec->hosts;
		row->datastores = spec->ndatastores;
		row->vms = spec->vms;
		row->vmdks = spec->vmdks;
		row->corner = corners[c];
		sweep_row_fill(row, &res[c]);
		fleet_result_fini(&res[c]);
	}
	return 0;
}

int sweep_main(const struct dsload_opts *o)
{
	const struct sweep_corner *corners[SWEEP_CORNERS_MAX];
	char dir[OPTS_PATH_MAX], path[SWEEP_PATH_MAX], dat[SWEEP_PATH_MAX];
	char svg[SWEEP_PATH_MAX];
	struct run_sink sink = { .out = stdout,
				 .show_jobs = o->show_jobs,
				 .admin_host = o->spec.server,
				 .admin_port = o->admin_port };
	struct fleet_spec spec = o->spec;
	struct sweep_row *rows;
	size_t nrows = 0;
	json_t *root;
	int n, err = 0, status;

	n = sweep_corners_parse(o->corners, corners, SWEEP_CORNERS_MAX);
	if (n < 0) {
		fprintf(stderr, "dsload: --corners: one or more of seqwrite, "
				"seqread, randwrite, randread\n");
		return DSLOAD_EXIT_USAGE;
	}
	snprintf(dir, sizeof(dir), "%s",
		 o->out_dir[0] ? o->out_dir : "dsload-sweep");
	if (mkdir(dir, 0755) && errno != EEXIST) {
		fprintf(stderr, "dsload: %s: %s\n", dir, strerror(errno));
		return DSLOAD_EXIT_USAGE;
	}
	snprintf(path, sizeof(path), "%s/sweep.csv", dir);
	sink.csv = fopen(path, "w");
	rows = calloc(SWEEP_ROWS_MAX, sizeof(*rows));
	sink.json = json_array();
	root = json_pack("{s:s, s:s, s:o}", "command", "sweep", "server",
			 o->spec.server, "phases", sink.json);
	if (!sink.csv || !rows || !root) {
		fprintf(stderr, "dsload: %s: cannot write\n", path);
		status = DSLOAD_EXIT_USAGE;
		goto out;
	}
	report_csv_header(sink.csv);
	if (!o->placement_set)
		spec.policy = PLACE_SPREAD;
	run_signals_block();
	for (unsigned h = 0; h < o->hosts.n && !err; h++) {
		for (unsigned d = 0; d < o->ndatastores.n && !err; d++) {
			for (unsigned v = 0; v < o->vms.n && !err; v++) {
				unsigned nk = o->vmdks_auto ? 1 : o->vmdks.n;

				for (unsigned k = 0; k < nk && !err; k++) {
					spec.hosts = o->hosts.v[h];
					if (!o->datastores_named)
						opts_datastores_count(
							&spec,
							o->ndatastores.v[d]);
					spec.vms = o->vms.v[v];
					spec.vmdks = o->vmdks_auto
							     ? spec.ndatastores
							     : o->vmdks.v[k];
					err = sweep_point(o, &spec, corners,
							  (size_t)n, &sink,
							  rows, &nrows);
				}
			}
		}
	}
	sweep_table(stdout, rows, nrows);
	snprintf(dat, sizeof(dat), "%s/sweep.dat", dir);
	snprintf(svg, sizeof(svg), "%s/sweep.svg", dir);
	snprintf(path, sizeof(path), "%s/sweep.gp", dir);
	if (!sweep_dat_write(dat, rows, nrows, corners, (size_t)n) &&
	    !sweep_gp_write(path, dat, svg, corners, (size_t)n))
		sweep_plot(path);
	snprintf(path, sizeof(path), "%s/sweep.json", dir);
	report_json_write(path, root);
	printf("dsload: results in %s/ (sweep.csv sweep.json sweep.dat "
	       "sweep.gp sweep.svg)\n",
	       dir);
	status = err ? DSLOAD_EXIT_USAGE : run_outcome_report(stdout, &sink.oc);
out:
	json_decref(root);
	free(rows);
	if (sink.csv)
		fclose(sink.csv);
	return status;
}
