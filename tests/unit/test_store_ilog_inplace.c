// SPDX-License-Identifier: Apache-2.0
/*
 * test_store_ilog_inplace: large stable writes with the intent log on
 * (nfsd/store/ilog/ilog.h, store_ilog_set_inplace_min): written and synced in
 * their file, the log holding at most a SYNCED record; replay keeps older
 * records of the file off the bytes such a record covers, and still
 * replays newer ones; a corrupt SYNCED record (checksum, fields) stops the
 * replay there with the file, offset and reason logged; a failed sync, a
 * failed log and a failed write of the in-place path fail the write; the
 * loop's write_async leaves large writes to a work thread; a file
 * evicted from the cache with records in the log comes back as the object
 * that knows them.  The record
 * format: SYNCED encode and decode, and their bounds.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>

#include <cmocka.h>

#include "tests/unit/test_ilog_fixture.h"

#define BIG (64u * 1024)
#define INPLACE_MIN (32u * 1024)
#define SEQ_MIN (16u * 1024)

static int setup(void **state)
{
	return ilog_fixture_setup(state, INPLACE_MIN);
}

/* A crash: the log stops without a checkpoint and the store opens cold;
 * then the log opens and replays. */
static void crash_and_replay(struct ilog_fixture *x)
{
	store__ilog_abandon(x->ilog);
	x->ilog = NULL;
	x->f->st->ilog = NULL;
	fixture_reopen(x->f);
	ilog_fixture_open(x);
}

static void crash_only(struct ilog_fixture *x)
{
	store__ilog_abandon(x->ilog);
	x->ilog = NULL;
	x->f->st->ilog = NULL;
	fixture_reopen(x->f);
}

static int stable_write(struct fixture *f, struct store_obj *obj, uint64_t off,
			const void *buf, uint32_t len, bool *sync_failed)
{
	*sync_failed = false;
	return f->ops->write(f->st, obj, off, buf, len, STORE_FILE_SYNC,
			     sync_failed);
}

static void write_ok(struct fixture *f, struct store_obj *obj, uint64_t off,
		     int byte, uint32_t len)
{
	static char buf[BIG * 2];
	bool sync_failed;

	memset(buf, byte, len);
	assert_int_equal(stable_write(f, obj, off, buf, len, &sync_failed), 0);
	assert_false(sync_failed);
}

/* Reads @len bytes of @rel at @off; asserts they are all @byte. */
static void expect_bytes(struct ilog_fixture *x, const char *rel, off_t off,
			 int byte, size_t len)
{
	static char got[BIG * 2];
	char path[256];
	int fd = open(fixture_path(x->f, rel, path, sizeof(path)), O_RDONLY);

	assert_true(fd >= 0);
	assert_true(len <= sizeof(got));
	assert_int_equal(pread(fd, got, len, off), (ssize_t)len);
	close(fd);
	for (size_t i = 0; i < len; i++) {
		if (got[i] != byte) {
			fail_msg("%s: byte %zu: %#x, want %#x", rel,
				 (size_t)off + i, got[i], byte);
		}
	}
}

/* Writes @byte over @len bytes of @rel at @off behind the server's back:
 * what a lost page cache leaves on the disk. */
static void disk_bytes(struct ilog_fixture *x, const char *rel, off_t off,
		       int byte, size_t len)
{
	static char buf[BIG * 2];
	char path[256];
	int fd = open(fixture_path(x->f, rel, path, sizeof(path)), O_WRONLY);

	assert_true(fd >= 0);
	memset(buf, byte, len);
	assert_int_equal(pwrite(fd, buf, len, off), (ssize_t)len);
	close(fd);
}

static void flip(struct ilog_fixture *x, uint64_t off)
{
	int fd = open(x->path, O_RDWR);
	uint8_t b;

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &b, 1, (off_t)off), 1);
	b ^= 0x5a;
	assert_int_equal(pwrite(fd, &b, 1, (off_t)off), 1);
	close(fd);
}

static struct store_ilog_stats stats(struct ilog_fixture *x)
{
	struct store_ilog_stats s;

	store_ilog_stats(x->ilog, &s);
	return s;
}

