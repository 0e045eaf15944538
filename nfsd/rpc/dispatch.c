// SPDX-License-Identifier: Apache-2.0
/*
 * dispatch: one call in, one reply out (RFC 5531 9 and 10).  The order of
 * checks follows the RFC: RPC version, credentials, program, version,
 * procedure, then the arguments (GARBAGE_ARGS).  A request owns its decoded
 * arguments and its result until the reply is encoded; then the procedure's
 * release hook and xdr_free give everything back (docs/architecture.md,
 * "Memory and ownership").  Requests
 * and reply buffers are rpc_bufs of the transport's loop pool (pool.h).
 */
#include "nfsd/rpc/dispatch.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xxhash.h>

#include "nfsd/base/log.h"
#include "nfsd/base/sockaddr.h"
#include "nfsd/rpc/auth.h"
#include "nfsd/rpc/drc.h"
#include "nfsd/rpc/msg.h"
#include "nfsd/rpc/pool.h"
#include "nfsd/rpc/work.h"

#define DISPATCH_DRC_HASH_BYTES 256
/* A reply is first encoded into a buffer this big (every reply of NULL,
 * GETATTR, ACCESS, LOOKUP, READ's head, WRITE and COMMIT fits: LOOKUP's,
 * the largest, is 276 bytes), and sized with xdr_sizeof() only when it
 * does not fit: sizing first encodes every reply twice. */
#define DISPATCH_REPLY_TRY_BYTES 512

static uint64_t dispatch_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int rpc_dispatcher_add(struct rpc_dispatcher *d, const struct rpc_program *prog)
{
	if (d->nprograms == RPC_MAX_PROGRAMS) {
		return -ENOSPC;
	}
	d->programs[d->nprograms++] = prog;
	return 0;
}

/* Where a call came from and where its memory comes from. */
struct dispatch_origin {
	struct rpc_pool *pool; /* NULL: the heap */
	/* The rpc_buf the record lies in (it starts it, or lies in a lent
	 * buffer); NULL: a call that keeps the record copies it. */
	void *rec_owner;
	const struct rpc_transport_ops *tops;
	void *transport;
	const struct sockaddr *peer;
	socklen_t peer_len;
};

/* Sends @len bytes of @bytes (borrowed) as a reply, copied after the mark
 * room into a buffer of @pool: RPC-level errors and replayed replies. */
static void dispatch_send_copy(struct rpc_pool *pool,
			       const struct rpc_transport_ops *tops,
			       void *transport, const uint8_t *bytes,
			       size_t len)
{
	uint8_t *buf = rpc_buf_alloc(pool, RPC_REPLY_MARK_ROOM + len);

	if (!buf) {
		return;
	}
	memcpy(buf + RPC_REPLY_MARK_ROOM, bytes, len);
	tops->send(transport, buf, RPC_REPLY_MARK_ROOM + len);
}

static void dispatch_reply_accepted(struct rpc_pool *pool,
				    const struct rpc_transport_ops *tops,
				    void *transport, uint32_t xid,
				    enum rpc_accept_stat stat, uint32_t low,
				    uint32_t high)
{
	uint8_t hdr[32];
	size_t n = rpc_reply_accepted_encode(hdr, sizeof(hdr), xid, stat, low,
					     high);

	dispatch_send_copy(pool, tops, transport, hdr, n);
}

static void dispatch_reply_denied(struct rpc_pool *pool,
				  const struct rpc_transport_ops *tops,
				  void *transport, uint32_t xid,
				  enum rpc_reject_stat stat,
				  enum rpc_auth_stat why)
{
	uint8_t hdr[24];
	size_t n = rpc_reply_denied_encode(hdr, sizeof(hdr), xid, stat, why);

	dispatch_send_copy(pool, tops, transport, hdr, n);
}

static const char *const dispatch_accept_names[] = {
	[RPC_ACCEPT_SUCCESS] = "SUCCESS",
	[RPC_ACCEPT_PROG_UNAVAIL] = "PROG_UNAVAIL",
	[RPC_ACCEPT_PROG_MISMATCH] = "PROG_MISMATCH",
	[RPC_ACCEPT_PROC_UNAVAIL] = "PROC_UNAVAIL",
	[RPC_ACCEPT_GARBAGE_ARGS] = "GARBAGE_ARGS",
	[RPC_ACCEPT_SYSTEM_ERR] = "SYSTEM_ERR",
};

