// SPDX-License-Identifier: Apache-2.0
/*
 * metrics: GET /metrics, the Prometheus text exposition format 0.0.4
 * (prometheus.io/docs/instrumenting/exposition_formats): per family one
 * HELP and one TYPE line, then all its samples together; label values
 * escape backslash, double quote and newline; HELP text backslash and
 * newline.  Names are dsnfs_<object>_<what>_<unit>, counters end in
 * _total, latencies are summaries (_sum and _count, in seconds) from which
 * an average is rate(_sum) / rate(_count).  docs/admin-api.md, "Metrics", maps
 * them to the Azure NetApp Files metric names.  A family without samples
 * is left out.
 */
#include "nfsd/admin/admin_int.h"
#include "nfsd/admin/view.h"
#include "nfsd/store/store_open.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/base/base.h"

#define METRICS_LABELS_MAX 3

struct metrics_label {
	const char *name;
	const char *value;
};

/* One family being written: its header goes out with its first sample. */
struct metrics_family {
	struct admin_buf *out;
	const char *name;
	const char *type;
	const char *help;
	bool started;
};

void admin__metrics_label_escape(struct admin_buf *out, const char *value)
{
	for (const char *p = value; *p; p++) {
		if (*p == '\\') {
			admin__buf_puts(out, "\\\\");
		} else if (*p == '"') {
			admin__buf_puts(out, "\\\"");
		} else if (*p == '\n') {
			admin__buf_puts(out, "\\n");
		} else {
			admin__buf_append(out, p, 1);
		}
	}
}

static void metrics_help_escape(struct admin_buf *out, const char *text)
{
	for (const char *p = text; *p; p++) {
		if (*p == '\\') {
			admin__buf_puts(out, "\\\\");
		} else if (*p == '\n') {
			admin__buf_puts(out, "\\n");
		} else {
			admin__buf_append(out, p, 1);
		}
	}
}

static void metrics_header(struct metrics_family *f)
{
	if (f->started) {
		return;
	}
	f->started = true;
	admin__buf_printf(f->out, "# HELP %s ", f->name);
	metrics_help_escape(f->out, f->help);
	admin__buf_printf(f->out, "\n# TYPE %s %s\n", f->name, f->type);
}

/* One sample: NAME[SUFFIX]{LABELS} VALUE. */
static void metrics_sample(struct metrics_family *f, const char *suffix,
			   const struct metrics_label *labels, size_t n,
			   const char *value)
{
	metrics_header(f);
	admin__buf_puts(f->out, f->name);
	admin__buf_puts(f->out, suffix);
	for (size_t i = 0; i < n; i++) {
		admin__buf_printf(f->out, "%c%s=\"", i ? ',' : '{',
				  labels[i].name);
		admin__metrics_label_escape(f->out, labels[i].value);
		admin__buf_puts(f->out, "\"");
	}
	admin__buf_printf(f->out, "%s %s\n", n ? "}" : "", value);
}

static void metrics_sample_u64(struct metrics_family *f, const char *suffix,
			       const struct metrics_label *labels, size_t n,
			       uint64_t v)
{
	char value[32];

	snprintf(value, sizeof(value), "%" PRIu64, v);
	metrics_sample(f, suffix, labels, n, value);
}

/* A duration in nanoseconds as exact decimal seconds. */
static void metrics_sample_ns(struct metrics_family *f, const char *suffix,
			      const struct metrics_label *labels, size_t n,
			      uint64_t ns)
{
	char value[48];

	snprintf(value, sizeof(value), "%" PRIu64 ".%09" PRIu64,
		 ns / 1000000000u, ns % 1000000000u);
	metrics_sample(f, suffix, labels, n, value);
}

static void metrics_sample_double(struct metrics_family *f,
				  const struct metrics_label *labels, size_t n,
				  double v)
{
	char value[48];

	snprintf(value, sizeof(value), "%.3f", v);
	metrics_sample(f, "", labels, n, value);
}

