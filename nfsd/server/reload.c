// SPDX-License-Identifier: Apache-2.0
/*
 * reload: a SIGHUP's new config taken live (server_reconfigure, server.h):
 * new datastores opened, the pools and caps of the new config with the
 * admin API's changes laid over them checked as one registry change, then
 * all published at once, or nothing changes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/base/log.h"
#include "nfsd/overlay/overlay.h"
#include "nfsd/server/server_int.h"

/* What a reload lays the admin API's changes over (see below). */
struct server_reload {
	struct pool_state old; /* the config the changes were made over */
	struct pool_state merged; /* returns: the new config + changes */
	struct overlay ov;
	struct traffic_caps old_caps;
	struct traffic_caps live_caps;
	struct traffic_caps merged_caps;
};

/*
 * The pools of a reload, with the store locked: the admin API's changes
 * as they are now (the live state over the old config) laid over the new
 * config @st and @caps, checked as one registry change and written to the
 * ledger, or nothing.
 */
static int server_reload_pools(struct server *srv, struct server_reload *r,
			       const struct pool_state *st,
			       const struct traffic_caps *caps,
			       struct pool_limits *limits, char *errbuf,
			       size_t errlen)
{
	int err;

	overlay_store_base_get(srv->changes, &r->old, &r->old_caps);
	pool_registry_snapshot(srv->pools, &r->merged);
	traffic_caps_get(srv->traffic, &r->live_caps);
	overlay_diff(&r->old, &r->old_caps, &r->merged, &r->live_caps, &r->ov);
	err = server__overlay_apply(srv, &r->ov, st, caps, &r->merged,
				    &r->merged_caps, errbuf, errlen);
	if (err) {
		return err;
	}
	return pool_registry_load(srv->pools, &r->merged, limits, errbuf,
				  errlen);
}

/* Publishes the datastores a reload opened, and its trace flag. */
static void server_reload_exports(struct server *srv, const struct config *cfg,
				  size_t nadd)
{
	for (size_t i = 0; i < nadd; i++) {
		const char *name =
			srv->exports.exports[srv->exports.count + i].name;

		if (traffic_volume_keep(srv->traffic, name, traffic_now_ns())) {
			log_error("config: datastore %s: no memory for its "
				  "traffic counters",
				  name);
		}
	}
	server__exports_commit(srv, cfg, nadd);
	server__trace_set(srv, cfg->trace);
}

/* The traffic side of a reload, once pools and datastores are in: the
 * limits and caps, then the admin API's changes saved. */
static int server_reload_traffic(struct server *srv, struct server_reload *r,
				 const struct pool_state *st,
				 const struct traffic_caps *caps,
				 const struct pool_limits *limits, char *errbuf,
				 size_t errlen)
{
	char why[600];
	int err;

	err = server_limits_apply(srv, limits);
	if (err) {
		snprintf(errbuf, errlen, "traffic limits: %s", strerror(-err));
		return err;
	}
	err = traffic_caps_set(srv->traffic, &r->merged_caps, traffic_now_ns());
	if (err) {
		snprintf(errbuf, errlen, "[traffic]: %s", strerror(-err));
		return err;
	}
	/* The reload is in effect; a file that cannot be written is the
	 * operator's to fix, and the next change tries again. */
	if (server__overlay_record(srv, st, caps, &r->merged, &r->merged_caps,
				   why, sizeof(why))) {
		log_error("admin-state: %s; the admin API's changes are live "
			  "but not saved",
			  why);
	}
	return 0;
}

int server_reconfigure(struct server *srv, const struct config *cfg,
		       struct server_sections *sections, char *errbuf,
		       size_t errlen)
{
	struct pool_limits *limits = malloc(sizeof(*limits));
	struct server_reload *r = malloc(sizeof(*r));
	const struct pool_state *st;
	size_t nadd = 0;
	int err = -ENOMEM;

	if (!limits || !r) {
		goto out;
	}
	err = pool_config_finish(&sections->pools, &st, errbuf, errlen);
	if (err) {
		goto out;
	}
	/* New datastores are opened (not yet published) before the pools
	 * change, so that either both happen or neither. */
	err = server__exports_prepare(srv, cfg, &nadd, errbuf, errlen);
	if (err) {
		goto out;
	}
	overlay_store_lock(srv->changes);
	err = server_reload_pools(srv, r, st, &sections->caps, limits, errbuf,
				  errlen);
	if (err) {
		server__exports_abort(srv, nadd);
	} else {
		server_reload_exports(srv, cfg, nadd);
		err = server_reload_traffic(srv, r, st, &sections->caps, limits,
					    errbuf, errlen);
	}
	overlay_store_unlock(srv->changes);
	if (err) {
		goto out;
	}
	server__admin_policies(srv, cfg);
	log_info("config: reloaded: %zu datastores (%zu new), %zu pools, "
		 "%zu pooled datastores, trace %s",
		 cfg->ndatastores, nadd, limits->npools, limits->nvolumes,
		 cfg->trace ? "on" : "off");
out:
	free(r);
	free(limits);
	return err;
}
