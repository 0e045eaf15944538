/* SPDX-License-Identifier: Apache-2.0 */
/*
 * conn_fixture: a real server on loopback for tests of nfsd/net
 * (test_conn*.c): net_start() with one worker (or more), a work pool of two
 * threads, a traffic model with default caps as the dispatcher's admission, TCP
 * (and optionally UDP) listeners on 127.0.0.1 port 0, and the main loop on
 * its own thread, stopped through an ev_async.  It serves a tiny program
 * (CONN_FIXTURE_PROG v1) built from tests/lib/rpc_test_prog.h:
 *
 *   NULL   nothing in, nothing out
 *   ECHO   u_int in, the same out; charged to RPC_TEST_VOLUME
 *   FILL   u_int in, fill_bytes of zeros out; counted in struct
 *          conn_fixture_fill on the worker thread
 *   DEFER  u_int in, plus one out, as deferred work; charged
 *   SUM    u_int wait, opaque data<> in (the data borrowed from the
 *          record, as a WRITE's); the data's FNV-1a hash out, computed
 *          inline (CONN_FIXTURE_SUM_INLINE), or after the gate opens
 *          (conn_fixture_gate) as deferred work on a work thread
 *          (_DEFER) or by a thread of its own while the call is parked
 *          (_PARK: request_park(), as a WRITE waits for the intent log's
 *          flush): the call holds its record while more input arrives.
 *          Not idempotent: with a DRC (conn_fixture_setup_drc) a
 *          retransmission is dropped or replayed
 *
 * The test is the client: blocking sockets with a timeout on every call,
 * and helpers that build calls of one u_int argument and read replies.
 */
#ifndef DSNFS_TESTS_CONN_FIXTURE_H
#define DSNFS_TESTS_CONN_FIXTURE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ev.h>
#include <rpc/rpc.h>

#include "nfsd/net/net.h"
#include "nfsd/rpc/dispatch.h"
#include "nfsd/rpc/work.h"
#include "nfsd/traffic/traffic.h"

#define CONN_FIXTURE_PROG 400000

enum conn_fixture_proc {
	CONN_FIXTURE_NULL = 0,
	CONN_FIXTURE_ECHO = 1,
	CONN_FIXTURE_FILL = 2,
	CONN_FIXTURE_DEFER = 3,
	CONN_FIXTURE_SUM = 4,
	CONN_FIXTURE_NPROCS
};

/* How a SUM computes its answer (its wait argument). */
enum conn_fixture_sum_how {
	CONN_FIXTURE_SUM_INLINE = 0,
	CONN_FIXTURE_SUM_DEFER = 1,
	CONN_FIXTURE_SUM_PARK = 2,
};

/* A call of conn_fixture_call_build(): mark, AUTH_NONE header, u_int. */
#define CONN_FIXTURE_CALL_LEN (4 + 40 + 4)
/* The bound on every blocking client call: a hang fails the test. */
#define CONN_FIXTURE_IO_TIMEOUT_S 20

/* What the FILL handler saw, on the worker thread. */
struct conn_fixture_fill {
	pthread_mutex_t lock;
	unsigned calls;
	size_t max_out_bytes; /* conn->out_bytes when a FILL was dispatched */
	u_int bytes; /* of zeros in each FILL reply; a multiple of 4 */
	/* SUM's gate: waiting SUMs wait while it is closed. */
	pthread_cond_t gate_cond;
	bool gate_closed;
	unsigned gate_waiting; /* SUMs waiting at it now */
	unsigned sums_done; /* SUMs that waited, then hashed their data */
	uint32_t last_sum; /* the hash the last of them computed */
	unsigned parkers; /* threads of parked SUMs still running */
};

struct conn_fixture {
	struct conn_fixture_fill fill; /* the program's ctx */
	struct rpc_program prog;
	struct ev_loop *main_loop; /* NULL once stopped */
	ev_async stop;
	pthread_t thread;
	struct rpc_dispatcher d;
	struct rpc_dispatcher d_udp; /* no work pool: UDP runs inline */
	struct rpc_work_pool *pool;
	struct net net;
	struct traffic *traffic;
	int port;
	int udp_port; /* 0 without UDP */
	int port2; /* conn_fixture_setup_loops: the second TCP listener */
	struct drc *drc; /* conn_fixture_setup_drc; NULL: none */
};

