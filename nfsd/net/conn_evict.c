// SPDX-License-Identifier: Apache-2.0
/*
 * conn_evict: room for a new connection at max_conns (conn_limit.c says
 * when): the least recently active idle connection of a loop is closed,
 * of the busiest host when it has one idle here.
 */
#include "nfsd/net/net_int.h"

#include <string.h>

#include "nfsd/base/log.h"
#include "nfsd/base/sockaddr.h"

/* Idle: nothing in flight and no output queued.  A draining
 * conn is finishing its calls, not idle. */
static bool conn_is_idle(const struct conn *c)
{
	return (c->state == CONN_OPEN || c->state == CONN_PAUSED) &&
	       c->inflight == 0 && !c->out_head;
}

/* The least recently active idle conn of @w, of @addr only when @addr is
 * not NULL. */
static struct conn *conn_evict_pick(struct worker *w, const uint8_t *addr)
{
	struct conn *best = NULL;

	for (struct conn *c = w->conns; c; c = c->next) {
		uint8_t key[16];

		if (!conn_is_idle(c)) {
			continue;
		}
		if (best && c->last_activity >= best->last_activity) {
			continue;
		}
		if (addr) {
			sockaddr_key((const struct sockaddr *)&c->peer, key);
			if (memcmp(key, addr, sizeof(key)) != 0) {
				continue;
			}
		}
		best = c;
	}
	return best;
}

bool net__conn_evict(struct worker *w, const uint8_t addr[16],
		     uint32_t host_conns, const char *for_peer)
{
	const struct net_limits *lim = &w->net->limits;
	ev_tstamp now = ev_now(w->loop);
	struct conn *c = conn_evict_pick(w, addr);

	/* All of the busiest host's conns here are busy: make room with
	 * another idle one rather than stay past the limit. */
	if (!c) {
		c = conn_evict_pick(w, NULL);
	}
	if (!c) {
		return false;
	}
	w->evicted++;
	/* One line a second per loop: a flood of new hosts must not flood
	 * the log; the count says how many went meanwhile. */
	if (now - w->last_evict_log >= 1.0) {
		log_warn("net: %s: idle for %.1f s; closed to admit %s "
			 "(max_conns %u reached, the busiest host holds %u; "
			 "%llu closed so far on loop %u)",
			 c->peer_str, now - c->last_activity, for_peer,
			 lim->max_conns, host_conns,
			 (unsigned long long)w->evicted, w->id);
		w->last_evict_log = now;
	}
	net__conn_close(c);
	return true;
}