/* Traces a call answered at the RPC level, before any handler ran. */
static void dispatch_trace_rpc_error(const struct rpc_dispatcher *d,
				     const struct sockaddr *peer,
				     const struct rpc_call_header *call,
				     const char *what)
{
	char peer_str[SOCKADDR_TEXT_MAX];

	if (!d->trace) {
		return;
	}
	sockaddr_format(peer, peer_str, sizeof(peer_str));
	log_info("trace: %s xid=%#x prog=%u vers=%u proc=%u -> %s", peer_str,
		 call->xid, call->prog, call->vers, call->proc, what);
}

/* Finds the program; on a miss says which accept_stat to answer. */
static const struct rpc_program *
dispatch_find_program(const struct rpc_dispatcher *d, uint32_t prog,
		      uint32_t vers, enum rpc_accept_stat *stat, uint32_t *low,
		      uint32_t *high)
{
	bool prog_seen = false;

	*low = UINT32_MAX;
	*high = 0;
	for (size_t i = 0; i < d->nprograms; i++) {
		const struct rpc_program *p = d->programs[i];

		if (p->prog != prog) {
			continue;
		}
		if (p->vers == vers) {
			return p;
		}
		prog_seen = true;
		if (p->vers < *low) {
			*low = p->vers;
		}
		if (p->vers > *high) {
			*high = p->vers;
		}
	}
	*stat = prog_seen ? RPC_ACCEPT_PROG_MISMATCH : RPC_ACCEPT_PROG_UNAVAIL;
	return NULL;
}

/*
 * Asks the duplicate request cache about a non-idempotent call.  Returns
 * true when the call is answered (a replayed reply) or dropped (its first
 * copy still runs); false when it is to run, with call->drc_entry set.
 */
static bool dispatch_drc_check(struct rpc_dispatcher *d, struct rpc_call *call,
			       const uint8_t *args, size_t args_len)
{
	struct request *req = &call->req;
	struct drc_key key;
	uint8_t *reply;
	size_t reply_len;
	enum drc_verdict verdict;

	memset(&key, 0, sizeof(key));
	drc_key_addr(&key, (const struct sockaddr *)&req->peer);
	drc_key_cred(&key, &req->cred);
	key.xid = req->xid;
	key.prog = req->prog;
	key.vers = req->vers;
	key.proc = req->proc;
	/* As knfsd (RC_CSUMLEN): the length and the first bytes tell a
	 * retransmission from new work sharing its XID; hashing a whole
	 * 64 KiB WRITE would cost more than the call itself. */
	key.args_hash = XXH3_64bits_withSeed(args,
					     args_len < DISPATCH_DRC_HASH_BYTES
						     ? args_len
						     : DISPATCH_DRC_HASH_BYTES,
					     args_len);
	verdict =
		drc_lookup(d->drc, &key, &call->drc_entry, &reply, &reply_len);
	if (verdict == DRC_NEW) {
		return false;
	}
	if (d->trace) {
		log_info("trace: %s xid=%#x %s %s -> %s", request_peer(req),
			 req->xid, req->program->name, req->desc->name,
			 verdict == DRC_REPLAY ? "replayed from the DRC"
					       : "dropped: first copy runs");
	}
	if (verdict == DRC_REPLAY) {
		/* The DRC's copy includes the mark room. */
		dispatch_send_copy(call->pool, call->tops, call->transport,
				   reply + RPC_REPLY_MARK_ROOM,
				   reply_len - RPC_REPLY_MARK_ROOM);
		free(reply);
	}
	return true;
}

/*
 * Decodes the call header, checks its RPC version and credentials, and
 * answers itself what fails (RPC_MISMATCH, AUTH_ERROR; a record that is
 * not a call is ignored, or ends the stream).  Returns true when the call
 * goes on.
 */
static bool dispatch_header_decode(const struct rpc_dispatcher *d,
				   const struct dispatch_origin *o,
				   const uint8_t *rec, size_t len,
				   struct rpc_call_header *hdr,
				   struct rpc_cred *cred)
{
	enum rpc_auth_stat auth;
	uint32_t xid, type;