/* A flow, host, volume or pool with its labels and traffic counters. */
struct metrics_entity {
	struct metrics_label labels[METRICS_LABELS_MAX];
	size_t nlabels;
	const struct traffic_counters *c;
};

enum metrics_counter_kind {
	METRICS_OPS,
	METRICS_BYTES,
	METRICS_LATENCY,
	METRICS_LIMITED,
};

static const struct {
	const char *suffix;
	const char *type;
	enum metrics_counter_kind kind;
	int op;
	const char *help;
	const char *anf; /* the ANF metric it stands for, if any */
} metrics_counters[] = {
	{ "read_ops_total", "counter", METRICS_OPS, TRAFFIC_OP_READ,
	  "READ requests started", "; ANF ReadIops is its rate" },
	{ "write_ops_total", "counter", METRICS_OPS, TRAFFIC_OP_WRITE,
	  "WRITE requests started", "; ANF WriteIops is its rate" },
	{ "other_ops_total", "counter", METRICS_OPS, TRAFFIC_OP_OTHER,
	  "Other (metadata) requests started", "; ANF OtherIops is its rate" },
	{ "read_bytes_total", "counter", METRICS_BYTES, TRAFFIC_OP_READ,
	  "Bytes of READ requests started",
	  "; ANF ReadThroughput is its rate" },
	{ "write_bytes_total", "counter", METRICS_BYTES, TRAFFIC_OP_WRITE,
	  "Bytes of WRITE requests started",
	  "; ANF WriteThroughput is its rate" },
	{ "read_latency_seconds", "summary", METRICS_LATENCY, TRAFFIC_OP_READ,
	  "READ latency from arrival to reply, queueing included",
	  "; ANF AverageReadLatency is rate(_sum) / rate(_count)" },
	{ "write_latency_seconds", "summary", METRICS_LATENCY, TRAFFIC_OP_WRITE,
	  "WRITE latency from arrival to reply, queueing included",
	  "; ANF AverageWriteLatency is rate(_sum) / rate(_count)" },
	{ "other_latency_seconds", "summary", METRICS_LATENCY, TRAFFIC_OP_OTHER,
	  "Latency of other requests from arrival to reply, queueing "
	  "included",
	  "" },
	{ "throughput_limit_reached_total", "counter", METRICS_LIMITED, 0,
	  "Requests a throughput or IOPS limit made wait",
	  "; ANF: throughput limit reached" },
};

/* The traffic counter families of @n entities named dsnfs_@object_...;
 * @latency: the object counts completions (pools do not). */
static void metrics_counter_families(struct admin_buf *out, const char *object,
				     const struct metrics_entity *ents,
				     size_t n, bool latency)
{
	char name[96], help[256];

	for (size_t k = 0; k < ARRAY_SIZE(metrics_counters); k++) {
		int op = metrics_counters[k].op;
		struct metrics_family f = { .out = out,
					    .name = name,
					    .type = metrics_counters[k].type,
					    .help = help };

		if (metrics_counters[k].kind == METRICS_LATENCY && !latency) {
			continue;
		}
		snprintf(name, sizeof(name), "dsnfs_%s_%s", object,
			 metrics_counters[k].suffix);
		snprintf(help, sizeof(help), "%s, per %s%s",
			 metrics_counters[k].help, object,
			 metrics_counters[k].anf);
		for (size_t i = 0; i < n; i++) {
			const struct metrics_entity *e = &ents[i];

			switch (metrics_counters[k].kind) {
			case METRICS_OPS:
				metrics_sample_u64(&f, "", e->labels,
						   e->nlabels, e->c->ops[op]);
				break;
			case METRICS_BYTES:
				metrics_sample_u64(&f, "", e->labels,
						   e->nlabels, e->c->bytes[op]);
				break;
			case METRICS_LATENCY:
				metrics_sample_ns(&f, "_sum", e->labels,
						  e->nlabels,
						  e->c->latency_ns[op]);
				metrics_sample_u64(&f, "_count", e->labels,
						   e->nlabels, e->c->done[op]);
				break;
			case METRICS_LIMITED:
				metrics_sample_u64(&f, "", e->labels,
						   e->nlabels, e->c->limited);
				break;
			}
		}
	}
}

