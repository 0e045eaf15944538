// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_ilog_record: the intent log's decoders (nfsd/store/ilog/ilog_record.c),
 * which read what a crash, a bad disk or anyone with the log file left.
 * Input: the salt (8 bytes, little endian), the LSN (8), then the bytes at
 * that LSN.  Both record decoders and the superblock decoder must stay in
 * bounds; a record that decodes must fit the input and encode back to the
 * same bytes.  Seeds (tests/fuzz/corpus/ilog_record/) are a WRITE record,
 * a PAD record, a SYNCED record and a superblock slot.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/store/ilog/ilog_record.h"

static uint64_t fuzz_get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--) {
		v = (v << 8) | p[i];
	}
	return v;
}

/* A decoded record, encoded again, is the input. */
static void fuzz_ilog_check(const struct store_ilog_rec *rec,
			    const uint8_t *buf, size_t len, uint64_t salt)
{
	uint8_t *again;

	if (rec->rec_len > len || rec->fh.len > STORE_FH_MAX ||
	    rec->data_len > STORE_ILOG_DATA_MAX) {
		__builtin_trap();
	}
	again = malloc(rec->rec_len);
	if (!again) {
		return;
	}
	if (rec->type == STORE_ILOG_REC_WRITE) {
		if (rec->data != buf + STORE_ILOG_HEAD_BYTES + rec->fh.len ||
		    rec->rec_len !=
			    store__ilog_rec_len(rec->fh.len, rec->data_len)) {
			__builtin_trap();
		}
		store__ilog_rec_encode(again, salt, rec->lsn, &rec->fh,
				       rec->off_bytes, rec->data,
				       rec->data_len);
	} else if (rec->type == STORE_ILOG_REC_SYNCED) {
		if (rec->data_len == 0 || rec->upto_lsn == 0 ||
		    rec->upto_lsn > rec->lsn ||
		    rec->rec_len != store__ilog_synced_len(rec->fh.len)) {
			__builtin_trap();
		}
		store__ilog_synced_encode(again, salt, rec->lsn, &rec->fh,
					  rec->off_bytes, rec->data_len,
					  rec->upto_lsn);
	} else {
		store__ilog_pad_encode(again, salt, rec->lsn, rec->rec_len);
	}
	if (memcmp(again, buf, rec->rec_len) != 0) {
		__builtin_trap();
	}
	free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct store_ilog_super sb;
	struct store_ilog_rec rec;
	uint64_t salt, lsn;
	const uint8_t *buf;
	size_t len;

	if (size < 16) {
		return 0;
	}
	salt = fuzz_get64(data);
	lsn = fuzz_get64(data + 8);
	buf = data + 16;
	len = size - 16;
	if (store__ilog_head_decode(buf, len, salt, lsn, &rec) == 0 &&
	    rec.rec_len < STORE_ILOG_HEAD_BYTES) {
		__builtin_trap();
	}
	if (store__ilog_rec_decode(buf, len, salt, lsn, &rec) == 0) {
		fuzz_ilog_check(&rec, buf, len, salt);
	}
	if (store__ilog_super_decode(buf, len, &sb) == 0 &&
	    (sb.ring_bytes < STORE_ILOG_RING_MIN ||
	     sb.ring_bytes % STORE_ILOG_BLOCK)) {
		__builtin_trap();
	}
	return 0;
}
