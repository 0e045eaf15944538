// SPDX-License-Identifier: Apache-2.0
/*
 * test_dsload_verify: data verification tags (perf/dsload/verify.c).  A
 * filled unit checks; one flipped byte anywhere fails; a unit of another
 * file, offset or generation is named as such; an unwritten unit must be
 * zeros.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "perf/dsload/verify.h"

static void test_verify_filled_unit_checks(void **state)
{
	uint8_t unit[VTAG_UNIT_BYTES];
	uint32_t found;

	(void)state;
	vtag_fill(unit, 42, 8192, 7);
	assert_int_equal(vtag_check(unit, 42, 8192, 7, &found), VTAG_OK);
	assert_int_equal(found, 7);
	assert_memory_equal(unit, "DSLDVTG1", 8);
}

static void test_verify_any_flipped_byte_fails(void **state)
{
	uint8_t unit[VTAG_UNIT_BYTES];
	uint32_t found;

	(void)state;
	vtag_fill(unit, 1, 0, 1);
	for (size_t pos = 0; pos < VTAG_UNIT_BYTES; pos += 37) {
		unit[pos] ^= 0x10;
		assert_int_not_equal(vtag_check(unit, 1, 0, 1, &found),
				     VTAG_OK);
		unit[pos] ^= 0x10;
	}
	assert_int_equal(vtag_check(unit, 1, 0, 1, &found), VTAG_OK);
	unit[VTAG_UNIT_BYTES - 1] ^= 1;
	assert_int_equal(vtag_check(unit, 1, 0, 1, &found), VTAG_BAD_BODY);
}

static void test_verify_names_the_wrong_source(void **state)
{
	uint8_t unit[VTAG_UNIT_BYTES];
	uint32_t found;

	(void)state;
	vtag_fill(unit, 5, 4096, 3);
	assert_int_equal(vtag_check(unit, 6, 4096, 3, &found), VTAG_BAD_FILE);
	assert_int_equal(vtag_check(unit, 5, 8192, 3, &found), VTAG_BAD_OFFSET);
	assert_int_equal(vtag_check(unit, 5, 4096, 4, &found), VTAG_BAD_GEN);
	assert_int_equal(found, 3);
	/* a written unit where nothing was written */
	assert_int_equal(vtag_check(unit, 5, 4096, VTAG_GEN_NONE, &found),
			 VTAG_NOT_ZERO);
}

static void test_verify_unwritten_must_be_zero(void **state)
{
	uint8_t unit[VTAG_UNIT_BYTES];
	uint32_t found;

	(void)state;
	memset(unit, 0, sizeof(unit));
	assert_int_equal(vtag_check(unit, 5, 0, VTAG_GEN_NONE, &found),
			 VTAG_OK);
	unit[100] = 1;
	assert_int_equal(vtag_check(unit, 5, 0, VTAG_GEN_NONE, &found),
			 VTAG_NOT_ZERO);
	/* zeros where a write should be: the write was lost */
	memset(unit, 0, sizeof(unit));
	assert_int_equal(vtag_check(unit, 5, 0, 9, &found), VTAG_BAD_MAGIC);
}

static void test_verify_units_differ(void **state)
{
	uint8_t a[VTAG_UNIT_BYTES], b[VTAG_UNIT_BYTES];

	(void)state;
	vtag_fill(a, 1, 0, 1);
	vtag_fill(b, 1, 0, 2);
	assert_memory_not_equal(a + VTAG_HDR_BYTES, b + VTAG_HDR_BYTES,
				VTAG_UNIT_BYTES - VTAG_HDR_BYTES);
	assert_string_equal(vtag_result_name(VTAG_BAD_GEN), "stale-generation");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verify_filled_unit_checks),
		cmocka_unit_test(test_verify_any_flipped_byte_fails),
		cmocka_unit_test(test_verify_names_the_wrong_source),
		cmocka_unit_test(test_verify_unwritten_must_be_zero),
		cmocka_unit_test(test_verify_units_differ),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
