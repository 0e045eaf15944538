// SPDX-License-Identifier: Apache-2.0
/*
 * listener: TCP and UDP sockets on the main loop.  A TCP accept goes to
 * the worker holding the fewest live connections of its listener
 * (net__place_conn: each TCP listener has its number).  UDP (the portmapper,
 * MOUNT and NFS, which old clients and ESXi's discovery may use) is answered on
 * the main loop: portmapper and MOUNT calls are small and do not block,
 * except a MNT whose lookups wait on a cluster (a cephfs datastore); that
 * MNT, and an NFS call that defers its work (COMMIT, a stable WRITE,
 * READDIR: request_defer), run on the work threads, which hand the request back
 * through the listener's queue and ev_async, so a sync never stalls the main
 * loop.  NFS over UDP goes through the duplicate request cache like TCP (a
 * retransmitted datagram gets the first reply); its READ and WRITE sizes fit a
 * datagram (the dispatcher's max_payload_bytes).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nfsd/base/base.h"
#include "nfsd/base/log.h"
#include "nfsd/base/sockaddr.h"
#include "nfsd/net/net_int.h"
#include "nfsd/rpc/pool.h"

#define LISTENER_UDP_MAX 65536
#define LISTENER_UDP_BATCH 16 /* datagrams read per wake-up */

struct net_listener {
	struct net *net;
	ev_io watcher;
	int fd; /* -1 once closed: replies still due are dropped */
	bool udp;
	unsigned spread; /* TCP: its number in net->spread_conns */
	struct rpc_dispatcher *udp_dispatcher;
	/* UDP: requests whose deferred work is done, back from the work
	 * threads (done_lock guards the list). */
	ev_async done_wake;
	pthread_mutex_t done_lock;
	struct rpc_call *done_head, *done_tail;
	struct net_listener *next;
};

/* The transport of one UDP call: where its reply goes.  Heap, since a
 * deferred call outlives the datagram's callback; a request holds a
 * reference (main loop thread only). */
struct udp_call {
	struct net_listener *l;
	unsigned refs;
	struct sockaddr_storage peer;
	socklen_t peer_len;
};

static void udp_tops_send(void *transport, uint8_t *buf, size_t len)
{
	struct udp_call *c = transport;

	/* A lost datagram is retransmitted by the client. */
	if (c->l->fd >= 0 &&
	    sendto(c->l->fd, buf + RPC_REPLY_MARK_ROOM,
		   len - RPC_REPLY_MARK_ROOM, 0, (struct sockaddr *)&c->peer,
		   c->peer_len) < 0) {
		log_debug("net: udp reply lost: %s", strerror(errno));
	}
	rpc_buf_unref(buf);
}

static void udp_tops_close(void *transport)
{
	(void)transport; /* a datagram has no connection to close */
}

static void udp_tops_ref(void *transport)
{
	struct udp_call *c = transport;

	c->refs++;
}

static void udp_tops_unref(void *transport)
{
	struct udp_call *c = transport;

	if (--c->refs == 0) {
		free(c);
	}
}

/* Work thread: queues @call for the main loop. */
static void udp_tops_defer_done(void *transport, struct rpc_call *call)
{
	struct net_listener *l = ((struct udp_call *)transport)->l;

	call->next = NULL;
	pthread_mutex_lock(&l->done_lock);
	if (l->done_tail) {
		l->done_tail->next = call;
	} else {
		l->done_head = call;
	}
	l->done_tail = call;
	pthread_mutex_unlock(&l->done_lock);
	ev_async_send(l->net->main_loop, &l->done_wake);
}

static const struct rpc_transport_ops udp_tops = {
	.send = udp_tops_send,
	.close = udp_tops_close,
	.ref = udp_tops_ref,
	.unref = udp_tops_unref,
	.defer_done = udp_tops_defer_done,
};

/* Finishes the calls the work threads handed back. */
static void listener_udp_finish(struct net_listener *l)
{
	struct rpc_call *done;

	pthread_mutex_lock(&l->done_lock);
	done = l->done_head;
	l->done_head = l->done_tail = NULL;
	pthread_mutex_unlock(&l->done_lock);
	while (done) {
		struct rpc_call *next = done->next;
		rpc_call_finish(done);
		done = next;
	}
}

static void listener_done_cb(struct ev_loop *loop, ev_async *a, int revents)
{
	(void)loop;
	(void)revents;
	listener_udp_finish(container_of(a, struct net_listener, done_wake));
}

