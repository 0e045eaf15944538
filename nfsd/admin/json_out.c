// SPDX-License-Identifier: Apache-2.0
/*
 * json_out: the JSON shapes of the admin API's resources (docs/admin-api.md,
 * "Resources").  Sizes are bytes, rates bytes/s unless the key names
 * another unit (_mibps, _tib); a value that is not known is null.
 */
#include "nfsd/admin/admin_int.h"
#include "nfsd/admin/view.h"

#include <limits.h>
#include <string.h>

#include "nfsd/pool/billing.h"

static json_t *json_u64(uint64_t v)
{
	return json_integer(v > (uint64_t)LLONG_MAX ? LLONG_MAX
						    : (json_int_t)v);
}

/* A count, or null when not known. */
static json_t *json_u64_or_null(bool known, uint64_t v)
{
	return known ? json_u64(v) : json_null();
}

static json_t *json_real_or_null(bool known, double v)
{
	return known ? json_real(v) : json_null();
}

static json_t *json_op_counters(const struct traffic_counters *c, int op)
{
	return json_pack("{s:o,s:o,s:o,s:o}", "ops", json_u64(c->ops[op]),
			 "bytes", json_u64(c->bytes[op]), "done",
			 json_u64(c->done[op]), "latency_ns",
			 json_u64(c->latency_ns[op]));
}

json_t *admin__json_counters(const struct traffic_counters *c)
{
	return json_pack("{s:o,s:o,s:o,s:o}", "read",
			 json_op_counters(c, TRAFFIC_OP_READ), "write",
			 json_op_counters(c, TRAFFIC_OP_WRITE), "other",
			 json_op_counters(c, TRAFFIC_OP_OTHER), "limit_reached",
			 json_u64(c->limited));
}

/* Counters of something the traffic module may not know yet: zeros. */
static json_t *json_counters_or_zero(const struct traffic_counters *c)
{
	static const struct traffic_counters zero;

	return admin__json_counters(c ? c : &zero);
}

json_t *admin__json_pool(const struct admin_view *view, const struct pool *p)
{
	const struct traffic_pool_stats *tp =
		admin__view_traffic_pool(view, p->name);
	struct admin_pool_sums sums;
	json_t *names = json_array();

	if (!names) {
		return NULL;
	}
	for (size_t i = 0; i < view->state->nvolumes; i++) {
		const struct pool_volume *v = &view->state->volumes[i];

		if (!strcmp(v->pool, p->name)) {
			json_array_append_new(names, json_string(v->name));
		}
	}
	admin__view_pool_sums(view, p->name, &sums);
	return json_pack(
		"{s:s,s:s,s:s,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "name",
		p->name, "level", pool_level_name(p->level), "qos",
		pool_qos_name(p->qos), "size_tib", json_u64(p->size_tib),
		"size_bytes", json_u64((uint64_t)p->size_tib * POOL_TIB_BYTES),
		"purchased_mibps", json_u64(p->purchased_mibps),
		"throughput_mibps", json_u64(pool_throughput_mibps(p)),
		"allocated_bytes", json_u64(sums.quota_bytes),
		"allocated_throughput_bytes_per_s",
		json_u64(sums.limit_bytes_per_s), "used_bytes",
		json_u64(sums.used_bytes), "volumes", names, "counters",
		json_counters_or_zero(tp ? &tp->counters : NULL));
}

json_t *admin__json_volume(const struct admin_view *view,
			   const struct admin_volume_view *vol)
{
	const struct pool_volume *pv = vol->pooled;
	const struct pool *p =
		pv ? pool_state_pool(view->state, pv->pool) : NULL;
	bool quota = pv && pv->quota_bytes;
	bool manual = p && p->qos == POOL_QOS_MANUAL;

	return json_pack(
		"{s:s,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "name",
		vol->name, "path",
		vol->export ? json_string(vol->export->path) : json_null(),
		"pool", pv ? json_string(pv->pool) : json_null(), "level",
		p ? json_string(pool_level_name(p->level)) : json_null(),
		"quota_bytes", json_u64_or_null(pv, pv ? pv->quota_bytes : 0),
		"limit_mibps",
		json_u64_or_null(manual, pv ? pv->manual_mibps : 0),
		"limit_bytes_per_s", json_u64(vol->limit_bytes_per_s),
		"used_bytes",
		json_u64_or_null(vol->used_known, vol->used_bytes),
		"consumed_percent",
		json_real_or_null(quota && vol->used_known,
				  quota ? (double)vol->used_bytes * 100.0 /
						  (double)pv->quota_bytes
					: 0),
		"provisioned_bytes",
		json_u64_or_null(vol->alarm && vol->alarm->scanned,
				 vol->alarm ? vol->alarm->scan.provisioned_bytes
					    : 0),
		"traffic_limit_bytes_per_s",
		json_u64(vol->traffic ? vol->traffic->limit_bytes_per_s : 0),
		"counters",
		json_counters_or_zero(vol->traffic ? &vol->traffic->counters
						   : NULL));
}

