/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_traffic_sim: the discrete-event simulation test_traffic.c and
 * test_traffic_pool.c drive the traffic model with: an injected clock,
 * flows that are clients with endless demand whose requests complete at
 * once, woken when traffic says to look again; and the caps they start
 * from.  Include once.
 */
#ifndef DSNFS_TEST_TRAFFIC_SIM_H
#define DSNFS_TEST_TRAFFIC_SIM_H

#include "nfsd/traffic/traffic.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ini.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define MS INT64_C(1000000)
#define S INT64_C(1000000000)
#define MIB UINT64_C(1048576)
#define SIM_MAX_FLOWS 16

struct sim_flow {
	struct traffic_flow *flow;
	struct traffic_req req;
	bool queued;
	int64_t next_ns;
	uint64_t seq;
	uint64_t bytes, ops; /* started inside the window */
};

struct sim {
	struct traffic *t;
	struct sim_flow flows[SIM_MAX_FLOWS];
	size_t n;
	uint64_t seq;
	int64_t now;
	int64_t window_ns; /* count from here on */
};

static inline struct sim *sim_new(const struct traffic_caps *caps)
{
	struct sim *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	assert_int_equal(traffic_new(caps, &s->t), 0);
	return s;
}

static inline void sim_free(struct sim *s)
{
	for (size_t i = 0; i < s->n; i++) {
		traffic_flow_cancel(s->flows[i].flow);
		traffic_flow_free(s->flows[i].flow);
	}
	traffic_free(s->t);
	free(s);
}

static inline struct sim_flow *sim_add(struct sim *s, const char *ip,
				       const char *volume, uint64_t size,
				       enum traffic_op op)
{
	struct sim_flow *f = &s->flows[s->n++];
	struct sockaddr_in sin;

	assert_true(s->n <= SIM_MAX_FLOWS);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	assert_int_equal(inet_pton(AF_INET, ip, &sin.sin_addr), 1);
	assert_int_equal(traffic_flow_new(s->t, (struct sockaddr *)&sin, volume,
					  s->now, &f->flow),
			 0);
	f->req.bytes = size;
	f->req.op = op;
	f->next_ns = s->now;
	return f;
}

static inline void sim_started(struct sim *s, struct sim_flow *f)
{
	if (s->now >= s->window_ns) {
		f->bytes += f->req.bytes;
		f->ops++;
	}
	traffic_done(f->flow, &f->req, s->now);
}

/* One wake-up of a client: start what may start, then sleep. */
static inline void sim_step(struct sim *s, struct sim_flow *f)
{
	struct traffic_req *r;
	int64_t wait = 0;

	for (int guard = 0; guard < 100000; guard++) {
		if (!f->queued) {
			if (traffic_admit(f->flow, &f->req, s->now, &wait) ==
			    TRAFFIC_START) {
				sim_started(s, f);
				continue;
			}
			f->queued = true;
		} else if (traffic_flow_next(f->flow, s->now, &r, &wait) ==
			   TRAFFIC_START) {
			assert_ptr_equal(r, &f->req);
			f->queued = false;
			sim_started(s, f);
			continue;
		}
		assert_true(wait >= 0 && wait <= TRAFFIC_WAIT_MAX_NS);
		f->next_ns = s->now + (wait ? wait : 1);
		f->seq = ++s->seq;
		return;
	}
	fail_msg("a flow started 100000 requests at one instant");
}

/* Runs every flow until @until; ties go to the flow that waited longest. */
static inline void sim_run(struct sim *s, int64_t until)
{
	for (;;) {
		struct sim_flow *next = NULL;

		for (size_t i = 0; i < s->n; i++) {
			struct sim_flow *f = &s->flows[i];

			if (!next || f->next_ns < next->next_ns ||
			    (f->next_ns == next->next_ns &&
			     f->seq < next->seq)) {
				next = f;
			}
		}
		if (!next || next->next_ns >= until) {
			break;
		}
		s->now = next->next_ns;
		sim_step(s, next);
	}
	s->now = until;
}

/* Starts counting afresh at the current time. */
static inline void sim_window(struct sim *s)
{
	s->window_ns = s->now;
	for (size_t i = 0; i < s->n; i++) {
		s->flows[i].bytes = s->flows[i].ops = 0;
	}
}

static inline uint64_t sim_bytes(const struct sim *s)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < s->n; i++) {
		sum += s->flows[i].bytes;
	}
	return sum;
}

static inline uint64_t sim_ops(const struct sim *s)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < s->n; i++) {
		sum += s->flows[i].ops;
	}
	return sum;
}

static inline void assert_within(double got, double want, double tolerance)
{
	double ratio = got / want;

	if (ratio < 1 - tolerance || ratio > 1 + tolerance) {
		fail_msg("got %.1f, want %.1f +- %.0f%%", got, want,
			 tolerance * 100);
	}
}

static inline void caps_plain(struct traffic_caps *caps)
{
	traffic_caps_default(caps);
}

#endif
