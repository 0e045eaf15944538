// SPDX-License-Identifier: Apache-2.0
/*
 * rpcb: the built-in portmapper's rpcbind versions 3 and 4 (RFC 1833 2:
 * NULL, GETADDR, DUMP; version 4 GETVERSADDR), the versions that carry a
 * netid and a universal address (RFC 5665 5.2.3), which IPv6 clients ask
 * for.  Mappings come from the same registry as PMAP v2 (procs.c); a
 * mapping's protocol is offered under the netids of the families the
 * listen address serves.
 */
#include "nfsd/portmap/portmap_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nfsd/base/base.h"
#include "nfsd/base/sockaddr.h"
#include "nfsd/proto/xdr_empty.h"
#include "rpcb4.h"

/* "ffff:...:255.255.255.255.255.255": an IPv6 literal and ".p1.p2". */
#define RPCB_UADDR_MAX 64

_Static_assert(RPCB_UADDR_MAX <= RPCB4_STRING_BOUND, "uaddr bound");

/* A GETADDR result: the string the encoder reads, and its room. */
struct rpcb_uaddr_res {
	rpcb4_uaddr uaddr;
	char buf[RPCB_UADDR_MAX];
};

/* One DUMP entry with the room for its strings. */
struct rpcb_dump_node {
	rpcb4_node node; /* first: the list's head is the allocation */
	char netid[8];
	char uaddr[RPCB_UADDR_MAX];
};

static const char rpcb_owner[] = "dsnfsd";

/* "tcp" / "udp" (IPv4), "tcp6" / "udp6" (IPv6) -> family and protocol;
 * -EINVAL for another netid. */
static int rpcb_netid_parse(const char *netid, int *family, uint32_t *prot)
{
	static const struct {
		const char *netid;
		int family;
		uint32_t prot;
	} netids[] = {
		{ "tcp", AF_INET, IPPROTO_TCP },
		{ "udp", AF_INET, IPPROTO_UDP },
		{ "tcp6", AF_INET6, IPPROTO_TCP },
		{ "udp6", AF_INET6, IPPROTO_UDP },
	};

	for (size_t i = 0; netid && i < ARRAY_SIZE(netids); i++) {
		if (!strcmp(netid, netids[i].netid)) {
			*family = netids[i].family;
			*prot = netids[i].prot;
			return 0;
		}
	}
	return -EINVAL;
}

static void rpcb_netid_format(int family, uint32_t prot, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s", prot == IPPROTO_TCP ? "tcp" : "udp",
		 family == AF_INET6 ? "6" : "");
}

/* @sa as a universal address: "127.0.0.1.8.1", "::1.8.1". */
static void rpcb_uaddr_format(const struct sockaddr_storage *ss, char *buf,
			      size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port = sockaddr_port((const struct sockaddr *)ss);
	const void *a =
		ss->ss_family == AF_INET
			? (const void *)&((const struct sockaddr_in *)ss)
				  ->sin_addr
			: (const void *)&((const struct sockaddr_in6 *)ss)
				  ->sin6_addr;

	inet_ntop(ss->ss_family, a, host, sizeof(host));
	snprintf(buf, len, "%s.%u.%u", host, port >> 8, port & 0xff);
}

/* @ss as an IPv4 address when it is one, v4-mapped or not. */
static void rpcb_unmap(const struct sockaddr_storage *ss,
		       struct sockaddr_storage *out)
{
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
	struct sockaddr_in *in4 = (struct sockaddr_in *)out;

	*out = *ss;
	if (ss->ss_family == AF_INET6 &&
	    IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
		memset(out, 0, sizeof(*out));
		in4->sin_family = AF_INET;
		in4->sin_port = in6->sin6_port;
		memcpy(&in4->sin_addr, &in6->sin6_addr.s6_addr[12], 4);
	}
}

static bool rpcb_is_wildcard(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET) {
		return ((const struct sockaddr_in *)ss)->sin_addr.s_addr ==
		       htonl(INADDR_ANY);
	}
	return IN6_IS_ADDR_UNSPECIFIED(
		&((const struct sockaddr_in6 *)ss)->sin6_addr);
}

/* Whether the listen address serves @family: "::" serves both. */
static bool rpcb_serves(const struct portmap_registry *reg, int family)
{
	struct sockaddr_storage l;

	if (!reg->listen_set) {
		return false;
	}
	rpcb_unmap(&reg->listen, &l);
	return l.ss_family == family ||
	       (l.ss_family == AF_INET6 && rpcb_is_wildcard(&l));
}

/*
 * Our address in @family as the caller reaches it (port 0): the listen
 * address, or for a wildcard one the local address the kernel routes to
 * the caller from (connecting a UDP socket sends nothing).  -EAFNOSUPPORT
 * when the listen address does not serve @family, or the caller of a
 * wildcard listener is of the other family.
 */
