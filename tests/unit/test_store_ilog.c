// SPDX-License-Identifier: Apache-2.0
/*
 * test_store_ilog: the intent log (nfsd/store/ilog/ilog*.c) under the local
 * store: stable writes logged and flushed in groups across threads (the
 * two flushes in flight held by an injected write, so the test knows who
 * entered meanwhile), replay after a crash (the log abandoned without its
 * checkpoint, the files cut back as if their page cache had been lost),
 * a torn tail and a corrupt record, a full ring that waits for a
 * checkpoint, a failed log write, and the changes replay must not undo:
 * COMMIT over logged bytes, a truncate, REMOVE and RENAME; write_async
 * (the loop's path): answered by the flush thread after its flush, and
 * -EAGAIN, never a wait, on a full ring.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tests/unit/test_ilog_fixture.h"

#define NTHREADS 8

static int setup(void **state)
{
	return ilog_fixture_setup(state, 0);
}

/* A crash: the log stops without a checkpoint, the server's objects go,
 * and the store opens again cold; then the log opens and replays. */
static void crash_and_restart(struct ilog_fixture *x)
{
	store__ilog_abandon(x->ilog);
	x->ilog = NULL;
	x->f->st->ilog = NULL;
	fixture_reopen(x->f);
}

static void restart_log(struct ilog_fixture *x)
{
	ilog_fixture_open(x);
}

/* Cuts @rel back to @size, as a file whose unsynced pages were lost. */
static void lose_file(struct ilog_fixture *x, const char *rel, off_t size)
{
	char path[256];

	assert_int_equal(
		truncate(fixture_path(x->f, rel, path, sizeof(path)), size), 0);
}

static void read_file(struct ilog_fixture *x, const char *rel, void *buf,
		      size_t len, size_t *got)
{
	char path[256];
	int fd = open(fixture_path(x->f, rel, path, sizeof(path)), O_RDONLY);
	ssize_t n;

	assert_true(fd >= 0);
	n = pread(fd, buf, len, 0);
	assert_true(n >= 0);
	*got = (size_t)n;
	close(fd);
}

static int stable_write(struct fixture *f, struct store_obj *obj, uint64_t off,
			const void *buf, uint32_t len)
{
	bool sync_failed = false;

	return f->ops->write(f->st, obj, off, buf, len, STORE_FILE_SYNC,
			     &sync_failed);
}

/* Flips one byte of the log file at @off. */
static void log_flip(struct ilog_fixture *x, uint64_t off)
{
	int fd = open(x->path, O_RDWR);
	uint8_t b;

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &b, 1, (off_t)off), 1);
	b ^= 0x5a;
	assert_int_equal(pwrite(fd, &b, 1, (off_t)off), 1);
	close(fd);
}

static void test_ilog_stable_write_is_logged_and_read_back(void **state)
{
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct store_ilog_stats s;
	struct store_obj *obj = fixture_file(f, f->root, "f", NULL, 0);
	char buf[16] = "";
	uint32_t nread = 0;
	bool eof = false;

	assert_int_equal(stable_write(f, obj, 0, "hello", 5), 0);
	assert_int_equal(stable_write(f, obj, 5, " world", 6), 0);
	assert_int_equal(
		f->ops->read(f->st, obj, 0, buf, sizeof(buf), &nread, &eof), 0);
	assert_int_equal(nread, 11);
	assert_memory_equal(buf, "hello world", 11);
	store_ilog_stats(x->ilog, &s);
	assert_int_equal(s.records, 2);
	assert_int_equal(s.flushes, 2);
	f->ops->obj_unref(obj);
}

struct writer {
	struct fixture *f;
	struct store_obj *obj;
	int err;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;

	w->err = stable_write(w->f, w->obj, 0, "group", 5);
	return NULL;
}

static void wait_waiters(struct store_ilog *ilog, uint32_t n)
{
	while (store__ilog_waiters(ilog) < n) {
		sched_yield();
	}
}

/* Waits until the injected write has been called @n times. */
static void wait_writes(struct ilog_fixture *x, unsigned n)
{
	pthread_mutex_lock(&x->lock);
	while (x->writes < n) {
		pthread_cond_wait(&x->cond, &x->lock);
	}
	pthread_mutex_unlock(&x->lock);
}

