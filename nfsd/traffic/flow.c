// SPDX-License-Identifier: Apache-2.0
/*
 * flow: one connection x one datastore, its FIFO queue, and the admission
 * of its requests through flow -> host -> volume -> pool.  Called by the
 * flow's loop thread only; the shared buckets are taken under their
 * mutexes, host -> volume -> pool, for one short decision each time.
 */
#include "nfsd/base/sockaddr.h"
#include "nfsd/traffic/traffic_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

/* The peer's port: with its address, which connection a flow is on
 * (nConnect groups, connections shared by datastores). */
static uint16_t flow_peer_port(const struct sockaddr *peer)
{
	if (peer->sa_family == AF_INET) {
		return ntohs(((const struct sockaddr_in *)peer)->sin_port);
	}
	if (peer->sa_family == AF_INET6) {
		return ntohs(((const struct sockaddr_in6 *)peer)->sin6_port);
	}
	return 0;
}

int traffic_flow_new(struct traffic *t, const struct sockaddr *peer,
		     const char *volume, int64_t now_ns,
		     struct traffic_flow **out)
{
	char addr[TRAFFIC_HOST_MAX];
	struct traffic_flow *f;
	int err;

	err = sockaddr_format_host(peer, addr, sizeof(addr));
	if (err) {
		return err;
	}
	if (!volume || !volume[0] ||
	    strnlen(volume, TRAFFIC_NAME_MAX) >= TRAFFIC_NAME_MAX) {
		return -EINVAL;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		return -ENOMEM;
	}
	f->t = t;
	f->port = flow_peer_port(peer);
	token_bucket_init(&f->bytes, 0, 0, now_ns);
	token_bucket_init(&f->ops, 0, 0, now_ns);
	pthread_mutex_lock(&t->lock);
	f->host = traffic__host_get(t, addr, now_ns);
	f->volume = f->host ? traffic__volume_get(t, volume, now_ns) : NULL;
	if (!f->volume) {
		if (f->host) {
			f->host->refs++;
			traffic__host_unref(t, f->host);
		}
		pthread_mutex_unlock(&t->lock);
		free(f);
		return -ENOMEM;
	}
	f->host->refs++;
	f->volume->refs++;
	f->id = t->next_flow_id++;
	f->next = t->flows;
	t->flows = f;
	pthread_mutex_lock(&f->host->lock);
	f->host_next = f->host->flows;
	f->host->flows = f;
	f->host->nflows++;
	/* Differs from any generation: the first admission applies caps. */
	f->applied_gen = f->host->caps_gen - 1;
	pthread_mutex_lock(&f->volume->lock);
	f->volume_next = f->volume->flows;
	f->volume->flows = f;
	pthread_mutex_unlock(&f->volume->lock);
	pthread_mutex_unlock(&f->host->lock);
	pthread_mutex_unlock(&t->lock);
	*out = f;
	return 0;
}

static bool flow_busy(const struct traffic_flow *f, int64_t now_ns)
{
	int64_t last =
		atomic_load_explicit(&f->last_demand_ns, memory_order_relaxed);

	return last && now_ns - last < TRAFFIC_ACTIVE_WINDOW_NS;
}

size_t traffic__host_busy_count(const struct traffic_host *h, int64_t now_ns)
{
	size_t busy = 0;

	for (const struct traffic_flow *f = h->flows; f; f = f->host_next) {
		busy += flow_busy(f, now_ns);
	}
	return busy;
}

size_t traffic__volume_busy_count(const struct traffic_volume *v,
				  int64_t now_ns)
{
	size_t busy = 0;

	for (const struct traffic_flow *f = v->flows; f; f = f->volume_next) {
		busy += flow_busy(f, now_ns);
	}
	return busy;
}

/* Stores a busy count (at least 1: the caller's flow) and its time. */
static void flow_recount(size_t *busy, int64_t *recount_ns, size_t counted,
			 int64_t now_ns)
{
	*busy = counted ? counted : 1;
	*recount_ns = now_ns;
}

