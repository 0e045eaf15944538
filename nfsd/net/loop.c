// SPDX-License-Identifier: Apache-2.0
/*
 * loop: the worker threads, one libev loop each.  Other threads reach a
 * worker only through its locked hand-off queues and its ev_async
 * (handoff.c): new connections from the accepting loop, finished deferred
 * requests from the blocking-work threads, and the stop signal.
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nfsd/base/base.h"
#include "nfsd/base/log.h"
#include "nfsd/net/net_int.h"
#include "nfsd/rpc/pool.h"

static void worker_wake_cb(struct ev_loop *loop, ev_async *a, int revents)
{
	struct worker *w = container_of(a, struct worker, wake);
	struct net_handoff *incoming;
	struct net_evict *evicts;
	struct rpc_call *done;
	struct conn *held = NULL;
	bool stopping;

	(void)revents;
	pthread_mutex_lock(&w->lock);
	incoming = w->incoming;
	w->incoming = NULL;
	evicts = w->evicts;
	w->evicts = NULL;
	done = w->done_head;
	w->done_head = w->done_tail = NULL;
	stopping = w->stopping;
	pthread_mutex_unlock(&w->lock);

	/* Their replies leave per connection in one sendmsg, not one each. */
	while (done) {
		struct rpc_call *next = done->next;
		struct conn *c = done->transport;

		if (net__conn_output_hold(c)) {
			c->held_next = held;
			held = c;
		}
		rpc_call_finish(done);
		done = next;
	}
	while (held) {
		struct conn *next = held->held_next;

		net__conn_output_release(held);
		held = next;
	}
	/* Room first: the connections it was made for are counted. */
	while (evicts) {
		struct net_evict *next = evicts->next;
		if (!stopping &&
		    !net__conn_evict(w, evicts->addr, evicts->host_conns,
				     evicts->for_peer)) {
			log_debug("net: no idle connection to close for %s",
				  evicts->for_peer);
		}
		free(evicts);
		evicts = next;
	}
	while (incoming) {
		struct net_handoff *next = incoming->next;
		if (stopping) {
			close(incoming->fd);
			net__release_conn(w->net,
					  (struct sockaddr *)&incoming->peer,
					  w->id, incoming->spread);
		} else {
			net__conn_open(w, incoming->fd,
				       (struct sockaddr *)&incoming->peer,
				       incoming->peer_len, incoming->spread);
		}
		free(incoming);
		incoming = next;
	}
	if (stopping) {
		while (w->conns) {
			net__conn_close(w->conns);
		}
		net__worker_trim_stop(w);
		ev_break(loop, EVBREAK_ALL);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	ev_run(w->loop, 0);
	return NULL;
}

static int worker_start(struct net *net, struct worker *w, unsigned id)
{
	int err;

	w->net = net;
	w->id = id;
	w->read_buf = malloc(NET_READ_CHUNK);
	w->loop = ev_loop_new(EVFLAG_AUTO);
	if (!w->read_buf || !w->loop) {
		return -ENOMEM;
	}
	err = rpc_pool_new(RPC_POOL_DEFAULT_MAX_BYTES, &w->pool);
	if (err) {
		return err;
	}
	pthread_mutex_init(&w->lock, NULL);
	ev_async_init(&w->wake, worker_wake_cb);
	ev_async_start(w->loop, &w->wake);
	net__worker_trim_init(w);
	err = pthread_create(&w->thread, NULL, worker_main, w);
	if (err) {
		return -err;
	}
	return 0;
}

int net_start(struct net *net, struct ev_loop *main_loop,
	      struct rpc_dispatcher *dispatcher,
	      const struct net_limits *limits, unsigned nworkers)
{
	memset(net, 0, sizeof(*net));
	net->main_loop = main_loop;
	net->dispatcher = dispatcher;
	net->limits = *limits;
	pthread_mutex_init(&net->admit_lock, NULL);
#ifdef __GLIBC__
	/*
	 * glibc's malloc_trim() sets its allocator up on first use, racily:
	 * two loops trimming first at once both attach to the main arena but
	 * count once, and the second to exit aborts ("attached_threads > 0").
	 * That first use is here, on this thread, before any loop runs: under
	 * a sanitizer, whose allocator stands in for glibc's, nothing else
	 * makes it.
	 */
	malloc_trim(0);
#endif
	net->workers = calloc(nworkers, sizeof(*net->workers));
	net->spread_conns = calloc((size_t)NET_SPREAD_MAX * nworkers,
				   sizeof(*net->spread_conns));
	if (!net->workers || !net->spread_conns) {
		return -ENOMEM;
	}
	for (unsigned i = 0; i < nworkers; i++) {
		int err = worker_start(net, &net->workers[i], i);

		if (err) {
			log_error("net: cannot start worker %u: %s", i,
				  strerror(-err));
			net->nworkers = i;
			net_stop(net);
			return err;
		}
		net->nworkers++;
	}
	return 0;
}

/* Stops and joins one worker; finishes what deferred work handed back. */
static void worker_stop(struct worker *w)
{
	pthread_mutex_lock(&w->lock);
	w->stopping = true;
	pthread_mutex_unlock(&w->lock);
	ev_async_send(w->loop, &w->wake);
	pthread_join(w->thread, NULL);
}

static void worker_free(struct worker *w)
{
	/* The thread is gone: what blocking work handed back since is
	 * finished here; its conns are closed, so replies are dropped. */
	while (w->done_head) {
		struct rpc_call *next = w->done_head->next;
		rpc_call_finish(w->done_head);
		w->done_head = next;
	}
	while (w->evicts) {
		struct net_evict *next = w->evicts->next;
		free(w->evicts);
		w->evicts = next;
	}
	ev_async_stop(w->loop, &w->wake);
	ev_loop_destroy(w->loop);
	pthread_mutex_destroy(&w->lock);
	free(w->read_buf);
	net__lent_fini(w);
	/* Last: the requests finished above gave their memory back. */
	rpc_pool_free(w->pool);
}

void net_stop(struct net *net)
{
	net__listeners_close(net);
	for (unsigned i = 0; i < net->nworkers; i++) {
		worker_stop(&net->workers[i]);
	}
	net->stopped = true;
}

void net_free(struct net *net)
{
	for (unsigned i = 0; i < net->nworkers; i++) {
		worker_free(&net->workers[i]);
	}
	free(net->workers);
	net->workers = NULL;
	net->nworkers = 0;
	net__listeners_free(net);
	net__admit_fini(net);
}
