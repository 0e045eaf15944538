// SPDX-License-Identifier: Apache-2.0
/*
 * request: what a handler may do with its call (rpc/request.h), over the
 * state dispatch keeps beside it (struct rpc_call, rpc/call.h).  Each is
 * a few loads; none blocks.
 */
#include "nfsd/rpc/request.h"

#include "nfsd/base/sockaddr.h"
#include "nfsd/rpc/call.h"

const char *request_peer(struct request *req)
{
	struct rpc_call *call = rpc_call_of(req);

	if (!call->peer_str[0]) {
		sockaddr_format((const struct sockaddr *)&req->peer,
				call->peer_str, sizeof(call->peer_str));
	}
	return call->peer_str;
}

bool request_traced(const struct request *req)
{
	const struct rpc_dispatcher *d = rpc_call_of_const(req)->dispatcher;

	return d && d->trace;
}

uint32_t request_max_payload(const struct request *req)
{
	const struct rpc_dispatcher *d = rpc_call_of_const(req)->dispatcher;

	if (!d || !d->max_payload_bytes) {
		return UINT32_MAX;
	}
	return d->max_payload_bytes;
}

bool request_payload_ok(const struct request *req)
{
	const struct rpc_call *call = rpc_call_of_const(req);

	return call->tops && call->tops->send_payload && !call->drc_entry &&
	       req->desc && req->desc->encode_head;
}

void request_reply_payload(struct request *req, struct rpc_payload *p)
{
	struct rpc_call *call = rpc_call_of(req);

	/* One payload a reply: a second replaces the first. */
	rpc_payload_release(&call->payload);
	call->payload = *p;
	memset(p, 0, sizeof(*p));
	p->fd = -1;
}

bool request_io_offload(const struct request *req)
{
	const struct rpc_call *call = rpc_call_of_const(req);
	const struct rpc_dispatcher *d = call->dispatcher;

	/* A handler on a work thread (rpc_offload_fn) is off the loop
	 * already, and must not read the transport's state. */
	return d && !call->off_loop && d->io_offload == RPC_IO_OFFLOAD_AUTO &&
	       d->work_pool && call->tops->backlog &&
	       call->tops->backlog(call->transport) > RPC_IO_OFFLOAD_BACKLOG;
}

struct rpc_pool *request_buf_pool(const struct request *req)
{
	const struct rpc_call *call = rpc_call_of_const(req);

	return call->off_loop ? NULL : call->pool;
}

bool request_work_buf_alloc(struct request *req, size_t size)
{
	struct rpc_call *call = rpc_call_of(req);

	rpc_buf_unref(call->work_buf);
	call->work_buf = rpc_buf_alloc(request_buf_pool(req), size);
	return call->work_buf != NULL;
}

void *request_work_buf_take(struct request *req, size_t size)
{
	struct rpc_call *call = rpc_call_of(req);
	void *buf = call->work_buf;

	if (!buf || rpc_buf_cap(buf) < size) {
		return NULL;
	}
	call->work_buf = NULL;
	return buf;
}

bool request_can_park(const struct request *req)
{
	const struct rpc_call *call = rpc_call_of_const(req);

	return call->dispatcher && call->dispatcher->work_pool &&
	       call->tops->defer_done;
}

enum rpc_disposition request_park(struct request *req)
{
	/* As request_defer: another thread owns the call until it hands it
	 * back; nothing may take from the loop's pools meanwhile. */
	rpc_call_of(req)->off_loop = true;
	return RPC_PENDING;
}

void request_unpark(struct request *req)
{
	struct rpc_call *call = rpc_call_of(req);

	call->tops->defer_done(call->transport, call);
}
