/* SPDX-License-Identifier: Apache-2.0 */
/*
 * traffic: admission of requests through a hierarchy of token buckets,
 * flow -> host -> volume -> pool (docs/architecture.md, "How a call flows";
 * docs/pools.md for the model and its calibration).
 *
 *   flow    one connection x one datastore (the export of the call's file
 *           handle: a connection shared by several datastores has one
 *           flow for each); one FIFO queue of waiting
 *           requests; an optional cap (bytes/s, ops/s) models the ceiling
 *           of one TCP flow, lowered by a contention term when several
 *           flows of one host, or of one volume, are busy;
 *   host    the client's IP address; an optional cap models its NIC;
 *   volume  a datastore: its QoS limit (pool.h), and an optional ops/s
 *           ceiling (lab profile);
 *   pool    the sum of its volumes' traffic stays within its throughput.
 *
 * A request starts only when every level admits it, and then pays at every
 * level; one that must wait pays nothing until it starts, so a throttled
 * flow never takes tokens that other flows could use.  Among flows waiting
 * for one shared level, the request that has been blocked longest goes
 * first: it holds the level's ticket, and younger requests may not take the
 * tokens it waits for (fair, and free of starvation and deadlock because
 * the age order is the same at every level).
 *
 * Threads: a flow belongs to one event loop thread, which alone calls
 * traffic_admit(), traffic_flow_next(), traffic_done() and
 * traffic_flow_cancel() on it.  Host, volume and pool buckets are shared:
 * each has its own mutex, taken in the order host -> volume -> pool for the
 * length of one admission (no allocation, no syscall inside).  Everything
 * else (flow creation, limits, caps, stats) may be called from any thread.
 *
 * Every rate is multiplied by caps.scale, so the published profile (MiB/s
 * as measured on Azure) runs scaled down on a small machine.
 */
#ifndef DSNFS_TRAFFIC_H
#define DSNFS_TRAFFIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "nfsd/pool/pool.h"
#include "nfsd/traffic/bucket.h"
#include "nfsd/traffic/req.h"

#define TRAFFIC_NAME_MAX 64
#define TRAFFIC_HOST_MAX 48 /* INET6_ADDRSTRLEN, rounded up */
/* The longest wait handed out: a waiting flow looks again at least this
 * often, so a raised limit reaches it within this time. */
#define TRAFFIC_WAIT_MAX_NS INT64_C(50000000)
/* A flow counts as busy (for the contention term, and in the stats) while
 * it asked for admission within this window. */
#define TRAFFIC_ACTIVE_WINDOW_NS INT64_C(100000000)

/* What the caller must do with a request, or with its flow's queue. */
enum traffic_verdict {
	TRAFFIC_START = 0, /* the request may start now; it has paid */
	TRAFFIC_WAIT, /* queued: call traffic_flow_next() after wait_ns */
	TRAFFIC_IDLE, /* the flow's queue is empty: nothing to wait for */
};

/* Published (unscaled) caps; 0 means none.  From the [traffic] section. */
struct traffic_caps {
	double scale; /* every rate x scale; 1: as published */
	uint64_t flow_bytes_per_s;
	uint64_t flow_ops_per_s;
	uint64_t host_bytes_per_s;
	uint64_t host_ops_per_s;
	uint64_t volume_ops_per_s;
	double host_contention; /* alpha in cap / (1 + alpha (busy - 1)) */
	/* The same for the busy flows of one volume; a flow's cap is
	 * lowered by the more crowded of its host and its volume. */
	double volume_contention;
	uint32_t burst_ms; /* bucket depth: this many ms of rate */
};

/* Counters of one flow, host, volume or pool.  ops and bytes count
 * requests as they start; done and latency_ns as they complete (latency
 * from arrival, queueing included); limited counts requests this level
 * made wait ("throughput limit reached"). */
struct traffic_counters {
	uint64_t ops[TRAFFIC_OP_COUNT];
	uint64_t bytes[TRAFFIC_OP_COUNT];
	uint64_t done[TRAFFIC_OP_COUNT];
	uint64_t latency_ns[TRAFFIC_OP_COUNT];
	uint64_t limited;
};

