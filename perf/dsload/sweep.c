// SPDX-License-Identifier: Apache-2.0
/*
 * sweep: hosts x datastores x four corners, a table and a plot (see
 * sweep.h).  Each fleet shape is a fresh fleet; its corners run as phases
 * of that fleet, writes first, so that the reads find data (and, with
 * --verify, check it).
 */
#include "perf/dsload/sweep.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nfsd/base/base.h"
#include "perf/dsload/plot.h"
#include "perf/dsload/profile.h"
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
	for (size_t i = 0; i < ARRAY_SIZE(sweep_corners); i++) {
		if (!strcmp(sweep_corners[i].name, name)) {
			return &sweep_corners[i];
		}
	}
	return NULL;
}

int sweep_corners_parse(const char *list, const struct sweep_corner **out,
			size_t max)
{
	char buf[128], *save = NULL, *tok;
	size_t n = 0;

	if (strlen(list) >= sizeof(buf)) {
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		const struct sweep_corner *c = sweep_corner_find(tok);

		if (!c || n == max) {
			return -EINVAL;
		}
		out[n++] = c;
	}
	return n ? (int)n : -EINVAL;
}

static void sweep_row_fill(struct sweep_row *row, const struct phase_result *r)
{
	struct dstats total;
	struct lat_hist all;

	dstats_init(&total);
	for (size_t i = 0; i < r->njobs; i++) {
		dstats_merge(&total, &r->jobs[i]);
	}
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

	if (x->corner != y->corner) {
		return x->corner < y->corner ? -1 : 1;
	}
	return (x->flows > y->flows) - (x->flows < y->flows);
}

/* A profile's model drawn beside the sweep (--model NAME). */
struct sweep_model {
	bool on;
	struct profile *p;
	struct model_params m;
	double scale; /* the server's: model and published x scale */
};

/* A panel: one block size, in its unit. */
struct sweep_panel {
	uint32_t bs_bytes;
	bool mibps;
};

static size_t sweep_panels(const struct sweep_corner **corners, size_t ncorners,
			   struct sweep_panel *out)
{
	size_t n = 0;

	for (size_t c = 0; c < ncorners; c++) {
		size_t k;

		for (k = 0; k < n; k++) {
			if (out[k].bs_bytes == corners[c]->bs_bytes &&
			    out[k].mibps == corners[c]->mibps) {
				break;
			}
		}
		if (k == n) {
			out[n++] = (struct sweep_panel){ corners[c]->bs_bytes,
							 corners[c]->mibps };
		}
	}
	return n;
}

/* Everything the .dat and the script need. */
struct sweep_plot {
	const struct dsload_opts *o;
	struct sweep_row *rows;
	size_t nrows;
	const struct sweep_corner **corners;
	size_t ncorners;
	struct sweep_panel panels[SWEEP_CORNERS_MAX];
	size_t npanels;
	const struct sweep_model *model;
	const char *dat;
};

/* Blocks after the corners' own: per panel, one model line per host
 * count, then the published points. */
static size_t sweep_model_block(const struct sweep_plot *sp, size_t panel)
{
	return sp->ncorners + panel * (sp->o->hosts.n + 1);
}

/* The model's figure of a sweep point, in the server's units. */
static bool sweep_model_figure(const struct sweep_plot *sp, unsigned hosts,
			       unsigned ds, const struct sweep_panel *pn,
			       double *v, unsigned *flows)
{
	const struct dsload_opts *o = sp->o;
	struct model_shape s = {
		.place = { hosts, o->vms.v[0],
			   o->vmdks_auto ? ds : o->vmdks.v[0], ds,
			   o->placement_set ? o->spec.policy : PLACE_SPREAD },
		.nconnect = o->spec.nconnect ? o->spec.nconnect : 1,
		.bs_bytes = pn->bs_bytes,
		.mibps = pn->mibps,
	};

	if (model_predict(&sp->model->m, &s, v, flows) || !isfinite(*v)) {
		return false;
	}
	*v *= sp->model->scale;
	return true;
}

/* sweep.dat: one gnuplot data block per corner, points by flows; with a
 * model, its lines and the published points after them. */
