// SPDX-License-Identifier: Apache-2.0
/*
 * exports: the export table of a running dsnfsd.  At start every
 * [datastore NAME] becomes an export; at SIGHUP the table follows the new
 * config without a restart (export.h says how calls on other loops stay
 * safe): options change in place, an export no longer in the file is
 * marked removed (its handles answer STALE, MOUNT refuses it) and a new
 * one is opened and published.  A datastore whose path or fsid changed
 * refuses the reload: its handles would name other files.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/base/errbuf.h"
#include "nfsd/base/log.h"
#include "nfsd/server/server_int.h"
#include "nfsd/store/store_open.h"

/* The options of @ds onto @exp (the caller holds the write lock, or the
 * export is not published yet). */
static void server_export_options_set(struct export *exp,
				      const struct config_datastore *ds)
{
	exp->read_only = ds->read_only;
	exp->snapshot_dir = ds->snapshot_dir;
	exp->secure = ds->secure;
	exp->squash = ds->squash;
	exp->anon_uid = ds->anon_uid;
	exp->anon_gid = ds->anon_gid;
	memcpy(exp->clients, ds->clients, sizeof(exp->clients));
	exp->nclients = ds->nclients;
	exp->clients_default = ds->clients_default;
	if (exp->store) {
		atomic_store(&exp->store->zero_on_first_write,
			     ds->zero_on_first_write);
	}
}

static bool server_export_options_same(const struct export *exp,
				       const struct config_datastore *ds)
{
	return exp->read_only == ds->read_only &&
	       exp->snapshot_dir == ds->snapshot_dir &&
	       exp->secure == ds->secure && exp->squash == ds->squash &&
	       exp->anon_uid == ds->anon_uid && exp->anon_gid == ds->anon_gid &&
	       exp->nclients == ds->nclients &&
	       exp->clients_default == ds->clients_default &&
	       (!exp->store || atomic_load(&exp->store->zero_on_first_write) ==
				       ds->zero_on_first_write) &&
	       memcmp(exp->clients, ds->clients,
		      ds->nclients * sizeof(ds->clients[0])) == 0;
}

static uint32_t server_datastore_id(const struct config_datastore *ds)
{
	return ds->fsid ? ds->fsid : export_id_from_name(ds->name);
}

/* The [server] rules of in-place writes, on a log just opened.  No ring
 * for the direct writes (io_uring refused here): the work threads do
 * them, as with intent_log_inplace_uring = no. */
static void server_ilog_configure(struct server *srv, struct store_ilog *ilog)
{
	int err;

	store_ilog_set_inplace(ilog, srv->ilog_inplace_min,
			       srv->ilog_inplace_seq_min);
	store_ilog_set_inplace_direct(ilog, srv->ilog_inplace_direct);
	if (!srv->ilog_inplace_direct || !srv->ilog_inplace_uring) {
		return;
	}
	err = store_ilog_set_inplace_uring(ilog, true);
	if (err) {
		log_warn("ilog: %s: no io_uring for direct writes (%s): work "
			 "threads write them",
			 store_ilog_path(ilog), strerror(-err));
	}
}

/*
 * The intent log of the new store of @exp: its own (replayed onto it
 * before it serves), the server's (replayed at start over every store
 * using it; a datastore a reload adds just joins it), or none.
 */
static int server_export_ilog_open(struct server *srv, struct export *exp,
				   const struct config_datastore *ds,
				   char *errbuf, size_t errlen)
{
	int err;

	/* rados: the store keeps it (store_params.rlog_gateway). */
	if (!strcmp(ds->intent_log, "off") ||
	    !strcmp(ds->intent_log, "rados")) {
		return 0;
	}
	if (!ds->intent_log[0]) {
		exp->store->ilog = srv->ilog;
		return 0;
	}
	err = store_ilog_open(ds->intent_log, srv->ilog_ring_bytes,
			      srv->ilog_checkpoint_ms, &exp->store, 1,
			      &exp->ilog, errbuf, errlen);
	if (err) {
		store_close(exp->store);
		exp->store = NULL;
		return err;
	}
	server_ilog_configure(srv, exp->ilog);
	return 0;
}

