/* SPDX-License-Identifier: Apache-2.0 */
/*
 * iogen: the I/O sequence of one job (one VMDK), as fio draws it: each I/O
 * is a read with probability read_pct % (fio rwmixread) and goes to a
 * random block with probability random_pct % (fio percentage_random),
 * otherwise to the block after the previous sequential one, wrapping at
 * the end of the region.  Offsets are multiples of the block size inside
 * [0, region).  Pure and deterministic: the same seed gives the same
 * sequence, so a test can check it and a run can be repeated.
 */
#ifndef DSLOAD_IOGEN_H
#define DSLOAD_IOGEN_H

#include <stdbool.h>
#include <stdint.h>

struct iogen_params {
	uint64_t region_bytes; /* I/O stays below this */
	uint32_t bs_bytes; /* every I/O is this long and this aligned */
	unsigned read_pct; /* 0..100 */
	unsigned random_pct; /* 0..100 */
	uint64_t seed;
};

struct iogen {
	struct iogen_params p;
	uint64_t blocks; /* region_bytes / bs_bytes */
	uint64_t next_seq; /* block of the next sequential I/O */
	uint64_t rng; /* xorshift64* state, never 0 */
};

struct iogen_op {
	bool is_read;
	uint64_t off_bytes;
};

/* Returns 0, or -EINVAL when bs is 0, a percentage exceeds 100, or the
 * region holds no whole block. */
int iogen_init(struct iogen *g, const struct iogen_params *p);

/* The next I/O. */
void iogen_next(struct iogen *g, struct iogen_op *op);

/* A uniform draw in [0, n) from @state (n > 0); advances @state. */
uint64_t iogen_rand_below(uint64_t *state, uint64_t n);

#endif
