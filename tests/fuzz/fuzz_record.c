// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_record: the bytes a TCP peer controls, end to end up to dispatch.
 * Input: one byte N, then N chunk sizes (each byte + 1, used in turn), then
 * the stream.  The stream is fed to rpc_record_feed() in chunks of those
 * sizes (all at once when N is 0), as reads from a socket would cut it,
 * and every record is decoded with rpc_call_decode() and rpc_auth_parse().
 * A chunk whose size byte is odd is read in place where the record offers
 * a place (rpc_record_direct, as conn.c reads large records), else fed.
 * Then the same stream, cut the same way, goes through the lent path as
 * conn.c takes it (nfsd/net/lent.c): each chunk is read into a small lent
 * buffer after the record carried there, whole records are handed out in
 * place (rpc_record_lent_next), the others fed; a carried record that
 * does not fit moves to the buffer's start; a chunk whose size byte has
 * bit 2 set finds no buffer free (the carry is fed, the chunk read the
 * old way).  Both passes must hand out the same records, in the same
 * order, and fail alike.
 * Seeds (tests/fuzz/corpus/record/) are valid calls with N = 0 or a few
 * small chunks.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nfsd/rpc/auth.h"
#include "nfsd/rpc/msg.h"
#include "nfsd/rpc/record.h"

#define FUZZ_RECORD_MAX (64 * 1024)
#define FUZZ_DIRECT_MIN 64 /* records from this size are read in place */
#define FUZZ_LENT_BYTES 512 /* small: records cross buffer ends often */
#define FUZZ_LENT_MIN_ROOM 64
#define FUZZ_RECORDS_MAX 4096

/* The records a pass handed out: their lengths and hashes, in order. */
struct fuzz_seen {
	size_t n;
	size_t len[FUZZ_RECORDS_MAX];
	uint32_t hash[FUZZ_RECORDS_MAX];
	int err; /* the pass ended on this error, or 0 */
};

static uint32_t fuzz_hash(const uint8_t *p, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++) {
		h = (h ^ p[i]) * 16777619u;
	}
	return h;
}

static void fuzz_seen_add(struct fuzz_seen *seen, const uint8_t *rec,
			  size_t len)
{
	if (seen->n < FUZZ_RECORDS_MAX) {
		seen->len[seen->n] = len;
		seen->hash[seen->n] = fuzz_hash(rec, len);
	}
	seen->n++;
}

/* Decodes one record as dispatch would, checking what it may borrow. */
static void fuzz_record_decode(const uint8_t *rec, size_t len)
{
	struct rpc_call_header call;
	struct rpc_cred cred;
	uint32_t xid, type;

	if (rpc_msg_peek(rec, len, &xid, &type) != 0 && len >= 8) {
		__builtin_trap();
	}
	if (rpc_call_decode(rec, len, &call) != 0) {
		return;
	}
	if (call.args_offset > len || call.cred_len > RPC_AUTH_BODY_MAX ||
	    call.verf_len > RPC_AUTH_BODY_MAX) {
		__builtin_trap();
	}
	if (rpc_auth_parse(&call, &cred) == RPC_AUTH_OK &&
	    (cred.ngroups > RPC_AUTH_SYS_MAX_GROUPS ||
	     cred.machine[sizeof(cred.machine) - 1] != '\0')) {
		__builtin_trap();
	}
}

/* The lent buffer of the second pass: [pos, fill) is the record carried. */
struct fuzz_lent {
	_Alignas(16) uint8_t buf[FUZZ_LENT_BYTES];
	bool have; /* lent (else reads go the old way) */
	size_t pos, fill;
};

/* Feeds @len bytes at @p into @rec up to the end of one record; hands it
 * out.  Returns 1 (a record), 0 (all taken), or the error. */
static int fuzz_lent_feed(struct rpc_record *rec, const uint8_t *p, size_t len,
			  size_t *used, struct fuzz_seen *seen)
{
	const uint8_t *out = NULL;
	size_t out_len = 0;
	int rc = rpc_record_feed(rec, p, len, used, &out, &out_len);

	if (*used > len || (rc == 0 && *used != len)) {
		__builtin_trap();
	}
	if (rc == 1) {
		fuzz_seen_add(seen, out, out_len);
	}
	return rc;
}

/* conn_consume_lent(): 0 or the error. */
static int fuzz_lent_consume(struct rpc_record *rec, struct fuzz_lent *m,
			     struct fuzz_seen *seen)
{
	while (m->pos < m->fill) {
		const uint8_t *p = m->buf + m->pos;
		size_t len = m->fill - m->pos, used = 0;
		struct rpc_record_lent next;
		int rc;

		if (!rpc_record_partial(rec)) {
			rc = rpc_record_lent_next(rec, p, len, FUZZ_LENT_BYTES,
						  &next);
			if (rc) {
				return rc;
			}
			if (next.verdict == RPC_RECORD_LENT_MORE) {
				if (next.need > FUZZ_LENT_BYTES) {
					__builtin_trap();
				}
				return 0;
			}
			if (next.verdict == RPC_RECORD_LENT_WHOLE) {
				if (next.rec != p + 4 ||
				    next.need != next.rec_len + 4 ||
				    next.need > len) {
					__builtin_trap();
				}
				fuzz_seen_add(seen, next.rec, next.rec_len);
				m->pos += next.need;
				continue;
			}
		}
		rc = fuzz_lent_feed(rec, p, len, &used, seen);
		if (rc < 0) {
			return rc;
		}
		m->pos += used;
	}
	return 0;
}

