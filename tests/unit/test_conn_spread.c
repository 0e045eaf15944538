// SPDX-License-Identifier: Apache-2.0
/*
 * test_conn_spread: where accepted connections go (net__place_conn), over
 * real loopback TCP with two worker loops and two listeners, as a server's
 * NFS port (listener 0) and MOUNT port (listener 1).  A client that opens
 * a short MOUNT connection before each NFS one, as libnfs and ESXi do,
 * still gets its NFS connections spread evenly over the loops (one turn
 * shared by all listeners put every one of them on the same loop); a
 * closed connection is uncounted; a new one goes to the loop with the
 * fewest, not to the next in turn.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "nfsd/net/net_int.h"
#include "tests/lib/conn_fixture.h"

#define TEST_NFS 0u /* listener numbers, in net_listen order */
#define TEST_MOUNT 1u
#define TEST_CONNS 4
#define TEST_WAIT_MS 5000

static int setup(void **state)
{
	return conn_fixture_setup_loops(state, 2);
}

/* A connection to @port that has been answered once: counted by then. */
static int connect_answered(int port, uint32_t xid)
{
	uint8_t call[CONN_FIXTURE_CALL_LEN];
	size_t len = conn_fixture_call_build(call, xid, CONN_FIXTURE_ECHO, xid);
	int fd = conn_fixture_connect_port(port, 0);
	uint32_t got = 0;

	conn_fixture_write_all(fd, call, len);
	assert_int_equal(conn_fixture_read_echo(fd, &got), xid);
	assert_int_equal(got, xid);
	return fd;
}

static uint32_t spread_total(struct conn_fixture *f, unsigned listener)
{
	return net__spread_conns(&f->net, listener, 0) +
	       net__spread_conns(&f->net, listener, 1);
}

/* Closes are counted on the loops: waits until @listener has @want. */
static void wait_total(struct conn_fixture *f, unsigned listener, uint32_t want)
{
	const struct timespec tick = { .tv_nsec = 10 * 1000 * 1000 };

	for (int ms = 0; ms < TEST_WAIT_MS && spread_total(f, listener) != want;
	     ms += 10) {
		nanosleep(&tick, NULL);
	}
	assert_int_equal(spread_total(f, listener), want);
}

static void test_conn_spread_nfs_even_with_mount_conns_between(void **state)
{
	struct conn_fixture *f = *state;
	int nfs[TEST_CONNS];

	for (int i = 0; i < TEST_CONNS; i++) {
		int mnt = connect_answered(f->port2, 0x100 + (uint32_t)i);

		nfs[i] = connect_answered(f->port, 0x200 + (uint32_t)i);
		close(mnt);
	}
	assert_int_equal(net__spread_conns(&f->net, TEST_NFS, 0),
			 TEST_CONNS / 2);
	assert_int_equal(net__spread_conns(&f->net, TEST_NFS, 1),
			 TEST_CONNS / 2);
	wait_total(f, TEST_MOUNT, 0);
	for (int i = 0; i < TEST_CONNS; i++) {
		close(nfs[i]);
	}
	wait_total(f, TEST_NFS, 0);
}

static void test_conn_spread_new_conn_goes_to_fewest(void **state)
{
	struct conn_fixture *f = *state;
	int nfs[TEST_CONNS];
	unsigned emptier;

	for (int i = 0; i < TEST_CONNS; i++) {
		nfs[i] = connect_answered(f->port, 0x300 + (uint32_t)i);
	}
	close(nfs[0]);
	wait_total(f, TEST_NFS, TEST_CONNS - 1);
	emptier = net__spread_conns(&f->net, TEST_NFS, 0) <
				  net__spread_conns(&f->net, TEST_NFS, 1)
			  ? 0
			  : 1;
	assert_int_equal(net__spread_conns(&f->net, TEST_NFS, emptier),
			 TEST_CONNS / 2 - 1);
	/* Twice, so that the turn alone cannot land both on it. */
	for (int round = 0; round < 2; round++) {
		nfs[0] = connect_answered(f->port, 0x400 + (uint32_t)round);
		assert_int_equal(net__spread_conns(&f->net, TEST_NFS, emptier),
				 TEST_CONNS / 2);
		assert_int_equal(net__spread_conns(&f->net, TEST_NFS, !emptier),
				 TEST_CONNS / 2);
		close(nfs[0]);
		wait_total(f, TEST_NFS, TEST_CONNS - 1);
	}
	for (int i = 1; i < TEST_CONNS; i++) {
		close(nfs[i]);
	}
	wait_total(f, TEST_NFS, 0);
}

#define T(name)                                                                \
	cmocka_unit_test_setup_teardown(name, setup, conn_fixture_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_conn_spread_nfs_even_with_mount_conns_between),
		T(test_conn_spread_new_conn_goes_to_fewest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
