// SPDX-License-Identifier: Apache-2.0
/*
 * ctx: what the API asks of the server it serves: a copy of the pool
 * registry's state, and new limits made effective (the server's hook, or
 * the traffic buckets directly when the API runs alone, as in tests).
 */
#include "nfsd/admin/admin_int.h"

#include <stdlib.h>

struct pool_state *admin__state_get(struct admin_api *api)
{
	struct pool_state *st = malloc(sizeof(*st));

	if (st) {
		pool_registry_snapshot(api->ctx.pools, st);
	}
	return st;
}

int admin__limits_apply(struct admin_api *api, const struct pool_limits *limits)
{
	const struct admin_ctx *ctx = &api->ctx;

	if (ctx->limits_apply) {
		return ctx->limits_apply(ctx->cb_arg, limits);
	}
	return traffic_limits_apply(ctx->traffic, limits, traffic_now_ns());
}
