// SPDX-License-Identifier: Apache-2.0
/*
 * changes: the /changes resource, what the admin API changed over the
 * config (nfsd/overlay/overlay.h): GET shows the overlay that is laid
 * over the config at every start and SIGHUP, DELETE forgets it and makes
 * the config's pools, volumes and caps live again at once (the ledger
 * records the difference).  Every other change records the new overlay
 * here, after it succeeded.
 */
#include "nfsd/admin/admin_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void admin__changes_record(struct admin_api *api, struct admin_reply *reply)
{
	struct pool_state *live = admin__state_get(api);
	struct traffic_caps caps;
	char err[600];
	int rc = -ENOMEM;

	snprintf(err, sizeof(err), "out of memory");
	if (live) {
		traffic_caps_get(api->ctx.traffic, &caps);
		rc = overlay_store_record(api->ctx.changes, live, &caps, err,
					  sizeof(err));
	}
	free(live);
	/* A refusal keeps its own reply: the request changed nothing, and
	 * the next change tries the file again. */
	if (rc && reply->status >= 200 && reply->status < 300) {
		admin__reply_error(reply, 500,
				   "changed, but not saved: %s; the change "
				   "is live until the next start",
				   err);
	}
}

/* 404 when changes are not kept. */
static bool changes_kept(struct admin_api *api, struct admin_reply *reply)
{
	if (api->ctx.changes) {
		return true;
	}
	admin__reply_error(reply, 404,
			   "changes: this server does not keep the admin "
			   "API's changes");
	return false;
}

void admin__changes_get(struct admin_api *api, const struct admin_request *req,
			struct admin_reply *reply)
{
	struct overlay_store *s = api->ctx.changes;
	json_t *doc;

	(void)req;
	if (!changes_kept(api, reply)) {
		return;
	}
	overlay_store_lock(s);
	doc = overlay_to_json(overlay_store_current(s));
	if (doc && json_object_set_new(doc, "file",
				       json_string(overlay_store_path(s)))) {
		json_decref(doc);
		doc = NULL;
	}
	overlay_store_unlock(s);
	admin__reply_json(reply, 200, doc);
}

void admin__changes_revert(struct admin_api *api,
			   const struct admin_request *req,
			   struct admin_reply *reply)
{
	struct pool_state *base = malloc(sizeof(*base));
	struct pool_limits *limits = malloc(sizeof(*limits));
	struct traffic_caps caps;
	char err[300];
	int rc;

	(void)req;
	if (!changes_kept(api, reply)) {
		goto out;
	}
	if (!base || !limits) {
		admin__reply_error(reply, 500, "out of memory");
		goto out;
	}
	/* The lock is held (api.c): the base cannot change under us. */
	overlay_store_base_get(api->ctx.changes, base, &caps);
	rc = pool_registry_load(api->ctx.pools, base, limits, err, sizeof(err));
	if (rc) {
		admin__reply_error(reply, admin__status_from_err(rc),
				   "changes: the config's state was refused: "
				   "%s",
				   err);
		goto out;
	}
	rc = admin__limits_apply(api, limits);
	if (!rc) {
		rc = traffic_caps_set(api->ctx.traffic, &caps,
				      traffic_now_ns());
	}
	if (rc) {
		admin__reply_error(reply, 500,
				   "changes: the config's state is in the "
				   "registry, but not in effect: %s",
				   strerror(-rc));
		goto out;
	}
	admin__reply_empty(reply, 204);
out:
	free(limits);
	free(base);
}
