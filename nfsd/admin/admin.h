/* SPDX-License-Identifier: Apache-2.0 */
/*
 * admin: dsnfsd's admin and metrics endpoint, HTTP/1.1 on a loopback port
 * of its own (libmicrohttpd, one internal thread; JSON through jansson).
 *
 *   GET    /pools  /pools/NAME  /volumes  /volumes/NAME  /flows  /hosts
 *          /caps  /alarms  /metrics (Prometheus text format 0.0.4)
 *          /changes (what the API changed over the config)
 *   POST   /pools  /volumes
 *   PATCH  /pools/NAME  /volumes/NAME  /caps
 *   DELETE /pools/NAME  /volumes/NAME  /changes (back to the config)
 *
 * Every change goes through the pool registry (pool.h), which checks it
 * and appends its capacity events to the ledger, and then the new limits
 * are applied (to the traffic buckets and the quotas), and the changes
 * over the config are saved (nfsd/overlay/overlay.h) so that they survive
 * a restart.  Errors are JSON,
 * {"error": "..."}, naming the rule broken.  The reference is
 * docs/admin-api.md.
 *
 * The endpoint also watches thin provisioning: every alarm_interval_s it
 * scans each datastore's directory for VMDK flat extents and raises an
 * alarm (logged once at warn as it is crossed) when a datastore's usage or
 * overallocation passes its threshold.
 */
#ifndef DSNFS_ADMIN_H
#define DSNFS_ADMIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nfsd/export/export.h"
#include "nfsd/overlay/overlay.h"
#include "nfsd/pool/pool.h"
#include "nfsd/snap/policy.h"
#include "nfsd/traffic/traffic.h"

struct net;

#define ADMIN_DEFAULT_PORT 8049
/* Request bodies above this get 413. */
#define ADMIN_BODY_MAX_BYTES (64 * 1024)

/* The [admin] section: thresholds of the thin-provisioning alarms, and
 * who may call (auth.h). */
struct admin_config {
	uint32_t usage_alarm_percent; /* used / quota; default 80 */
	uint32_t overallocation_alarm_percent; /* provisioned / quota; 150 */
	uint32_t alarm_interval_s; /* between datastore scans; 60 */
	/* Host names a request may give besides the listen address,
	 * localhost and the loopback literals (commas or blanks). */
	char allowed_hosts[1024];
	bool metrics_auth; /* /metrics needs the token; default true */
	/* PEM files: HTTPS.  Required to listen beyond loopback. */
	char tls_cert[512];
	char tls_key[512];
};

/* Bytes of @volume in use (its quota accounting).  Returns 0 or -ENOENT
 * when the volume is not known.  Called from the admin threads. */
typedef int (*admin_usage_fn)(void *arg, const char *volume,
			      uint64_t *used_bytes);

/* Makes @limits (borrowed; every pool's throughput, every volume's limit
 * and quota, fresh from the registry) effective.  Returns 0 or -errno. */
typedef int (*admin_limits_apply_fn)(void *arg,
				     const struct pool_limits *limits);

/* What the endpoint works on; every pointer is borrowed and must outlive
 * the endpoint. */
struct admin_ops; /* admin/ops_engine.h */
struct repl_service;

struct admin_ctx {
	struct pool_registry *pools;
	struct traffic *traffic;
	const struct export_table *exports; /* may be NULL: no datastores */
	/* May be NULL: a datastore's usage is then the allocated bytes of
	 * its directory, as the last scan found them. */
	admin_usage_fn usage;
	/* May be NULL: traffic_limits_apply() on @traffic. */
	admin_limits_apply_fn limits_apply;
	void *cb_arg; /* for both callbacks */
	/* May be NULL: changes are not kept past a restart (and /changes
	 * is 404).  Its lock is held across every request that changes
	 * something, and the new overlay is recorded before the reply. */
	struct overlay_store *changes;
	/* May be NULL: no dsnfs_loop_connections on /metrics. */
	struct net *net;
	/* May be NULL: the endpoint keeps a registry of its own.  Else the
	 * server's (admin/ops_engine.h, borrowed: it outlives the
	 * endpoint), which the NFS side's in-band clones share. */
	struct admin_ops *ops;
	/* May be NULL: no replication relations.  Else the server's
	 * (nfsd/repl/service.h, borrowed): /replications/NAME/peer, the
	 * /volumes/NAME/replication routes and their metrics. */
	struct repl_service *repl;
	/* Holds admin.token (auth.h), made at the first start. */
	const char *state_dir;
	struct admin_config config;
};

struct admin;

/* usage 80%, overallocation 150%, a scan every 60 s. */
void admin_config_default(struct admin_config *cfg);

/*
 * One key of the [admin] section; the signature of config.h's
 * config_section_fn, @arg being a struct admin_config (start it with
 * admin_config_default()).  Keys: usage_alarm_percent (1..1000),
 * overallocation_alarm_percent (1..100000), alarm_interval_s (1..86400),
 * allowed_hosts (names), metrics_auth (a boolean), tls_cert, tls_key
 * (paths).
 * Returns 0, -ENOENT (not an admin key) or -EINVAL with the reason.
 */
int admin_config_section(void *arg, const char *section, const char *key,
			 const char *value, char *errbuf, size_t errlen);

/*
 * Listens on @listen (an IPv4 or IPv6 address) port @port (0: any free
 * port; the one bound is returned in *bound_port) and serves the admin API,
 * a thread per connection (at most 64); starts the alarm thread, which
 * scans the datastores once at once.  Loads or makes ctx->state_dir's
 * admin.token first, and refuses (-EPERM) a token file that is not safe,
 * and a @listen beyond loopback without config.tls_cert and tls_key.  @ctx is
 * copied; what it points to is borrowed. Returns 0 and *out (owned:
 * admin_stop()), or -errno with the reason in errbuf (-EINVAL for a bad
 * address, -EADDRINUSE, ...) and nothing running.
 */
int admin_start(const struct admin_ctx *ctx, const char *listen, int port,
		int *bound_port, struct admin **out, char *errbuf,
		size_t errlen);

/* A datastore's snapshot policy of the config (snapshot_hourly ..). */
struct admin_policy_config {
	char volume[64];
	struct snap_policy policy;
};

/*
 * Gives the endpoint's snapshot-policy engine the config's policies (at
 * start and after each reload; a datastore left out has none from the
 * config).  A changed policy starts afresh: nothing in arrears.  NULL
 * @adm is fine.  Returns 0 or -ENOSPC (too many datastores).
 */
int admin_policies_config(struct admin *adm,
			  const struct admin_policy_config *p, size_t n);

/* Stops serving (requests under way finish first), stops the alarm
 * thread and frees @adm (takes).  NULL is fine. */
void admin_stop(struct admin *adm);

#endif
