// SPDX-License-Identifier: Apache-2.0
/*
 * trim: a worker's memory after a burst.  A loop that went quiet after a
 * close (a burst of abusive clients ends by closing) gives back what its
 * free lists hold past the low-water mark, then malloc_trim() returns the
 * heap's free pages to the system, in every arena (glibc keeps a worker
 * thread's freed blocks in its arena otherwise, and RSS stays at the
 * burst's peak).
 */
#include <malloc.h>

#include "nfsd/base/base.h"
#include "nfsd/base/log.h"
#include "nfsd/net/net_int.h"
#include "nfsd/rpc/pool.h"

static void worker_trim_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct worker *w = container_of(t, struct worker, trim_timer);
	size_t freed = rpc_pool_trim(w->pool, RPC_POOL_LOW_WATER_BYTES) +
		       net__lent_trim(w);

	(void)revents;
	ev_timer_stop(loop, t);
#ifdef __GLIBC__
	malloc_trim(0);
#endif
	log_debug("net: loop %u quiet: %zu bytes of its pool back to the heap, "
		  "heap trimmed",
		  w->id, freed);
}

void net__worker_trim_arm(struct worker *w)
{
	uint32_t ms = w->net->limits.memory_trim_ms;

	if (ms == 0) {
		return;
	}
	w->trim_timer.repeat = ms / 1000.0;
	ev_timer_again(w->loop, &w->trim_timer);
}

void net__worker_trim_init(struct worker *w)
{
	ev_init(&w->trim_timer, worker_trim_cb);
}

void net__worker_trim_stop(struct worker *w)
{
	ev_timer_stop(w->loop, &w->trim_timer);
}
