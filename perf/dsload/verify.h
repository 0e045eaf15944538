/* SPDX-License-Identifier: Apache-2.0 */
/*
 * verify: data verification tags.  A written block is cut into units of
 * VTAG_UNIT_BYTES; each unit starts with a 64-byte header
 *
 *   0  magic "DSLDVTG1"          32 tag: xxh64(file id, offset, gen)
 *   8  file id (LE64, NFS fileid) 40 body hash: xxh64 of bytes 64..4095
 *  16  offset in the file (LE64)  48 zero
 *  24  generation (LE32), unit size (LE32)
 *
 * and the rest of the unit is a pseudo-random stream seeded by the tag, so
 * units differ everywhere and any changed byte fails the body hash.  The
 * content is a function of (file id, offset, generation) alone: a write
 * can be regenerated for a resend without keeping its buffer.
 *
 * Generation 0 (VTAG_GEN_NONE) means never written: the unit must read
 * as zeros.  That holds for a flat file the fleet created (a hole); in a
 * flat file kept from an earlier run, units start as VTAG_GEN_UNKNOWN,
 * like a unit whose last write failed: undefined, not checked, until
 * written.
 */
#ifndef DSLOAD_VERIFY_H
#define DSLOAD_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#define VTAG_UNIT_BYTES 4096u
#define VTAG_HDR_BYTES 64u
#define VTAG_GEN_NONE 0u
#define VTAG_GEN_UNKNOWN UINT32_MAX

enum vtag_result {
	VTAG_OK = 0,
	VTAG_NOT_ZERO, /* never written, but not zeros */
	VTAG_BAD_MAGIC, /* no header: zeros or foreign data */
	VTAG_BAD_FILE, /* a unit of another file */
	VTAG_BAD_OFFSET, /* a unit of another offset (misplaced write) */
	VTAG_BAD_GEN, /* an older or newer write of this unit (lost) */
	VTAG_BAD_TAG, /* header fields do not match their tag */
	VTAG_BAD_BODY, /* the body does not match its hash (corrupt) */
};

/* Writes the unit for (@file_id, @off_bytes, @gen) into @unit (borrowed,
 * VTAG_UNIT_BYTES long).  @gen is neither 0 nor VTAG_GEN_UNKNOWN. */
void vtag_fill(uint8_t *unit, uint64_t file_id, uint64_t off_bytes,
	       uint32_t gen);

/*
 * Checks @unit (borrowed, VTAG_UNIT_BYTES) against what the client last
 * wrote there.  *found_gen is set to the generation in the header when
 * the magic is present (else 0), to say what was read instead.
 */
enum vtag_result vtag_check(const uint8_t *unit, uint64_t file_id,
			    uint64_t off_bytes, uint32_t gen,
			    uint32_t *found_gen);

/* A short name for @r ("ok", "not-zero", "bad-magic", ...). */
const char *vtag_result_name(enum vtag_result r);

#endif
