// SPDX-License-Identifier: Apache-2.0
/*
 * volumes: the /volumes resource.  A volume is a datastore: the exported
 * ones are listed whether they are in a pool or not.  POST puts a
 * datastore in a pool with a quota; PATCH changes its quota, its manual
 * QoS limit, or its pool (a move, the way ANF changes one volume's service
 * level); DELETE takes it out of its pool (the datastore stays exported,
 * without quota or QoS).  Datastores themselves come from the config.
 */
#include "nfsd/admin/admin_int.h"
#include "nfsd/admin/patch.h"
#include "nfsd/admin/snap_policy.h"
#include "nfsd/admin/view.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/repl/service.h"

enum volume_step {
	VOLUME_STEP_MOVE = 0,
	VOLUME_STEP_QUOTA,
	VOLUME_STEP_LIMIT,
};

static const char *const volume_step_names[] = {
	[VOLUME_STEP_MOVE] = "pool",
	[VOLUME_STEP_QUOTA] = "quota_bytes",
	[VOLUME_STEP_LIMIT] = "limit_mibps",
};

struct volume_patch_arg {
	const char *name;
	const struct admin_volume_patch *patch;
	uint32_t move_mibps; /* the limit that goes with a move, or 0 */
};

static size_t volumes_count(const struct admin_view *view)
{
	return view->nvolumes;
}

static const char *volumes_name(const struct admin_view *view, size_t i)
{
	return view->volumes[i].name;
}

static json_t *volumes_item(const struct admin_view *view, size_t i)
{
	return admin__json_volume(view, &view->volumes[i]);
}

static const struct admin_resource volumes_resource = {
	.what = "volume",
	.key = "volumes",
	.count = volumes_count,
	.name = volumes_name,
	.item = volumes_item,
};

void admin__volumes_list(struct admin_api *api, const struct admin_request *req,
			 struct admin_reply *reply)
{
	(void)req;
	admin__reply_list(api, &volumes_resource, reply);
}

void admin__volume_get(struct admin_api *api, const struct admin_request *req,
		       struct admin_reply *reply)
{
	admin__reply_one(api, &volumes_resource, req->name, 200, reply);
}

static bool volumes_exported(const struct admin_ctx *ctx, const char *name)
{
	if (!ctx->exports) {
		return true; /* nothing to check against */
	}
	for (size_t i = 0; i < export_table_count(ctx->exports); i++) {
		if (!strcmp(ctx->exports->exports[i].name, name)) {
			return true;
		}
	}
	return false;
}

/* A registry refusal.  -ENOENT once the volume is known to exist means a
 * pool named in the body does not: a bad request, not a missing URL. */
static void volumes_refused(struct admin_reply *reply, int rc, const char *err)
{
	admin__reply_error(reply,
			   rc == -ENOENT ? 400 : admin__status_from_err(rc),
			   "%s", err);
}

void admin__volume_create(struct admin_api *api,
			  const struct admin_request *req,
			  struct admin_reply *reply)
{
	struct pool_limits *limits;
	struct pool_volume spec;
	char err[300];
	int rc;

	/* A new datastore from a snapshot (volclone.c). */
	if (json_object_get(req->body, "snapshot")) {
		admin__volume_from_snapshot(api, req, reply);
		return;
	}
	if (admin__json_volume_spec(req->body, &spec, err, sizeof(err))) {
		admin__reply_error(reply, 400, "%s", err);
		return;
	}
	if (!volumes_exported(&api->ctx, spec.name)) {
		admin__reply_error(reply, 400,
				   "volume %s: no datastore of that name "
				   "(datastores come from the config)",
				   spec.name);
		return;
	}
	limits = malloc(sizeof(*limits));
	if (!limits) {
		admin__reply_error(reply, 500, "out of memory");
		return;
	}
	rc = pool_registry_volume_create(api->ctx.pools, &spec, limits, err,
					 sizeof(err));
	if (rc) {
		volumes_refused(reply, rc, err);
	} else {
		admin__reply_changed(api, &volumes_resource, spec.name, limits,
				     201, reply);
	}
	free(limits);
}

static int volume_step(struct pool_registry *reg, int step, void *arg,
		       struct pool_limits *limits, char *errbuf, size_t errlen)
{
	const struct volume_patch_arg *a = arg;
	const struct admin_volume_patch *p = a->patch;

