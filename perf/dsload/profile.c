// SPDX-License-Identifier: Apache-2.0
/*
 * profile: the runner of a published profile (see profile.h).  With a
 * server config: fits the model, starts an uncapped dsnfsd on the
 * config's datastores and measures the ceiling scenarios, lowers the
 * scale until the model's largest capped figure is at most a third of
 * that ceiling, writes the config with the fitted caps at that scale,
 * starts dsnfsd with it and runs every scenario.  With a server given by
 * its ports, the scale is --scale and the ceiling (if asked) comes last,
 * from the same server.  The report is profile_report.c.
 */
#include "perf/dsload/profile_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "perf/dsload/admin.h"
#include "perf/dsload/report.h"

#define PROFILE_PATH_MAX (2 * OPTS_PATH_MAX + 64)
/* Datastores ds1..dsN assumed on a server given by its ports (no
 * --server-config): the most a profile scenario may name. */
#define PROFILE_DS_DEFAULT 16
/* The capped figures stay at most this share of the machine's ceiling. */
#define PROFILE_CEILING_SHARE (1.0 / 3.0)

static void profile_workload(const struct profile_ctx *c,
			     const struct profile_scenario *s, unsigned mix,
			     struct workload *w)
{
	const struct dsload_opts *o = c->o;

	*w = o->w;
	w->bs_bytes = s->bs_bytes;
	w->random_pct = s->random_pct;
	w->read_pct = s->read_pcts.v[mix];
	w->iodepth = o->iodepth_set ? o->w.iodepth : c->p->iodepth;
	w->ramp_s = o->ramp_set ? o->w.ramp_s : c->p->ramp_s;
	w->run_s = o->runtime_set ? o->w.run_s : c->p->run_s;
	w->verify = !o->no_verify && (o->w.verify || c->p->verify);
	workload_name_set(w);
}

/* Runs @s on a fresh fleet; *figure is its IOPS or MiB/s, averaged over
 * its mixes, *slowest (may be NULL) that of its slowest mix.  Returns 0
 * or -errno (message printed). */
static int profile_scenario_run(struct profile_ctx *c,
				const struct profile_scenario *s,
				const char *tag, double *figure,
				double *slowest, unsigned *flows)
{
	struct workload ws[OPTS_LIST_MAX];
	struct phase_result res[OPTS_LIST_MAX];
	struct fleet_spec spec = c->base;
	char errbuf[512], run[64];
	struct fleet *f;
	double sum = 0, min = INFINITY;
	int err;

	if (s->datastores > c->base.ndatastores) {
		fprintf(stderr,
			"dsload: scenario %s needs %u datastores, the server "
			"has %u\n",
			s->id, s->datastores, c->base.ndatastores);
		return -EINVAL;
	}
	spec.hosts = s->hosts;
	spec.vms = s->vms;
	spec.vmdks = s->vmdks;
	spec.ndatastores = s->datastores;
	spec.policy = s->policy;
	spec.vmdk_bytes =
		c->o->vmdk_size_set ? c->o->spec.vmdk_bytes : c->p->vmdk_bytes;
	spec.threads = c->o->threads_set ? c->o->spec.threads : c->p->threads;
	/* The VM ceiling is part of the published shape; the uncapped
	 * ceiling runs measure the machine, without it. */
	if (!c->o->vm_iops_set) {
		spec.vm_iops =
			c->uncapped ? 0 : c->m.v[MODEL_VM_IOPS] * c->scale;
	}
	spec.nconnect = s->nconnect ? s->nconnect : 1;
	for (unsigned m = 0; m < s->read_pcts.n; m++) {
		profile_workload(c, s, m, &ws[m]);
	}
	snprintf(run, sizeof(run), "%s%s", s->id, tag);
	fprintf(stderr,
		"dsload: scenario %s: %u host(s) x %u VM(s) x %u "
		"VMDK(s) on %u datastore(s), %s, nconnect %u, scale %.4g\n",
		run, s->hosts, s->vms, s->vmdks, s->datastores,
		place_policy_name(s->policy), spec.nconnect,
		c->uncapped ? 1.0 : c->scale);
	err = fleet_new(&spec, &f, errbuf, sizeof(errbuf));
	if (err) {
		fprintf(stderr, "dsload: %s: %s\n", run, errbuf);
		return err;
	}
	c->sink.run_name = run;
	c->sink.admin_port = c->admin_port;
	err = run_fleet_phases(f, ws, s->read_pcts.n, &c->sink, res);
	fleet_free(f);
	if (err) {
		return err;
	}
	for (unsigned m = 0; m < s->read_pcts.n; m++) {
		struct dstats total;

		dstats_init(&total);
		for (size_t i = 0; i < res[m].njobs; i++) {
			dstats_merge(&total, &res[m].jobs[i]);
		}
		double v = s->mibps ? dstats_mibps(&total, DSTATS_DIRS,
						   res[m].window_s)
				    : dstats_iops(&total, DSTATS_DIRS,
						  res[m].window_s);

		sum += v;
		min = fmin(min, v);
		/* flows = connections carrying I/O, as the server counts
		 * them (host x datastore x nconnect). */
		*flows = res[m].flows * spec.nconnect;
		fleet_result_fini(&res[m]);
	}
	*figure = sum / s->read_pcts.n;
	if (slowest) {
		*slowest = min;
	}
	return 0;
}

