/*
 * profile: the runner of a published profile (see profile.h): starts the
 * calibrated dsnfsd when given its config (else uses the server named on
 * the command line), runs every scenario on a fresh fleet, measures the
 * uncapped ceiling, and prints published figure, measured figure, figure
 * scaled back (measured / traffic scale), measured and published ratios
 * and the verdict.
 */
#include "perf/dsload/profile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "perf/dsload/report.h"
#include "perf/dsload/run.h"
#include "perf/dsload/server.h"

#define PROFILE_PATH_MAX (2 * OPTS_PATH_MAX + 64)
/* Datastores ds1..dsN assumed on a server given by its ports (no
 * --server-config): the most a profile scenario may name. */
#define PROFILE_DS_DEFAULT 16

struct profile_result {
	bool ran;
	unsigned flows;
	double figure; /* measured, averaged over the read mixes */
	double ceiling; /* the same scenario on the uncapped server */
	bool ceiling_ran;
};

/* Everything one profile run shares. */
struct profile_ctx {
	const struct dsload_opts *o;
	const struct profile *p;
	struct fleet_spec base; /* server, ports, datastore names */
	double scale;
	struct run_sink sink; /* runs.csv, profile.json, the outcome */
	uint16_t admin_port; /* the server's view; 0: none */
	bool uncapped; /* running the ceiling */
	struct profile_result r[PROFILE_SCENARIOS_MAX];
	char ds_args[FLEET_DS_MAX][SERVER_PATH_MAX + 80]; /* -e NAME=DIR */
};

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
	workload_name_set(w);
}

/* Runs @s on a fresh fleet; *figure is its IOPS or MiB/s, averaged over
 * its mixes.  Returns 0 or -errno (message printed). */
static int profile_scenario_run(struct profile_ctx *c,
				const struct profile_scenario *s,
				const char *tag, double *figure,
				unsigned *flows)
{
	struct workload ws[OPTS_LIST_MAX];
	struct phase_result res[OPTS_LIST_MAX];
	struct fleet_spec spec = c->base;
	char errbuf[512], run[64];
	struct fleet *f;
	double sum = 0;
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
	if (!c->o->vm_iops_set)
		spec.vm_iops = c->uncapped ? 0 : c->p->vm_iops * c->scale;
	for (unsigned m = 0; m < s->read_pcts.n; m++)
		profile_workload(c, s, m, &ws[m]);
	snprintf(run, sizeof(run), "%s%s", s->id, tag);
	fprintf(stderr,
		"dsload: scenario %s: %u host(s) x %u VM(s) x %u "
		"VMDK(s) on %u datastore(s), %s\n",
		run, s->hosts, s->vms, s->vmdks, s->datastores,
		place_policy_name(s->policy));
	err = fleet_new(&spec, &f, errbuf, sizeof(errbuf));
	if (err) {
		fprintf(stderr, "dsload: %s: %s\n", run, errbuf);
		return err;
	}
	c->sink.run_name = run;
	c->sink.admin_port = c->admin_port;
	err = run_fleet_phases(f, ws, s->read_pcts.n, &c->sink, res);
	fleet_free(f);
	if (err)
		return err;
	for (unsigned m = 0; m < s->read_pcts.n; m++) {
		struct dstats total;

		dstats_init(&total);
		for (size_t i = 0; i < res[m].njobs; i++)
			dstats_merge(&total, &res[m].jobs[i]);
		sum += s->mibps ? dstats_mibps(&total, DSTATS_DIRS,
					       res[m].window_s)
				: dstats_iops(&total, DSTATS_DIRS,
					      res[m].window_s);
		*flows = res[m].flows;
		fleet_result_fini(&res[m]);
	}
	*figure = sum / s->read_pcts.n;
	return 0;
}

static const char *profile_unit(const struct profile_scenario *s)
{
	return s->mibps ? "MiB/s" : "IOPS";
}