	if (rpc_call_decode(rec, len, hdr) != 0) {
		char peer_str[SOCKADDR_TEXT_MAX];

		/* A reply or other message type on our socket is ignored;
		 * a record that is not a message at all ends the stream. */
		if (rpc_msg_peek(rec, len, &xid, &type) == 0 &&
		    type != RPC_MSG_CALL) {
			return false;
		}
		sockaddr_format(o->peer, peer_str, sizeof(peer_str));
		log_warn("rpc: %s: record of %zu bytes is not an RPC call; "
			 "closing",
			 peer_str, len);
		o->tops->close(o->transport);
		return false;
	}
	if (hdr->rpcvers != RPC_MSG_RPCVERS) {
		dispatch_trace_rpc_error(d, o->peer, hdr, "RPC_MISMATCH");
		dispatch_reply_denied(o->pool, o->tops, o->transport, hdr->xid,
				      RPC_REJECT_RPC_MISMATCH, RPC_AUTH_OK);
		return false;
	}
	auth = rpc_auth_parse(hdr, cred);
	if (auth != RPC_AUTH_OK) {
		dispatch_trace_rpc_error(d, o->peer, hdr, "AUTH_ERROR");
		dispatch_reply_denied(o->pool, o->tops, o->transport, hdr->xid,
				      RPC_REJECT_AUTH_ERROR, auth);
		return false;
	}
	return true;
}

/* The procedure @hdr names, or NULL once the miss (PROG_UNAVAIL,
 * PROG_MISMATCH, PROC_UNAVAIL) is answered. */
static const struct rpc_proc *dispatch_proc_find(
	const struct rpc_dispatcher *d, const struct dispatch_origin *o,
	const struct rpc_call_header *hdr, const struct rpc_program **prog_out)
{
	enum rpc_accept_stat stat = RPC_ACCEPT_PROC_UNAVAIL;
	uint32_t low = 0, high = 0;
	const struct rpc_program *prog = dispatch_find_program(
		d, hdr->prog, hdr->vers, &stat, &low, &high);

	if (prog && hdr->proc < prog->nprocs &&
	    prog->procs[hdr->proc].handler) {
		*prog_out = prog;
		return &prog->procs[hdr->proc];
	}
	if (prog) {
		stat = RPC_ACCEPT_PROC_UNAVAIL;
		low = high = 0;
	}
	dispatch_trace_rpc_error(d, o->peer, hdr, dispatch_accept_names[stat]);
	dispatch_reply_accepted(o->pool, o->tops, o->transport, hdr->xid, stat,
				low, high);
	return NULL;
}

/* A new call for @desc, its args and res zeroed in the same block. */
static struct rpc_call *dispatch_call_new(const struct dispatch_origin *o,
					  struct rpc_dispatcher *d,
					  const struct rpc_program *prog,
					  const struct rpc_proc *desc,
					  const struct rpc_call_header *hdr,
					  const struct rpc_cred *cred)
{
	size_t args_off = (sizeof(struct rpc_call) + 15) & ~(size_t)15;
	size_t res_off = (args_off + desc->args_size + 15) & ~(size_t)15;
	struct rpc_call *call =
		rpc_buf_zalloc(o->pool, res_off + desc->res_size);
	struct request *req;
	socklen_t peer_len = o->peer_len;

	if (!call) {
		return NULL;
	}
	req = &call->req;
	call->pool = o->pool;
	call->dispatcher = d;
	call->tops = o->tops;
	call->transport = o->transport;
	call->start_ns = dispatch_now_ns();
	call->payload.fd = -1;
	req->args = (uint8_t *)call + args_off;
	req->res = (uint8_t *)call + res_off;
	req->xid = hdr->xid;
	req->prog = hdr->prog;
	req->vers = hdr->vers;
	req->proc = hdr->proc;
	req->cred = *cred;
	req->program = prog;
	req->desc = desc;
	req->svc = prog->ctx;
	if (peer_len > sizeof(req->peer)) {
		peer_len = sizeof(req->peer);
	}
	memcpy(&req->peer, o->peer, peer_len);
	req->peer_len = peer_len;
	return call;
}

/*
 * The record bytes the arguments will point into, kept for the life of
 * @call: a reference on the transport's record buffer, or a copy.  Returns
 * the bytes to decode, NULL when out of memory.
 */
