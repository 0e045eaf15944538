/* SPDX-License-Identifier: Apache-2.0 */
/*
 * call: one RPC call in flight as dispatch and its transport see it (the
 * handler sees only its struct request, rpc/request.h), the transport's
 * operations, the admission hook and the dispatcher a call belongs to.
 * What dispatch does with them is in rpc/dispatch.h.
 */
#ifndef DSNFS_RPC_CALL_H
#define DSNFS_RPC_CALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nfsd/base/base.h"
#include "nfsd/rpc/pool.h"
#include "nfsd/rpc/request.h"
#include "nfsd/traffic/req.h"

struct rpc_call;
struct rpc_transport_ops;
struct rpc_dispatcher;
struct drc_entry;

/* One call in flight: its handler's view (@req) and what dispatch and the
 * transport keep of it.  Owned by dispatch from decode to reply. */
struct rpc_call {
	struct request req;

	char peer_str[64]; /* "127.0.0.1:811", request_peer()'s */
	uint64_t start_ns;
	/* The loop's caches (rpc/pool.h), borrowed; NULL: the heap. */
	struct rpc_pool *pool;
	void *rec_held; /* rpc_buf the arguments point into, or NULL */
	/* Set while the call is on a work thread (request_defer): its
	 * buffers then come from the heap (request_buf_pool()). */
	bool off_loop;
	/* request_work_buf_alloc()'s buffer, until deferred work takes it. */
	void *work_buf;
	/* request_reply_payload()'s (len 0: none): handed to the transport
	 * after the head encode_head wrote, or released when the call ends
	 * without that reply. */
	struct rpc_payload payload;
	void (*work)(struct request *req);
	struct drc_entry *drc_entry; /* set while a cached call runs */
	struct rpc_dispatcher *dispatcher;
	const struct rpc_transport_ops *tops;
	void *transport;
	/* Admission: the call as the traffic model queues it (the cost the
	 * charge hook named, copied in by the hook), and the admission
	 * hook's own pointer (its flow), set while it holds or has started
	 * the call. */
	struct traffic_req tr;
	void *admit_ctx;
	/* A link for the transport's list of calls handed back to its loop
	 * (defer_done) and the work pool's queue. */
	struct rpc_call *next;
};

static inline struct rpc_call *rpc_call_of(struct request *req)
{
	return container_of(req, struct rpc_call, req);
}

static inline const struct rpc_call *
rpc_call_of_const(const struct request *req)
{
	return container_of(req, const struct rpc_call, req);
}

/*
 * What dispatch needs from the connection a call came on.  All but
 * defer_done are called on the transport's own loop thread.
 */
struct rpc_transport_ops {
	/* Takes @buf, an rpc_buf (rpc/pool.h) that the transport gives back
	 * with rpc_buf_unref() on its loop thread once written: a whole
	 * reply of @len bytes, starting with RPC_REPLY_MARK_ROOM bytes left
	 * free for a record mark when the transport is a stream. */
	void (*send)(void *transport, uint8_t *buf, size_t len);
	/* Optional: as send, then @payload (its contents taken: an rpc_buf
	 * or a file reference, on every path) and its XDR padding, without
	 * copying it into @buf.  A transport that has it takes both kinds,
	 * buffers and file segments. */
	void (*send_payload)(void *transport, uint8_t *buf, size_t len,
			     struct rpc_payload *payload);
	/* Closes the connection after a protocol violation. */
	void (*close)(void *transport);
	void (*ref)(void *transport);
	void (*unref)(void *transport);
	/* Called on a blocking-work thread: hands @call back to the
	 * transport's loop, which then calls rpc_call_finish(call). */
	void (*defer_done)(void *transport, struct rpc_call *call);
	/* Optional: how many calls of the connection the server holds now:
	 * dispatched and not finished (the caller's own included), plus one
	 * when input already read follows the record being dispatched (a
	 * client with calls pipelined).  NULL: never offloaded
	 * (request_io_offload). */
	unsigned (*backlog)(void *transport);
};

#define RPC_REPLY_MARK_ROOM 4
#define RPC_MAX_PROGRAMS 8

struct rpc_work_pool;
struct drc;

/* What the admission hook does with a charged request. */
enum rpc_admit_verdict {
	RPC_ADMIT_RUN = 0, /* dispatch runs it now */
	RPC_ADMIT_QUEUED, /* the hook keeps it (see struct rpc_admission) */
};

/*
 * Admission of charged calls (the traffic model), called on the
 * transport's loop thread.
 */
struct rpc_admission {
	/* A call its program charged (req.export_name, req.cost set), its
	 * arguments decoded and a transport reference taken.  RUN: dispatch
	 * runs it at once.  QUEUED: the hook keeps it and later, on the same
	 * thread, calls rpc_call_run() or rpc_call_cancel() on it. */
	enum rpc_admit_verdict (*admit)(void *arg, struct rpc_call *call);
	/* A call with admit_ctx set has run and is finished (its reply sent
	 * or dropped); called just before it is freed, on the thread that
	 * finishes it.  Not called for cancelled calls. */
	void (*done)(void *arg, struct rpc_call *call);
	void *arg;
};

/*
 * io_offload ([server] io_offload): where READ and UNSTABLE WRITE do their
 * store I/O.  OFF: on the connection's loop.  AUTO: on a work thread when
 * the connection has more than RPC_IO_OFFLOAD_BACKLOG calls (see
 * rpc_transport_ops.backlog), so that one connection's calls use more
 * than its loop's CPU while the loop keeps reading and decoding.
 */
enum rpc_io_offload {
	RPC_IO_OFFLOAD_OFF = 0,
	RPC_IO_OFFLOAD_AUTO,
};

/*
 * K = 1: a call is offloaded as soon as another call of its connection is
 * in flight or waiting.  A client with one call at a time (depth 1, or
 * one call per connection) never pays the hand-off and its wake-up, and
 * it gains nothing from it: its next call cannot arrive before the reply.
 * Any pipelining is a second call the loop could decode while a work
 * thread does the I/O of the first.
 */
#define RPC_IO_OFFLOAD_BACKLOG 1u

/* One per server: the programs it answers and where deferred work runs. */
struct rpc_dispatcher {
	const struct rpc_program *programs[RPC_MAX_PROGRAMS];
	size_t nprograms;
	struct rpc_work_pool *work_pool; /* NULL: request_defer runs inline */
	struct drc *drc; /* NULL: no duplicate request cache */
	/* Borrowed, must outlive the dispatcher; NULL: every call runs as
	 * soon as it is decoded. */
	const struct rpc_admission *admission;
	enum rpc_io_offload io_offload;
	/* The transport's bound on a READ/WRITE payload, 0: none.  A UDP
	 * reply is one datagram (65,507 bytes at most): 32 KiB there, as
	 * knfsd (RPCSVC_MAXPAYLOAD_UDP). */
	uint32_t max_payload_bytes;
	bool trace;
};

#endif
