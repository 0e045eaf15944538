// SPDX-License-Identifier: Apache-2.0
/*
 * test_store_local_direct: in-place stable writes written O_DIRECT with
 * RWF_DSYNC (nfsd/store/local/local_direct.c, store_ilog_set_inplace_direct):
 * only over whole 4 KiB blocks the file already holds (a first write, a
 * hole, an unaligned offset or length, the key off: the buffered path);
 * the bytes read back through the store and the file, from a buffer at
 * any address; the page cache of the range is not left stale by a direct
 * write; and the log's ordering without ilog_order held: an older logged
 * record of the range is not replayed over the direct bytes after a
 * crash, a newer one is.  The same for a loop's write_async through the
 * log's ring (local_dring.c), and a failed log fails it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "nfsd/store/dring.h"
#include "tests/unit/test_ilog_fixture.h"

#define BIG (64u * 1024)
#define SMALL (8u * 1024)
#define INPLACE_MIN (32u * 1024)

static int setup(void **state)
{
	int err = ilog_fixture_setup(state, INPLACE_MIN);

	if (!err) {
		struct ilog_fixture *x = *state;

		store_ilog_set_inplace_direct(x->ilog, true);
	}
	return err;
}

static struct store_ilog_stats stats(struct ilog_fixture *x)
{
	struct store_ilog_stats s;

	store_ilog_stats(x->ilog, &s);
	return s;
}

/* A FILE_SYNC write of @len bytes of @byte at @off from @buf + @skew
 * (a request's bytes come at any address). */
static void write_at(struct fixture *f, struct store_obj *obj, uint64_t off,
		     int byte, uint32_t len, size_t skew)
{
	static char buf[2 * BIG + 64];
	bool sync_failed = false;

	assert_true(len + skew <= sizeof(buf));
	memset(buf + skew, byte, len);
	assert_int_equal(f->ops->write(f->st, obj, off, buf + skew, len,
				       STORE_FILE_SYNC, &sync_failed),
			 0);
	assert_false(sync_failed);
}

