/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ilog_record: the bytes of an intent log, pure (ilog_record.c): the
 * record and superblock layout, their encoders and decoders.  Both
 * journals write them: the local backend's log in a file (ilog.h) and the
 * cephfs backend's log in a RADOS object (cephfs/rlog.h), which includes
 * this header alone and so sees neither the local log's writer nor its
 * state (ilog_int.h).
 */
#ifndef DSNFS_STORE_ILOG_RECORD_H
#define DSNFS_STORE_ILOG_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nfsd/store/store.h"

#define STORE_ILOG_BLOCK 4096u /* flush and superblock unit */
#define STORE_ILOG_DATA_OFF 4096u /* the ring starts after the superblock */
#define STORE_ILOG_SUPER_SLOT 512u /* slot 0 at 0, slot 1 at 512 */
#define STORE_ILOG_SUPER_BYTES 56u
#define STORE_ILOG_HEAD_BYTES 56u /* record header */
/* Largest data of one record: nfs3 WRITE counts stop at 1 MiB. */
#define STORE_ILOG_DATA_MAX (1u << 20)
#define STORE_ILOG_REC_MAX                                                     \
	(STORE_ILOG_HEAD_BYTES + STORE_FH_MAX + STORE_ILOG_DATA_MAX + 8u)
/* A batch holds at least one largest record and its pad. */
#define STORE_ILOG_BATCH_BYTES (4u << 20)
#define STORE_ILOG_RING_MIN (2u * STORE_ILOG_BATCH_BYTES)
#define STORE_ILOG_RING_MAX (1ull << 40)

enum store_ilog_rec_type {
	STORE_ILOG_REC_WRITE = 1,
	STORE_ILOG_REC_PAD = 2, /* fills a batch to its 4 KiB end */
	STORE_ILOG_REC_SYNCED = 3, /* a range written and synced in place */
};

/* Body of a SYNCED record after the handle: upto (u64). */
#define STORE_ILOG_SYNCED_BODY 8u

/* A decoded record.  @data borrows the decoded buffer. */
struct store_ilog_rec {
	enum store_ilog_rec_type type;
	uint64_t lsn;
	uint64_t off_bytes;
	uint32_t data_len; /* SYNCED: the range's length (no data) */
	uint32_t rec_len; /* header + handle + data, rounded up to 8 */
	struct store_fh fh;
	const uint8_t *data;
	/* SYNCED: the file's records ending at or below this are older than
	 * the range's bytes (0 < upto <= lsn). */
	uint64_t upto_lsn;
};

/* The superblock: where replay starts and how to read the ring. */
struct store_ilog_super {
	uint64_t salt;
	uint64_t head_lsn;
	uint64_t seq; /* slot seq % 2; the higher valid one wins */
	uint64_t ring_bytes;
};

/* ---- records (ilog_record.c: pure, bytes in and out) ------------------ */

/* Bytes of a WRITE record of @fh_len handle bytes and @data_len data. */
uint32_t store__ilog_rec_len(uint32_t fh_len, uint32_t data_len);

/* Encodes a WRITE record into @out (store__ilog_rec_len() bytes). */
void store__ilog_rec_encode(uint8_t *out, uint64_t salt, uint64_t lsn,
			    const struct store_fh *fh, uint64_t off_bytes,
			    const void *data, uint32_t data_len);

/* Bytes of a SYNCED record of @fh_len handle bytes. */
uint32_t store__ilog_synced_len(uint32_t fh_len);

/* Encodes a SYNCED record (store__ilog_synced_len() bytes) into @out: the
 * @len_bytes at @off_bytes of @fh's file are stable there, newer than its
 * records ending at or below @upto_lsn. */
void store__ilog_synced_encode(uint8_t *out, uint64_t salt, uint64_t lsn,
			       const struct store_fh *fh, uint64_t off_bytes,
			       uint32_t len_bytes, uint64_t upto_lsn);

/* Encodes a PAD record of @rec_len bytes (>= STORE_ILOG_HEAD_BYTES, a
 * multiple of 8) into @out. */
void store__ilog_pad_encode(uint8_t *out, uint64_t salt, uint64_t lsn,
			    uint32_t rec_len);

/*
 * Decodes the header in @buf (@len bytes, at least STORE_ILOG_HEAD_BYTES)
 * as the record at @lsn of the log with @salt.  Returns 0 (*out filled but
 * @data, which needs the body), -ENODATA when these bytes are no record of
 * this log at this place (the normal end of a log), -EBADMSG when the
 * header's checksum fails, -EINVAL when a checked header holds fields out
 * of bounds.
 */
int store__ilog_head_decode(const uint8_t *buf, size_t len, uint64_t salt,
			    uint64_t lsn, struct store_ilog_rec *out);

/*
 * Decodes the whole record in @buf (@len >= its rec_len, else -EINVAL) and
 * checks its body's checksum (-EBADMSG).  Other returns as
 * store__ilog_head_decode().  out->data borrows @buf.
 */
int store__ilog_rec_decode(const uint8_t *buf, size_t len, uint64_t salt,
			   uint64_t lsn, struct store_ilog_rec *out);

/* Encodes @sb into STORE_ILOG_SUPER_BYTES at @out. */
void store__ilog_super_encode(uint8_t *out, const struct store_ilog_super *sb);
/* Decodes a slot: 0, or -EINVAL (magic, checksum or a bound). */
int store__ilog_super_decode(const uint8_t *buf, size_t len,
			     struct store_ilog_super *out);
/* Whether the slot at @buf starts with the superblock's magic: a log's
 * file even when its checksum fails. */
bool store__ilog_super_has_magic(const uint8_t *buf);

#endif