json_t *admin__json_flow(const struct traffic_flow_stats *f)
{
	return json_pack("{s:o,s:s,s:i,s:s,s:o,s:o,s:o,s:o}", "id",
			 json_u64(f->id), "host", f->host, "port", (int)f->port,
			 "volume", f->volume, "queued", json_u64(f->queued),
			 "cap_bytes_per_s", json_u64(f->cap_bytes_per_s),
			 "cap_ops_per_s", json_u64(f->cap_ops_per_s),
			 "counters", admin__json_counters(&f->counters));
}

json_t *admin__json_host(const struct traffic_host_stats *h)
{
	return json_pack("{s:s,s:o,s:o,s:o,s:o,s:o}", "host", h->host, "flows",
			 json_u64(h->flows), "busy_flows",
			 json_u64(h->busy_flows), "cap_bytes_per_s",
			 json_u64(h->cap_bytes_per_s), "cap_ops_per_s",
			 json_u64(h->cap_ops_per_s), "counters",
			 admin__json_counters(&h->counters));
}

json_t *admin__json_caps(const struct traffic_caps *caps)
{
	const double mib = (double)POOL_MIB_BYTES;

	return json_pack(
		"{s:f,s:f,s:o,s:f,s:o,s:o,s:f,s:f,s:o}", "scale", caps->scale,
		"flow_mibps", (double)caps->flow_bytes_per_s / mib, "flow_iops",
		json_u64(caps->flow_ops_per_s), "host_mibps",
		(double)caps->host_bytes_per_s / mib, "host_iops",
		json_u64(caps->host_ops_per_s), "volume_iops",
		json_u64(caps->volume_ops_per_s), "host_contention",
		caps->host_contention, "volume_contention",
		caps->volume_contention, "burst_ms", json_u64(caps->burst_ms));
}

static json_t *json_alarm_kind(const struct admin_view *view,
			       const struct alarm_view *a, enum alarm_kind k)
{
	uint32_t threshold =
		k == ALARM_USAGE ? view->config.usage_alarm_percent
				 : view->config.overallocation_alarm_percent;

	return json_pack("{s:o,s:o,s:b}", "percent",
			 json_real_or_null(a->valid[k], a->percent[k]),
			 "threshold_percent", json_u64(threshold), "raised",
			 a->raised[k]);
}

json_t *admin__json_alarm(const struct admin_view *view,
			  const struct alarm_view *a)
{
	char when[32] = "";

	if (a->scanned) {
		billing_time_format(a->scan_time_s, when, sizeof(when));
	}
	return json_pack(
		"{s:s,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "volume",
		a->volume, "quota_bytes",
		json_u64_or_null(a->quota_bytes, a->quota_bytes), "used_bytes",
		json_u64_or_null(a->used_known, a->used_bytes),
		"provisioned_bytes",
		json_u64_or_null(a->scanned, a->scan.provisioned_bytes),
		"thin_provisioned_bytes",
		json_u64_or_null(a->scanned, a->scan.thin_provisioned_bytes),
		"allocated_bytes",
		json_u64_or_null(a->scanned, a->scan.allocated_bytes), "disks",
		json_u64_or_null(a->scanned, a->scan.disks), "thin_disks",
		json_u64_or_null(a->scanned, a->scan.thin_disks), "scanned_at",
		a->scanned ? json_string(when) : json_null(), "scan_error",
		a->scan_err ? json_string(strerror(-a->scan_err)) : json_null(),
		"usage", json_alarm_kind(view, a, ALARM_USAGE),
		"overallocation",
		json_alarm_kind(view, a, ALARM_OVERALLOCATION));
}
