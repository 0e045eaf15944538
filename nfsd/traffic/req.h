/* SPDX-License-Identifier: Apache-2.0 */
/*
 * req: a call as the traffic model sees it (traffic.h): its kind and the
 * bytes it pays for, which the RPC layer's charge hook names
 * (rpc/request.h), and the place it holds in its flow's queue.  Apart from
 * traffic.h so that whoever names a cost compiles against nothing else.
 */
#ifndef DSNFS_TRAFFIC_REQ_H
#define DSNFS_TRAFFIC_REQ_H

#include <stdbool.h>
#include <stdint.h>

enum traffic_op {
	TRAFFIC_OP_READ = 0,
	TRAFFIC_OP_WRITE,
	TRAFFIC_OP_OTHER,
	TRAFFIC_OP_COUNT,
};

/* A request as traffic sees it, embedded in the caller's request.  The
 * caller sets bytes and op; the rest is private to traffic. */
struct traffic_req {
	uint64_t bytes; /* payload to pay for (READ/WRITE count), or 0 */
	enum traffic_op op;
	struct traffic_req *next; /* the flow's FIFO */
	int64_t arrival_ns;
	int64_t blocked_ns; /* when a limit first made it wait */
	bool limited;
};

#endif
