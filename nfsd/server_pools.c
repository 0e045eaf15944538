/*
 * server_pools: the capacity side of a running dsnfsd (docs/pools.md,
 * section 5): the config keys of the pool and traffic modules, the pool
 * registry and its ledger STATE_DIR/capacity.ledger, the traffic model
 * that admits every NFS call, each datastore's quota, and how a new set of
 * limits (an admin operation, a reloaded config) reaches them all live.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nfsd/log.h"
#include "nfsd/pool/ledger.h"
#include "nfsd/server_int.h"

#define SERVER_LEDGER_FILE "capacity.ledger"

static int64_t server_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

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
		int64_t start = server_now_ns();
		int err;

		quota_init(q);
		srv->nquotas++;
		err = quota_scan(q, exp->dir, errbuf, errlen);
		if (err)
			return err;
		exp->quota = q;
		quota_get(q, &u);
		log_info("quota: %s: %" PRIu64 " bytes allocated in %" PRIu64
			 " inodes (scanned in %" PRId64 " ms)",
			 exp->name, u.used_bytes, u.files,
			 (server_now_ns() - start) / 1000000);
	}
	return 0;
}

int server__pools_open(struct server *srv, const char *state_dir,
		       struct server_sections *sections, char *errbuf,
		       size_t errlen)
{
	struct pool_limits *limits = malloc(sizeof(*limits));
	struct pool_ledger_recovery rec;
	const struct pool_state *st;
	char path[4200];
	int err;

	if (!limits)
		return -ENOMEM;
	pthread_mutex_init(&srv->apply_lock, NULL);
	srv->apply_lock_init = true;
	err = pool_config_finish(&sections->pools, &st, errbuf, errlen);
	if (err)
		goto out;
	err = pool_registry_new(NULL, NULL, &srv->pools);
	if (err)
		goto out;
	err = pool_registry_load(srv->pools, st, limits, errbuf, errlen);
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
	/* The config is the truth at start: the ledger records the
	 * difference from its last state (docs/pools.md, section 2). */
	err = pool_registry_ledger_attach(srv->pools, srv->ledger, errbuf,
					  errlen);
	if (err)
		goto out;
	err = traffic_new(&sections->caps, &srv->traffic);
	if (err) {
		snprintf(errbuf, errlen, "[traffic]: %s", strerror(-err));
		goto out;
	}
	for (size_t i = 0; i < srv->exports.count && !err; i++)
		err = traffic_volume_keep(srv->traffic,
					  srv->exports.exports[i].name,
					  server_now_ns());
	if (err) {
		snprintf(errbuf, errlen, "traffic volumes: %s", strerror(-err));
		goto out;
	}
	err = server_limits_apply(srv, limits);
	if (err) {
		snprintf(errbuf, errlen, "traffic limits: %s", strerror(-err));
		goto out;
	}
	log_info("pool: %zu pools, %zu pooled datastores; ledger %s",
		 limits->npools, limits->nvolumes, path);
out:
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
	err = traffic_limits_apply(srv->traffic, limits, server_now_ns());
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

int server_reconfigure(struct server *srv, const struct config *cfg,
		       struct server_sections *sections, char *errbuf,
		       size_t errlen)
{
	struct pool_limits *limits = malloc(sizeof(*limits));
	const struct pool_state *st;
	size_t nadd = 0;
	int err;

	if (!limits)
		return -ENOMEM;
	err = pool_config_finish(&sections->pools, &st, errbuf, errlen);
	if (err)
		goto out;
	/* New datastores are opened (not yet published) before the pools
	 * change, so that either both happen or neither. */
	err = server__exports_prepare(srv, cfg, &nadd, errbuf, errlen);
	if (err)
		goto out;
	/* Checked as a whole and written to the ledger, or nothing. */
	err = pool_registry_load(srv->pools, st, limits, errbuf, errlen);
	if (err) {
		server__exports_abort(srv, nadd);
		goto out;
	}
	for (size_t i = 0; i < nadd; i++) {
		const char *name =
			srv->exports.exports[srv->exports.count + i].name;

		if (traffic_volume_keep(srv->traffic, name, server_now_ns()))
			log_error("config: datastore %s: no memory for its "
				  "traffic counters",
				  name);
	}
	server__exports_commit(srv, cfg, nadd);
	server__trace_set(srv, cfg->trace);
	err = server_limits_apply(srv, limits);
	if (err) {
		snprintf(errbuf, errlen, "traffic limits: %s", strerror(-err));
		goto out;
	}
	err = traffic_caps_set(srv->traffic, &sections->caps, server_now_ns());
	if (err) {
		snprintf(errbuf, errlen, "[traffic]: %s", strerror(-err));
		goto out;
	}
	log_info("config: reloaded: %zu datastores (%zu new), %zu pools, "
		 "%zu pooled datastores, trace %s",
		 cfg->ndatastores, nadd, limits->npools, limits->nvolumes,
		 cfg->trace ? "on" : "off");
out:
	free(limits);
	return err;
}
