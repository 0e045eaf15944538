/*
 * dispatch: turns one decoded RPC call into one reply (RFC 5531 9, 10).
 * Programs register a table of procedures; dispatch checks program, version,
 * procedure and credentials, decodes the arguments with the procedure's XDR
 * routine, calls the handler, encodes the result, calls the release hook and
 * frees the arguments.  RPC-level errors (PROG_UNAVAIL .. AUTH_ERROR) come
 * from here alone; handlers speak only their program's status codes.
 *
 * Memory (issue 7): on a loop with an rpc_pool (rpc_dispatch_pooled), the
 * request, its reply buffer and the record a WRITE's data points into come
 * from the loop's free lists, so a call in steady state costs no malloc.
 *
 * Between decoding and the handler, a call its program charges to a
 * datastore (rpc_charge_fn) goes through the dispatcher's admission hook
 * (struct rpc_admission: the traffic model, traffic.h), which may keep it
 * waiting in its flow's queue and run it later with rpc_request_run().
 */
#ifndef DSNFS_RPC_DISPATCH_H
#define DSNFS_RPC_DISPATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <rpc/rpc.h>

#include "nfsd/rpc/pool.h"
#include "nfsd/traffic/traffic.h"

#define RPC_AUTH_SYS_MAX_GROUPS 16
#define RPC_TRACE_DETAIL_MAX 160

/* What a handler tells the dispatcher to do with the request. */
enum rpc_disposition {
	RPC_REPLY = 0, /* encode res and send it */
	RPC_DROP, /* send nothing (the client will retransmit) */
	RPC_CLOSE, /* send nothing and close the connection */
	RPC_PENDING, /* work continues elsewhere; see request_defer() */
};

/* The caller's credentials as sent (before any export squashing). */
struct rpc_cred {
	uint32_t flavor; /* AUTH_NONE or AUTH_SYS */
	uint32_t uid;
	uint32_t gid;
	uint32_t ngroups;
	uint32_t groups[RPC_AUTH_SYS_MAX_GROUPS];
	char machine[256];
};

struct request;
struct rpc_transport_ops;
struct rpc_dispatcher;

/*
 * A reply's payload, sent after the encoded head without being copied into
 * it, then its XDR padding: @len bytes from @buf (an rpc_buf), or, when @buf
 * is NULL, @len bytes of the file open as @fd from @off_bytes (sendfile:
 * page cache to socket).  @unref(@ref), when set, is called once when the
 * payload is done with (sent, dropped or released), on the transport's
 * loop thread; until then it keeps @fd open.  A file that is shorter by
 * then is sent as far as it goes and the rest as zeros: the record mark
 * already promised @len bytes.
 */
struct rpc_payload {
	size_t len;
	uint8_t *buf;
	int fd;
	uint64_t off_bytes;
	void (*unref)(void *ref);
	void *ref;
};

/* Frees @p's buffer and drops its file reference; leaves it empty. */
static inline void rpc_payload_release(struct rpc_payload *p)
{
	rpc_buf_unref(p->buf);
	if (p->unref)
		p->unref(p->ref);
	memset(p, 0, sizeof(*p));
	p->fd = -1;
}

/*
 * A procedure's handler.  @args is decoded and borrowed (never freed by the
 * handler); @res is zeroed storage the handler fills.  The handler always
 * sets the result's status before returning RPC_REPLY.
 */
typedef enum rpc_disposition (*rpc_handler_fn)(struct request *req,
					       const void *args, void *res);
/* Frees what the handler attached to @res (READ data, READDIR entries).
 * Called after the reply was encoded, on every path. */
typedef void (*rpc_release_fn)(struct request *req, void *res);
/* Appends a one-line summary of args/res for --trace ("off=0 count=4096"). */
typedef void (*rpc_trace_fn)(const struct request *req, const void *args,
			     const void *res, char *buf, size_t len);

struct rpc_proc {
	const char *name;
	rpc_handler_fn handler;
	rpc_release_fn release;
	xdrproc_t decode;
	xdrproc_t encode;
	size_t args_size;
	size_t res_size;
	rpc_trace_fn trace_args; /* may be NULL */
	rpc_trace_fn trace_res; /* may be NULL */
	/* Not idempotent: a retransmission gets the cached first reply
	 * (rpc/drc.h) instead of a second execution. */
	bool non_idempotent;
	/* The decoded arguments point into the record (WRITE data,
	 * nfs3__xdr_WRITE3args): the request keeps a reference on the
	 * record's buffer (or a copy of it) until it is freed. */
	bool args_borrow_record;
	/* Optional zero-copy reply (STYLE.md 6, xdr_READ3res_zc): when
	 * take_payload hands over a buffer (returns owned, an rpc_buf of
	 * rpc/pool.h; 0 bytes = none), or the handler set req->file_payload,
	 * the result is encoded with encode_head, which stops after the
	 * payload's length word, and the payload follows from its own buffer
	 * or file.
	 */
	xdrproc_t encode_head;
	size_t (*take_payload)(void *res, uint8_t **payload);
};