static uint64_t metrics_scaled(const struct admin_view *v, uint64_t rate)
{
	return (uint64_t)llround((double)rate * v->caps.scale);
}

static const struct traffic_counters metrics_zero;

static void metrics_pools(const struct admin_view *v, struct admin_buf *out,
			  struct metrics_entity *ents)
{
	struct metrics_family info = {
		out, "dsnfs_pool_info", "gauge",
		"Capacity pools: 1, with the service level and QoS type", false
	};
	struct metrics_family size = {
		out, "dsnfs_pool_size_bytes", "gauge",
		"Provisioned size of the pool (ANF VolumePoolAllocatedSize)",
		false
	};
	struct metrics_family alloc = { out, "dsnfs_pool_allocated_bytes",
					"gauge",
					"Sum of the pool's volume quotas (ANF "
					"VolumePoolAllocatedUsed)",
					false };
	struct metrics_family used = { out, "dsnfs_pool_consumed_bytes",
				       "gauge",
				       "Bytes used in the pool's volumes (ANF "
				       "VolumePoolTotalLogicalSize)",
				       false };
	struct metrics_family tput = {
		out, "dsnfs_pool_throughput_limit_bytes_per_second", "gauge",
		"Throughput of the pool, after the traffic scale (ANF "
		"VolumePoolProvisionedThroughput)",
		false
	};
	struct metrics_family talloc = {
		out, "dsnfs_pool_allocated_throughput_bytes_per_second",
		"gauge",
		"Sum of the pool's volume limits, after the traffic scale "
		"(ANF VolumePoolAllocatedToVolumeThroughput)",
		false
	};
	const struct pool_state *st = v->state;

	for (size_t i = 0; i < st->npools; i++) {
		const struct pool *p = &st->pools[i];
		const struct traffic_pool_stats *tp =
			admin__view_traffic_pool(v, p->name);
		struct metrics_label l[3] = {
			{ "pool", p->name },
			{ "level", pool_level_name(p->level) },
			{ "qos", pool_qos_name(p->qos) },
		};

		ents[i] = (struct metrics_entity){ .labels = { l[0] },
						   .nlabels = 1,
						   .c = tp ? &tp->counters
							   : &metrics_zero };
		metrics_sample(&info, "", l, 3, "1");
	}
	for (size_t i = 0; i < st->npools; i++) {
		metrics_sample_u64(&size, "", ents[i].labels, 1,
				   (uint64_t)st->pools[i].size_tib *
					   POOL_TIB_BYTES);
	}
	for (int pass = 0; pass < 3; pass++) {
		for (size_t i = 0; i < st->npools; i++) {
			struct admin_pool_sums s;

			admin__view_pool_sums(v, st->pools[i].name, &s);
			if (pass == 0) {
				metrics_sample_u64(&alloc, "", ents[i].labels,
						   1, s.quota_bytes);
			} else if (pass == 1) {
				metrics_sample_u64(&used, "", ents[i].labels, 1,
						   s.used_bytes);
			} else {
				metrics_sample_u64(
					&talloc, "", ents[i].labels, 1,
					metrics_scaled(v, s.limit_bytes_per_s));
			}
		}
	}
	for (size_t i = 0; i < v->limits->npools; i++) {
		struct metrics_label l = { "pool", v->limits->pools[i].name };

		metrics_sample_u64(
			&tput, "", &l, 1,
			metrics_scaled(
				v, v->limits->pools[i].throughput_bytes_per_s));
	}
	metrics_counter_families(out, "pool", ents, st->npools, false);
}

