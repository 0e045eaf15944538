// SPDX-License-Identifier: Apache-2.0
/*
 * test_store_cephfs_prefetch: the readahead of the CephFS store
 * (nfsd/store/cephfs/cephfs_prefetch.c) on a real cluster.  A file read
 * in order by four threads at once (READs finishing out of order) is
 * read ahead and reads back right (written by another gateway: none of
 * it in this one's cache); what another gateway writes to a
 * range that was read ahead is what the first one reads next (the cache
 * is libcephfs's, kept coherent by CephFS's capabilities); random reads
 * are not read ahead; ceph_readahead_mib = 0 reads nothing ahead.  The
 * cluster is the one DSNFS_CEPH_CONF names (tests/run.sh starts one for
 * the suite); without it every test is skipped.
 */
/* First: it sets what libcephfs.h needs of the libc headers. */
#include "nfsd/store/cephfs/cephfs_int.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/unit/test_cephfs_dir.h"
#include "tests/unit/test_cephfs_state.h"

#define TEST_EXPORT_ID 78
#define MIB (1024u * 1024u)
#define CHUNK (64u * 1024u)
#define FILE_MIB 24u
#define READERS 4

/* Gateway a reads ahead 8 MiB, dsnfsd.conf's default. */
static int setup(void **state)
{
	struct test_cephfs_pair *f;
	int rc = test_cephfs_pair_setup(state, TEST_EXPORT_ID, "test_prefetch");

	f = *state;
	if (rc || !f->a) {
		return rc;
	}
	return store_cephfs_readahead(f->a, 8ull * MIB) ? -1 : 0;
}

/* The 8 bytes at @off (a multiple of 8) of generation @gen. */
static uint64_t word_at(uint64_t off, uint64_t gen)
{
	return (off * 0x9e3779b97f4a7c15ull) ^ gen;
}

static void fill(uint64_t *buf, uint64_t off, size_t len, uint64_t gen)
{
	for (size_t i = 0; i < len / 8; i++) {
		buf[i] = word_at(off + i * 8, gen);
	}
}

/* Whether @buf holds [off, off + len) of generation @gen. */
static bool holds(const uint64_t *buf, uint64_t off, size_t len, uint64_t gen)
{
	for (size_t i = 0; i < len / 8; i++) {
		if (buf[i] != word_at(off + i * 8, gen)) {
			return false;
		}
	}
	return true;
}

/* Makes f of FILE_MIB MiB of generation 1 through gateway @w, stable,
 * and returns it as a sees it: a's cache holds none of it.  While @w
 * keeps it open, a is not given the capability to cache it. */
static struct store_obj *make_file_by(struct test_cephfs_pair *f,
				      struct store *w)
{
	static uint64_t buf[MIB / 8];
	struct store_obj *dir_w, *obj_w = NULL, *obj;
	const uint8_t verf[8] = { 0 };
	struct store_fh fh;
	bool sync_failed;

	f->a->ops->obj_fh(f->dir_a, &fh);
	assert_int_equal(w->ops->resolve(w, &fh, &dir_w), 0);
	assert_int_equal(w->ops->create(w, dir_w, "f", STORE_CREATE_GUARDED,
					NULL, verf, NULL, &obj_w),
			 0);
	for (uint64_t m = 0; m < FILE_MIB; m++) {
		fill(buf, m * MIB, MIB, 1);
		assert_int_equal(w->ops->write(w, obj_w, m * MIB, buf, MIB,
					       STORE_FILE_SYNC, &sync_failed),
				 0);
	}
	w->ops->obj_fh(obj_w, &fh);
	w->ops->obj_unref(obj_w);
	w->ops->obj_unref(dir_w);
	assert_int_equal(f->a->ops->resolve(f->a, &fh, &obj), 0);
	return obj;
}

/* The same through a gateway closed at once: a alone has it open. */
static struct store_obj *make_file(struct test_cephfs_pair *f)
{
	struct store_obj *obj;
	struct store *w;

	assert_int_equal(test_cephfs_gateway("c1", TEST_EXPORT_ID, &w), 0);
	obj = make_file_by(f, w);
	w->ops->close(w);
	return obj;
}

struct reader {
	struct store *st;
	struct store_obj *obj;
	_Atomic uint64_t *next; /* the next chunk to read, shared */
	uint64_t gen;
	unsigned bad; /* chunks that did not read back */
	pthread_t t;
};

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	uint64_t buf[CHUNK / 8];

	for (;;) {
		uint64_t off = atomic_fetch_add(r->next, 1) * CHUNK;
		uint32_t n = 0;
		bool eof;

		if (off >= (uint64_t)FILE_MIB * MIB) {
			return NULL;
		}
		if (r->st->ops->read(r->st, r->obj, off, buf, CHUNK, &n,
				     &eof) ||
		    n != CHUNK || !holds(buf, off, CHUNK, r->gen)) {
			r->bad++;
		}
	}
}

/* Reads all of @obj in order, READERS threads at once; the chunks that
 * did not hold generation @gen. */
static unsigned read_in_order(struct store *st, struct store_obj *obj,
			      uint64_t gen)
{
	_Atomic uint64_t next = 0;
	struct reader r[READERS];
	unsigned bad = 0;

	for (int i = 0; i < READERS; i++) {
		r[i] = (struct reader){
			.st = st, .obj = obj, .next = &next, .gen = gen
		};
		assert_int_equal(
			pthread_create(&r[i].t, NULL, reader_main, &r[i]), 0);
	}
	for (int i = 0; i < READERS; i++) {
		pthread_join(r[i].t, NULL);
		bad += r[i].bad;
	}
	return bad;
}

