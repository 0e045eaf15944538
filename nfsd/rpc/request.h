/* SPDX-License-Identifier: Apache-2.0 */
/*
 * request: what a program's procedures see of one RPC call, and all they may
 * do with it.  A program registers a table of procedures (struct
 * rpc_program); dispatch (rpc/dispatch.h) checks and decodes a call, hands
 * the handler a struct request with its decoded arguments, encodes the
 * result the handler filled and calls the procedure's release hook.  RPC-
 * level errors (PROG_UNAVAIL .. AUTH_ERROR) are dispatch's alone; handlers
 * speak only their program's status codes.
 *
 * Everything else about a call in flight (its connection, its place in the
 * traffic model's queues, the duplicate request cache, its buffers) is
 * dispatch's and the transport's, in rpc/dispatch.h, which no handler
 * includes.  The functions a handler calls all start with request_.
 */
#ifndef DSNFS_RPC_REQUEST_H
#define DSNFS_RPC_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <rpc/rpc.h>

#include "nfsd/export/export.h"
#include "nfsd/rpc/auth.h"
#include "nfsd/rpc/pool.h"
#include "nfsd/traffic/req.h"

#define RPC_TRACE_DETAIL_MAX 160

/* What a handler tells the dispatcher to do with the request. */
enum rpc_disposition {
	RPC_REPLY = 0, /* encode res and send it */
	RPC_DROP, /* send nothing (the client will retransmit) */
	RPC_CLOSE, /* send nothing and close the connection */
	RPC_PENDING, /* work continues elsewhere; see request_defer() */
};

struct request;

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
	if (p->unref) {
		p->unref(p->ref);
	}
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
	/* Optional zero-copy reply (xdr_fast.h, xdr_READ3res_head): encodes
	 * the result up to and including its payload's length word, for a
	 * reply whose payload the handler handed over apart
	 * (request_reply_payload). */
	xdrproc_t encode_head;
};

/*
 * What a decoded call costs in the traffic model: sets req->export_name
 * (the datastore, borrowed for the life of the program) and req->cost
 * (its kind; the READ/WRITE payload, else 0 bytes), and returns true;
 * false when the call is charged to no datastore (NULL, a handle that is
 * not ours).  Runs on the loop thread before the handler; changes nothing
 * else.
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

/* What a call costs in the traffic model (rpc_charge_fn). */
struct request_cost {
	uint64_t bytes; /* payload to pay for (READ/WRITE count), or 0 */
	enum traffic_op op;
};

/*
 * The export a call is about, found once per call from the export id its
 * handle carries (nfs3/fh.c): by the charge or offload hook when the call
 * is admitted, else by the handler's first handle check; every later step
 * of the call (the handler, the handle's resolution, a deferred WRITE) uses
 * it instead of searching the table again.  @exp is borrowed: export slots
 * never move (export/export.h).  @access is what the caller may do there,
 * read once under the table's lock by the handler's first check, after
 * any wait in the traffic model's queue, so that a SIGHUP's options apply
 * from the next call to run and one call sees one set of them.  An export
 * removed meanwhile is searched for again (its handles answer STALE).  Only
 * the call's first export is kept: a second handle of another export
 * (RENAME, LINK) is looked up and checked on its own.  Zeroed with the
 * request.
 */
struct request_export {
	struct export *exp; /* NULL: not found yet */
	uint32_t id; /* the export id @exp was found by */
	/* The handle it was found from, in the call's decoded arguments
	 * (which do not change during the call): the same handle again is
	 * not even parsed again. */
	const void *handle;
	bool access_valid; /* @access and @access_err are set */
	int access_err; /* 0 or -EACCES */
	struct export_access access;
};

/* One call in flight as its handler sees it.  Owned by dispatch; handlers
 * borrow it until they reply (or their deferred work ends). */
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

	/* The decoded arguments and the result, as the handler was given
	 * them: deferred work (request_defer) finds them here, and leaves
	 * what is to happen with the reply in @disposition. */
	void *args;
	void *res;
	enum rpc_disposition disposition;

	/* Set by the charge hook and the handler, for tracing and traffic
	 * accounting: the datastore and object the call is about, what it
	 * costs, and the payload bytes it moved. */
	const char *export_name;
	char path_hint[96];
	struct request_cost cost;
	uint64_t payload_bytes;

	/* Its export and access, found once (above). */
	struct request_export export;
};

/* "ADDR:PORT" of the caller, formatted on first use.  Borrowed from req. */
const char *request_peer(struct request *req);

/* True when --trace is on: a handler then fills req->path_hint (a hint
 * costs a format or a system call, spent only when it is printed). */
bool request_traced(const struct request *req);

/* The bound on a READ/WRITE payload of @req's transport (a UDP datagram's),
 * UINT32_MAX when it has none. */
uint32_t request_max_payload(const struct request *req);

/*
 * The one way a payload (a READ's data) reaches the reply apart from the
 * encoded result.  request_payload_ok() says whether it may: the
 * transport sends payloads, the procedure has an encode_head, and the
 * reply is not kept in the duplicate request cache (which stores whole
 * replies).  When it may not, the data is part of the result, encoded
 * with it.  request_reply_payload() takes @p's contents (a buffer of
 * rpc/pool.h or a file segment) on every path: sent after the result's
 * head when the handler replies, released otherwise.
 */
bool request_payload_ok(const struct request *req);
void request_reply_payload(struct request *req, struct rpc_payload *p);

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
 * True when the handler of @req should hand its store I/O to a work thread
 * (request_defer): io_offload is AUTO, there is a work pool, and the
 * connection holds more than RPC_IO_OFFLOAD_BACKLOG calls.  Loop thread.
 */
bool request_io_offload(const struct request *req);

/* The pool a handler's buffers come from: the loop's, or NULL (the heap,
 * pool.h) while the request runs on a work thread. */
struct rpc_pool *request_buf_pool(const struct request *req);

/*
 * A buffer of @size bytes from the loop's pool, taken on the loop for work
 * the handler defers (a READ's data): the work takes it with
 * request_work_buf_take(); what it does not take goes with the request.
 * Returns false when out of memory.
 */
bool request_work_buf_alloc(struct request *req, size_t size);
/* The buffer request_work_buf_alloc() took, owned by the caller now, when
 * it holds at least @size bytes; NULL otherwise (it stays with @req). */
void *request_work_buf_take(struct request *req, size_t size);

/*
 * Parking: a handler that started work which completes on some other
 * thread without holding one (a stable WRITE waiting for the intent log's
 * flush, store/ilog/ilog.h) returns request_park(req), RPC_PENDING; whoever
 * finishes the work sets req->disposition (and res) and calls
 * request_unpark(req), once, from any thread: the reply then leaves from
 * the request's loop as after request_defer().  request_can_park() says
 * whether the transport can take a request back that way (a work pool
 * exists: not in unit tests); when false, use request_defer().
 */
bool request_can_park(const struct request *req);
enum rpc_disposition request_park(struct request *req);
void request_unpark(struct request *req);

#endif
