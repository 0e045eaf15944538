/* SPDX-License-Identifier: Apache-2.0 */
/*
 * traffic_int: the objects behind traffic.h, shared by traffic.c (setup,
 * live changes), flow.c (admission) and stats.c.
 *
 * Lifetimes: struct traffic keeps lists of hosts, volumes, pools and flows
 * under t->lock.  A host lives while flows use it; a volume while flows use
 * it or it is configured; a pool while volumes use it or it is configured.
 * refs counts those users and changes only under t->lock.
 *
 * Lock order: t->lock -> host->lock -> volume->lock -> pool->lock.  The
 * admission path takes only the last three.  volume->pool changes under
 * t->lock and volume->lock, so an admission holding volume->lock can use
 * the pool safely.
 */
#ifndef DSNFS_TRAFFIC_INT_H
#define DSNFS_TRAFFIC_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "nfsd/traffic/traffic.h"

struct traffic_counters_live {
	_Atomic uint64_t ops[TRAFFIC_OP_COUNT];
	_Atomic uint64_t bytes[TRAFFIC_OP_COUNT];
	_Atomic uint64_t done[TRAFFIC_OP_COUNT];
	_Atomic uint64_t latency_ns[TRAFFIC_OP_COUNT];
	_Atomic uint64_t limited;
};

/* The oldest request blocked at one shared level (traffic.h).  Ordered by
 * (since_ns, flow_id); flow_id 0 means none.  It lapses at expires_ns if
 * its holder stops asking (the holder asks again at least every
 * TRAFFIC_WAIT_MAX_NS). */
struct traffic_ticket {
	uint64_t flow_id;
	int64_t since_ns;
	int64_t expires_ns;
};

struct traffic_pool {
	struct traffic_pool *next; /* t->pools */
	unsigned refs;
	bool configured;
	char name[TRAFFIC_NAME_MAX];
	uint64_t throughput_bytes_per_s; /* unscaled */
	pthread_mutex_t lock;
	struct token_bucket bytes;
	struct traffic_ticket ticket;
	struct traffic_counters_live counters;
};

struct traffic_volume {
	struct traffic_volume *next; /* t->volumes */
	unsigned refs;
	bool configured;
	bool kept; /* a datastore: its counters live as long as the server */
	char name[TRAFFIC_NAME_MAX];
	uint64_t limit_bytes_per_s; /* unscaled */
	pthread_mutex_t lock;
	struct traffic_pool *pool; /* may be NULL */
	struct token_bucket bytes;
	struct token_bucket ops;
	struct traffic_ticket ticket;
	/* Its flows, for the busy count of the volume contention term;
	 * the list changes under t->lock and this lock. */
	struct traffic_flow *flows;
	size_t busy;
	int64_t recount_ns;
	struct traffic_counters_live counters;
};

struct traffic_host {
	struct traffic_host *next; /* t->hosts */
	unsigned refs;
	char addr[TRAFFIC_HOST_MAX];
	pthread_mutex_t lock;
	struct token_bucket bytes;
	struct token_bucket ops;
	struct traffic_ticket ticket;
	/* A copy of the flow caps (scaled) and contention, and a generation
	 * bumped when they change, so flows re-read them under this lock. */
	uint64_t flow_bytes_per_s;
	uint64_t flow_ops_per_s;
	double contention;
	double volume_contention;
	uint32_t burst_ms;
	uint64_t caps_gen;
	struct traffic_flow *flows; /* its flows, for the busy count */
	size_t nflows;
	size_t busy;
	int64_t recount_ns;
	struct traffic_counters_live counters;
};

struct traffic_flow {
	struct traffic *t;
	struct traffic_flow *next; /* t->flows */
	struct traffic_flow *host_next; /* host->flows */
	struct traffic_flow *volume_next; /* volume->flows */
	uint64_t id;
	uint16_t port; /* the peer's: which connection of the host */
	struct traffic_host *host;
	struct traffic_volume *volume;
	/* Loop-owned. */
	struct traffic_req *head, *tail;
	struct token_bucket bytes;
	struct token_bucket ops;
	uint64_t applied_gen;
	size_t applied_busy, applied_volume_busy;
	/* Written under host->lock; read under the lock of its host or of
	 * its volume (the busy counts), hence atomic. */
	_Atomic int64_t last_demand_ns;
	/* Read by stats. */
	_Atomic size_t queued;
	_Atomic uint64_t cap_bytes_per_s;
	_Atomic uint64_t cap_ops_per_s;
	struct traffic_counters_live counters;
};

struct traffic {
	pthread_mutex_t lock;
	struct traffic_caps caps;
	uint64_t caps_gen;
	uint64_t next_flow_id;
	struct traffic_host *hosts;
	struct traffic_volume *volumes;
	struct traffic_pool *pools;
	struct traffic_flow *flows;
};

/* @published x scale, at least 1 when @published is not 0. */
uint64_t traffic__scale(const struct traffic_caps *caps, uint64_t published);

/* The burst for @rate_per_s: burst_ms of it, at least 1 token. */
uint64_t traffic__burst(uint32_t burst_ms, uint64_t rate_per_s);

/* Finds or creates, under t->lock.  NULL: no memory.  A new object has
 * refs 0: the caller takes its reference. */
struct traffic_host *traffic__host_get(struct traffic *t, const char *addr,
				       int64_t now_ns);
struct traffic_volume *traffic__volume_get(struct traffic *t, const char *name,
					   int64_t now_ns);

/* Drops one reference, under t->lock; frees the object at zero. */
void traffic__host_unref(struct traffic *t, struct traffic_host *h);
void traffic__volume_unref(struct traffic *t, struct traffic_volume *v);

/* The flows of @h that asked for admission within TRAFFIC_ACTIVE_WINDOW_NS
 * of @now_ns, under h->lock. */
size_t traffic__host_busy_count(const struct traffic_host *h, int64_t now_ns);

/* The same for the flows of @v, under v->lock. */
size_t traffic__volume_busy_count(const struct traffic_volume *v,
				  int64_t now_ns);

/* Adds a live counter set into a snapshot. */
void traffic__counters_read(const struct traffic_counters_live *live,
			    struct traffic_counters *out);

#endif