struct traffic_flow_stats {
	uint64_t id;
	char host[TRAFFIC_HOST_MAX];
	/* The client's port: flows of one (host, port) share a connection
	 * (datastores past ESXi's SunRPC.MaxConnPerIP); flows of one (host,
	 * volume) are its nConnect connections. */
	uint16_t port;
	char volume[TRAFFIC_NAME_MAX];
	size_t queued;
	uint64_t cap_bytes_per_s; /* effective (scaled, contention); 0: none */
	uint64_t cap_ops_per_s;
	struct traffic_counters counters;
};

struct traffic_host_stats {
	char host[TRAFFIC_HOST_MAX];
	size_t flows;
	size_t busy_flows;
	uint64_t cap_bytes_per_s; /* effective (scaled) */
	uint64_t cap_ops_per_s;
	struct traffic_counters counters;
};

struct traffic_volume_stats {
	char name[TRAFFIC_NAME_MAX];
	char pool[TRAFFIC_NAME_MAX]; /* "" when in no pool */
	uint64_t limit_bytes_per_s; /* effective (scaled); 0: none */
	uint64_t limit_ops_per_s;
	struct traffic_counters counters;
};

struct traffic_pool_stats {
	char name[TRAFFIC_NAME_MAX];
	uint64_t throughput_bytes_per_s; /* effective (scaled) */
	struct traffic_counters counters;
};

struct traffic_stats {
	struct traffic_flow_stats *flows; /* owned, like the arrays below */
	size_t nflows;
	struct traffic_host_stats *hosts;
	size_t nhosts;
	struct traffic_volume_stats *volumes;
	size_t nvolumes;
	struct traffic_pool_stats *pools;
	size_t npools;
};

struct traffic;
struct traffic_flow;

/* ---- setup and live changes (traffic.c) -------------------------------- */

/* The clock every now_ns of this module is read on: CLOCK_MONOTONIC, in
 * ns.  Callers pass it in so that tests can drive time. */
int64_t traffic_now_ns(void);

/* Scale 1, no caps, no contention, 10 ms bursts. */
void traffic_caps_default(struct traffic_caps *caps);

/* Returns 0 and *out (owned: traffic_free()), -EINVAL for bad caps
 * (scale <= 0, contention < 0, burst_ms 0), or -ENOMEM. */
int traffic_new(const struct traffic_caps *caps, struct traffic **out);

/* Frees @t (takes).  Every flow must have been freed first. */
void traffic_free(struct traffic *t);

void traffic_caps_get(struct traffic *t, struct traffic_caps *out);

/* Changes every cap and the scale, live: hosts, volumes and pools at
 * once, each flow at its next admission (at most TRAFFIC_WAIT_MAX_NS).
 * Returns 0 or -EINVAL (as traffic_new()). */
int traffic_caps_set(struct traffic *t, const struct traffic_caps *caps,
		     int64_t now_ns);

/*
 * Sets volume @volume's QoS limit (unscaled bytes/s; 0: none) and pool
 * (@pool NULL or "": none; the pool is created unlimited if unknown).
 * Creates the volume if unknown.  In effect for the next admission.
 * Returns 0, -EINVAL (bad name) or -ENOMEM.
 */
int traffic_volume_set(struct traffic *t, const char *volume, const char *pool,
		       uint64_t limit_bytes_per_s, int64_t now_ns);

/*
 * Keeps volume @volume (creating it, unlimited, if unknown) for the life of
 * @t, pooled or not, with or without flows, so its counters are
 * cumulative: the server keeps every datastore.  Returns 0, -EINVAL (bad
 * name) or -ENOMEM.
 */
int traffic_volume_keep(struct traffic *t, const char *volume, int64_t now_ns);

/* Sets pool @pool's throughput (unscaled bytes/s; 0: none), creating it if
 * unknown.  Returns 0, -EINVAL or -ENOMEM. */
