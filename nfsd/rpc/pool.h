/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pool: one event loop's caches of buffers, so that a request in steady
 * state costs no malloc (no per-request heap allocation on the
 * hot path).  Requests, reply buffers, output-queue entries and record
 * buffers are all rpc_bufs: a 16-byte header (owner pool, reference
 * count, size class) before the caller's bytes.  Sizes up to
 * RPC_POOL_MAX_CLASS_BYTES are rounded up to a power of two and come back
 * to a free list of their class; larger ones go to and from the heap.
 *
 * Bound: a pool keeps at most max_bytes in its free lists (class size +
 * header per block); a block freed past that goes back to the heap.
 * Blocks in use are not counted: they are bounded by what uses them (a
 * conn's in-flight and output limits).
 *
 * Threads: no locks.  A pool belongs to one loop; alloc, ref, unref and
 * rpc_pool_free run on that loop's thread only (or after it has stopped).
 * A request deferred to a work thread comes back to its loop
 * (rpc_transport_ops.defer_done) before anything of it is freed.  A block
 * allocated with a NULL pool is a plain heap block with the same header,
 * and may be unreferenced on any one thread.
 */
#ifndef DSNFS_RPC_POOL_H
#define DSNFS_RPC_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RPC_POOL_MIN_CLASS_BYTES 64u
#define RPC_POOL_MAX_CLASS_BYTES (128u * 1024u)
#define RPC_POOL_NCLASSES 12 /* 64 B .. 128 KiB, powers of two */
#define RPC_POOL_DEFAULT_MAX_BYTES (4u * 1024u * 1024u)
/* What a pool keeps once its loop has gone quiet (rpc_pool_trim): enough
 * for the next few calls, not the reserve of a burst. */
#define RPC_POOL_LOW_WATER_BYTES (256u * 1024u)

struct rpc_pool;

struct rpc_pool_stats {
	uint64_t allocs; /* rpc_buf_alloc calls */
	uint64_t heap_allocs; /* of which went to malloc */
	uint64_t heap_frees; /* blocks given back to the heap */
	size_t kept_bytes; /* in the free lists now (<= max_bytes) */
	size_t kept_blocks;
	size_t outstanding; /* blocks handed out, not yet back */
};

/* *out returns owned: rpc_pool_free().  Returns 0 or -ENOMEM. */
int rpc_pool_new(size_t max_bytes, struct rpc_pool **out);

/* Frees @pool (takes) and the blocks in its free lists.  Blocks still
 * out keep it (its free lists emptied) until the last comes back, on
 * one thread.  NULL is fine. */
void rpc_pool_free(struct rpc_pool *pool);

/*
 * Gives the blocks of @pool's free lists past @keep_bytes back to the
 * heap, the largest classes first (they hold the most memory and are the
 * rarest need).  Returns the bytes given back.  Loop thread.
 */
size_t rpc_pool_trim(struct rpc_pool *pool, size_t keep_bytes);

void rpc_pool_stats_get(const struct rpc_pool *pool,
			struct rpc_pool_stats *out);

/*
 * Returns owned a buffer of at least @size bytes (uninitialised, aligned
 * to 16) with one reference, from @pool's free list of its class or the
 * heap; NULL when the heap is out.  @pool may be NULL (heap block).
 */
void *rpc_buf_alloc(struct rpc_pool *pool, size_t size);

/* As rpc_buf_alloc, zeroed. */
void *rpc_buf_zalloc(struct rpc_pool *pool, size_t size);

/* The usable size of @buf (>= what was asked). */
size_t rpc_buf_cap(const void *buf);

/* Adds a reference to @buf (borrowed). */
void rpc_buf_ref(void *buf);

/* True when more than one reference is held on @buf. */
bool rpc_buf_shared(const void *buf);

/* Drops a reference (takes @buf); the last one gives it back to its pool's
 * free list, or to the heap past the pool's bound.  NULL is fine. */
void rpc_buf_unref(void *buf);

#endif