/* Runs the scenarios marked for the ceiling against the server in
 * c->base; a row's ceiling is its slowest mix (the machine's FILE_SYNC
 * writes may be slower than its reads, and a capped run must fit under
 * both). */
static void profile_ceiling_run(struct profile_ctx *c)
{
	double avg;

	c->uncapped = true;
	for (size_t i = 0; i < c->p->n; i++) {
		if (!c->p->s[i].ceiling) {
			continue;
		}
		if (!profile_scenario_run(c, &c->p->s[i], "-ceiling", &avg,
					  &c->r[i].ceiling, &c->r[i].flows)) {
			c->r[i].ceiling_ran = true;
		}
	}
	c->uncapped = false;
}

/* The model's figure of every scenario, and the largest uncapped figure
 * of each unit. */
static void profile_model_figures(struct profile_ctx *c)
{
	for (size_t i = 0; i < c->p->n; i++) {
		struct model_shape ms;

		profile_model_shape(&c->p->s[i], &ms);
		if (model_predict(&c->m, &ms, &c->r[i].model, NULL)) {
			c->r[i].model = 0;
		}
	}
}

/* Lowers c->scale until every ceiling scenario's capped figure (the
 * model's, at the scale) is at most PROFILE_CEILING_SHARE of its own
 * uncapped figure; three significant digits, rounded down. */
static void profile_scale_choose(struct profile_ctx *c)
{
	double scale = c->scale;

	for (size_t i = 0; i < c->p->n; i++) {
		const struct profile_result *r = &c->r[i];
		int u = c->p->s[i].mibps ? 1 : 0;
		double lim;

		if (!r->ceiling_ran || r->model <= 0) {
			continue;
		}
		if (r->ceiling > c->ceiling[u]) {
			c->ceiling[u] = r->ceiling;
		}
		lim = r->ceiling * PROFILE_CEILING_SHARE / r->model;
		if (lim < scale) {
			scale = lim;
		}
	}
	if (scale < c->scale) {
		double e = pow(10, floor(log10(scale)) - 2);

		scale = floor(scale / e) * e;
	}
	c->scale = scale;
}

static void profile_ceiling_print(FILE *out, const struct profile_ctx *c)
{
	const struct profile *p = c->p;

	fprintf(out, "\n== ceiling: the machine, uncapped (same datastores, no "
		     "[traffic] caps, no VM ceiling)\n");
	for (size_t i = 0; i < p->n; i++) {
		const struct profile_result *r = &c->r[i];

		if (!r->ceiling_ran) {
			continue;
		}
		fprintf(out,
			"%-4s uncapped %9.0f %-5s; the model's capped figure "
			"%.0f x scale %.4g = %.0f (%.0f%% of it)\n",
			p->s[i].id, r->ceiling,
			p->s[i].mibps ? "MiB/s" : "IOPS", r->model, c->scale,
			r->model * c->scale,
			r->ceiling > 0 ? 100 * r->model * c->scale / r->ceiling
				       : 0.0);
	}
	if (c->scale < c->scale_start) {
		fprintf(out,
			"scale lowered from %.4g to %.4g: the largest capped "
			"figure at most a third of the ceiling\n",
			c->scale_start, c->scale);
	} else {
		fprintf(out,
			"scale %.4g kept: its largest capped figure is "
			"within a third of the ceiling\n",
			c->scale);
	}
}

static void profile_base_from_server(struct profile_ctx *c,
				     const struct server_proc *sp)
{
	struct fleet_spec *base = &c->base;

	c->admin_port = sp->admin_port;
	c->sink.admin_host = "127.0.0.1";
	snprintf(base->server, sizeof(base->server), "127.0.0.1");
	base->portmap_port = sp->portmap_port;
	base->nfs_port = sp->portmap_port ? 0 : sp->nfs_port;
	base->mount_port = sp->portmap_port ? 0 : sp->mount_port;
}

