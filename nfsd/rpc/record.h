/* SPDX-License-Identifier: Apache-2.0 */
/*
 * record: ONC RPC record marking over a byte stream (RFC 5531 11).  Pure:
 * bytes in, whole records out; it knows nothing of sockets, so a test can
 * feed it one byte at a time.  A record is one or more fragments, each
 * behind a 4-byte mark (high bit = last fragment, low 31 bits = length).
 */
#ifndef DSNFS_RPC_RECORD_H
#define DSNFS_RPC_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RPC_RECORD_LAST_FRAGMENT 0x80000000u
#define RPC_RECORD_DEFAULT_MAX (1024u * 1024u + 4096u)

struct rpc_pool;

struct rpc_record {
	size_t max_bytes; /* a record larger than this is refused */
	struct rpc_pool *pool; /* where buf comes from; NULL: the heap */
	uint8_t *buf; /* the record being assembled: an rpc_buf (pool.h) */
	size_t len; /* bytes of it assembled so far */
	size_t cap; /* allocated size of buf */
	uint8_t mark[4]; /* the fragment mark being read */
	size_t mark_have; /* bytes of mark read so far (0..4) */
	uint32_t frag_left; /* payload bytes left in this fragment */
	bool frag_last; /* this fragment ends the record */
	bool in_fragment; /* past the mark, reading payload */
	bool delivered; /* last feed returned a record: reset next */
};

/* Prepares @rec to assemble records of at most @max_bytes. */
void rpc_record_init(struct rpc_record *rec, size_t max_bytes);

/* Makes @rec take its buffers from @pool (borrowed, must outlive @rec)
 * instead of the heap.  Call before the first feed. */
void rpc_record_set_pool(struct rpc_record *rec, struct rpc_pool *pool);

/* Drops @rec's reference on its buffer. */
void rpc_record_fini(struct rpc_record *rec);

/*
 * Consumes bytes from @data (at most @len) and stops at the end of the
 * first complete record.  *consumed says how many bytes were used.
 * Returns 1 with *out / *out_len set to the record (borrowed: valid until
 * the next call), 0 when all of @data was used and no record is complete
 * yet, -EMSGSIZE when the record would exceed max_bytes (the stream is then
 * unusable), -ENOMEM when the buffer cannot grow.
 */
int rpc_record_feed(struct rpc_record *rec, const uint8_t *data, size_t len,
		    size_t *consumed, const uint8_t **out, size_t *out_len);

/*
 * Direct input (libuv's alloc_cb: the reader picks the buffer).  When a
 * fragment's payload is being read and its record is at least
 * @min_record bytes long (what has arrived plus the rest of this
 * fragment), returns where the rest of the fragment goes in the record's
 * own buffer and sets *room to its length, so a caller may read those
 * bytes there rather than into its own buffer and feed them (one copy
 * fewer).  NULL otherwise (between fragments, or a small record).
 */
uint8_t *rpc_record_direct(struct rpc_record *rec, size_t min_record,
			   size_t *room);

/*
 * Says that @n bytes (at most *room) were put where rpc_record_direct
 * pointed.  Returns 1 with *out / *out_len set when they end the record
 * (as rpc_record_feed: borrowed until the next feed), 0 otherwise.
 */
int rpc_record_direct_done(struct rpc_record *rec, size_t n,
			   const uint8_t **out, size_t *out_len);

/*
 * The record returned by the last feed starts an rpc_buf (pool.h): a
 * caller that must keep it past the next feed takes a reference with
 * rpc_buf_ref(*out) and drops it with rpc_buf_unref() when done (on the
 * pool's thread).  The next feed then assembles into a new buffer rather
 * than overwrite a record still in use.
 */

/*
 * Between records (nothing of the next one has arrived), drops @rec's
 * reference on its buffer, so that a stream at rest holds none whatever
 * the size of its last record; the next feed takes a new one.  A record
 * handed out by the last feed stays valid for whoever took a reference on
 * it (above); without one it is invalid from this call.  With part of a
 * record assembled, does nothing.
 */
void rpc_record_trim(struct rpc_record *rec);

/*
 * Lent input (nfsd/net/lent.c): the reader reads into a large buffer it
 * was lent, and a whole record that lies in it goes to dispatch from
 * there, with no copy, as long as the buffer is kept (the call takes a
 * reference on it).  rpc_record_lent_next() says what the bytes at @data
 * start with, between records (nothing of a record in @rec: assert).
 */
enum rpc_record_lent_verdict {
	/* A whole one-fragment record lies in @data: ->rec, ->rec_len; it
	 * and its mark take ->need bytes. */
	RPC_RECORD_LENT_WHOLE,
	/* It has not all arrived: keep the bytes and read more after them.
	 * ->need is what it takes, mark included (<= @cap), or 0 while its
	 * mark is not all in.  A record that does not fit between @data
	 * and the end of its buffer must move to a buffer that has room. */
	RPC_RECORD_LENT_MORE,
	/* It cannot be handed out where it lies: in fragments, not at a
	 * 4-byte boundary (XDR reads words: a record of a length that is
	 * not a multiple of 4 moves the next ones off it), or larger than
	 * @cap.  Feed it to rpc_record_feed(), which copies. */
	RPC_RECORD_LENT_FEED,
};

struct rpc_record_lent {
	enum rpc_record_lent_verdict verdict;
	const uint8_t *rec; /* WHOLE: the record, inside @data */
	size_t rec_len;
	size_t need; /* bytes the record takes from @data, mark included */
};

/*
 * Looks at the @len bytes at @data, the start of a record in a lent
 * buffer of @cap bytes (not of rpc_record_feed's), and fills *out.
 * Consumes nothing: the caller moves past out->need bytes of a WHOLE
 * record.  Returns 0, or -EMSGSIZE when the record's first fragment
 * exceeds rec->max_bytes (the stream is then unusable).
 */
int rpc_record_lent_next(const struct rpc_record *rec, const uint8_t *data,
			 size_t len, size_t cap, struct rpc_record_lent *out);

/* True when part of a record has arrived and the rest has not. */
bool rpc_record_partial(const struct rpc_record *rec);

/* Writes the mark for a one-fragment record of @len bytes into mark[4]. */
void rpc_record_mark_encode(uint8_t mark[4], uint32_t len);

#endif
