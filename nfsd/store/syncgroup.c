// SPDX-License-Identifier: Apache-2.0
/*
 * syncgroup: one sync round for many stable writers of a file (see
 * syncgroup.h for the protocol and the error rule).  Rounds are numbered;
 * one runs at a time, so they finish in order, and a caller's round is the
 * one numbered `started + 1` when it entered.  The leader of a round runs
 * the sync without the lock, so callers keep entering (for the round
 * after) while it is in flight.  Callers of round r sleep on done[r % 2]:
 * the end of a round wakes its own callers and one caller of the next
 * round, its leader, not every thread of the group (on 2 CPUs, with 16
 * work threads, the herd costs more than the wait).
 */
#include "nfsd/store/syncgroup.h"

#include <assert.h>
#include <errno.h>

int store__syncgroup_init(struct store_syncgroup *sg)
{
	int err;

	sg->started = 0;
	sg->finished = 0;
	sg->running = false;
	sg->next_level = STORE_UNSTABLE;
	sg->next_waiters = 0;
	sg->failed_round = 0;
	sg->err = 0;
	err = pthread_mutex_init(&sg->lock, NULL);
	if (err) {
		return -err;
	}
	err = pthread_cond_init(&sg->done[0], NULL);
	if (err) {
		goto out_lock;
	}
	err = pthread_cond_init(&sg->done[1], NULL);
	if (err) {
		goto out_done0;
	}
	return 0;

out_done0:
	pthread_cond_destroy(&sg->done[0]);
out_lock:
	pthread_mutex_destroy(&sg->lock);
	return -err;
}

void store__syncgroup_fini(struct store_syncgroup *sg)
{
	pthread_cond_destroy(&sg->done[1]);
	pthread_cond_destroy(&sg->done[0]);
	pthread_mutex_destroy(&sg->lock);
}

/* Keeps the first failure: rounds from @round on fail with it. */
static void store_syncgroup_fail(struct store_syncgroup *sg, uint64_t round,
				 int err)
{
	if (err && !sg->err) {
		sg->err = err;
		sg->failed_round = round;
	}
}

/* Runs the next round for everyone who entered before now; called and
 * returns with the lock held. */
static void store_syncgroup_run(struct store_syncgroup *sg, store_sync_fn fn,
				void *arg)
{
	enum store_stable level = sg->next_level;
	uint64_t round;
	int err = 0;

	sg->running = true;
	round = ++sg->started;
	sg->next_level = STORE_UNSTABLE;
	sg->next_waiters = 0;
	/* After a failure a sync would report success for lost data. */
	if (!sg->err) {
		pthread_mutex_unlock(&sg->lock);
		err = fn(arg, level);
		pthread_mutex_lock(&sg->lock);
	}
	store_syncgroup_fail(sg, round, err);
	sg->finished = round;
	sg->running = false;
	pthread_cond_broadcast(&sg->done[round % 2]);
	if (sg->next_waiters) {
		pthread_cond_signal(&sg->done[(round + 1) % 2]);
	}
}

/* Group commit off: a sync of the caller's own; a failure of anyone's
 * before it returned fails it too. */
static int store_syncgroup_sync_alone(struct store_syncgroup *sg,
				      enum store_stable level, store_sync_fn fn,
				      void *arg)
{
	int err;

	pthread_mutex_unlock(&sg->lock);
	err = fn(arg, level);
	pthread_mutex_lock(&sg->lock);
	store_syncgroup_fail(sg, 0, err);
	return sg->err;
}

int store__syncgroup_sync(struct store_syncgroup *sg, enum store_stable level,
			  bool grouped, store_sync_fn fn, void *arg)
{
	uint64_t need;
	int err;

	assert(level == STORE_DATA_SYNC || level == STORE_FILE_SYNC);
	pthread_mutex_lock(&sg->lock);
	if (sg->err) {
		err = sg->err;
		goto out;
	}
	if (!grouped) {
		err = store_syncgroup_sync_alone(sg, level, fn, arg);
		goto out;
	}
	/* A round in flight may have started before our pwrite ended. */
	need = sg->started + 1;
	if (level > sg->next_level) {
		sg->next_level = level;
	}
	sg->next_waiters++;
	while (sg->finished < need) {
		if (!sg->running && sg->started < need) {
			store_syncgroup_run(sg, fn, arg);
		} else {
			pthread_cond_wait(&sg->done[need % 2], &sg->lock);
		}
	}
	err = sg->err && sg->failed_round <= need ? sg->err : 0;
out:
	pthread_mutex_unlock(&sg->lock);
	return err;
}

uint32_t store__syncgroup_waiters(struct store_syncgroup *sg)
{
	uint32_t n;

	pthread_mutex_lock(&sg->lock);
	n = sg->next_waiters;
	pthread_mutex_unlock(&sg->lock);
	return n;
}
