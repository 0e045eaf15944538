// SPDX-License-Identifier: Apache-2.0
/*
 * pools: the capacity side of a running dsnfsd (docs/pools.md,
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

#include "nfsd/base/log.h"
#include "nfsd/overlay/overlay.h"
#include "nfsd/pool/ledger.h"
#include "nfsd/server/server_int.h"

#define SERVER_LEDGER_FILE "capacity.ledger"

/* config_section_fn over the modules: [traffic] first, then the pool
 * keys, then [admin]; -ENOENT when none takes the key. */
static int server_sections_hook(void *arg, const char *section, const char *key,
				const char *value, char *errbuf, size_t errlen)
{
	struct server_sections *s = arg;
	int err = traffic_config_section(&s->caps, section, key, value, errbuf,
					 errlen);

	if (err != -ENOENT) {
		return err;
	}
	err = pool_config_section(&s->pools, section, key, value, errbuf,
				  errlen);
	if (err != -ENOENT) {
		return err;
	}
	err = repl_config_section(&s->repl, section, key, value, errbuf,
				  errlen);
	if (err != -ENOENT) {
		return err;
	}
	return admin_config_section(&s->admin, section, key, value, errbuf,
				    errlen);
}

int server_sections_init(struct server_sections *s, struct config *cfg)
{
	int err;

	traffic_caps_default(&s->caps);
	admin_config_default(&s->admin);
	memset(&s->repl, 0, sizeof(s->repl));
	err = pool_config_init(&s->pools);
	if (err) {
		return err;
	}
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
	if (!srv->quotas) {
		return -ENOMEM;
	}
	for (size_t i = 0; i < srv->exports.count; i++) {
		struct export *exp = &srv->exports.exports[i];
		struct quota *q = &srv->quotas[i];
		struct quota_usage u;
		int64_t start = traffic_now_ns();
		int err;

		quota_init(q);
		srv->nquotas++;
		if (!exp->remote_store) {
			err = quota_scan(q, exp->dir, errbuf, errlen);
		} else if (exp->store) {
			err = quota_scan_store(q, exp->store, errbuf, errlen);
		} else {
			err = 0; /* store_down: nothing to count yet */
		}
		if (err) {
			return err;
		}
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

int server__overlay_apply(struct server *srv, const struct overlay *ov,
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
	if (!overlay_empty(ov)) {
		log_info("admin-state: %s: %zu admin API change(s) over the "
			 "config, %zu dropped",
			 overlay_store_path(srv->changes),
			 server_overlay_count(ov), dropped);
	}
	return 0;
}

int server__overlay_record(struct server *srv, const struct pool_state *st,
			   const struct traffic_caps *caps,
			   const struct pool_state *live,
			   const struct traffic_caps *live_caps, char *errbuf,
			   size_t errlen)
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
	if (err == -ENOENT) {
		return 0;
	}
	if (err) {
		snprintf(errbuf, errlen,
			 "admin-state: %s; it holds the admin API's changes "
			 "over the config (pools, volumes, caps), and dsnfsd "
			 "will not start without them: repair it, or move it "
			 "away to start from the config alone",
			 why);
	}
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

	if (!limits || !merged || !ov) {
		goto out;
	}
	pthread_mutex_init(&srv->apply_lock, NULL);
	srv->apply_lock_init = true;
	err = pool_config_finish(&sections->pools, &st, errbuf, errlen);
	if (err) {
		goto out;
	}
	err = server_overlay_load(srv, state_dir, ov, errbuf, errlen);
	if (!err) {
		err = server__overlay_apply(srv, ov, st, &sections->caps,
					    merged, &caps, errbuf, errlen);
	}
	if (err) {
		goto out;
	}
	err = pool_registry_new(NULL, NULL, &srv->pools);
	if (err) {
		goto out;
	}
	err = pool_registry_load(srv->pools, merged, limits, errbuf, errlen);
	if (err) {
		goto out;
	}
	snprintf(path, sizeof(path), "%s/%s", state_dir, SERVER_LEDGER_FILE);
	err = pool_ledger_open(path, POOL_LEDGER_READ_WRITE, &srv->ledger, &rec,
			       errbuf, errlen);
	if (err) {
		goto out;
	}
	if (rec.torn) {
		log_warn("pool: %s: a torn last record at offset %" PRIu64
			 " (%" PRIu64 " bytes) was dropped: %s",
			 path, rec.offset, rec.dropped_bytes, rec.why);
	}
	/* The config and the admin API's changes over it are the truth at
	 * start: the ledger records how they differ from its last state, so
	 * a pool that survives the restart is not billed as deleted and
	 * created again (docs/pools.md, section 2). */
	err = pool_registry_ledger_attach(srv->pools, srv->ledger, errbuf,
					  errlen);
	if (err) {
		goto out;
	}
	err = traffic_new(&caps, &srv->traffic);
	if (err) {
		snprintf(errbuf, errlen, "[traffic]: %s", strerror(-err));
		goto out;
	}
	for (size_t i = 0; i < srv->exports.count && !err; i++) {
		err = traffic_volume_keep(srv->traffic,
					  srv->exports.exports[i].name,
					  traffic_now_ns());
	}
	if (err) {
		snprintf(errbuf, errlen, "traffic volumes: %s", strerror(-err));
		goto out;
	}
	err = server_limits_apply(srv, limits);
	if (err) {
		snprintf(errbuf, errlen, "traffic limits: %s", strerror(-err));
		goto out;
	}
	err = server__overlay_record(srv, st, &sections->caps, merged, &caps,
				     errbuf, errlen);
	if (err) {
		goto out;
	}
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
	if (srv->traffic) {
		traffic_free(srv->traffic);
	}
	if (srv->pools) {
		pool_registry_free(srv->pools);
	}
	if (srv->ledger) {
		pool_ledger_close(srv->ledger);
	}
	overlay_store_free(srv->changes);
	for (size_t i = 0; i < srv->nquotas; i++) {
		srv->exports.exports[i].quota = NULL;
		quota_fini(&srv->quotas[i]);
	}
	free(srv->quotas);
	if (srv->apply_lock_init) {
		pthread_mutex_destroy(&srv->apply_lock);
	}
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

int server_volume_usage(struct server *srv, const char *name,
			struct server_volume_usage *out)
{
	size_t n = __atomic_load_n(&srv->nquotas, __ATOMIC_ACQUIRE);

	for (size_t i = 0; i < n; i++) {
		struct quota_usage u;

		if (strcmp(srv->exports.exports[i].name, name)) {
			continue;
		}
		quota_get(&srv->quotas[i], &u);
		out->used_bytes = u.used_bytes;
		out->quota_bytes = u.limit_bytes;
		out->reserved_bytes = u.reserved_bytes;
		return 0;
	}
	return -ENOENT;
}