/* Busy flows are counted at most every tenth of the window. */
static bool flow_recount_due(size_t busy, int64_t recount_ns, int64_t now_ns)
{
	return !busy || now_ns - recount_ns >= TRAFFIC_ACTIVE_WINDOW_NS / 10;
}

/* The contention divisor 1 + alpha (busy - 1) of one shared level. */
static double flow_contention(double alpha, size_t busy)
{
	return alpha > 0 && busy > 1 ? 1.0 + alpha * (double)(busy - 1) : 1.0;
}

/* cap / the larger divisor of host and volume: a flow is slowed by the
 * more crowded of the two it shares (docs/pools.md, the contention term). */
static uint64_t flow_contended(uint64_t cap, double divisor)
{
	double v;

	if (!cap || divisor <= 1.0) {
		return cap;
	}
	v = (double)cap / divisor;
	return v < 1 ? 1 : (uint64_t)v;
}

/* Brings the flow's own buckets to the host's caps, under host->lock and
 * its volume's lock. */
static void flow_caps_apply(struct traffic_flow *f, struct traffic_host *h,
			    const struct traffic_volume *v, int64_t now_ns)
{
	double dh = flow_contention(h->contention, h->busy);
	double dv = flow_contention(h->volume_contention, v->busy);
	double d = dh > dv ? dh : dv;
	uint64_t b = flow_contended(h->flow_bytes_per_s, d);
	uint64_t o = flow_contended(h->flow_ops_per_s, d);

	/* A flow's own bucket also banks the catch-up: when its client came
	 * back late (its queue ran dry while the client, not the server,
	 * was descheduled, or its connection held replies the client had
	 * not read), the flow gets back what the gap cost, up to
	 * TOKEN_BUCKET_CATCHUP_MS of its rate.  Shared levels keep the plain
	 * burst: one flow's gap must not let it take a shared level's
	 * tokens ahead of the others. */
	uint32_t depth_ms = h->burst_ms + TOKEN_BUCKET_CATCHUP_MS;

	(void)token_bucket_set_rate(&f->bytes, b, traffic__burst(depth_ms, b),
				    now_ns);
	(void)token_bucket_set_rate(&f->ops, o, traffic__burst(depth_ms, o),
				    now_ns);
	f->applied_gen = h->caps_gen;
	f->applied_busy = h->busy;
	f->applied_volume_busy = v->busy;
	atomic_store_explicit(&f->cap_bytes_per_s, b, memory_order_relaxed);
	atomic_store_explicit(&f->cap_ops_per_s, o, memory_order_relaxed);
}

/* One level of the hierarchy as one admission sees it. */
struct flow_level {
	struct token_bucket *bytes;
	struct token_bucket *ops; /* NULL for pools */
	struct traffic_ticket *ticket; /* NULL for the flow's own level */
	struct traffic_counters_live *counters;
};

/* A blocked request's place in the age order of tickets. */
struct flow_key {
	int64_t since_ns;
	uint64_t flow_id;
};

static bool flow_key_older(int64_t since_a, uint64_t flow_a,
			   const struct flow_key *b)
{
	return since_a < b->since_ns ||
	       (since_a == b->since_ns && flow_a < b->flow_id);
}

/* True when an older request than @key holds @t. */
static bool flow_ticket_blocks(const struct traffic_ticket *t,
			       const struct flow_key *key, int64_t now_ns)
{
	return t->flow_id && t->flow_id != key->flow_id &&
	       now_ns < t->expires_ns &&
	       flow_key_older(t->since_ns, t->flow_id, key);
}

