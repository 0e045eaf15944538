// SPDX-License-Identifier: Apache-2.0
/*
 * store/local/zero_first.c: VMFS's zeroing on first write, for a datastore with
 * zero_on_first_write.  VMFS hands a thin disk a 1 MiB block on its first
 * write, and a lazy-zeroed (zeroedthick) disk keeps its blocks "to be
 * zeroed" (tbz) until then; either way the block is written with zeros,
 * durably, before the guest's data lands in it, which is what makes the
 * zeroing phase (docs/published.md, 2) slow.  A local file system does
 * neither (a hole or an unwritten extent reads as zeros for free), so the
 * lab would not see the phase; here each WRITE into a block that still has
 * a hole or an unwritten extent first writes zeros over those parts of the
 * block and flushes them (sync_file_range), then the data goes in.
 *
 * A block with no hole is never touched again, so once zeroed a block costs
 * two lseek(2) calls a WRITE.  Zeros must never land on data: they only go
 * where SEEK_DATA / SEEK_HOLE (which count dirty page-cache data as data)
 * find a hole, and every write into a block with a hole holds the file's
 * zero_lock, so no other write can fill that hole between the look and the
 * zeros.  Writes into blocks with no hole take no lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#include "nfsd/store/local/local_int.h"

/* VMFS 5 and 6 file block. */
#define ZERO_FIRST_BLOCK_BYTES (1u << 20)

static const uint8_t zero_block[ZERO_FIRST_BLOCK_BYTES];

/* The first hole in [@from, @to) of @fd, or @to.  Errors count as none:
 * a file system without SEEK_HOLE has no holes to zero. */
static uint64_t next_hole(int fd, uint64_t from, uint64_t to)
{
	off_t h = lseek(fd, (off_t)from, SEEK_HOLE);

	return h < 0 || (uint64_t)h > to ? to : (uint64_t)h;
}

/* The first data in [@from, @to) of @fd, or @to. */
static uint64_t next_data(int fd, uint64_t from, uint64_t to)
{
	off_t d = lseek(fd, (off_t)from, SEEK_DATA);

	if (d < 0) { /* ENXIO: no data past @from */
		return to;
	}
	return (uint64_t)d > to ? to : (uint64_t)d;
}

/* True when [@from, @to) of @fd (all below its end) has a hole. */
static bool range_has_hole(int fd, uint64_t from, uint64_t to)
{
	return from < to && next_hole(fd, from, to) < to;
}

/* Writes zeros over every hole of [@from, @to) and flushes them. */
static int zero_holes(int fd, uint64_t from, uint64_t to)
{
	uint64_t at = from;

	while (at < to) {
		uint64_t hole = next_hole(fd, at, to);
		uint64_t end = hole < to ? next_data(fd, hole, to) : to;
		int err;

		if (hole >= to) {
			break;
		}
		err = store__pwrite_full(fd, zero_block, (uint32_t)(end - hole),
					 hole);
		if (err) {
			return err;
		}
		at = end;
	}
	if (sync_file_range(fd, (off_t)from, (off_t)(to - from),
			    SYNC_FILE_RANGE_WAIT_BEFORE |
				    SYNC_FILE_RANGE_WRITE |
				    SYNC_FILE_RANGE_WAIT_AFTER) != 0) {
		return -errno;
	}
	return 0;
}

int store__zero_first_begin(struct store *st, struct local_obj *obj, int fd,
			    uint64_t off_bytes, uint32_t count, bool *locked)
{
	uint64_t first =
		off_bytes / ZERO_FIRST_BLOCK_BYTES * ZERO_FIRST_BLOCK_BYTES;
	uint64_t last = off_bytes + count;
	off_t eof;
	int err = 0;

	*locked = false;
	if (!atomic_load(&st->zero_on_first_write) || count == 0) {
		return 0;
	}
	eof = lseek(fd, 0, SEEK_END);
	if (eof < 0) {
		return -errno;
	}
	/* Blocks past the end of file are new: nothing in them to keep. */
	last = (last + ZERO_FIRST_BLOCK_BYTES - 1) / ZERO_FIRST_BLOCK_BYTES *
	       ZERO_FIRST_BLOCK_BYTES;
	if (last > (uint64_t)eof) {
		last = (uint64_t)eof;
	}
	if (!range_has_hole(fd, first, last)) {
		return 0;
	}
	pthread_mutex_lock(&obj->zero_lock);
	*locked = true;
	for (uint64_t b = first; b < last && !err;
	     b += ZERO_FIRST_BLOCK_BYTES) {
		uint64_t end = b + ZERO_FIRST_BLOCK_BYTES < last
				       ? b + ZERO_FIRST_BLOCK_BYTES
				       : last;

		if (range_has_hole(fd, b, end)) {
			err = zero_holes(fd, b, end);
			if (!err) {
				atomic_fetch_add(&st->zeroed_blocks, 1);
			}
		}
	}
	return err;
}

void store__zero_first_end(struct local_obj *obj, bool locked)
{
	if (locked) {
		pthread_mutex_unlock(&obj->zero_lock);
	}
}
