/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dispatch: turns one decoded RPC call into one reply (RFC 5531 9, 10): the
 * transports' and the server's side of a call.  Programs register a table
 * of procedures (rpc/request.h, the handlers' side); dispatch checks
 * program, version, procedure and credentials, decodes the arguments with
 * the procedure's XDR routine, calls the handler, encodes the result, calls
 * the release hook and frees the arguments.
 *
 * Memory: on a loop with an rpc_pool (rpc_dispatch_pooled), the
 * call, its reply buffer and the record a WRITE's data points into come
 * from the loop's free lists, so a call in steady state costs no malloc.
 *
 * Between decoding and the handler, a call its program charges to a
 * datastore (rpc_charge_fn) goes through the dispatcher's admission hook
 * (struct rpc_admission, rpc/call.h: the traffic model, traffic.h), which
 * may keep it waiting in its flow's queue and run it later with
 * rpc_call_run().
 */
#ifndef DSNFS_RPC_DISPATCH_H
#define DSNFS_RPC_DISPATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "nfsd/rpc/call.h"
#include "nfsd/rpc/pool.h"

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

/*
 * As rpc_dispatch_pooled(), for a record that lies inside @owner, an
 * rpc_buf of the loop (a lent read buffer, nfsd/net/lent.c) rather than
 * at its start: a request whose arguments point into the record takes a
 * reference on @owner (borrowed) and keeps it until it is freed, on the
 * loop thread, after its reply (a WRITE deferred or parked on another
 * thread keeps it meanwhile).  The caller leaves the bytes of the record
 * untouched while @owner is shared (rpc_buf_shared()).
 */
void rpc_dispatch_lent(struct rpc_dispatcher *d, struct rpc_pool *pool,
		       void *owner, const uint8_t *rec, size_t len,
		       const struct rpc_transport_ops *tops, void *transport,
		       const struct sockaddr *peer, socklen_t peer_len);

/* Encodes and sends the reply of a call whose deferred work is done, and
 * frees it.  Call on the transport's loop thread. */
void rpc_call_finish(struct rpc_call *call);

/*
 * Runs the handler of a call the admission hook queued, and replies (or
 * defers, as rpc_dispatch_record() would have).  Takes @call.  Call on the
 * transport's loop thread; the transport may be closed by the time this
 * returns (a handler's RPC_CLOSE).
 */
void rpc_call_run(struct rpc_call *call);

/*
 * Drops a call the admission hook queued and will never run (its
 * connection closed): no reply, no release hook, no done hook; its
 * duplicate-cache entry is forgotten and the transport reference dropped.
 * Takes @call.  Call on the transport's loop thread.
 */
void rpc_call_cancel(struct rpc_call *call);

#endif