/* Starts dsnfsd with @argv (its log DIR/@log_name) and points the
 * fleet at it.  Returns 0 or -errno (message printed). */
static int profile_server_up(struct profile_ctx *c, const char *dsnfsd,
			     const char **argv, const char *dir,
			     const char *log_name, struct server_proc *sp)
{
	char log[PROFILE_PATH_MAX], errbuf[512];
	int err;

	snprintf(log, sizeof(log), "%s/%s", dir, log_name);
	err = server_start(dsnfsd, argv, log, sp, errbuf, sizeof(errbuf));
	if (err) {
		fprintf(stderr, "dsload: %s\n", errbuf);
		return err;
	}
	profile_base_from_server(c, sp);
	return 0;
}

/* With --server-config: the ceiling first, the scale from it, then the
 * capped runs on the fitted config.  Returns 0 or -errno. */
static int profile_run_own(struct profile_ctx *c, const char *dir)
{
	const struct dsload_opts *o = c->o;
	char dsnfsd[512], state[PROFILE_PATH_MAX], conf[PROFILE_PATH_MAX];
	char errbuf[512];
	const char *argv[SERVER_ARGV_UNCAPPED_MAX];
	struct server_config cfg;
	struct server_proc sp = { 0 };
	int err;

	err = server_config_read(o->server_config, &cfg, errbuf,
				 sizeof(errbuf));
	if (!err) {
		err = server_dirs_make(&cfg, errbuf, sizeof(errbuf));
	}
	if (err) {
		fprintf(stderr, "dsload: %s\n", errbuf);
		return err;
	}
	if (o->scale <= 0) {
		c->scale = cfg.scale;
	}
	c->scale_start = c->scale;
	c->base.ndatastores = cfg.ndatastores;
	memcpy(c->base.datastores, cfg.names, sizeof(cfg.names));
	if (o->dsnfsd[0]) {
		snprintf(dsnfsd, sizeof(dsnfsd), "%s", o->dsnfsd);
	} else {
		server_default_path(dsnfsd, sizeof(dsnfsd));
	}
	if (!o->no_ceiling) {
		snprintf(state, sizeof(state), "%s/state-ceiling", dir);
		mkdir(state, 0700);
		/* The -e datastores get the config's access keys: dsnfsd's
		 * defaults (secure, squash = root) would refuse dsload. */
		snprintf(conf, sizeof(conf), "%s/dsnfsd-uncapped.conf", dir);
		err = server_access_write(o->server_config, &cfg, conf, errbuf,
					  sizeof(errbuf));
		if (err) {
			fprintf(stderr, "dsload: %s\n", errbuf);
			return err;
		}
		server_argv_uncapped(&cfg, dsnfsd, state, conf, c->ds_args,
				     argv);
		admin_token_server(state);
		if (!profile_server_up(c, dsnfsd, argv, dir,
				       "dsnfsd-uncapped.log", &sp)) {
			profile_ceiling_run(c);
			server_stop(&sp);
			profile_scale_choose(c);
		}
	}
	snprintf(conf, sizeof(conf), "%s/dsnfsd-fitted.conf", dir);
	err = profile_config_write(o->server_config, conf, &c->m, c->scale,
				   errbuf, sizeof(errbuf));
	if (err) {
		fprintf(stderr, "dsload: %s\n", errbuf);
		return err;
	}
	argv[0] = dsnfsd;
	argv[1] = "-c";
	argv[2] = conf;
	argv[3] = NULL;
	admin_token_server(cfg.state_dir[0] ? cfg.state_dir : "var/state");
	err = profile_server_up(c, dsnfsd, argv, dir, "dsnfsd-capped.log", &sp);
	if (err) {
		return err;
	}
	for (size_t i = 0; i < c->p->n; i++) {
		c->r[i].ran = !profile_scenario_run(c, &c->p->s[i], "",
						    &c->r[i].figure, NULL,
						    &c->r[i].flows);
	}
	server_stop(&sp);
	return 0;
}

/* A server given by its ports: its scale is --scale, the ceiling (the
 * same server: a ceiling only if it runs uncapped) comes after. */