static void metrics_volumes(const struct admin_view *v, struct admin_buf *out,
			    struct metrics_entity *ents)
{
	struct metrics_family info = {
		out, "dsnfs_volume_info", "gauge",
		"Volumes (datastores): 1, with their pool and service level",
		false
	};
	struct metrics_family limit = {
		out, "dsnfs_volume_throughput_limit_bytes_per_second", "gauge",
		"QoS throughput limit of the volume, after the traffic scale",
		false
	};
	struct metrics_family logical = {
		out, "dsnfs_volume_logical_size_bytes", "gauge",
		"Bytes used in the volume (ANF VolumeLogicalSize)", false
	};
	struct metrics_family alloc = {
		out, "dsnfs_volume_allocated_size_bytes", "gauge",
		"Quota of the volume (ANF VolumeAllocatedSize)", false
	};
	struct metrics_family pct = {
		out, "dsnfs_volume_consumed_size_percent", "gauge",
		"Used bytes over the quota, in percent (ANF "
		"VolumeConsumedSizePercentage)",
		false
	};
	struct metrics_family zeroed = {
		out, "dsnfs_volume_zeroed_blocks_total", "counter",
		"1 MiB blocks zeroed on their first write, as VMFS does "
		"(zero_on_first_write)",
		false
	};
	struct metrics_family up = {
		out, "dsnfs_volume_up", "gauge",
		"1 while the datastore's store serves, 0 while it is down (a "
		"cephfs cluster lost, or down since start: NFS3ERR_JUKEBOX)",
		false
	};
	struct metrics_family fenced = {
		out, "dsnfs_volume_fenced", "gauge",
		"1 once another gateway took the datastore over and fenced "
		"this one (its cephfs clients blocklisted): it serves no more "
		"until dsnfsd is restarted",
		false
	};

	for (size_t i = 0; i < v->nvolumes; i++) {
		const struct admin_volume_view *vol = &v->volumes[i];
		const struct pool *p =
			vol->pooled
				? pool_state_pool(v->state, vol->pooled->pool)
				: NULL;
		struct metrics_label l[3] = {
			{ "volume", vol->name },
			{ "pool", p ? p->name : "" },
			{ "level", p ? pool_level_name(p->level) : "" },
		};

		ents[i] = (struct metrics_entity){
			.labels = { l[0] },
			.nlabels = 1,
			.c = vol->traffic ? &vol->traffic->counters
					  : &metrics_zero
		};
		metrics_sample(&info, "", l, 3, "1");
	}
	metrics_counter_families(out, "volume", ents, v->nvolumes, true);
	for (size_t i = 0; i < v->nvolumes; i++) {
		if (v->volumes[i].limit_bytes_per_s) {
			metrics_sample_u64(
				&limit, "", ents[i].labels, 1,
				metrics_scaled(
					v, v->volumes[i].limit_bytes_per_s));
		}
	}
	for (size_t i = 0; i < v->nvolumes; i++) {
		if (v->volumes[i].used_known) {
			metrics_sample_u64(&logical, "", ents[i].labels, 1,
					   v->volumes[i].used_bytes);
		}
	}
	for (size_t i = 0; i < v->nvolumes; i++) {
		if (v->volumes[i].pooled) {
			metrics_sample_u64(&alloc, "", ents[i].labels, 1,
					   v->volumes[i].pooled->quota_bytes);
		}
	}
	for (size_t i = 0; i < v->nvolumes; i++) {
		const struct admin_volume_view *vol = &v->volumes[i];

		if (vol->pooled && vol->pooled->quota_bytes &&
		    vol->used_known) {
			metrics_sample_double(
				&pct, ents[i].labels, 1,
				(double)vol->used_bytes * 100.0 /
					(double)vol->pooled->quota_bytes);
		}
	}
	for (size_t i = 0; i < v->nvolumes; i++) {
		const struct export *exp = v->volumes[i].export;

		if (exp && export_store(exp)) {
			metrics_sample_u64(
				&zeroed, "", ents[i].labels, 1,
				atomic_load(&export_store(exp)->zeroed_blocks));
		}
	}
	for (size_t i = 0; i < v->nvolumes; i++) {
		const struct export *exp = v->volumes[i].export;
		const struct store *st = exp ? export_store(exp) : NULL;

		if (exp) {
			metrics_sample_u64(
				&up, "", ents[i].labels, 1,
				st && !atomic_load(&st->unavailable));
		}
	}
	for (size_t i = 0; i < v->nvolumes; i++) {
		const struct export *exp = v->volumes[i].export;
		const struct store *st = exp ? export_store(exp) : NULL;

		if (exp) {
			metrics_sample_u64(&fenced, "", ents[i].labels, 1,
					   st && atomic_load(&st->fenced));
		}
	}
}

