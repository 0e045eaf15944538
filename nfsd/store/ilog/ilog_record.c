// SPDX-License-Identifier: Apache-2.0
/*
 * ilog_record: the on-disk format of the intent log (ilog.h), bytes in and
 * bytes out; nothing here touches a file, so the fuzz target feeds it
 * anything.  Little endian throughout.
 *
 * Record header (56 bytes), then the handle, the data, zeros to a
 * multiple of 8:
 *   0 magic "DSIL"   4 type u16   6 fh_len u16   8 salt   16 lsn
 *   24 off_bytes     32 data_len u32   36 rec_len u32
 *   40 xxh3 of bytes 56..rec_len      48 xxh3 of bytes 0..48
 * A SYNCED record has the same header (off_bytes and data_len: the range
 * synced in place), then the handle and upto (u64), zeros to 8.
 * Superblock slot (56 bytes): magic "DSILSUP1", salt, head_lsn, seq,
 * ring_bytes, version u32, zero u32, xxh3 of bytes 0..48.
 */
#include "nfsd/store/ilog/ilog_record.h"

#include <errno.h>
#include <string.h>
#include <xxhash.h>

#define STORE_ILOG_MAGIC 0x4c495344u /* "DSIL" */
#define STORE_ILOG_SUPER_MAGIC 0x315055534c495344ull /* "DSILSUP1" */
#define STORE_ILOG_VERSION 1u

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++) {
		p[i] = (uint8_t)(v >> (8 * i));
	}
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++) {
		p[i] = (uint8_t)(v >> (8 * i));
	}
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v = 0;

	for (int i = 3; i >= 0; i--) {
		v = (v << 8) | p[i];
	}
	return v;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--) {
		v = (v << 8) | p[i];
	}
	return v;
}

uint32_t store__ilog_rec_len(uint32_t fh_len, uint32_t data_len)
{
	uint32_t n = STORE_ILOG_HEAD_BYTES + fh_len + data_len;

	return (n + 7u) & ~7u;
}

/* Header fields and its checksum; the body's is already at 40. */
static void store_ilog_head_put(uint8_t *out, enum store_ilog_rec_type type,
				uint32_t fh_len, uint64_t salt, uint64_t lsn,
				uint64_t off_bytes, uint32_t data_len,
				uint32_t rec_len)
{
	put32(out, STORE_ILOG_MAGIC);
	put16(out + 4, (uint16_t)type);
	put16(out + 6, (uint16_t)fh_len);
	put64(out + 8, salt);
	put64(out + 16, lsn);
	put64(out + 24, off_bytes);
	put32(out + 32, data_len);
	put32(out + 36, rec_len);
	put64(out + 40, XXH3_64bits(out + STORE_ILOG_HEAD_BYTES,
				    rec_len - STORE_ILOG_HEAD_BYTES));
	put64(out + 48, XXH3_64bits(out, 48));
}

void store__ilog_rec_encode(uint8_t *out, uint64_t salt, uint64_t lsn,
			    const struct store_fh *fh, uint64_t off_bytes,
			    const void *data, uint32_t data_len)
{
	uint32_t rec_len = store__ilog_rec_len(fh->len, data_len);
	uint8_t *p = out + STORE_ILOG_HEAD_BYTES;

	memcpy(p, fh->data, fh->len);
	memcpy(p + fh->len, data, data_len);
	p += fh->len + data_len;
	memset(p, 0, (size_t)(out + rec_len - p));
	store_ilog_head_put(out, STORE_ILOG_REC_WRITE, fh->len, salt, lsn,
			    off_bytes, data_len, rec_len);
}

uint32_t store__ilog_synced_len(uint32_t fh_len)
{
	return store__ilog_rec_len(fh_len, STORE_ILOG_SYNCED_BODY);
}

void store__ilog_synced_encode(uint8_t *out, uint64_t salt, uint64_t lsn,
			       const struct store_fh *fh, uint64_t off_bytes,
			       uint32_t len_bytes, uint64_t upto_lsn)
{
	uint32_t rec_len = store__ilog_synced_len(fh->len);
	uint8_t *p = out + STORE_ILOG_HEAD_BYTES;

	memcpy(p, fh->data, fh->len);
	put64(p + fh->len, upto_lsn);
	p += fh->len + STORE_ILOG_SYNCED_BODY;
	memset(p, 0, (size_t)(out + rec_len - p));
	store_ilog_head_put(out, STORE_ILOG_REC_SYNCED, fh->len, salt, lsn,
			    off_bytes, len_bytes, rec_len);
}

void store__ilog_pad_encode(uint8_t *out, uint64_t salt, uint64_t lsn,
			    uint32_t rec_len)
{
	memset(out + STORE_ILOG_HEAD_BYTES, 0, rec_len - STORE_ILOG_HEAD_BYTES);
	store_ilog_head_put(out, STORE_ILOG_REC_PAD, 0, salt, lsn, 0, 0,
			    rec_len);
}

