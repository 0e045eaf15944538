/* SPDX-License-Identifier: Apache-2.0 */
/*
 * net_int: what the net module's files share and nothing outside uses.
 */
#ifndef DSNFS_NET_INT_H
#define DSNFS_NET_INT_H

#include <ev.h>
#include <pthread.h>
#include <sys/socket.h>

#include "nfsd/net/net.h"
#include "nfsd/rpc/record.h"

#define NET_READ_CHUNK (256 * 1024) /* at most this much per read event */
/* Records from this size (large WRITEs) are read in place: the rest of
 * the record straight into its own buffer (rpc_record_direct), and of
 * the next one only its head (mark, header, a little data) into the
 * loop's buffer, to be copied.  Below it a memcpy costs less than the
 * extra read. */
#define NET_DIRECT_MIN (32 * 1024)
#define NET_READ_HEAD 1024

/* Lent read buffers (net/lent.c): records that lie whole in one go to
 * dispatch from there, with no copy. */
#define NET_LENT_BYTES (256 * 1024)
#define NET_LENT_COUNT 8 /* per loop, made when first needed */
/* A connection starts reading into a buffer only with this much room
 * (a 64 KiB WRITE and its header), or its last record's size if larger;
 * the rest of a buffer that calls hold is lent when it has that much. */
#define NET_LENT_MIN_ROOM (64 * 1024 + 1024)
#define NET_LENT_ALIGN 16 /* where a reader starts: XDR reads words */
/* Records from this size make the reads of their connection stop at a
 * multiple of it (uniform WRITEs then end where a buffer ends, instead
 * of one of them moving to the next buffer). */
#define NET_LENT_HINT_MIN 4096

/* One lent read buffer of a loop. */
struct net_lent {
	uint8_t *buf; /* rpc_buf of NET_LENT_BYTES (heap), or NULL */
	size_t used; /* bytes from its start handed out or read */
	bool reading; /* a conn reads into it */
};

/* A connection handed from the accepting loop to a worker. */
struct net_handoff {
	int fd;
	unsigned spread; /* its listener's number (net->spread_conns) */
	struct sockaddr_storage peer;
	socklen_t peer_len;
	struct net_handoff *next;
};

/* At most this many connections past max_conns while the idle ones
 * chosen to make room for them close (net/conn_limit.c). */
#define NET_EVICT_SLACK 16u

/* Which idle connection makes room for a new one: one of @addr's on
 * worker @worker (net__admit_conn fills it). */
struct net_evict_order {
	uint8_t addr[16];
	unsigned worker;
	uint32_t host_conns; /* @addr's connections when chosen */
};

/* An eviction handed to the worker that holds the victim. */
struct net_evict {
	uint8_t addr[16];
	uint32_t host_conns;
	char for_peer[64]; /* the new connection it makes room for */
	struct net_evict *next;
};

struct conn;
struct net_flow;

struct worker {
	struct net *net;
	unsigned id;
	struct ev_loop *loop;
	pthread_t thread;
	ev_async wake; /* new connections, finished deferred work, stop */

	pthread_mutex_t lock; /* guards the four fields below */
	struct net_handoff *incoming;
	struct net_evict *evicts; /* idle connections to close for room */
	struct rpc_call *done_head, *done_tail;
	bool stopping;

	struct conn *conns; /* every open conn of this loop */
	uint8_t *read_buf; /* NET_READ_CHUNK; shared by this loop's conns */
	struct net_lent lent[NET_LENT_COUNT];
	uint64_t lent_records; /* records dispatched from a lent buffer */
	uint64_t lent_misses; /* a conn asked and none could be lent */
	/* This loop's caches (rpc/pool.h): its requests, replies, output
	 * entries and record buffers; freed last, when all came back. */
	struct rpc_pool *pool;
	uint64_t evicted; /* idle conns closed to make room */
	ev_tstamp last_evict_log;
	ev_timer trim_timer; /* memory_trim_ms after the last close */
};

/* Output: a queue of whole replies.  A reply is a head (record mark, RPC
 * header, result) and an optional payload (READ data) sent from its own
 * buffer (writev) or from its file (sendfile), then the XDR padding.  Its
 * length is in its record mark before anything of it is sent, so a file
 * that ends early is followed by zeros up to the promised length.  The
 * entry and its head are rpc_bufs of the worker's pool (conn_out_free()). */
