/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpcconn: one ONC RPC client connection over TCP on a libev loop, as an
 * ESXi host keeps one per datastore.  It binds the emulated host's source
 * address before connecting, sends the calls its user builds (record
 * marking, RFC 5531 11) and matches replies to calls by XID.
 *
 * Failures: a connection that never came up fails its calls at once (a
 * server that is not there is an error, not a wait).  One that was up and
 * breaks (reset, or a call unanswered for call_timeout_ms) reconnects with
 * backoff and sends again, with the same XIDs, every call not yet
 * answered, as a hard NFS mount does; after reconnect_ms without success
 * it gives up and fails them.  Calls complete through their callback,
 * always from a loop callback, never from inside rpcconn_submit().
 *
 * Threads: an rpcconn and its calls belong to the thread running its loop.
 */
#ifndef DSLOAD_RPCCONN_H
#define DSLOAD_RPCCONN_H

#include <ev.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nfsd/rpc/record.h"

struct rpcconn_call;

/*
 * A call completed.  @err is 0 with @body (borrowed until the callback
 * returns) the procedure's results after an accepted SUCCESS reply;
 * -EPROTO (accepted, but not SUCCESS), -EACCES (denied), -EBADMSG (a
 * malformed reply), or the connection's error (-ECONNREFUSED,
 * -ETIMEDOUT, ...) with @body NULL.  The call is idle again: it may be
 * submitted anew from the callback.
 */
typedef void (*rpcconn_done_fn)(struct rpcconn_call *call, int err,
				const uint8_t *body, size_t len);

enum rpcconn_call_state {
	RPCCONN_CALL_IDLE = 0, /* not in the rpcconn's hands */
	RPCCONN_CALL_QUEUED, /* waiting to be (fully) sent */
	RPCCONN_CALL_SENT, /* sent, waiting for its reply */
};

/* A call, embedded in its user's object.  The user owns buf (room for
 * the 4-byte record mark first) and fills it with rpcconn_call_begin() and
 * its arguments before rpcconn_submit(). */
struct rpcconn_call {
	struct rpcconn_call *prev, *next; /* the queue or the sent list */
	struct rpcconn_call *hnext; /* XID hash chain */
	uint8_t *buf;
	size_t cap; /* bytes of buf */
	size_t len; /* bytes to send, mark included */
	size_t sent; /* bytes of it sent */
	uint32_t xid;
	enum rpcconn_call_state state;
	int64_t submit_ns;
	int64_t sent_ns;
	rpcconn_done_fn done;
};

enum rpcconn_state {
	RPCCONN_CONNECTING = 0, /* connect() in progress */
	RPCCONN_UP, /* connected: calls flow */
	RPCCONN_DOWN, /* was up, broke: waiting to reconnect */
	RPCCONN_DEAD, /* gave up: calls fail at once */
};

struct rpcconn_opts {
	struct sockaddr_in src; /* bound before connect (port 0: any) */
	struct sockaddr_in dst;
	const char *machine; /* AUTH_SYS machine name (borrowed) */
	int connect_timeout_ms; /* one attempt */
	int call_timeout_ms; /* unanswered this long: reconnect */
	int reconnect_ms; /* give up after this long down */
	bool resvport; /* bind a privileged source port (< 1024), as ESXi */
	/*
	 * Called before each reconnect attempt (not the first connect), on
	 * the loop: may change *dst, e.g. to the port a portmapper gives
	 * now.  NULL: reconnect to the same address.  May block, briefly.
	 */
	void (*redirect)(void *arg, struct sockaddr_in *dst);
	void *redirect_arg;
};

/* Counters of one connection's life. */
struct rpcconn_counters {
	uint64_t calls;
	uint64_t breaks; /* times it went down */
	uint64_t reconnects; /* times it came back */
	uint64_t resent; /* calls sent again after a reconnect */
	uint64_t timeouts; /* calls that waited call_timeout_ms */
};

struct rpcconn {
	struct ev_loop *loop;
	struct rpcconn_opts opts;
	char machine[64];
	char name[96]; /* "127.0.1.1 -> 127.0.0.1:2049", for messages */
	int fd;
	enum rpcconn_state state;
	bool ever_up;
	int last_err;
	int64_t down_since_ns;
	int backoff_ms;
	ev_io rio, wio;
	ev_timer timer; /* connect timeout, reconnect backoff, call timeout */
	ev_prepare flush; /* sends what was queued during this loop pass */
	struct rpc_record rec;
	uint8_t *rbuf;
	size_t rbuf_cap;
	struct rpcconn_call *qhead, *qtail; /* QUEUED, in submit order */
	struct rpcconn_call *shead, *stail; /* SENT, in send order */
	struct rpcconn_call **hash; /* XID -> call, chained */
	size_t hash_cap; /* a power of two */
	size_t pending; /* QUEUED + SENT */
	uint32_t xid_next;
	struct rpcconn_counters counters;
};

/*
 * Opens a connection on @loop to opts->dst from opts->src (borrowed; the
 * machine name is copied).  Returns 0 with the connect under way (calls
 * may be submitted at once), or -errno when the socket cannot be made,
 * bound or connected (-EADDRNOTAVAIL for a source address that is not
 * local, -ECONNREFUSED ...).
 */
int rpcconn_open(struct rpcconn *c, struct ev_loop *loop,
		 const struct rpcconn_opts *opts);

/* Fails every pending call with -ECANCELED (their callbacks run here),
 * then closes and frees what @c holds. */
void rpcconn_close(struct rpcconn *c);

/*
 * Writes the record mark slot and an RPC call header (AUTH_SYS, uid 0,
 * gid 0, the rpcconn's machine name; a fresh XID) into call->buf.  Returns
 * the offset where the arguments start, or 0 when the buffer is too
 * small.
 */
size_t rpcconn_call_begin(struct rpcconn *c, struct rpcconn_call *call,
			  uint32_t prog, uint32_t vers, uint32_t proc);

/*
 * Queues @call (borrowed until its callback), whose record is @len bytes
 * of call->buf, mark slot included.  Never calls back from here: on a
 * DEAD rpcconn the failure is delivered from the loop.  Returns 0, or
 * -EINVAL when the call is not idle or @len is out of bounds.
 */
int rpcconn_submit(struct rpcconn *c, struct rpcconn_call *call, size_t len,
		   rpcconn_done_fn done);

/*
 * Takes @call back without a completion.  A call cut mid-send breaks the
 * stream, so the connection is reset (and reconnects).
 */
void rpcconn_cancel(struct rpcconn *c, struct rpcconn_call *call);

/* Default options: 3 s connect, 30 s per call, 60 s reconnect window. */
void rpcconn_opts_default(struct rpcconn_opts *o);

#endif