static void profile_run_given(struct profile_ctx *c)
{
	if (!c->o->datastores_named) {
		opts_datastores_count(&c->base, PROFILE_DS_DEFAULT);
	}
	c->scale_start = c->scale;
	for (size_t i = 0; i < c->p->n; i++) {
		c->r[i].ran = !profile_scenario_run(c, &c->p->s[i], "",
						    &c->r[i].figure, NULL,
						    &c->r[i].flows);
	}
	if (!c->o->no_ceiling) {
		profile_ceiling_run(c);
		for (size_t i = 0; i < c->p->n; i++) {
			int u = c->p->s[i].mibps ? 1 : 0;

			if (c->r[i].ceiling_ran &&
			    c->r[i].ceiling > c->ceiling[u]) {
				c->ceiling[u] = c->r[i].ceiling;
			}
		}
	}
}

int profile_main(const struct dsload_opts *o)
{
	struct profile_ctx *c = calloc(1, sizeof(*c));
	struct profile *p = calloc(1, sizeof(*p));
	char path[PROFILE_PATH_MAX], dir[OPTS_PATH_MAX], errbuf[512];
	json_t *root = NULL;
	unsigned failed, predicted = 0, claims = 0, claims_missed;
	int status = DSLOAD_EXIT_USAGE;

	if (!c || !p) {
		goto out;
	}
	if (strchr(o->profile, '/') || strstr(o->profile, ".ini")) {
		snprintf(path, sizeof(path), "%s", o->profile);
	} else {
		snprintf(path, sizeof(path), "%s/%s.ini", o->profile_dir,
			 o->profile);
	}
	if (profile_load(path, p, errbuf, sizeof(errbuf)) ||
	    profile_fit(p, &c->m, &c->rms_log, errbuf, sizeof(errbuf))) {
		fprintf(stderr, "dsload: %s: %s\n", path, errbuf);
		goto out;
	}
	c->o = o;
	c->p = p;
	c->base = o->spec;
	profile_model_figures(c);
	profile__fit_print(stdout, c);
	profile__claims(stdout, c, false);
	fflush(stdout);
	snprintf(dir, sizeof(dir), "%s",
		 o->out_dir[0] ? o->out_dir : "dsload-profile");
	mkdir(dir, 0755);
	snprintf(path, sizeof(path), "%s/runs.csv", dir);
	c->sink.out = stdout;
	c->sink.show_jobs = o->show_jobs;
	c->sink.admin_host = o->spec.server;
	c->admin_port = o->admin_port;
	c->sink.csv = fopen(path, "w");
	if (c->sink.csv) {
		report_csv_header(c->sink.csv);
	}
	c->sink.json = json_array();
	root = json_pack("{s:s, s:s, s:o}", "command", "profile", "profile",
			 p->name, "phases", c->sink.json);
	c->scale = o->scale > 0 ? o->scale : 1.0;
	run_signals_block();
	if (o->server_config[0]) {
		if (profile_run_own(c, dir)) {
			goto out;
		}
	} else {
		profile_run_given(c);
	}
	profile__fit_print(stdout, c);
	if (!o->no_ceiling) {
		profile_ceiling_print(stdout, c);
	}
	failed = profile__table(stdout, c);
	claims_missed = profile__claims(stdout, c, true);
	for (size_t i = 0; i < p->n; i++) {
		predicted += !p->s[i].fitted && !p->s[i].claim;
		claims += p->s[i].claim;
	}
	snprintf(path, sizeof(path), "%s/profile.csv", dir);
	profile__csv_write(path, c);
	profile__json_add(root, c);
	snprintf(path, sizeof(path), "%s/profile.json", dir);
	report_json_write(path, root);
	profile__plot(dir, c);
	printf("dsload: results in %s/ (profile.csv runs.csv profile.json "
	       "profile.png profile.svg dsnfsd-fitted.conf)\n",
	       dir);
	status = run_outcome_report(stdout, &c->sink.oc);
	if (claims) {
		printf("dsload: profile %s: %u of %u claim(s) held by the "
		       "measured ratios (not in the verdict)\n",
		       p->name, claims - claims_missed, claims);
	}
	if (failed) {
		printf("dsload: profile %s: %u of %u predicted ratio(s) "
		       "outside "
		       "15%% of the published ones\n",
		       p->name, failed, predicted);
		status = DSLOAD_EXIT_FAILED;
	} else {
		printf("dsload: profile %s: all %u predicted ratios within "
		       "15%% of the published ones (%zu fitted rows not "
		       "counted)\n",
		       p->name, predicted, p->nfit);
	}
out:
	json_decref(root);
	if (c && c->sink.csv) {
		fclose(c->sink.csv);
	}
	free(c);
	free(p);
	return status;
}
