// SPDX-License-Identifier: Apache-2.0
/*
 * test_portmap: the built-in portmapper (nfsd/portmap/, RFC 1833 3): the
 * registry's rules, the PMAP v2 procedures called through their table
 * with hand-built requests, and the rpcbind probe against a refused port,
 * a silent listener and a minimal answering peer.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "nfsd/portmap/portmap.h"
#include "nfsd/rpc/dispatch.h"
#include "pmap.h"
#include "tests/lib/log_capture.h"

#define NFS_PROG 100003
#define MOUNT_PROG 100005

struct fixture {
	struct portmap_registry *reg;
	struct rpc_program prog;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(portmap_registry_new(&f->reg), 0);
	portmap_program_init(&f->prog, f->reg);
	log_capture_reset();
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

static void test_registry_set_getport_unset(void **state)
{
	struct fixture *f = *state;
	struct portmap_registry *reg = f->reg;

	assert_int_equal(
		portmap_registry_set(reg, NFS_PROG, 3, IPPROTO_TCP, 2049), 0);
	assert_int_equal(
		portmap_registry_set(reg, NFS_PROG, 3, IPPROTO_UDP, 2050), 0);
	assert_int_equal(
		portmap_registry_set(reg, MOUNT_PROG, 3, IPPROTO_TCP, 20048),
		0);
	assert_int_equal(
		portmap_registry_getport(reg, NFS_PROG, 3, IPPROTO_UDP), 2050);
	assert_int_equal(
		portmap_registry_getport(reg, NFS_PROG, 2, IPPROTO_TCP), 0);
	/* RFC 1833: SET refuses a triple that is already mapped. */
	assert_int_equal(
		portmap_registry_set(reg, NFS_PROG, 3, IPPROTO_TCP, 9999),
		-EEXIST);
	assert_int_equal(
		portmap_registry_getport(reg, NFS_PROG, 3, IPPROTO_TCP), 2049);
	/* UNSET drops every protocol of (prog, vers). */
	assert_int_equal(portmap_registry_unset(reg, NFS_PROG, 3), 0);
	assert_int_equal(portmap_registry_count(reg), 1);
	assert_int_equal(
		portmap_registry_getport(reg, NFS_PROG, 3, IPPROTO_UDP), 0);
	assert_int_equal(portmap_registry_unset(reg, NFS_PROG, 3), -ENOENT);
	assert_int_equal(
		portmap_registry_getport(reg, MOUNT_PROG, 3, IPPROTO_TCP),
		20048);
}

static void test_registry_rejects_bad_mappings(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(portmap_registry_set(f->reg, 1, 1, 132, 5), -EINVAL);
	assert_int_equal(portmap_registry_set(f->reg, 1, 1, IPPROTO_TCP, 0),
			 -EINVAL);
	assert_int_equal(portmap_registry_set(f->reg, 1, 1, IPPROTO_TCP, 65536),
			 -EINVAL);
	assert_int_equal(portmap_registry_count(f->reg), 0);
}

static void test_registry_is_bounded(void **state)
{
	struct fixture *f = *state;
	uint32_t i;

	for (i = 0; i < PORTMAP_REGISTRY_MAX; i++) {
		assert_int_equal(portmap_registry_set(f->reg, 200000 + i, 1,
						      IPPROTO_TCP, 1000 + i),
				 0);
	}
	assert_int_equal(portmap_registry_set(f->reg, 1, 1, IPPROTO_TCP, 5),
			 -ENOSPC);
	assert_int_equal(portmap_registry_unset(f->reg, 200000, 1), 0);
	assert_int_equal(portmap_registry_set(f->reg, 1, 1, IPPROTO_TCP, 5), 0);
}