/* conn_lent_prepare(): 0 or the error. */
static int fuzz_lent_prepare(struct rpc_record *rec, struct fuzz_lent *m,
			     bool none_free, struct fuzz_seen *seen)
{
	size_t carry = m->have ? m->fill - m->pos : 0, need = 4, used = 0;
	struct rpc_record_lent next;

	if (m->have && carry == 0) {
		if (FUZZ_LENT_BYTES - m->fill >= FUZZ_LENT_MIN_ROOM) {
			return 0;
		}
		m->have = false;
	}
	if (carry) {
		if (rpc_record_lent_next(rec, m->buf + m->pos, carry,
					 FUZZ_LENT_BYTES, &next) != 0 ||
		    next.verdict != RPC_RECORD_LENT_MORE) {
			__builtin_trap();
		}
		need = next.need ? next.need : 4;
		if (need <= FUZZ_LENT_BYTES - m->pos) {
			return 0;
		}
	}
	if (none_free) {
		int rc = carry ? fuzz_lent_feed(rec, m->buf + m->pos, carry,
						&used, seen)
			       : 0;

		if (rc == 1) {
			__builtin_trap(); /* the carry cannot be whole */
		}
		m->have = false;
		return rc;
	}
	memmove(m->buf, m->buf + m->pos, carry);
	m->pos = 0;
	m->fill = carry;
	m->have = true;
	return 0;
}

/* The second pass: @stream cut by @sizes, through the lent path. */
static void fuzz_lent_pass(const uint8_t *sizes, size_t nsizes,
			   const uint8_t *stream, size_t len,
			   struct fuzz_seen *seen)
{
	static struct fuzz_lent m;
	struct rpc_record rec;
	size_t pos = 0, turn = 0;
	int rc = 0;

	memset(&m, 0, sizeof(m));
	rpc_record_init(&rec, FUZZ_RECORD_MAX);
	while (pos < len && rc == 0) {
		uint8_t size_byte = nsizes ? sizes[turn++ % nsizes] : 0;
		size_t chunk = nsizes ? (size_t)size_byte + 1 : len - pos;
		bool none_free = (size_byte & 4) != 0;

		if (chunk > len - pos) {
			chunk = len - pos;
		}
		while (chunk > 0 && rc == 0) {
			size_t n;

			rc = fuzz_lent_prepare(&rec, &m, none_free, seen);
			if (rc) {
				break;
			}
			if (!m.have) {
				size_t used = 0;

				rc = fuzz_lent_feed(&rec, stream + pos, chunk,
						    &used, seen);
				pos += used;
				chunk -= used;
				rc = rc < 0 ? rc : 0;
				continue;
			}
			n = FUZZ_LENT_BYTES - m.fill;
			n = n < chunk ? n : chunk;
			memcpy(m.buf + m.fill, stream + pos, n);
			m.fill += n;
			pos += n;
			chunk -= n;
			rc = fuzz_lent_consume(&rec, &m, seen);
		}
	}
	seen->err = rc;
	rpc_record_fini(&rec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fuzz_seen feed_seen, lent_seen;
	struct rpc_record rec;
	const uint8_t *sizes, *stream;
	size_t nsizes, len, pos = 0, turn = 0;

	if (size < 1) {
		return 0;
	}
	nsizes = data[0];
	if (nsizes > size - 1) {
		nsizes = size - 1;
	}
	sizes = data + 1;
	stream = sizes + nsizes;
	len = size - 1 - nsizes;

	memset(&feed_seen, 0, sizeof(feed_seen));
	memset(&lent_seen, 0, sizeof(lent_seen));
	rpc_record_init(&rec, FUZZ_RECORD_MAX);
	while (pos < len) {
		uint8_t size_byte = nsizes ? sizes[turn++ % nsizes] : 0;
		size_t chunk = nsizes ? (size_t)size_byte + 1 : len - pos;
		bool direct = (size_byte & 1) != 0;

		if (chunk > len - pos) {
			chunk = len - pos;
		}
		/* A chunk may hold several records, as one read may. */
		while (chunk > 0) {
			const uint8_t *out = NULL;
			size_t used = 0, out_len = 0, room = 0;
			uint8_t *at =
				direct ? rpc_record_direct(
						 &rec, FUZZ_DIRECT_MIN, &room)
				       : NULL;
			int rc;

			if (at) {
				if (at != rec.buf + rec.len ||
				    rec.len + room > rec.cap) {
					__builtin_trap();
				}
				used = chunk < room ? chunk : room;
				memcpy(at, stream + pos, used);
				rc = rpc_record_direct_done(&rec, used, &out,
							    &out_len);
			} else {
				rc = rpc_record_feed(&rec, stream + pos, chunk,
						     &used, &out, &out_len);
			}
			if (used > chunk) {
				__builtin_trap();
			}
			pos += used;
			chunk -= used;
			if (rc < 0) {
				feed_seen.err = rc;
				goto done;
			}
			if (rc == 0 && at) {
				continue;
			}
			if (rc == 0) {
				if (chunk != 0) {
					__builtin_trap();
				}
				break;
			}
			if (out_len > FUZZ_RECORD_MAX) {
				__builtin_trap();
			}
			fuzz_record_decode(out, out_len);
			fuzz_seen_add(&feed_seen, out, out_len);
		}
	}
done:
	rpc_record_fini(&rec);
	fuzz_lent_pass(sizes, nsizes, stream, len, &lent_seen);
	if (lent_seen.n != feed_seen.n ||
	    (lent_seen.err != 0) != (feed_seen.err != 0)) {
		__builtin_trap();
	}
	for (size_t i = 0; i < feed_seen.n && i < FUZZ_RECORDS_MAX; i++) {
		if (lent_seen.len[i] != feed_seen.len[i] ||
		    lent_seen.hash[i] != feed_seen.hash[i]) {
			__builtin_trap();
		}
	}
	return 0;
}