/* Fills the unpublished slot @exp from @ds and opens its store. */
static int server_export_open(struct server *srv, struct export *exp,
			      const struct config_datastore *ds, char *errbuf,
			      size_t errlen)
{
	int err;

	memset(exp, 0, sizeof(*exp));
	snprintf(exp->name, sizeof(exp->name), "%s", ds->name);
	snprintf(exp->path, sizeof(exp->path), "/%s", ds->name);
	snprintf(exp->dir, sizeof(exp->dir), "%s", ds->path);
	exp->remote_store = ds->backend != CONFIG_BACKEND_LOCAL;
	exp->id = server_datastore_id(ds);
	server_export_options_set(exp, ds);
	err = server__export_store_open(srv, ds, exp->id, &exp->store,
					&exp->root_fileid, errbuf, errlen);
	if (err) {
		return err;
	}
	return server_export_ilog_open(srv, exp, ds, errbuf, errlen);
}

/* Who may use @exp, for the export's log line: "loopback only",
 * "listed clients", "everyone". */
static const char *server_export_who(const struct export *exp)
{
	if (exp->nclients == 0) {
		return "everyone";
	}
	return exp->clients_default ? "loopback only" : "listed clients";
}

static const char *server_export_squash(const struct export *exp)
{
	switch (exp->squash) {
	case EXPORT_SQUASH_NONE:
		return "squash none";
	case EXPORT_SQUASH_ROOT:
		return "squash root";
	case EXPORT_SQUASH_ALL:
		return "squash all";
	}
	return "squash ?";
}

/* @ds: the export's datastore in the config, or NULL (removed). */
static void server_export_log(const char *what, const struct export *exp,
			      const struct config_datastore *ds)
{
	if (ds && ds->backend == CONFIG_BACKEND_CEPHFS) {
		log_info("export: %s %s -> cephfs %s%s%s (%s, client.%s; "
			 "fsid %u%s; %s, %s%s%s)",
			 what, exp->path, ds->ceph_fs[0] ? ds->ceph_fs : "",
			 ds->ceph_fs[0] ? ":" : "", ds->ceph_path,
			 ds->ceph_conf, ds->ceph_user, exp->id,
			 exp->read_only ? ", read-only" : "",
			 server_export_who(exp), server_export_squash(exp),
			 exp->secure ? ", secure" : ", insecure",
			 exp->store_down ? "; cluster down: JUKEBOX" : "");
	} else {
		log_info("export: %s %s -> %s (fsid %u%s; %s, %s%s)", what,
			 exp->path, exp->dir, exp->id,
			 exp->read_only ? ", read-only" : "",
			 server_export_who(exp), server_export_squash(exp),
			 exp->secure ? ", secure" : ", insecure");
	}
}

/* The [server] intent log, replayed onto every store that names no log
 * of its own, before any of them serves. */
static int server_ilog_open(struct server *srv, const struct config *cfg,
			    char *errbuf, size_t errlen)
{
	struct export_table *tab = &srv->exports;
	struct store *stores[CONFIG_MAX_DATASTORES];
	size_t n = 0;
	int err;

	if (!cfg->intent_log[0]) {
		return 0;
	}
	for (size_t i = 0; i < tab->count && i < cfg->ndatastores; i++) {
		/* The log replays onto local files only. */
		if (!cfg->datastores[i].intent_log[0] &&
		    cfg->datastores[i].backend == CONFIG_BACKEND_LOCAL &&
		    tab->exports[i].store) {
			stores[n++] = tab->exports[i].store;
		}
	}
	err = store_ilog_open(cfg->intent_log, srv->ilog_ring_bytes,
			      srv->ilog_checkpoint_ms, stores, n, &srv->ilog,
			      errbuf, errlen);
	if (!err) {
		server_ilog_configure(srv, srv->ilog);
	}
	return err;
}

/* server_export_open(), but a cephfs datastore whose cluster does not
 * answer costs itself, not the others: the export stays, store_down, its
 * calls answer JUKEBOX, and the recovery thread opens it later. */
static int server_export_open_or_wait(struct server *srv, struct export *exp,
				      const struct config_datastore *ds,
				      char *errbuf, size_t errlen)
{
	int err = server_export_open(srv, exp, ds, errbuf, errlen);

	if (err && ds->backend == CONFIG_BACKEND_CEPHFS) {
		log_error("export: %s; retried every %d s", errbuf,
			  SERVER_RECOVERY_RETRY_MS / 1000);
		exp->store_down = true;
		exp->store = NULL;
		err = 0;
	}
	return err;
}