int traffic_pool_set(struct traffic *t, const char *pool,
		     uint64_t throughput_bytes_per_s, int64_t now_ns);

/*
 * Makes every volume and pool follow @limits (borrowed; from any
 * pool_registry_*() operation): listed ones get their limit and pool,
 * volumes not listed lose their limit and pool, pools not listed are
 * dropped once no volume uses them.  Returns 0 or -ENOMEM (what was done
 * stays done; calling again finishes it).
 */
int traffic_limits_apply(struct traffic *t, const struct pool_limits *limits,
			 int64_t now_ns);

/* ---- flows (flow.c) ---------------------------------------------------- */

/*
 * A new flow from @peer (borrowed; its IP address names the host) to
 * datastore @volume (created unlimited if unknown).  Returns 0 and *out
 * (owned: traffic_flow_free()), -EAFNOSUPPORT, -EINVAL (bad name) or
 * -ENOMEM.
 */
int traffic_flow_new(struct traffic *t, const struct sockaddr *peer,
		     const char *volume, int64_t now_ns,
		     struct traffic_flow **out);

/* Frees @flow (takes).  Its queue must be empty (traffic_flow_cancel()). */
void traffic_flow_free(struct traffic_flow *flow);

/*
 * A request arrives on @flow (@req borrowed until it starts or is
 * cancelled; the caller has set req->bytes and req->op).  TRAFFIC_START:
 * it may start now.  TRAFFIC_WAIT: it is queued behind the flow's earlier
 * requests; call traffic_flow_next() in *wait_ns.  One timer per flow
 * suffices: *wait_ns is 0 when the request queued behind a waiting one,
 * whose timer is already armed (calling traffic_flow_next() at once is
 * harmless).  Never TRAFFIC_IDLE.
 */
enum traffic_verdict traffic_admit(struct traffic_flow *flow,
				   struct traffic_req *req, int64_t now_ns,
				   int64_t *wait_ns);

/*
 * The head of @flow's queue, if it may start now: TRAFFIC_START with it
 * dequeued in *req (call again for the next one); TRAFFIC_WAIT with
 * *wait_ns to wait; TRAFFIC_IDLE when the queue is empty.
 */
enum traffic_verdict traffic_flow_next(struct traffic_flow *flow,
				       int64_t now_ns, struct traffic_req **req,
				       int64_t *wait_ns);

/* A started request completed: its latency is counted for its flow, host
 * and volume.  @req is borrowed. */
void traffic_done(struct traffic_flow *flow, const struct traffic_req *req,
		  int64_t now_ns);

/* Empties @flow's queue (a closing connection).  Returns the requests in
 * arrival order, linked by ->next (borrowed back by the caller). */
struct traffic_req *traffic_flow_cancel(struct traffic_flow *flow);

/* Requests waiting in @flow's queue. */
size_t traffic_flow_queued(const struct traffic_flow *flow);

/* ---- stats (stats.c) --------------------------------------------------- */

/* A snapshot of every flow, host, volume and pool at @now_ns (a host's
 * busy flows are those that asked for admission within
 * TRAFFIC_ACTIVE_WINDOW_NS of it).  Returns 0 and fills @out (owned:
 * traffic_stats_fini()), or -ENOMEM. */
int traffic_stats_get(struct traffic *t, int64_t now_ns,
		      struct traffic_stats *out);
void traffic_stats_fini(struct traffic_stats *stats);

/* ---- config (traffic_config.c) ------------------------------------------- */

/*
 * One key of the [traffic] section; the signature of config.h's
 * config_section_fn, @arg being a struct traffic_caps (start it with
 * traffic_caps_default()).  Keys: scale, flow_mibps, flow_iops,
 * host_mibps, host_iops, volume_iops, host_contention,
 * volume_contention, burst_ms.
 * Returns 0, -ENOENT (not a traffic key) or -EINVAL with the reason.
 */
int traffic_config_section(void *arg, const char *section, const char *key,
			   const char *value, char *errbuf, size_t errlen);

#endif
