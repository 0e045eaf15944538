// SPDX-License-Identifier: Apache-2.0
/*
 * test_ledger: the capacity ledger's file: replay, fsync'd appends, a torn
 * or corrupt last record dropped, damage in the middle refused, and the
 * registry writing its capacity events (nfsd/pool/ledger.h).
 */
#include "nfsd/pool/ledger.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <xxhash.h>

struct fixture {
	char dir[64];
	char path[128];
	char err[256];
	int64_t now_s;
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	strcpy(fx->dir, "/tmp/test_ledger.XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	snprintf(fx->path, sizeof(fx->path), "%s/capacity.ledger", fx->dir);
	fx->now_s = 1700000000;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	unlink(fx->path);
	rmdir(fx->dir);
	free(fx);
	return 0;
}

static struct pool_event event(enum pool_event_type type, int64_t t,
			       const char *pool, enum pool_level level,
			       uint32_t size_tib)
{
	struct pool_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.time_s = t;
	strcpy(ev.pool, pool);
	ev.level = level;
	ev.size_tib = size_tib;
	return ev;
}

static off_t file_size(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_size;
}

/* Opens the fixture's ledger in @mode; the open must succeed.  @rec may be
 * NULL. */
static struct pool_ledger *ledger_open_ok(struct fixture *fx,
					  enum pool_ledger_mode mode,
					  struct pool_ledger_recovery *rec)
{
	struct pool_ledger *l = NULL;

	assert_int_equal(pool_ledger_open(fx->path, mode, &l, rec, fx->err,
					  sizeof(fx->err)),
			 0);
	return l;
}

/* Writes three events: created, resized, level-changed. */
static void write_three(struct fixture *fx)
{
	struct pool_ledger *l;
	struct pool_event evs[3] = {
		event(POOL_EVENT_CREATED, 100, "p1", POOL_LEVEL_PREMIUM, 4),
		event(POOL_EVENT_RESIZED, 200, "p1", POOL_LEVEL_PREMIUM, 8),
		event(POOL_EVENT_LEVEL_CHANGED, 300, "p1", POOL_LEVEL_ULTRA, 8),
	};

	l = ledger_open_ok(fx, POOL_LEDGER_READ_WRITE, NULL);
	assert_int_equal(
		pool_ledger_append(l, evs, 1, fx->err, sizeof(fx->err)), 0);
	assert_int_equal(
		pool_ledger_append(l, evs + 1, 2, fx->err, sizeof(fx->err)), 0);
	pool_ledger_close(l);
}

static void flip_byte(const char *path, off_t off)
{
	int fd = open(path, O_RDWR);
	uint8_t b;

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &b, 1, off), 1);
	b ^= 0x40;
	assert_int_equal(pwrite(fd, &b, 1, off), 1);
	close(fd);
}

