/*
 * server_pools: the capacity side of a running dsnfsd (docs/pools.md,
 * section 5): the config keys of the pool and traffic modules, the pool
 * registry and its ledger STATE_DIR/capacity.ledger, the traffic model
 * that admits every NFS call, each datastore's quota, and how a new set of
 * limits (an admin operation, a reloaded config) reaches them all live.
 * The admin API's changes over the config (STATE_DIR/admin-state.json,
 * nfsd/overlay/overlay.h) are laid over the config at start and at every
 * SIGHUP, as one registry change.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nfsd/log.h"
#include "nfsd/overlay/overlay.h"
#include "nfsd/pool/ledger.h"
#include "nfsd/server_int.h"

#define SERVER_LEDGER_FILE "capacity.ledger"

/* config_section_fn over the modules: [traffic] first, then the pool
 * keys, then [admin]; -ENOENT when none takes the key. */
static int server_sections_hook(void *arg, const char *section, const char *key,
				const char *value, char *errbuf, size_t errlen)
{
	struct server_sections *s = arg;
	int err = traffic_config_section(&s->caps, section, key, value, errbuf,
					 errlen);

	if (err != -ENOENT)
		return err;
	err = pool_config_section(&s->pools, section, key, value, errbuf,
				  errlen);
	if (err != -ENOENT)
		return err;
	return admin_config_section(&s->admin, section, key, value, errbuf,
				    errlen);
}

int server_sections_init(struct server_sections *s, struct config *cfg)
{
	int err;

	traffic_caps_default(&s->caps);
	admin_config_default(&s->admin);
	err = pool_config_init(&s->pools);
	if (err)
		return err;
	cfg->section_hook = server_sections_hook;
	cfg->section_hook_arg = s;
	return 0;
}

void server_sections_fini(struct server_sections *s)
{
	pool_config_fini(&s->pools);
}

int server__quotas_open(struct server *srv, char *errbuf, size_t errlen)
{
	/* A slot per export slot: a reload adds quotas without moving. */
	srv->quotas = calloc(srv->exports.cap ? srv->exports.cap : 1,
			     sizeof(*srv->quotas));
	if (!srv->quotas)
		return -ENOMEM;
	for (size_t i = 0; i < srv->exports.count; i++) {
		struct export *exp = &srv->exports.exports[i];
		struct quota *q = &srv->quotas[i];
		struct quota_usage u;
		int64_t start = traffic_now_ns();
		int err;

		quota_init(q);
		srv->nquotas++;
		if (!exp->remote_store)
			err = quota_scan(q, exp->dir, errbuf, errlen);
		else if (exp->store)
			err = quota_scan_store(q, exp->store, errbuf, errlen);
		else
			err = 0; /* store_down: nothing to count yet */
		if (err)
			return err;
		exp->quota = q;
		quota_get(q, &u);
		log_info("quota: %s: %" PRIu64 " bytes allocated in %" PRIu64
			 " inodes (scanned in %" PRId64 " ms)",
			 exp->name, u.used_bytes, u.files,
			 (traffic_now_ns() - start) / 1000000);
	}
	return 0;
}

/* overlay_refused_fn: an API change the config no longer allows. */
static void server_overlay_refused_cb(void *arg, const char *entry,
				      const char *why)
{
	const struct overlay_store *changes = arg;

	log_warn("admin-state: %s: dropped %s: %s (an admin API change that "
		 "the config no longer allows gives way to the config)",
		 overlay_store_path(changes), entry, why);
}

static size_t server_overlay_count(const struct overlay *ov)
{
	return ov->npools + ov->nvolumes +
	       (size_t)__builtin_popcount(ov->caps_fields);
}

/*
 * Lays @ov over the config's @st and @caps into @merged and @merged_caps,
 * logging what is dropped.  Returns 0 or -ENOMEM (message in errbuf).
 */
static int server_overlay_apply(struct server *srv, const struct overlay *ov,
				const struct pool_state *st,
				const struct traffic_caps *caps,
				struct pool_state *merged,
				struct traffic_caps *merged_caps, char *errbuf,
				size_t errlen)
{
	size_t dropped = 0;
	int err;

	err = overlay_apply(ov, st, caps, &srv->exports, merged, merged_caps,
			    server_overlay_refused_cb, srv->changes, &dropped);
	if (err) {
		snprintf(errbuf, errlen, "admin-state: out of memory");
		return err;
	}
	if (!overlay_empty(ov))
		log_info("admin-state: %s: %zu admin API change(s) over the "
			 "config, %zu dropped",
			 overlay_store_path(srv->changes),
			 server_overlay_count(ov), dropped);
	return 0;
}