static void request_from(struct fixture *f, struct request *req,
			 const char *addr)
{
	memset(req, 0, sizeof(*req));
	req->svc = f->reg;
	req->program = &f->prog;
	if (strchr(addr, ':')) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&req->peer;

		in6->sin6_family = AF_INET6;
		assert_int_equal(inet_pton(AF_INET6, addr, &in6->sin6_addr), 1);
		req->peer_len = sizeof(*in6);
	} else {
		struct sockaddr_in *in4 = (struct sockaddr_in *)&req->peer;

		in4->sin_family = AF_INET;
		assert_int_equal(inet_pton(AF_INET, addr, &in4->sin_addr), 1);
		req->peer_len = sizeof(*in4);
	}
}

/* The source port set_from() calls from (0: privileged). */
static uint16_t from_port;

/* Calls SET (or UNSET) from @addr; returns the boolean reply. */
static bool_t set_from(struct fixture *f, uint32_t proc, const char *addr,
		       uint32_t prog, uint32_t port)
{
	const struct rpc_proc *desc = &f->prog.procs[proc];
	pmap2_mapping m = {
		.prog = prog, .vers = 3, .prot = IPPROTO_TCP, .port = port
	};
	struct rpc_call req_call = { .pool = NULL };
	bool_t res = 7;

	request_from(f, &req_call.req, addr);
	if (req_call.req.peer.ss_family == AF_INET) {
		((struct sockaddr_in *)&req_call.req.peer)->sin_port =
			htons(from_port);
	} else {
		((struct sockaddr_in6 *)&req_call.req.peer)->sin6_port =
			htons(from_port);
	}
	req_call.req.desc = desc;
	assert_int_equal(desc->res_size, sizeof(res));
	assert_int_equal(desc->handler(&req_call.req, &m, &res), RPC_REPLY);
	return res;
}

static u_int getport(struct fixture *f, uint32_t prog)
{
	const struct rpc_proc *desc = &f->prog.procs[PMAP2PROC_GETPORT];
	pmap2_mapping m = { .prog = prog, .vers = 3, .prot = IPPROTO_TCP };
	struct rpc_call req_call = { .pool = NULL };
	u_int port = 7;

	request_from(f, &req_call.req, "10.1.1.1");
	assert_int_equal(desc->handler(&req_call.req, &m, &port), RPC_REPLY);
	return port;
}

static void test_table_has_no_callit(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(f->prog.prog, 100000);
	assert_int_equal(f->prog.vers, 2);
	assert_ptr_equal(f->prog.ctx, f->reg);
	/* Procedure 5 is outside the table: dispatch says PROC_UNAVAIL. */
	assert_int_equal(f->prog.nprocs, PMAP2PROC_CALLIT);
}

static void test_set_and_unset_only_from_loopback(void **state)
{
	struct fixture *f = *state;

	assert_false(set_from(f, PMAP2PROC_SET, "10.0.0.1", NFS_PROG, 2049));
	assert_false(set_from(f, PMAP2PROC_SET, "fd00::1", NFS_PROG, 2049));
	assert_int_equal(portmap_registry_count(f->reg), 0);
	assert_true(set_from(f, PMAP2PROC_SET, "127.0.0.1", NFS_PROG, 2049));
	assert_false(set_from(f, PMAP2PROC_SET, "127.0.0.1", NFS_PROG, 2050));
	assert_true(set_from(f, PMAP2PROC_SET, "::1", MOUNT_PROG, 20048));
	assert_int_equal(getport(f, NFS_PROG), 2049);
	assert_int_equal(getport(f, MOUNT_PROG), 20048);
	assert_int_equal(getport(f, 100021), 0);

	assert_false(set_from(f, PMAP2PROC_UNSET, "10.0.0.1", NFS_PROG, 0));
	assert_int_equal(getport(f, NFS_PROG), 2049);
	assert_true(
		set_from(f, PMAP2PROC_UNSET, "::ffff:127.0.0.9", NFS_PROG, 0));
	assert_int_equal(getport(f, NFS_PROG), 0);
	assert_false(set_from(f, PMAP2PROC_UNSET, "127.0.0.1", NFS_PROG, 0));
}

