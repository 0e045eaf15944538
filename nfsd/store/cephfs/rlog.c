// SPDX-License-Identifier: Apache-2.0
/*
 * rlog: the RADOS intent log's header and replay walk (rlog.h), bytes in
 * and bytes out, so that tests and fuzzers run them without a cluster.
 * Owner block (little endian): magic "DSRLOWN1", version u32, clean u32,
 * gateway[64], addr[2][256], xxh3 of the bytes before it.
 */
#include "nfsd/store/cephfs/rlog.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <xxhash.h>

#define STORE_RLOG_OWNER_MAGIC 0x314e574f4c525344ull /* "DSRLOWN1" */
#define STORE_RLOG_OWNER_VERSION 1u
/* magic 8, version 4, clean 4, gateway, addresses, then the seal */
#define STORE_RLOG_OWNER_SEAL                                                  \
	(16u + STORE_RLOG_NAME_MAX + 2u * STORE_RLOG_ADDR_MAX)

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++) {
		p[i] = (uint8_t)(v >> (8 * i));
	}
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--) {
		v = (v << 8) | p[i];
	}
	return v;
}

void store__rlog_owner_encode(uint8_t *out, const struct store_rlog_owner *o)
{
	memset(out, 0, STORE_RLOG_OWNER_BYTES);
	put64(out, STORE_RLOG_OWNER_MAGIC);
	put64(out + 8, (uint64_t)STORE_RLOG_OWNER_VERSION |
			       ((uint64_t)(o->clean ? 1 : 0) << 32));
	/* strnlen: a name is cut, never left without its NUL. */
	memcpy(out + 16, o->gateway,
	       strnlen(o->gateway, STORE_RLOG_NAME_MAX - 1));
	for (int i = 0; i < 2; i++) {
		memcpy(out + 16 + STORE_RLOG_NAME_MAX + i * STORE_RLOG_ADDR_MAX,
		       o->addr[i],
		       strnlen(o->addr[i], STORE_RLOG_ADDR_MAX - 1));
	}
	put64(out + STORE_RLOG_OWNER_SEAL,
	      XXH3_64bits(out, STORE_RLOG_OWNER_SEAL));
}

int store__rlog_owner_decode(const uint8_t *buf, struct store_rlog_owner *o)
{
	const uint8_t *name = buf + 16;
	uint64_t vc = get64(buf + 8);

	if (get64(buf) != STORE_RLOG_OWNER_MAGIC ||
	    get64(buf + STORE_RLOG_OWNER_SEAL) !=
		    XXH3_64bits(buf, STORE_RLOG_OWNER_SEAL) ||
	    (uint32_t)vc != STORE_RLOG_OWNER_VERSION || (vc >> 32) > 1) {
		return -EINVAL;
	}
	if (!memchr(name, 0, STORE_RLOG_NAME_MAX)) {
		return -EINVAL;
	}
	memcpy(o->gateway, name, STORE_RLOG_NAME_MAX);
	for (int i = 0; i < 2; i++) {
		const uint8_t *a =
			name + STORE_RLOG_NAME_MAX + i * STORE_RLOG_ADDR_MAX;

		if (!memchr(a, 0, STORE_RLOG_ADDR_MAX)) {
			return -EINVAL;
		}
		memcpy(o->addr[i], a, STORE_RLOG_ADDR_MAX);
	}
	o->clean = (vc >> 32) == 1;
	return 0;
}

int store__rlog_header_decode(const uint8_t *hdr, struct store_ilog_super *sb,
			      struct store_rlog_owner *owner)
{
	struct store_ilog_super s[2];
	bool ok[2];

	for (int i = 0; i < 2; i++) {
		ok[i] = store__ilog_super_decode(
				hdr + i * STORE_ILOG_SUPER_SLOT,
				STORE_ILOG_SUPER_BYTES, &s[i]) == 0;
	}
	if (!ok[0] && !ok[1]) {
		return store__ilog_super_has_magic(hdr) ||
				       store__ilog_super_has_magic(
					       hdr + STORE_ILOG_SUPER_SLOT)
			       ? -EINVAL
			       : -ENODATA;
	}
	*sb = ok[0] && (!ok[1] || s[0].seq >= s[1].seq) ? s[0] : s[1];
	if (sb->ring_bytes > STORE_RLOG_RING_MAX) {
		return -EINVAL;
	}
	return store__rlog_owner_decode(hdr + STORE_RLOG_OWNER_OFF, owner);
}

void store__rlog_header_encode(uint8_t *hdr, const struct store_ilog_super *sb,
			       const struct store_rlog_owner *owner)
{
	memset(hdr, 0, STORE_RLOG_HEADER_BYTES);
	store__ilog_super_encode(hdr, sb);
	store__ilog_super_encode(hdr + STORE_ILOG_SUPER_SLOT, sb);
	store__rlog_owner_encode(hdr + STORE_RLOG_OWNER_OFF, owner);
}

void store__rlog_scan(const uint8_t *ring, size_t len, uint64_t salt,
		      uint64_t head_lsn, store_rlog_rec_fn fn, void *arg,
		      struct store_rlog_scan_end *end)
{
	size_t pos = 0;

	memset(end, 0, sizeof(*end));
	while (len - pos >= STORE_ILOG_HEAD_BYTES) {
		struct store_ilog_rec rec;
		int err = store__ilog_rec_decode(ring + pos, len - pos, salt,
						 head_lsn + pos, &rec);

		/* A header whose record runs past the bytes read is a
		 * record cut short: corrupt, not the log's end. */
		if (err == -ENODATA) {
			break;
		}
		if (err) {
			end->err = err;
			break;
		}
		if (rec.type == STORE_ILOG_REC_WRITE) {
			err = fn(arg, &rec);
			if (err) {
				end->err = err;
				break;
			}
			end->records++;
		}
		pos += rec.rec_len;
	}
	end->end_lsn = head_lsn + pos;
}

int store__rlog_oid(char *out, size_t outlen, const char *ds, const char *gw)
{
	if ((size_t)snprintf(out, outlen, "dsnfs.ilog.%s.%s", ds, gw) >=
	    outlen) {
		return -ENAMETOOLONG;
	}
	return 0;
}
