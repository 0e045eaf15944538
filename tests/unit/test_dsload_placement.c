// SPDX-License-Identifier: Apache-2.0
/*
 * test_dsload_placement: VMDK placement (perf/dsload/placement.c) for the
 * shapes of the anf-avs profile: all on one datastore, one VMDK per
 * datastore, VMs spread, one datastore per VM; and the flow count
 * (hosts x datastores actually used).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "perf/dsload/placement.h"

static void test_place_one_puts_everything_on_the_first(void **state)
{
	struct place_shape s = { 1, 4, 4, 1, PLACE_ONE }; /* H1, S2 */

	(void)state;
	for (unsigned v = 0; v < 4; v++) {
		for (unsigned k = 0; k < 4; k++) {
			assert_int_equal(place_datastore(&s, 0, v, k), 0);
		}
	}
	assert_int_equal(place_flows(&s), 1);
	s.datastores = 4; /* mounted, but idle: still one flow of I/O */
	assert_int_equal(place_flows(&s), 1);
	s.hosts = 4; /* M1, M2: four hosts, one datastore */
	assert_int_equal(place_flows(&s), 4);
}

static void test_place_spread_one_vmdk_per_datastore(void **state)
{
	struct place_shape s = { 1, 1, 8, 8, PLACE_SPREAD }; /* V3, S3 */
	unsigned seen = 0;

	(void)state;
	for (unsigned k = 0; k < 8; k++) {
		seen |= 1u << place_datastore(&s, 0, 0, k);
	}
	assert_int_equal(seen, 0xff);
	assert_int_equal(place_flows(&s), 8);
}

static void test_place_spread_vms_over_datastores(void **state)
{
	struct place_shape s = { 1, 4, 1, 2, PLACE_SPREAD }; /* D2 */
	unsigned count[2] = { 0 };

	(void)state;
	for (unsigned v = 0; v < 4; v++) {
		count[place_datastore(&s, 0, v, 0)]++;
	}
	assert_int_equal(count[0], 2);
	assert_int_equal(count[1], 2);
	assert_int_equal(place_flows(&s), 2);
}

static void test_place_spread_balances_across_hosts(void **state)
{
	struct place_shape s = { 2, 1, 2, 2, PLACE_SPREAD };

	(void)state;
	/* host 0's VM starts at ds0, host 1's at ds1 */
	assert_int_equal(place_datastore(&s, 0, 0, 0), 0);
	assert_int_equal(place_datastore(&s, 0, 0, 1), 1);
	assert_int_equal(place_datastore(&s, 1, 0, 0), 1);
	assert_int_equal(place_datastore(&s, 1, 0, 1), 0);
	assert_int_equal(place_flows(&s), 4);
}

static void test_place_per_vm_keeps_a_vm_together(void **state)
{
	struct place_shape s = { 4, 1, 3, 4, PLACE_PER_VM }; /* M3/M4 */

	(void)state;
	for (unsigned h = 0; h < 4; h++) {
		for (unsigned k = 0; k < 3; k++) {
			assert_int_equal(place_datastore(&s, h, 0, k), h);
		}
	}
	assert_int_equal(place_flows(&s), 4);
}

static void test_place_policy_names_round_trip(void **state)
{
	enum place_policy p;

	(void)state;
	assert_int_equal(place_policy_parse("one", &p), 0);
	assert_int_equal(p, PLACE_ONE);
	assert_int_equal(place_policy_parse("per-vm", &p), 0);
	assert_string_equal(place_policy_name(p), "per-vm");
	assert_int_equal(place_policy_parse("spread", &p), 0);
	assert_string_equal(place_policy_name(p), "spread");
	assert_int_equal(place_policy_parse("random", &p), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_place_one_puts_everything_on_the_first),
		cmocka_unit_test(test_place_spread_one_vmdk_per_datastore),
		cmocka_unit_test(test_place_spread_vms_over_datastores),
		cmocka_unit_test(test_place_spread_balances_across_hosts),
		cmocka_unit_test(test_place_per_vm_keeps_a_vm_together),
		cmocka_unit_test(test_place_policy_names_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