static int sweep_dat_write(struct sweep_plot *sp)
{
	FILE *f = fopen(sp->dat, "w");
	const struct dsload_opts *o = sp->o;

	if (!f) {
		return -errno;
	}
	qsort(sp->rows, sp->nrows, sizeof(*sp->rows), sweep_row_cmp);
	for (size_t c = 0; c < sp->ncorners; c++) {
		fprintf(f, "# %s: flows hosts datastores IOPS MiB/s\n",
			sp->corners[c]->name);
		for (size_t i = 0; i < sp->nrows; i++) {
			if (sp->rows[i].corner == sp->corners[c]) {
				fprintf(f, "%u %u %u %.1f %.2f\n",
					sp->rows[i].flows, sp->rows[i].hosts,
					sp->rows[i].datastores,
					sp->rows[i].iops, sp->rows[i].mibps);
			}
		}
		fprintf(f, "\n\n");
	}
	for (size_t k = 0; sp->model->on && k < sp->npanels; k++) {
		const struct sweep_panel *pn = &sp->panels[k];
		const struct profile *p = sp->model->p;

		for (unsigned h = 0; h < o->hosts.n; h++) {
			fprintf(f, "# model, %u host(s): flows figure\n",
				o->hosts.v[h]);
			for (unsigned d = 0; d < o->ndatastores.n; d++) {
				double v;
				unsigned flows;

				if (sweep_model_figure(sp, o->hosts.v[h],
						       o->ndatastores.v[d], pn,
						       &v, &flows)) {
					fprintf(f, "%u %.2f\n", flows, v);
				}
			}
			fprintf(f, "\n\n");
		}
		fprintf(f, "# published (%s) x scale: flows figure id\n",
			p->name);
		for (size_t i = 0; i < p->n; i++) {
			const struct profile_scenario *s = &p->s[i];
			struct model_shape ms;
			double v, t = profile_target(p, s);
			unsigned flows;

			if (s->bs_bytes != pn->bs_bytes ||
			    s->mibps != pn->mibps || t <= 0) {
				continue;
			}
			profile_model_shape(s, &ms);
			if (!model_predict(&sp->model->m, &ms, &v, &flows)) {
				fprintf(f, "%u %.2f %s\n", flows,
					t * sp->model->scale, s->id);
			}
		}
		fprintf(f, "\n\n");
	}
	return fclose(f) ? -errno : 0;
}

/* The largest figure a panel shows, so an all-zero one gets a range. */
static double sweep_panel_max(const struct sweep_plot *sp,
			      const struct sweep_panel *pn)
{
	double max = 0;

	for (size_t i = 0; i < sp->nrows; i++) {
		const struct sweep_row *r = &sp->rows[i];

		if (r->corner->bs_bytes == pn->bs_bytes &&
		    r->corner->mibps == pn->mibps) {
			max = fmax(max, pn->mibps ? r->mibps : r->iops);
		}
	}
	return max;
}

static void sweep_plot_body(FILE *f, void *arg)
{
	const struct sweep_plot *sp = arg;
	const struct dsload_opts *o = sp->o;

	fprintf(f,
		"set multiplot layout %zu,1 title 'dsload sweep: one TCP flow "
		"per host and datastore%s'\n"
		"set grid\nset key inside left top opaque box font ',9'\n"
		"set xlabel 'flows (hosts x datastores%s)'\n"
		"set xrange [0:*]\nset xtics 1\nset offsets 0.5, 0.5, 0, 0\n",
		sp->npanels,
		sp->model->on ? "; the model of the profile, x scale" : "",
		o->spec.nconnect > 1 ? " x nconnect" : "");
	for (size_t k = 0; k < sp->npanels; k++) {
		const struct sweep_panel *pn = &sp->panels[k];
		int col = pn->mibps ? 5 : 4;
		bool first = true;

		fprintf(f, "set title '%u KiB %s'\nset ylabel '%s'\n",
			pn->bs_bytes / 1024,
			pn->mibps ? "sequential" : "random",
			pn->mibps ? "MiB/s" : "IOPS");
		if (sweep_panel_max(sp, pn) > 0 || sp->model->on) {
			fprintf(f, "set yrange [0:*]\n");
		} else {
			fprintf(f, "set yrange [0:1]\n");
		}
		for (size_t c = 0; c < sp->ncorners; c++) {
			if (sp->corners[c]->bs_bytes != pn->bs_bytes ||
			    sp->corners[c]->mibps != pn->mibps) {
				continue;
			}
			fprintf(f,
				"%s '%s' index %zu using 1:%d with points pt 7 "
				"title '%s measured', \\\n    '' index %zu "
				"using 1:%d:(sprintf(\"%%dx%%d\", $2, $3)) "
				"with labels offset 2.5,0 font ',8' notitle",
				first ? "plot" : ", \\\n    ", sp->dat, c, col,
				sp->corners[c]->name, c, col);
			first = false;
		}
		for (unsigned h = 0; sp->model->on && h < o->hosts.n; h++) {
			fprintf(f,
				", \\\n    '%s' index %zu using 1:2 with lines "
				"lw 2 title 'model: %u host(s)'",
				sp->dat, sweep_model_block(sp, k) + h,
				o->hosts.v[h]);
		}
		if (sp->model->on) {
			fprintf(f,
				", \\\n    '%s' index %zu using 1:2 with "
				"points "
				"pt 6 ps 1.8 lc rgb '#e7298a' title 'published "
				"x "
				"scale', \\\n"
				"    '' index %zu using 1:2:3 with labels "
				"offset "
				"1.6,0.6 font ',8' notitle",
				sp->dat, sweep_model_block(sp, k) + o->hosts.n,
				sweep_model_block(sp, k) + o->hosts.n);
		}
		fprintf(f, "\n");
	}
	fprintf(f, "unset multiplot\n");
}

