// SPDX-License-Identifier: Apache-2.0
/*
 * verify: fills and checks tagged units (layout in verify.h).  The body
 * stream is splitmix64 (Steele, Lea, Flood, "Fast splittable pseudorandom
 * number generators"), seeded by the tag; its hash is xxh64.
 */
#include "perf/dsload/verify.h"

#include <string.h>
#include <xxhash.h>

static const uint8_t vtag_magic[8] = { 'D', 'S', 'L', 'D', 'V', 'T', 'G', '1' };

/* Seeds of the two hashes, so a tag is never mistaken for a body hash. */
#define VTAG_TAG_SEED UINT64_C(0x64736c6f61647467)
#define VTAG_BODY_SEED UINT64_C(0x64736c6f61646264)

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++) {
		p[i] = (uint8_t)(v >> (8 * i));
	}
}

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++) {
		p[i] = (uint8_t)(v >> (8 * i));
	}
}

static uint64_t get_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--) {
		v = v << 8 | p[i];
	}
	return v;
}

static uint32_t get_le32(const uint8_t *p)
{
	uint32_t v = 0;

	for (int i = 3; i >= 0; i--) {
		v = v << 8 | p[i];
	}
	return v;
}

static uint64_t vtag_tag(uint64_t file_id, uint64_t off_bytes, uint32_t gen)
{
	uint8_t key[20];

	put_le64(key, file_id);
	put_le64(key + 8, off_bytes);
	put_le32(key + 16, gen);
	return XXH64(key, sizeof(key), VTAG_TAG_SEED);
}

static void vtag_body_fill(uint8_t *body, size_t len, uint64_t seed)
{
	uint64_t s = seed, z;

	for (size_t pos = 0; pos + 8 <= len; pos += 8) {
		s += UINT64_C(0x9E3779B97F4A7C15);
		z = s;
		z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
		z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
		z ^= z >> 31;
		memcpy(body + pos, &z, 8);
	}
}

void vtag_fill(uint8_t *unit, uint64_t file_id, uint64_t off_bytes,
	       uint32_t gen)
{
	uint64_t tag = vtag_tag(file_id, off_bytes, gen);
	uint8_t *body = unit + VTAG_HDR_BYTES;
	size_t body_len = VTAG_UNIT_BYTES - VTAG_HDR_BYTES;

	vtag_body_fill(body, body_len, tag);
	memset(unit, 0, VTAG_HDR_BYTES);
	memcpy(unit, vtag_magic, sizeof(vtag_magic));
	put_le64(unit + 8, file_id);
	put_le64(unit + 16, off_bytes);
	put_le32(unit + 24, gen);
	put_le32(unit + 28, VTAG_UNIT_BYTES);
	put_le64(unit + 32, tag);
	put_le64(unit + 40, XXH64(body, body_len, VTAG_BODY_SEED));
}

static int vtag_all_zero(const uint8_t *p, size_t len)
{
	uint64_t acc = 0, w;

	for (size_t pos = 0; pos + 8 <= len; pos += 8) {
		memcpy(&w, p + pos, 8);
		acc |= w;
	}
	return acc == 0;
}

enum vtag_result vtag_check(const uint8_t *unit, uint64_t file_id,
			    uint64_t off_bytes, uint32_t gen,
			    uint32_t *found_gen)
{
	const uint8_t *body = unit + VTAG_HDR_BYTES;
	size_t body_len = VTAG_UNIT_BYTES - VTAG_HDR_BYTES;
	uint64_t h_file, h_off;
	uint32_t h_gen;

	*found_gen = 0;
	if (memcmp(unit, vtag_magic, sizeof(vtag_magic)) != 0) {
		if (gen == VTAG_GEN_NONE) {
			return vtag_all_zero(unit, VTAG_UNIT_BYTES)
				       ? VTAG_OK
				       : VTAG_NOT_ZERO;
		}
		return VTAG_BAD_MAGIC;
	}
	h_file = get_le64(unit + 8);
	h_off = get_le64(unit + 16);
	h_gen = get_le32(unit + 24);
	*found_gen = h_gen;
	if (get_le32(unit + 28) != VTAG_UNIT_BYTES ||
	    get_le64(unit + 32) != vtag_tag(h_file, h_off, h_gen)) {
		return VTAG_BAD_TAG;
	}
	if (XXH64(body, body_len, VTAG_BODY_SEED) != get_le64(unit + 40)) {
		return VTAG_BAD_BODY;
	}
	if (h_file != file_id) {
		return VTAG_BAD_FILE;
	}
	if (h_off != off_bytes) {
		return VTAG_BAD_OFFSET;
	}
	if (gen == VTAG_GEN_NONE) {
		return VTAG_NOT_ZERO;
	}
	if (h_gen != gen) {
		return VTAG_BAD_GEN;
	}
	return VTAG_OK;
}

const char *vtag_result_name(enum vtag_result r)
{
	switch (r) {
	case VTAG_OK:
		return "ok";
	case VTAG_NOT_ZERO:
		return "not-zero";
	case VTAG_BAD_MAGIC:
		return "bad-magic";
	case VTAG_BAD_FILE:
		return "wrong-file";
	case VTAG_BAD_OFFSET:
		return "wrong-offset";
	case VTAG_BAD_GEN:
		return "stale-generation";
	case VTAG_BAD_TAG:
		return "bad-tag";
	case VTAG_BAD_BODY:
		return "bad-body";
	}
	return "?";
}