/* Issue 23: a local user's program on an unprivileged port may not
 * point NFS or MOUNT at a server of its own: SET and UNSET need a
 * privileged source port too (rpcbind asks root of remote callers). */
static void test_set_and_unset_only_from_privileged_ports(void **state)
{
	struct fixture *f = *state;

	from_port = 700;
	assert_true(set_from(f, PMAP2PROC_SET, "127.0.0.1", NFS_PROG, 2049));
	from_port = 1024;
	assert_false(set_from(f, PMAP2PROC_UNSET, "127.0.0.1", NFS_PROG, 0));
	assert_int_equal(getport(f, NFS_PROG), 2049);
	from_port = 40000;
	assert_false(set_from(f, PMAP2PROC_UNSET, "::1", NFS_PROG, 0));
	assert_false(set_from(f, PMAP2PROC_SET, "::1", MOUNT_PROG, 4444));
	assert_int_equal(getport(f, NFS_PROG), 2049);
	assert_int_equal(getport(f, MOUNT_PROG), 0);
	from_port = 1023;
	assert_true(set_from(f, PMAP2PROC_UNSET, "127.0.0.1", NFS_PROG, 0));
	assert_int_equal(getport(f, NFS_PROG), 0);
	from_port = 0;
}

static void test_dump_lists_in_registration_order(void **state)
{
	struct fixture *f = *state;
	const struct rpc_proc *desc = &f->prog.procs[PMAP2PROC_DUMP];
	char buf[RPC_TRACE_DETAIL_MAX];
	pmap2_list list = NULL;
	struct rpc_call req_call = { .pool = NULL };

	assert_int_equal(
		portmap_registry_set(f->reg, 100000, 2, IPPROTO_TCP, 111), 0);
	assert_int_equal(
		portmap_registry_set(f->reg, NFS_PROG, 3, IPPROTO_TCP, 2049),
		0);
	assert_int_equal(
		portmap_registry_set(f->reg, MOUNT_PROG, 3, IPPROTO_UDP, 20048),
		0);
	assert_int_equal(portmap_registry_unset(f->reg, NFS_PROG, 3), 0);
	request_from(f, &req_call.req, "10.1.1.1");
	assert_int_equal(desc->handler(&req_call.req, NULL, &list), RPC_REPLY);
	assert_non_null(list);
	assert_int_equal(list->map.port, 111);
	assert_int_equal(list->next->map.prog, MOUNT_PROG);
	assert_int_equal(list->next->map.prot, IPPROTO_UDP);
	assert_null(list->next->next);
	desc->trace_res(&req_call.req, NULL, &list, buf, sizeof(buf));
	assert_string_equal(buf, "entries=2");
	desc->release(&req_call.req, &list);
	assert_null(list);

	assert_int_equal(portmap_registry_unset(f->reg, 100000, 2), 0);
	assert_int_equal(portmap_registry_unset(f->reg, MOUNT_PROG, 3), 0);
	assert_int_equal(desc->handler(&req_call.req, NULL, &list), RPC_REPLY);
	assert_null(list);
	desc->release(&req_call.req, &list);
}

static void test_trace_summaries(void **state)
{
	struct fixture *f = *state;
	const struct rpc_proc *p = f->prog.procs;
	pmap2_mapping m = {
		.prog = NFS_PROG, .vers = 3, .prot = IPPROTO_UDP, .port = 2049
	};
	char buf[RPC_TRACE_DETAIL_MAX];
	bool_t yes = TRUE;
	u_int port = 2049;
	struct rpc_call req_call = { .pool = NULL };

	request_from(f, &req_call.req, "127.0.0.1");
	p[PMAP2PROC_SET].trace_args(&req_call.req, &m, &yes, buf, sizeof(buf));
	assert_string_equal(buf, "prog=100003 vers=3 prot=udp port=2049");
	p[PMAP2PROC_SET].trace_res(&req_call.req, &m, &yes, buf, sizeof(buf));
	assert_string_equal(buf, "TRUE");
	p[PMAP2PROC_GETPORT].trace_res(&req_call.req, &m, &port, buf,
				       sizeof(buf));
	assert_string_equal(buf, "port=2049");
}