static const uint8_t *dispatch_hold_record(struct rpc_call *call,
					   const struct dispatch_origin *o,
					   const uint8_t *rec, size_t len)
{
	uint8_t *copy;

	if (o->rec_owner) {
		rpc_buf_ref(o->rec_owner);
		call->rec_held = o->rec_owner;
		return rec;
	}
	copy = rpc_buf_alloc(o->pool, len ? len : 1);
	if (!copy) {
		return NULL;
	}
	memcpy(copy, rec, len);
	call->rec_held = copy;
	return copy;
}

/* Decodes the arguments, from @rec held by the call when they point into
 * it.  Returns SUCCESS, GARBAGE_ARGS or SYSTEM_ERR (out of memory). */
static enum rpc_accept_stat
dispatch_args_decode(struct rpc_call *call, const struct dispatch_origin *o,
		     const uint8_t *rec, size_t len, size_t args_offset)
{
	const struct rpc_proc *desc = call->req.desc;
	bool ok;
	XDR xdrs;

	if (desc->args_borrow_record) {
		rec = dispatch_hold_record(call, o, rec, len);
		if (!rec) {
			return RPC_ACCEPT_SYSTEM_ERR;
		}
	}
	xdrmem_create(&xdrs, (char *)rec + args_offset,
		      (u_int)(len - args_offset), XDR_DECODE);
	ok = desc->decode(&xdrs, call->req.args);
	xdr_destroy(&xdrs);
	return ok ? RPC_ACCEPT_SUCCESS : RPC_ACCEPT_GARBAGE_ARGS;
}

/* A call that never reached its handler: what it holds goes back (the
 * transport reference is not taken yet). */
static void dispatch_call_discard(struct rpc_call *call)
{
	if (call->drc_entry) {
		drc_forget(call->dispatcher->drc, call->drc_entry);
	}
	xdr_free(call->req.desc->decode, call->req.args);
	rpc_buf_unref(call->rec_held);
	rpc_buf_unref(call);
}

static void dispatch_common(struct rpc_dispatcher *d,
			    const struct dispatch_origin *o, const uint8_t *rec,
			    size_t len)
{
	struct rpc_call_header hdr;
	const struct rpc_program *prog;
	const struct rpc_proc *desc;
	enum rpc_accept_stat stat;
	struct rpc_call *call;
	struct rpc_cred cred;

	if (!dispatch_header_decode(d, o, rec, len, &hdr, &cred)) {
		return;
	}
	desc = dispatch_proc_find(d, o, &hdr, &prog);
	if (!desc) {
		return;
	}
	call = dispatch_call_new(o, d, prog, desc, &hdr, &cred);
	if (!call) {
		dispatch_reply_accepted(o->pool, o->tops, o->transport, hdr.xid,
					RPC_ACCEPT_SYSTEM_ERR, 0, 0);
		return;
	}
	if (desc->non_idempotent && d->drc &&
	    dispatch_drc_check(d, call, rec + hdr.args_offset,
			       len - hdr.args_offset)) {
		dispatch_call_discard(call);
		return;
	}
	stat = dispatch_args_decode(call, o, rec, len, hdr.args_offset);
	if (stat != RPC_ACCEPT_SUCCESS) {
		dispatch_trace_rpc_error(d, o->peer, &hdr,
					 dispatch_accept_names[stat]);
		dispatch_reply_accepted(o->pool, o->tops, o->transport, hdr.xid,
					stat, 0, 0);
		dispatch_call_discard(call);
		return;
	}
	o->tops->ref(o->transport);
	if (d->admission && prog->charge &&
	    prog->charge(&call->req, call->req.args) &&
	    d->admission->admit(d->admission->arg, call) == RPC_ADMIT_QUEUED) {
		return;
	}
	rpc_call_run(call);
}

void rpc_dispatch_record(struct rpc_dispatcher *d, const uint8_t *rec,
			 size_t len, const struct rpc_transport_ops *tops,
			 void *transport, const struct sockaddr *peer,
			 socklen_t peer_len)
{
	const struct dispatch_origin o = { .tops = tops,
					   .transport = transport,
					   .peer = peer,
					   .peer_len = peer_len };

	dispatch_common(d, &o, rec, len);
}

