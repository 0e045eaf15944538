// SPDX-License-Identifier: Apache-2.0
/*
 * profile_report: what a profile run prints and writes (profile_int.h):
 * the fit, one table row per scenario (fitted or predicted, measured and
 * model ratios against the published one, the residual, the scale and
 * the ceiling), profile.csv, the JSON rows, and the plot.
 */
#include "perf/dsload/esxi.h"
#include "perf/dsload/profile_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "perf/dsload/plot.h"

#define PROFILE_PATH_MAX (OPTS_PATH_MAX + 32)
/* Model curves drawn per panel, up to this many flows. */
#define PROFILE_CURVE_FLOWS 16 /* N4: 4 hosts x nconnect 4 */

/* One row's figures, ratios and verdict. */
struct profile_row {
	double ratio; /* measured / measured(baseline); 0: not run */
	double model_ratio;
	double target; /* the published ratio (the middle of a range) */
	double residual; /* ratio / target - 1 */
	double model_residual;
	double ceiling; /* of the row's unit; 0: not measured */
	bool ok;
};

static const char *profile_unit(const struct profile_scenario *s)
{
	return s->mibps ? "MiB/s" : "IOPS";
}

static const char *profile_role(const struct profile_scenario *s)
{
	return s->fitted ? "fitted" : s->claim ? "claim" : "predicted";
}

static void profile_row_get(const struct profile_ctx *c, size_t i,
			    struct profile_row *row)
{
	const struct profile *p = c->p;
	const struct profile_scenario *s = &p->s[i];
	const struct profile_scenario *b = profile_find(p, s->baseline);
	const struct profile_result *r = &c->r[i];
	const struct profile_result *br = &c->r[b - p->s];

	memset(row, 0, sizeof(*row));
	row->target = (s->ratio_lo + s->ratio_hi) / 2;
	if (br->model > 0) {
		row->model_ratio = r->model / br->model;
	}
	if (row->target > 0) {
		row->model_residual = row->model_ratio / row->target - 1;
	}
	if (r->ran && br->ran && br->figure > 0) {
		row->ratio = r->figure / br->figure;
		row->ok =
			profile_ratio_ok(row->ratio, s->ratio_lo, s->ratio_hi);
		if (row->target > 0) {
			row->residual = row->ratio / row->target - 1;
		}
	}
	row->ceiling = c->ceiling[s->mibps ? 1 : 0];
}

void profile__fit_print(FILE *out, const struct profile_ctx *c)
{
	const struct profile *p = c->p;

	fprintf(out, "\n== model: fitted to");
	for (size_t i = 0; i < p->nfit; i++) {
		fprintf(out, "%s %s", i ? "," : "", p->fit[i]);
	}
	fprintf(out,
		" (%zu of %zu scenarios; rms of ln(model / published) %.2g); "
		"every other row is a prediction\n",
		p->nfit, p->n, c->rms_log);
	for (int k = 0; k < MODEL_NPARAMS; k++) {
		fprintf(out, "  %-11s %12.6g  %s\n", model_param_name(k),
			c->m.v[k], model_param_meaning(k));
	}
	fprintf(out, "  %-11s %12.6g  %s\n", "volume_mibps", c->m.volume_mibps,
		"the volume's QoS limit (given: its service level, not "
		"fitted)");
}

unsigned profile__claims(FILE *out, const struct profile_ctx *c, bool measured)
{
	const struct profile *p = c->p;
	unsigned missed = 0, n = 0;

	for (size_t i = 0; i < p->n; i++) {
		const struct profile_scenario *s = &p->s[i];
		struct profile_row row;
		bool model_ok;

		if (!s->claim) {
			continue;
		}
		if (!n++) {
			fprintf(out,
				"\n== claims (no published figure; not in "
				"the verdict): %s\n",
				measured ? "measured"
					 : "predicted by the model "
					   "before the runs");
		}
		profile_row_get(c, i, &row);
		model_ok = profile_ratio_ok(row.model_ratio, s->ratio_lo,
					    s->ratio_hi);
		fprintf(out,
			"%-3s %ux%ux%u/%u nconnect %u: %s; claim %.2f x %s: "
			"model %.0f %s = %.2f (%+.1f%%, %s)",
			s->id, s->hosts, s->vms, s->vmdks, s->datastores,
			s->nconnect, s->published_text, row.target, s->baseline,
			c->r[i].model, profile_unit(s), row.model_ratio,
			100 * row.model_residual,
			model_ok ? "holds" : "MISSED");
		if (measured && c->r[i].ran) {
			fprintf(out, "; measured %.2f (%+.1f%%, %s)", row.ratio,
				100 * row.residual,
				row.ok ? "holds" : "MISSED");
			missed += !row.ok;
		}
		fputc('\n', out);
	}
	return missed;
}