/* Prints the table; returns how many ratios failed. */
static unsigned profile_table(FILE *out, const struct profile_ctx *c)
{
	const struct profile *p = c->p;
	unsigned failed = 0;

	fprintf(out,
		"\n== profile %s (%s): scale %g, %g s per phase after a "
		"%g s ramp\n",
		p->name, p->source, c->scale,
		c->o->runtime_set ? c->o->w.run_s : p->run_s,
		c->o->ramp_set ? c->o->w.ramp_s : p->ramp_s);
	fprintf(out,
		"%-4s %5s %-11s %-7s %-14s %-22s %12s %14s %-4s %6s %-9s "
		"%s\n",
		"id", "flows", "HxVxK/D", "place", "workload", "published",
		"measured", "scaled back", "base", "ratio", "published",
		"within 15%");
	for (size_t i = 0; i < p->n; i++) {
		const struct profile_scenario *s = &p->s[i];
		const struct profile_result *r = &c->r[i];
		const struct profile_scenario *b = profile_find(p, s->baseline);
		const struct profile_result *br = &c->r[b - p->s];
		char shape[32], wl[32], pub[16];
		double ratio = 0;
		bool ok = false;

		snprintf(shape, sizeof(shape), "%ux%ux%u/%u", s->hosts, s->vms,
			 s->vmdks, s->datastores);
		snprintf(wl, sizeof(wl), "%uk %s r%u%s", s->bs_bytes / 1024,
			 s->random_pct == 100 ? "rand" : "seq",
			 s->read_pcts.v[0], s->read_pcts.n > 1 ? "+" : "");
		if (s->ratio_lo == s->ratio_hi)
			snprintf(pub, sizeof(pub), "%.2f", s->ratio_lo);
		else
			snprintf(pub, sizeof(pub), "%.2f-%.2f", s->ratio_lo,
				 s->ratio_hi);
		if (r->ran && br->ran && br->figure > 0) {
			ratio = r->figure / br->figure;
			ok = profile_ratio_ok(ratio, s->ratio_lo, s->ratio_hi);
		}
		failed += !ok;
		fprintf(out,
			"%-4s %5u %-11s %-7s %-14s %-22s %6.0f %-5s %8.0f %-5s "
			"%-4s %6.2f %-9s %s\n",
			s->id, r->flows, shape, place_policy_name(s->policy),
			wl, s->published_text, r->figure, profile_unit(s),
			r->figure / c->scale, profile_unit(s), s->baseline,
			ratio, pub,
			!r->ran ? "not run"
			: ok	? "yes"
				: "NO");
	}
	return failed;
}

static void profile_ceiling_report(FILE *out, const struct profile_ctx *c,
				   bool own_server)
{
	const struct profile *p = c->p;

	fprintf(out, "\n== ceiling: the same scenarios on %s\n",
		own_server ? "an uncapped dsnfsd (same datastores, no "
			     "[traffic] caps)"
			   : "the same server (a true ceiling only if it is "
			     "uncapped: use --server-config)");
	for (size_t i = 0; i < p->n; i++) {
		const struct profile_scenario *s = &p->s[i];
		const struct profile_result *r = &c->r[i];

		if (!r->ceiling_ran)
			continue;
		fprintf(out,
			"%-4s uncapped %8.0f %-5s  capped %8.0f %-5s = %5.1f%% "
			"of the ceiling%s\n",
			s->id, r->ceiling, profile_unit(s), r->figure,
			profile_unit(s),
			r->ceiling > 0 ? 100.0 * r->figure / r->ceiling : 0.0,
			r->ceiling > 0 && r->figure > 0.8 * r->ceiling
				? "  (near the ceiling: the machine, not the "
				  "caps, may have shaped this one)"
				: "");
	}
}