int store__ilog_head_decode(const uint8_t *buf, size_t len, uint64_t salt,
			    uint64_t lsn, struct store_ilog_rec *out)
{
	uint32_t fh_len, type;

	if (len < STORE_ILOG_HEAD_BYTES) {
		return -EINVAL;
	}
	/* Another lap, another run, or never written: where the log ends. */
	if (get32(buf) != STORE_ILOG_MAGIC || get64(buf + 8) != salt ||
	    get64(buf + 16) != lsn) {
		return -ENODATA;
	}
	if (get64(buf + 48) != XXH3_64bits(buf, 48)) {
		return -EBADMSG;
	}
	type = get16(buf + 4);
	fh_len = get16(buf + 6);
	memset(out, 0, sizeof(*out));
	out->type = (enum store_ilog_rec_type)type;
	out->lsn = lsn;
	out->off_bytes = get64(buf + 24);
	out->data_len = get32(buf + 32);
	out->rec_len = get32(buf + 36);
	if (type == STORE_ILOG_REC_PAD) {
		/* Only what the encoder writes: a PAD holds nothing. */
		if (fh_len || out->off_bytes || out->data_len ||
		    out->rec_len % 8 || out->rec_len < STORE_ILOG_HEAD_BYTES ||
		    out->rec_len > STORE_ILOG_BLOCK + STORE_ILOG_HEAD_BYTES) {
			return -EINVAL;
		}
		return 0;
	}
	if ((type != STORE_ILOG_REC_WRITE && type != STORE_ILOG_REC_SYNCED) ||
	    fh_len == 0 || fh_len > STORE_FH_MAX ||
	    out->data_len > STORE_ILOG_DATA_MAX || out->off_bytes > INT64_MAX ||
	    out->data_len > INT64_MAX - out->off_bytes) {
		return -EINVAL;
	}
	/* A SYNCED record carries no data: its length is the range's. */
	if (type == STORE_ILOG_REC_SYNCED) {
		if (out->data_len == 0 ||
		    out->rec_len != store__ilog_synced_len(fh_len)) {
			return -EINVAL;
		}
	} else if (out->rec_len != store__ilog_rec_len(fh_len, out->data_len)) {
		return -EINVAL;
	}
	out->fh.len = fh_len;
	return 0;
}

int store__ilog_rec_decode(const uint8_t *buf, size_t len, uint64_t salt,
			   uint64_t lsn, struct store_ilog_rec *out)
{
	int err = store__ilog_head_decode(buf, len, salt, lsn, out);

	if (err) {
		return err;
	}
	if (len < out->rec_len) {
		return -EINVAL;
	}
	if (get64(buf + 40) !=
	    XXH3_64bits(buf + STORE_ILOG_HEAD_BYTES,
			out->rec_len - STORE_ILOG_HEAD_BYTES)) {
		return -EBADMSG;
	}
	if (out->type == STORE_ILOG_REC_WRITE) {
		memcpy(out->fh.data, buf + STORE_ILOG_HEAD_BYTES, out->fh.len);
		out->data = buf + STORE_ILOG_HEAD_BYTES + out->fh.len;
	}
	if (out->type == STORE_ILOG_REC_SYNCED) {
		memcpy(out->fh.data, buf + STORE_ILOG_HEAD_BYTES, out->fh.len);
		out->upto_lsn =
			get64(buf + STORE_ILOG_HEAD_BYTES + out->fh.len);
		/* It can only speak of records before it. */
		if (out->upto_lsn == 0 || out->upto_lsn > lsn) {
			return -EINVAL;
		}
	}
	return 0;
}

void store__ilog_super_encode(uint8_t *out, const struct store_ilog_super *sb)
{
	put64(out, STORE_ILOG_SUPER_MAGIC);
	put64(out + 8, sb->salt);
	put64(out + 16, sb->head_lsn);
	put64(out + 24, sb->seq);
	put64(out + 32, sb->ring_bytes);
	put32(out + 40, STORE_ILOG_VERSION);
	put32(out + 44, 0);
	put64(out + 48, XXH3_64bits(out, 48));
}

bool store__ilog_super_has_magic(const uint8_t *buf)
{
	return get64(buf) == STORE_ILOG_SUPER_MAGIC;
}

int store__ilog_super_decode(const uint8_t *buf, size_t len,
			     struct store_ilog_super *out)
{
	if (len < STORE_ILOG_SUPER_BYTES ||
	    get64(buf) != STORE_ILOG_SUPER_MAGIC ||
	    get64(buf + 48) != XXH3_64bits(buf, 48) ||
	    get32(buf + 40) != STORE_ILOG_VERSION) {
		return -EINVAL;
	}
	out->salt = get64(buf + 8);
	out->head_lsn = get64(buf + 16);
	out->seq = get64(buf + 24);
	out->ring_bytes = get64(buf + 32);
	if (out->ring_bytes < STORE_ILOG_RING_MIN ||
	    out->ring_bytes > STORE_ILOG_RING_MAX ||
	    out->ring_bytes % STORE_ILOG_BLOCK) {
		return -EINVAL;
	}
	return 0;
}
