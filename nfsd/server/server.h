/* SPDX-License-Identifier: Apache-2.0 */
/*
 * server: puts dsnfsd together from a struct config: the datastores and
 * their export table, the NFS, MOUNT and portmapper programs, the
 * dispatcher, the blocking-work threads and the event loops, and the
 * capacity pools, their ledger, the traffic model and the quotas that
 * admit every NFS call (docs/pools.md).  main.c only parses argv and runs
 * the main loop.
 */
#ifndef DSNFS_SERVER_H
#define DSNFS_SERVER_H

#include <stdint.h>

#include "nfsd/admin/admin.h"
#include "nfsd/config/config.h"
#include "nfsd/pool/pool.h"
#include "nfsd/repl/service.h"
#include "nfsd/traffic/traffic.h"

struct server;
struct ev_loop;

/*
 * The config keys the server's modules parse themselves, through the
 * config's section hook: [traffic] (traffic.h), [pool NAME] and the pool
 * keys of [datastore NAME] (pool, quota, throughput_mibps; pool.h), [admin]
 * (the thin-provisioning alarm thresholds; admin.h).  A
 * datastore without `pool` is in no pool: no quota, no QoS limit (the
 * [traffic] caps still apply to its flows and hosts).
 */
struct server_sections {
	struct traffic_caps caps;
	struct pool_config pools;
	struct admin_config admin;
	struct repl_config repl; /* [replication NAME] (repl/service.h) */
};

/* The ports actually bound (after "0 = any"); -1 where nothing listens. */
struct server_ports {
	int nfs;
	int mount;
	int portmap;
	int admin; /* the admin and metrics endpoint (HTTP) */
	bool rpcbind; /* registered with a running rpcbind instead */
};

/*
 * Starts @s with the modules' defaults and sets @cfg's section hook to
 * fill it: call before loading the config file.  Returns 0 or -ENOMEM.
 */
int server_sections_init(struct server_sections *s, struct config *cfg);

/*
 * Adds to @cfg the datastores the admin API made from snapshots
 * (STATE_DIR/volume-clones of cfg->state_dir; nfsd/snap/volclone.h), each
 * with its source datastore's keys, its own name and directory; one whose
 * source is not a local datastore of @cfg is left out with a warning.
 * After the files and options are read, before config_validate().
 * Returns 0 or -errno with the reason in errbuf (an unreadable record).
 */
int server_clones_merge(struct config *cfg, char *errbuf, size_t errlen);
void server_sections_fini(struct server_sections *s);

/*
 * Opens every datastore (and scans what each has allocated, for its
 * quota), the capacity pools of @sections with the admin API's changes
 * over them (STATE_DIR/admin-state.json; checked as a whole) and their
 * ledger STATE_DIR/capacity.ledger, the traffic model, starts the worker
 * loops and listens, attached to @main_loop (borrowed).  @cfg and
 * @sections are borrowed.  *out returns owned: server_close().  On
 * failure returns -errno with the reason in errbuf and nothing left
 * running.
 */
int server_open(const struct config *cfg, struct server_sections *sections,
		struct ev_loop *main_loop, struct server **out, char *errbuf,
		size_t errlen);

/*
 * Swaps in a new config (SIGHUP), live: [pool NAME] and the pool keys of
 * [datastore NAME], then the admin API's changes over the config
 * (STATE_DIR/admin-state.json; those the new config no longer allows are
 * dropped with a warning), replace the registry's state as at start (the
 * difference goes to the ledger), [traffic] with the API's changes of the
 * caps replaces the caps, `trace` turns the trace lines on or off, and
 * the datastores follow the file: changed options (clients, read_only,
 * secure, squash, anonuid, anongid) rule the next call, a datastore no
 * longer in the file is removed (its handles answer NFS3ERR_STALE, MOUNT
 * refuses it), a new one is opened and mounts at once.  Running flows
 * follow within TRAFFIC_WAIT_MAX_NS; no connection is dropped.  A
 * datastore's path and fsid, the ports, the workers and the limits of
 * [server] take effect at the next start (a new path or fsid is refused).
 * A refused config changes nothing: returns -errno with the reason in
 * errbuf.  Main thread; @cfg and @sections are borrowed.
 */
int server_reconfigure(struct server *srv, const struct config *cfg,
		       struct server_sections *sections, char *errbuf,
		       size_t errlen);

/* ---- for the admin API (any thread) ----------------------------------- */

/*
 * Makes @limits effective (borrowed; what a pool_registry_*() operation
 * or pool_registry_limits() returned): every volume's and pool's
 * throughput limit in the traffic model, for running flows within
 * TRAFFIC_WAIT_MAX_NS, and every datastore's quota (a datastore not in
 * @limits has none).  Calls are serialised.  Returns 0 or -ENOMEM
 * (traffic_limits_apply(): calling again finishes it).
 */
int server_limits_apply(struct server *srv, const struct pool_limits *limits);

struct server_volume_usage {
	uint64_t used_bytes; /* allocated under the datastore's directory */
	uint64_t quota_bytes; /* 0: none */
	uint64_t reserved_bytes; /* writes under way */
};

/* What datastore @name has allocated against its quota.  Returns 0, or
 * -ENOENT when no datastore has that name. */
int server_volume_usage(struct server *srv, const char *name,
			struct server_volume_usage *out);

/* The ports bound by server_open. */
struct server_ports server_ports(const struct server *srv);

/* Stops listening, drains and stops the loops and threads, unregisters
 * from rpcbind and frees everything.  Call after the main loop returned. */
void server_close(struct server *srv);

/* How long a stop may take before the stop guard ends the process. */
#define SERVER_STOP_GRACE_S 10
/* Starts a thread that ends the process (exit status 0, one error line)
 * if it is still running @grace_s seconds from now: for a server_close()
 * that waits on calls stuck on a lost cluster (stop_guard.c). */
void server_stop_guard_start(unsigned grace_s);

#endif
