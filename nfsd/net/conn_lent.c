// SPDX-License-Identifier: Apache-2.0
/*
 * conn_lent: a connection's side of the loop's lent read buffers (lent.c):
 * taking one with room for what comes, carrying a record that started in
 * one into the next, how much to read into it, and giving it back.
 */
#include "nfsd/net/net_int.h"

#include <string.h>

#include "nfsd/rpc/pool.h"

/* @c stops reading into its lent buffer; unread bytes there, the start
 * of a record, are dropped. */
void net__conn_lent_give(struct conn *c)
{
	if (!c->lent) {
		return;
	}
	net__lent_give(c->lent, c->lent_fill);
	c->lent = NULL;
	c->lent_pos = c->lent_fill = 0;
}

/* Bytes of a record still arriving in @c's lent buffer. */
size_t net__conn_lent_carry(const struct conn *c)
{
	return c->lent ? c->lent_fill - c->lent_pos : 0;
}

/* The room a conn asks of a lent buffer: enough for its last record. */
static size_t conn_lent_min_room(const struct conn *c)
{
	size_t room = c->lent_hint > NET_LENT_MIN_ROOM ? c->lent_hint
						       : NET_LENT_MIN_ROOM;

	return room < NET_LENT_BYTES ? room : NET_LENT_BYTES;
}

/* The bytes the record carried in @c's lent buffer takes there: its
 * mark's figure, or just the mark while that is not all in. */
static size_t conn_lent_carry_need(const struct conn *c)
{
	struct rpc_record_lent next;

	/* conn_consume_lent() left it: MORE, with a valid mark. */
	(void)rpc_record_lent_next(&c->record, c->lent->buf + c->lent_pos,
				   net__conn_lent_carry(c), NET_LENT_BYTES,
				   &next);
	return next.need ? next.need : 4;
}

/*
 * Before a read: makes c->lent a buffer with room for what comes, or
 * leaves it NULL when none can be lent (the read goes to the loop's
 * buffer and records are copied, as before lent buffers).  A carried
 * record that does not fit where it started moves to the new buffer (a
 * copy of what of it arrived), or into the record when no buffer is
 * free.  0, or -ENOMEM.
 */
int net__conn_lent_prepare(struct conn *c)
{
	size_t carry = net__conn_lent_carry(c), need = 0, used = 0;
	struct net_lent *fresh;

	if (c->lent && carry == 0) {
		if (NET_LENT_BYTES - c->lent_fill >= conn_lent_min_room(c)) {
			return 0;
		}
		net__conn_lent_give(c);
	}
	if (carry) {
		need = conn_lent_carry_need(c);
		if (need <= NET_LENT_BYTES - c->lent_pos) {
			return 0;
		}
	}
	fresh = net__lent_take(c->worker, carry ? need : conn_lent_min_room(c));
	if (!fresh && carry) {
		/* The carry cannot complete in the bytes given: the feed
		 * takes all of it and hands out nothing. */
		const uint8_t *rec;
		size_t rec_len;
		int rc = rpc_record_feed(&c->record, c->lent->buf + c->lent_pos,
					 carry, &used, &rec, &rec_len);

		net__conn_lent_give(c);
		return rc < 0 ? rc : 0;
	}
	if (!fresh) {
		return 0;
	}
	if (carry) {
		memcpy(fresh->buf + fresh->used, c->lent->buf + c->lent_pos,
		       carry);
		net__conn_lent_give(c);
	}
	c->lent = fresh;
	c->lent_pos = fresh->used;
	c->lent_fill = fresh->used + carry;
	return 0;
}

/*
 * How much to read into the lent buffer: its room, cut to end at a
 * multiple of the last record's size from the carried record's start,
 * so that a stream of like records (a client's WRITEs) ends where the
 * buffer ends rather than one record straddling two buffers.
 */
size_t net__conn_lent_want(const struct conn *c)
{
	size_t room = NET_LENT_BYTES - c->lent_fill;
	size_t base = net__conn_lent_carry(c), hint = c->lent_hint, whole;

	/* After a large record, only the next one's head (as without lent
	 * buffers): a large one is then read in place, one read each. */
	if (c->input_large) {
		size_t want = NET_READ_HEAD;

		/* A small record carried: all of it. */
		if (base && conn_lent_carry_need(c) - base > want) {
			want = conn_lent_carry_need(c) - base;
		}
		return room < want ? room : want;
	}
	if (hint < NET_LENT_HINT_MIN) {
		return room;
	}
	whole = (room + base) / hint * hint;
	if (whole <= base) {
		return room;
	}
	if (base && whole - base < conn_lent_carry_need(c) - base) {
		return room; /* the carried record is not like the last */
	}
	return whole - base;
}
