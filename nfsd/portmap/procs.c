// SPDX-License-Identifier: Apache-2.0
/*
 * procs: the procedures of the built-in portmapper, PMAP version 2 (RFC
 * 1833 3: NULL, SET, UNSET, GETPORT, DUMP), their table and their --trace
 * summaries.  SET and UNSET change the registry only for loopback callers
 * (127.0.0.0/8, ::1, ::ffff:127.0.0.0/104) from a privileged source port
 * (below 1024: root's, as rpcbind asks of a caller over the network);
 * dsnfsd's own programs are put in the registry directly, not over RPC.
 * Others get FALSE, as rpcbind answers them, and one log line.  CALLIT is
 * left out of the table (see portmap.h).
 */
#include "nfsd/portmap/portmap_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/base/base.h"
#include "nfsd/base/log.h"
#include "nfsd/base/ratelimit.h"
#include "nfsd/base/sockaddr.h"
#include "nfsd/proto/xdr_empty.h"

_Static_assert(PORTMAP_PROG == PMAP2_PROG && PORTMAP_VERS == PMAP2_VERS,
	       "portmap.h and pmap.x disagree");

static bool portmap_peer_is_loopback(const struct request *req)
{
	const struct sockaddr_in *in4 = (const struct sockaddr_in *)&req->peer;
	const struct sockaddr_in6 *in6 =
		(const struct sockaddr_in6 *)&req->peer;

	if (req->peer.ss_family == AF_INET) {
		return (ntohl(in4->sin_addr.s_addr) >> 24) == 127;
	}
	if (req->peer.ss_family == AF_INET6) {
		if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr)) {
			return true;
		}
		return IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) &&
		       in6->sin6_addr.s6_addr[12] == 127;
	}
	return false;
}

/* SET and UNSET: whether the caller may change the registry (@proc names
 * the procedure in the refusal). */
static bool portmap_caller_may_change(struct request *req, const char *proc,
				      const pmap2_mapping *m)
{
	static struct ratelimit rl;
	const char *why;
	char note[64];
	uint64_t held;

	if (!portmap_peer_is_loopback(req)) {
		why = "not a loopback caller";
	} else if (sockaddr_port((const struct sockaddr *)&req->peer) >= 1024) {
		why = "source port not privileged (SET and UNSET are root's: "
		      "a caller on a port below 1024)";
	} else {
		return true;
	}
	/* A local user could otherwise point clients at a server of its
	 * own: refused, and said (at most once a second). */
	if (ratelimit_take(&rl, &held)) {
		log_warn("portmap: %s: %s of program %u version %u refused: "
			 "%s%s",
			 request_peer(req), proc, m->prog, m->vers, why,
			 ratelimit_held_note(held, note, sizeof(note)));
	}
	return false;
}

static enum rpc_disposition portmap_proc_null(struct request *req,
					      const void *args, void *res)
{
	(void)req;
	(void)args;
	(void)res;
	return RPC_REPLY;
}

static enum rpc_disposition portmap_proc_set(struct request *req,
					     const void *args, void *res)
{
	const pmap2_mapping *m = args;
	bool_t *ok = res;
	int err;

	*ok = FALSE;
	if (!portmap_caller_may_change(req, "SET", m)) {
		return RPC_REPLY;
	}
	err = portmap_registry_set(req->svc, m->prog, m->vers, m->prot,
				   m->port);
	*ok = err == 0;
	return RPC_REPLY;
}

static enum rpc_disposition portmap_proc_unset(struct request *req,
					       const void *args, void *res)
{
	const pmap2_mapping *m = args;
	bool_t *ok = res;

	*ok = FALSE;
	if (!portmap_caller_may_change(req, "UNSET", m)) {
		return RPC_REPLY;
	}
	*ok = portmap_registry_unset(req->svc, m->prog, m->vers) == 0;
	return RPC_REPLY;
}

static enum rpc_disposition portmap_proc_getport(struct request *req,
						 const void *args, void *res)
{
	const pmap2_mapping *m = args;
	u_int *port = res;

	*port = portmap_registry_getport(req->svc, m->prog, m->vers, m->prot);
	return RPC_REPLY;
}