/* @key takes @t unless an older request holds it. */
static void flow_ticket_claim(struct traffic_ticket *t,
			      const struct flow_key *key, int64_t now_ns)
{
	if (t->flow_id && t->flow_id != key->flow_id &&
	    now_ns < t->expires_ns &&
	    !flow_key_older(key->since_ns, key->flow_id,
			    &(struct flow_key){ t->since_ns, t->flow_id })) {
		return;
	}
	t->flow_id = key->flow_id;
	t->since_ns = key->since_ns;
	t->expires_ns = now_ns + 2 * TRAFFIC_WAIT_MAX_NS;
}

static void flow_ticket_drop(struct traffic_ticket *t, uint64_t flow_id)
{
	if (t->flow_id == flow_id) {
		t->flow_id = 0;
	}
}

/* How long @lv makes a request of @n bytes wait.  A level whose tokens an
 * older request waits for refuses, for about the time its own request
 * would need: by then the older one has started.  The loss is bounded:
 * once the level is full, the ticket no longer holds anyone back. */
static uint64_t flow_level_wait(const struct flow_level *lv, uint64_t n,
				const struct flow_key *key, int64_t now_ns)
{
	uint64_t w = token_bucket_time_until(lv->bytes, n, now_ns);
	uint64_t e;

	if (lv->ops) {
		uint64_t wo = token_bucket_time_until(lv->ops, 1, now_ns);

		w = wo > w ? wo : w;
	}
	if (w || !lv->ticket || !flow_ticket_blocks(lv->ticket, key, now_ns)) {
		return w;
	}
	/* A holder slow to come back (its loop is busy) may keep the tokens
	 * only until the level is full: after that they would be lost. */
	if (token_bucket_full(lv->bytes, now_ns) &&
	    (!lv->ops || token_bucket_full(lv->ops, now_ns))) {
		return 0;
	}
	w = token_bucket_time_to_earn(lv->bytes, n);
	if (lv->ops) {
		e = token_bucket_time_to_earn(lv->ops, 1);
		w = e > w ? e : w;
	}
	return w;
}

static void flow_level_take(const struct flow_level *lv,
			    const struct traffic_req *req, uint64_t flow_id,
			    int64_t now_ns)
{
	token_bucket_take(lv->bytes, req->bytes, now_ns);
	if (lv->ops) {
		token_bucket_take(lv->ops, 1, now_ns);
	}
	if (lv->ticket) {
		flow_ticket_drop(lv->ticket, flow_id);
	}
	atomic_fetch_add_explicit(&lv->counters->ops[req->op], 1,
				  memory_order_relaxed);
	atomic_fetch_add_explicit(&lv->counters->bytes[req->op], req->bytes,
				  memory_order_relaxed);
}

static void flow_count_limited(struct traffic_counters_live *c)
{
	atomic_fetch_add_explicit(&c->limited, 1, memory_order_relaxed);
}

/* Decides with the levels' locks held: admitted (paid everywhere, returns
 * 0) or the wait.  The first refusal of a request counts it as limited at
 * its flow and at the level that made it wait longest, which it then asks
 * the ticket of. */
static uint64_t flow_decide(struct traffic_flow *f, struct traffic_req *req,
			    const struct flow_level *lv, size_t nlv,
			    int64_t now_ns)
{
	struct flow_key key = {
		.since_ns = req->limited ? req->blocked_ns : now_ns,
		.flow_id = f->id,
	};
	const struct flow_level *blamed = NULL;
	uint64_t wait = 0;

	for (size_t i = 0; i < nlv; i++) {
		uint64_t w = flow_level_wait(&lv[i], req->bytes, &key, now_ns);

		if (w > wait) {
			wait = w;
			blamed = &lv[i];
		}
	}
	if (!wait) {
		for (size_t i = 0; i < nlv; i++) {
			flow_level_take(&lv[i], req, f->id, now_ns);
		}
		return 0;
	}
	if (!req->limited) {
		req->limited = true;
		req->blocked_ns = now_ns;
		flow_count_limited(&f->counters);
		if (blamed->counters != &f->counters) {
			flow_count_limited(blamed->counters);
		}
	}
	if (blamed->ticket) {
		flow_ticket_claim(blamed->ticket, &key, now_ns);
	}
	return wait;
}

