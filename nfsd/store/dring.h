/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dring: stable direct writes through io_uring, submitted and completed by
 * one thread, so that a WRITE going in place (O_DIRECT with RWF_DSYNC,
 * store/local/local_direct.c) holds no work thread while its flush runs.
 *
 * Any thread queues a write (never blocks).  The ring's thread takes all
 * that is queued, sorts it by descriptor and offset, and merges the writes
 * that meet into one writev: one flush then covers them all, so a VMDK's
 * sequential WRITEs in flight land as one.  It copies each write's bytes
 * into an aligned buffer of its own (an RPC record holds them at any
 * address), keeps up to STORE_DRING_DEPTH writevs in the kernel, and calls
 * each write's done hook on its thread when its writev ends.
 */
#ifndef DSNFS_STORE_DRING_H
#define DSNFS_STORE_DRING_H

#include <stdint.h>

/* Offset, length and memory alignment a write must have (the largest
 * logical block size of disks in use; local_direct.c's DIRECT_ALIGN). */
#define STORE_DRING_ALIGN 4096u
/* Writevs in the kernel at once, and the most one carries. */
#define STORE_DRING_DEPTH 64u
#define STORE_DRING_MAX_IOV 64u
#define STORE_DRING_MAX_BYTES (4u << 20)

struct store_dring;
struct store_dring_write;

/* Called once, on the ring's thread: 0 when every byte is on the disk
 * (written and flushed), else -errno (-EINVAL: the descriptor or the
 * alignment was refused and nothing was written; -ENOMEM: no buffer). */
typedef void (*store_dring_done_fn)(struct store_dring_write *w, int err);

/* One write; the caller's memory, borrowed by the ring until done. */
struct store_dring_write {
	int fd; /* opened O_DIRECT; borrowed until done */
	uint64_t off; /* a multiple of STORE_DRING_ALIGN */
	uint32_t len; /* a multiple of STORE_DRING_ALIGN, > 0 */
	const void *src; /* len bytes, any address, until done */
	store_dring_done_fn done;

	/* The ring's. */
	struct store_dring_write *next;
	void *buf; /* the aligned copy of src (or src itself) */
	uint32_t written; /* bytes written by earlier (short) writevs */
};

/* Writes queued, writevs submitted, bytes written, short writevs
 * resubmitted, since the ring started. */
struct store_dring_stats {
	uint64_t writes, writevs, bytes, short_writes;
};

/*
 * Sets up a ring and starts its thread.  -errno when io_uring cannot be
 * had (ENOSYS: no kernel support, EPERM: kernel.io_uring_disabled or a
 * seccomp filter, ENOMEM); callers then write on their own threads.
 * *out returns owned: store_dring_free().
 */
int store_dring_new(struct store_dring **out);

/* Queues @w (its public fields set).  Any thread; does not block. */
void store_dring_submit(struct store_dring *r, struct store_dring_write *w);

/* Waits until every write submitted so far has had its done hook return. */
void store_dring_drain(struct store_dring *r);

/* Drains, stops the thread, frees.  NULL is a no-op. */
void store_dring_free(struct store_dring *r);

void store_dring_stats(struct store_dring *r, struct store_dring_stats *out);

#endif
