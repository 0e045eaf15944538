// SPDX-License-Identifier: Apache-2.0
/*
 * view: one picture of the server for a GET: the registry's state and
 * limits, the traffic counters, the alarms, and the list of volumes, which
 * are the exported datastores (pooled or not) followed by pool volumes
 * that no datastore serves.  Taken piece by piece, each piece consistent.
 */
#include "nfsd/admin/admin_int.h"
#include "nfsd/admin/view.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/net/net.h"

int admin__alarms_new(const struct admin_ctx *ctx, struct alarm_set **out)
{
	const struct alarm_source src = {
		.pools = ctx->pools,
		.exports = ctx->exports,
		.usage = ctx->usage,
		.usage_arg = ctx->cb_arg,
		.usage_percent = ctx->config.usage_alarm_percent,
		.overallocation_percent =
			ctx->config.overallocation_alarm_percent,
		.interval_s = ctx->config.alarm_interval_s,
	};

	return alarm_set_new(&src, out);
}

void admin__view_fini(struct admin_view *view)
{
	traffic_stats_fini(&view->traffic);
	free(view->volumes);
	free(view->loop_conns);
	free(view->alarms);
	free(view->limits);
	free(view->state);
	memset(view, 0, sizeof(*view));
}

static const struct alarm_view *view_alarm(const struct admin_view *v,
					   const char *name)
{
	for (size_t i = 0; i < v->nalarms; i++) {
		if (!strcmp(v->alarms[i].volume, name)) {
			return &v->alarms[i];
		}
	}
	return NULL;
}

static const struct traffic_volume_stats *
view_traffic_volume(const struct admin_view *v, const char *name)
{
	for (size_t i = 0; i < v->traffic.nvolumes; i++) {
		if (!strcmp(v->traffic.volumes[i].name, name)) {
			return &v->traffic.volumes[i];
		}
	}
	return NULL;
}

const struct traffic_pool_stats *
admin__view_traffic_pool(const struct admin_view *view, const char *name)
{
	for (size_t i = 0; i < view->traffic.npools; i++) {
		if (!strcmp(view->traffic.pools[i].name, name)) {
			return &view->traffic.pools[i];
		}
	}
	return NULL;
}

static void view_volume_fill(struct admin_api *api, struct admin_view *v,
			     struct admin_volume_view *vol)
{
	const struct admin_ctx *ctx = &api->ctx;
	uint64_t used;

	vol->pooled = pool_state_find_volume(v->state, vol->name);
	for (size_t i = 0; i < v->limits->nvolumes; i++) {
		if (!strcmp(v->limits->volumes[i].name, vol->name)) {
			vol->limit_bytes_per_s =
				v->limits->volumes[i].limit_bytes_per_s;
		}
	}
	vol->alarm = view_alarm(v, vol->name);
	vol->traffic = view_traffic_volume(v, vol->name);
	if (ctx->usage && ctx->usage(ctx->cb_arg, vol->name, &used) == 0) {
		vol->used_known = true;
		vol->used_bytes = used;
	} else if (vol->alarm && vol->alarm->used_known) {
		vol->used_known = true;
		vol->used_bytes = vol->alarm->used_bytes;
	}
}

static bool view_exported(const struct admin_ctx *ctx, const char *name)
{
	if (!ctx->exports) {
		return false;
	}
	for (size_t i = 0; i < export_table_count(ctx->exports); i++) {
		if (!strcmp(ctx->exports->exports[i].name, name)) {
			return true;
		}
	}
	return false;
}

static int view_volumes(struct admin_api *api, struct admin_view *v)
{
	const struct admin_ctx *ctx = &api->ctx;
	size_t nexp = ctx->exports ? export_table_count(ctx->exports) : 0;

	v->volumes = calloc(nexp + v->state->nvolumes + 1, sizeof(*v->volumes));
	if (!v->volumes) {
		return -ENOMEM;
	}
	for (size_t i = 0; i < nexp; i++) {
		struct admin_volume_view *vol = &v->volumes[v->nvolumes++];

		vol->export = &ctx->exports->exports[i];
		snprintf(vol->name, sizeof(vol->name), "%s", vol->export->name);
		view_volume_fill(api, v, vol);
	}
	for (size_t i = 0; i < v->state->nvolumes; i++) {
		const char *name = v->state->volumes[i].name;
		struct admin_volume_view *vol;

		if (view_exported(ctx, name)) {
			continue;
		}
		vol = &v->volumes[v->nvolumes++];
		snprintf(vol->name, sizeof(vol->name), "%s", name);
		view_volume_fill(api, v, vol);
	}
	return 0;
}

/* The connections each event loop of @net (may be NULL) holds. */
static int view_loops(struct net *net, struct admin_view *out)
{
	if (!net || !net->nworkers) {
		return 0;
	}
	out->loop_conns = calloc(net->nworkers, sizeof(*out->loop_conns));
	if (!out->loop_conns) {
		return -ENOMEM;
	}
	out->nloops = net->nworkers;
	for (unsigned i = 0; i < net->nworkers; i++) {
		out->loop_conns[i] = net_loop_conns(net, i);
	}
	return 0;
}

int admin__view_get(struct admin_api *api, struct admin_view *out)
{
	const struct admin_ctx *ctx = &api->ctx;
	int err = -ENOMEM;

	memset(out, 0, sizeof(*out));
	out->state = malloc(sizeof(*out->state));
	out->limits = malloc(sizeof(*out->limits));
	if (!out->state || !out->limits) {
		goto fail;
	}
	pool_registry_snapshot(ctx->pools, out->state);
	pool_state_limits(out->state, out->limits);
	err = traffic_stats_get(ctx->traffic, traffic_now_ns(), &out->traffic);
	if (err) {
		goto fail;
	}
	traffic_caps_get(ctx->traffic, &out->caps);
	out->config = ctx->config;
	if (api->alarms) {
		err = alarm_set_evaluate(api->alarms, &out->alarms,
					 &out->nalarms);
		if (err) {
			goto fail;
		}
	}
	err = view_volumes(api, out);
	if (err) {
		goto fail;
	}
	err = view_loops(ctx->net, out);
	if (err) {
		goto fail;
	}
	return 0;
fail:
	admin__view_fini(out);
	return err;
}

void admin__view_pool_sums(const struct admin_view *view, const char *pool,
			   struct admin_pool_sums *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < view->nvolumes; i++) {
		const struct admin_volume_view *vol = &view->volumes[i];

		if (!vol->pooled || strcmp(vol->pooled->pool, pool)) {
			continue;
		}
		out->volumes++;
		out->quota_bytes += vol->pooled->quota_bytes;
		out->limit_bytes_per_s += vol->limit_bytes_per_s;
		if (vol->used_known) {
			out->used_bytes += vol->used_bytes;
		}
	}
}
