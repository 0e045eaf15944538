/*
 * listener: TCP and UDP sockets on the main loop.  TCP accepts are handed
 * to the workers round-robin.  UDP (the portmapper and MOUNT, which old
 * clients and ESXi's discovery may use) is answered inline on the main
 * loop: those calls are small and never block.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nfsd/base.h"
#include "nfsd/log.h"
#include "nfsd/rpc/pool.h"
#include "nfsd/net/net_int.h"
#include "nfsd/sockaddr.h"

#define LISTENER_UDP_MAX 65536

struct net_listener {
	struct net *net;
	ev_io watcher;
	int fd;
	bool udp;
	struct rpc_dispatcher *udp_dispatcher;
	struct net_listener *next;
};

/* The reply destination of one UDP datagram, on the main loop's stack. */
struct udp_reply {
	int fd;
	const struct sockaddr *peer;
	socklen_t peer_len;
};

static void udp_tops_send(void *transport, uint8_t *buf, size_t len)
{
	struct udp_reply *r = transport;

	/* A lost datagram is retransmitted by the client. */
	if (sendto(r->fd, buf + RPC_REPLY_MARK_ROOM, len - RPC_REPLY_MARK_ROOM,
		   0, r->peer, r->peer_len) < 0)
		log_debug("net: udp reply lost: %s", strerror(errno));
	rpc_buf_unref(buf);
}

static void udp_tops_nothing(void *transport)
{
	(void)transport;
}

static void udp_tops_defer_done(void *transport, struct request *req)
{
	/* The UDP dispatcher has no work pool: work runs inline. */
	(void)transport;
	(void)req;
}

static const struct rpc_transport_ops udp_tops = {
	.send = udp_tops_send,
	.close = udp_tops_nothing,
	.ref = udp_tops_nothing,
	.unref = udp_tops_nothing,
	.defer_done = udp_tops_defer_done,
};

static void listener_udp_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct net_listener *l = container_of(w, struct net_listener, watcher);
	uint8_t buf[LISTENER_UDP_MAX];
	struct sockaddr_storage peer;
	socklen_t peer_len = sizeof(peer);
	ssize_t n;

	(void)loop;
	(void)revents;
	n = recvfrom(l->fd, buf, sizeof(buf), 0, (struct sockaddr *)&peer,
		     &peer_len);
	if (n < 0)
		return;
	struct udp_reply reply = { .fd = l->fd,
				   .peer = (struct sockaddr *)&peer,
				   .peer_len = peer_len };
	rpc_dispatch_record(l->udp_dispatcher, buf, (size_t)n, &udp_tops,
			    &reply, (struct sockaddr *)&peer, peer_len);
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
			if (errno == EMFILE || errno == ENFILE)
				log_error("net: accept: %s", strerror(errno));
			return;
		}
		net__handoff(l->net, fd, (struct sockaddr *)&peer, peer_len);
	}
}

static int listener_socket(const char *addr, int port, bool udp,
			   int *bound_port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1, zero = 0, err;

	err = sockaddr_parse(addr, port, &ss, &len);
	if (err)
		return err;
	fd = socket(ss.ss_family,
		    (udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_NONBLOCK |
			    SOCK_CLOEXEC,
		    0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* "::" serves IPv4 clients too (as ::ffff:a.b.c.d, which sockaddr.c
	 * reads as IPv4), whatever net.ipv6.bindv6only says. */
	if (ss.ss_family == AF_INET6 &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)) < 0)
		goto fail;
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 ||
	    (!udp && listen(fd, 1024) < 0))
		goto fail;
	len = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		goto fail;
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
	if (fd < 0)
		return fd;
	err = listener_add(net, fd, false, NULL);
	if (err || !udp)
		return err;
	/* UDP on the same port number as TCP, as rpcbind users expect. */
	fd = listener_socket(addr, *bound_port, true, &udp_port);
	if (fd < 0)
		return fd;
	return listener_add(net, fd, true, udp_dispatcher);
}

void net__listeners_close(struct net *net)
{
	while (net->listeners) {
		struct net_listener *l = net->listeners;

		net->listeners = l->next;
		ev_io_stop(net->main_loop, &l->watcher);
		close(l->fd);
		free(l);
	}
}
