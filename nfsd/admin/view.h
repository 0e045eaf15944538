/* SPDX-License-Identifier: Apache-2.0 */
/*
 * view: what a GET shows: one consistent picture of pools, volumes,
 * traffic and alarms (view.c), as JSON (json_out.c) and as Prometheus
 * text (metrics.c).
 */
#ifndef DSNFS_ADMIN_VIEW_H
#define DSNFS_ADMIN_VIEW_H

#include "nfsd/admin/admin_int.h"
#include "nfsd/alarm/alarm.h"

/* ---- one picture for a GET (view.c) ------------------------------------ */

/* A datastore or pool volume: exported, pooled, or both. */
struct admin_volume_view {
	char name[POOL_NAME_MAX];
	const struct export *export; /* borrowed from ctx; NULL: none */
	const struct pool_volume *pooled; /* into view->state; NULL: none */
	uint64_t limit_bytes_per_s; /* QoS limit as configured; 0: none */
	bool used_known;
	uint64_t used_bytes;
	const struct alarm_view *alarm; /* NULL: not watched */
	const struct traffic_volume_stats *traffic; /* NULL: no traffic */
};

struct admin_view {
	struct pool_state *state; /* owned */
	struct pool_limits *limits; /* owned; of state */
	struct traffic_stats traffic; /* owned */
	struct traffic_caps caps;
	struct admin_config config;
	struct alarm_view *alarms; /* owned */
	size_t nalarms;
	struct admin_volume_view *volumes; /* owned; exports, then others */
	size_t nvolumes;
	uint32_t *loop_conns; /* owned; TCP connections per event loop */
	unsigned nloops;
};

/* Gathers the registry, traffic and alarms at once.  Returns 0 and fills
 * @out (owned: admin__view_fini()), or -ENOMEM. */
int admin__view_get(struct admin_api *api, struct admin_view *out);
void admin__view_fini(struct admin_view *view);

/* The sums over @pool's volumes: quotas, limits, used bytes. */
struct admin_pool_sums {
	uint64_t quota_bytes;
	uint64_t limit_bytes_per_s;
	uint64_t used_bytes;
	size_t volumes;
};
void admin__view_pool_sums(const struct admin_view *view, const char *pool,
			   struct admin_pool_sums *out);

/* The traffic stats of pool @name, or NULL.  Borrowed from @view. */
const struct traffic_pool_stats *
admin__view_traffic_pool(const struct admin_view *view, const char *name);

/* ---- JSON out (json_out.c) --------------------------------------------- */

/* Each returns a new reference (owned: json_decref()), or NULL on
 * allocation failure.  Arguments are borrowed. */
json_t *admin__json_counters(const struct traffic_counters *c);
json_t *admin__json_pool(const struct admin_view *view, const struct pool *p);
json_t *admin__json_volume(const struct admin_view *view,
			   const struct admin_volume_view *vol);
json_t *admin__json_flow(const struct traffic_flow_stats *f);
json_t *admin__json_host(const struct traffic_host_stats *h);
json_t *admin__json_caps(const struct traffic_caps *caps);
json_t *admin__json_alarm(const struct admin_view *view,
			  const struct alarm_view *a);

/* ---- Prometheus text (metrics.c) --------------------------------------- */

#define ADMIN_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* Appends the exposition of @view (borrowed) to @out.  Returns 0 or the
 * buffer's error. */
int admin__metrics_write(const struct admin_view *view, struct admin_buf *out);

/* Appends @value as a label value: backslash, double quote and newline
 * escaped. */
void admin__metrics_label_escape(struct admin_buf *out, const char *value);

#endif
