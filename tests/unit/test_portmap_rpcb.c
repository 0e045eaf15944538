// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests for nfsd/portmap/rpcb.c: rpcbind 3 and 4 answer universal
 * addresses for the netids the listen address serves.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "nfsd/portmap/portmap.h"
#include "nfsd/rpc/dispatch.h"
#include "rpcb4.h"

#define NFS_PROG 100003
#define MOUNT_PROG 100005

struct fixture {
	struct portmap_registry *reg;
	struct rpc_program v3, v4;
};

/* The GETADDR result as rpcb.c lays it out: the string, then its room. */
struct uaddr_res {
	rpcb4_uaddr uaddr;
	char buf[64];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(portmap_registry_new(&f->reg), 0);
	portmap_rpcb_program_init(&f->v3, f->reg, 3);
	portmap_rpcb_program_init(&f->v4, f->reg, 4);
	assert_int_equal(
		portmap_registry_set(f->reg, 100000, 2, IPPROTO_TCP, 111), 0);
	assert_int_equal(
		portmap_registry_set(f->reg, NFS_PROG, 3, IPPROTO_TCP, 2049),
		0);
	assert_int_equal(
		portmap_registry_set(f->reg, MOUNT_PROG, 3, IPPROTO_UDP, 20048),
		0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	portmap_registry_free(f->reg);
	free(f);
	return 0;
}

static void request_from(struct fixture *f, struct request *req,
			 const char *addr)
{
	memset(req, 0, sizeof(*req));
	req->svc = f->reg;
	if (strchr(addr, ':')) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&req->peer;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(900);
		assert_int_equal(inet_pton(AF_INET6, addr, &in6->sin6_addr), 1);
	} else {
		struct sockaddr_in *in4 = (struct sockaddr_in *)&req->peer;

		in4->sin_family = AF_INET;
		in4->sin_port = htons(900);
		assert_int_equal(inet_pton(AF_INET, addr, &in4->sin_addr), 1);
	}
}

/* GETADDR (or @proc) of (@prog, @vers, @netid) from @peer; the uaddr. */
static const char *getaddr(struct fixture *f, const struct rpc_program *prog,
			   uint32_t proc, const char *peer, uint32_t nprog,
			   uint32_t vers, const char *netid)
{
	static struct uaddr_res res;
	const struct rpc_proc *desc = &prog->procs[proc];
	rpcb4_entry e = { .r_prog = nprog,
			  .r_vers = vers,
			  .r_netid = (char *)netid,
			  .r_addr = "",
			  .r_owner = "" };
	struct rpc_call req_call = { .pool = NULL };

	assert_int_equal(desc->res_size, sizeof(res));
	memset(&res, 0, sizeof(res));
	request_from(f, &req_call.req, peer);
	assert_int_equal(desc->handler(&req_call.req, &e, &res), RPC_REPLY);
	assert_ptr_equal(res.uaddr, res.buf);
	return res.uaddr;
}

static void test_tables(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(f->v3.prog, 100000);
	assert_int_equal(f->v3.vers, 3);
	assert_int_equal(f->v4.vers, 4);
	assert_ptr_equal(f->v4.ctx, f->reg);
	/* v3: NULL..DUMP; v4 adds GETVERSADDR (9).  No SET, UNSET,
	 * CALLIT: dispatch answers PROC_UNAVAIL. */
	assert_int_equal(f->v3.nprocs, 5);
	assert_int_equal(f->v4.nprocs, 10);
	assert_null(f->v3.procs[RPCB4PROC_NULL + 1].handler);
	assert_null(f->v4.procs[5].handler);
	assert_non_null(f->v4.procs[RPCB4PROC4_GETVERSADDR].handler);
}

static void test_ipv6_listen_answers_ipv6_netids(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(portmap_registry_set_listen(f->reg, "::1"), 0);
	assert_string_equal(getaddr(f, &f->v4, RPCB4PROC4_GETADDR, "::1",
				    NFS_PROG, 3, "tcp6"),
			    "::1.8.1");
	assert_string_equal(getaddr(f, &f->v3, RPCB4PROC_GETADDR, "::1",
				    MOUNT_PROG, 3, "udp6"),
			    "::1.78.80");
	assert_string_equal(getaddr(f, &f->v4, RPCB4PROC4_GETVERSADDR, "::1",
				    NFS_PROG, 3, "tcp6"),
			    "::1.8.1");
	/* rpcbind 3 and 4 live where PMAP v2 does. */
	assert_string_equal(getaddr(f, &f->v4, RPCB4PROC4_GETADDR, "::1",
				    100000, 4, "udp6"),
			    "");
	assert_string_equal(getaddr(f, &f->v4, RPCB4PROC4_GETADDR, "::1",
				    100000, 4, "tcp6"),
			    "::1.0.111");
	/* Not served, not registered, another version or protocol: "". */
	assert_string_equal(getaddr(f, &f->v4, RPCB4PROC4_GETADDR, "::1",
				    NFS_PROG, 3, "tcp"),
			    "");
	assert_string_equal(getaddr(f, &f->v4, RPCB4PROC4_GETADDR, "::1",
				    100021, 4, "tcp6"),
			    "");
	assert_string_equal(getaddr(f, &f->v4, RPCB4PROC4_GETADDR, "::1",
				    NFS_PROG, 4, "tcp6"),
			    "");
	assert_string_equal(getaddr(f, &f->v4, RPCB4PROC4_GETADDR, "::1",
				    NFS_PROG, 3, "udp6"),
			    "");
	/* libnfs sends no netid: the caller's family, TCP. */
	assert_string_equal(
		getaddr(f, &f->v3, RPCB4PROC_GETADDR, "::1", NFS_PROG, 3, ""),
		"::1.8.1");
}