static void test_inplace_write_of_an_unlogged_file_skips_the_log(void **state)
{
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct store_obj *obj = fixture_file(f, f->root, "f", NULL, 0);
	struct store_ilog_stats s;

	write_ok(f, obj, 0, 'N', BIG);
	/* Below the threshold: logged as before. */
	write_ok(f, obj, BIG, 's', INPLACE_MIN - 1);
	s = stats(x);
	assert_int_equal(s.inplace_writes, 1);
	assert_int_equal(s.synced_records, 0);
	assert_int_equal(s.records, 1);
	f->ops->obj_unref(obj);
	expect_bytes(x, "f", 0, 'N', BIG);
	crash_and_replay(x);
	s = stats(x);
	assert_int_equal(s.replayed, 1);
	expect_bytes(x, "f", 0, 'N', BIG);
	expect_bytes(x, "f", BIG, 's', INPLACE_MIN - 1);
}

/* Older records of the same bytes must not land on the synced ones: the
 * whole of one, the covered part of another. */
static void test_inplace_bytes_survive_replay_of_older_records(void **state)
{
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct store_obj *obj = fixture_file(f, f->root, "f", NULL, 0);
	struct store_obj *g = fixture_file(f, f->root, "g", NULL, 0);
	struct store_ilog_stats s;

	write_ok(f, obj, 0, 'o', 4096);
	write_ok(f, obj, BIG - 4096, 'p', 8192);
	write_ok(f, g, 0, 'g', 4096); /* another file: not masked */
	write_ok(f, obj, 0, 'N', BIG);
	s = stats(x);
	assert_int_equal(s.inplace_writes, 1);
	assert_int_equal(s.synced_records, 1);
	f->ops->obj_unref(obj);
	f->ops->obj_unref(g);
	crash_and_replay(x);
	s = stats(x);
	assert_int_equal(s.replayed, 3);
	expect_bytes(x, "f", 0, 'N', BIG);
	expect_bytes(x, "f", BIG, 'p', 4096);
	expect_bytes(x, "g", 0, 'g', 4096);
	assert_true(log_capture_contains("1 ranges synced in place, 2 records "
					 "kept off them"));
}

/* A record newer than the synced bytes is replayed over them. */
static void test_newer_record_over_inplace_bytes_is_replayed(void **state)
{
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct store_obj *obj = fixture_file(f, f->root, "f", NULL, 0);

	write_ok(f, obj, 0, 'o', 4096);
	write_ok(f, obj, 0, 'N', BIG);
	write_ok(f, obj, 4096, 'z', 4096);
	f->ops->obj_unref(obj);
	crash_only(x);
	/* The page cache of the last write is lost; the synced bytes are
	 * what the disk holds. */
	disk_bytes(x, "f", 4096, 'N', 4096);
	ilog_fixture_open(x);
	expect_bytes(x, "f", 0, 'N', 4096);
	expect_bytes(x, "f", 4096, 'z', 4096);
	expect_bytes(x, "f", 8192, 'N', BIG - 8192);
}

/* REMOVE after a SYNCED record: its file is gone, both records skip. */
static void test_inplace_record_of_a_removed_file_is_skipped(void **state)
{
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct store_obj *obj = fixture_file(f, f->root, "f", NULL, 0);
	struct store_ilog_stats s;

	write_ok(f, obj, 0, 'o', 4096);
	write_ok(f, obj, 0, 'N', BIG);
	f->ops->obj_unref(obj);
	assert_int_equal(f->ops->remove(f->st, f->root, "f"), 0);
	crash_and_replay(x);
	s = stats(x);
	assert_int_equal(s.replayed, 0);
	assert_int_equal(s.replay_skipped, 1);
}

/* Log layout of the tests below: one writer, so each record is its own
 * flush, padded to 4 KiB: block 0 the small record, 1 the SYNCED, 2 the
 * next small one. */
static uint64_t block_off(unsigned k)
{
	return STORE_ILOG_DATA_OFF + (uint64_t)k * STORE_ILOG_BLOCK;
}

static void three_records(struct ilog_fixture *x)
{
	struct fixture *f = x->f;
	struct store_obj *obj = fixture_file(f, f->root, "f", NULL, 0);

	write_ok(f, obj, 0, 'o', 512);
	write_ok(f, obj, 0, 'N', BIG);
	write_ok(f, obj, BIG, 'z', 512);
	f->ops->obj_unref(obj);
}