int server__exports_open(struct server *srv, const struct config *cfg,
			 char *errbuf, size_t errlen)
{
	struct export_table *tab = &srv->exports;
	int err;

	/* Full capacity now: slots never move, so a borrowed export stays
	 * valid while SIGHUPs add exports. */
	tab->exports = calloc(CONFIG_MAX_DATASTORES, sizeof(struct export));
	if (!tab->exports) {
		return -ENOMEM;
	}
	tab->cap = CONFIG_MAX_DATASTORES;
	pthread_rwlock_init(&tab->lock, NULL);
	srv->exports_lock_init = true;
	for (size_t i = 0; i < cfg->ndatastores; i++) {
		struct export *exp = &tab->exports[tab->count];

		err = server_export_open_or_wait(srv, exp, &cfg->datastores[i],
						 errbuf, errlen);
		/* Every cephfs datastore: opened later if it is down, opened
		 * anew if its session is evicted. */
		if (!err &&
		    cfg->datastores[i].backend == CONFIG_BACKEND_CEPHFS &&
		    server__recovery_add(srv, tab->count,
					 &cfg->datastores[i])) {
			err = errbuf_printf(errbuf, errlen, -ENOMEM,
					    "datastore %s: out of memory",
					    cfg->datastores[i].name);
		}
		if (err) {
			return err;
		}
		err = export_table_publish(tab);
		if (err) {
			if (exp->store) {
				store_close(exp->store);
			}
			exp->store = NULL;
			snprintf(errbuf, errlen, "more than %d datastores",
				 CONFIG_MAX_DATASTORES);
			return err;
		}
		server_export_log("exporting", exp, &cfg->datastores[i]);
	}
	err = server_ilog_open(srv, cfg, errbuf, errlen);
	if (err) {
		return err;
	}
	server__fcache_budget_apply(srv, "start");
	return 0;
}

void server__ilogs_drain(struct server *srv)
{
	struct export_table *tab = &srv->exports;

	store_ilog_drain(srv->ilog);
	for (size_t i = 0; i < tab->count; i++) {
		store_ilog_drain(tab->exports[i].ilog);
	}
}

void server__exports_close(struct server *srv)
{
	struct export_table *tab = &srv->exports;

	/* No store is published behind our back while they close. */
	server__recovery_stop(srv);
	/* Work has stopped: the last checkpoint, then the stores. */
	store_ilog_close(srv->ilog);
	srv->ilog = NULL;
	for (size_t i = 0; i < tab->count; i++) {
		struct store *st = tab->exports[i].store;

		store_ilog_close(tab->exports[i].ilog);
		tab->exports[i].ilog = NULL;
		if (st) {
			store_close(st);
		}
	}
	free(tab->exports);
	if (srv->exports_lock_init) {
		pthread_rwlock_destroy(&tab->lock);
	}
}

static struct export *server_slot_by_name(struct server *srv, const char *name)
{
	for (size_t i = 0; i < srv->exports.count; i++) {
		if (!strcmp(srv->exports.exports[i].name, name)) {
			return &srv->exports.exports[i];
		}
	}
	return NULL;
}

/* What a reload keeps, checked: the identity of every datastore that
 * stays (or comes back) and the ids of the new ones. */
static int server_exports_check(struct server *srv, const struct config *cfg,
				char *errbuf, size_t errlen)
{
	size_t nnew = 0;

	for (size_t i = 0; i < cfg->ndatastores; i++) {
		const struct config_datastore *ds = &cfg->datastores[i];
		const struct export *old = server_slot_by_name(srv, ds->name);
		uint32_t id = server_datastore_id(ds);

		if (old && strcmp(old->dir, ds->path)) {
			return errbuf_printf(
				errbuf, errlen, -EINVAL,
				"datastore %s: path %s was %s; a new "
				"path takes a restart",
				ds->name, ds->path, old->dir);
		}
		if (old && old->id != id) {
			return errbuf_printf(
				errbuf, errlen, -EINVAL,
				"datastore %s: fsid %u was %u; a new "
				"fsid takes a restart",
				ds->name, id, old->id);
		}
		if (old) {
			continue;
		}
		for (size_t j = 0; j < srv->exports.count; j++) {
			const struct export *e = &srv->exports.exports[j];

			if (e->id == id) {
				return errbuf_printf(errbuf, errlen, -EINVAL,
						     "datastore %s: fsid %u is "
						     "(or was) %s's",
						     ds->name, id, e->name);
			}
		}
		nnew++;
	}
	if (nnew > srv->exports.cap - srv->exports.count) {
		return errbuf_printf(errbuf, errlen, -ENOSPC,
				     "%zu new datastores: room for %zu more "
				     "until a restart",
				     nnew,
				     srv->exports.cap - srv->exports.count);
	}
	return 0;
}

