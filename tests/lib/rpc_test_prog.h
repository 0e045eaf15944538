/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_test_prog: the handlers a tiny RPC test program is built from, for
 * tests of dispatch and of the connections under it.  NULL answers
 * nothing; ECHO answers its u_int argument; DEFER answers its argument
 * plus one, computed as blocking work (request_defer()).  The tests build
 * their own rpc_proc tables from these.
 */
#ifndef DSNFS_TESTS_RPC_TEST_PROG_H
#define DSNFS_TESTS_RPC_TEST_PROG_H

#include <stdbool.h>

#include "nfsd/rpc/dispatch.h"

/* The datastore rpc_test_charge() charges. */
#define RPC_TEST_VOLUME "ds-test"

/* No arguments, no result: RPC_REPLY. */
enum rpc_disposition rpc_test_proc_null(struct request *req, const void *args,
					void *res);

/* u_int in, the same u_int out: RPC_REPLY. */
enum rpc_disposition rpc_test_proc_echo(struct request *req, const void *args,
					void *res);

/* u_int in, defers rpc_test_work_add_one(): returns what
 * request_defer() returns. */
enum rpc_disposition rpc_test_proc_defer(struct request *req, const void *args,
					 void *res);

/* Blocking work: the u_int result is the u_int argument plus one. */
void rpc_test_work_add_one(struct request *req);

/*
 * A charge hook: charges the calls whose handler is rpc_test_proc_echo or
 * rpc_test_proc_defer to RPC_TEST_VOLUME as a read of their u_int
 * argument in bytes, and returns true; returns false for any other call.
 */
bool rpc_test_charge(struct request *req, const void *args);

#endif