static void test_corrupt_synced_record_stops_replay(void **state)
{
	struct ilog_fixture *x = *state;
	struct store_fh fh;
	struct store_obj *obj;

	three_records(x);
	obj = fixture_lookup(x->f, x->f->root, "f");
	x->f->ops->obj_fh(obj, &fh);
	x->f->ops->obj_unref(obj);
	crash_only(x);
	/* Its upto, after the handle: the file can still be named. */
	flip(x, block_off(1) + STORE_ILOG_HEAD_BYTES + fh.len + 1);
	ilog_fixture_open(x);
	assert_int_equal(stats(x).replayed, 1);
	assert_true(log_capture_contains("corrupt record at log offset 8192"));
	assert_true(log_capture_contains("ds1:/f"));
	assert_true(log_capture_contains("file offset 0"));
	assert_true(log_capture_contains("checksum mismatch"));
	/* The datastore serves again through the log. */
	obj = fixture_lookup(x->f, x->f->root, "f");
	write_ok(x->f, obj, 0, 'a', BIG);
	x->f->ops->obj_unref(obj);
}

/* A SYNCED record with a good checksum and an upto past itself. */
static void test_synced_record_out_of_bounds_stops_replay(void **state)
{
	struct ilog_fixture *x = *state;
	uint8_t rec[STORE_ILOG_HEAD_BYTES + STORE_FH_MAX + 16];
	struct store_ilog_rec dec;
	struct store_fh fh;
	uint64_t salt, lsn;
	struct store_obj *obj;
	int fd;

	three_records(x);
	obj = fixture_lookup(x->f, x->f->root, "f");
	x->f->ops->obj_fh(obj, &fh);
	x->f->ops->obj_unref(obj);
	crash_only(x);
	fd = open(x->path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(
		pread(fd, rec, STORE_ILOG_HEAD_BYTES, (off_t)block_off(1)),
		STORE_ILOG_HEAD_BYTES);
	memcpy(&salt, rec + 8, 8);
	memcpy(&lsn, rec + 16, 8);
	store__ilog_synced_encode(rec, salt, lsn, &fh, 0, BIG, lsn + 1);
	assert_int_equal(
		store__ilog_rec_decode(rec, sizeof(rec), salt, lsn, &dec),
		-EINVAL);
	assert_int_equal(pwrite(fd, rec, store__ilog_synced_len(fh.len),
				(off_t)block_off(1)),
			 (ssize_t)store__ilog_synced_len(fh.len));
	close(fd);
	ilog_fixture_open(x);
	assert_int_equal(stats(x).replayed, 1);
	assert_true(log_capture_contains("corrupt record at log offset 8192"));
	assert_true(log_capture_contains("ds1:/f"));
	assert_true(log_capture_contains("fields out of bounds"));
}

static void test_synced_record_encode_decode(void **state)
{
	uint8_t rec[STORE_ILOG_HEAD_BYTES + STORE_FH_MAX + 16];
	struct store_fh fh = { .len = 20 };
	struct store_ilog_rec dec;
	uint32_t len = store__ilog_synced_len(fh.len);

	(void)state;
	memset(fh.data, 0xab, fh.len);
	assert_int_equal(len, (STORE_ILOG_HEAD_BYTES + 20 + 8 + 7) & ~7u);
	store__ilog_synced_encode(rec, 7, 4096, &fh, 65536, BIG, 4000);
	assert_int_equal(store__ilog_rec_decode(rec, len, 7, 4096, &dec), 0);
	assert_int_equal(dec.type, STORE_ILOG_REC_SYNCED);
	assert_int_equal(dec.off_bytes, 65536);
	assert_int_equal(dec.data_len, BIG);
	assert_int_equal(dec.upto_lsn, 4000);
	assert_int_equal(dec.rec_len, len);
	assert_int_equal(dec.fh.len, 20);
	assert_memory_equal(dec.fh.data, fh.data, 20);
	/* Short buffer, wrong place, torn body. */
	assert_int_equal(store__ilog_rec_decode(rec, len - 8, 7, 4096, &dec),
			 -EINVAL);
	assert_int_equal(store__ilog_rec_decode(rec, len, 7, 8192, &dec),
			 -ENODATA);
	rec[STORE_ILOG_HEAD_BYTES + 3] ^= 1;
	assert_int_equal(store__ilog_rec_decode(rec, len, 7, 4096, &dec),
			 -EBADMSG);
	/* No range, or an upto of nothing. */
	store__ilog_synced_encode(rec, 7, 4096, &fh, 0, 0, 4000);
	assert_int_equal(store__ilog_rec_decode(rec, len, 7, 4096, &dec),
			 -EINVAL);
	store__ilog_synced_encode(rec, 7, 4096, &fh, 0, BIG, 0);
	assert_int_equal(store__ilog_rec_decode(rec, len, 7, 4096, &dec),
			 -EINVAL);
	/* Past the largest offset. */
	store__ilog_synced_encode(rec, 7, 4096, &fh, INT64_MAX, BIG, 4000);
	assert_int_equal(store__ilog_rec_decode(rec, len, 7, 4096, &dec),
			 -EINVAL);
}

/* A failed sync of the file (sticky in its group) fails the write as a
 * sync failure: a new verifier. */
static void test_inplace_failed_sync_fails_the_write(void **state)
{
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct store_obj *obj = fixture_file(f, f->root, "f", NULL, 0);
	static char buf[BIG];
	bool sync_failed;

	pthread_mutex_lock(&local_obj(obj)->sync.lock);
	local_obj(obj)->sync.err = -EIO;
	local_obj(obj)->sync.failed_round = 1;
	pthread_mutex_unlock(&local_obj(obj)->sync.lock);
	assert_int_equal(stable_write(f, obj, 0, buf, BIG, &sync_failed), -EIO);
	assert_true(sync_failed);
	assert_int_equal(stats(x).inplace_writes, 0);
	f->ops->obj_unref(obj);
}

/* A failed log fails in-place writes too (sticky), even of a file with
 * nothing to record: no acknowledgement through a broken log. */
static void test_inplace_write_after_a_failed_log_fails(void **state)
{
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct store_obj *obj = fixture_file(f, f->root, "f", NULL, 0);
	struct store_obj *g = fixture_file(f, f->root, "g", NULL, 0);
	static char buf[BIG];
	bool sync_failed;

	x->fail_err = -EIO;
	store__ilog_write_hook(x->ilog, ilog_fixture_write, x);
	assert_int_equal(stable_write(f, obj, 0, buf, 4096, &sync_failed),
			 -EIO);
	assert_int_equal(stable_write(f, obj, 0, buf, BIG, &sync_failed), -EIO);
	assert_true(sync_failed);
	assert_int_equal(stable_write(f, g, 0, buf, BIG, &sync_failed), -EIO);
	assert_true(sync_failed);
	f->ops->obj_unref(obj);
	f->ops->obj_unref(g);
}

/* A write the file refuses (here RLIMIT_FSIZE: EFBIG) is no sync
 * failure, and nothing is recorded. */
static void test_inplace_refused_write_is_no_sync_failure(void **state)
{
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct store_obj *obj = fixture_file(f, f->root, "f", NULL, 0);
	struct rlimit old, small = { 1u << 20, 1u << 20 };
	static char buf[BIG];
	bool sync_failed;
	int err;

	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	small.rlim_max = old.rlim_max;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	err = stable_write(f, obj, 2u << 20, buf, BIG, &sync_failed);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	assert_int_equal(err, -EFBIG);
	assert_false(sync_failed);
	assert_int_equal(stats(x).inplace_writes, 0);
	f->ops->obj_unref(obj);
}

static void noop_done(void *arg, int err)
{
	(void)arg;
	(void)err;
	fail_msg("a large write_async must not be accepted");
}

/* The loop cannot sync: a large write_async goes to a work thread before
 * it writes anything. */
static void test_inplace_write_async_is_eagain(void **state)
{
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct store_obj *obj = fixture_file(f, f->root, "f", NULL, 0);
	static char buf[BIG];
	struct store_write_wait w;
	struct stat sb;
	char path[256];

	memset(buf, 'A', sizeof(buf));
	assert_int_equal(f->ops->write_async(f->st, obj, 0, buf, BIG, &w,
					     noop_done, NULL),
			 -EAGAIN);
	assert_int_equal(stat(fixture_path(f, "f", path, sizeof(path)), &sb),
			 0);
	assert_int_equal(sb.st_size, 0);
	f->ops->obj_unref(obj);
}

/* 0 is today's log: large writes copied into it. */
static void test_inplace_min_zero_logs_everything(void **state)
{
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct store_obj *obj = fixture_file(f, f->root, "f", NULL, 0);
	struct store_ilog_stats s;

	store_ilog_set_inplace_min(x->ilog, 0);
	write_ok(f, obj, 0, 'L', BIG);
	s = stats(x);
	assert_int_equal(s.inplace_writes, 0);
	assert_int_equal(s.records, 1);
	f->ops->obj_unref(obj);
}

/* The decision alone: size, then a sequential stream, each rule off at 0. */
static void test_inplace_rule(void **state)
{
	const uint64_t far = 64ull << 20, w = STORE_ILOG_SEQ_WINDOW;

	(void)state;
	/* Size: at the threshold and above, wherever the write is. */
	assert_true(
		store__ilog_inplace_rule(INPLACE_MIN, 0, far, 0, INPLACE_MIN));
	assert_false(store__ilog_inplace_rule(INPLACE_MIN, 0, far, 0,
					      INPLACE_MIN - 1));
	assert_false(store__ilog_inplace_rule(0, 0, far, far, 1u << 20));
	/* Sequential: where the last write ended, from SEQ_MIN. */
	assert_true(store__ilog_inplace_rule(INPLACE_MIN, SEQ_MIN, far, far,
					     SEQ_MIN));
	assert_false(store__ilog_inplace_rule(INPLACE_MIN, SEQ_MIN, far, far,
					      SEQ_MIN - 1));
	assert_false(
		store__ilog_inplace_rule(INPLACE_MIN, 0, far, far, SEQ_MIN));
	/* A new file's first write at 0 starts a stream. */
	assert_true(store__ilog_inplace_rule(0, SEQ_MIN, 0, 0, SEQ_MIN));
	/* Out of order within the window (WRITEs in flight): still the
	 * stream; past it: random, logged. */
	assert_true(store__ilog_inplace_rule(0, SEQ_MIN, far, far - SEQ_MIN,
					     SEQ_MIN));
	assert_true(
		store__ilog_inplace_rule(0, SEQ_MIN, far, far - w, SEQ_MIN));
	assert_true(
		store__ilog_inplace_rule(0, SEQ_MIN, far, far + w, SEQ_MIN));
	assert_false(store__ilog_inplace_rule(0, SEQ_MIN, far, far - w - 1,
					      SEQ_MIN));
	assert_false(store__ilog_inplace_rule(0, SEQ_MIN, far, far + w + 1,
					      SEQ_MIN));
	assert_false(store__ilog_inplace_rule(0, SEQ_MIN, 0, far, SEQ_MIN));
}

/* A stream of SEQ_MIN writes goes in place; a write of the same size far
 * from it is logged, and a small one that continues it too. */
static void test_sequential_stream_goes_in_place(void **state)
{
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct store_obj *obj = fixture_file(f, f->root, "f", NULL, 0);
	const uint64_t far = 8ull << 20;
	struct store_ilog_stats s;

	store_ilog_set_inplace(x->ilog, INPLACE_MIN, SEQ_MIN);
	for (unsigned i = 0; i < 3; i++) {
		write_ok(f, obj, (uint64_t)i * SEQ_MIN, 'a' + (int)i, SEQ_MIN);
	}
	s = stats(x);
	assert_int_equal(s.inplace_writes, 3);
	assert_int_equal(s.records, 0); /* no records: no SYNCED either */
	write_ok(f, obj, far, 'r', SEQ_MIN);
	s = stats(x);
	assert_int_equal(s.inplace_writes, 3);
	assert_int_equal(s.records, 1);
	/* The next of that one's stream: in place, with a SYNCED record
	 * (the file has a record replay could write). */
	write_ok(f, obj, far + SEQ_MIN, 's', SEQ_MIN);
	write_ok(f, obj, far + 2 * SEQ_MIN, 't', 4096);
	s = stats(x);
	assert_int_equal(s.inplace_writes, 4);
	assert_int_equal(s.synced_records, 1);
	assert_int_equal(s.records, 3);
	f->ops->obj_unref(obj);
	crash_and_replay(x);
	expect_bytes(x, "f", 0, 'a', SEQ_MIN);
	expect_bytes(x, "f", 2 * SEQ_MIN, 'c', SEQ_MIN);
	expect_bytes(x, "f", far, 'r', SEQ_MIN);
	expect_bytes(x, "f", far + SEQ_MIN, 's', SEQ_MIN);
	expect_bytes(x, "f", far + 2 * SEQ_MIN, 't', 4096);
}

/* The overlap rule holds on the sequential path (the size path's SYNCED
 * record, reused): a stream written in place over an older logged write
 * keeps it off at replay; a logged write newer than the stream is
 * replayed over it. */
static void test_sequential_inplace_over_older_record(void **state)
{
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct store_obj *obj = fixture_file(f, f->root, "f", NULL, 0);

	store_ilog_set_inplace(x->ilog, INPLACE_MIN, SEQ_MIN);
	write_ok(f, obj, 4096, 'o', 8192); /* small: logged */
	write_ok(f, obj, 0, 'N', SEQ_MIN); /* near its end: the stream */
	write_ok(f, obj, SEQ_MIN, 'N', SEQ_MIN);
	assert_int_equal(stats(x).synced_records, 2);
	write_ok(f, obj, SEQ_MIN + 4096, 'z', 4096); /* newer, logged */
	f->ops->obj_unref(obj);
	crash_only(x);
	/* The newest write's page cache is lost: the disk has the stream's
	 * bytes there, the log the newer ones. */
	disk_bytes(x, "f", SEQ_MIN + 4096, 'N', 4096);
	ilog_fixture_open(x);
	expect_bytes(x, "f", 0, 'N', SEQ_MIN + 4096);
	expect_bytes(x, "f", SEQ_MIN + 4096, 'z', 4096);
	expect_bytes(x, "f", SEQ_MIN + 8192, 'N', SEQ_MIN - 8192);
	assert_true(log_capture_contains("2 ranges synced in place, 1 records "
					 "kept off them"));
}

/*
 * A file evicted from the cache while the log holds records of it: the
 * next resolve must give the object that knows them (its ilog_lsn).  A new
 * object knew none: the in-place write logged no SYNCED record, and
 * replay put the older record back over the newer synced bytes (an
 * acknowledged write lost at a power cut).
 */
static void test_inplace_after_eviction_keeps_older_record_off(void **state)
{
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct store_obj *obj = fixture_file(f, f->root, "f", NULL, 0);
	struct store_fh fh = obj->fh;
	struct store_obj *g;

	write_ok(f, obj, 0, 'o', 4096); /* logged */
	f->ops->obj_unref(obj);
	/* One entry: g's takes f's place. */
	assert_int_equal(f->ops->cache_resize(f->st, 1), 0);
	g = fixture_file(f, f->root, "g", NULL, 0);
	f->ops->obj_unref(g);
	assert_int_equal(f->ops->resolve(f->st, &fh, &obj), 0);
	write_ok(f, obj, 0, 'N', BIG); /* in place, over the record */
	assert_int_equal(stats(x).synced_records, 1);
	f->ops->obj_unref(obj);
	crash_and_replay(x);
	expect_bytes(x, "f", 0, 'N', BIG);
	assert_true(log_capture_contains("1 ranges synced in place, 1 records "
					 "kept off them"));
}

/*
 * The narrower form: f's object held by a request that has logged nothing
 * yet when g takes its place in the cache.  A concurrent resolve of f must
 * give the held object: a second one would not know the record logged
 * through the first (ilog_lsn 0), its in-place write would log no SYNCED
 * record, and replay would put the older 'o' back over the acknowledged
 * 'N'.  On the old cache: 0 SYNCED records.
 */
static void test_inplace_through_second_resolve_while_held(void **state)
{
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct store_obj *obj = fixture_file(f, f->root, "f", NULL, 0);
	struct store_fh fh = obj->fh;
	struct store_obj *again, *g;

	assert_int_equal(f->ops->cache_resize(f->st, 1), 0);
	g = fixture_file(f, f->root, "g", NULL, 0);
	f->ops->obj_unref(g);
	assert_int_equal(f->ops->resolve(f->st, &fh, &again), 0);
	assert_ptr_equal(again, obj);
	write_ok(f, obj, 0, 'o', 4096); /* logged, through the first */
	write_ok(f, again, 0, 'N', BIG); /* in place, through the second */
	assert_int_equal(stats(x).synced_records, 1);
	f->ops->obj_unref(again);
	f->ops->obj_unref(obj);
	crash_and_replay(x);
	expect_bytes(x, "f", 0, 'N', BIG);
}

/* Removed after its eviction: the object the log holds answers stale,
 * as a fresh open would. */
static void test_evicted_then_removed_file_is_stale(void **state)
{
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct store_obj *obj = fixture_file(f, f->root, "f", NULL, 0);
	struct store_fh fh = obj->fh;
	struct store_obj *g;
	char path[256];

	write_ok(f, obj, 0, 'o', 4096);
	f->ops->obj_unref(obj);
	assert_int_equal(f->ops->cache_resize(f->st, 1), 0);
	g = fixture_file(f, f->root, "g", NULL, 0);
	f->ops->obj_unref(g);
	assert_int_equal(unlink(fixture_path(f, "f", path, sizeof(path))), 0);
	assert_int_equal(f->ops->resolve(f->st, &fh, &obj), -ESTALE);
}

/* A logged write_async's hook: its error into *arg (1 until called). */
static void done_into(void *arg, int err)
{
	*(int *)arg = err;
}

/* On the loop: a stream's next write goes to a work thread (-EAGAIN,
 * nothing written); one far from it is logged there. */
static void test_sequential_write_async(void **state)
{
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct store_obj *obj = fixture_file(f, f->root, "f", NULL, 0);
	static char buf[SEQ_MIN];
	struct store_write_wait w;
	struct stat sb;
	char path[256];
	int done = 1;

	store_ilog_set_inplace(x->ilog, INPLACE_MIN, SEQ_MIN);
	write_ok(f, obj, 0, 'a', SEQ_MIN);
	memset(buf, 'b', sizeof(buf));
	assert_int_equal(f->ops->write_async(f->st, obj, SEQ_MIN, buf, SEQ_MIN,
					     &w, noop_done, NULL),
			 -EAGAIN);
	assert_int_equal(stat(fixture_path(f, "f", path, sizeof(path)), &sb),
			 0);
	assert_int_equal(sb.st_size, SEQ_MIN);
	assert_int_equal(f->ops->write_async(f->st, obj, 64ull << 20, buf,
					     SEQ_MIN, &w, done_into, &done),
			 0);
	store_ilog_drain(x->ilog);
	assert_int_equal(done, 0);
	assert_int_equal(stats(x).records, 1);
	f->ops->obj_unref(obj);
}

#define T(name)                                                                \
	cmocka_unit_test_setup_teardown(name, setup, ilog_fixture_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_inplace_write_of_an_unlogged_file_skips_the_log),
		T(test_inplace_bytes_survive_replay_of_older_records),
		T(test_newer_record_over_inplace_bytes_is_replayed),
		T(test_inplace_record_of_a_removed_file_is_skipped),
		T(test_corrupt_synced_record_stops_replay),
		T(test_synced_record_out_of_bounds_stops_replay),
		cmocka_unit_test(test_synced_record_encode_decode),
		T(test_inplace_failed_sync_fails_the_write),
		T(test_inplace_write_after_a_failed_log_fails),
		T(test_inplace_refused_write_is_no_sync_failure),
		T(test_inplace_write_async_is_eagain),
		T(test_inplace_min_zero_logs_everything),
		cmocka_unit_test(test_inplace_rule),
		T(test_sequential_stream_goes_in_place),
		T(test_sequential_inplace_over_older_record),
		T(test_sequential_write_async),
		T(test_inplace_after_eviction_keeps_older_record_off),
		T(test_inplace_through_second_resolve_while_held),
		T(test_evicted_then_removed_file_is_stale),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