/* Tries @req at every level, host -> volume -> pool locks held together
 * for one decision.  Returns 0 (admitted) or the wait in ns. */
static uint64_t flow_try(struct traffic_flow *f, struct traffic_req *req,
			 int64_t now_ns)
{
	struct traffic_host *h = f->host;
	struct traffic_volume *v = f->volume;
	struct flow_level lv[4];
	struct traffic_pool *p;
	size_t nlv = 0;
	uint64_t wait;

	pthread_mutex_lock(&h->lock);
	atomic_store_explicit(&f->last_demand_ns, now_ns, memory_order_relaxed);
	if (h->contention > 0 &&
	    flow_recount_due(h->busy, h->recount_ns, now_ns)) {
		flow_recount(&h->busy, &h->recount_ns,
			     traffic__host_busy_count(h, now_ns), now_ns);
	}
	pthread_mutex_lock(&v->lock);
	if (h->volume_contention > 0 &&
	    flow_recount_due(v->busy, v->recount_ns, now_ns)) {
		flow_recount(&v->busy, &v->recount_ns,
			     traffic__volume_busy_count(v, now_ns), now_ns);
	}
	if (f->applied_gen != h->caps_gen || f->applied_busy != h->busy ||
	    f->applied_volume_busy != v->busy) {
		flow_caps_apply(f, h, v, now_ns);
	}
	lv[nlv++] =
		(struct flow_level){ &f->bytes, &f->ops, NULL, &f->counters };
	lv[nlv++] = (struct flow_level){ &h->bytes, &h->ops, &h->ticket,
					 &h->counters };
	lv[nlv++] = (struct flow_level){ &v->bytes, &v->ops, &v->ticket,
					 &v->counters };
	p = v->pool;
	if (p) {
		pthread_mutex_lock(&p->lock);
		lv[nlv++] = (struct flow_level){ &p->bytes, NULL, &p->ticket,
						 &p->counters };
	}
	wait = flow_decide(f, req, lv, nlv, now_ns);
	if (p) {
		pthread_mutex_unlock(&p->lock);
	}
	pthread_mutex_unlock(&v->lock);
	pthread_mutex_unlock(&h->lock);
	return wait;
}

/* A flow going away leaves no ticket for others to wait out. */
static void flow_tickets_release(struct traffic_flow *f)
{
	struct traffic_host *h = f->host;
	struct traffic_volume *v = f->volume;

	pthread_mutex_lock(&h->lock);
	flow_ticket_drop(&h->ticket, f->id);
	pthread_mutex_lock(&v->lock);
	flow_ticket_drop(&v->ticket, f->id);
	if (v->pool) {
		pthread_mutex_lock(&v->pool->lock);
		flow_ticket_drop(&v->pool->ticket, f->id);
		pthread_mutex_unlock(&v->pool->lock);
	}
	pthread_mutex_unlock(&v->lock);
	pthread_mutex_unlock(&h->lock);
}

void traffic_flow_free(struct traffic_flow *flow)
{
	struct traffic *t;
	struct traffic_flow **pp;
	struct traffic_host *h;

	if (!flow) {
		return;
	}
	t = flow->t;
	h = flow->host;
	flow_tickets_release(flow);
	pthread_mutex_lock(&t->lock);
	for (pp = &t->flows; *pp != flow; pp = &(*pp)->next)
		;
	*pp = flow->next;
	pthread_mutex_lock(&h->lock);
	for (pp = &h->flows; *pp != flow; pp = &(*pp)->host_next)
		;
	*pp = flow->host_next;
	h->nflows--;
	pthread_mutex_lock(&flow->volume->lock);
	for (pp = &flow->volume->flows; *pp != flow; pp = &(*pp)->volume_next)
		;
	*pp = flow->volume_next;
	pthread_mutex_unlock(&flow->volume->lock);
	pthread_mutex_unlock(&h->lock);
	traffic__volume_unref(t, flow->volume);
	traffic__host_unref(t, h);
	pthread_mutex_unlock(&t->lock);
	free(flow);
}

