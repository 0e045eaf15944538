// SPDX-License-Identifier: Apache-2.0
/*
 * work: a plain FIFO of requests under one mutex and condition variable.
 * Blocking work is rare next to the loop's own work (syncs, directory
 * scans), so one queue shared by the threads is enough.  A stable WRITE
 * or COMMIT keeps its thread while it waits for its file's group sync
 * (store/syncgroup.h): the threads bound how many writes one sync round
 * can cover, hence 16 by default, 64 with a cephfs datastore, where every
 * call waits on a thread ([server] work_threads, config_work_threads()).
 */
#include "nfsd/rpc/work.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

struct rpc_work_pool {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct rpc_call *head;
	struct rpc_call *tail;
	bool stopping;
	unsigned idle; /* threads waiting on wake */
	unsigned nthreads;
	pthread_t threads[];
};

static void *rpc_work_thread(void *arg)
{
	struct rpc_work_pool *pool = arg;

	for (;;) {
		struct rpc_call *call;

		pthread_mutex_lock(&pool->lock);
		while (!pool->head && !pool->stopping) {
			pool->idle++;
			pthread_cond_wait(&pool->wake, &pool->lock);
			pool->idle--;
		}
		call = pool->head;
		if (!call) {
			pthread_mutex_unlock(&pool->lock);
			return NULL;
		}
		pool->head = call->next;
		if (!pool->head) {
			pool->tail = NULL;
		}
		pthread_mutex_unlock(&pool->lock);

		call->next = NULL;
		call->work(&call->req);
		call->tops->defer_done(call->transport, call);
	}
}

int rpc_work_pool_new(unsigned nthreads, struct rpc_work_pool **out)
{
	struct rpc_work_pool *pool;
	int err;

	pool = calloc(1, sizeof(*pool) + nthreads * sizeof(pthread_t));
	if (!pool) {
		return -ENOMEM;
	}
	pthread_mutex_init(&pool->lock, NULL);
	pthread_cond_init(&pool->wake, NULL);
	for (unsigned i = 0; i < nthreads; i++) {
		err = pthread_create(&pool->threads[i], NULL, rpc_work_thread,
				     pool);
		if (err) {
			rpc_work_pool_free(pool);
			return -err;
		}
		pool->nthreads++;
	}
	*out = pool;
	return 0;
}

void rpc_work_pool_free(struct rpc_work_pool *pool)
{
	pthread_mutex_lock(&pool->lock);
	pool->stopping = true;
	pthread_cond_broadcast(&pool->wake);
	pthread_mutex_unlock(&pool->lock);
	for (unsigned i = 0; i < pool->nthreads; i++) {
		pthread_join(pool->threads[i], NULL);
	}
	pthread_cond_destroy(&pool->wake);
	pthread_mutex_destroy(&pool->lock);
	free(pool);
}

/* The wake-up goes after the unlock, so the woken thread does not block
 * at once on the mutex its waker still holds (a profile of 64 KiB stable
 * writes showed that), and only when a thread is idle: a busy one takes
 * the call when it comes back for the next. */
void rpc_work_pool_submit(struct rpc_work_pool *pool, struct rpc_call *call)
{
	bool wake;

	call->next = NULL;
	pthread_mutex_lock(&pool->lock);
	if (pool->tail) {
		pool->tail->next = call;
	} else {
		pool->head = call;
	}
	pool->tail = call;
	wake = pool->idle > 0;
	pthread_mutex_unlock(&pool->lock);
	if (wake) {
		pthread_cond_signal(&pool->wake);
	}
}