static void test_ledger_replays_what_was_appended(void **state)
{
	struct fixture *fx = *state;
	struct pool_ledger_recovery rec;
	struct pool_ledger *l;
	struct pool_event *evs;
	size_t n;

	write_three(fx);
	l = ledger_open_ok(fx, POOL_LEDGER_READ_ONLY, &rec);
	assert_false(rec.torn);
	assert_int_equal(pool_ledger_events(l, &evs, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(evs[0].type, POOL_EVENT_CREATED);
	assert_string_equal(evs[0].pool, "p1");
	assert_int_equal(evs[1].size_tib, 8);
	assert_int_equal(evs[2].level, POOL_LEVEL_ULTRA);
	assert_int_equal(evs[2].time_s, 300);
	free(evs);
	pool_ledger_close(l);
}

static void test_ledger_torn_last_record_is_dropped(void **state)
{
	struct fixture *fx = *state;
	struct pool_ledger_recovery rec;
	struct pool_ledger *l;
	struct pool_event *evs;
	struct pool_event more =
		event(POOL_EVENT_DELETED, 400, "p1", POOL_LEVEL_ULTRA, 8);
	off_t full;
	size_t n;

	write_three(fx);
	full = file_size(fx->path);
	/* A crash in the middle of the third append: 5 bytes of it lost. */
	assert_int_equal(truncate(fx->path, full - 5), 0);

	/* A reader skips it and leaves the file alone. */
	l = ledger_open_ok(fx, POOL_LEDGER_READ_ONLY, &rec);
	assert_true(rec.torn);
	assert_string_equal(rec.why, "record cut short");
	assert_int_equal(pool_ledger_events(l, &evs, &n), 0);
	assert_int_equal(n, 2);
	free(evs);
	pool_ledger_close(l);
	assert_int_equal(file_size(fx->path), full - 5);

	/* A writer truncates it away and appends after the good records. */
	l = ledger_open_ok(fx, POOL_LEDGER_READ_WRITE, &rec);
	assert_true(rec.torn);
	assert_int_equal(rec.dropped_bytes, (uint64_t)(full - 5 - rec.offset));
	assert_int_equal(file_size(fx->path), (off_t)rec.offset);
	assert_int_equal(
		pool_ledger_append(l, &more, 1, fx->err, sizeof(fx->err)), 0);
	pool_ledger_close(l);

	l = ledger_open_ok(fx, POOL_LEDGER_READ_ONLY, &rec);
	assert_false(rec.torn);
	assert_int_equal(pool_ledger_events(l, &evs, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(evs[2].type, POOL_EVENT_DELETED);
	free(evs);
	pool_ledger_close(l);
}

static void test_ledger_corrupt_last_record_is_dropped(void **state)
{
	struct fixture *fx = *state;
	struct pool_ledger_recovery rec;
	struct pool_ledger *l;
	struct pool_event *evs;
	size_t n;

	write_three(fx);
	/* One bit of the last record's payload (its size field). */
	flip_byte(fx->path, file_size(fx->path) - 8 - 3);
	l = ledger_open_ok(fx, POOL_LEDGER_READ_WRITE, &rec);
	assert_true(rec.torn);
	assert_string_equal(rec.why, "checksum mismatch");
	assert_int_equal(pool_ledger_events(l, &evs, &n), 0);
	assert_int_equal(n, 2);
	free(evs);
	pool_ledger_close(l);
}

static void test_ledger_zeroed_tail_is_dropped(void **state)
{
	struct fixture *fx = *state;
	struct pool_ledger_recovery rec;
	struct pool_ledger *l;
	off_t full;

	write_three(fx);
	full = file_size(fx->path);
	/* Blocks allocated but never written show up as zeros. */
	assert_int_equal(truncate(fx->path, full + 4096), 0);
	l = ledger_open_ok(fx, POOL_LEDGER_READ_WRITE, &rec);
	assert_true(rec.torn);
	assert_int_equal(rec.offset, (uint64_t)full);
	assert_int_equal(file_size(fx->path), full);
	pool_ledger_close(l);
}

static void test_ledger_middle_damage_is_an_error(void **state)
{
	struct fixture *fx = *state;
	struct pool_ledger_recovery rec;
	struct pool_ledger *l = NULL;
	off_t full;

	write_three(fx);
	full = file_size(fx->path);
	/* The first record's time field: a checksum mismatch with two
	 * good records after it. */
	flip_byte(fx->path, POOL_LEDGER_HEADER_BYTES + 4 + 12);
	assert_int_equal(pool_ledger_open(fx->path, POOL_LEDGER_READ_WRITE, &l,
					  &rec, fx->err, sizeof(fx->err)),
			 -EILSEQ);
	assert_null(l);
	assert_non_null(strstr(fx->err, "offset 8, record 0: checksum "
					"mismatch, and records follow"));
	/* Nothing was cut. */
	assert_int_equal(file_size(fx->path), full);
}

static void test_ledger_refuses_a_foreign_file(void **state)
{
	struct fixture *fx = *state;
	struct pool_ledger *l = NULL;
	FILE *f = fopen(fx->path, "w");

	assert_non_null(f);
	fputs("[prices]\nultra = 1\n", f);
	fclose(f);
	assert_int_equal(pool_ledger_open(fx->path, POOL_LEDGER_READ_WRITE, &l,
					  NULL, fx->err, sizeof(fx->err)),
			 -EILSEQ);
	assert_non_null(strstr(fx->err, "not a dsnfs ledger"));
}

static void test_ledger_one_writer(void **state)
{
	struct fixture *fx = *state;
	struct pool_ledger *a, *b = NULL, *r;
	struct pool_event ev =
		event(POOL_EVENT_CREATED, 10, "p", POOL_LEVEL_ULTRA, 1);

	a = ledger_open_ok(fx, POOL_LEDGER_READ_WRITE, NULL);
	assert_int_equal(pool_ledger_open(fx->path, POOL_LEDGER_READ_WRITE, &b,
					  NULL, fx->err, sizeof(fx->err)),
			 -EBUSY);
	assert_null(b);
	r = ledger_open_ok(fx, POOL_LEDGER_READ_ONLY, NULL);
	assert_int_equal(
		pool_ledger_append(r, &ev, 1, fx->err, sizeof(fx->err)),
		-EBADF);
	pool_ledger_close(r);
	pool_ledger_close(a);
}

static void test_ledger_time_never_goes_back(void **state)
{
	struct fixture *fx = *state;
	struct pool_ledger *l;
	struct pool_event *evs;
	struct pool_event two[2] = {
		event(POOL_EVENT_CREATED, 500, "p", POOL_LEVEL_ULTRA, 1),
		event(POOL_EVENT_RESIZED, 400, "p", POOL_LEVEL_ULTRA, 2),
	};
	size_t n;

	l = ledger_open_ok(fx, POOL_LEDGER_READ_WRITE, NULL);
	assert_int_equal(
		pool_ledger_append(l, two, 2, fx->err, sizeof(fx->err)), 0);
	assert_int_equal(pool_ledger_events(l, &evs, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(evs[1].time_s, 500);
	free(evs);
	pool_ledger_close(l);
}

static void test_ledger_decode_torn_header(void **state)
{
	struct pool_ledger_recovery rec;
	struct pool_event *evs;
	size_t n, valid;
	char err[128];

	(void)state;
	assert_int_equal(pool_ledger_decode((const uint8_t *)"DSNF", 4, &evs,
					    &n, &valid, &rec, err, sizeof(err)),
			 0);
	assert_true(rec.torn);
	assert_int_equal(valid, 0);
	assert_int_equal(n, 0);
	assert_int_equal(pool_ledger_decode((const uint8_t *)"XSNF", 4, &evs,
					    &n, &valid, &rec, err, sizeof(err)),
			 -EILSEQ);
}

/* Fuzzer find: a record whose pool name is "e" padded with NULs to four
 * bytes decoded as pool "e", an event that encodes to other bytes.  Such a
 * record is damage, like any invalid field. */
static void test_ledger_decode_refuses_nul_in_name(void **state)
{
	struct pool_event ev =
		event(POOL_EVENT_CREATED, 100, "eXYZ", POOL_LEVEL_ULTRA, 1);
	struct pool_event good =
		event(POOL_EVENT_RESIZED, 200, "eXYZ", POOL_LEVEL_ULTRA, 2);
	uint8_t buf[8 + 2 * POOL_LEDGER_RECORD_MAX_BYTES];
	struct pool_ledger_recovery rec;
	struct pool_event *evs = NULL;
	size_t n = 0, valid = 0, len = 8;
	uint64_t sum;
	char err[256];
	int w;

	(void)state;
	memcpy(buf, POOL_LEDGER_MAGIC, 8);
	w = pool_ledger_encode(&ev, buf + len, POOL_LEDGER_RECORD_MAX_BYTES);
	assert_true(w > 0);
	/* "eXYZ" -> "e\0\0\0", with its checksum made right again. */
	memset(buf + len + 4 + POOL_LEDGER_PAYLOAD_FIXED_BYTES + 1, 0, 3);
	sum = XXH64(buf + len, (size_t)w - 8, 0);
	for (int i = 0; i < 8; i++) {
		buf[len + (size_t)w - 8 + (size_t)i] =
			(uint8_t)(sum >> (8 * i));
	}
	len += (size_t)w;
	w = pool_ledger_encode(&good, buf + len, POOL_LEDGER_RECORD_MAX_BYTES);
	assert_true(w > 0);
	len += (size_t)w;
	assert_int_equal(pool_ledger_decode(buf, len, &evs, &n, &valid, &rec,
					    err, sizeof(err)),
			 -EILSEQ);
	assert_non_null(strstr(err, "NUL byte in the pool name"));
	assert_null(evs);
}

static int64_t fake_clock(void *arg)
{
	return *(int64_t *)arg;
}

/* The registry writes exactly the capacity events of what it applies. */
static void test_registry_writes_capacity_events(void **state)
{
	struct fixture *fx = *state;
	struct pool_registry *reg;
	struct pool_ledger *l;
	struct pool_event *evs;
	struct pool p;
	struct pool_volume v;
	size_t n;

	assert_int_equal(pool_registry_new(fake_clock, &fx->now_s, &reg), 0);
	l = ledger_open_ok(fx, POOL_LEDGER_READ_WRITE, NULL);
	assert_int_equal(
		pool_registry_ledger_attach(reg, l, fx->err, sizeof(fx->err)),
		0);
	memset(&p, 0, sizeof(p));
	strcpy(p.name, "p1");
	p.level = POOL_LEVEL_PREMIUM;
	p.size_tib = 4;
	assert_int_equal(pool_registry_pool_create(reg, &p, NULL, fx->err,
						   sizeof(fx->err)),
			 0);
	memset(&v, 0, sizeof(v));
	strcpy(v.name, "ds1");
	strcpy(v.pool, "p1");
	v.quota_bytes = 4 * POOL_TIB_BYTES;
	assert_int_equal(pool_registry_volume_create(reg, &v, NULL, fx->err,
						     sizeof(fx->err)),
			 0);
	fx->now_s += 60;
	/* Refused (quota): no event. */
	assert_int_equal(pool_registry_pool_resize(reg, "p1", 3, NULL, fx->err,
						   sizeof(fx->err)),
			 -EINVAL);
	assert_int_equal(pool_registry_pool_resize(reg, "p1", 6, NULL, fx->err,
						   sizeof(fx->err)),
			 0);
	fx->now_s += 60;
	assert_int_equal(pool_registry_pool_set_level(reg, "p1",
						      POOL_LEVEL_ULTRA, NULL,
						      fx->err, sizeof(fx->err)),
			 0);
	assert_int_equal(pool_ledger_events(l, &evs, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(evs[0].type, POOL_EVENT_CREATED);
	assert_int_equal(evs[0].time_s, 1700000000);
	assert_int_equal(evs[1].type, POOL_EVENT_RESIZED);
	assert_int_equal(evs[1].size_tib, 6);
	assert_int_equal(evs[1].time_s, 1700000060);
	assert_int_equal(evs[2].type, POOL_EVENT_LEVEL_CHANGED);
	assert_int_equal(evs[2].level, POOL_LEVEL_ULTRA);
	assert_int_equal(evs[2].size_tib, 6);
	free(evs);
	pool_registry_free(reg);
	pool_ledger_close(l);
}

/* At start, the config is compared with the ledger's replay. */
static void test_registry_attach_records_config_changes(void **state)
{
	struct fixture *fx = *state;
	struct pool_state *st = calloc(1, sizeof(*st));
	struct pool_registry *reg;
	struct pool_ledger *l;
	struct pool_event *evs;
	size_t n;

	assert_non_null(st);
	st->npools = 2;
	strcpy(st->pools[0].name, "a");
	st->pools[0].level = POOL_LEVEL_STANDARD;
	st->pools[0].size_tib = 10;
	strcpy(st->pools[1].name, "b");
	st->pools[1].level = POOL_LEVEL_ULTRA;
	st->pools[1].size_tib = 2;

	/* First start: both pools are created. */
	assert_int_equal(pool_registry_new(fake_clock, &fx->now_s, &reg), 0);
	assert_int_equal(
		pool_registry_load(reg, st, NULL, fx->err, sizeof(fx->err)), 0);
	l = ledger_open_ok(fx, POOL_LEDGER_READ_WRITE, NULL);
	assert_int_equal(
		pool_registry_ledger_attach(reg, l, fx->err, sizeof(fx->err)),
		0);
	pool_registry_free(reg);
	pool_ledger_close(l);

	/* Same config again: nothing to write. */
	fx->now_s += 3600;
	assert_int_equal(pool_registry_new(fake_clock, &fx->now_s, &reg), 0);
	assert_int_equal(
		pool_registry_load(reg, st, NULL, fx->err, sizeof(fx->err)), 0);
	l = ledger_open_ok(fx, POOL_LEDGER_READ_WRITE, NULL);
	assert_int_equal(
		pool_registry_ledger_attach(reg, l, fx->err, sizeof(fx->err)),
		0);
	assert_int_equal(pool_ledger_events(l, &evs, &n), 0);
	assert_int_equal(n, 2);
	free(evs);
	pool_registry_free(reg);
	pool_ledger_close(l);

	/* Pool a grew, pool b is gone. */
	fx->now_s += 3600;
	st->npools = 1;
	st->pools[0].size_tib = 12;
	assert_int_equal(pool_registry_new(fake_clock, &fx->now_s, &reg), 0);
	assert_int_equal(
		pool_registry_load(reg, st, NULL, fx->err, sizeof(fx->err)), 0);
	l = ledger_open_ok(fx, POOL_LEDGER_READ_WRITE, NULL);
	assert_int_equal(
		pool_registry_ledger_attach(reg, l, fx->err, sizeof(fx->err)),
		0);
	assert_int_equal(pool_ledger_events(l, &evs, &n), 0);
	assert_int_equal(n, 4);
	assert_int_equal(evs[2].type, POOL_EVENT_DELETED);
	assert_string_equal(evs[2].pool, "b");
	assert_int_equal(evs[3].type, POOL_EVENT_RESIZED);
	assert_int_equal(evs[3].size_tib, 12);
	assert_int_equal(evs[3].time_s, 1700007200);
	free(evs);
	pool_registry_free(reg);
	pool_ledger_close(l);
	free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_ledger_replays_what_was_appended, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_ledger_torn_last_record_is_dropped, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_ledger_corrupt_last_record_is_dropped, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_ledger_zeroed_tail_is_dropped, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_ledger_middle_damage_is_an_error, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_ledger_refuses_a_foreign_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ledger_one_writer, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_ledger_time_never_goes_back, setup, teardown),
		cmocka_unit_test(test_ledger_decode_torn_header),
		cmocka_unit_test(test_ledger_decode_refuses_nul_in_name),
		cmocka_unit_test_setup_teardown(
			test_registry_writes_capacity_events, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_registry_attach_records_config_changes, setup,
			teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