static int64_t flow_wait_clamp(uint64_t wait)
{
	return wait > (uint64_t)TRAFFIC_WAIT_MAX_NS ? TRAFFIC_WAIT_MAX_NS
						    : (int64_t)wait;
}

static void flow_enqueue(struct traffic_flow *f, struct traffic_req *req)
{
	req->next = NULL;
	if (f->tail) {
		f->tail->next = req;
	} else {
		f->head = req;
	}
	f->tail = req;
	atomic_fetch_add_explicit(&f->queued, 1, memory_order_relaxed);
}

enum traffic_verdict traffic_admit(struct traffic_flow *flow,
				   struct traffic_req *req, int64_t now_ns,
				   int64_t *wait_ns)
{
	uint64_t wait;

	if ((unsigned)req->op >= TRAFFIC_OP_COUNT) {
		req->op = TRAFFIC_OP_OTHER;
	}
	req->next = NULL;
	req->arrival_ns = now_ns;
	req->blocked_ns = 0;
	req->limited = false;
	if (flow->head) {
		/* FIFO: behind the waiting head, whose timer is armed; look
		 * again now in case that timer is late. */
		flow_enqueue(flow, req);
		*wait_ns = 0;
		return TRAFFIC_WAIT;
	}
	wait = flow_try(flow, req, now_ns);
	if (wait == 0) {
		*wait_ns = 0;
		return TRAFFIC_START;
	}
	flow_enqueue(flow, req);
	*wait_ns = flow_wait_clamp(wait);
	return TRAFFIC_WAIT;
}

enum traffic_verdict traffic_flow_next(struct traffic_flow *flow,
				       int64_t now_ns, struct traffic_req **req,
				       int64_t *wait_ns)
{
	struct traffic_req *head = flow->head;
	uint64_t wait;

	*req = NULL;
	*wait_ns = 0;
	if (!head) {
		return TRAFFIC_IDLE;
	}
	wait = flow_try(flow, head, now_ns);
	if (wait) {
		*wait_ns = flow_wait_clamp(wait);
		return TRAFFIC_WAIT;
	}
	flow->head = head->next;
	if (!flow->head) {
		flow->tail = NULL;
	}
	head->next = NULL;
	atomic_fetch_sub_explicit(&flow->queued, 1, memory_order_relaxed);
	*req = head;
	return TRAFFIC_START;
}

static void flow_count_done(struct traffic_counters_live *c,
			    const struct traffic_req *req, uint64_t latency)
{
	atomic_fetch_add_explicit(&c->done[req->op], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->latency_ns[req->op], latency,
				  memory_order_relaxed);
}

void traffic_done(struct traffic_flow *flow, const struct traffic_req *req,
		  int64_t now_ns)
{
	uint64_t latency = now_ns > req->arrival_ns
				   ? (uint64_t)(now_ns - req->arrival_ns)
				   : 0;

	flow_count_done(&flow->counters, req, latency);
	flow_count_done(&flow->host->counters, req, latency);
	flow_count_done(&flow->volume->counters, req, latency);
}

struct traffic_req *traffic_flow_cancel(struct traffic_flow *flow)
{
	struct traffic_req *head = flow->head;

	flow_tickets_release(flow);
	flow->head = NULL;
	flow->tail = NULL;
	atomic_store_explicit(&flow->queued, 0, memory_order_relaxed);
	return head;
}

size_t traffic_flow_queued(const struct traffic_flow *flow)
{
	return atomic_load_explicit(&flow->queued, memory_order_relaxed);
}