static void test_ilog_one_flush_covers_writers_of_many_files(void **state)
{
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct writer w[NTHREADS];
	pthread_t t[NTHREADS];
	struct store_ilog_stats s;
	char name[16];

	store__ilog_write_hook(x->ilog, ilog_fixture_write, x);
	x->gate_closed = true;
	for (int i = 0; i < NTHREADS; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		w[i] = (struct writer){
			.f = f, .obj = fixture_file(f, f->root, name, NULL, 0)
		};
	}
	/* Two writers, two flushes in flight (both held in the write). */
	for (int i = 0; i < 2; i++) {
		assert_int_equal(
			pthread_create(&t[i], NULL, writer_main, &w[i]), 0);
		wait_writes(x, (unsigned)i + 1);
	}
	/* The six behind them append and wait: one flush for them all. */
	for (int i = 2; i < NTHREADS; i++) {
		assert_int_equal(
			pthread_create(&t[i], NULL, writer_main, &w[i]), 0);
	}
	wait_waiters(x->ilog, NTHREADS);
	pthread_mutex_lock(&x->lock);
	x->gate_closed = false;
	pthread_cond_broadcast(&x->cond);
	pthread_mutex_unlock(&x->lock);
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(w[i].err, 0);
		f->ops->obj_unref(w[i].obj);
	}
	store_ilog_stats(x->ilog, &s);
	assert_int_equal(s.records, NTHREADS);
	assert_int_equal(s.flushes, 3);
	assert_int_equal(x->writes, 3);
}

static void test_ilog_replay_restores_data_and_size_past_eof(void **state)
{
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct store_obj *obj = fixture_file(f, f->root, "f", "abc", 3);
	static char data[8192], got[8192 + 4096];
	struct store_ilog_stats s;
	size_t n = 0;

	memset(data, 'D', sizeof(data));
	/* Past the end of the file: replay must bring the size back. */
	assert_int_equal(stable_write(f, obj, 4096, data, sizeof(data)), 0);
	f->ops->obj_unref(obj);
	crash_and_restart(x);
	lose_file(x, "f", 3);
	restart_log(x);
	store_ilog_stats(x->ilog, &s);
	assert_int_equal(s.replayed, 1);
	read_file(x, "f", got, sizeof(got), &n);
	assert_int_equal(n, 4096 + sizeof(data));
	assert_memory_equal(got, "abc", 3);
	assert_memory_equal(got + 4096, data, sizeof(data));
	/* The log was reused: a second restart replays nothing. */
	crash_and_restart(x);
	restart_log(x);
	store_ilog_stats(x->ilog, &s);
	assert_int_equal(s.replayed, 0);
}

/* Log offset of the data of the record in flush @k (each flush its own
 * 4 KiB block here: small records, one writer). */
static uint64_t record_data_off(struct fixture *f, struct store_obj *obj,
				unsigned k)
{
	struct store_fh fh;

	f->ops->obj_fh(obj, &fh);
	return STORE_ILOG_DATA_OFF + (uint64_t)k * STORE_ILOG_BLOCK +
	       STORE_ILOG_HEAD_BYTES + fh.len;
}

static void test_ilog_torn_tail_is_dropped_and_logged(void **state)
{
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct store_obj *obj = fixture_file(f, f->root, "f", NULL, 0);
	struct store_ilog_stats s;
	char got[16];
	size_t n = 0;
	uint64_t off;

	assert_int_equal(stable_write(f, obj, 0, "first", 5), 0);
	assert_int_equal(stable_write(f, obj, 5, "second", 6), 0);
	off = record_data_off(f, obj, 1);
	f->ops->obj_unref(obj);
	crash_and_restart(x);
	log_flip(x, off);
	lose_file(x, "f", 0);
	restart_log(x);
	store_ilog_stats(x->ilog, &s);
	assert_int_equal(s.replayed, 1);
	read_file(x, "f", got, sizeof(got), &n);
	assert_int_equal(n, 5);
	assert_memory_equal(got, "first", 5);
	assert_true(log_capture_contains("torn tail"));
	assert_true(log_capture_contains("checksum mismatch"));
}

