/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_ilog_fixture: the fixture of the intent-log tests
 * (test_store_ilog*.c): the local store of test_store_fixture.h with an
 * intent log of ILOG_FIXTURE_RING_BYTES on it, and an injected batch write
 * (ilog_fixture_write: held while gate_closed, fails with fail_err when
 * set, counts its calls).  Include after <cmocka.h>.
 */
#ifndef DSNFS_TEST_ILOG_FIXTURE_H
#define DSNFS_TEST_ILOG_FIXTURE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "nfsd/store/ilog/ilog_int.h"
#include "tests/lib/log_capture.h"
#include "tests/unit/test_store_fixture.h"

#define ILOG_FIXTURE_RING_BYTES (8u << 20)

struct ilog_fixture {
	struct fixture *f;
	char path[128];
	struct store_ilog *ilog;
	uint32_t inplace_min; /* set on the log at every open */
	pthread_mutex_t lock; /* guards the three below */
	pthread_cond_t cond;
	bool gate_closed;
	int fail_err;
	unsigned writes;
};

/* A store_ilog_write_fn: store__ilog_write_hook(x->ilog, it, x). */
static inline int ilog_fixture_write(void *arg, int fd, const void *buf,
				     size_t len, uint64_t off)
{
	struct ilog_fixture *x = arg;
	int err;

	pthread_mutex_lock(&x->lock);
	x->writes++;
	pthread_cond_broadcast(&x->cond);
	while (x->gate_closed) {
		pthread_cond_wait(&x->cond, &x->lock);
	}
	err = x->fail_err;
	pthread_mutex_unlock(&x->lock);
	if (err) {
		return err;
	}
	return store__pwrite_full(fd, buf, len, off);
}

/* Opens (or, after a crash, reopens and replays) the log on the store. */
static inline void ilog_fixture_open(struct ilog_fixture *x)
{
	char err[512] = "";
	struct store *st = x->f->st;

	assert_int_equal(store_ilog_open(x->path, ILOG_FIXTURE_RING_BYTES, 0,
					 &st, 1, &x->ilog, err, sizeof(err)),
			 0);
	assert_ptr_equal(x->f->st->ilog, x->ilog);
	store_ilog_set_inplace_min(x->ilog, x->inplace_min);
}

/* A cmocka setup's body: the store, then its log with @inplace_min. */
static inline int ilog_fixture_setup(void **state, uint32_t inplace_min)
{
	struct ilog_fixture *x = calloc(1, sizeof(*x));
	void *fs;

	if (!x || fixture_setup(&fs) != 0) {
		return -1;
	}
	x->f = fs;
	x->inplace_min = inplace_min;
	snprintf(x->path, sizeof(x->path), "%s/ilog", x->f->dir);
	pthread_mutex_init(&x->lock, NULL);
	pthread_cond_init(&x->cond, NULL);
	log_capture_reset();
	ilog_fixture_open(x);
	*state = x;
	return 0;
}

static inline int ilog_fixture_teardown(void **state)
{
	struct ilog_fixture *x = *state;
	void *fs = x->f;

	store_ilog_close(x->ilog);
	fixture_teardown(&fs);
	pthread_cond_destroy(&x->cond);
	pthread_mutex_destroy(&x->lock);
	free(x);
	return 0;
}

#endif
