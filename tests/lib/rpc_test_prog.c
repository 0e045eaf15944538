// SPDX-License-Identifier: Apache-2.0
/*
 * rpc_test_prog: handlers of a tiny RPC test program (see
 * rpc_test_prog.h).
 */
#include "tests/lib/rpc_test_prog.h"

enum rpc_disposition rpc_test_proc_null(struct request *req, const void *args,
					void *res)
{
	(void)req;
	(void)args;
	(void)res;
	return RPC_REPLY;
}

enum rpc_disposition rpc_test_proc_echo(struct request *req, const void *args,
					void *res)
{
	(void)req;
	*(u_int *)res = *(const u_int *)args;
	return RPC_REPLY;
}

void rpc_test_work_add_one(struct request *req)
{
	*(u_int *)req->res = *(const u_int *)req->args + 1;
	req->disposition = RPC_REPLY;
}

enum rpc_disposition rpc_test_proc_defer(struct request *req, const void *args,
					 void *res)
{
	(void)args;
	(void)res;
	return request_defer(req, rpc_test_work_add_one);
}

bool rpc_test_charge(struct request *req, const void *args)
{
	if (req->desc->handler != rpc_test_proc_echo &&
	    req->desc->handler != rpc_test_proc_defer) {
		return false;
	}
	req->export_name = RPC_TEST_VOLUME;
	req->cost.bytes = *(const u_int *)args;
	req->cost.op = TRAFFIC_OP_READ;
	return true;
}