static void test_ilog_corrupt_record_stops_replay_and_log_opens(void **state)
{
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct store_obj *obj = fixture_file(f, f->root, "f", NULL, 0);
	struct store_ilog_stats s;
	bool sync_failed = false;
	char got[16];
	size_t n = 0;
	uint64_t off;

	assert_int_equal(stable_write(f, obj, 0, "one", 3), 0);
	assert_int_equal(stable_write(f, obj, 3, "two", 3), 0);
	assert_int_equal(stable_write(f, obj, 6, "six", 3), 0);
	off = record_data_off(f, obj, 0);
	f->ops->obj_unref(obj);
	crash_and_restart(x);
	log_flip(x, off);
	lose_file(x, "f", 0);
	restart_log(x);
	store_ilog_stats(x->ilog, &s);
	assert_int_equal(s.replayed, 0);
	read_file(x, "f", got, sizeof(got), &n);
	assert_int_equal(n, 0);
	/* Valid records follow it: corruption, with the file and why. */
	assert_true(log_capture_contains("corrupt record at log offset 4096"));
	assert_true(log_capture_contains("ds1:/f"));
	assert_true(log_capture_contains("file offset 0"));
	assert_true(log_capture_contains("checksum mismatch"));
	/* The log serves again. */
	obj = fixture_lookup(f, f->root, "f");
	assert_int_equal(f->ops->write(f->st, obj, 0, "ok", 2, STORE_FILE_SYNC,
				       &sync_failed),
			 0);
	f->ops->obj_unref(obj);
}

struct filler {
	struct fixture *f;
	struct store_obj *obj;
	unsigned count;
	int err;
};

static void *filler_main(void *arg)
{
	static char block[256 * 1024];
	struct filler *w = arg;

	memset(block, 'F', sizeof(block));
	for (unsigned i = 0; i < w->count && !w->err; i++) {
		w->err = stable_write(w->f, w->obj,
				      (uint64_t)(i % 16) * sizeof(block), block,
				      sizeof(block));
	}
	return NULL;
}

static void test_ilog_full_ring_waits_for_a_checkpoint(void **state)
{
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct filler w = { .f = f, .count = 96 }; /* 24 MiB: three rings */
	struct store_ilog_stats s;
	pthread_t t;

	w.obj = fixture_file(f, f->root, "big", NULL, 0);
	/* Holding the file's sync group holds the checkpoint's fsync, so
	 * the writer must meet a full ring. */
	pthread_mutex_lock(&local_obj(w.obj)->sync.lock);
	assert_int_equal(pthread_create(&t, NULL, filler_main, &w), 0);
	do {
		sched_yield();
		store_ilog_stats(x->ilog, &s);
	} while (s.full_waits == 0);
	pthread_mutex_unlock(&local_obj(w.obj)->sync.lock);
	pthread_join(t, NULL);
	assert_int_equal(w.err, 0);
	store_ilog_stats(x->ilog, &s);
	assert_int_equal(s.records, 96);
	assert_true(s.checkpoints >= 2);
	f->ops->obj_unref(w.obj);
}

static void test_ilog_failed_log_write_fails_stable_writes(void **state)
{
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct store_obj *obj = fixture_file(f, f->root, "f", NULL, 0);
	bool sync_failed = false;

	x->fail_err = -EIO;
	store__ilog_write_hook(x->ilog, ilog_fixture_write, x);
	assert_int_equal(f->ops->write(f->st, obj, 0, "x", 1, STORE_FILE_SYNC,
				       &sync_failed),
			 -EIO);
	assert_true(sync_failed);
	x->fail_err = 0;
	sync_failed = false;
	/* Sticky: no acknowledgement without a working log. */
	assert_int_equal(f->ops->write(f->st, obj, 0, "x", 1, STORE_DATA_SYNC,
				       &sync_failed),
			 -EIO);
	assert_true(sync_failed);
	assert_true(log_capture_contains("log write failed"));
	f->ops->obj_unref(obj);
}

