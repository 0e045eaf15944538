// SPDX-License-Identifier: Apache-2.0
/*
 * traffic_api: the read-mostly resources: /flows and /hosts (the traffic
 * counters and effective caps), /caps (the [traffic] caps and scale, which
 * PATCH changes live; kept over the config across restarts, as every
 * change: changes.c), /alarms (thin provisioning) and /metrics.
 */
#include "nfsd/admin/admin_int.h"
#include "nfsd/admin/patch.h"
#include "nfsd/admin/view.h"

#include <errno.h>
#include <string.h>
#include <time.h>

static size_t flows_count(const struct admin_view *view)
{
	return view->traffic.nflows;
}

static json_t *flows_item(const struct admin_view *view, size_t i)
{
	return admin__json_flow(&view->traffic.flows[i]);
}

static size_t hosts_count(const struct admin_view *view)
{
	return view->traffic.nhosts;
}

static json_t *hosts_item(const struct admin_view *view, size_t i)
{
	return admin__json_host(&view->traffic.hosts[i]);
}

static size_t alarms_count(const struct admin_view *view)
{
	return view->nalarms;
}

static json_t *alarms_item(const struct admin_view *view, size_t i)
{
	return admin__json_alarm(view, &view->alarms[i]);
}

void admin__flows_list(struct admin_api *api, const struct admin_request *req,
		       struct admin_reply *reply)
{
	static const struct admin_resource r = { .what = "flow",
						 .key = "flows",
						 .count = flows_count,
						 .item = flows_item };

	(void)req;
	admin__reply_list(api, &r, reply);
}

void admin__hosts_list(struct admin_api *api, const struct admin_request *req,
		       struct admin_reply *reply)
{
	static const struct admin_resource r = { .what = "host",
						 .key = "hosts",
						 .count = hosts_count,
						 .item = hosts_item };

	(void)req;
	admin__reply_list(api, &r, reply);
}

void admin__alarms_list(struct admin_api *api, const struct admin_request *req,
			struct admin_reply *reply)
{
	static const struct admin_resource r = { .what = "alarm",
						 .key = "alarms",
						 .count = alarms_count,
						 .item = alarms_item };

	(void)req;
	admin__reply_list(api, &r, reply);
}

void admin__caps_get(struct admin_api *api, const struct admin_request *req,
		     struct admin_reply *reply)
{
	struct traffic_caps caps;

	(void)req;
	traffic_caps_get(api->ctx.traffic, &caps);
	admin__reply_json(reply, 200, admin__json_caps(&caps));
}

void admin__caps_patch(struct admin_api *api, const struct admin_request *req,
		       struct admin_reply *reply)
{
	struct traffic_caps caps;
	char err[300];
	int rc;

	traffic_caps_get(api->ctx.traffic, &caps);
	if (admin__json_caps_patch(req->body, &caps, err, sizeof(err))) {
		admin__reply_error(reply, 400, "%s", err);
		return;
	}
	rc = traffic_caps_set(api->ctx.traffic, &caps, traffic_now_ns());
	if (rc) {
		admin__reply_error(reply, admin__status_from_err(rc),
				   "caps: refused by the traffic module: %s",
				   strerror(-rc));
		return;
	}
	admin__caps_get(api, req, reply);
}

void admin__metrics_get(struct admin_api *api, const struct admin_request *req,
			struct admin_reply *reply)
{
	struct admin_view view;
	struct admin_buf text;

	(void)req;
	if (admin__view_get(api, &view)) {
		admin__reply_error(reply, 500, "out of memory");
		return;
	}
	admin__buf_init(&text);
	admin__metrics_write(&view, &text);
	admin__reply_text(reply, 200, ADMIN_METRICS_CONTENT_TYPE, &text);
	admin__view_fini(&view);
}