/* A loopback TCP socket bound to an ephemeral port; listening or not. */
static int loopback_socket(bool listening, struct sockaddr_in *addr)
{
	socklen_t len = sizeof(*addr);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)addr, sizeof(*addr)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)addr, &len), 0);
	if (listening) {
		assert_int_equal(listen(fd, 4), 0);
	}
	return fd;
}

static void test_probe_refused_port(void **state)
{
	struct sockaddr_in addr;
	int fd = loopback_socket(false, &addr);

	(void)state;
	/* Bound but not listening: the connection is refused. */
	assert_int_equal(portmap_rpcbind_probe(&addr, 1000), -ECONNREFUSED);
	close(fd);
}

static void test_probe_silent_listener_times_out(void **state)
{
	struct sockaddr_in addr;
	int fd = loopback_socket(true, &addr);

	(void)state;
	/* The kernel completes the handshake; nobody ever answers. */
	assert_int_equal(portmap_rpcbind_probe(&addr, 100), -ETIMEDOUT);
	close(fd);
}

/* Answers one RPC call on the listening socket *arg with SUCCESS and an
 * empty body (RFC 5531 9). */
static void *answer_one_call(void *arg)
{
	int lfd = *(int *)arg, fd;
	uint8_t call[512];
	uint32_t reply[7];
	ssize_t n;

	fd = accept(lfd, NULL, NULL);
	if (fd < 0) {
		return NULL;
	}
	n = read(fd, call, sizeof(call));
	if (n >= 8) {
		reply[0] = htonl(0x80000000u | 24); /* last fragment */
		memcpy(&reply[1], call + 4, 4); /* xid */
		reply[2] = htonl(1); /* REPLY */
		reply[3] = htonl(0); /* MSG_ACCEPTED */
		reply[4] = htonl(0); /* verifier AUTH_NONE */
		reply[5] = htonl(0); /* of length 0 */
		reply[6] = htonl(0); /* SUCCESS */
		if (write(fd, reply, sizeof(reply)) != sizeof(reply)) {
			n = -1;
		}
	}
	/* Hold the connection until the client hangs up. */
	while (read(fd, call, sizeof(call)) > 0) {
	}
	close(fd);
	return NULL;
}

static void test_probe_answering_portmapper(void **state)
{
	struct sockaddr_in addr;
	int fd = loopback_socket(true, &addr);
	pthread_t thread;

	(void)state;
	assert_int_equal(pthread_create(&thread, NULL, answer_one_call, &fd),
			 0);
	assert_int_equal(portmap_rpcbind_probe(&addr, 5000), 0);
	assert_int_equal(pthread_join(thread, NULL), 0);
	close(fd);
}

static void test_rpcbind_register_rejects_other_protocols(void **state)
{
	(void)state;
	/* Refused before any rpcbind is contacted. */
	assert_int_equal(portmap_rpcbind_register(100003, 3, 132, 2049),
			 -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_registry_set_getport_unset,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_registry_rejects_bad_mappings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_registry_is_bounded, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_table_has_no_callit, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_set_and_unset_only_from_loopback, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_set_and_unset_only_from_privileged_ports, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_dump_lists_in_registration_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trace_summaries, setup,
						teardown),
		cmocka_unit_test(test_probe_refused_port),
		cmocka_unit_test(test_probe_silent_listener_times_out),
		cmocka_unit_test(test_probe_answering_portmapper),
		cmocka_unit_test(test_rpcbind_register_rejects_other_protocols),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
