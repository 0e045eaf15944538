// SPDX-License-Identifier: Apache-2.0
/*
 * traffic_api: the read-mostly resources: /flows and /hosts (the traffic
 * counters and effective caps), /caps (the [traffic] caps and scale, which
 * PATCH changes live; kept over the config across restarts, as every
 * change: changes.c), /alarms (thin provisioning) and /metrics.
 */
#include "nfsd/admin/admin_int.h"
#include "nfsd/admin/snap_policy.h"
#include "nfsd/admin/patch.h"
#include "nfsd/admin/view.h"

#include <errno.h>
#include <stdbool.h>
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

/* Index of the first flow of @fl whose host (and volume, or port) match
 * flow @i's: the group it belongs to is named by that flow. */
static size_t flows_first(const struct traffic_flow_stats *fl, size_t i,
			  bool by_volume)
{
	for (size_t k = 0; k < i; k++) {
		if (strcmp(fl[k].host, fl[i].host)) {
			continue;
		}
		if (by_volume ? !strcmp(fl[k].volume, fl[i].volume)
			      : fl[k].port == fl[i].port) {
			return k;
		}
	}
	return i;
}

/*
 * The groups of /flows: "nconnect", one per (client host, datastore) with
 * the connections (client ports) carrying it (ESXi 8's nConnect), and
 * "connections", one per (client host, port) with the datastores it
 * carries (more than one past ESXi's SunRPC.MaxConnPerIP: admission,
 * QoS and quota stay each datastore's).
 */
static json_t *flows_groups(const struct traffic_flow_stats *fl, size_t n,
			    bool by_volume)
{
	json_t *groups = json_array();

	for (size_t i = 0; groups && i < n; i++) {
		json_t *members, *g;

		if (flows_first(fl, i, by_volume) != i) {
			continue;
		}
		members = json_array();
		for (size_t k = i; members && k < n; k++) {
			if (flows_first(fl, k, by_volume) != i) {
				continue;
			}
			if (json_array_append_new(
				    members,
				    by_volume ? json_integer(fl[k].port)
					      : json_string(fl[k].volume))) {
				json_decref(members);
				members = NULL;
			}
		}
		g = members ? by_volume
				      ? json_pack("{s:s,s:s,s:I,s:o}", "host",
						  fl[i].host, "volume",
						  fl[i].volume, "connections",
						  (json_int_t)json_array_size(
							  members),
						  "ports", members)
				      : json_pack("{s:s,s:i,s:I,s:o}", "host",
						  fl[i].host, "port",
						  (int)fl[i].port, "datastores",
						  (json_int_t)json_array_size(
							  members),
						  "volumes", members)
			    : NULL;
		if (!g || json_array_append_new(groups, g)) {
			json_decref(groups);
			groups = NULL;
		}
	}
	return groups;
}

void admin__flows_list(struct admin_api *api, const struct admin_request *req,
		       struct admin_reply *reply)
{
	const struct traffic_flow_stats *fl;
	struct admin_view view;
	json_t *flows;
	size_t n;

	(void)req;
	if (admin__view_get(api, &view)) {
		admin__reply_error(reply, 500, "out of memory");
		return;
	}
	fl = view.traffic.flows;
	n = flows_count(&view);
	flows = json_array();
	for (size_t i = 0; flows && i < n; i++) {
		if (json_array_append_new(flows, flows_item(&view, i))) {
			json_decref(flows);
			flows = NULL;
		}
	}
	/* NULL members make json_pack fail: a 500, as any other list */
	admin__reply_json(reply, 200,
			  json_pack("{s:o,s:o,s:o}", "flows", flows, "nconnect",
				    flows_groups(fl, n, true), "connections",
				    flows_groups(fl, n, false)));
	admin__view_fini(&view);
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
	admin__policies_metrics(api->policies, &text);
	admin__replication_metrics(api, &text);
	admin__reply_text(reply, 200, ADMIN_METRICS_CONTENT_TYPE, &text);
	admin__view_fini(&view);
}