static void test_ilog_commit_of_newer_bytes_survives_replay(void **state)
{
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct store_obj *obj = fixture_file(f, f->root, "f", NULL, 0);
	bool sync_failed = false;
	char got[16];
	size_t n = 0;

	assert_int_equal(stable_write(f, obj, 0, "old", 3), 0);
	assert_int_equal(f->ops->write(f->st, obj, 0, "new", 3, STORE_UNSTABLE,
				       &sync_failed),
			 0);
	assert_int_equal(f->ops->commit(f->st, obj, 0, 0, &sync_failed), 0);
	f->ops->obj_unref(obj);
	crash_and_restart(x);
	restart_log(x);
	read_file(x, "f", got, sizeof(got), &n);
	assert_int_equal(n, 3);
	assert_memory_equal(got, "new", 3);
}

static void test_ilog_truncate_survives_replay(void **state)
{
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct store_obj *obj = fixture_file(f, f->root, "f", NULL, 0);
	struct store_sattr trunc = { .set_size = true, .size_bytes = 2 };
	char got[16];
	size_t n = 0;

	assert_int_equal(stable_write(f, obj, 0, "long data", 9), 0);
	assert_int_equal(f->ops->setattr(f->st, obj, &trunc, &test_root_cred),
			 0);
	f->ops->obj_unref(obj);
	crash_and_restart(x);
	restart_log(x);
	read_file(x, "f", got, sizeof(got), &n);
	assert_int_equal(n, 2);
	assert_memory_equal(got, "lo", 2);
}

static void test_ilog_removed_file_is_skipped(void **state)
{
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct store_obj *obj = fixture_file(f, f->root, "f", NULL, 0);
	struct store_ilog_stats s;
	struct store_obj *g;
	char got[16];
	size_t n = 0;

	assert_int_equal(stable_write(f, obj, 0, "gone", 4), 0);
	f->ops->obj_unref(obj);
	assert_int_equal(f->ops->remove(f->st, f->root, "f"), 0);
	/* A new file, perhaps on the freed inode: never written by replay. */
	g = fixture_file(f, f->root, "g", "keep", 4);
	f->ops->obj_unref(g);
	crash_and_restart(x);
	restart_log(x);
	store_ilog_stats(x->ilog, &s);
	assert_int_equal(s.replayed, 0);
	assert_int_equal(s.replay_skipped, 1);
	read_file(x, "g", got, sizeof(got), &n);
	assert_int_equal(n, 4);
	assert_memory_equal(got, "keep", 4);
}

static void test_ilog_renamed_file_gets_its_data(void **state)
{
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct store_obj *obj = fixture_file(f, f->root, "f", NULL, 0);
	struct store_obj *old = fixture_file(f, f->root, "g", "over", 4);
	char got[16];
	size_t n = 0;

	assert_int_equal(stable_write(f, obj, 0, "moved", 5), 0);
	assert_int_equal(stable_write(f, old, 0, "dead", 4), 0);
	f->ops->obj_unref(obj);
	f->ops->obj_unref(old);
	/* f replaces g: g's records must not land on f. */
	assert_int_equal(f->ops->rename(f->st, f->root, "f", f->root, "g"), 0);
	crash_and_restart(x);
	lose_file(x, "g", 0);
	restart_log(x);
	read_file(x, "g", got, sizeof(got), &n);
	assert_int_equal(n, 5);
	assert_memory_equal(got, "moved", 5);
}

/* write_async: its done hook, counted under the fixture's lock. */
struct async_done {
	struct ilog_fixture *x;
	int err;
	bool called;
};

static void async_done_cb(void *arg, int err)
{
	struct async_done *d = arg;

	pthread_mutex_lock(&d->x->lock);
	d->err = err;
	d->called = true;
	pthread_cond_broadcast(&d->x->cond);
	pthread_mutex_unlock(&d->x->lock);
}

static void async_wait(struct async_done *d)
{
	pthread_mutex_lock(&d->x->lock);
	while (!d->called) {
		pthread_cond_wait(&d->x->cond, &d->x->lock);
	}
	pthread_mutex_unlock(&d->x->lock);
}

