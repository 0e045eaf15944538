// SPDX-License-Identifier: Apache-2.0
/*
 * stop_guard: a stop (SIGTERM, SIGINT) that ends in bounded time.  Closing
 * waits for the calls in flight, and a call stuck on a cephfs cluster that
 * does not answer (a lost mon, hung OSDs) waits as long as the cluster is
 * gone; so does unmounting it.  What a client was told is durable is
 * durable already (FILE_SYNC and COMMIT answer only once it is; a local
 * intent log replays at the next start), and a stuck call was never
 * answered: so past the grace the process ends as a crash would, with one
 * line that says so, instead of outliving its service manager's patience.
 */
#include "nfsd/server/server.h"

#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "nfsd/base/log.h"

static void *stop_guard_thread(void *arg)
{
	unsigned grace_s = (unsigned)(uintptr_t)arg;
	struct timespec left = { .tv_sec = grace_s };

	while (nanosleep(&left, &left) != 0) {
	}
	log_error("dsnfsd: still stopping after %u s: calls wait on a "
		  "cluster that does not answer; exiting without them (every "
		  "acknowledged write is durable; the cluster ends this "
		  "gateway's sessions itself)",
		  grace_s);
	_exit(0);
	return NULL;
}

void server_stop_guard_start(unsigned grace_s)
{
	pthread_attr_t attr;
	pthread_t thread;

	/* Without the guard the stop is merely unbounded: go on. */
	if (pthread_attr_init(&attr) != 0) {
		return;
	}
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&thread, &attr, stop_guard_thread,
			   (void *)(uintptr_t)grace_s) != 0) {
		log_warn("dsnfsd: no stop guard: a stop may wait on a lost "
			 "cluster");
	}
	pthread_attr_destroy(&attr);
}