void server__exports_abort(struct server *srv, size_t nadd)
{
	size_t base = srv->exports.count;

	for (size_t i = 0; i < nadd; i++) {
		struct export *exp = &srv->exports.exports[base + i];

		exp->quota = NULL;
		quota_fini(&srv->quotas[base + i]);
		store_ilog_close(exp->ilog);
		if (exp->store) {
			store_close(exp->store);
		}
		memset(exp, 0, sizeof(*exp));
	}
}

int server__exports_prepare(struct server *srv, const struct config *cfg,
			    size_t *nadd, char *errbuf, size_t errlen)
{
	size_t base = srv->exports.count;
	int err;

	*nadd = 0;
	err = server_exports_check(srv, cfg, errbuf, errlen);
	if (err) {
		return err;
	}
	for (size_t i = 0; i < cfg->ndatastores; i++) {
		const struct config_datastore *ds = &cfg->datastores[i];
		size_t slot = base + *nadd;
		struct export *exp = &srv->exports.exports[slot];

		if (server_slot_by_name(srv, ds->name)) {
			continue;
		}
		/* Watched for an eviction, or opened later when its
		 * cluster is down: room made now, added at commit. */
		err = ds->backend == CONFIG_BACKEND_CEPHFS
			      ? server__recovery_reserve(srv)
			      : 0;
		/* Not published yet: no other thread sees the slot. */
		if (!err) {
			err = server_export_open_or_wait(srv, exp, ds, errbuf,
							 errlen);
		}
		if (err) {
			goto fail;
		}
		quota_init(&srv->quotas[slot]);
		(*nadd)++;
		/* A store down has nothing to count yet: the recovery
		 * thread scans it before it publishes it. */
		if (!exp->remote_store) {
			err = quota_scan(&srv->quotas[slot], exp->dir, errbuf,
					 errlen);
		} else if (exp->store) {
			err = quota_scan_store(&srv->quotas[slot], exp->store,
					       errbuf, errlen);
		}
		if (err) {
			goto fail;
		}
		exp->quota = &srv->quotas[slot];
	}
	return 0;
fail:
	/* A slot whose store did not open holds nothing to undo; one whose
	 * scan failed is counted in *nadd. */
	server__exports_abort(srv, *nadd);
	*nadd = 0;
	return err;
}

void server__exports_commit(struct server *srv, const struct config *cfg,
			    size_t nadd)
{
	struct export_table *tab = &srv->exports;
	size_t base = tab->count;

	for (size_t i = 0; i < base; i++) {
		struct export *exp = &tab->exports[i];
		const struct config_datastore *ds = NULL;
		const char *what = NULL;

		for (size_t j = 0; j < cfg->ndatastores && !ds; j++) {
			if (!strcmp(cfg->datastores[j].name, exp->name)) {
				ds = &cfg->datastores[j];
			}
		}
		/* One export at a time, and the log written after: readers
		 * wait for a copy of a few fields, never for I/O. */
		export_table_write_lock(tab);
		if (!ds) {
			if (export_is_live(exp)) {
				what = "removed (its handles are now stale):";
			}
			export_table_set_removed(exp, true);
		} else if (!export_is_live(exp)) {
			server_export_options_set(exp, ds);
			export_table_set_removed(exp, false);
			what = "back:";
		} else if (!server_export_options_same(exp, ds)) {
			server_export_options_set(exp, ds);
			what = "options changed:";
		}
		export_table_write_unlock(tab);
		if (what) {
			server_export_log(what, exp, ds);
		}
	}
	pthread_mutex_lock(&srv->apply_lock);
	for (size_t i = 0; i < nadd; i++) {
		/* The capacity was checked in server__exports_prepare(). */
		(void)export_table_publish(tab);
	}
	__atomic_store_n(&srv->nquotas, tab->count, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&srv->apply_lock);
	for (size_t i = 0; i < nadd; i++) {
		const struct export *exp = &tab->exports[base + i];
		const struct config_datastore *ds = NULL;

		for (size_t j = 0; j < cfg->ndatastores && !ds; j++) {
			if (!strcmp(cfg->datastores[j].name, exp->name)) {
				ds = &cfg->datastores[j];
			}
		}
		server_export_log("added", exp, ds);
		/* Reserved in server__exports_prepare(): cannot fail. */
		if (ds && ds->backend == CONFIG_BACKEND_CEPHFS) {
			(void)server__recovery_add(srv, base + i, ds);
		}
	}
	if (nadd && server__recovery_start(srv)) {
		log_error("export: cannot start the recovery thread: the "
			  "cephfs datastores added wait for a restart");
	}
	if (nadd) {
		server__fcache_budget_apply(srv, "reload");
	}
}