unsigned profile__table(FILE *out, const struct profile_ctx *c)
{
	const struct profile *p = c->p;
	unsigned failed = 0, predicted = 0;

	fprintf(out,
		"\n== profile %s (%s): scale %.4g, %g s per phase after a "
		"%g s ramp%s\n",
		p->name, p->source, c->scale,
		c->o->runtime_set ? c->o->w.run_s : p->run_s,
		c->o->ramp_set ? c->o->w.ramp_s : p->ramp_s,
		!c->o->no_verify && (c->o->w.verify || p->verify) ? ", verified"
								  : "");
	fprintf(out,
		"%-3s %-9s %5s %-9s %2s %-13s %9s %-5s %9s %9s %6s %6s %-9s "
		"%7s %-4s %7s %s\n",
		"id", "role", "flows", "HxVxK/D", "nc", "workload", "measured",
		"", "scaled", "model", "ratio", "model", "target", "resid",
		"ok", "scale", "ceiling (measured = % of it)");
	for (size_t i = 0; i < p->n; i++) {
		const struct profile_scenario *s = &p->s[i];
		const struct profile_result *r = &c->r[i];
		struct profile_row row;
		char shape[32], wl[32], tgt[16], ceil[48];

		profile_row_get(c, i, &row);
		snprintf(shape, sizeof(shape), "%ux%ux%u/%u", s->hosts, s->vms,
			 s->vmdks, s->datastores);
		snprintf(wl, sizeof(wl), "%uk %s r%u%s", s->bs_bytes / 1024,
			 s->random_pct == 100 ? "rand" : "seq",
			 s->read_pcts.v[0], s->read_pcts.n > 1 ? "+" : "");
		if (s->ratio_lo == s->ratio_hi) {
			snprintf(tgt, sizeof(tgt), "%.2f", s->ratio_lo);
		} else {
			snprintf(tgt, sizeof(tgt), "%.2f-%.2f", s->ratio_lo,
				 s->ratio_hi);
		}
		if (row.ceiling > 0) {
			snprintf(ceil, sizeof(ceil), "%.0f %s = %.0f%%",
				 row.ceiling, profile_unit(s),
				 100.0 * r->figure / row.ceiling);
		} else {
			snprintf(ceil, sizeof(ceil), "-");
		}
		if (!s->fitted && !s->claim) {
			predicted++;
			failed += !row.ok;
		}
		fprintf(out,
			"%-3s %-9s %5u %-9s %2u %-13s %9.0f %-5s %9.0f %9.0f "
			"%6.2f %6.2f %-9s %+6.1f%% %-4s %7.4g %s\n",
			s->id, profile_role(s), r->flows, shape, s->nconnect,
			wl, r->figure, profile_unit(s), r->figure / c->scale,
			r->model, row.ratio, row.model_ratio, tgt,
			100 * row.residual,
			!r->ran	 ? "--"
			: row.ok ? "yes"
				 : "NO",
			c->scale, ceil);
	}
	fprintf(out,
		"(scaled = measured / scale, in the source's units; model = "
		"the model's figure there; ratio = measured / its baseline's; "
		"resid = ratio / target - 1; ok: within 15%% of the target or "
		"inside its range; %u predicted rows decide)\n",
		predicted);
	return failed;
}