static void listener_udp_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct net_listener *l = container_of(w, struct net_listener, watcher);
	uint8_t buf[LISTENER_UDP_MAX];

	(void)loop;
	(void)revents;
	for (int i = 0; i < LISTENER_UDP_BATCH; i++) {
		struct udp_call *c = calloc(1, sizeof(*c));
		ssize_t n;

		if (!c) {
			return;
		}
		c->peer_len = sizeof(c->peer);
		n = recvfrom(l->fd, buf, sizeof(buf), 0,
			     (struct sockaddr *)&c->peer, &c->peer_len);
		if (n < 0) {
			free(c);
			return;
		}
		c->l = l;
		/* Ours while dispatching; a request in flight holds its own. */
		c->refs = 1;
		rpc_dispatch_record(l->udp_dispatcher, buf, (size_t)n,
				    &udp_tops, c, (struct sockaddr *)&c->peer,
				    c->peer_len);
		udp_tops_unref(c);
	}
}

static void listener_tcp_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct net_listener *l = container_of(w, struct net_listener, watcher);

	(void)loop;
	(void)revents;
	for (int i = 0; i < 64; i++) {
		struct sockaddr_storage peer;
		socklen_t peer_len = sizeof(peer);
		int fd = accept4(l->fd, (struct sockaddr *)&peer, &peer_len,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE) {
				log_error("net: accept: %s", strerror(errno));
			}
			return;
		}
		net__handoff(l->net, fd, (struct sockaddr *)&peer, peer_len,
			     l->spread);
	}
}

static int listener_socket(const char *addr, int port, bool udp,
			   int *bound_port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1, zero = 0, err;

	err = sockaddr_parse(addr, port, &ss, &len);
	if (err) {
		return err;
	}
	fd = socket(ss.ss_family,
		    (udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_NONBLOCK |
			    SOCK_CLOEXEC,
		    0);
	if (fd < 0) {
		return -errno;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* "::" serves IPv4 clients too (as ::ffff:a.b.c.d, which sockaddr.c
	 * reads as IPv4), whatever net.ipv6.bindv6only says. */
	if (ss.ss_family == AF_INET6 &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)) <
		    0) {
		goto fail;
	}
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 ||
	    (!udp && listen(fd, 1024) < 0)) {
		goto fail;
	}
	len = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0) {
		goto fail;
	}
	*bound_port = (int)sockaddr_port((struct sockaddr *)&ss);
	return fd;
fail:
	err = -errno;
	close(fd);
	return err;
}

static int listener_add(struct net *net, int fd, bool udp,
			struct rpc_dispatcher *udp_dispatcher)
{
	struct net_listener *l = calloc(1, sizeof(*l));

	if (!l) {
		close(fd);
		return -ENOMEM;
	}
	l->net = net;
	l->fd = fd;
	l->udp = udp;
	l->udp_dispatcher = udp_dispatcher;
	if (!udp) {
		l->spread = net->nspread < NET_SPREAD_MAX ? net->nspread++
							  : NET_SPREAD_MAX - 1;
	}
	pthread_mutex_init(&l->done_lock, NULL);
	ev_async_init(&l->done_wake, listener_done_cb);
	if (udp) {
		ev_async_start(net->main_loop, &l->done_wake);
	}
	ev_io_init(&l->watcher, udp ? listener_udp_cb : listener_tcp_cb, fd,
		   EV_READ);
	ev_io_start(net->main_loop, &l->watcher);
	l->next = net->listeners;
	net->listeners = l;
	return 0;
}

int net_listen(struct net *net, const char *addr, int port, bool udp,
	       struct rpc_dispatcher *udp_dispatcher, int *bound_port)
{
	int fd, udp_port, err;

	fd = listener_socket(addr, port, false, bound_port);
	if (fd < 0) {
		return fd;
	}
	err = listener_add(net, fd, false, NULL);
	if (err || !udp) {
		return err;
	}
	/* UDP on the same port number as TCP, as rpcbind users expect. */
	fd = listener_socket(addr, *bound_port, true, &udp_port);
	if (fd < 0) {
		return fd;
	}
	return listener_add(net, fd, true, udp_dispatcher);
}

void net__listeners_close(struct net *net)
{
	for (struct net_listener *l = net->listeners; l; l = l->next) {
		if (l->fd < 0) {
			continue;
		}
		ev_io_stop(net->main_loop, &l->watcher);
		close(l->fd);
		l->fd = -1;
	}
}

void net__listeners_free(struct net *net)
{
	while (net->listeners) {
		struct net_listener *l = net->listeners;

		net->listeners = l->next;
		/* The work threads are gone: what they handed back since the
		 * loop stopped is finished here, its replies dropped. */
		listener_udp_finish(l);
		if (l->udp) {
			ev_async_stop(net->main_loop, &l->done_wake);
		}
		pthread_mutex_destroy(&l->done_lock);
		free(l);
	}
}
