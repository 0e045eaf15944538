// SPDX-License-Identifier: Apache-2.0
/*
 * iogen: offsets and read/write choices for one job (see iogen.h).  The
 * generator is xorshift64* (Vigna, "An experimental exploration of
 * Marsaglia's xorshift generators"): one multiply per draw, plenty for
 * choosing blocks.  Bounded draws use Lemire's multiply-shift, whose bias
 * (below n / 2^64) does not matter here.
 */
#include "perf/dsload/iogen.h"

#include <errno.h>
#include <string.h>

static uint64_t iogen_rand(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * UINT64_C(0x2545F4914F6CDD1D);
}

uint64_t iogen_rand_below(uint64_t *state, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)iogen_rand(state) * n) >> 64);
}

int iogen_init(struct iogen *g, const struct iogen_params *p)
{
	if (p->bs_bytes == 0 || p->read_pct > 100 || p->random_pct > 100 ||
	    p->region_bytes < p->bs_bytes) {
		return -EINVAL;
	}
	memset(g, 0, sizeof(*g));
	g->p = *p;
	g->blocks = p->region_bytes / p->bs_bytes;
	/* splitmix64 of the seed: never 0, and nearby seeds diverge. */
	g->rng = p->seed + UINT64_C(0x9E3779B97F4A7C15);
	g->rng = (g->rng ^ (g->rng >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	g->rng = (g->rng ^ (g->rng >> 27)) * UINT64_C(0x94D049BB133111EB);
	g->rng ^= g->rng >> 31;
	if (g->rng == 0) {
		g->rng = 1;
	}
	return 0;
}

void iogen_next(struct iogen *g, struct iogen_op *op)
{
	uint64_t block;

	op->is_read = iogen_rand_below(&g->rng, 100) < g->p.read_pct;
	if (iogen_rand_below(&g->rng, 100) < g->p.random_pct) {
		block = iogen_rand_below(&g->rng, g->blocks);
	} else {
		block = g->next_seq;
		g->next_seq = block + 1 == g->blocks ? 0 : block + 1;
	}
	op->off_bytes = block * g->p.bs_bytes;
}
