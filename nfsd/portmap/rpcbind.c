// SPDX-License-Identifier: Apache-2.0
/*
 * rpcbind: talking to the host's own portmapper when one runs (RFC 1833
 * 3).  portmap_rpcbind_probe() finds it with a NULL call bounded in time;
 * registration goes through libtirpc's rpcb_set()/pmap_unset(), which
 * reach rpcbind over its local socket or loopback.  All of it blocks, so
 * it runs before the loops start and after they stop.
 */
#include "nfsd/portmap/portmap.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <rpc/pmap_clnt.h>
#include <rpc/pmap_prot.h>
#include <rpc/rpcb_clnt.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nfsd/proto/xdr_empty.h"

/* Connects @fd to @addr within @timeout_ms.  Returns 0 or -errno. */
static int portmap_connect_timed(int fd, const struct sockaddr_in *addr,
				 int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	int soerr = 0, n;
	socklen_t len = sizeof(soerr);

	if (connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) == 0) {
		return 0;
	}
	if (errno != EINPROGRESS) {
		return -errno;
	}
	do {
		n = poll(&pfd, 1, timeout_ms);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		return -errno;
	}
	if (n == 0) {
		return -ETIMEDOUT;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0) {
		return -errno;
	}
	return -soerr;
}

/* Calls procedure 0 of the portmapper on connected @fd. */
static int portmap_null_call(int fd, struct sockaddr_in *addr, int timeout_ms)
{
	struct timeval tv = { .tv_sec = timeout_ms / 1000,
			      .tv_usec = (timeout_ms % 1000) * 1000 };
	enum clnt_stat stat;
	CLIENT *clnt;
	int sock = fd;

	clnt = clnttcp_create(addr, PMAPPROG, PMAPVERS, &sock, 0, 0);
	if (!clnt) {
		return -ECONNREFUSED;
	}
	stat = clnt_call(clnt, NULLPROC, (xdrproc_t)xdr_empty, NULL,
			 (xdrproc_t)xdr_empty, NULL, tv);
	/* clnttcp_create() leaves a caller's descriptor open. */
	clnt_destroy(clnt);
	if (stat == RPC_TIMEDOUT) {
		return -ETIMEDOUT;
	}
	return stat == RPC_SUCCESS ? 0 : -EPROTO;
}

int portmap_rpcbind_probe(const struct sockaddr_in *addr, int timeout_ms)
{
	struct sockaddr_in target;
	int fd, flags, err;

	if (addr) {
		target = *addr;
	} else {
		target = (struct sockaddr_in){ .sin_family = AF_INET,
					       .sin_port = htons(PORTMAP_PORT),
					       .sin_addr.s_addr =
						       htonl(INADDR_LOOPBACK) };
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		return -errno;
	}
	err = portmap_connect_timed(fd, &target, timeout_ms);
	if (err) {
		goto out;
	}
	/* libtirpc's stream client expects a blocking socket. */
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		err = -errno;
		goto out;
	}
	err = portmap_null_call(fd, &target, timeout_ms);
out:
	close(fd);
	return err;
}

bool portmap_rpcbind_present(void)
{
	return portmap_rpcbind_probe(NULL, PORTMAP_PROBE_TIMEOUT_MS) == 0;
}

int portmap_rpcbind_register(uint32_t prog, uint32_t vers, int proto,
			     uint16_t port)
{
	struct sockaddr_in any = { .sin_family = AF_INET,
				   .sin_port = htons(port),
				   .sin_addr.s_addr = htonl(INADDR_ANY) };
	struct netbuf addr = { .maxlen = sizeof(any),
			       .len = sizeof(any),
			       .buf = &any };
	struct netconfig *nconf;
	bool_t ok;

	if (proto != IPPROTO_TCP && proto != IPPROTO_UDP) {
		return -EINVAL;
	}
	/* rpcb_set() with our own address: pmap_set() leaks the one it
	 * builds with uaddr2taddr() (libtirpc 1.3.3). */
	nconf = getnetconfigent(proto == IPPROTO_TCP ? "tcp" : "udp");
	if (!nconf) {
		return -ENOENT;
	}
	ok = rpcb_set(prog, vers, nconf, &addr);
	freenetconfigent(nconf);
	return ok ? 0 : -EIO;
}

int portmap_rpcbind_unregister(uint32_t prog, uint32_t vers)
{
	if (!pmap_unset(prog, vers)) {
		return -EIO;
	}
	return 0;
}