static void test_ilog_write_async_answers_after_the_flush(void **state)
{
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct store_obj *obj = fixture_file(f, f->root, "f", NULL, 0);
	struct async_done d = { .x = x };
	struct store_write_wait w;
	struct store_ilog_stats s;
	bool called;

	store__ilog_write_hook(x->ilog, ilog_fixture_write, x);
	x->gate_closed = true;
	assert_int_equal(f->ops->write_async(f->st, obj, 0, "async", 5, &w,
					     async_done_cb, &d),
			 0);
	/* The flush thread took it and is held in the write. */
	pthread_mutex_lock(&x->lock);
	while (x->writes == 0) {
		pthread_cond_wait(&x->cond, &x->lock);
	}
	called = d.called;
	x->gate_closed = false;
	pthread_cond_broadcast(&x->cond);
	pthread_mutex_unlock(&x->lock);
	assert_false(called);
	async_wait(&d);
	assert_int_equal(d.err, 0);
	store_ilog_stats(x->ilog, &s);
	assert_int_equal(s.records, 1);
	assert_int_equal(s.flushes, 1);
	f->ops->obj_unref(obj);
}

static void test_ilog_write_async_full_ring_is_eagain(void **state)
{
	static char block[256 * 1024];
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct store_obj *obj = fixture_file(f, f->root, "f", NULL, 0);
	static struct async_done d[64];
	static struct store_write_wait w[64];
	int err = 0;
	int n = 0;

	/* The checkpoint's fsync is held: the ring fills and stays full. */
	pthread_mutex_lock(&local_obj(obj)->sync.lock);
	for (; n < 64; n++) {
		d[n] = (struct async_done){ .x = x };
		err = f->ops->write_async(f->st, obj, 0, block, sizeof(block),
					  &w[n], async_done_cb, &d[n]);
		if (err) {
			break;
		}
	}
	/* Never a wait on the loop: the caller goes to a work thread. */
	assert_int_equal(err, -EAGAIN);
	assert_true(n > 0 && n < 64);
	pthread_mutex_unlock(&local_obj(obj)->sync.lock);
	for (int i = 0; i < n; i++) {
		async_wait(&d[i]);
		assert_int_equal(d[i].err, 0);
	}
	f->ops->obj_unref(obj);
}

static void test_ilog_bad_superblock_is_logged_and_log_opens(void **state)
{
	struct ilog_fixture *x = *state;
	struct fixture *f = x->f;
	struct store_obj *obj = fixture_file(f, f->root, "f", NULL, 0);
	struct store_ilog_stats s;

	assert_int_equal(stable_write(f, obj, 0, "lost", 4), 0);
	f->ops->obj_unref(obj);
	crash_and_restart(x);
	/* Both slots: the log can no longer be read. */
	log_flip(x, 8);
	log_flip(x, STORE_ILOG_SUPER_SLOT + 8);
	restart_log(x);
	store_ilog_stats(x->ilog, &s);
	assert_int_equal(s.replayed, 0);
	assert_true(log_capture_contains("no valid superblock"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_ilog_stable_write_is_logged_and_read_back, setup,
			ilog_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_ilog_one_flush_covers_writers_of_many_files, setup,
			ilog_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_ilog_replay_restores_data_and_size_past_eof, setup,
			ilog_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_ilog_torn_tail_is_dropped_and_logged, setup,
			ilog_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_ilog_corrupt_record_stops_replay_and_log_opens,
			setup, ilog_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_ilog_full_ring_waits_for_a_checkpoint, setup,
			ilog_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_ilog_failed_log_write_fails_stable_writes, setup,
			ilog_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_ilog_commit_of_newer_bytes_survives_replay, setup,
			ilog_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_ilog_truncate_survives_replay, setup,
			ilog_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_ilog_removed_file_is_skipped, setup,
			ilog_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_ilog_renamed_file_gets_its_data, setup,
			ilog_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_ilog_write_async_answers_after_the_flush, setup,
			ilog_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_ilog_write_async_full_ring_is_eagain, setup,
			ilog_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_ilog_bad_superblock_is_logged_and_log_opens, setup,
			ilog_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