/* --model NAME: the profile's fit, or an error printed. */
static int sweep_model_load(const struct dsload_opts *o, struct sweep_model *sm)
{
	char path[SWEEP_PATH_MAX + OPTS_PATH_MAX], errbuf[512];

	if (!o->model[0]) {
		return 0;
	}
	if (strchr(o->model, '/') || strstr(o->model, ".ini")) {
		snprintf(path, sizeof(path), "%s", o->model);
	} else {
		snprintf(path, sizeof(path), "%s/%s.ini", o->profile_dir,
			 o->model);
	}
	sm->p = calloc(1, sizeof(*sm->p));
	if (!sm->p || profile_load(path, sm->p, errbuf, sizeof(errbuf)) ||
	    profile_fit(sm->p, &sm->m, NULL, errbuf, sizeof(errbuf))) {
		fprintf(stderr, "dsload: --model %s: %s\n", path,
			sm->p ? errbuf : "no memory");
		return -EINVAL;
	}
	sm->scale = o->scale > 0 ? o->scale : 1.0;
	/* The sweep's VMs have the ceiling it gives them (--vm-iops, in the
	 * server's units), not the profile's. */
	sm->m.v[MODEL_VM_IOPS] =
		o->vm_iops_set ? o->spec.vm_iops / sm->scale : 0;
	sm->on = true;
	return 0;
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
	if (err) {
		return err;
	}
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
	char svg[SWEEP_PATH_MAX], png[SWEEP_PATH_MAX];
	struct sweep_model model = { 0 };
	struct sweep_plot sp = { 0 };
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
	if (sweep_model_load(o, &model)) {
		free(model.p);
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
	if (!o->placement_set) {
		spec.policy = PLACE_SPREAD;
	}
	run_signals_block();
	for (unsigned h = 0; h < o->hosts.n && !err; h++) {
		for (unsigned d = 0; d < o->ndatastores.n && !err; d++) {
			for (unsigned v = 0; v < o->vms.n && !err; v++) {
				unsigned nk = o->vmdks_auto ? 1 : o->vmdks.n;

				for (unsigned k = 0; k < nk && !err; k++) {
					spec.hosts = o->hosts.v[h];
					if (!o->datastores_named) {
						opts_datastores_count(
							&spec,
							o->ndatastores.v[d]);
					}
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
	snprintf(png, sizeof(png), "%s/sweep.png", dir);
	snprintf(path, sizeof(path), "%s/sweep.gp", dir);
	sp = (struct sweep_plot){ .o = o,
				  .rows = rows,
				  .nrows = nrows,
				  .corners = corners,
				  .ncorners = (size_t)n,
				  .model = &model,
				  .dat = dat };
	sp.npanels = sweep_panels(corners, (size_t)n, sp.panels);
	if (nrows && !sweep_dat_write(&sp)) {
		plot_draw(path, png, svg, (unsigned)sp.npanels, 420,
			  sweep_plot_body, &sp);
	}
	snprintf(path, sizeof(path), "%s/sweep.json", dir);
	report_json_write(path, root);
	printf("dsload: results in %s/ (sweep.csv sweep.json sweep.dat "
	       "sweep.gp sweep.png sweep.svg)\n",
	       dir);
	status = err ? DSLOAD_EXIT_USAGE : run_outcome_report(stdout, &sink.oc);
out:
	json_decref(root);
	free(rows);
	free(model.p);
	if (sink.csv) {
		fclose(sink.csv);
	}
	return status;
}