static void test_ipv4_listen_answers_ipv4_netids(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(portmap_registry_set_listen(f->reg, "127.0.0.1"), 0);
	assert_string_equal(getaddr(f, &f->v3, RPCB4PROC_GETADDR, "127.0.0.1",
				    NFS_PROG, 3, "tcp"),
			    "127.0.0.1.8.1");
	assert_string_equal(getaddr(f, &f->v3, RPCB4PROC_GETADDR, "127.0.0.1",
				    NFS_PROG, 3, "tcp6"),
			    "");
	assert_string_equal(getaddr(f, &f->v3, RPCB4PROC_GETADDR,
				    "::ffff:127.0.0.1", NFS_PROG, 3, "bogus"),
			    "127.0.0.1.8.1");
}

static void
test_wildcard_listen_answers_the_address_the_caller_reaches(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(portmap_registry_set_listen(f->reg, "::"), 0);
	assert_string_equal(getaddr(f, &f->v4, RPCB4PROC4_GETADDR, "::1",
				    NFS_PROG, 3, "tcp6"),
			    "::1.8.1");
	/* An IPv4 caller on the dual-stack socket. */
	assert_string_equal(getaddr(f, &f->v4, RPCB4PROC4_GETADDR,
				    "::ffff:127.0.0.1", NFS_PROG, 3, "tcp"),
			    "127.0.0.1.8.1");
	assert_string_equal(getaddr(f, &f->v4, RPCB4PROC4_GETADDR,
				    "::ffff:127.0.0.1", NFS_PROG, 3, "tcp6"),
			    "");
	assert_int_equal(portmap_registry_set_listen(f->reg, "0.0.0.0"), 0);
	assert_string_equal(getaddr(f, &f->v4, RPCB4PROC4_GETADDR, "127.0.0.2",
				    NFS_PROG, 3, "tcp"),
			    "127.0.0.1.8.1");
	assert_string_equal(getaddr(f, &f->v4, RPCB4PROC4_GETADDR, "::1",
				    NFS_PROG, 3, "tcp6"),
			    "");
	assert_int_equal(portmap_registry_set_listen(f->reg, "nohost"),
			 -EINVAL);
	assert_string_equal(getaddr(f, &f->v4, RPCB4PROC4_GETADDR, "::1",
				    NFS_PROG, 3, "tcp6"),
			    "");
}

static void test_dump_lists_each_netid_served(void **state)
{
	struct fixture *f = *state;
	const struct rpc_proc *desc = &f->v4.procs[RPCB4PROC4_DUMP];
	char buf[RPC_TRACE_DETAIL_MAX], line[128];
	char all[1024] = "";
	rpcb4_list list = NULL;
	struct rpc_call req_call = { .pool = NULL };

	assert_int_equal(portmap_registry_set_listen(f->reg, "::1"), 0);
	request_from(f, &req_call.req, "::1");
	assert_int_equal(desc->handler(&req_call.req, NULL, &list), RPC_REPLY);
	for (const struct rpcb4_node *n = list; n; n = n->next) {
		snprintf(line, sizeof(line), "%u %u %s %s %s\n", n->map.r_prog,
			 n->map.r_vers, n->map.r_netid, n->map.r_addr,
			 n->map.r_owner);
		strcat(all, line);
	}
	assert_string_equal(all, "100000 2 tcp6 ::1.0.111 dsnfsd\n"
				 "100000 3 tcp6 ::1.0.111 dsnfsd\n"
				 "100000 4 tcp6 ::1.0.111 dsnfsd\n"
				 "100003 3 tcp6 ::1.8.1 dsnfsd\n"
				 "100005 3 udp6 ::1.78.80 dsnfsd\n");
	desc->trace_res(&req_call.req, NULL, &list, buf, sizeof(buf));
	assert_string_equal(buf, "entries=5");
	desc->release(&req_call.req, &list);
	assert_null(list);

	/* "::" serves both families; the other family shows its wildcard. */
	assert_int_equal(portmap_registry_set_listen(f->reg, "::"), 0);
	assert_int_equal(portmap_registry_unset(f->reg, 100000, 2), 0);
	assert_int_equal(portmap_registry_unset(f->reg, MOUNT_PROG, 3), 0);
	assert_int_equal(desc->handler(&req_call.req, NULL, &list), RPC_REPLY);
	assert_non_null(list);
	assert_string_equal(list->map.r_netid, "tcp");
	assert_string_equal(list->map.r_addr, "0.0.0.0.8.1");
	assert_non_null(list->next);
	assert_string_equal(list->next->map.r_netid, "tcp6");
	assert_string_equal(list->next->map.r_addr, "::1.8.1");
	assert_null(list->next->next);
	desc->release(&req_call.req, &list);

	assert_int_equal(portmap_registry_unset(f->reg, NFS_PROG, 3), 0);
	assert_int_equal(desc->handler(&req_call.req, NULL, &list), RPC_REPLY);
	assert_null(list);
	desc->release(&req_call.req, &list);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_tables, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_ipv6_listen_answers_ipv6_netids, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_ipv4_listen_answers_ipv4_netids, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_wildcard_listen_answers_the_address_the_caller_reaches,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_dump_lists_each_netid_served, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
