// SPDX-License-Identifier: Apache-2.0
/*
 * admin: the admin and metrics endpoint of a running dsnfsd
 * (admin.h), given the server's registry, traffic model and datastores,
 * and callbacks for what only the server knows: a datastore's usage (its
 * quota accounting) and how new limits reach the traffic model and the
 * quotas.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/base/errbuf.h"
#include "nfsd/base/log.h"
#include "nfsd/repl/service.h"
#include "nfsd/server/server_int.h"

static int server_admin_usage(void *arg, const char *volume,
			      uint64_t *used_bytes)
{
	struct server_volume_usage u;
	int err = server_volume_usage(arg, volume, &u);

	if (!err) {
		*used_bytes = u.used_bytes;
	}
	return err;
}

static int server_admin_limits_apply(void *arg,
				     const struct pool_limits *limits)
{
	return server_limits_apply(arg, limits);
}

void server__admin_policies(struct server *srv, const struct config *cfg)
{
	struct admin_policy_config *p;
	size_t n = 0;

	if (!srv->admin) {
		for (size_t i = 0; i < cfg->ndatastores; i++) {
			if (snap_policy_any(&cfg->datastores[i].policy)) {
				log_error("snapshot-policy: %s: not run: "
					  "snapshot policies run in the admin "
					  "endpoint, and admin_port is off",
					  cfg->datastores[i].name);
			}
		}
		return;
	}
	p = calloc(cfg->ndatastores ? cfg->ndatastores : 1, sizeof(*p));
	if (!p) {
		log_error("snapshot-policy: out of memory: the policies of "
			  "the config are not applied");
		return;
	}
	for (size_t i = 0; i < cfg->ndatastores; i++) {
		snprintf(p[n].volume, sizeof(p[n].volume), "%s",
			 cfg->datastores[i].name);
		p[n++].policy = cfg->datastores[i].policy;
	}
	if (admin_policies_config(srv->admin, p, n)) {
		log_error("snapshot-policy: more than %d datastores with a "
			  "policy: some are not run",
			  128);
	}
	free(p);
}

int server__admin_start(struct server *srv, const struct config *cfg,
			const struct server_sections *sections, char *errbuf,
			size_t errlen)
{
	struct admin_ctx ctx = {
		.pools = srv->pools,
		.traffic = srv->traffic,
		.exports = &srv->exports,
		.usage = server_admin_usage,
		.limits_apply = server_admin_limits_apply,
		.cb_arg = srv,
		.changes = srv->changes,
		.net = &srv->net,
		.ops = srv->ops,
		.state_dir = cfg->state_dir,
		.config = sections->admin,
	};
	int err;

	srv->ports.admin = -1;
	if (cfg->admin_port == CONFIG_PORT_OFF) {
		if (sections->repl.n) {
			return errbuf_printf(errbuf, errlen, -EINVAL,
					     "[replication]: relations run "
					     "through the admin endpoint, and "
					     "admin_port is off");
		}
		server__admin_policies(srv, cfg);
		return 0;
	}
	/* Before the endpoint, which serves the destination's route. */
	err = repl_service_start(&sections->repl, &srv->exports, srv->ops,
				 cfg->state_dir, &srv->repl, errbuf, errlen);
	if (err) {
		return err;
	}
	ctx.repl = srv->repl;
	/* Every failure stops the start: a port in use may be an impostor
	 * that dsnfsctl would then talk to (and give the token to); an
	 * operator who wants no endpoint says admin_port = off. */
	err = admin_start(&ctx, cfg->admin_listen, cfg->admin_port,
			  &srv->ports.admin, &srv->admin, errbuf, errlen);
	if (err) {
		size_t n = strlen(errbuf);

		if (err == -EADDRINUSE && n + 1 < errlen) {
			snprintf(errbuf + n, errlen - n,
				 " (another dsnfsd, or another program: stop "
				 "it, or set admin_port, or admin_port = off)");
		}
		srv->ports.admin = -1;
		repl_service_stop(srv->repl);
		srv->repl = NULL;
		return err;
	}
	log_info("admin: %s://%s:%d/ (alarms at %u%% usage, %u%% "
		 "overallocation, every %u s)",
		 sections->admin.tls_cert[0] ? "https" : "http",
		 cfg->admin_listen, srv->ports.admin,
		 ctx.config.usage_alarm_percent,
		 ctx.config.overallocation_alarm_percent,
		 ctx.config.alarm_interval_s);
	server__admin_policies(srv, cfg);
	return 0;
}

void server__admin_stop(struct server *srv)
{
	admin_stop(srv->admin);
	srv->admin = NULL;
	/* After the endpoint: no peer request runs now. */
	repl_service_stop(srv->repl);
	srv->repl = NULL;
}
