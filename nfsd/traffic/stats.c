// SPDX-License-Identifier: Apache-2.0
/*
 * stats: a snapshot of every flow, host, volume and pool, for /metrics and
 * the admin API.  Counters are relaxed atomics: each value is exact, the
 * set is not one instant (a request may be counted at its flow and not yet
 * at its volume).
 */
#include "nfsd/traffic/traffic_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void traffic__counters_read(const struct traffic_counters_live *live,
			    struct traffic_counters *out)
{
	for (int i = 0; i < TRAFFIC_OP_COUNT; i++) {
		out->ops[i] = atomic_load_explicit(&live->ops[i],
						   memory_order_relaxed);
		out->bytes[i] = atomic_load_explicit(&live->bytes[i],
						     memory_order_relaxed);
		out->done[i] = atomic_load_explicit(&live->done[i],
						    memory_order_relaxed);
		out->latency_ns[i] = atomic_load_explicit(&live->latency_ns[i],
							  memory_order_relaxed);
	}
	out->limited =
		atomic_load_explicit(&live->limited, memory_order_relaxed);
}

static size_t stats_count_flows(const struct traffic *t)
{
	size_t n = 0;

	for (const struct traffic_flow *f = t->flows; f; f = f->next) {
		n++;
	}
	return n;
}

static void stats_flows(struct traffic *t, struct traffic_stats *out)
{
	for (struct traffic_flow *f = t->flows; f; f = f->next) {
		struct traffic_flow_stats *s = &out->flows[out->nflows++];

		s->id = f->id;
		s->port = f->port;
		snprintf(s->host, sizeof(s->host), "%s", f->host->addr);
		snprintf(s->volume, sizeof(s->volume), "%s", f->volume->name);
		s->queued =
			atomic_load_explicit(&f->queued, memory_order_relaxed);
		s->cap_bytes_per_s = atomic_load_explicit(&f->cap_bytes_per_s,
							  memory_order_relaxed);
		s->cap_ops_per_s = atomic_load_explicit(&f->cap_ops_per_s,
							memory_order_relaxed);
		traffic__counters_read(&f->counters, &s->counters);
	}
}

static void stats_hosts(struct traffic *t, int64_t now_ns,
			struct traffic_stats *out)
{
	for (struct traffic_host *h = t->hosts; h; h = h->next) {
		struct traffic_host_stats *s = &out->hosts[out->nhosts++];

		pthread_mutex_lock(&h->lock);
		snprintf(s->host, sizeof(s->host), "%s", h->addr);
		s->flows = h->nflows;
		s->busy_flows = traffic__host_busy_count(h, now_ns);
		s->cap_bytes_per_s = h->bytes.rate_per_s;
		s->cap_ops_per_s = h->ops.rate_per_s;
		pthread_mutex_unlock(&h->lock);
		traffic__counters_read(&h->counters, &s->counters);
	}
}

static void stats_volumes(struct traffic *t, struct traffic_stats *out)
{
	for (struct traffic_volume *v = t->volumes; v; v = v->next) {
		struct traffic_volume_stats *s = &out->volumes[out->nvolumes++];

		pthread_mutex_lock(&v->lock);
		snprintf(s->name, sizeof(s->name), "%s", v->name);
		snprintf(s->pool, sizeof(s->pool), "%s",
			 v->pool ? v->pool->name : "");
		s->limit_bytes_per_s = v->bytes.rate_per_s;
		s->limit_ops_per_s = v->ops.rate_per_s;
		pthread_mutex_unlock(&v->lock);
		traffic__counters_read(&v->counters, &s->counters);
	}
}

static void stats_pools(struct traffic *t, struct traffic_stats *out)
{
	for (struct traffic_pool *p = t->pools; p; p = p->next) {
		struct traffic_pool_stats *s = &out->pools[out->npools++];

		pthread_mutex_lock(&p->lock);
		snprintf(s->name, sizeof(s->name), "%s", p->name);
		s->throughput_bytes_per_s = p->bytes.rate_per_s;
		pthread_mutex_unlock(&p->lock);
		traffic__counters_read(&p->counters, &s->counters);
	}
}

int traffic_stats_get(struct traffic *t, int64_t now_ns,
		      struct traffic_stats *out)
{
	size_t nh = 0, nv = 0, np = 0, nf;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&t->lock);
	nf = stats_count_flows(t);
	for (struct traffic_host *h = t->hosts; h; h = h->next) {
		nh++;
	}
	for (struct traffic_volume *v = t->volumes; v; v = v->next) {
		nv++;
	}
	for (struct traffic_pool *p = t->pools; p; p = p->next) {
		np++;
	}
	out->flows = calloc(nf ? nf : 1, sizeof(*out->flows));
	out->hosts = calloc(nh ? nh : 1, sizeof(*out->hosts));
	out->volumes = calloc(nv ? nv : 1, sizeof(*out->volumes));
	out->pools = calloc(np ? np : 1, sizeof(*out->pools));
	if (!out->flows || !out->hosts || !out->volumes || !out->pools) {
		pthread_mutex_unlock(&t->lock);
		traffic_stats_fini(out);
		return -ENOMEM;
	}
	stats_flows(t, out);
	stats_hosts(t, now_ns, out);
	stats_volumes(t, out);
	stats_pools(t, out);
	pthread_mutex_unlock(&t->lock);
	return 0;
}

void traffic_stats_fini(struct traffic_stats *stats)
{
	free(stats->flows);
	free(stats->hosts);
	free(stats->volumes);
	free(stats->pools);
	memset(stats, 0, sizeof(*stats));
}
