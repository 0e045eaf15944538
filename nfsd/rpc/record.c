// SPDX-License-Identifier: Apache-2.0
/*
 * record: reassembles RPC records from their fragments (RFC 5531 11,
 * "Record Marking Standard").  Every length comes from the peer, so the
 * buffer grows only up to max_bytes, checked before any allocation.
 */
#include "nfsd/rpc/record.h"
#include "nfsd/rpc/pool.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

void rpc_record_init(struct rpc_record *rec, size_t max_bytes)
{
	memset(rec, 0, sizeof(*rec));
	rec->max_bytes = max_bytes;
}

void rpc_record_set_pool(struct rpc_record *rec, struct rpc_pool *pool)
{
	rec->pool = pool;
}

void rpc_record_fini(struct rpc_record *rec)
{
	rpc_buf_unref(rec->buf);
	rec->buf = NULL;
	rec->cap = 0;
}

/* Makes room for @need bytes in total; doubles to avoid quadratic copies. */
static int rpc_record_reserve(struct rpc_record *rec, size_t need)
{
	size_t cap = rec->cap ? rec->cap : 4096;
	uint8_t *buf;

	if (need <= rec->cap) {
		return 0;
	}
	while (cap < need) {
		cap *= 2;
	}
	if (cap > rec->max_bytes) {
		cap = rec->max_bytes;
	}
	buf = rpc_buf_alloc(rec->pool, cap);
	if (!buf) {
		return -ENOMEM;
	}
	if (rec->len) {
		memcpy(buf, rec->buf, rec->len);
	}
	rpc_buf_unref(rec->buf);
	rec->buf = buf;
	rec->cap = rpc_buf_cap(buf);
	return 0;
}

/* Reads mark bytes; returns true once the whole mark is in. */
static bool rpc_record_take_mark(struct rpc_record *rec, const uint8_t *data,
				 size_t len, size_t *pos)
{
	while (rec->mark_have < 4 && *pos < len) {
		rec->mark[rec->mark_have++] = data[(*pos)++];
	}
	return rec->mark_have == 4;
}

/* Counts @n payload bytes now in place at buf + len; true when they end
 * the record, which is then *out. */
static bool rpc_record_advance(struct rpc_record *rec, size_t n,
			       const uint8_t **out, size_t *out_len)
{
	rec->len += n;
	rec->frag_left -= (uint32_t)n;
	if (rec->frag_left > 0) {
		return false;
	}
	rec->in_fragment = false;
	if (!rec->frag_last) {
		return false;
	}
	rec->delivered = true;
	*out = rec->buf;
	*out_len = rec->len;
	return true;
}

int rpc_record_feed(struct rpc_record *rec, const uint8_t *data, size_t len,
		    size_t *consumed, const uint8_t **out, size_t *out_len)
{
	size_t pos = 0;

	if (rec->delivered) {
		rec->len = 0;
		rec->delivered = false;
		/* Someone kept the last record: assemble the next elsewhere. */
		if (rec->buf && rpc_buf_shared(rec->buf)) {
			rpc_buf_unref(rec->buf);
			rec->buf = NULL;
			rec->cap = 0;
		}
	}
	for (;;) {
		if (!rec->in_fragment) {
			uint32_t mark;

			if (!rpc_record_take_mark(rec, data, len, &pos)) {
				break;
			}
			mark = (uint32_t)rec->mark[0] << 24 |
			       (uint32_t)rec->mark[1] << 16 |
			       (uint32_t)rec->mark[2] << 8 | rec->mark[3];
			rec->mark_have = 0;
			rec->frag_last = (mark & RPC_RECORD_LAST_FRAGMENT) != 0;
			rec->frag_left = mark & ~RPC_RECORD_LAST_FRAGMENT;
			if (rec->frag_left > rec->max_bytes - rec->len) {
				*consumed = pos;
				return -EMSGSIZE;
			}
			int err = rpc_record_reserve(rec,
						     rec->len + rec->frag_left);
			if (err) {
				*consumed = pos;
				return err;
			}
			rec->in_fragment = true;
		}
		size_t n = len - pos;
		if (n > rec->frag_left) {
			n = rec->frag_left;
		}
		if (n) {
			memcpy(rec->buf + rec->len, data + pos, n);
			pos += n;
		}
		if (rpc_record_advance(rec, n, out, out_len)) {
			*consumed = pos;
			return 1;
		}
		if (rec->in_fragment) {
			break;
		}
	}
	*consumed = pos;
	return 0;
}

uint8_t *rpc_record_direct(struct rpc_record *rec, size_t min_record,
			   size_t *room)
{
	/* in_fragment: a feed has run since the last record was delivered,
	 * and the mark reserved room for the whole fragment. */
	if (!rec->in_fragment || rec->frag_left == 0 ||
	    rec->len + rec->frag_left < min_record) {
		return NULL;
	}
	*room = rec->frag_left;
	return rec->buf + rec->len;
}

int rpc_record_direct_done(struct rpc_record *rec, size_t n,
			   const uint8_t **out, size_t *out_len)
{
	return rpc_record_advance(rec, n, out, out_len) ? 1 : 0;
}

int rpc_record_lent_next(const struct rpc_record *rec, const uint8_t *data,
			 size_t len, size_t cap, struct rpc_record_lent *out)
{
	uint32_t mark, frag;

	assert(!rpc_record_partial(rec));
	memset(out, 0, sizeof(*out));
	if (((uintptr_t)data & 3) != 0) {
		out->verdict = RPC_RECORD_LENT_FEED;
		return 0;
	}
	if (len < 4) {
		out->verdict = RPC_RECORD_LENT_MORE;
		return 0;
	}
	mark = (uint32_t)data[0] << 24 | (uint32_t)data[1] << 16 |
	       (uint32_t)data[2] << 8 | data[3];
	frag = mark & ~RPC_RECORD_LAST_FRAGMENT;
	if (frag > rec->max_bytes) {
		return -EMSGSIZE;
	}
	out->need = 4 + (size_t)frag;
	if (!(mark & RPC_RECORD_LAST_FRAGMENT) || out->need > cap) {
		out->verdict = RPC_RECORD_LENT_FEED;
		return 0;
	}
	if (out->need > len) {
		out->verdict = RPC_RECORD_LENT_MORE;
		return 0;
	}
	out->verdict = RPC_RECORD_LENT_WHOLE;
	out->rec = data + 4;
	out->rec_len = frag;
	return 0;
}

bool rpc_record_partial(const struct rpc_record *rec)
{
	return rec->mark_have > 0 || rec->in_fragment ||
	       (rec->len > 0 && !rec->delivered);
}

void rpc_record_trim(struct rpc_record *rec)
{
	if (rpc_record_partial(rec)) {
		return;
	}
	rpc_buf_unref(rec->buf);
	rec->buf = NULL;
	rec->cap = 0;
	rec->len = 0;
	rec->delivered = false;
}

void rpc_record_mark_encode(uint8_t mark[4], uint32_t len)
{
	uint32_t v = len | RPC_RECORD_LAST_FRAGMENT;

	mark[0] = (uint8_t)(v >> 24);
	mark[1] = (uint8_t)(v >> 16);
	mark[2] = (uint8_t)(v >> 8);
	mark[3] = (uint8_t)v;
}
