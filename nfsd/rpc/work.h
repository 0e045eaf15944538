/* SPDX-License-Identifier: Apache-2.0 */
/*
 * work: the threads that run blocking work (fsync, fdatasync, directory
 * scans) off the event loops.  A call handed here runs its work
 * (request_defer) on one of the threads, then goes back to its transport
 * through tops->defer_done, which wakes the owning loop.
 */
#ifndef DSNFS_RPC_WORK_H
#define DSNFS_RPC_WORK_H

#include "nfsd/rpc/dispatch.h"

/* Starts @nthreads threads.  *out returns owned: rpc_work_pool_free(). */
int rpc_work_pool_new(unsigned nthreads, struct rpc_work_pool **out);

/* Runs what is queued, then stops and joins the threads and frees. */
void rpc_work_pool_free(struct rpc_work_pool *pool);

/* Queues @call (borrowed until its defer_done) for one of the threads. */
void rpc_work_pool_submit(struct rpc_work_pool *pool, struct rpc_call *call);

#endif