static int rpcb_local_addr(const struct portmap_registry *reg,
			   const struct request *req, int family,
			   struct sockaddr_storage *out)
{
	struct sockaddr_storage peer;
	socklen_t len = sizeof(*out);
	int fd, err = 0;

	if (!rpcb_serves(reg, family)) {
		return -EAFNOSUPPORT;
	}
	rpcb_unmap(&reg->listen, out);
	if (!rpcb_is_wildcard(out) && out->ss_family == family) {
		return 0;
	}
	rpcb_unmap(&req->peer, &peer);
	if (peer.ss_family != family) {
		return -EAFNOSUPPORT;
	}
	fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		return -errno;
	}
	if (connect(fd, (struct sockaddr *)&peer,
		    family == AF_INET ? sizeof(struct sockaddr_in)
				      : sizeof(struct sockaddr_in6)) < 0 ||
	    getsockname(fd, (struct sockaddr *)out, &len) < 0) {
		err = -errno;
	}
	close(fd);
	return err;
}

static void rpcb_set_port(struct sockaddr_storage *ss, uint32_t port)
{
	if (ss->ss_family == AF_INET) {
		((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
	} else {
		((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
	}
}

/* The registry's port of (@prog, @vers, @prot); rpcbind 3 and 4 are
 * served where PMAP v2 is. */
static uint32_t rpcb_getport(struct portmap_registry *reg, uint32_t prog,
			     uint32_t vers, uint32_t prot)
{
	if (prog == RPCB4_PROG &&
	    (vers == RPCB4_VERS3 || vers == RPCB4_VERS4)) {
		vers = PMAP2_VERS;
	}
	return portmap_registry_getport(reg, prog, vers, prot);
}

static enum rpc_disposition rpcb_proc_null(struct request *req,
					   const void *args, void *res)
{
	(void)req;
	(void)args;
	(void)res;
	return RPC_REPLY;
}

/* GETADDR and GETVERSADDR: the universal address of (prog, vers, netid),
 * or "" (RFC 1833 2.2: not registered). */
static enum rpc_disposition rpcb_proc_getaddr(struct request *req,
					      const void *args, void *res)
{
	const rpcb4_entry *e = args;
	struct rpcb_uaddr_res *r = res;
	struct sockaddr_storage ss;
	uint32_t prot, port;
	int family;

	r->uaddr = r->buf;
	if (rpcb_netid_parse(e->r_netid, &family, &prot)) {
		/* rpcbind answers for the netid of the transport the call came
		 * on, whatever r_netid says, and libnfs sends "": read an
		 * unknown netid as the caller's family over TCP (NFS is
		 * TCP-only here). */
		struct sockaddr_storage peer;

		rpcb_unmap(&req->peer, &peer);
		family = peer.ss_family;
		prot = IPPROTO_TCP;
	}
	port = rpcb_getport(req->svc, e->r_prog, e->r_vers, prot);
	if (port == 0 || rpcb_local_addr(req->svc, req, family, &ss)) {
		return RPC_REPLY;
	}
	rpcb_set_port(&ss, port);
	rpcb_uaddr_format(&ss, r->buf, sizeof(r->buf));
	return RPC_REPLY;
}

/* Adds one entry per family served for mapping @m (and for PMAP v2 itself,
 * rpcbind 3 and 4 at the same port). */
static size_t rpcb_dump_add(struct portmap_registry *reg,
			    const struct request *req, const pmap2_mapping *m,
			    struct rpcb_dump_node *nodes, size_t n)
{
	static const int families[] = { AF_INET, AF_INET6 };
	uint32_t vers[3] = { m->vers, RPCB4_VERS3, RPCB4_VERS4 };
	size_t nvers = m->prog == RPCB4_PROG && m->vers == PMAP2_VERS ? 3 : 1;

	for (size_t f = 0; f < 2; f++) {
		struct sockaddr_storage ss;

		if (!rpcb_serves(reg, families[f])) {
			continue;
		}
		if (rpcb_local_addr(reg, req, families[f], &ss)) {
			/* A caller of the other family: the wildcard. */
			rpcb_unmap(&reg->listen, &ss);
			if (ss.ss_family != families[f]) {
				memset(&ss, 0, sizeof(ss));
				ss.ss_family = (sa_family_t)families[f];
			}
		}
		rpcb_set_port(&ss, m->port);
		for (size_t v = 0; v < nvers; v++) {
			struct rpcb_dump_node *d = &nodes[n++];

			d->node.map.r_prog = m->prog;
			d->node.map.r_vers = vers[v];
			rpcb_netid_format(families[f], m->prot, d->netid,
					  sizeof(d->netid));
			rpcb_uaddr_format(&ss, d->uaddr, sizeof(d->uaddr));
			d->node.map.r_netid = d->netid;
			d->node.map.r_addr = d->uaddr;
			d->node.map.r_owner = (char *)rpcb_owner;
		}
	}
	return n;
}

static enum rpc_disposition rpcb_proc_dump(struct request *req,
					   const void *args, void *res)
{
	struct rpcb_dump_node *nodes;
	pmap2_list maps = NULL;
	size_t n = 0, cap = 0;

	(void)args;
	if (portmap__registry_dump(req->svc, &maps) < 0) {
		return RPC_DROP; /* no error status; the client retransmits */
	}
	for (const struct pmap2_node *m = maps; m; m = m->next) {
		cap += 6; /* two families, up to three versions */
	}
	if (cap == 0) {
		return RPC_REPLY;
	}
	nodes = calloc(cap, sizeof(*nodes));
	if (!nodes) {
		free(maps);
		return RPC_DROP;
	}
	for (const struct pmap2_node *m = maps; m; m = m->next) {
		n = rpcb_dump_add(req->svc, req, &m->map, nodes, n);
	}
	free(maps);
	for (size_t i = 0; i + 1 < n; i++) {
		nodes[i].node.next = &nodes[i + 1].node;
	}
	if (n == 0) {
		free(nodes);
		return RPC_REPLY;
	}
	*(rpcb4_list *)res = &nodes[0].node;
	return RPC_REPLY;
}

static void rpcb_dump_release(struct request *req, void *res)
{
	(void)req;
	/* The head node is the allocation (rpcb_proc_dump()). */
	free(*(rpcb4_list *)res);
	*(rpcb4_list *)res = NULL;
}

static void rpcb_trace_entry(const struct request *req, const void *args,
			     const void *res, char *buf, size_t len)
{
	const rpcb4_entry *e = args;

	(void)req;
	(void)res;
	snprintf(buf, len, "prog=%u vers=%u netid=%s", e->r_prog, e->r_vers,
		 e->r_netid ? e->r_netid : "");
}

static void rpcb_trace_uaddr(const struct request *req, const void *args,
			     const void *res, char *buf, size_t len)
{
	const struct rpcb_uaddr_res *r = res;

	(void)req;
	(void)args;
	snprintf(buf, len, "uaddr=\"%s\"", r->buf);
}

static void rpcb_trace_dump(const struct request *req, const void *args,
			    const void *res, char *buf, size_t len)
{
	size_t count = 0;

	(void)req;
	(void)args;
	for (const struct rpcb4_node *n = *(const rpcb4_list *)res; n;
	     n = n->next) {
		count++;
	}
	snprintf(buf, len, "entries=%zu", count);
}

/* Version 3's procedures are version 4's first five (RFC 1833 2.2.1):
 * one table, version 3 sees a prefix of it. */
static const struct rpc_proc rpcb_procs[] = {
	[RPCB4PROC4_NULL] = { .name = "NULL",
			      .handler = rpcb_proc_null,
			      .decode = (xdrproc_t)xdr_empty,
			      .encode = (xdrproc_t)xdr_empty },
	[RPCB4PROC4_GETADDR] = { .name = "GETADDR",
				 .handler = rpcb_proc_getaddr,
				 .decode = (xdrproc_t)xdr_rpcb4_entry,
				 .encode = (xdrproc_t)xdr_rpcb4_uaddr,
				 .args_size = sizeof(rpcb4_entry),
				 .res_size = sizeof(struct rpcb_uaddr_res),
				 .trace_args = rpcb_trace_entry,
				 .trace_res = rpcb_trace_uaddr },
	[RPCB4PROC4_DUMP] = { .name = "DUMP",
			      .handler = rpcb_proc_dump,
			      .release = rpcb_dump_release,
			      .decode = (xdrproc_t)xdr_empty,
			      .encode = (xdrproc_t)xdr_rpcb4_list,
			      .res_size = sizeof(rpcb4_list),
			      .trace_res = rpcb_trace_dump },
	[RPCB4PROC4_GETVERSADDR] = { .name = "GETVERSADDR",
				     .handler = rpcb_proc_getaddr,
				     .decode = (xdrproc_t)xdr_rpcb4_entry,
				     .encode = (xdrproc_t)xdr_rpcb4_uaddr,
				     .args_size = sizeof(rpcb4_entry),
				     .res_size = sizeof(struct rpcb_uaddr_res),
				     .trace_args = rpcb_trace_entry,
				     .trace_res = rpcb_trace_uaddr },
};

_Static_assert(RPCB4PROC_NULL == RPCB4PROC4_NULL &&
		       RPCB4PROC_GETADDR == RPCB4PROC4_GETADDR &&
		       RPCB4PROC_DUMP == RPCB4PROC4_DUMP,
	       "rpcbind 3 is a prefix of rpcbind 4");

void portmap_rpcb_program_init(struct rpc_program *prog,
			       struct portmap_registry *reg, uint32_t vers)
{
	memset(prog, 0, sizeof(*prog));
	prog->name = "rpcbind";
	prog->prog = RPCB4_PROG;
	prog->vers = vers;
	prog->procs = rpcb_procs;
	prog->nprocs = vers == RPCB4_VERS4 ? ARRAY_SIZE(rpcb_procs)
					   : RPCB4PROC_DUMP + 1;
	prog->ctx = reg;
}