/* Remembers the config's state and writes the overlay of the live one
 * (entries dropped leave the file).  The store is locked or not shared. */
static int server_overlay_record(struct server *srv,
				 const struct pool_state *st,
				 const struct traffic_caps *caps,
				 const struct pool_state *live,
				 const struct traffic_caps *live_caps,
				 char *errbuf, size_t errlen)
{
	overlay_store_base_set(srv->changes, st, caps);
	return overlay_store_record(srv->changes, live, live_caps, errbuf,
				    errlen);
}

/* Reads STATE_DIR/admin-state.json into @ov; no file is no change.  A file
 * that cannot be read stops the start: it holds pools that are billed. */
static int server_overlay_load(struct server *srv, const char *state_dir,
			       struct overlay *ov, char *errbuf, size_t errlen)
{
	char path[4200], why[600];
	int err;

	snprintf(path, sizeof(path), "%s/%s", state_dir, OVERLAY_FILE_NAME);
	err = overlay_store_new(path, &srv->changes);
	if (err) {
		snprintf(errbuf, errlen, "admin-state: %s: %s", path,
			 strerror(-err));
		return err;
	}
	err = overlay_store_load(srv->changes, ov, why, sizeof(why));
	if (err == -ENOENT)
		return 0;
	if (err)
		snprintf(errbuf, errlen,
			 "admin-state: %s; it holds the admin API's changes "
			 "over the config (pools, volumes, caps), and dsnfsd "
			 "will not start without them: repair it, or move it "
			 "away to start from the config alone",
			 why);
	return err;
}

int server__pools_open(struct server *srv, const char *state_dir,
		       struct server_sections *sections, char *errbuf,
		       size_t errlen)
{
	struct pool_limits *limits = malloc(sizeof(*limits));
	struct pool_state *merged = malloc(sizeof(*merged));
	struct overlay *ov = malloc(sizeof(*ov));
	struct pool_ledger_recovery rec;
	struct traffic_caps caps;
	const struct pool_state *st;
	char path[4200];
	int err = -ENOMEM;

	if (!limits || !merged || !ov)
		goto out;
	pthread_mutex_init(&srv->apply_lock, NULL);
	srv->apply_lock_init = true;
	err = pool_config_finish(&sections->pools, &st, errbuf, errlen);
	if (err)
		goto out;
	err = server_overlay_load(srv, state_dir, ov, errbuf, errlen);
	if (!err)
		err = server_overlay_apply(srv, ov, st, &sections->caps, merged,
					   &caps, errbuf, errlen);
	if (err)
		goto out;
	err = pool_registry_new(NULL, NULL, &srv->pools);
	if (err)
		goto out;
	err = pool_registry_load(srv->pools, merged, limits, errbuf, errlen);
	if (err)
		goto out;
	snprintf(path, sizeof(path), "%s/%s", state_dir, SERVER_LEDGER_FILE);
	err = pool_ledger_open(path, POOL_LEDGER_READ_WRITE, &srv->ledger, &rec,
			       errbuf, errlen);
	if (err)
		goto out;
	if (rec.torn)
		log_warn("pool: %s: a torn last record at offset %" PRIu64
			 " (%" PRIu64 " bytes) was dropped: %s",
			 path, rec.offset, rec.dropped_bytes, rec.why);
	/* The config and the admin API's changes over it are the truth at
	 * start: the ledger records how they differ from its last state, so
	 * a pool that survives the restart is not billed as deleted and
	 * created again (docs/pools.md, section 2). */
	err = pool_registry_ledger_attach(srv->pools, srv->ledger, errbuf,
					  errlen);
	if (err)
		goto out;
	err = traffic_new(&caps, &srv->traffic);
	if (err) {
		snprintf(errbuf, errlen, "[traffic]: %s", strerror(-err));
		goto out;
	}
	for (size_t i = 0; i < srv->exports.count && !err; i++)
		err = traffic_volume_keep(srv->traffic,
					  srv->exports.exports[i].name,
					  traffic_now_ns());
	if (err) {
		snprintf(errbuf, errlen, "traffic volumes: %s", strerror(-err));
		goto out;
	}
	err = server_limits_apply(srv, limits);
	if (err) {
		snprintf(errbuf, errlen, "traffic limits: %s", strerror(-err));
		goto out;
	}
	err = server_overlay_record(srv, st, &sections->caps, merged, &caps,
				    errbuf, errlen);
	if (err)
		goto out;
	log_info("pool: %zu pools, %zu pooled datastores; ledger %s",
		 limits->npools, limits->nvolumes, path);
out:
	free(ov);
	free(merged);
	free(limits);
	return err;
}

