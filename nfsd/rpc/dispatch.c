/*
 * dispatch: one call in, one reply out (RFC 5531 9 and 10).  The order of
 * checks follows the RFC: RPC version, credentials, program, version,
 * procedure, then the arguments (GARBAGE_ARGS).  A request owns its decoded
 * arguments and its result until the reply is encoded; then the procedure's
 * release hook and xdr_free give everything back (STYLE.md 4).  Requests
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

#include "nfsd/rpc/auth.h"
#include "nfsd/rpc/drc.h"
#include "nfsd/rpc/msg.h"
#include "nfsd/rpc/pool.h"
#include "nfsd/rpc/work.h"
#include "nfsd/util/log.h"
#include "nfsd/util/sockaddr.h"

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
	if (d->nprograms == RPC_MAX_PROGRAMS)
		return -ENOSPC;
	d->programs[d->nprograms++] = prog;
	return 0;
}

const char *request_peer(struct request *req)
{
	if (!req->peer_str[0])
		sockaddr_format((const struct sockaddr *)&req->peer,
				req->peer_str, sizeof(req->peer_str));
	return req->peer_str;
}

/* Where a call came from and where its memory comes from. */
struct dispatch_origin {
	struct rpc_pool *pool; /* NULL: the heap */
	bool rec_is_buf; /* the record starts an rpc_buf */
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

	if (!buf)
		return;
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

	if (!d->trace)
		return;
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

		if (p->prog != prog)
			continue;
		if (p->vers == vers)
			return p;
		prog_seen = true;
		if (p->vers < *low)
			*low = p->vers;
		if (p->vers > *high)
			*high = p->vers;
	}
	*stat = prog_seen ? RPC_ACCEPT_PROG_MISMATCH : RPC_ACCEPT_PROG_UNAVAIL;
	return NULL;
}

/*
 * Asks the duplicate request cache about a non-idempotent call.  Returns
 * true when the call is answered (a replayed reply) or dropped (its first
 * copy still runs); false when it is to run, with req->drc_entry set.
 */
static bool dispatch_drc_check(struct rpc_dispatcher *d, struct request *req,
			       const uint8_t *args, size_t args_len)
{
	struct drc_key key;
	uint8_t *reply;
	size_t reply_len;
	enum drc_verdict verdict;

	memset(&key, 0, sizeof(key));
	drc_key_addr(&key, (const struct sockaddr *)&req->peer);
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
	verdict = drc_lookup(d->drc, &key, &req->drc_entry, &reply, &reply_len);
	if (verdict == DRC_NEW)
		return false;
	if (d->trace)
		log_info("trace: %s xid=%#x %s %s -> %s", request_peer(req),
			 req->xid, req->program->name, req->desc->name,
			 verdict == DRC_REPLAY ? "replayed from the DRC"
					       : "dropped: first copy runs");
	if (verdict == DRC_REPLAY) {
		/* The DRC's copy includes the mark room. */
		dispatch_send_copy(req->pool, req->tops, req->transport,
				   reply + RPC_REPLY_MARK_ROOM,
				   reply_len - RPC_REPLY_MARK_ROOM);
		free(reply);
	}
	return true;
}

static struct request *dispatch_request_new(struct rpc_pool *pool,
					    const struct rpc_proc *desc)
{
	size_t args_off = (sizeof(struct request) + 15) & ~(size_t)15;
	size_t res_off = (args_off + desc->args_size + 15) & ~(size_t)15;
	struct request *req = rpc_buf_zalloc(pool, res_off + desc->res_size);

	if (!req)
		return NULL;
	req->pool = pool;
	req->args = (uint8_t *)req + args_off;
	req->res = (uint8_t *)req + res_off;
	return req;
}

/*
 * The record bytes the arguments will point into, kept for the life of
 * @req: a reference on the transport's record buffer, or a copy.  Returns
 * the bytes to decode, NULL when out of memory.
 */
static const uint8_t *dispatch_hold_record(struct request *req,
					   const struct dispatch_origin *o,
					   const uint8_t *rec, size_t len)
{
	uint8_t *copy;

	if (o->rec_is_buf) {
		rpc_buf_ref((void *)rec);
		req->rec_held = (void *)rec;
		return rec;
	}
	copy = rpc_buf_alloc(o->pool, len ? len : 1);
	if (!copy)
		return NULL;
	memcpy(copy, rec, len);
	req->rec_held = copy;
	return copy;
}