void rpc_dispatch_pooled(struct rpc_dispatcher *d, struct rpc_pool *pool,
			 const uint8_t *rec, size_t len,
			 const struct rpc_transport_ops *tops, void *transport,
			 const struct sockaddr *peer, socklen_t peer_len)
{
	const struct dispatch_origin o = { .pool = pool,
					   .rec_owner = (void *)rec,
					   .tops = tops,
					   .transport = transport,
					   .peer = peer,
					   .peer_len = peer_len };

	dispatch_common(d, &o, rec, len);
}

void rpc_dispatch_lent(struct rpc_dispatcher *d, struct rpc_pool *pool,
		       void *owner, const uint8_t *rec, size_t len,
		       const struct rpc_transport_ops *tops, void *transport,
		       const struct sockaddr *peer, socklen_t peer_len)
{
	const struct dispatch_origin o = { .pool = pool,
					   .rec_owner = owner,
					   .tops = tops,
					   .transport = transport,
					   .peer = peer,
					   .peer_len = peer_len };

	dispatch_common(d, &o, rec, len);
}

/* The whole handler on a blocking-work thread (rpc_program.offload). */
static void dispatch_handler_work(struct request *req)
{
	req->disposition = req->desc->handler(req, req->args, req->res);
}

void rpc_call_run(struct rpc_call *call)
{
	struct request *req = &call->req;
	const struct rpc_program *prog = req->program;
	enum rpc_disposition disp;

	if (prog && prog->offload && call->dispatcher &&
	    call->dispatcher->work_pool && prog->offload(req, req->args)) {
		(void)request_defer(req, dispatch_handler_work);
		return;
	}
	disp = req->desc->handler(req, req->args, req->res);

	/* Once deferred, the call belongs to the work pool: the work may
	 * already have set req->disposition, and the call may be on its way
	 * back, so it is not touched again here. */
	if (disp == RPC_PENDING) {
		return;
	}
	req->disposition = disp;
	rpc_call_finish(call);
}

enum rpc_disposition request_defer(struct request *req,
				   void (*work)(struct request *req))
{
	struct rpc_call *call = rpc_call_of(req);

	/* On a work thread already (the whole handler was offloaded): the
	 * work runs here, and the hand-back is the outer defer's. */
	if (call->off_loop) {
		work(req);
		return req->disposition;
	}
	call->work = work;
	if (!call->dispatcher || !call->dispatcher->work_pool) {
		work(req);
		return req->disposition;
	}
	/* Set before the hand-over (the pool's lock orders it), cleared by
	 * rpc_call_finish() on the loop. */
	call->off_loop = true;
	rpc_work_pool_submit(call->dispatcher->work_pool, call);
	return RPC_PENDING;
}

/*
 * Encodes the reply header and @encode(req->res) into a new buffer with
 * @body_room bytes after the header.  Returns it (owned) with *total set,
 * or NULL when out of memory or when the result does not fit.
 */
static uint8_t *dispatch_encode(struct rpc_call *call, xdrproc_t encode,
				size_t body_room, size_t *total)
{
	size_t head = RPC_REPLY_MARK_ROOM + RPC_REPLY_ACCEPTED_LEN;
	uint8_t *buf = rpc_buf_alloc(call->pool, head + body_room);
	bool ok;
	XDR xdrs;

	if (!buf) {
		return NULL;
	}
	rpc_reply_accepted_encode(buf + RPC_REPLY_MARK_ROOM,
				  RPC_REPLY_ACCEPTED_LEN, call->req.xid,
				  RPC_ACCEPT_SUCCESS, 0, 0);
	xdrmem_create(&xdrs, (char *)buf + head, (u_int)body_room, XDR_ENCODE);
	ok = encode(&xdrs, call->req.res);
	*total = head + xdr_getpos(&xdrs);
	xdr_destroy(&xdrs);
	if (!ok) {
		rpc_buf_unref(buf);
		return NULL;
	}
	return buf;
}

/*
 * Encodes header + result (only its head when the handler handed a
 * payload over: request_reply_payload) and sends it; on an encoding
 * failure answers SYSTEM_ERR.
 */
