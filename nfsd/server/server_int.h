/* SPDX-License-Identifier: Apache-2.0 */
/*
 * server_int: struct server, shared by the files of nfsd/server/ alone:
 * server.c (assembly and teardown), reload.c (a SIGHUP's config),
 * exports.c (the export table and its reload), store.c (a datastore's
 * store opened from its config), recovery.c (the retries of a cephfs
 * datastore's cluster), pools.c (pools, ledger, traffic, quotas), admin.c
 * (the admin endpoint's hooks) and fd_budget.c (the file caches' descriptor
 * budget); and by test_store_fdlimit, which checks that budget.
 */
#ifndef DSNFS_SERVER_INT_H
#define DSNFS_SERVER_INT_H

#include <pthread.h>

#include "nfsd/export/export.h"
#include "nfsd/mount/mount.h"
#include "nfsd/net/net.h"
#include "nfsd/nfs3/nfs3.h"
#include "nfsd/quota/quota.h"
#include "nfsd/server/server.h"

struct portmap_registry;
struct pool_ledger;
struct overlay;
struct overlay_store;

/* What the file caches' descriptor budget is computed from, as at start
 * (fd_budget.c). */
struct server_fd_inputs {
	uint32_t max_conns;
	uint32_t file_cache_fds; /* [server] file_cache_fds; 0: derived */
	unsigned loops;
	unsigned work_threads;
};

/* The budget: total = nofile - conns - reserve (or file_cache_fds),
 * shared by nexports caches of files_per_export files each. */
struct server_fd_budget {
	uint64_t nofile, conns, reserve, total;
	size_t nexports;
	size_t files_per_export;
	bool overridden; /* total is file_cache_fds */
	bool too_low; /* files_per_export was raised to the minimum */
};

/* A cephfs datastore of the start (recovery.c): opened later if its
 * cluster did not answer, opened anew if its session is evicted. */
struct server_revive {
	size_t slot; /* in srv->exports */
	struct config_datastore ds; /* a copy: the config goes */
	bool done; /* its store is published */
	int64_t since_ns;
};

/* The background opener of those datastores (recovery.c). */
struct server_recovery {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stopping;
	bool running; /* the thread was started */
	pthread_t thread;
	struct server_revive *revive; /* owned */
	size_t nrevive;
	/* Stores replaced after an eviction: calls in flight may still hold
	 * them, so they close with the server (owned). */
	struct store **retired;
	size_t nretired;
};

struct server {
	struct export_table exports; /* exports.c */
	struct server_recovery recovery; /* recovery.c */
	struct server_fd_inputs fd_inputs; /* set before the exports open */
	bool exports_lock_init;
	char state_dir[4096]; /* of the start: a reload keeps it */
	bool group_commit; /* [server] group_commit of the start */
	/* The [server] intent log (owned; NULL: none) and the ring size and
	 * checkpoint interval of every log, all of the start. */
	struct store_ilog *ilog;
	uint64_t ilog_ring_bytes;
	uint32_t ilog_checkpoint_ms;
	uint32_t ilog_inplace_min; /* intent_log_inplace_min_bytes */
	uint32_t ilog_inplace_seq_min; /* ..._sequential_min_bytes */
	bool ilog_inplace_direct; /* intent_log_inplace_direct */
	bool ilog_inplace_uring; /* intent_log_inplace_uring */
	/* The short host name: the gateway name of a cephfs datastore's
	 * RADOS log without intent_log_gateway. */
	char hostname[64];
	/* One per export slot (CONFIG_MAX_DATASTORES): exports[i].quota. */
	struct quota *quotas;
	/* Initialised ones = published exports (atomic; changed under
	 * apply_lock). */
	size_t nquotas;
	struct nfs3_service nfs3;
	struct mount_service *mount;
	struct portmap_registry *portmap;
	struct rpc_program nfs3_prog, mount_prog, portmap_prog;
	struct rpc_program rpcb3_prog, rpcb4_prog; /* rpcbind 3, 4: IPv6 */
	struct rpc_dispatcher dispatcher; /* TCP */
	struct rpc_dispatcher udp_dispatcher; /* UDP: MOUNT and portmap */
	struct rpc_dispatcher nfs_udp_dispatcher; /* UDP: NFS */
	struct rpc_work_pool *work_pool;
	struct drc *drc;
	struct net net;
	bool net_started;
	bool nfs_udp; /* NFS listens on UDP too */
	struct server_ports ports;