static struct store_cephfs_prefetch_stats stats_of(struct store *st)
{
	struct store_cephfs_prefetch_stats s;

	store__cephfs_prefetch_stats(store__cephfs(st), &s);
	return s;
}

static void test_file_read_in_order_is_read_ahead(void **state)
{
	struct test_cephfs_pair *f = *state;
	struct store_cephfs_prefetch_stats s;
	struct store_obj *obj;

	if (!f->a) {
		skip();
	}
	obj = make_file(f);
	assert_int_equal(read_in_order(f->a, obj, 1), 0);
	s = stats_of(f->a);
	/* Read ahead once a MiB was read: the first piece at least (the
	 * readers may outrun the rest on a loaded machine).  A reader
	 * descheduled long enough starts a new run, read ahead again, so
	 * the bytes may pass the file's, but not twice over. */
	assert_true(s.reads >= 1);
	assert_true(s.bytes >= 1ull * MIB);
	assert_true(s.bytes <= 2ull * FILE_MIB * MIB);
	f->a->ops->obj_unref(obj);
}

static void test_other_gateways_write_is_read_after_readahead(void **state)
{
	struct test_cephfs_pair *f = *state;
	static uint64_t buf[MIB / 8];
	struct store_obj *obj, *other;
	struct store_fh fh;
	bool sync_failed, eof;
	uint32_t n;

	if (!f->a) {
		skip();
	}
	obj = make_file(f);
	assert_int_equal(read_in_order(f->a, obj, 1), 0);
	assert_true(stats_of(f->a).bytes >= 1ull * MIB);
	/* b overwrites MiB 20, which a read (and may have read ahead). */
	f->a->ops->obj_fh(obj, &fh);
	assert_int_equal(f->b->ops->resolve(f->b, &fh, &other), 0);
	fill(buf, 20ull * MIB, MIB, 2);
	assert_int_equal(f->b->ops->write(f->b, other, 20ull * MIB, buf, MIB,
					  STORE_FILE_SYNC, &sync_failed),
			 0);
	memset(buf, 0, sizeof(buf));
	assert_int_equal(
		f->a->ops->read(f->a, obj, 20ull * MIB, buf, MIB, &n, &eof), 0);
	assert_int_equal(n, MIB);
	assert_true(holds(buf, 20ull * MIB, MIB, 2));
	/* And the MiB before it is still generation 1. */
	assert_int_equal(
		f->a->ops->read(f->a, obj, 19ull * MIB, buf, MIB, &n, &eof), 0);
	assert_true(holds(buf, 19ull * MIB, MIB, 1));
	f->b->ops->obj_unref(other);
	f->a->ops->obj_unref(obj);
}

/* A file another gateway holds open for writing is not cached here
 * (CephFS gives neither the capability to cache): reads stay right, and
 * the prefetch may stop (its reads no faster) or not (an OSD faster than
 * the probe's bound); either way it reads the file only ahead. */
static void test_file_open_on_another_gateway_reads_right(void **state)
{
	struct test_cephfs_pair *f = *state;
	struct store_cephfs_prefetch_stats s;
	struct store_obj *obj;

	if (!f->a) {
		skip();
	}
	obj = make_file_by(f, f->b);
	assert_int_equal(read_in_order(f->a, obj, 1), 0);
	s = stats_of(f->a);
	assert_true(s.bytes <= 2ull * FILE_MIB * MIB);
	fprintf(stderr,
		"shared file: read ahead %llu MiB in %llu reads, "
		"%llu runs stopped\n",
		(unsigned long long)(s.bytes >> 20),
		(unsigned long long)s.reads,
		(unsigned long long)s.runs_stopped);
	f->a->ops->obj_unref(obj);
}

static void test_random_reads_are_not_read_ahead(void **state)
{
	struct test_cephfs_pair *f = *state;
	uint64_t buf[8192 / 8];
	struct store_obj *obj;
	uint64_t before;
	bool eof;
	uint32_t n;

	if (!f->a) {
		skip();
	}
	obj = make_file(f);
	before = stats_of(f->a).reads;
	/* 8 KiB reads 3 MiB apart, going back and forth. */
	for (unsigned i = 0; i < 64; i++) {
		uint64_t off = (uint64_t)((i * 7) % 8) * 3 * MIB;

		assert_int_equal(f->a->ops->read(f->a, obj, off, buf,
						 sizeof(buf), &n, &eof),
				 0);
		assert_true(holds(buf, off, sizeof(buf), 1));
	}
	assert_int_equal(stats_of(f->a).reads, before);
	f->a->ops->obj_unref(obj);
}

static void test_readahead_zero_reads_nothing_ahead(void **state)
{
	struct test_cephfs_pair *f = *state;
	struct store_cephfs_prefetch_stats s;
	struct store_obj *obj;

	if (!f->a) {
		skip();
	}
	assert_int_equal(store_cephfs_readahead(f->a, 0), 0);
	obj = make_file(f);
	assert_int_equal(read_in_order(f->a, obj, 1), 0);
	s = stats_of(f->a);
	assert_int_equal(s.reads, 0);
	assert_int_equal(s.bytes, 0);
	/* Back on: a store may be set again before it serves. */
	assert_int_equal(store_cephfs_readahead(f->a, 8ull * MIB), 0);
	f->a->ops->obj_unref(obj);
}

#define T(name)                                                                \
	cmocka_unit_test_setup_teardown(name, setup, test_cephfs_pair_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_file_read_in_order_is_read_ahead),
		T(test_other_gateways_write_is_read_after_readahead),
		T(test_file_open_on_another_gateway_reads_right),
		T(test_random_reads_are_not_read_ahead),
		T(test_readahead_zero_reads_nothing_ahead),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