/*
 * A cmocka setup: makes *@state a struct conn_fixture (returns owned:
 * conn_fixture_teardown()) and starts it with the default record limit,
 * 128 calls in flight per conn, @max_output_bytes of output per conn and
 * @idle_timeout_ms (0: none); with @udp, a UDP listener too; FILL answers
 * @fill_bytes of zeros.  Resets the captured log first.  Returns 0, or -1
 * on any failure (what was started is left to the failing test process).
 */
int conn_fixture_setup(void **state, uint32_t max_output_bytes,
		       uint32_t idle_timeout_ms, bool udp, u_int fill_bytes);

/* As conn_fixture_setup (64 KiB output limit, no idle timeout, no UDP,
 * FILL of 0 bytes), with @nworkers loops and a second TCP listener on
 * port2, as a server's NFS and MOUNT ports. */
int conn_fixture_setup_loops(void **state, unsigned nworkers);

/* As conn_fixture_setup(@state, 256 KiB, 0, false, 0), the dispatcher
 * with a duplicate request cache (drc.h, default bounds). */
int conn_fixture_setup_drc(void **state);

/* A cmocka teardown: stops *@state if it runs, then frees it. */
int conn_fixture_teardown(void **state);

/* Stops the main loop, then the net module, as main.c does; after it the
 * server's log is complete.  Does nothing if @f is already stopped. */
void conn_fixture_stop(struct conn_fixture *f);

/* Returns a TCP socket connected to @f; a nonzero @bufsize shrinks its
 * socket buffers.  Asserts success. */
int conn_fixture_connect(const struct conn_fixture *f, int bufsize);
/* As conn_fixture_connect, to @port of 127.0.0.1. */
int conn_fixture_connect_port(int port, int bufsize);

/* Writes all of @buf (borrowed); asserts success. */
void conn_fixture_write_all(int fd, const uint8_t *buf, size_t len);

/* Reads exactly @len bytes; returns false on EOF or error. */
bool conn_fixture_read_all(int fd, uint8_t *buf, size_t len);

/* Reads one single-fragment reply record into @buf; returns its length.
 * Asserts it fits @cap. */
size_t conn_fixture_read_reply(int fd, uint8_t *buf, size_t cap);

/* Reads one reply of a u_int result and checks it is SUCCESS; sets *@xid
 * and returns the value. */
uint32_t conn_fixture_read_echo(int fd, uint32_t *xid);

/* Closes or opens SUM's gate. */
void conn_fixture_gate(struct conn_fixture *f, bool closed);

/* Waits until @n SUMs wait at the closed gate; asserts it happens
 * within CONN_FIXTURE_IO_TIMEOUT_S. */
void conn_fixture_gate_wait(struct conn_fixture *f, unsigned n);

/* Waits until @n SUMs in all have waited at the gate and hashed their
 * data (whether or not their reply could go); returns the last hash.
 * Asserts it happens within CONN_FIXTURE_IO_TIMEOUT_S. */
uint32_t conn_fixture_sums_wait(struct conn_fixture *f, unsigned n);

/* The FNV-1a hash of @len bytes at @p, as SUM answers it. */
uint32_t conn_fixture_sum(const uint8_t *p, size_t len);

/* Writes a whole SUM call of @len bytes of @data (borrowed) to @buf
 * (room for CONN_FIXTURE_CALL_LEN + 4 + @len + 3 bytes), answered as
 * @how says (enum conn_fixture_sum_how); returns its length, mark
 * included. */
size_t conn_fixture_sum_build(uint8_t *buf, uint32_t xid, uint32_t how,
			      const uint8_t *data, uint32_t len);

/* Writes a whole call record of CONN_FIXTURE_PROG v1 @proc (AUTH_NONE, one
 * u_int argument @arg) to @buf (CONN_FIXTURE_CALL_LEN bytes); returns its
 * length. */
size_t conn_fixture_call_build(uint8_t *buf, uint32_t xid, uint32_t proc,
			       uint32_t arg);

#endif