/* One sample per intent log (a [server] log serves several datastores),
 * labelled with its path. */
static void metrics_ilog_sample(struct metrics_family *f,
				const struct admin_view *v, size_t offset)
{
	for (size_t i = 0; i < v->nvolumes; i++) {
		const struct export *exp = v->volumes[i].export;
		const struct store *st = exp ? export_store(exp) : NULL;
		struct store_ilog *log = st ? st->ilog : NULL;
		struct store_ilog_stats s;
		bool seen = false;

		for (size_t j = 0; j < i && log && !seen; j++) {
			const struct export *e = v->volumes[j].export;

			seen = e && export_store(e) &&
			       export_store(e)->ilog == log;
		}
		if (!log || seen) {
			continue;
		}
		store_ilog_stats(log, &s);
		struct metrics_label l = { "log", store_ilog_path(log) };
		uint64_t value;

		memcpy(&value, (const char *)&s + offset, sizeof(value));
		metrics_sample_u64(f, "", &l, 1, value);
	}
}

static void metrics_ilogs(const struct admin_view *v, struct admin_buf *out)
{
	static const struct {
		const char *name, *help;
		size_t offset; /* of a uint64_t in struct store_ilog_stats */
	} families[] = {
#define ILOG_FIELD(f) offsetof(struct store_ilog_stats, f)
		{ "dsnfs_intent_log_records_total",
		  "Stable writes appended to the intent log",
		  ILOG_FIELD(records) },
		{ "dsnfs_intent_log_flushes_total",
		  "Flushes of the intent log (one covers a group of records)",
		  ILOG_FIELD(flushes) },
		{ "dsnfs_intent_log_checkpoints_total",
		  "Checkpoints: logged files synced, the log's head moved",
		  ILOG_FIELD(checkpoints) },
		{ "dsnfs_intent_log_full_waits_total",
		  "Stable writes that waited for ring space (a checkpoint)",
		  ILOG_FIELD(full_waits) },
		{ "dsnfs_intent_log_replayed_records_total",
		  "Records replayed onto the files when the log opened",
		  ILOG_FIELD(replayed) },
		{ "dsnfs_intent_log_inplace_writes_total",
		  "Stable writes synced in their file (large, or a sequential "
		  "stream's), not copied into the log",
		  ILOG_FIELD(inplace_writes) },
		{ "dsnfs_intent_log_direct_writes_total",
		  "In-place stable writes written O_DIRECT with RWF_DSYNC "
		  "(over blocks the file held; no fdatasync)",
		  ILOG_FIELD(direct_writes) },
		{ "dsnfs_intent_log_ring_writes_total",
		  "Of those, the ones a parked WRITE submitted through the "
		  "log's io_uring (no work thread)",
		  ILOG_FIELD(ring_writes) },
		{ "dsnfs_intent_log_ring_writevs_total",
		  "The writevs those went down as (a file's writes that meet "
		  "are merged)",
		  ILOG_FIELD(ring_writevs) },
		{ "dsnfs_intent_log_bytes_total",
		  "Bytes written to the intent log (records and pads)",
		  ILOG_FIELD(bytes) },
		{ "dsnfs_intent_log_synced_records_total",
		  "SYNCED records (a range synced in place) in the log",
		  ILOG_FIELD(synced_records) },
#undef ILOG_FIELD
	};

	for (size_t i = 0; i < ARRAY_SIZE(families); i++) {
		struct metrics_family f = { out, families[i].name, "counter",
					    families[i].help, false };

		metrics_ilog_sample(&f, v, families[i].offset);
	}
}

