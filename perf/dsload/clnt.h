/*
 * clnt: one ONC RPC client connection over TCP on a libev loop, as an
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
 * always from a loop callback, never from inside clnt_submit().
 *
 * Threads: a clnt and its calls belong to the thread running its loop.
 */
#ifndef DSLOAD_CLNT_H
#define DSLOAD_CLNT_H

#include <ev.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nfsd/rpc/record.h"

struct clnt_call;

/*
 * A call completed.  @err is 0 with @body (borrowed until the callback
 * returns) the procedure's results after an accepted SUCCESS reply;
 * -EPROTO (accepted, but not SUCCESS), -EACCES (denied), -EBADMSG (a
 * malformed reply), or the connection's error (-ECONNREFUSED,
 * -ETIMEDOUT, ...) with @body NULL.  The call is idle again: it may be
 * submitted anew from the callback.
 */
typedef void (*clnt_done_fn)(struct clnt_call *call, int err,
			     const uint8_t *body, size_t len);

enum clnt_call_state {
	CLNT_CALL_IDLE = 0, /* not in the clnt's hands */
	CLNT_CALL_QUEUED, /* waiting to be (fully) sent */
	CLNT_CALL_SENT, /* sent, waiting for its reply */
};

/* A call, embedded in its user's object.  The user owns buf (room for
 * the 4-byte record mark first) and fills it with clnt_call_begin() and
 * its arguments before clnt_submit(). */
struct clnt_call {
	struct clnt_call *prev, *next; /* the queue or the sent list */
	struct clnt_call *hnext; /* XID hash chain */
	uint8_t *buf;
	size_t cap; /* bytes of buf */
	size_t len; /* bytes to send, mark included */
	size_t sent; /* bytes of it sent */
	uint32_t xid;
	enum clnt_call_state state;
	int64_t submit_ns;
	int64_t sent_ns;
	clnt_done_fn done;
};

enum clnt_state {
	CLNT_CONNECTING = 0, /* connect() in progress */
	CLNT_UP, /* connected: calls flow */
	CLNT_DOWN, /* was up, broke: waiting to reconnect */
	CLNT_DEAD, /* gave up: calls fail at once */
};

struct clnt_opts {
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
struct clnt_counters {
	uint64_t calls;
	uint64_t breaks; /* times it went down */
	uint64_t reconnects; /* times it came back */
	uint64_t resent; /* calls sent again after a reconnect */
	uint64_t timeouts; /* calls that waited call_timeout_ms */
};

struct clnt {
	struct ev_loop *loop;
	struct clnt_opts opts;
	char machine[64];
	char name[96]; /* "127.0.1.1 -> 127.0.0.1:2049", for messages */
	int fd;
	enum clnt_state state;
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
	struct clnt_call *qhead, *qtail; /* QUEUED, in submit order */
	struct clnt_call *shead, *stail; /* SENT, in send order */
	struct clnt_call **hash; /* XID -> call, chained */
	size_t hash_cap; /* a power of two */
	size_t pending; /* QUEUED + SENT */
	uint32_t xid_next;
	struct clnt_counters counters;
};

/*
 * Opens a connection on @loop to opts->dst from opts->src (borrowed; the
 * machine name is copied).  Returns 0 with the connect under way (calls
 * may be submitted at once), or -errno when the socket cannot be made,
 * bound or connected (-EADDRNOTAVAIL for a source address that is not
 * local, -ECONNREFUSED ...).
 */
int clnt_open(struct clnt *c, struct ev_loop *loop,
	      const struct clnt_opts *opts);

/* Fails every pending call with -ECANCELED (their callbacks run here),
 * then closes and frees what @c holds. */
void clnt_close(struct clnt *c);

/*
 * Writes the record mark slot and an RPC call header (AUTH_SYS, uid 0,
 * gid 0, the clnt's machine name; a fresh XID) into call->buf.  Returns
 * the offset where the arguments start, or 0 when the buffer is too
 * small.
 */
size_t clnt_call_begin(struct clnt *c, struct clnt_call *call, uint32_t prog,
		       uint32_t vers, uint32_t proc);

/*
 * Queues @call (borrowed until its callback), whose record is @len bytes
 * of call->buf, mark slot included.  Never calls back from here: on a
 * DEAD clnt the failure is delivered from the loop.  Returns 0, or
 * -EINVAL when the call is not idle or @len is out of bounds.
 */
int clnt_submit(struct clnt *c, struct clnt_call *call, size_t len,
		clnt_done_fn done);

/*
 * Takes @call back without a completion.  A call cut mid-send breaks the
 * stream, so the connection is reset (and reconnects).
 */
void clnt_cancel(struct clnt *c, struct clnt_call *call);

/* Default options: 3 s connect, 30 s per call, 60 s reconnect window. */
void clnt_opts_default(struct clnt_opts *o);

#endif