void server__pools_close(struct server *srv)
{
	if (srv->traffic)
		traffic_free(srv->traffic);
	if (srv->pools)
		pool_registry_free(srv->pools);
	if (srv->ledger)
		pool_ledger_close(srv->ledger);
	overlay_store_free(srv->changes);
	for (size_t i = 0; i < srv->nquotas; i++) {
		srv->exports.exports[i].quota = NULL;
		quota_fini(&srv->quotas[i]);
	}
	free(srv->quotas);
	if (srv->apply_lock_init)
		pthread_mutex_destroy(&srv->apply_lock);
}

int server_limits_apply(struct server *srv, const struct pool_limits *limits)
{
	int err;

	pthread_mutex_lock(&srv->apply_lock);
	err = traffic_limits_apply(srv->traffic, limits, traffic_now_ns());
	for (size_t i = 0; i < srv->nquotas; i++) {
		const char *name = srv->exports.exports[i].name;
		uint64_t quota = 0;

		for (size_t j = 0; j < limits->nvolumes; j++) {
			if (!strcmp(limits->volumes[j].name, name)) {
				quota = limits->volumes[j].quota_bytes;
				break;
			}
		}
		quota_set_limit(&srv->quotas[i], quota);
	}
	pthread_mutex_unlock(&srv->apply_lock);
	return err;
}

struct pool_registry *server_pools(struct server *srv)
{
	return srv->pools;
}

struct traffic *server_traffic(struct server *srv)
{
	return srv->traffic;
}

const struct export_table *server_exports(struct server *srv)
{
	return &srv->exports;
}

int server_volume_usage(struct server *srv, const char *name,
			struct server_volume_usage *out)
{
	size_t n = __atomic_load_n(&srv->nquotas, __ATOMIC_ACQUIRE);

	for (size_t i = 0; i < n; i++) {
		struct quota_usage u;

		if (strcmp(srv->exports.exports[i].name, name))
			continue;
		quota_get(&srv->quotas[i], &u);
		out->used_bytes = u.used_bytes;
		out->quota_bytes = u.limit_bytes;
		out->reserved_bytes = u.reserved_bytes;
		return 0;
	}
	return -ENOENT;
}

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
	err = server_overlay_apply(srv, &r->ov, st, caps, &r->merged,
				   &r->merged_caps, errbuf, errlen);
	if (err)
		return err;
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

		if (traffic_volume_keep(srv->traffic, name, traffic_now_ns()))
			log_error("config: datastore %s: no memory for its "
				  "traffic counters",
				  name);
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
	if (server_overlay_record(srv, st, caps, &r->merged, &r->merged_caps,
				  why, sizeof(why)))
		log_error("admin-state: %s; the admin API's changes are live "
			  "but not saved",
			  why);
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

	if (!limits || !r)
		goto out;
	err = pool_config_finish(&sections->pools, &st, errbuf, errlen);
	if (err)
		goto out;
	/* New datastores are opened (not yet published) before the pools
	 * change, so that either both happen or neither. */
	err = server__exports_prepare(srv, cfg, &nadd, errbuf, errlen);
	if (err)
		goto out;
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
	if (err)
		goto out;
	log_info("config: reloaded: %zu datastores (%zu new), %zu pools, "
		 "%zu pooled datastores, trace %s",
		 cfg->ndatastores, nadd, limits->npools, limits->nvolumes,
		 cfg->trace ? "on" : "off");
out:
	free(r);
	free(limits);
	return err;
}