static void profile_csv_write(const char *path, const struct profile_ctx *c)
{
	FILE *f = fopen(path, "w");
	const struct profile *p = c->p;

	if (!f)
		return;
	fprintf(f, "id,hosts,vms,vmdks,datastores,placement,bs,random_pct,"
		   "metric,flows,published,measured,scaled_back,baseline,"
		   "ratio,published_ratio_lo,published_ratio_hi,pass,"
		   "ceiling\n");
	for (size_t i = 0; i < p->n; i++) {
		const struct profile_scenario *s = &p->s[i];
		const struct profile_result *r = &c->r[i];
		const struct profile_result *br =
			&c->r[profile_find(p, s->baseline) - p->s];
		double ratio = br->figure > 0 ? r->figure / br->figure : 0;

		fprintf(f,
			"%s,%u,%u,%u,%u,%s,%u,%u,%s,%u,%.0f,%.1f,%.1f,%s,%.3f,"
			"%.2f,%.2f,%s,%.1f\n",
			s->id, s->hosts, s->vms, s->vmdks, s->datastores,
			place_policy_name(s->policy), s->bs_bytes,
			s->random_pct, profile_unit(s), r->flows, s->published,
			r->figure, r->figure / c->scale, s->baseline, ratio,
			s->ratio_lo, s->ratio_hi,
			r->ran && profile_ratio_ok(ratio, s->ratio_lo,
						   s->ratio_hi)
				? "yes"
				: "no",
			r->ceiling);
	}
	fclose(f);
}

/* Runs the scenarios marked for the ceiling against the server in
 * c->base. */
static void profile_ceiling_run(struct profile_ctx *c)
{
	c->uncapped = true;
	for (size_t i = 0; i < c->p->n; i++) {
		if (!c->p->s[i].ceiling)
			continue;
		if (!profile_scenario_run(c, &c->p->s[i], "-ceiling",
					  &c->r[i].ceiling, &c->r[i].flows))
			c->r[i].ceiling_ran = true;
	}
}