	switch ((enum volume_step)step) {
	case VOLUME_STEP_MOVE:
		return pool_registry_volume_move(reg, a->name, p->pool,
						 a->move_mibps, limits, errbuf,
						 errlen);
	case VOLUME_STEP_QUOTA:
		return pool_registry_volume_resize(reg, a->name, p->quota_bytes,
						   limits, errbuf, errlen);
	case VOLUME_STEP_LIMIT:
		return pool_registry_volume_set_limit(
			reg, a->name, p->limit_mibps, limits, errbuf, errlen);
	}
	return -EINVAL;
}

/* The steps of @p on volume @v of @st; a limit goes with a move to
 * another pool.  Returns how many, or -EINVAL with the reason. */
static int volumes_plan(const struct pool_state *st,
			const struct pool_volume *v,
			const struct admin_volume_patch *p,
			struct volume_patch_arg *arg, int *steps, char *errbuf,
			size_t errlen)
{
	bool move = p->has_pool && strcmp(p->pool, v->pool);
	const struct pool *dest = move ? pool_state_pool(st, p->pool) : NULL;
	int n = 0;

	if (move && p->has_limit && dest && dest->qos == POOL_QOS_AUTO) {
		snprintf(errbuf, errlen,
			 "volume %s: pool %s has auto QoS; a throughput limit "
			 "is set only in manual QoS pools",
			 v->name, dest->name);
		return -EINVAL;
	}
	if (move) {
		steps[n++] = VOLUME_STEP_MOVE;
		arg->move_mibps = p->has_limit ? p->limit_mibps : 0;
	}
	if (p->has_quota) {
		steps[n++] = VOLUME_STEP_QUOTA;
	}
	if (p->has_limit && !move) {
		steps[n++] = VOLUME_STEP_LIMIT;
	}
	return n;
}

void admin__volume_patch(struct admin_api *api, const struct admin_request *req,
			 struct admin_reply *reply)
{
	struct admin_volume_patch patch;
	struct volume_patch_arg arg = { .name = req->name, .patch = &patch };
	struct pool_limits *limits = NULL;
	int steps[ADMIN_PATCH_MAX_STEPS];
	struct pool_state *st = NULL;
	const struct pool_volume *v;
	char err[300];
	int n, rc;

	if (admin__json_volume_patch(req->body, &patch, err, sizeof(err))) {
		admin__reply_error(reply, 400, "%s", err);
		return;
	}
	st = admin__state_get(api);
	limits = malloc(sizeof(*limits));
	if (!st || !limits) {
		admin__reply_error(reply, 500, "out of memory");
		goto out;
	}
	v = pool_state_find_volume(st, req->name);
	if (!v) {
		admin__reply_error(reply, 404,
				   "volume '%s' is not in a pool (POST "
				   "/volumes puts a datastore in one)",
				   req->name);
		goto out;
	}
	n = volumes_plan(st, v, &patch, &arg, steps, err, sizeof(err));
	if (n < 0) {
		admin__reply_error(reply, 400, "%s", err);
		goto out;
	}
	if (n == 0) {
		admin__reply_one(api, &volumes_resource, req->name, 200, reply);
		goto out;
	}
	rc = admin__patch_apply(api, steps, (size_t)n, volume_step, &arg,
				volume_step_names, limits, err, sizeof(err));
	if (rc) {
		volumes_refused(reply, rc, err);
	} else {
		admin__reply_changed(api, &volumes_resource, req->name, limits,
				     200, reply);
	}
out:
	free(limits);
	free(st);
}

void admin__volume_delete(struct admin_api *api,
			  const struct admin_request *req,
			  struct admin_reply *reply)
{
	struct pool_limits *limits;
	char err[300], rel[64];
	int rc;

	/* Its relation would lose its datastore under a running thread. */
	if (repl_service_uses(api->ctx.repl, req->name, rel, sizeof(rel))) {
		admin__reply_error(reply, 409,
				   "volume %s is in replication relation %s: "
				   "delete the relation first",
				   req->name, rel);
		return;
	}
	limits = malloc(sizeof(*limits));
	if (!limits) {
		admin__reply_error(reply, 500, "out of memory");
		return;
	}
	rc = pool_registry_volume_delete(api->ctx.pools, req->name, limits, err,
					 sizeof(err));
	if (rc) {
		admin__reply_error(reply, admin__status_from_err(rc), "%s",
				   err);
	} else {
		admin__reply_changed(api, &volumes_resource, req->name, limits,
				     204, reply);
	}
	free(limits);
}
