// SPDX-License-Identifier: Apache-2.0
/*
 * resource: the replies every collection shares: the list, one item, and
 * the item after a change (with the new limits applied first).
 */
#include "nfsd/admin/admin_int.h"
#include "nfsd/admin/view.h"

#include <stdio.h>
#include <string.h>

void admin__reply_list(struct admin_api *api, const struct admin_resource *r,
		       struct admin_reply *reply)
{
	struct admin_view view;
	json_t *list;
	size_t n;
	bool ok;

	if (admin__view_get(api, &view)) {
		admin__reply_error(reply, 500, "out of memory");
		return;
	}
	n = r->count(&view);
	list = json_array();
	ok = list != NULL;
	for (size_t i = 0; ok && i < n; i++) {
		ok = !json_array_append_new(list, r->item(&view, i));
	}
	admin__reply_json(reply, 200,
			  ok ? json_pack("{s:o}", r->key, list) : NULL);
	if (!ok) {
		json_decref(list);
	}
	admin__view_fini(&view);
}

void admin__reply_one(struct admin_api *api, const struct admin_resource *r,
		      const char *name, unsigned status,
		      struct admin_reply *reply)
{
	struct admin_view view;
	size_t n;

	if (admin__view_get(api, &view)) {
		admin__reply_error(reply, 500, "out of memory");
		return;
	}
	n = r->count(&view);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(r->name(&view, i), name)) {
			continue;
		}
		admin__reply_json(reply, status, r->item(&view, i));
		admin__view_fini(&view);
		return;
	}
	admin__reply_error(reply, 404, "%s '%s' does not exist", r->what, name);
	admin__view_fini(&view);
}

void admin__reply_changed(struct admin_api *api, const struct admin_resource *r,
			  const char *name, const struct pool_limits *limits,
			  unsigned status, struct admin_reply *reply)
{
	int err = admin__limits_apply(api, limits);

	if (err) {
		admin__reply_error(reply, 500,
				   "%s %s: changed, but the new limits are "
				   "not in effect: %s",
				   r->what, name, strerror(-err));
		return;
	}
	if (status == 204) {
		admin__reply_empty(reply, 204);
		return;
	}
	admin__reply_one(api, r, name, status, reply);
	if (status == 201 && reply->status == 201) {
		snprintf(reply->location, sizeof(reply->location), "/%s/%s",
			 r->key, name);
	}
}