static enum rpc_disposition portmap_proc_dump(struct request *req,
					      const void *args, void *res)
{
	(void)args;
	if (portmap__registry_dump(req->svc, res) < 0) {
		/* DUMP has no error status; the client will retransmit. */
		return RPC_DROP;
	}
	return RPC_REPLY;
}

static void portmap_dump_release(struct request *req, void *res)
{
	(void)req;
	/* The head node is the allocation (portmap__registry_dump()). */
	free(*(pmap2_list *)res);
	*(pmap2_list *)res = NULL;
}

static const char *portmap_prot_name(uint32_t prot)
{
	switch (prot) {
	case IPPROTO_TCP:
		return "tcp";
	case IPPROTO_UDP:
		return "udp";
	}
	return "?";
}

static void portmap_trace_mapping(const struct request *req, const void *args,
				  const void *res, char *buf, size_t len)
{
	const pmap2_mapping *m = args;

	(void)req;
	(void)res;
	snprintf(buf, len, "prog=%u vers=%u prot=%s port=%u", m->prog, m->vers,
		 portmap_prot_name(m->prot), m->port);
}

static void portmap_trace_bool_res(const struct request *req, const void *args,
				   const void *res, char *buf, size_t len)
{
	(void)req;
	(void)args;
	snprintf(buf, len, "%s", *(const bool_t *)res ? "TRUE" : "FALSE");
}

static void portmap_trace_getport_res(const struct request *req,
				      const void *args, const void *res,
				      char *buf, size_t len)
{
	(void)req;
	(void)args;
	snprintf(buf, len, "port=%u", *(const u_int *)res);
}

static void portmap_trace_dump_res(const struct request *req, const void *args,
				   const void *res, char *buf, size_t len)
{
	const struct pmap2_node *n;
	size_t count = 0;

	(void)req;
	(void)args;
	for (n = *(const pmap2_list *)res; n; n = n->next) {
		count++;
	}
	snprintf(buf, len, "entries=%zu", count);
}

static const struct rpc_proc portmap_procs[] = {
	[PMAP2PROC_NULL] = { .name = "NULL",
			     .handler = portmap_proc_null,
			     .decode = (xdrproc_t)xdr_empty,
			     .encode = (xdrproc_t)xdr_empty },
	[PMAP2PROC_SET] = { .name = "SET",
			    .handler = portmap_proc_set,
			    .decode = (xdrproc_t)xdr_pmap2_mapping,
			    .encode = (xdrproc_t)xdr_bool,
			    .args_size = sizeof(pmap2_mapping),
			    .res_size = sizeof(bool_t),
			    .trace_args = portmap_trace_mapping,
			    .trace_res = portmap_trace_bool_res },
	[PMAP2PROC_UNSET] = { .name = "UNSET",
			      .handler = portmap_proc_unset,
			      .decode = (xdrproc_t)xdr_pmap2_mapping,
			      .encode = (xdrproc_t)xdr_bool,
			      .args_size = sizeof(pmap2_mapping),
			      .res_size = sizeof(bool_t),
			      .trace_args = portmap_trace_mapping,
			      .trace_res = portmap_trace_bool_res },
	[PMAP2PROC_GETPORT] = { .name = "GETPORT",
				.handler = portmap_proc_getport,
				.decode = (xdrproc_t)xdr_pmap2_mapping,
				.encode = (xdrproc_t)xdr_u_int,
				.args_size = sizeof(pmap2_mapping),
				.res_size = sizeof(u_int),
				.trace_args = portmap_trace_mapping,
				.trace_res = portmap_trace_getport_res },
	[PMAP2PROC_DUMP] = { .name = "DUMP",
			     .handler = portmap_proc_dump,
			     .release = portmap_dump_release,
			     .decode = (xdrproc_t)xdr_empty,
			     .encode = (xdrproc_t)xdr_pmap2_list,
			     .res_size = sizeof(pmap2_list),
			     .trace_res = portmap_trace_dump_res },
};

void portmap_program_init(struct rpc_program *prog,
			  struct portmap_registry *reg)
{
	memset(prog, 0, sizeof(*prog));
	prog->name = "portmap";
	prog->prog = PMAP2_PROG;
	prog->vers = PMAP2_VERS;
	prog->procs = portmap_procs;
	prog->nprocs = ARRAY_SIZE(portmap_procs);
	prog->ctx = reg;
}
