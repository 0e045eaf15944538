// SPDX-License-Identifier: Apache-2.0
/*
 * pool: size-classed free lists of one loop, no locks.  A block is a
 * struct rpc_buf_hdr followed by the caller's bytes; a free block links to
 * the next through its first bytes.  Memcached's slab classes and Linux
 * nfsd's per-thread rq_pages do the same job: the allocator is paid once,
 * at warm-up, and a bounded reserve stays for the next burst.
 */
#include "nfsd/rpc/pool.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define RPC_BUF_MAGIC 0x7b0fu
#define RPC_BUF_HEAP_CLASS 0xffffu

struct rpc_buf_hdr {
	struct rpc_pool *pool; /* owner; NULL: a plain heap block */
	uint32_t refs;
	uint16_t cls; /* class index, RPC_BUF_HEAP_CLASS: sized exactly */
	uint16_t magic;
	size_t cap; /* usable bytes after the header */
	size_t pad; /* keeps the caller's bytes 16-aligned */
};

_Static_assert(sizeof(struct rpc_buf_hdr) % 16 == 0,
	       "rpc_buf bytes must stay 16-aligned");

struct rpc_pool_free_block {
	struct rpc_pool_free_block *next;
};

struct rpc_pool {
	size_t max_bytes;
	bool orphaned; /* rpc_pool_free() ran with blocks still out */
	struct rpc_pool_free_block *free[RPC_POOL_NCLASSES];
	struct rpc_pool_stats stats;
};

int rpc_pool_new(size_t max_bytes, struct rpc_pool **out)
{
	struct rpc_pool *pool = calloc(1, sizeof(*pool));

	if (!pool) {
		return -ENOMEM;
	}
	pool->max_bytes = max_bytes;
	*out = pool;
	return 0;
}

static struct rpc_buf_hdr *rpc_buf_hdr(const void *buf)
{
	struct rpc_buf_hdr *h = (struct rpc_buf_hdr *)buf - 1;

	assert(h->magic == RPC_BUF_MAGIC);
	return h;
}

static size_t rpc_pool_block_bytes(size_t cls)
{
	return sizeof(struct rpc_buf_hdr) +
	       ((size_t)RPC_POOL_MIN_CLASS_BYTES << cls);
}

void rpc_pool_free(struct rpc_pool *pool)
{
	if (!pool) {
		return;
	}
	for (size_t c = 0; c < RPC_POOL_NCLASSES; c++) {
		while (pool->free[c]) {
			struct rpc_pool_free_block *b = pool->free[c];

			pool->free[c] = b->next;
			free((struct rpc_buf_hdr *)b - 1);
		}
	}
	pool->stats.kept_bytes = 0;
	pool->stats.kept_blocks = 0;
	/* A block still out would come back to freed memory: the pool goes
	 * with the last of them instead. */
	if (pool->stats.outstanding) {
		pool->orphaned = true;
		return;
	}
	free(pool);
}

size_t rpc_pool_trim(struct rpc_pool *pool, size_t keep_bytes)
{
	size_t freed = 0;

	for (size_t c = RPC_POOL_NCLASSES; c-- > 0;) {
		size_t bytes = rpc_pool_block_bytes(c);

		while (pool->free[c] && pool->stats.kept_bytes > keep_bytes) {
			struct rpc_pool_free_block *b = pool->free[c];

			pool->free[c] = b->next;
			free((struct rpc_buf_hdr *)b - 1);
			pool->stats.kept_bytes -= bytes;
			pool->stats.kept_blocks--;
			pool->stats.heap_frees++;
			freed += bytes;
		}
	}
	return freed;
}

void rpc_pool_stats_get(const struct rpc_pool *pool, struct rpc_pool_stats *out)
{
	*out = pool->stats;
}

/* The class of @size, or RPC_BUF_HEAP_CLASS above the largest. */
static uint16_t rpc_pool_class(size_t size)
{
	size_t cap = RPC_POOL_MIN_CLASS_BYTES;
	uint16_t cls = 0;

	if (size > RPC_POOL_MAX_CLASS_BYTES) {
		return RPC_BUF_HEAP_CLASS;
	}
	while (cap < size) {
		cap <<= 1;
		cls++;
	}
	return cls;
}

void *rpc_buf_alloc(struct rpc_pool *pool, size_t size)
{
	uint16_t cls = rpc_pool_class(size);
	size_t cap = cls == RPC_BUF_HEAP_CLASS
			     ? size
			     : (size_t)RPC_POOL_MIN_CLASS_BYTES << cls;
	struct rpc_buf_hdr *h;

	if (pool) {
		pool->stats.allocs++;
		if (cls != RPC_BUF_HEAP_CLASS && pool->free[cls]) {
			struct rpc_pool_free_block *b = pool->free[cls];

			pool->free[cls] = b->next;
			pool->stats.kept_bytes -= rpc_pool_block_bytes(cls);
			pool->stats.kept_blocks--;
			pool->stats.outstanding++;
			h = (struct rpc_buf_hdr *)b - 1;
			h->refs = 1;
			return b;
		}
	}
	if (cap > SIZE_MAX - sizeof(*h)) {
		return NULL;
	}
	h = malloc(sizeof(*h) + cap);
	if (!h) {
		return NULL;
	}
	h->pool = pool;
	h->refs = 1;
	h->cls = cls;
	h->magic = RPC_BUF_MAGIC;
	h->cap = cap;
	h->pad = 0;
	if (pool) {
		pool->stats.heap_allocs++;
		pool->stats.outstanding++;
	}
	return h + 1;
}

void *rpc_buf_zalloc(struct rpc_pool *pool, size_t size)
{
	void *buf = rpc_buf_alloc(pool, size);

	if (buf) {
		memset(buf, 0, size);
	}
	return buf;
}

size_t rpc_buf_cap(const void *buf)
{
	return rpc_buf_hdr(buf)->cap;
}

void rpc_buf_ref(void *buf)
{
	rpc_buf_hdr(buf)->refs++;
}

bool rpc_buf_shared(const void *buf)
{
	return rpc_buf_hdr(buf)->refs > 1;
}

void rpc_buf_unref(void *buf)
{
	struct rpc_buf_hdr *h;
	struct rpc_pool *pool;

	if (!buf) {
		return;
	}
	h = rpc_buf_hdr(buf);
	assert(h->refs > 0);
	if (--h->refs > 0) {
		return;
	}
	pool = h->pool;
	if (!pool) {
		free(h);
		return;
	}
	pool->stats.outstanding--;
	if (pool->orphaned) {
		free(h);
		if (pool->stats.outstanding == 0) {
			free(pool);
		}
		return;
	}
	if (h->cls != RPC_BUF_HEAP_CLASS &&
	    pool->stats.kept_bytes + rpc_pool_block_bytes(h->cls) <=
		    pool->max_bytes) {
		struct rpc_pool_free_block *b = buf;

		b->next = pool->free[h->cls];
		pool->free[h->cls] = b;
		pool->stats.kept_bytes += rpc_pool_block_bytes(h->cls);
		pool->stats.kept_blocks++;
		return;
	}
	pool->stats.heap_frees++;
	free(h);
}