/* Asserts @len bytes of @rel at @off are all @byte, read from the file. */
static void expect_file(struct ilog_fixture *x, const char *rel, off_t off,
			int byte, size_t len)
{
	static char got[2 * BIG];
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

/* The same through the store's READ. */
static void expect_store(struct fixture *f, struct store_obj *obj, uint64_t off,
			 int byte, uint32_t len)
{
	static char got[BIG];
	uint32_t n = 0;
	bool eof;

	assert_true(len <= sizeof(got));
	assert_int_equal(f->ops->read(f->st, obj, off, got, len, &n, &eof), 0);
	assert_int_equal(n, len);
	for (uint32_t i = 0; i < len; i++) {
		if (got[i] != byte) {
			fail_msg("byte %u: %#x, want %#x", (unsigned)off + i,
				 got[i], byte);
		}
	}
}

/* The first write allocates (buffered, fdatasync); the second finds the
 * blocks written and goes direct, from an unaligned buffer too. */
static void test_direct_over_written_blocks_only(void **state)
{
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct store_obj *obj = fixture_file(f, f->root, "f", NULL, 0);
	struct store_ilog_stats s;

	write_at(f, obj, 0, 'a', 2 * BIG, 0);
	assert_int_equal(stats(x).direct_writes, 0);
	write_at(f, obj, 0, 'b', BIG, 0);
	write_at(f, obj, BIG, 'c', BIG, 7);
	s = stats(x);
	assert_int_equal(s.inplace_writes, 3);
	assert_int_equal(s.direct_writes, 2);
	assert_int_equal(s.records, 0);
	expect_file(x, "f", 0, 'b', BIG);
	expect_file(x, "f", BIG, 'c', BIG);
	expect_store(f, obj, BIG, 'c', BIG);
	f->ops->obj_unref(obj);
}

/* Unaligned offset or length, a hole, past the end: buffered, and the
 * bytes right all the same. */
static void test_no_direct_where_metadata_or_alignment(void **state)
{
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct store_obj *obj = fixture_file(f, f->root, "f", NULL, 0);
	char path[256];
	int fd;

	write_at(f, obj, 0, 'a', 2 * BIG, 0);
	write_at(f, obj, 512, 'u', BIG, 0); /* offset */
	write_at(f, obj, 0, 'v', BIG - 512, 0); /* length */
	write_at(f, obj, BIG, 'e', 2 * BIG, 0); /* past the end */
	assert_int_equal(stats(x).direct_writes, 0);
	/* A hole punched in written blocks: that write allocates again. */
	fd = open(fixture_path(f, "f", path, sizeof(path)), O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(fallocate(fd,
				   FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				   0, BIG),
			 0);
	close(fd);
	write_at(f, obj, 0, 'h', BIG, 0);
	assert_int_equal(stats(x).direct_writes, 0);
	assert_int_equal(stats(x).inplace_writes, 5);
	expect_file(x, "f", 0, 'h', BIG);
	expect_file(x, "f", BIG, 'e', 2 * BIG);
	f->ops->obj_unref(obj);
}

/* intent_log_inplace_direct = no: never direct. */
static void test_key_off_never_direct(void **state)
{
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct store_obj *obj = fixture_file(f, f->root, "f", NULL, 0);

	store_ilog_set_inplace_direct(x->ilog, false);
	write_at(f, obj, 0, 'a', BIG, 0);
	write_at(f, obj, 0, 'b', BIG, 0);
	assert_int_equal(stats(x).inplace_writes, 2);
	assert_int_equal(stats(x).direct_writes, 0);
	expect_file(x, "f", 0, 'b', BIG);
	f->ops->obj_unref(obj);
}

/* Cached pages of the range (an UNSTABLE write, read back) are not
 * served stale after a direct write over them. */
static void test_direct_write_over_cached_pages(void **state)
{
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct store_obj *obj = fixture_file(f, f->root, "f", NULL, 0);
	static char buf[BIG];
	bool sync_failed = false;

	write_at(f, obj, 0, 'a', BIG, 0);
	memset(buf, 'u', sizeof(buf));
	assert_int_equal(f->ops->write(f->st, obj, 0, buf, BIG, STORE_UNSTABLE,
				       &sync_failed),
			 0);
	expect_store(f, obj, 0, 'u', BIG);
	write_at(f, obj, 0, 'd', BIG, 0);
	assert_int_equal(stats(x).direct_writes, 1);
	expect_store(f, obj, 0, 'd', BIG);
	expect_file(x, "f", 0, 'd', BIG);
	f->ops->obj_unref(obj);
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

/* An 8 KiB logged record, then a direct write over it: the SYNCED record
 * keeps replay off the direct bytes; a record after it is replayed. */
static void test_direct_bytes_survive_replay_of_older_record(void **state)
{
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct store_obj *obj = fixture_file(f, f->root, "f", NULL, 0);
	struct store_ilog_stats s;

	write_at(f, obj, 0, 'a', 2 * BIG, 0);
	write_at(f, obj, 0, 'o', SMALL, 0); /* logged: below INPLACE_MIN */
	write_at(f, obj, 0, 'd', BIG, 0); /* direct over it */
	write_at(f, obj, BIG, 'n', SMALL, 0); /* logged after */
	s = stats(x);
	assert_int_equal(s.direct_writes, 1);
	assert_int_equal(s.synced_records, 1);
	assert_int_equal(s.records, 3);
	f->ops->obj_unref(obj);
	crash_and_replay(x);
	expect_file(x, "f", 0, 'd', BIG);
	expect_file(x, "f", BIG, 'n', SMALL);
	expect_file(x, "f", BIG + SMALL, 'a', BIG - SMALL);
}

/* ---- write_async through the log's ring (local_dring.c) ---------------- */

struct async_done {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	int err; /* 1 until called */
	int calls;
};

static void async_done_cb(void *arg, int err)
{
	struct async_done *d = arg;

	pthread_mutex_lock(&d->lock);
	d->err = err;
	d->calls++;
	pthread_cond_broadcast(&d->cv);
	pthread_mutex_unlock(&d->lock);
}

/* A loop's stable WRITE: write_async, then its hook awaited. */
static int write_async_at(struct fixture *f, struct store_obj *obj,
			  uint64_t off, int byte, uint32_t len, size_t skew,
			  struct store_write_wait *w)
{
	static char buf[2 * BIG + 64];
	struct async_done d = { PTHREAD_MUTEX_INITIALIZER,
				PTHREAD_COND_INITIALIZER, 1, 0 };
	int err;

	memset(buf + skew, byte, len);
	memset(w, 0, sizeof(*w));
	err = f->ops->write_async(f->st, obj, off, buf + skew, len, w,
				  async_done_cb, &d);
	if (err) {
		return err;
	}
	pthread_mutex_lock(&d.lock);
	while (!d.calls) {
		pthread_cond_wait(&d.cv, &d.lock);
	}
	pthread_mutex_unlock(&d.lock);
	assert_int_equal(d.calls, 1);
	return d.err;
}

static int setup_ring(void **state)
{
	int err = setup(state);

	if (!err) {
		struct ilog_fixture *x = *state;

		err = store_ilog_set_inplace_uring(x->ilog, true);
	}
	return err;
}

/* Over written blocks a loop's large stable write goes through the ring
 * (no work thread): stable when the hook runs, the bytes in the file,
 * the post-op attributes filled after the write; over a hole or
 * unaligned it is left to a work thread (-EAGAIN, nothing written). */
static void test_async_direct_through_the_ring(void **state)
{
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct store_obj *obj = fixture_file(f, f->root, "f", NULL, 0);
	struct store_write_wait w;
	struct store_dring_stats rs;

	assert_int_equal(write_async_at(f, obj, 0, 'a', BIG, 0, &w), -EAGAIN);
	write_at(f, obj, 0, 'a', 2 * BIG, 0);
	assert_int_equal(write_async_at(f, obj, 0, 'b', BIG, 3, &w), 0);
	assert_true(w.after_set);
	assert_int_equal(w.after.size_bytes, 2 * BIG);
	assert_int_equal(write_async_at(f, obj, BIG, 'c', BIG, 0, &w), 0);
	assert_int_equal(write_async_at(f, obj, 512, 'u', BIG, 0, &w), -EAGAIN);
	assert_int_equal(write_async_at(f, obj, BIG, 'e', 2 * BIG, 0, &w),
			 -EAGAIN); /* past the end */
	store_dring_stats(x->ilog->dring, &rs);
	assert_int_equal(rs.writes, 2);
	assert_int_equal(stats(x).direct_writes, 2);
	expect_file(x, "f", 0, 'b', BIG);
	expect_file(x, "f", BIG, 'c', BIG);
	expect_store(f, obj, 0, 'b', BIG);
	f->ops->obj_unref(obj);
}

/* An older logged record under a ring write: its SYNCED record is
 * flushed before the hook runs, so a crash right after does not replay
 * the old bytes over the new ones. */
static void test_async_direct_survives_replay_of_older_record(void **state)
{
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct store_obj *obj = fixture_file(f, f->root, "f", NULL, 0);
	struct store_write_wait w;

	write_at(f, obj, 0, 'a', 2 * BIG, 0);
	write_at(f, obj, 0, 'o', SMALL, 0); /* logged */
	assert_int_equal(write_async_at(f, obj, 0, 'd', BIG, 0, &w), 0);
	assert_int_equal(stats(x).synced_records, 1);
	f->ops->obj_unref(obj);
	crash_and_replay(x);
	expect_file(x, "f", 0, 'd', BIG);
	expect_file(x, "f", BIG, 'a', BIG);
}

/* A log that failed: the ring's write is not called stable. */
static void test_async_direct_after_a_failed_log(void **state)
{
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct store_obj *obj = fixture_file(f, f->root, "f", NULL, 0);
	struct store_write_wait w;
	bool sync_failed = false;
	static char buf[SMALL];

	write_at(f, obj, 0, 'a', 2 * BIG, 0);
	store__ilog_write_hook(x->ilog, ilog_fixture_write, x);
	x->fail_err = -EIO;
	memset(buf, 'o', sizeof(buf));
	assert_int_equal(f->ops->write(f->st, obj, 0, buf, SMALL,
				       STORE_FILE_SYNC, &sync_failed),
			 -EIO);
	assert_int_equal(write_async_at(f, obj, 0, 'd', BIG, 0, &w), -EIO);
	f->ops->obj_unref(obj);
}

#define T(name)                                                                \
	cmocka_unit_test_setup_teardown(name, setup, ilog_fixture_teardown)

#define TR(name)                                                               \
	cmocka_unit_test_setup_teardown(name, setup_ring, ilog_fixture_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_direct_over_written_blocks_only),
		T(test_no_direct_where_metadata_or_alignment),
		T(test_key_off_never_direct),
		T(test_direct_write_over_cached_pages),
		T(test_direct_bytes_survive_replay_of_older_record),
		TR(test_async_direct_through_the_ring),
		TR(test_async_direct_survives_replay_of_older_record),
		TR(test_async_direct_after_a_failed_log),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
