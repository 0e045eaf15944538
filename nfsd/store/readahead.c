// SPDX-License-Identifier: Apache-2.0
/*
 * readahead: the run detector and prefetch window of readahead.h.
 */
#include "nfsd/store/readahead.h"

/* A read of @n bytes far from the run's furthest end starts a new run. */
static void store_ra_new_run(struct store_ra *ra, uint64_t end, uint32_t n)
{
	ra->run++;
	ra->hi = end;
	ra->run_bytes = n;
	ra->streak = 1;
	ra->ahead_start = 0;
	ra->ahead_end = 0;
	ra->at_eof = false;
	ra->stopped = false;
	ra->probes = 0;
	ra->slow = 0;
}

/* A read inside the prefetched range: did the prefetch serve it? */
static void store_ra_probe(struct store_ra *ra, const struct store_ra_params *p,
			   uint64_t took_ns)
{
	ra->probes++;
	if (took_ns >= p->hit_ns) {
		ra->slow++;
	}
	if (ra->probes < STORE_RA_PROBES) {
		return;
	}
	if (ra->slow == ra->probes) {
		ra->stopped = true;
	}
	ra->probes = 0;
	ra->slow = 0;
}

/* How far the run may be read ahead: @ahead_bytes past its furthest
 * read, and no more than it has read itself. */
static uint64_t store_ra_limit(const struct store_ra *ra,
			       const struct store_ra_params *p)
{
	return ra->hi + (ra->run_bytes < p->ahead_bytes ? ra->run_bytes
							: p->ahead_bytes);
}

/* Whether the run is one to read ahead at all. */
static bool store_ra_wanted(const struct store_ra *ra,
			    const struct store_ra_params *p)
{
	return !ra->stopped && !ra->at_eof && ra->streak >= p->streak &&
	       ra->run_bytes >= p->start_bytes;
}

bool store_ra_note(struct store_ra *ra, const struct store_ra_params *p,
		   uint64_t off, uint32_t n, uint64_t took_ns)
{
	uint64_t end = off + n;

	if (ra->streak == 0 || off > ra->hi + p->near_bytes ||
	    end + p->near_bytes < ra->hi) {
		store_ra_new_run(ra, end, n);
	} else {
		ra->streak++;
		ra->run_bytes += n;
		if (end > ra->hi) {
			ra->hi = end;
		}
	}
	if (ra->ahead_end > ra->ahead_start && off >= ra->ahead_start &&
	    end <= ra->ahead_end) {
		store_ra_probe(ra, p, took_ns);
	}
	if (ra->busy || !store_ra_wanted(ra, p) ||
	    ra->ahead_end >= store_ra_limit(ra, p)) {
		return false;
	}
	ra->busy = true;
	return true;
}

bool store_ra_next(struct store_ra *ra, const struct store_ra_params *p,
		   uint64_t *off, uint64_t *len, uint64_t *run)
{
	uint64_t from = ra->ahead_end > ra->hi ? ra->ahead_end : ra->hi;

	/* A new run started meanwhile: read ahead only once it is one. */
	if (!store_ra_wanted(ra, p) || from >= store_ra_limit(ra, p)) {
		ra->busy = false;
		return false;
	}
	/* Whole pieces, to the next chunk boundary: one OSD read each. */
	*off = from;
	*len = (from / p->chunk_bytes + 1) * p->chunk_bytes - from;
	*run = ra->run;
	return true;
}

void store_ra_done(struct store_ra *ra, uint64_t run, uint64_t off,
		   uint64_t len, uint64_t got, bool failed)
{
	if (run != ra->run) {
		return;
	}
	if (failed) {
		ra->stopped = true;
		return;
	}
	if (got < len) {
		ra->at_eof = true;
	}
	if (got == 0) {
		return;
	}
	/* The range stays one piece: a gap (readers overtook the
	 * prefetch) starts it anew. */
	if (off != ra->ahead_end || ra->ahead_end == ra->ahead_start) {
		ra->ahead_start = off;
	}
	ra->ahead_end = off + got;
}

void store_ra_cancel(struct store_ra *ra)
{
	ra->busy = false;
}