void profile__csv_write(const char *path, const struct profile_ctx *c)
{
	FILE *f = fopen(path, "w");
	const struct profile *p = c->p;

	if (!f) {
		return;
	}
	fprintf(f, "id,role,hosts,vms,vmdks,datastores,nconnect,placement,bs,"
		   "random_pct,metric,flows,published,target_figure,measured,"
		   "scaled_back,model,baseline,ratio,model_ratio,"
		   "published_ratio_lo,published_ratio_hi,residual,"
		   "model_residual,pass,scale,ceiling\n");
	for (size_t i = 0; i < p->n; i++) {
		const struct profile_scenario *s = &p->s[i];
		const struct profile_result *r = &c->r[i];
		struct profile_row row;

		profile_row_get(c, i, &row);
		fprintf(f,
			"%s,%s,%u,%u,%u,%u,%u,%s,%u,%u,%s,%u,%.0f,%.0f,%.1f,"
			"%.1f,%.1f,%s,%.4f,%.4f,%.2f,%.2f,%.4f,%.4f,%s,%.6g,"
			"%.1f\n",
			s->id, profile_role(s), s->hosts, s->vms, s->vmdks,
			s->datastores, s->nconnect,
			place_policy_name(s->policy), s->bs_bytes,
			s->random_pct, profile_unit(s), r->flows, s->published,
			profile_target(p, s), r->figure, r->figure / c->scale,
			r->model, s->baseline, row.ratio, row.model_ratio,
			s->ratio_lo, s->ratio_hi, row.residual,
			row.model_residual, r->ran && row.ok ? "yes" : "no",
			c->scale, row.ceiling);
	}
	fclose(f);
}

void profile__json_add(json_t *root, const struct profile_ctx *c)
{
	const struct profile *p = c->p;
	json_t *fit = json_object(), *params = json_object();
	json_t *rows = json_array(), *ids = json_array();

	if (!fit || !params || !rows || !ids) {
		goto out;
	}
	for (size_t i = 0; i < p->nfit; i++) {
		json_array_append_new(ids, json_string(p->fit[i]));
	}
	for (int k = 0; k < MODEL_NPARAMS; k++) {
		json_object_set_new(params, model_param_name(k),
				    json_real(c->m.v[k]));
	}
	json_object_set_new(params, "volume_mibps",
			    json_real(c->m.volume_mibps));
	json_object_set_new(fit, "scenarios", ids);
	json_object_set_new(fit, "params", params);
	json_object_set_new(fit, "rms_log", json_real(c->rms_log));
	ids = params = NULL;
	for (size_t i = 0; i < p->n; i++) {
		const struct profile_scenario *s = &p->s[i];
		const struct profile_result *r = &c->r[i];
		struct profile_row row;

		profile_row_get(c, i, &row);
		json_array_append_new(
			rows,
			json_pack("{s:s, s:s, s:s, s:i, s:f, s:f, s:f, s:f, "
				  "s:f, s:f, s:f, s:b}",
				  "id", s->id, "role", profile_role(s),
				  "metric", profile_unit(s), "flows",
				  (int)r->flows, "measured", r->figure,
				  "scaled_back", r->figure / c->scale, "model",
				  r->model, "ratio", row.ratio, "model_ratio",
				  row.model_ratio, "target", row.target,
				  "residual", row.residual, "pass", row.ok));
	}
	json_object_set_new(root, "scale", json_real(c->scale));
	json_object_set_new(root, "scale_start", json_real(c->scale_start));
	json_object_set_new(root, "ceiling_iops", json_real(c->ceiling[0]));
	json_object_set_new(root, "ceiling_mibps", json_real(c->ceiling[1]));
	json_object_set_new(root, "fit", fit);
	json_object_set_new(root, "rows", rows);
	return;
out:
	json_decref(fit);
	json_decref(params);
	json_decref(rows);
	json_decref(ids);
}

/* ---- the plot --------------------------------------------------------- */

/* A panel: one block size in one unit. */
struct profile_panel {
	uint32_t bs_bytes;
	bool mibps;
};