	/* Capacity (pools.c). */
	struct pool_registry *pools;
	struct pool_ledger *ledger;
	struct traffic *traffic;
	pthread_mutex_t apply_lock; /* serialises server_limits_apply() */
	bool apply_lock_init;
	/* The admin API's changes over the config, kept in
	 * STATE_DIR/admin-state.json; its lock serialises every change of
	 * the live state (admin API, SIGHUP). */
	struct overlay_store *changes;

	struct admin *admin; /* admin.c; NULL when off */
	/* The replication relations (nfsd/repl/service.h); NULL: none. */
	struct repl_service *repl;
	/* The long operations (admin/ops_engine.h), owned: the admin API's
	 * and VAAI-NAS procedure 22's clones share them. */
	struct admin_ops *ops;
};

/*
 * Opens the datastores of @cfg into srv->exports (room for
 * CONFIG_MAX_DATASTORES, so that a reload can add exports without moving
 * any).  Returns 0 or -errno with the reason in errbuf; what was opened is
 * closed by server__exports_close().
 */
int server__exports_open(struct server *srv, const struct config *cfg,
			 char *errbuf, size_t errlen);

/*
 * The store of @ds (export id @id) opened and made ready to serve (group
 * commit, zeroing, *root_fileid), not published.  *out returns owned.
 * Blocks (a cluster down: up to its mount timeout).  Returns 0 or -errno
 * with the reason in errbuf.
 */
int server__export_store_open(struct server *srv,
			      const struct config_datastore *ds, uint32_t id,
			      struct store **out, uint64_t *root_fileid,
			      char *errbuf, size_t errlen);

/* How often a datastore whose cluster was down at start is tried again. */
#define SERVER_RECOVERY_RETRY_MS 2000

/* Makes the table of watched datastores (once; a reload that adds a
 * cephfs datastore calls it before it commits, so that adding cannot
 * fail then).  Returns 0 or -ENOMEM. */
int server__recovery_reserve(struct server *srv);
/* Records that export slot @slot (a cephfs datastore) opens @ds (copied)
 * when its store is down (store_down) or evicted (store.reopen): before
 * server__recovery_start(), or while the thread runs (a reload; then it
 * is tried at once).  Returns 0, or -ENOMEM when the table was not
 * reserved and cannot be made. */
int server__recovery_add(struct server *srv, size_t slot,
			 const struct config_datastore *ds);
/*
 * Starts the thread that opens those stores in the background, off the
 * event loops, and publishes each once it is complete: its quota scanned
 * (a store down at start), then the store pointer (release), then
 * store_down cleared.  An evicted store is replaced the same way and the
 * export's write verifier changes (its client cache is gone).  After
 * server__quotas_open().  No cephfs datastore: no thread (a reload that
 * adds one calls it again); running already: nothing.  Returns 0 or
 * -errno.
 */
int server__recovery_start(struct server *srv);
/* Stops it (waits for an open in flight: up to a mount timeout), closes
 * the stores it replaced and frees what it kept.  Idempotent; called by
 * server__exports_close() once no call runs. */
void server__recovery_stop(struct server *srv);

/* Closes every export's store (removed ones too) and frees the table;
 * after the loops and the threads are gone. */
void server__exports_close(struct server *srv);
/* Waits until no stable WRITE is parked on an intent log (after the loops
 * stopped, before net_free: their requests go back to the loops). */
void server__ilogs_drain(struct server *srv);