static void dispatch_send_result(struct rpc_call *call)
{
	const struct rpc_proc *desc = call->req.desc;
	bool has_payload = call->payload.len > 0;
	xdrproc_t encode = has_payload ? desc->encode_head : desc->encode;
	size_t total;
	uint8_t *buf =
		dispatch_encode(call, encode, DISPATCH_REPLY_TRY_BYTES, &total);

	if (!buf) {
		unsigned long body = xdr_sizeof(encode, call->req.res);

		if (body > DISPATCH_REPLY_TRY_BYTES) {
			buf = dispatch_encode(call, encode, body, &total);
		}
	}
	if (!buf) {
		log_error("rpc: %s: cannot encode the %s reply of xid %#x",
			  request_peer(&call->req), desc->name, call->req.xid);
		dispatch_reply_accepted(call->pool, call->tops, call->transport,
					call->req.xid, RPC_ACCEPT_SYSTEM_ERR, 0,
					0);
		return;
	}
	if (has_payload) {
		/* The transport takes the payload's contents. */
		struct rpc_payload payload = call->payload;

		memset(&call->payload, 0, sizeof(call->payload));
		call->payload.fd = -1;
		call->tops->send_payload(call->transport, buf, total, &payload);
		return;
	}
	if (call->drc_entry) {
		drc_finish(call->dispatcher->drc, call->drc_entry, buf, total);
		call->drc_entry = NULL;
	}
	call->tops->send(call->transport, buf, total);
}

static void dispatch_trace_reply(struct rpc_call *call)
{
	struct request *req = &call->req;
	const struct rpc_proc *desc = req->desc;
	char args[RPC_TRACE_DETAIL_MAX] = "", res[RPC_TRACE_DETAIL_MAX] = "";
	uint64_t us = (dispatch_now_ns() - call->start_ns) / 1000;
	const char *fate = req->disposition == RPC_REPLY  ? ""
			   : req->disposition == RPC_DROP ? "dropped "
							  : "closed ";

	if (desc->trace_args) {
		desc->trace_args(req, req->args, req->res, args, sizeof(args));
	}
	if (desc->trace_res) {
		desc->trace_res(req, req->args, req->res, res, sizeof(res));
	}
	log_info("trace: %s xid=%#x %s %s%s%s%s%s %s -> %s%s (%llu.%03llu ms)",
		 request_peer(req), req->xid, req->program->name, desc->name,
		 req->export_name ? " " : "",
		 req->export_name ? req->export_name : "",
		 req->path_hint[0] ? ":" : "", req->path_hint, args, fate, res,
		 (unsigned long long)(us / 1000),
		 (unsigned long long)(us % 1000));
}

/* The end of every call that reached its handler: what it still holds
 * goes back. */
static void dispatch_call_free(struct rpc_call *call)
{
	/* Not replied (dropped, closed, failed to encode, cancelled): not
	 * cached. */
	if (call->drc_entry) {
		drc_forget(call->dispatcher->drc, call->drc_entry);
	}
	xdr_free(call->req.desc->decode, call->req.args);
	rpc_payload_release(&call->payload);
	rpc_buf_unref(call->work_buf);
	rpc_buf_unref(call->rec_held);
	call->tops->unref(call->transport);
	rpc_buf_unref(call);
}

void rpc_call_finish(struct rpc_call *call)
{
	struct request *req = &call->req;
	const struct rpc_proc *desc = req->desc;
	const struct rpc_admission *admission =
		call->dispatcher ? call->dispatcher->admission : NULL;

	call->off_loop = false; /* back on the loop: its pool again */
	switch (req->disposition) {
	case RPC_REPLY:
		dispatch_send_result(call);
		break;
	case RPC_CLOSE:
		call->tops->close(call->transport);
		break;
	case RPC_DROP:
	case RPC_PENDING:
		break;
	}
	if (call->dispatcher && call->dispatcher->trace) {
		dispatch_trace_reply(call);
	}
	if (desc->release) {
		desc->release(req, req->res);
	}
	if (call->admit_ctx && admission) {
		admission->done(admission->arg, call);
	}
	dispatch_call_free(call);
}

void rpc_call_cancel(struct rpc_call *call)
{
	struct request *req = &call->req;

	if (call->dispatcher && call->dispatcher->trace) {
		log_info("trace: %s xid=%#x %s %s %s -> cancelled in its queue",
			 request_peer(req), req->xid, req->program->name,
			 req->desc->name,
			 req->export_name ? req->export_name : "");
	}
	dispatch_call_free(call);
}