/* The model's families drawn as curves, by the number of flows. */
enum {
	CURVE_HOST,
	CURVE_VOLUME,
	CURVE_FLEET,
	CURVE_NCONNECT,
	CURVE_NCONNECT4,
	CURVE_KINDS
};

static const char *const curve_titles[CURVE_KINDS] = {
	"model: 1 host, n datastores",
	"model: n hosts, 1 datastore",
	"model: hosts on own datastores, 2 connections each",
	"model: 1 host, 1 datastore, nconnect n",
	"model: 4 hosts, 1 datastore, nconnect n/4",
};

/* The shape of @kind with @n flows; false when there is none. */
static bool profile_curve_shape(int kind, unsigned n,
				const struct profile_panel *pn,
				struct model_shape *s)
{
	memset(s, 0, sizeof(*s));
	s->bs_bytes = pn->bs_bytes;
	s->mibps = pn->mibps;
	s->nconnect = 1;
	s->place.vms = 1;
	s->place.vmdks = 1;
	switch (kind) {
	case CURVE_HOST:
		s->place = (struct place_shape){ 1, n, 1, n, PLACE_SPREAD };
		return true;
	case CURVE_VOLUME:
		s->place = (struct place_shape){ n, 1, 1, 1, PLACE_ONE };
		return true;
	case CURVE_NCONNECT:
		/* ESXi 8: up to 8 with /NFS/MaxConnectionsPerDatastore */
		s->place = (struct place_shape){ 1, n, 1, 1, PLACE_ONE };
		s->nconnect = n;
		return n <= ESXI_NCONNECT_MAX;
	case CURVE_NCONNECT4:
		s->place = (struct place_shape){ 4, 1, 1, 1, PLACE_ONE };
		s->nconnect = n / 4;
		return n % 4 == 0 && n / 4 <= ESXI_NCONNECT_MAX;
	default:
		if (n % 2) {
			return false;
		}
		s->place = (struct place_shape){ n / 2, 1, 1, n / 2,
						 PLACE_PER_VM };
		s->nconnect = 2;
		return true;
	}
}

static size_t profile_panels(const struct profile *p, struct profile_panel *out,
			     size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n; i++) {
		size_t j;

		for (j = 0; j < n; j++) {
			if (out[j].bs_bytes == p->s[i].bs_bytes &&
			    out[j].mibps == p->s[i].mibps) {
				break;
			}
		}
		if (j == n && n < max) {
			out[n++] = (struct profile_panel){ p->s[i].bs_bytes,
							   p->s[i].mibps };
		}
	}
	return n;
}

/* Data blocks per panel: measured, published, model at each scenario,
 * then the curves. */
#define PROFILE_BLOCKS (3 + CURVE_KINDS)

static int profile_dat_write(const char *path, const struct profile_ctx *c,
			     const struct profile_panel *pn, size_t npanels)
{
	const struct profile *p = c->p;
	FILE *f = fopen(path, "w");

	if (!f) {
		return -1;
	}
	for (size_t k = 0; k < npanels; k++) {
		for (int b = 0; b < 3; b++) {
			fprintf(f, "# %uk %s: %s: flows figure id\n",
				pn[k].bs_bytes / 1024,
				pn[k].mibps ? "MiB/s" : "IOPS",
				b == 0	 ? "measured, scaled back"
				: b == 1 ? "published"
					 : "model");
			for (size_t i = 0; i < p->n; i++) {
				const struct profile_scenario *s = &p->s[i];
				const struct profile_result *r = &c->r[i];
				double v = b == 0   ? r->figure / c->scale
					   : b == 1 ? profile_target(p, s)
						    : r->model;

				if (s->bs_bytes != pn[k].bs_bytes ||
				    s->mibps != pn[k].mibps ||
				    (b == 0 && !r->ran) || v <= 0) {
					continue;
				}
				fprintf(f, "%u %.1f %s\n", r->flows, v, s->id);
			}
			fprintf(f, "\n\n");
		}
		for (int kind = 0; kind < CURVE_KINDS; kind++) {
			fprintf(f, "# %s\n", curve_titles[kind]);
			for (unsigned n = 1; n <= PROFILE_CURVE_FLOWS; n++) {
				struct model_shape s;
				double v;
				unsigned flows;

				if (profile_curve_shape(kind, n, &pn[k], &s) &&
				    !model_predict(&c->m, &s, &v, &flows) &&
				    isfinite(v)) {
					fprintf(f, "%u %.1f\n", flows, v);
				}
			}
			fprintf(f, "\n\n");
		}
	}
	return fclose(f);
}