/*
 * The export half of a reload, in two steps so that a refused config
 * changes nothing.  _prepare() checks @cfg's datastores against the table
 * (a path or fsid change takes a restart) and opens the new ones (store,
 * quota scan) in unpublished slots: returns 0 with *nadd, or -errno with
 * the reason in errbuf and nothing left open.  Then either _commit()
 * applies options, removals and the *nadd new exports (they answer from
 * the next call on), or _abort() closes them.  Main thread.
 */
int server__exports_prepare(struct server *srv, const struct config *cfg,
			    size_t *nadd, char *errbuf, size_t errlen);
void server__exports_commit(struct server *srv, const struct config *cfg,
			    size_t nadd);
void server__exports_abort(struct server *srv, size_t nadd);

/* Computes the budget for @nexports caches under a limit of @nofile
 * descriptors (pure; borrows @in, fills @out). */
void server__fd_budget_compute(const struct server_fd_inputs *in,
			       uint64_t nofile, size_t nexports,
			       struct server_fd_budget *out);

/* Bounds every open store's file cache to its share of the budget under
 * the current RLIMIT_NOFILE and logs the figures; @when names the
 * occasion ("start", "reload").  Main thread. */
void server__fcache_budget_apply(struct server *srv, const char *when);

/* Sets the --trace flag of both dispatchers, live. */
void server__trace_set(struct server *srv, bool on);

/*
 * Scans what every export has allocated into srv->quotas (blocking;
 * before the loops start).  Returns 0 or -errno with the reason.
 */
int server__quotas_open(struct server *srv, char *errbuf, size_t errlen);

/*
 * Opens the registry with the pools of @sections and the admin API's
 * changes over them (STATE_DIR/admin-state.json, nfsd/overlay/overlay.h),
 * its ledger in @state_dir and the traffic model with its caps, and
 * applies the limits.  A changes file that cannot be read or decoded stops
 * the start.  Returns 0 or -errno with the reason in errbuf.
 */
int server__pools_open(struct server *srv, const char *state_dir,
		       struct server_sections *sections, char *errbuf,
		       size_t errlen);

/*
 * Lays @ov over the config's @st and @caps into @merged and @merged_caps,
 * logging what is dropped.  Returns 0 or -ENOMEM (message in errbuf).
 */
int server__overlay_apply(struct server *srv, const struct overlay *ov,
			  const struct pool_state *st,
			  const struct traffic_caps *caps,
			  struct pool_state *merged,
			  struct traffic_caps *merged_caps, char *errbuf,
			  size_t errlen);

/* Remembers the config's state and writes the overlay of the live one
 * (entries dropped leave the file).  The store is locked or not shared. */
int server__overlay_record(struct server *srv, const struct pool_state *st,
			   const struct traffic_caps *caps,
			   const struct pool_state *live,
			   const struct traffic_caps *live_caps, char *errbuf,
			   size_t errlen);

/* Frees what server__pools_open() and server__quotas_open() made; after
 * the loops are gone (flows hold the traffic model). */
void server__pools_close(struct server *srv);

/*
 * Starts the admin and metrics endpoint on cfg->admin_listen:admin_port
 * (nothing when the port is off) over the registry, traffic model and
 * datastores of @srv, with the alarm thresholds of @sections.  Sets
 * srv->ports.admin (-1: off).  A port that cannot be bound is logged and
 * leaves the endpoint off; returns 0, or -EINVAL (admin_listen is not an
 * IP address) with the reason in errbuf.
 */
int server__admin_start(struct server *srv, const struct config *cfg,
			const struct server_sections *sections, char *errbuf,
			size_t errlen);

/* Stops it (before anything it reads goes away). */
void server__admin_stop(struct server *srv);

/* Gives the admin endpoint the snapshot policies of @cfg's datastores
 * (at start and after a reload); with the endpoint off, each policy is
 * an error logged: nothing would run it. */
void server__admin_policies(struct server *srv, const struct config *cfg);

#endif