static void metrics_alarms(const struct admin_view *v, struct admin_buf *out)
{
	struct metrics_family prov = {
		out, "dsnfs_datastore_provisioned_bytes", "gauge",
		"Logical sizes of the datastore's VMDK flat extents, thin or "
		"thick, at the last scan",
		false
	};
	struct metrics_family thin = {
		out, "dsnfs_datastore_thin_provisioned_bytes", "gauge",
		"Logical sizes of the datastore's thin (sparse) VMDK flat "
		"extents, at the last scan",
		false
	};
	struct metrics_family pct[ALARM_COUNT] = {
		{ out, "dsnfs_datastore_usage_percent", "gauge",
		  "Used bytes over the quota, in percent", false },
		{ out, "dsnfs_datastore_overallocation_percent", "gauge",
		  "Provisioned bytes over the quota, in percent", false },
	};
	struct metrics_family alarm = {
		out, "dsnfs_datastore_alarm", "gauge",
		"Thin-provisioning alarm raised (1) or not (0)", false
	};
	struct metrics_family thr = {
		out, "dsnfs_datastore_alarm_threshold_percent", "gauge",
		"Threshold of a thin-provisioning alarm, in percent", false
	};
	const uint32_t thresholds[ALARM_COUNT] = {
		v->config.usage_alarm_percent,
		v->config.overallocation_alarm_percent,
	};

	for (size_t i = 0; i < v->nalarms; i++) {
		struct metrics_label l = { "volume", v->alarms[i].volume };

		if (v->alarms[i].scanned) {
			metrics_sample_u64(&prov, "", &l, 1,
					   v->alarms[i].scan.provisioned_bytes);
		}
	}
	for (size_t i = 0; i < v->nalarms; i++) {
		struct metrics_label l = { "volume", v->alarms[i].volume };

		if (v->alarms[i].scanned) {
			metrics_sample_u64(
				&thin, "", &l, 1,
				v->alarms[i].scan.thin_provisioned_bytes);
		}
	}
	for (int k = 0; k < ALARM_COUNT; k++) {
		for (size_t i = 0; i < v->nalarms; i++) {
			struct metrics_label l = { "volume",
						   v->alarms[i].volume };

			if (v->alarms[i].valid[k]) {
				metrics_sample_double(&pct[k], &l, 1,
						      v->alarms[i].percent[k]);
			}
		}
	}
	for (size_t i = 0; i < v->nalarms; i++) {
		for (int k = 0; k < ALARM_COUNT; k++) {
			struct metrics_label l[2] = {
				{ "volume", v->alarms[i].volume },
				{ "alarm",
				  alarm_kind_name((enum alarm_kind)k) },
			};

			metrics_sample(&alarm, "", l, 2,
				       v->alarms[i].raised[k] ? "1" : "0");
		}
	}
	for (int k = 0; k < ALARM_COUNT && v->nalarms; k++) {
		struct metrics_label l = {
			"alarm", alarm_kind_name((enum alarm_kind)k)
		};

		metrics_sample_u64(&thr, "", &l, 1, thresholds[k]);
	}
}

static void metrics_flows(const struct admin_view *v, struct admin_buf *out,
			  struct metrics_entity *ents, char (*ids)[24])
{
	const struct traffic_stats *t = &v->traffic;
	struct metrics_family queued = { out, "dsnfs_flow_queued_requests",
					 "gauge",
					 "Requests waiting in the flow's queue",
					 false };
	struct metrics_family cap = {
		out, "dsnfs_flow_cap_bytes_per_second", "gauge",
		"Effective throughput cap of the flow (scaled, contention "
		"included); 0: none",
		false
	};