struct profile_plot_arg {
	const struct profile_ctx *c;
	const char *dat;
	const struct profile_panel *pn;
	size_t npanels;
};

static void profile_plot_body(FILE *f, void *argp)
{
	const struct profile_plot_arg *a = argp;
	static const char *const colors[CURVE_KINDS] = { "#1b9e77", "#d95f02",
							 "#7570b3", "#e6ab02",
							 "#66a61e" };
	static const char *const dashes[CURVE_KINDS] = { "1", "2", "1", "3",
							 "3" };

	fprintf(f,
		"set multiplot layout %zu,1 title \"dsload profile %s: "
		"measured (scale %.4g, scaled back), published, and the model "
		"fitted to %zu rows\"\n"
		"set grid\nset key inside left top opaque box font ',9'\n"
		"set xlabel 'flows (host x datastore connections)'\n"
		"set xrange [0:%d]\nset xtics 1\nset yrange [0:*]\n",
		a->npanels, a->c->p->name, a->c->scale, a->c->p->nfit,
		PROFILE_CURVE_FLOWS + 1);
	for (size_t k = 0; k < a->npanels; k++) {
		size_t base = k * PROFILE_BLOCKS;

		fprintf(f,
			"set title '%u KiB %s'\nset ylabel '%s (published "
			"units)'\n",
			a->pn[k].bs_bytes / 1024,
			a->pn[k].mibps ? "sequential" : "random",
			a->pn[k].mibps ? "MiB/s" : "IOPS");
		fprintf(f, "plot ");
		for (int kind = 0; kind < CURVE_KINDS; kind++) {
			/* The nConnect curves lie on the datastore ones
			 * (a connection is a flow to the model): marked
			 * points keep them visible. */
			fprintf(f,
				"'%s' index %zu with %s lw 2 dt %s "
				"lc rgb '%s' title '%s', \\\n     ",
				a->dat, base + 3 + kind,
				kind >= CURVE_NCONNECT
					? "linespoints pt 4 ps 1.1"
					: "lines",
				dashes[kind], colors[kind], curve_titles[kind]);
		}
		fprintf(f,
			"'%s' index %zu with points pt 2 ps 1.6 lc rgb "
			"'#555555' title 'model at each row', \\\n     "
			"'%s' index %zu with points pt 6 ps 1.8 lc rgb "
			"'#e7298a' title 'published', \\\n     "
			"'%s' index %zu with points pt 7 ps 1.2 lc rgb "
			"'#000000' title 'measured', \\\n     "
			"'%s' index %zu using 1:2:3 with labels offset "
			"1.6,0.6 font ',8' notitle\n",
			a->dat, base + 2, a->dat, base + 1, a->dat, base,
			a->dat, base);
	}
	fprintf(f, "unset multiplot\n");
}

void profile__plot(const char *dir, const struct profile_ctx *c)
{
	struct profile_panel pn[4];
	size_t npanels = profile_panels(c->p, pn, 4);
	char dat[PROFILE_PATH_MAX], gp[PROFILE_PATH_MAX];
	char png[PROFILE_PATH_MAX], svg[PROFILE_PATH_MAX];
	struct profile_plot_arg a = { c, dat, pn, npanels };

	snprintf(dat, sizeof(dat), "%s/profile.dat", dir);
	snprintf(gp, sizeof(gp), "%s/profile.gp", dir);
	snprintf(png, sizeof(png), "%s/profile.png", dir);
	snprintf(svg, sizeof(svg), "%s/profile.svg", dir);
	if (!npanels || profile_dat_write(dat, c, pn, npanels)) {
		return;
	}
	plot_draw(gp, png, svg, (unsigned)npanels, 420, profile_plot_body, &a);
}
