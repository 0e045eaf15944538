// SPDX-License-Identifier: Apache-2.0
/*
 * test_store_rlog: the RADOS intent log's bytes (nfsd/store/cephfs/rlog.c)
 * without a cluster: the header (superblock and owner block) decodes to
 * what was encoded and is refused when damaged; replay's walk hands every
 * record in order, stops at the log's end, and stops at a corrupt record
 * with nothing after it replayed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nfsd/store/cephfs/rlog.h"

#define SALT UINT64_C(0x0123456789abcdef)
#define HEAD UINT64_C(8192)
#define RING (1u << 16)

static void owner_fill(struct store_rlog_owner *o)
{
	memset(o, 0, sizeof(*o));
	strcpy(o->gateway, "gw-a");
	strcpy(o->addr[0], "127.0.0.1:0/1111");
	strcpy(o->addr[1], "[v2:127.0.0.1:0/2222,v1:127.0.0.1:0/2222]");
}

static void test_header_round_trip(void **state)
{
	static uint8_t hdr[STORE_RLOG_HEADER_BYTES];
	struct store_ilog_super sb = {
		.salt = SALT, .head_lsn = HEAD, .seq = 7, .ring_bytes = 8u << 20
	};
	struct store_rlog_owner o, got;
	struct store_ilog_super sbg;

	(void)state;
	owner_fill(&o);
	o.clean = true;
	store__rlog_header_encode(hdr, &sb, &o);
	assert_int_equal(store__rlog_header_decode(hdr, &sbg, &got), 0);
	assert_int_equal(sbg.salt, SALT);
	assert_int_equal(sbg.head_lsn, HEAD);
	assert_int_equal(sbg.seq, 7);
	assert_string_equal(got.gateway, "gw-a");
	assert_string_equal(got.addr[1], o.addr[1]);
	assert_true(got.clean);
}

static void test_header_zeros_is_no_log_and_damage_is_refused(void **state)
{
	static uint8_t hdr[STORE_RLOG_HEADER_BYTES];
	struct store_ilog_super sb = { .salt = SALT,
				       .seq = 1,
				       .ring_bytes = 8u << 20 };
	struct store_rlog_owner o, got;
	struct store_ilog_super sbg;

	(void)state;
	memset(hdr, 0, sizeof(hdr));
	assert_int_equal(store__rlog_header_decode(hdr, &sbg, &got), -ENODATA);
	owner_fill(&o);
	store__rlog_header_encode(hdr, &sb, &o);
	/* A flipped byte of the owner block: its checksum fails. */
	hdr[STORE_RLOG_OWNER_OFF + 20] ^= 1;
	assert_int_equal(store__rlog_header_decode(hdr, &sbg, &got), -EINVAL);
	store__rlog_header_encode(hdr, &sb, &o);
	/* Both slots damaged but their magic there: damaged, not absent. */
	hdr[20] ^= 1;
	hdr[STORE_ILOG_SUPER_SLOT + 20] ^= 1;
	assert_int_equal(store__rlog_header_decode(hdr, &sbg, &got), -EINVAL);
	/* A ring larger than a RADOS object may be: refused. */
	sb.ring_bytes = STORE_RLOG_RING_MAX * 2;
	store__rlog_header_encode(hdr, &sb, &o);
	assert_int_equal(store__rlog_header_decode(hdr, &sbg, &got), -EINVAL);
}

struct seen {
	uint64_t off[8];
	uint8_t first[8];
	int n;
};

static int seen_rec(void *arg, const struct store_ilog_rec *rec)
{
	struct seen *s = arg;

	s->off[s->n] = rec->off_bytes;
	s->first[s->n] = rec->data[0];
	s->n++;
	return 0;
}

/* Three WRITE records from HEAD on; their offsets in *at. */
static uint8_t *ring_make(size_t at[3])
{
	uint8_t *ring = calloc(1, RING);
	struct store_fh fh = { .len = 23 };
	uint8_t data[500];
	size_t pos = 0;

	memset(fh.data, 0x5a, fh.len);
	for (int i = 0; i < 3; i++) {
		memset(data, 'a' + i, sizeof(data));
		at[i] = pos;
		store__ilog_rec_encode(ring + pos, SALT, HEAD + pos, &fh,
				       4096u * (uint64_t)i, data, sizeof(data));
		pos += store__ilog_rec_len(fh.len, sizeof(data));
	}
	return ring;
}

static void test_scan_replays_every_record_to_the_end(void **state)
{
	struct store_rlog_scan_end end;
	struct seen s = { .n = 0 };
	size_t at[3];
	uint8_t *ring = ring_make(at);

	(void)state;
	store__rlog_scan(ring, RING, SALT, HEAD, seen_rec, &s, &end);
	assert_int_equal(end.err, 0);
	assert_int_equal(end.records, 3);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.off[2], 8192);
	assert_int_equal(s.first[1], 'b');
	/* Another run's salt: the end of the log, nothing replayed. */
	s.n = 0;
	store__rlog_scan(ring, RING, SALT + 1, HEAD, seen_rec, &s, &end);
	assert_int_equal(end.err, 0);
	assert_int_equal(s.n, 0);
	assert_int_equal(end.end_lsn, HEAD);
	free(ring);
}

static void test_scan_stops_at_a_corrupt_record(void **state)
{
	struct store_rlog_scan_end end;
	struct seen s = { .n = 0 };
	size_t at[3];
	uint8_t *ring = ring_make(at);

	(void)state;
	/* A data byte of the second record: its body checksum fails. */
	ring[at[1] + STORE_ILOG_HEAD_BYTES + 23 + 10] ^= 0xff;
	store__rlog_scan(ring, RING, SALT, HEAD, seen_rec, &s, &end);
	assert_int_equal(end.err, -EBADMSG);
	assert_int_equal(s.n, 1); /* the third, whole, is not replayed */
	assert_int_equal(end.records, 1);
	assert_int_equal(end.end_lsn, HEAD + at[1]);
	free(ring);
}

static void test_scan_stops_at_a_torn_header(void **state)
{
	struct store_rlog_scan_end end;
	struct seen s = { .n = 0 };
	size_t at[3];
	uint8_t *ring = ring_make(at);

	(void)state;
	ring[at[2] + 30] ^= 0x01; /* header checksum */
	store__rlog_scan(ring, RING, SALT, HEAD, seen_rec, &s, &end);
	assert_int_equal(end.err, -EBADMSG);
	assert_int_equal(s.n, 2);
	assert_int_equal(end.end_lsn, HEAD + at[2]);
	free(ring);
}

static void test_oid_names_datastore_and_gateway(void **state)
{
	char oid[40];

	(void)state;
	assert_int_equal(store__rlog_oid(oid, sizeof(oid), "ds1", "gw-a"), 0);
	assert_string_equal(oid, "dsnfs.ilog.ds1.gw-a");
	assert_int_equal(store__rlog_oid(oid, 12, "ds1", "gw-a"),
			 -ENAMETOOLONG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_round_trip),
		cmocka_unit_test(
			test_header_zeros_is_no_log_and_damage_is_refused),
		cmocka_unit_test(test_scan_replays_every_record_to_the_end),
		cmocka_unit_test(test_scan_stops_at_a_corrupt_record),
		cmocka_unit_test(test_scan_stops_at_a_torn_header),
		cmocka_unit_test(test_oid_names_datastore_and_gateway),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