/*
 * What a decoded call costs in the traffic model: sets req->export_name
 * (the datastore, borrowed for the life of the program), req->tr.bytes
 * (READ/WRITE payload, else 0) and req->tr.op, and returns true; false
 * when the call is charged to no datastore (NULL, a handle that is not
 * ours).  Runs on the loop thread before the handler; changes nothing else.
 */
typedef bool (*rpc_charge_fn)(struct request *req, const void *args);
/* True when the handler of a decoded call may block (its datastore's store
 * waits on a remote cluster): dispatch then runs the whole handler on a
 * blocking-work thread.  Loop thread; must not block itself. */
typedef bool (*rpc_offload_fn)(struct request *req, const void *args);

struct rpc_program {
	const char *name; /* "nfs", "mount", "portmap" */
	uint32_t prog;
	uint32_t vers;
	const struct rpc_proc *procs; /* indexed by procedure number */
	size_t nprocs;
	void *ctx; /* the program's state, handed to handlers as req->svc */
	rpc_charge_fn charge; /* NULL: its calls are never admitted/queued */
	rpc_offload_fn offload; /* NULL: handlers run on the loop */
};

/* One call in flight.  Owned by dispatch; handlers borrow it. */
struct request {
	uint32_t xid;
	uint32_t prog;
	uint32_t vers;
	uint32_t proc;
	struct rpc_cred cred;
	const struct rpc_program *program;
	const struct rpc_proc *desc;
	void *svc; /* program->ctx */

	/* The client, as the connection saw it. */
	struct sockaddr_storage peer;
	socklen_t peer_len;
	char peer_str[64]; /* "127.0.0.1:811" */
	uint64_t start_ns;

	/* Set by a handler for tracing and traffic accounting: the datastore
	 * and object the call is about, and the payload bytes it moved. */
	const char *export_name;
	char path_hint[96];
	uint64_t payload_bytes;

	/* Admission: the cost the program's charge hook named (and the
	 * flow's queue link), and the admission hook's own pointer (its
	 * flow), set while it holds or has started the request. */
	struct traffic_req tr;
	void *admit_ctx;

	/* Set by a handler whose reply's payload goes from a file, when
	 * request_payload_file_ok() allows it (len 0: none): dispatch hands
	 * it to the transport after the head encode_head wrote, or releases
	 * it when the request ends without that reply. */
	struct rpc_payload file_payload;

	/* The loop's caches (rpc/pool.h), borrowed; NULL: the heap.  A
	 * handler may take result buffers from it (rpc_buf_alloc) on the
	 * loop thread, and gives them back in its release hook. */
	struct rpc_pool *pool;

	/* Internal to dispatch. */
	void *rec_held; /* rpc_buf the arguments point into, or NULL */
	/* Set while the request is on a work thread (request_defer): its
	 * buffers then come from the heap (request_buf_pool()). */
	bool off_loop;
	/* An rpc_buf of @pool a handler takes on the loop for its deferred
	 * work (a READ's data buffer), which the work may take over (and
	 * set NULL); freed with the request otherwise. */
	void *work_buf;
	void *args;
	void *res;
	void (*work)(struct request *req);
	enum rpc_disposition disposition;
	struct drc_entry *drc_entry; /* set while a cached call runs */
	struct rpc_dispatcher *dispatcher;
	const struct rpc_transport_ops *tops;
	void *transport;
	struct request *next;
};

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
	/* Called on a blocking-work thread: hands @req back to the
	 * transport's loop, which then calls rpc_request_finish(req). */
	void (*defer_done)(void *transport, struct request *req);
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
struct drc_entry;

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
	/* A call its program charged (req->export_name, req->tr set), its
	 * arguments decoded and a transport reference taken.  RUN: dispatch
	 * runs it at once.  QUEUED: the hook keeps it and later, on the same
	 * thread, calls rpc_request_run() or rpc_request_cancel() on it. */
	enum rpc_admit_verdict (*admit)(void *arg, struct request *req);
	/* A request with req->admit_ctx set has run and is finished (its
	 * reply sent or dropped); called just before it is freed, on the
	 * thread that finishes it.  Not called for cancelled requests. */
	void (*done)(void *arg, struct request *req);
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

/* The payload bound of @req's transport (rpc_dispatcher.max_payload_bytes),
 * UINT32_MAX when it has none. */
static inline uint32_t request_max_payload(const struct request *req)
{
	if (!req->dispatcher || !req->dispatcher->max_payload_bytes)
		return UINT32_MAX;
	return req->dispatcher->max_payload_bytes;
}

/* Adds @prog (borrowed, must outlive the dispatcher).  Returns 0 or
 * -ENOSPC when RPC_MAX_PROGRAMS are registered. */
int rpc_dispatcher_add(struct rpc_dispatcher *d,
		       const struct rpc_program *prog);

/*
 * Handles one RPC record received from @transport: decodes the call,
 * answers RPC-level errors itself, runs the handler and sends the reply
 * through @tops->send, possibly later (deferred work).  @rec is borrowed:
 * the arguments are decoded out of it before this returns.  Deferred work
 * may call tops->defer_done from its thread before this returns.
 */