static void profile_server_argv_uncapped(const struct server_config *cfg,
					 const char *dsnfsd,
					 const char *state_dir,
					 char storage[][SERVER_PATH_MAX + 80],
					 const char **argv)
{
	size_t n = 0;

	argv[n++] = dsnfsd;
	argv[n++] = "-s";
	argv[n++] = state_dir;
	for (unsigned d = 0; d < cfg->ndatastores; d++) {
		snprintf(storage[d], SERVER_PATH_MAX + 80, "%s=%s",
			 cfg->names[d], cfg->paths[d]);
		argv[n++] = "-e";
		argv[n++] = storage[d];
	}
	argv[n] = NULL;
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

int profile_main(const struct dsload_opts *o)
{
	struct profile_ctx *c = calloc(1, sizeof(*c));
	struct profile *p = calloc(1, sizeof(*p));
	char path[PROFILE_PATH_MAX], dir[OPTS_PATH_MAX], dsnfsd[512];
	char log[PROFILE_PATH_MAX], state[PROFILE_PATH_MAX], errbuf[512];
	const char *argv[2 * FLEET_DS_MAX + 8];
	struct server_config cfg;
	struct server_proc sp = { 0 };
	json_t *root = NULL;
	unsigned failed;
	int status = DSLOAD_EXIT_USAGE, err;

	if (!c || !p)
		goto out;
	if (strchr(o->profile, '/') || strstr(o->profile, ".ini"))
		snprintf(path, sizeof(path), "%s", o->profile);
	else
		snprintf(path, sizeof(path), "%s/%s.ini", o->profile_dir,
			 o->profile);
	if (profile_load(path, p, errbuf, sizeof(errbuf))) {
		fprintf(stderr, "dsload: %s\n", errbuf);
		goto out;
	}
	c->o = o;
	c->p = p;
	c->base = o->spec;
	snprintf(dir, sizeof(dir), "%s",
		 o->out_dir[0] ? o->out_dir : "dsload-profile");
	mkdir(dir, 0755);
	snprintf(log, sizeof(log), "%s/runs.csv", dir);
	c->sink.out = stdout;
	c->sink.show_jobs = o->show_jobs;
	c->sink.admin_host = o->spec.server;
	c->admin_port = o->admin_port;
	c->sink.csv = fopen(log, "w");
	if (c->sink.csv)
		report_csv_header(c->sink.csv);
	c->sink.json = json_array();
	root = json_pack("{s:s, s:s, s:o}", "command", "profile", "profile",
			 p->name, "phases", c->sink.json);
	c->scale = o->scale > 0 ? o->scale : 1.0;
	if (o->server_config[0]) {
		if (server_config_read(o->server_config, &cfg, errbuf,
				       sizeof(errbuf))) {
			fprintf(stderr, "dsload: %s\n", errbuf);
			goto out;
		}
		if (server_dirs_make(&cfg, errbuf, sizeof(errbuf))) {
			fprintf(stderr, "dsload: %s\n", errbuf);
			goto out;
		}
		if (o->scale <= 0)
			c->scale = cfg.scale;
		c->base.ndatastores = cfg.ndatastores;
		memcpy(c->base.datastores, cfg.names, sizeof(cfg.names));
		if (o->dsnfsd[0])
			snprintf(dsnfsd, sizeof(dsnfsd), "%s", o->dsnfsd);
		else
			server_default_path(dsnfsd, sizeof(dsnfsd));
		argv[0] = dsnfsd;
		argv[1] = "-c";
		argv[2] = o->server_config;
		argv[3] = NULL;
		snprintf(log, sizeof(log), "%s/dsnfsd-capped.log", dir);
		if (server_start(dsnfsd, argv, log, &sp, errbuf,
				 sizeof(errbuf))) {
			fprintf(stderr, "dsload: %s\n", errbuf);
			goto out;
		}
		profile_base_from_server(c, &sp);
	} else if (!o->datastores_named) {
		opts_datastores_count(&c->base, PROFILE_DS_DEFAULT);
	}
	run_signals_block();
	for (size_t i = 0; i < p->n; i++) {
		err = profile_scenario_run(c, &p->s[i], "", &c->r[i].figure,
					   &c->r[i].flows);
		c->r[i].ran = err == 0;
	}
	if (sp.pid)
		server_stop(&sp);
	if (!o->no_ceiling && o->server_config[0]) {
		snprintf(state, sizeof(state), "%s/state-ceiling", dir);
		mkdir(state, 0700);
		profile_server_argv_uncapped(&cfg, dsnfsd, state, c->ds_args,
					     argv);
		snprintf(log, sizeof(log), "%s/dsnfsd-uncapped.log", dir);
		if (server_start(dsnfsd, argv, log, &sp, errbuf,
				 sizeof(errbuf)) == 0) {
			profile_base_from_server(c, &sp);
			profile_ceiling_run(c);
			server_stop(&sp);
		} else {
			fprintf(stderr, "dsload: ceiling: %s\n", errbuf);
		}
	} else if (!o->no_ceiling) {
		profile_ceiling_run(c);
	}
	failed = profile_table(stdout, c);
	if (!o->no_ceiling)
		profile_ceiling_report(stdout, c, o->server_config[0] != 0);
	snprintf(path, sizeof(path), "%s/profile.csv", dir);
	profile_csv_write(path, c);
	snprintf(path, sizeof(path), "%s/profile.json", dir);
	report_json_write(path, root);
	printf("dsload: results in %s/ (profile.csv runs.csv profile.json)\n",
	       dir);
	status = run_outcome_report(stdout, &c->sink.oc);
	if (failed) {
		printf("dsload: profile %s: %u of %zu ratio(s) outside 15%% of "
		       "the published ones\n",
		       p->name, failed, p->n);
		status = DSLOAD_EXIT_FAILED;
	} else {
		printf("dsload: profile %s: every ratio within 15%%\n",
		       p->name);
	}
out:
	if (sp.pid)
		server_stop(&sp);
	json_decref(root);
	if (c && c->sink.csv)
		fclose(c->sink.csv);
	free(c);
	free(p);
	return status;
}
