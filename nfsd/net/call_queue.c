// SPDX-License-Identifier: Apache-2.0
/*
 * call_queue: admission of the calls of one TCP connection through the
 * traffic model (traffic.h; docs/architecture.md, "How a call flows",
 * step 3).  A connection has one flow per datastore its calls were for (ESXi:
 * exactly one), made on the first such call.  A call the flow may not
 * start yet waits in the flow's FIFO queue, and one ev_timer per flow, on
 * the connection's loop, runs the queue when its head may start: the loop
 * never sleeps, and a waiting flow holds back no other flow of the loop.
 *
 * Lifetimes: a flow lives as long as its connection's memory, because a
 * started call (which holds a reference on the connection) reports its
 * completion to its flow.  Closing the connection stops the timers and
 * cancels what waits; the last reference frees the flows.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nfsd/base/base.h"
#include "nfsd/base/log.h"
#include "nfsd/net/net_int.h"
#include "nfsd/traffic/traffic.h"

struct net_flow {
	struct conn *conn;
	struct traffic_flow *tf;
	ev_timer timer; /* armed while the queue waits */
	char volume[TRAFFIC_NAME_MAX];
	struct net_flow *next; /* conn->flows */
};

static void flow_timer_arm(struct net_flow *f, int64_t wait_ns)
{
	struct ev_loop *loop = f->conn->worker->loop;

	ev_timer_stop(loop, &f->timer);
	ev_timer_set(&f->timer, (double)wait_ns / 1e9, 0.);
	ev_timer_start(loop, &f->timer);
}

/* The head of the queue may be due: run every call that may start now,
 * then wait again for the next. */
static void flow_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct net_flow *f = container_of(w, struct net_flow, timer);
	struct conn *c = f->conn;
	struct traffic_req *tr;
	enum traffic_verdict v;
	int64_t wait_ns;

	(void)loop;
	(void)revents;
	/* A call may close the conn; its last reference would free f. */
	net__conn_ref(c);
	while ((v = traffic_flow_next(f->tf, traffic_now_ns(), &tr,
				      &wait_ns)) == TRAFFIC_START) {
		rpc_call_run(container_of(tr, struct rpc_call, tr));
	}
	if (v == TRAFFIC_WAIT && c->state != CONN_CLOSED) {
		flow_timer_arm(f, wait_ns);
	}
	net__conn_unref(c);
}

/* The flow of @c for @volume, made on first use.  NULL: no memory, or a
 * peer traffic cannot name (the call then runs unaccounted). */
static struct net_flow *flow_get(struct net *net, struct conn *c,
				 const char *volume)
{
	struct net_flow *f;
	int err;

	for (f = c->flows; f; f = f->next) {
		if (!strcmp(f->volume, volume)) {
			return f;
		}
	}
	if (strlen(volume) >= sizeof(f->volume)) {
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		return NULL;
	}
	err = traffic_flow_new(net->traffic, (const struct sockaddr *)&c->peer,
			       volume, traffic_now_ns(), &f->tf);
	if (err) {
		log_warn("net: %s: no flow for datastore %s: %s", c->peer_str,
			 volume, strerror(-err));
		free(f);
		return NULL;
	}
	f->conn = c;
	snprintf(f->volume, sizeof(f->volume), "%s", volume);
	ev_init(&f->timer, flow_timer_cb);
	f->next = c->flows;
	c->flows = f;
	return f;
}

static enum rpc_admit_verdict flow_admit(void *arg, struct rpc_call *call)
{
	struct net *net = arg;
	struct conn *c = call->transport;
	const struct request *req = &call->req;
	struct net_flow *f;
	int64_t wait_ns;

	/* The TCP dispatcher's transports are conns; anything else (a
	 * dispatcher shared with UDP by mistake) runs unaccounted. */
	if (call->tops != &net__conn_tops || !req->export_name) {
		return RPC_ADMIT_RUN;
	}
	f = flow_get(net, c, req->export_name);
	if (!f) {
		return RPC_ADMIT_RUN;
	}
	call->admit_ctx = f;
	call->tr.bytes = req->cost.bytes;
	call->tr.op = req->cost.op;
	if (traffic_admit(f->tf, &call->tr, traffic_now_ns(), &wait_ns) ==
	    TRAFFIC_START) {
		return RPC_ADMIT_RUN;
	}
	/* Queued behind a waiting head: its timer is armed already. */
	if (!ev_is_active(&f->timer)) {
		flow_timer_arm(f, wait_ns);
	}
	return RPC_ADMIT_QUEUED;
}

static void flow_done(void *arg, struct rpc_call *call)
{
	struct net_flow *f = call->admit_ctx;

	(void)arg;
	traffic_done(f->tf, &call->tr, traffic_now_ns());
}

const struct rpc_admission *net_admission_init(struct net *net,
					       struct traffic *t)
{
	net->traffic = t;
	net->admission.admit = flow_admit;
	net->admission.done = flow_done;
	net->admission.arg = net;
	return &net->admission;
}

void net__flows_cancel(struct conn *c)
{
	for (struct net_flow *f = c->flows; f; f = f->next) {
		struct traffic_req *tr;

		ev_timer_stop(c->worker->loop, &f->timer);
		tr = traffic_flow_cancel(f->tf);
		while (tr) {
			struct traffic_req *next = tr->next;

			rpc_call_cancel(container_of(tr, struct rpc_call, tr));
			tr = next;
		}
	}
}

void net__flows_free(struct conn *c)
{
	while (c->flows) {
		struct net_flow *f = c->flows;

		c->flows = f->next;
		traffic_flow_free(f->tf);
		free(f);
	}
}