void rpc_dispatch_record(struct rpc_dispatcher *d, const uint8_t *rec,
			 size_t len, const struct rpc_transport_ops *tops,
			 void *transport, const struct sockaddr *peer,
			 socklen_t peer_len);

/* True when the reply of @req may carry a payload sent from a file: its
 * transport sends payloads and the reply is not kept in the duplicate
 * request cache (which stores whole replies). */
static inline bool request_payload_file_ok(const struct request *req)
{
	return req->tops && req->tops->send_payload && !req->drc_entry &&
	       req->desc && req->desc->encode_head;
}

/*
 * As rpc_dispatch_record(), for a transport on a loop that owns @pool
 * (borrowed, must outlive every request of the transport): requests and
 * reply buffers come from it, and @rec must start an rpc_buf (what
 * rpc_record_feed() returns), which a request whose arguments point into
 * it (rpc_proc.args_borrow_record) keeps by reference, not by copy.
 * Ownership rule: the record bytes of such a request stay untouched until
 * the request is freed; rpc_record_feed() sees the extra reference and
 * assembles the next record in a new buffer.
 */
void rpc_dispatch_pooled(struct rpc_dispatcher *d, struct rpc_pool *pool,
			 const uint8_t *rec, size_t len,
			 const struct rpc_transport_ops *tops, void *transport,
			 const struct sockaddr *peer, socklen_t peer_len);

/* "ADDR:PORT" of the caller, formatted on first use.  Borrowed from req. */
const char *request_peer(struct request *req);

/* Encodes and sends the reply of a request whose deferred work is done,
 * and frees it.  Call on the transport's loop thread. */
void rpc_request_finish(struct request *req);

/*
 * Runs the handler of a request the admission hook queued, and replies
 * (or defers, as rpc_dispatch_record() would have).  Takes @req.  Call on
 * the transport's loop thread; the transport may be closed by the time
 * this returns (a handler's RPC_CLOSE).
 */
void rpc_request_run(struct request *req);

/*
 * Drops a request the admission hook queued and will never run (its
 * connection closed): no reply, no release hook, no done hook; its
 * duplicate-cache entry is forgotten and the transport reference dropped.
 * Takes @req.  Call on the transport's loop thread.
 */
void rpc_request_cancel(struct request *req);

/*
 * Runs @work(req) on a blocking-work thread (fsync, directory scans, ...),
 * then encodes and sends the reply from the request's own loop thread with
 * the disposition @work left in req->disposition.  @work may use req, its
 * args and res and thread-safe store calls, nothing of the loop.  Returns
 * RPC_PENDING, which the handler returns in turn.  Without a work pool (unit
 * tests, UDP) it runs @work at once and returns req->disposition, and so it
 * does when the handler itself already runs on a work thread
 * (rpc_offload_fn).
 */
enum rpc_disposition request_defer(struct request *req,
				   void (*work)(struct request *req));

/*
 * Parking: a handler that started work which completes on some other
 * thread without holding one (a stable WRITE waiting for the intent log's
 * flush, store/ilog.h) returns request_park(req), RPC_PENDING; whoever
 * finishes the work sets req->disposition (and res) and calls
 * request_unpark(req), once, from any thread: the reply then leaves from
 * the request's loop as after request_defer().  request_can_park() says
 * whether the transport can take a request back that way (a work pool
 * exists: not in unit tests); when false, use request_defer().
 */
static inline bool request_can_park(const struct request *req)
{
	return req->dispatcher && req->dispatcher->work_pool &&
	       req->tops->defer_done;
}
static inline enum rpc_disposition request_park(struct request *req)
{
	/* As request_defer: another thread owns the request until it hands
	 * it back; nothing may take from the loop's pools meanwhile. */
	req->off_loop = true;
	return RPC_PENDING;
}

static inline void request_unpark(struct request *req)
{
	req->tops->defer_done(req->transport, req);
}

/*
 * True when the handler of @req should hand its store I/O to a work thread
 * (request_defer): io_offload is AUTO, there is a work pool, and the
 * transport reports more than RPC_IO_OFFLOAD_BACKLOG calls.  Loop thread.
 */
static inline bool request_io_offload(const struct request *req)
{
	const struct rpc_dispatcher *d = req->dispatcher;

	/* A handler on a work thread (rpc_offload_fn) is off the loop
	 * already, and must not read the transport's state. */
	return d && !req->off_loop && d->io_offload == RPC_IO_OFFLOAD_AUTO &&
	       d->work_pool &&
	       req->tops->backlog &&
	       req->tops->backlog(req->transport) > RPC_IO_OFFLOAD_BACKLOG;
}

/* The pool a handler's buffers come from: the loop's, or NULL (the heap,
 * pool.h) while the request runs on a work thread. */
static inline struct rpc_pool *request_buf_pool(const struct request *req)
{
	return req->off_loop ? NULL : req->pool;
}

#endif
