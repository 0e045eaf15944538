// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_ledger: feeds bytes to the capacity ledger decoder
 * (pool_ledger_decode(), nfsd/pool/ledger.c) as pool_ledger_open() would
 * read them from the file, then replays what decoded into pools
 * (pool_events_replay()) as the registry does at start.  The first byte
 * picks a mode: even = the bytes as they are (a record's xxh64 almost never
 * matches); odd = the rest with the checksum of every whole record written
 * over, to reach the checks behind it.  Properties checked:
 *   - a refusal always says why;
 *   - the bytes kept (valid_len) are the header and exactly the decoded
 *     events encoded again, and decode again to the same events, untorn;
 *   - nothing is dropped unless the recovery says so;
 *   - replay accepts or refuses with words, and never makes more pools
 *     than it has room for.
 * Seeds (tests/fuzz/corpus/ledger/) are ledgers written by
 * pool_ledger_append(), a torn and a zero-filled tail among them.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "nfsd/pool/ledger.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t fuzz_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* Rewrites the checksum of every whole record, following the lengths. */
static void fuzz_fix_checksums(uint8_t *buf, size_t len)
{
	size_t off = POOL_LEDGER_HEADER_BYTES;

	while (off <= len && len - off >= 4) {
		uint32_t plen = fuzz_le32(buf + off);
		uint64_t sum;

		if (plen > POOL_LEDGER_PAYLOAD_MAX_BYTES ||
		    len - off < 4 + (size_t)plen + 8) {
			return;
		}
		sum = XXH64(buf + off, 4 + (size_t)plen, 0);
		for (int i = 0; i < 8; i++) {
			buf[off + 4 + plen + i] = (uint8_t)(sum >> (8 * i));
		}
		off += 4 + (size_t)plen + 8;
	}
}

static bool fuzz_events_equal(const struct pool_event *a,
			      const struct pool_event *b)
{
	return a->type == b->type && a->time_s == b->time_s &&
	       a->level == b->level && a->size_tib == b->size_tib &&
	       a->purchased_mibps == b->purchased_mibps &&
	       strcmp(a->pool, b->pool) == 0;
}

/* The kept bytes must be the header plus the events encoded again. */
static void fuzz_check_reencode(const uint8_t *buf, size_t valid_len,
				const struct pool_event *evs, size_t n)
{
	uint8_t rec[POOL_LEDGER_RECORD_MAX_BYTES];
	size_t off = POOL_LEDGER_HEADER_BYTES;

	if (valid_len == 0) {
		if (n != 0) {
			abort();
		}
		return;
	}
	if (valid_len < POOL_LEDGER_HEADER_BYTES) {
		abort();
	}
	for (size_t i = 0; i < n; i++) {
		int w = pool_ledger_encode(&evs[i], rec, sizeof(rec));

		if (w < 0 || (size_t)w > valid_len - off ||
		    memcmp(buf + off, rec, (size_t)w) != 0) {
			abort(); /* decoded an event it cannot write back */
		}
		off += (size_t)w;
	}
	if (off != valid_len) {
		abort();
	}
}

static void fuzz_check_redecode(const uint8_t *buf, size_t valid_len,
				const struct pool_event *evs, size_t n)
{
	struct pool_ledger_recovery rec;
	struct pool_event *again = NULL;
	size_t n2 = 0, valid2 = 0;
	char err[256] = "";

	if (pool_ledger_decode(buf, valid_len, &again, &n2, &valid2, &rec, err,
			       sizeof(err)) != 0) {
		abort();
	}
	if (n2 != n || valid2 != valid_len || rec.torn) {
		abort();
	}
	for (size_t i = 0; i < n; i++) {
		if (!fuzz_events_equal(&evs[i], &again[i])) {
			abort();
		}
	}
	free(again);
}

static void fuzz_check_replay(const struct pool_event *evs, size_t n)
{
	static struct pool pools[POOL_MAX_POOLS];
	size_t npools = 0;
	char err[256] = "";
	int rc;

	rc = pool_events_replay(evs, n, pools, POOL_MAX_POOLS, &npools, err,
				sizeof(err));
	if (rc != 0 && rc != -EINVAL && rc != -ENOSPC) {
		abort();
	}
	if (rc != 0 && err[0] == '\0') {
		abort();
	}
	if (rc == 0 && npools > POOL_MAX_POOLS) {
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pool_ledger_recovery rec;
	struct pool_event *evs = NULL;
	size_t n = 0, valid_len = 0, len;
	char err[256] = "";
	uint8_t *buf;
	int rc;

	if (size < 1 || size > 65536) {
		return 0;
	}
	len = size - 1;
	buf = malloc(len ? len : 1);
	if (!buf) {
		return 0;
	}
	memcpy(buf, data + 1, len);
	if (data[0] & 1) {
		fuzz_fix_checksums(buf, len);
	}
	rc = pool_ledger_decode(buf, len, &evs, &n, &valid_len, &rec, err,
				sizeof(err));
	if (rc != 0) {
		if (err[0] == '\0' || evs || n) {
			abort(); /* a refusal without words, or a leak */
		}
		goto out;
	}
	if (valid_len > len || (!rec.torn && valid_len != len) ||
	    (rec.torn && rec.dropped_bytes != len - valid_len)) {
		abort();
	}
	fuzz_check_reencode(buf, valid_len, evs, n);
	fuzz_check_redecode(buf, valid_len, evs, n);
	fuzz_check_replay(evs, n);
	free(evs);
out:
	free(buf);
	return 0;
}
