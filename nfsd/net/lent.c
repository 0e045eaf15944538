// SPDX-License-Identifier: Apache-2.0
/*
 * lent: a loop's large read buffers, lent to its connections in turn, so
 * that a record read into one goes to dispatch from there (no copy into a
 * record buffer of its own; docs/architecture.md, "A READ through the
 * files").  A buffer is an rpc_buf (rpc/pool.h) of NET_LENT_BYTES: the
 * set holds one reference, and each call whose arguments point into it
 * (a WRITE's data) holds one more until it is freed, after its reply.
 * One connection at a time reads into a buffer, past the bytes handed out
 * before (->used): bytes a call holds are never read over.  A buffer that
 * no call holds and no connection reads into starts again at its first
 * byte.
 *
 * Buffers are made when first needed, NET_LENT_COUNT at most per loop,
 * and go back to the heap when the loop goes quiet (net__lent_trim):
 * a loop whose buffers are all held lends none, and its connections read
 * the way they did before (a copy into each record's buffer).
 */
#include "nfsd/net/net_int.h"
#include "nfsd/rpc/pool.h"

/* Where a reader of @l starts: past the bytes handed out, at a boundary
 * XDR's word reads are happy with. */
static size_t lent_start(const struct net_lent *l)
{
	if (!rpc_buf_shared(l->buf)) {
		return 0;
	}
	return (l->used + NET_LENT_ALIGN - 1) & ~(size_t)(NET_LENT_ALIGN - 1);
}

struct net_lent *net__lent_take(struct worker *w, size_t min_room)
{
	struct net_lent *tail = NULL, *empty = NULL, *l;

	for (unsigned i = 0; i < NET_LENT_COUNT; i++) {
		l = &w->lent[i];
		if (!l->buf) {
			if (!empty) {
				empty = l;
			}
			continue;
		}
		if (l->reading) {
			continue;
		}
		/* One no call holds: all of it, the best there is. */
		if (!rpc_buf_shared(l->buf)) {
			l->used = 0;
			l->reading = true;
			return l;
		}
		if (!tail && lent_start(l) + min_room <= NET_LENT_BYTES) {
			tail = l;
		}
	}
	/* The rest of one that calls hold costs no memory; a new one does. */
	l = tail;
	if (!l && empty) {
		empty->buf = rpc_buf_alloc(NULL, NET_LENT_BYTES);
		if (empty->buf) {
			empty->used = 0;
			l = empty;
		}
	}
	if (!l) {
		w->lent_misses++;
		return NULL;
	}
	l->used = lent_start(l);
	l->reading = true;
	return l;
}

void net__lent_give(struct net_lent *l, size_t end)
{
	l->used = end;
	l->reading = false;
}

size_t net__lent_trim(struct worker *w)
{
	size_t freed = 0;

	for (unsigned i = 0; i < NET_LENT_COUNT; i++) {
		struct net_lent *l = &w->lent[i];

		if (!l->buf || l->reading || rpc_buf_shared(l->buf)) {
			continue;
		}
		rpc_buf_unref(l->buf);
		l->buf = NULL;
		l->used = 0;
		freed += NET_LENT_BYTES;
	}
	return freed;
}

void net__lent_fini(struct worker *w)
{
	for (unsigned i = 0; i < NET_LENT_COUNT; i++) {
		rpc_buf_unref(w->lent[i].buf);
		w->lent[i].buf = NULL;
	}
}
