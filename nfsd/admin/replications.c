// SPDX-License-Identifier: Apache-2.0
/*
 * replications: the relations of this server as one collection
 * (docs/admin-api.md, "Replication"; nfsd/repl/service.h):
 *
 *   GET    /replications        every relation, its origin ("config":
 *                               [replication NAME] of dsnfsd.conf;
 *                               "api": made here) and its state
 *   POST   /replications        a relation made and started, kept in the
 *                               state directory (201; the body as
 *                               repl_decode.h says)
 *   DELETE /replications/NAME   a relation made here ended and its files
 *                               removed (204; 409 for the config's)
 *
 * The admin token guards them as every route (auth.c); the peer route
 * /replications/NAME/peer is http.c's, with the relation's key.
 */
#include "nfsd/admin/admin_int.h"
#include "nfsd/admin/repl_decode.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/repl/service.h"

/* The relations (@name's only when not NULL) as a JSON array; NULL when
 * out of memory. */
static json_t *replications_json(struct admin_api *api, const char *name)
{
	struct repl_status *st = calloc(REPL_PEERS_MAX, sizeof(*st));
	json_t *list = json_array();
	size_t n;

	if (!st || !list) {
		free(st);
		json_decref(list);
		return NULL;
	}
	n = repl_service_status(api->ctx.repl, NULL, st, REPL_PEERS_MAX);
	for (size_t i = 0; i < n; i++) {
		if (!name || !strcmp(name, st[i].name)) {
			json_array_append_new(list, admin__repl_json(&st[i]));
		}
	}
	free(st);
	return list;
}

void admin__replications_list(struct admin_api *api,
			      const struct admin_request *req,
			      struct admin_reply *reply)
{
	json_t *list = replications_json(api, NULL);

	(void)req;
	if (!list) {
		admin__reply_error(reply, 500, "out of memory");
		return;
	}
	admin__reply_json(reply, 200, json_pack("{s:o}", "relations", list));
}

static unsigned replications_status(int err)
{
	switch (err) {
	case -EEXIST:
	case -ENOSPC:
	case -EPERM:
		return 409;
	case -ENOENT:
		return 404;
	case -EINVAL:
	case -EOPNOTSUPP:
		return 400;
	default:
		return 500;
	}
}

void admin__replication_create(struct admin_api *api,
			       const struct admin_request *req,
			       struct admin_reply *reply)
{
	struct admin_repl_spec *spec = malloc(sizeof(*spec));
	json_t *list;
	char err[768];
	int rc;

	if (!spec) {
		admin__reply_error(reply, 500, "out of memory");
		return;
	}
	rc = admin__json_repl_spec(req->body, spec, err, sizeof(err));
	if (!rc) {
		rc = repl_service_create(api->ctx.repl, &spec->cfg, spec->key,
					 spec->has_ca ? spec->ca : NULL, err,
					 sizeof(err));
	}
	explicit_bzero(spec->key, sizeof(spec->key));
	if (rc) {
		free(spec);
		admin__reply_error(reply, replications_status(rc), "%s", err);
		return;
	}
	list = replications_json(api, spec->cfg.name);
	free(spec);
	if (!list || json_array_size(list) != 1) {
		json_decref(list);
		admin__reply_error(reply, 500, "out of memory");
		return;
	}
	admin__reply_json(reply, 201, json_incref(json_array_get(list, 0)));
	json_decref(list);
}

void admin__replication_delete(struct admin_api *api,
			       const struct admin_request *req,
			       struct admin_reply *reply)
{
	char err[768];
	int rc =
		repl_service_delete(api->ctx.repl, req->name, err, sizeof(err));

	if (rc) {
		admin__reply_error(reply, replications_status(rc), "%s", err);
		return;
	}
	admin__reply_empty(reply, 204);
}