struct conn_out {
	uint8_t *buf;
	size_t len;
	struct rpc_payload payload; /* len 0: none */
	size_t pad; /* 0..3 zero bytes after the payload */
	bool file_short; /* the file ended: the rest of it goes as zeros */
	struct conn_out *next;
};

/* Life of a connection; changed only in conn_set_state(). */
enum conn_state {
	CONN_OPEN, /* reading requests, writing replies */
	CONN_PAUSED, /* open, but not reading: too much in flight / queued */
	CONN_DRAINING, /* the peer shut down its write side: no more reading;
			* the calls read are answered, then it closes */
	CONN_CLOSED, /* socket closed; memory lives on until the last ref */
};

struct conn {
	struct worker *worker;
	int fd;
	unsigned spread; /* its listener's number (net->spread_conns) */
	enum conn_state state;
	unsigned refs; /* 1 while open + 1 per request in flight */
	unsigned inflight; /* requests dispatched and not yet finished */
	ev_io read_watcher;
	ev_io write_watcher;
	ev_timer timer; /* idle and incomplete-record deadlines */
	bool batching; /* replies wait for the end of the read */
	bool input_more; /* read input follows the record in dispatch */
	bool input_large; /* the last record was >= NET_DIRECT_MIN */
	ev_tstamp last_activity; /* last byte read (draining: last check) */
	ev_tstamp output_since; /* replies waiting: the socket last took one */
	ev_tstamp partial_since; /* a record started arriving; 0: none */
	struct rpc_record record;
	/* Input in a lent buffer: its unread bytes [lent_pos, lent_fill)
	 * are the start of a record still arriving (or none). */
	struct net_lent *lent;
	size_t lent_pos;
	size_t lent_fill;
	size_t lent_hint; /* the last record's bytes, mark included */
	struct conn_out *out_head, *out_tail;
	size_t out_head_off; /* bytes of out_head already written */
	size_t out_bytes; /* bytes queued and not yet written */
	uint8_t *in_held; /* input read while over the limits: it is */
	size_t in_held_len; /* consumed before the socket is read again */
	struct sockaddr_storage peer;
	socklen_t peer_len;
	char peer_str[64];
	struct conn *prev, *next; /* worker->conns */
	struct conn *held_next; /* the loop's list of conns whose output it
				 * holds (net__conn_output_hold) */
	struct net_flow *flows; /* one per datastore its calls were for */
};

/* Creates a conn on @w for an accepted socket (takes @fd) of the listener
 * numbered @spread.  Worker thread. */
void net__conn_open(struct worker *w, int fd, const struct sockaddr *peer,
		    socklen_t peer_len, unsigned spread);

/* trim.c.  A conn of @w closed: memory_trim_ms from now, unless another
 * closes meanwhile, @w's pool keeps only its low-water mark and the heap
 * gives its free pages back: a burst's memory must not stay.
 * Worker thread. */
void net__worker_trim_arm(struct worker *w);
/* Sets @w's trim timer up (not armed); stops it (the loop is stopping). */
void net__worker_trim_init(struct worker *w);
void net__worker_trim_stop(struct worker *w);

/*
 * lent.c.  Lends one of @w's buffers (taken: give it back with
 * net__lent_give) to a conn that reads into it from ->used on, with at
 * least @min_room bytes from there to its end: one no call holds (read
 * from its start), else the rest of one that calls hold, else a new one
 * while @w has fewer than NET_LENT_COUNT.  NULL when none can be lent
 * (counted in w->lent_misses).  Loop thread.
 */
struct net_lent *net__lent_take(struct worker *w, size_t min_room);

/* The conn reading into @l stops; it read up to @end (bytes before it
 * may be held by calls: they are not lent again while held). */
void net__lent_give(struct net_lent *l, size_t end);

/* Frees @w's buffers that no call holds and no conn reads into; returns
 * the bytes given back.  Loop thread (or after it stopped). */
size_t net__lent_trim(struct worker *w);

/* Drops the set's references (the calls are all finished). */
void net__lent_fini(struct worker *w);

/* conn_out.c: bytes of @o on the wire (head, payload, padding). */
size_t net__conn_out_total(const struct conn_out *o);
/* Gives every queued reply of @c back (closing). */
void net__conn_out_free_all(struct conn *c);
/* Writes @c's queue until it is empty or the socket is full (0), or a
 * write fails (-errno). */