static void dispatch_common(struct rpc_dispatcher *d,
			    const struct dispatch_origin *o, const uint8_t *rec,
			    size_t len)
{
	const struct rpc_transport_ops *tops = o->tops;
	void *transport = o->transport;
	const struct sockaddr *peer = o->peer;
	socklen_t peer_len = o->peer_len;
	struct rpc_pool *pool = o->pool;
	struct rpc_call_header call;
	const struct rpc_program *prog;
	const struct rpc_proc *desc;
	enum rpc_accept_stat stat;
	enum rpc_auth_stat auth;
	struct rpc_cred cred;
	struct request *req;
	uint32_t low, high;
	XDR xdrs;

	if (rpc_call_decode(rec, len, &call) != 0) {
		uint32_t xid, type;

		/* A reply or other message type on our socket is ignored;
		 * a record that is not a message at all ends the stream. */
		if (rpc_msg_peek(rec, len, &xid, &type) == 0 &&
		    type != RPC_MSG_CALL)
			return;
		char peer_str[SOCKADDR_TEXT_MAX];
		sockaddr_format(peer, peer_str, sizeof(peer_str));
		log_warn("rpc: %s: record of %zu bytes is not an RPC call; "
			 "closing",
			 peer_str, len);
		tops->close(transport);
		return;
	}
	if (call.rpcvers != RPC_MSG_RPCVERS) {
		dispatch_trace_rpc_error(d, peer, &call, "RPC_MISMATCH");
		dispatch_reply_denied(pool, tops, transport, call.xid,
				      RPC_REJECT_RPC_MISMATCH, RPC_AUTH_OK);
		return;
	}
	auth = rpc_auth_parse(&call, &cred);
	if (auth != RPC_AUTH_OK) {
		dispatch_trace_rpc_error(d, peer, &call, "AUTH_ERROR");
		dispatch_reply_denied(pool, tops, transport, call.xid,
				      RPC_REJECT_AUTH_ERROR, auth);
		return;
	}
	prog = dispatch_find_program(d, call.prog, call.vers, &stat, &low,
				     &high);
	if (!prog) {
		dispatch_trace_rpc_error(d, peer, &call,
					 dispatch_accept_names[stat]);
		dispatch_reply_accepted(pool, tops, transport, call.xid, stat,
					low, high);
		return;
	}
	if (call.proc >= prog->nprocs || !prog->procs[call.proc].handler) {
		dispatch_trace_rpc_error(d, peer, &call, "PROC_UNAVAIL");
		dispatch_reply_accepted(pool, tops, transport, call.xid,
					RPC_ACCEPT_PROC_UNAVAIL, 0, 0);
		return;
	}
	desc = &prog->procs[call.proc];
	req = dispatch_request_new(pool, desc);
	if (!req) {
		dispatch_reply_accepted(pool, tops, transport, call.xid,
					RPC_ACCEPT_SYSTEM_ERR, 0, 0);
		return;
	}
	req->xid = call.xid;
	req->prog = call.prog;
	req->vers = call.vers;
	req->proc = call.proc;
	req->cred = cred;
	req->program = prog;
	req->desc = desc;
	req->svc = prog->ctx;
	req->dispatcher = d;
	req->tops = tops;
	req->transport = transport;
	req->start_ns = dispatch_now_ns();
	if (peer_len > sizeof(req->peer))
		peer_len = sizeof(req->peer);
	memcpy(&req->peer, peer, peer_len);
	req->peer_len = peer_len;

	if (desc->non_idempotent && d->drc &&
	    dispatch_drc_check(d, req, rec + call.args_offset,
			       len - call.args_offset)) {
		rpc_buf_unref(req);
		return;
	}
	if (desc->args_borrow_record) {
		rec = dispatch_hold_record(req, o, rec, len);
		if (!rec) {
			if (req->drc_entry)
				drc_forget(d->drc, req->drc_entry);
			dispatch_reply_accepted(pool, tops, transport, call.xid,
						RPC_ACCEPT_SYSTEM_ERR, 0, 0);
			rpc_buf_unref(req);
			return;
		}
	}
	xdrmem_create(&xdrs, (char *)rec + call.args_offset,
		      (u_int)(len - call.args_offset), XDR_DECODE);
	if (!desc->decode(&xdrs, req->args)) {
		xdr_free(desc->decode, req->args);
		if (req->drc_entry)
			drc_forget(d->drc, req->drc_entry);
		dispatch_trace_rpc_error(d, peer, &call, "GARBAGE_ARGS");
		dispatch_reply_accepted(pool, tops, transport, call.xid,
					RPC_ACCEPT_GARBAGE_ARGS, 0, 0);
		rpc_buf_unref(req->rec_held);
		rpc_buf_unref(req);
		return;
	}
	xdr_destroy(&xdrs);
	tops->ref(transport);
	if (d->admission && prog->charge && prog->charge(req, req->args) &&
	    d->admission->admit(d->admission->arg, req) == RPC_ADMIT_QUEUED)
		return;
	rpc_request_run(req);
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
					   .rec_is_buf = true,
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

void rpc_request_run(struct request *req)
{
	const struct rpc_program *prog = req->program;
	enum rpc_disposition disp;

	if (prog && prog->offload && req->dispatcher &&
	    req->dispatcher->work_pool && prog->offload(req, req->args)) {
		(void)request_defer(req, dispatch_handler_work);
		return;
	}
	disp = req->desc->handler(req, req->args, req->res);

	/* Once deferred, req belongs to the work pool: the work may already
	 * have set req->disposition, and the request may be on its way back,
	 * so it is not touched again here. */
	if (disp == RPC_PENDING)
		return;
	req->disposition = disp;
	rpc_request_finish(req);
}

enum rpc_disposition request_defer(struct request *req,
				   void (*work)(struct request *req))
{
	/* On a work thread already (the whole handler was offloaded): the
	 * work runs here, and the hand-back is the outer defer's. */
	if (req->off_loop) {
		work(req);
		return req->disposition;
	}
	req->work = work;
	if (!req->dispatcher || !req->dispatcher->work_pool) {
		work(req);
		return req->disposition;
	}
	/* Set before the hand-over (the pool's lock orders it), cleared by
	 * rpc_request_finish() on the loop. */
	req->off_loop = true;
	rpc_work_pool_submit(req->dispatcher->work_pool, req);
	return RPC_PENDING;
}

/*
 * Hands the reply's payload over when the transport can send it from its
 * own buffer or file and the reply is not to be cached: the handler's file
 * segment, or the procedure's buffer.  Returns false when there is none
 * (encode the whole result).
 */
static bool dispatch_take_payload(struct request *req,
				  struct rpc_payload *payload)
{
	const struct rpc_proc *desc = req->desc;

	memset(payload, 0, sizeof(*payload));
	payload->fd = -1;
	if (!desc->encode_head || !req->tops->send_payload || req->drc_entry)
		return false;
	if (req->file_payload.len > 0) {
		*payload = req->file_payload;
		memset(&req->file_payload, 0, sizeof(req->file_payload));
		return true;
	}
	if (desc->take_payload)
		payload->len = desc->take_payload(req->res, &payload->buf);
	return payload->len > 0;
}

/*
 * Encodes the reply header and @encode(req->res) into a new buffer with
 * @body_room bytes after the header.  Returns it (owned) with *total set,
 * or NULL when out of memory or when the result does not fit.
 */
static uint8_t *dispatch_encode(struct request *req, xdrproc_t encode,
				size_t body_room, size_t *total)
{
	size_t head = RPC_REPLY_MARK_ROOM + RPC_REPLY_ACCEPTED_LEN;
	uint8_t *buf = rpc_buf_alloc(req->pool, head + body_room);
	bool ok;
	XDR xdrs;

	if (!buf)
		return NULL;
	rpc_reply_accepted_encode(buf + RPC_REPLY_MARK_ROOM,
				  RPC_REPLY_ACCEPTED_LEN, req->xid,
				  RPC_ACCEPT_SUCCESS, 0, 0);
	xdrmem_create(&xdrs, (char *)buf + head, (u_int)body_room, XDR_ENCODE);
	ok = encode(&xdrs, req->res);
	*total = head + xdr_getpos(&xdrs);
	xdr_destroy(&xdrs);
	if (!ok) {
		rpc_buf_unref(buf);
		return NULL;
	}
	return buf;
}

/* Encodes header + result; on an encoding failure answers SYSTEM_ERR. */
static void dispatch_send_result(struct request *req)
{
	const struct rpc_proc *desc = req->desc;
	struct rpc_payload payload;
	bool has_payload = dispatch_take_payload(req, &payload);
	xdrproc_t encode = has_payload ? desc->encode_head : desc->encode;
	size_t total;
	uint8_t *buf =
		dispatch_encode(req, encode, DISPATCH_REPLY_TRY_BYTES, &total);

	if (!buf) {
		unsigned long body = xdr_sizeof(encode, req->res);

		if (body > DISPATCH_REPLY_TRY_BYTES)
			buf = dispatch_encode(req, encode, body, &total);
	}
	if (!buf) {
		log_error("rpc: %s: cannot encode the %s reply of xid %#x",
			  request_peer(req), desc->name, req->xid);
		rpc_payload_release(&payload);
		dispatch_reply_accepted(req->pool, req->tops, req->transport,
					req->xid, RPC_ACCEPT_SYSTEM_ERR, 0, 0);
		return;
	}
	if (has_payload) {
		req->tops->send_payload(req->transport, buf, total, &payload);
		return;
	}
	if (req->drc_entry) {
		drc_finish(req->dispatcher->drc, req->drc_entry, buf, total);
		req->drc_entry = NULL;
	}
	req->tops->send(req->transport, buf, total);
}

static void dispatch_trace_reply(struct request *req)
{
	const struct rpc_proc *desc = req->desc;
	char args[RPC_TRACE_DETAIL_MAX] = "", res[RPC_TRACE_DETAIL_MAX] = "";
	uint64_t us = (dispatch_now_ns() - req->start_ns) / 1000;

	if (desc->trace_args)
		desc->trace_args(req, req->args, req->res, args, sizeof(args));
	if (desc->trace_res)
		desc->trace_res(req, req->args, req->res, res, sizeof(res));
	const char *fate = req->disposition == RPC_REPLY  ? ""
			   : req->disposition == RPC_DROP ? "dropped "
							  : "closed ";

	log_info("trace: %s xid=%#x %s %s%s%s%s%s %s -> %s%s (%llu.%03llu ms)",
		 request_peer(req), req->xid, req->program->name, desc->name,
		 req->export_name ? " " : "",
		 req->export_name ? req->export_name : "",
		 req->path_hint[0] ? ":" : "", req->path_hint, args, fate, res,
		 (unsigned long long)(us / 1000),
		 (unsigned long long)(us % 1000));
}

/* The end of every request: what it still holds goes back. */
static void dispatch_request_free(struct request *req)
{
	/* Not replied (dropped, closed, failed to encode, cancelled): not
	 * cached. */
	if (req->drc_entry)
		drc_forget(req->dispatcher->drc, req->drc_entry);
	xdr_free(req->desc->decode, req->args);
	rpc_payload_release(&req->file_payload);
	rpc_buf_unref(req->work_buf);
	rpc_buf_unref(req->rec_held);
	req->tops->unref(req->transport);
	rpc_buf_unref(req);
}

void rpc_request_finish(struct request *req)
{
	const struct rpc_proc *desc = req->desc;

	req->off_loop = false; /* back on the loop: its pool again */
	switch (req->disposition) {
	case RPC_REPLY:
		dispatch_send_result(req);
		break;
	case RPC_CLOSE:
		req->tops->close(req->transport);
		break;
	case RPC_DROP:
	case RPC_PENDING:
		break;
	}
	if (req->dispatcher && req->dispatcher->trace)
		dispatch_trace_reply(req);
	if (desc->release)
		desc->release(req, req->res);
	if (req->admit_ctx && req->dispatcher->admission)
		req->dispatcher->admission->done(
			req->dispatcher->admission->arg, req);
	dispatch_request_free(req);
}

void rpc_request_cancel(struct request *req)
{
	if (req->dispatcher && req->dispatcher->trace)
		log_info("trace: %s xid=%#x %s %s %s -> cancelled in its queue",
			 request_peer(req), req->xid, req->program->name,
			 req->desc->name,
			 req->export_name ? req->export_name : "");
	dispatch_request_free(req);
}