	for (size_t i = 0; i < t->nflows; i++) {
		snprintf(ids[i], sizeof(ids[i]), "%" PRIu64, t->flows[i].id);
		ents[i] = (struct metrics_entity){
			.labels = { { "flow", ids[i] },
				    { "host", t->flows[i].host },
				    { "volume", t->flows[i].volume } },
			.nlabels = 3,
			.c = &t->flows[i].counters,
		};
	}
	metrics_counter_families(out, "flow", ents, t->nflows, true);
	for (size_t i = 0; i < t->nflows; i++) {
		metrics_sample_u64(&queued, "", ents[i].labels, 3,
				   t->flows[i].queued);
	}
	for (size_t i = 0; i < t->nflows; i++) {
		metrics_sample_u64(&cap, "", ents[i].labels, 3,
				   t->flows[i].cap_bytes_per_s);
	}
}

static void metrics_hosts(const struct admin_view *v, struct admin_buf *out,
			  struct metrics_entity *ents)
{
	const struct traffic_stats *t = &v->traffic;
	struct metrics_family flows = { out, "dsnfs_host_flows", "gauge",
					"Flows (connection x datastore) of "
					"the host",
					false };
	struct metrics_family busy = {
		out, "dsnfs_host_busy_flows", "gauge",
		"Flows of the host that asked for admission in the last "
		"100 ms",
		false
	};

	for (size_t i = 0; i < t->nhosts; i++) {
		ents[i] = (struct metrics_entity){
			.labels = { { "host", t->hosts[i].host } },
			.nlabels = 1,
			.c = &t->hosts[i].counters,
		};
	}
	metrics_counter_families(out, "host", ents, t->nhosts, true);
	for (size_t i = 0; i < t->nhosts; i++) {
		metrics_sample_u64(&flows, "", ents[i].labels, 1,
				   t->hosts[i].flows);
	}
	for (size_t i = 0; i < t->nhosts; i++) {
		metrics_sample_u64(&busy, "", ents[i].labels, 1,
				   t->hosts[i].busy_flows);
	}
}

/* How the TCP connections (flows) lie over the event loops. */
static void metrics_loops(const struct admin_view *v, struct admin_buf *out)
{
	struct metrics_family conns = {
		out, "dsnfs_loop_connections", "gauge",
		"TCP connections an event loop holds now (NFS, MOUNT and "
		"portmapper; each listener's are kept even over the loops)",
		false
	};

	for (unsigned i = 0; i < v->nloops; i++) {
		char id[16];
		struct metrics_label l = { "loop", id };

		snprintf(id, sizeof(id), "%u", i);
		metrics_sample_u64(&conns, "", &l, 1, v->loop_conns[i]);
	}
}

int admin__metrics_write(const struct admin_view *v, struct admin_buf *out)
{
	const struct traffic_stats *t = &v->traffic;
	size_t n = v->state->npools;
	struct metrics_entity *ents;
	char(*ids)[24];
	struct metrics_family scale = {
		out, "dsnfs_traffic_scale", "gauge",
		"Factor every traffic rate is multiplied by ([traffic] scale)",
		false
	};
	char value[48];

	if (v->nvolumes > n) {
		n = v->nvolumes;
	}
	if (t->nflows > n) {
		n = t->nflows;
	}
	if (t->nhosts > n) {
		n = t->nhosts;
	}
	ents = calloc(n ? n : 1, sizeof(*ents));
	ids = calloc(t->nflows ? t->nflows : 1, sizeof(*ids));
	if (!ents || !ids) {
		free(ents);
		free(ids);
		return -ENOMEM;
	}
	snprintf(value, sizeof(value), "%g", v->caps.scale);
	metrics_sample(&scale, "", NULL, 0, value);
	metrics_pools(v, out, ents);
	metrics_volumes(v, out, ents);
	metrics_ilogs(v, out);
	metrics_alarms(v, out);
	metrics_flows(v, out, ents, ids);
	metrics_hosts(v, out, ents);
	metrics_loops(v, out);
	free(ids);
	free(ents);
	return out->err;
}