int net__conn_flush(struct conn *c);

/* Closes @c (idempotent); memory goes with the last reference. */
void net__conn_close(struct conn *c);

/* conn_lent.c: @c's side of the loop's lent read buffers. */
/* @c stops reading into its lent buffer; unread bytes there are dropped. */
void net__conn_lent_give(struct conn *c);
/* Bytes of a record still arriving in @c's lent buffer. */
size_t net__conn_lent_carry(const struct conn *c);
/* Before a read: a lent buffer with room for what comes, or none (the
 * read goes to the loop's buffer).  0, or -ENOMEM. */
int net__conn_lent_prepare(struct conn *c);
/* How much to read into @c's lent buffer. */
size_t net__conn_lent_want(const struct conn *c);

extern const struct rpc_transport_ops net__conn_tops;

/*
 * Replies to @c gather from now until net__conn_output_release() and leave
 * in one sendmsg, as during a read: for the calls a deferred batch hands
 * back at once (a log flush answers several WRITEs of one connection).
 * Returns false, doing nothing, when they gather already.  Loop thread.
 */
bool net__conn_output_hold(struct conn *c);
void net__conn_output_release(struct conn *c);

/* A reference that keeps @c's memory (not its socket) alive. */
void net__conn_ref(struct conn *c);
void net__conn_unref(struct conn *c);

/* Closing @c: stops its flows' timers and cancels the calls waiting in
 * their queues (rpc_call_cancel).  Loop thread. */
void net__flows_cancel(struct conn *c);

/* @c's memory goes: frees its flows, whose queues are empty and whose
 * calls have all finished. */
void net__flows_free(struct conn *c);

/* handoff.c.  Gives an accepted socket (takes @fd) of the listener
 * numbered @spread to the worker net__place_conn picks.  Main loop. */
void net__handoff(struct net *net, int fd, const struct sockaddr *peer,
		  socklen_t peer_len, unsigned spread);

/* Listeners with counts of their own in net->spread_conns. */
#define NET_SPREAD_MAX 8u

/*
 * The worker for a new connection of the listener numbered @spread: the
 * one holding the fewest live connections of that listener, ties taken
 * in turn.  Per listener, because a client opens a short MOUNT (or
 * portmapper) connection before each NFS one: one turn shared by all
 * listeners put every NFS connection of such clients on the same loop.
 * Main loop.
 */
unsigned net__place_conn(struct net *net, unsigned spread);

/* Live connections of listener @spread on worker @worker (tests). */
uint32_t net__spread_conns(struct net *net, unsigned spread, unsigned worker);

enum net_admit_verdict {
	NET_ADMIT_OK = 0, /* counted */
	NET_ADMIT_EVICT, /* counted past max_conns: close *ev's victim */
	NET_ADMIT_REFUSED, /* per-host cap, or full with no room to make */
};

/* Counts a new connection from @peer of listener @spread on worker
 * @worker.  At max_conns it names in *ev an idle connection to close for
 * it (net/conn_limit.c says which).  Any thread. */
enum net_admit_verdict net__admit_conn(struct net *net,
				       const struct sockaddr *peer,
				       unsigned worker, unsigned spread,
				       struct net_evict_order *ev);

/* Uncounts a connection admitted by net__admit_conn on @worker.  Any
 * thread. */
void net__release_conn(struct net *net, const struct sockaddr *peer,
		       unsigned worker, unsigned spread);

/*
 * Makes room for a connection from @for_peer: closes the least recently
 * active idle connection (nothing in flight, no output queued) of @w
 * from @addr, or of any host when @addr has none idle here; logs it (one
 * line a second at most).  Returns true when one was closed.  Worker
 * thread.
 */
bool net__conn_evict(struct worker *w, const uint8_t addr[16],
		     uint32_t host_conns, const char *for_peer);

/* Frees the per-host counters. */
void net__admit_fini(struct net *net);

/* Stops and closes every listener's socket; their memory stays for the
 * UDP calls still on work threads.  Main thread. */
void net__listeners_close(struct net *net);

/* Finishes the UDP calls handed back since, and frees the listeners.
 * After the work pool stopped.  Main thread. */
void net__listeners_free(struct net *net);

#endif
