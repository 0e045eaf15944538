/* SPDX-License-Identifier: Apache-2.0 */
/*
 * snap_policy: the engine that runs the datastores' snapshot policies
 * (nfsd/snap/policy.h) on the server's clock, and their admin API:
 *
 *   GET    /volumes/NAME/snapshot-policy   the policy, its counters, its
 *                                          alarm
 *   PUT    /volumes/NAME/snapshot-policy   {"hourly": ":05 keep 24", ...}
 *                                          (kinds left out are off)
 *   DELETE /volumes/NAME/snapshot-policy   no policy (snapshots stay)
 *
 * A policy comes from the config (snapshot_hourly .. snapshot_monthly of
 * [datastore NAME], again at every SIGHUP) unless the API set one, which
 * is kept in STATE_DIR/snapshot-policies.json and wins over the config
 * until a DELETE (which leaves "none").  A thread looks every second:
 * each kind due is one snapshot through the same operation as a POST of
 * one (exclusive with the datastore's other operations; one busy is
 * tried again at the next look), then the oldest of its kind past its
 * keep are deleted (only snapshots the policy made, policy_record.c).
 * Every action is one log line and counts in /metrics; a policy that
 * cannot run (no reflink, a backend without snapshots, a cluster down,
 * 255 snapshots) raises the datastore's policy alarm (logged at warn once,
 * shown by GET and /metrics) until a policy snapshot succeeds.
 *
 * The clock is UTC; DSNFSD_TEST_POLICY_CLOCK=START_S[:SCALE] in the
 * environment (tests only, dsnfsd(8)) runs it from START_S, SCALE times
 * faster than the real one.
 */
#ifndef DSNFS_ADMIN_SNAP_POLICY_H
#define DSNFS_ADMIN_SNAP_POLICY_H

#include "nfsd/admin/admin_int.h"
#include "nfsd/snap/policy.h"

#include <pthread.h>

/* Datastores with a policy (config or API) the engine keeps. */
#define ADMIN_POLICY_VOLS_MAX 128

/* One datastore's policy and what it did. */
struct admin_policy_vol {
	char volume[64];
	bool in_config;
	struct snap_policy cfg; /* the config's */
	bool has_api;
	struct snap_policy api; /* the API's, over the config's */
	struct snap_policy_state st;
	uint64_t made[SNAP_POLICY_KINDS];
	uint64_t deleted[SNAP_POLICY_KINDS];
	uint64_t failed[SNAP_POLICY_KINDS];
	int64_t last_ok_s; /* UTC of the policy clock; 0: never */
	char alarm[320]; /* "": none raised */
};

struct admin_policies {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop;
	bool started;
	pthread_t thread;
	struct admin_api *api;
	struct admin_policy_vol vols[ADMIN_POLICY_VOLS_MAX];
	size_t n;
	char state_dir[4096];
	/* The clock: base + (monotonic - mono0) * scale. */
	int64_t clock_base_s;
	double clock_scale;
	bool clock_test;
	struct timespec mono0;
	unsigned tick_ms;
};

/* The effective policy of @v: the API's, else the config's. */
static inline const struct snap_policy *
admin__policy_of(const struct admin_policy_vol *v)
{
	return v->has_api ? &v->api : &v->cfg;
}

/* The entry of @volume, made when @add (NULL when full or absent).
 * Under the lock. */
struct admin_policy_vol *admin__policy_vol(struct admin_policies *p,
					   const char *volume, bool add);

/* The engine of @api (borrowed for its life), its overrides kept in
 * @state_dir (read by admin__policies_load()).  Returns 0 and *out (owned:
 * admin__policies_free()), or -errno with the reason. */
int admin__policies_new(struct admin_api *api, const char *state_dir,
			struct admin_policies **out, char *errbuf,
			size_t errlen);
/* Starts its thread.  Returns 0 or -errno. */
int admin__policies_start(struct admin_policies *p);
/* Stops the thread (a snapshot under way ends first). */
void admin__policies_stop(struct admin_policies *p);
/* Stops and frees; NULL is fine. */
void admin__policies_free(struct admin_policies *p);

/* The config's policies (admin_policies_config(), admin.h). */
int admin__policies_configure(struct admin_policies *p,
			      const struct admin_policy_config *cfg, size_t n);

/* Runs one look at @now (UTC seconds): what the thread does every
 * second, for the tests. */
void admin__policies_tick(struct admin_policies *p, int64_t now);

/* The policy families of /metrics, appended to @out. */
void admin__policies_metrics(struct admin_policies *p, struct admin_buf *out);

/* ---- the API (snap_policy_api.c) --------------------------------------- */

/* The effective policy of @volume into @out with its source ("config",
 * "api", "none"), counters and alarm as JSON (owned), or NULL. */
json_t *admin__policy_json(struct admin_policies *p, const char *volume);
/* Sets (@pol non-NULL) or clears the API's policy of @volume and saves
 * the overrides.  Returns 0 or -errno with the reason. */
int admin__policy_set(struct admin_policies *p, const char *volume,
		      const struct snap_policy *pol, char *errbuf,
		      size_t errlen);

/* The overrides file: read once after admin__policies_new(), written at
 * each change (holding the engine's lock). */
int admin__policies_load(struct admin_policies *p, char *errbuf, size_t errlen);

void admin__policy_get(struct admin_api *api, const struct admin_request *req,
		       struct admin_reply *reply);
void admin__policy_put(struct admin_api *api, const struct admin_request *req,
		       struct admin_reply *reply);
void admin__policy_delete(struct admin_api *api,
			  const struct admin_request *req,
			  struct admin_reply *reply);

/* 0, or -EBUSY with the reason when a volume made from snapshot @snap of
 * datastore @volume holds it (volclone.c: not split); -errno when the
 * record cannot be read. */
int admin__snapshot_pinned(struct admin_api *api, const char *volume,
			   const char *snap, char *errbuf, size_t errlen);

/* POST /volumes with a snapshot, and POST /volumes/NAME/split
 * (volclone.c). */
void admin__volume_from_snapshot(struct admin_api *api,
				 const struct admin_request *req,
				 struct admin_reply *reply);
void admin__volume_split(struct admin_api *api, const struct admin_request *req,
			 struct admin_reply *reply);

/* One snapshot operation of @exp run here, to its end, as a POST or
 * DELETE of the API runs it (snapshots.c): "create" or "delete" of
 * @snap.  Returns 0 or -errno (-EBUSY: another operation of the
 * datastore runs) with the reason. */
struct export;
int admin__snapshot_sync(struct admin_api *api, const struct export *exp,
			 const char *mode, const char *snap, char *errbuf,
			 size_t errlen);

#endif
