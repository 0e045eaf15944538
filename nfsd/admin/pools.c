// SPDX-License-Identifier: Apache-2.0
/*
 * pools: the /pools resource.  GET lists or shows pools with what their
 * volumes take of them; POST creates one, PATCH changes its size, service
 * level, purchased Flexible throughput or QoS type, DELETE removes an
 * empty one.  Every change goes through the registry, which checks the
 * rules and writes the capacity ledger, and then reaches the traffic
 * buckets.
 */
#include "nfsd/admin/admin_int.h"
#include "nfsd/admin/patch.h"
#include "nfsd/admin/view.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum pool_step {
	POOL_STEP_QOS = 0,
	POOL_STEP_LEVEL,
	POOL_STEP_THROUGHPUT,
	POOL_STEP_SIZE,
};

static const char *const pool_step_names[] = {
	[POOL_STEP_QOS] = "qos",
	[POOL_STEP_LEVEL] = "level",
	[POOL_STEP_THROUGHPUT] = "purchased_mibps",
	[POOL_STEP_SIZE] = "size_tib",
};

struct pool_patch_arg {
	const char *name;
	const struct admin_pool_patch *patch;
};

static size_t pools_count(const struct admin_view *view)
{
	return view->state->npools;
}

static const char *pools_name(const struct admin_view *view, size_t i)
{
	return view->state->pools[i].name;
}

static json_t *pools_item(const struct admin_view *view, size_t i)
{
	return admin__json_pool(view, &view->state->pools[i]);
}

static const struct admin_resource pools_resource = {
	.what = "pool",
	.key = "pools",
	.count = pools_count,
	.name = pools_name,
	.item = pools_item,
};

void admin__pools_list(struct admin_api *api, const struct admin_request *req,
		       struct admin_reply *reply)
{
	(void)req;
	admin__reply_list(api, &pools_resource, reply);
}

void admin__pool_get(struct admin_api *api, const struct admin_request *req,
		     struct admin_reply *reply)
{
	admin__reply_one(api, &pools_resource, req->name, 200, reply);
}

void admin__pool_create(struct admin_api *api, const struct admin_request *req,
			struct admin_reply *reply)
{
	struct pool_limits *limits = malloc(sizeof(*limits));
	struct pool spec;
	char err[300];
	int rc;

	if (!limits) {
		admin__reply_error(reply, 500, "out of memory");
		return;
	}
	rc = admin__json_pool_spec(req->body, &spec, err, sizeof(err));
	if (!rc) {
		rc = pool_registry_pool_create(api->ctx.pools, &spec, limits,
					       err, sizeof(err));
	}
	if (rc) {
		admin__reply_error(reply, admin__status_from_err(rc), "%s",
				   err);
	} else {
		admin__reply_changed(api, &pools_resource, spec.name, limits,
				     201, reply);
	}
	free(limits);
}

static int pool_step(struct pool_registry *reg, int step, void *arg,
		     struct pool_limits *limits, char *errbuf, size_t errlen)
{
	const struct pool_patch_arg *a = arg;
	const struct admin_pool_patch *p = a->patch;

	switch ((enum pool_step)step) {
	case POOL_STEP_QOS:
		return pool_registry_pool_set_qos(reg, a->name, p->qos, limits,
						  errbuf, errlen);
	case POOL_STEP_LEVEL:
		return pool_registry_pool_set_level(reg, a->name, p->level,
						    limits, errbuf, errlen);
	case POOL_STEP_THROUGHPUT:
		return pool_registry_pool_set_throughput(
			reg, a->name, p->purchased_mibps, limits, errbuf,
			errlen);
	case POOL_STEP_SIZE:
		return pool_registry_pool_resize(reg, a->name, p->size_tib,
						 limits, errbuf, errlen);
	}
	return -EINVAL;
}

/* True when pool @name exists; otherwise replies 404 (or 500). */
static bool pools_exists(struct admin_api *api, const char *name,
			 struct admin_reply *reply)
{
	struct pool_state *st = admin__state_get(api);
	bool found;

	if (!st) {
		admin__reply_error(reply, 500, "out of memory");
		return false;
	}
	found = pool_state_pool(st, name) != NULL;
	free(st);
	if (!found) {
		admin__reply_error(reply, 404, "pool '%s' does not exist",
				   name);
	}
	return found;
}

void admin__pool_patch(struct admin_api *api, const struct admin_request *req,
		       struct admin_reply *reply)
{
	struct admin_pool_patch patch;
	struct pool_patch_arg arg = { .name = req->name, .patch = &patch };
	struct pool_limits *limits;
	int steps[ADMIN_PATCH_MAX_STEPS];
	size_t n = 0;
	char err[300];
	int rc;

	if (admin__json_pool_patch(req->body, &patch, err, sizeof(err))) {
		admin__reply_error(reply, 400, "%s", err);
		return;
	}
	if (!pools_exists(api, req->name, reply)) {
		return;
	}
	if (patch.has_qos) {
		steps[n++] = POOL_STEP_QOS;
	}
	if (patch.has_level) {
		steps[n++] = POOL_STEP_LEVEL;
	}
	if (patch.has_throughput) {
		steps[n++] = POOL_STEP_THROUGHPUT;
	}
	if (patch.has_size) {
		steps[n++] = POOL_STEP_SIZE;
	}
	limits = malloc(sizeof(*limits));
	if (!limits) {
		admin__reply_error(reply, 500, "out of memory");
		return;
	}
	rc = admin__patch_apply(api, steps, n, pool_step, &arg, pool_step_names,
				limits, err, sizeof(err));
	if (rc) {
		admin__reply_error(reply, admin__status_from_err(rc), "%s",
				   err);
	} else {
		admin__reply_changed(api, &pools_resource, req->name, limits,
				     200, reply);
	}
	free(limits);
}

void admin__pool_delete(struct admin_api *api, const struct admin_request *req,
			struct admin_reply *reply)
{
	struct pool_limits *limits;
	char err[300];
	int rc;

	if (!pools_exists(api, req->name, reply)) {
		return;
	}
	limits = malloc(sizeof(*limits));
	if (!limits) {
		admin__reply_error(reply, 500, "out of memory");
		return;
	}
	rc = pool_registry_pool_delete(api->ctx.pools, req->name, limits, err,
				       sizeof(err));
	/* The one refusal of a delete: the pool still holds volumes, a
	 * conflict with the resource's state. */
	if (rc) {
		admin__reply_error(
			reply, rc == -EINVAL ? 409 : admin__status_from_err(rc),
			"%s", err);
	} else {
		admin__reply_changed(api, &pools_resource, req->name, limits,
				     204, reply);
	}
	free(limits);
}
