// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of vmdk/descriptor.c: the descriptor grammar, its caps, the
 * line numbers in its errors, and a format -> parse round trip.
 */
#include "tests/unit/test_vmdk.h"
#include "vmdk/vmdk_int.h"

static const char qemu_sparse[] = "# Disk DescriptorFile\n"
				  "version=1\n"
				  "CID=52b5f2d8\n"
				  "parentCID=ffffffff\n"
				  "createType=\"monolithicSparse\"\n"
				  "\n"
				  "# Extent description\n"
				  "RW 2048 SPARSE \"t.vmdk\"\n"
				  "\n"
				  "# The Disk Data Base\n"
				  "#DDB\n"
				  "\n"
				  "ddb.virtualHWVersion = \"4\"\n"
				  "ddb.geometry.cylinders = \"2\"\n"
				  "ddb.geometry.heads = \"16\"\n"
				  "ddb.geometry.sectors = \"63\"\n"
				  "ddb.adapterType = \"ide\"\n";

static int parse(const char *text, struct vmdk_descriptor *d, char *err,
		 size_t errlen)
{
	err[0] = '\0';
	return vmdk__descriptor_parse(text, strlen(text), d, err, errlen);
}

static void test_descriptor_parses_qemu_monolithic_sparse(void **state)
{
	struct vmdk_descriptor d;
	char err[256];

	(void)state;
	assert_int_equal(parse(qemu_sparse, &d, err, sizeof(err)), 0);
	assert_int_equal(d.version, 1);
	assert_int_equal(d.cid, 0x52b5f2d8);
	assert_int_equal(d.parent_cid, VMDK_CID_NONE);
	assert_string_equal(vmdk__descriptor_get(&d, "createType"),
			    "monolithicSparse");
	assert_int_equal(d.n_extents, 1);
	assert_int_equal(d.extents[0].access, VMDK_ACCESS_RW);
	assert_int_equal(d.extents[0].len_sectors, 2048);
	assert_int_equal(d.extents[0].type, VMDK_EXTENT_SPARSE);
	assert_string_equal(d.extents[0].file, "t.vmdk");
	assert_int_equal(d.size_sectors, 2048);
	assert_int_equal(d.n_ddb, 5);
	assert_string_equal(vmdk__descriptor_get(&d, "ddb.adapterType"), "ide");
	assert_null(vmdk__descriptor_get(&d, "parentFileNameHint"));
	vmdk__descriptor_fini(&d);
}

static void test_descriptor_parses_esxi_flat_crlf_and_blanks(void **state)
{
	const char *text = "# Disk DescriptorFile\r\n"
			   "version=1\r\n"
			   "encoding=\"UTF-8\"\r\n"
			   "CID=fffffffe\r\n"
			   "parentCID=ffffffff\r\n"
			   "isNativeSnapshot=\"no\"\r\n"
			   "createType=\"vmfs\"\r\n"
			   "\r\n"
			   "  RW 20971520 VMFS \"my disk-flat.vmdk\"  \r\n"
			   "RDONLY 2048\tFLAT \"other.bin\" 4096\r\n"
			   "NOACCESS 8 ZERO\r\n"
			   "ddb.thinProvisioned = \"1\"\r\n"
			   "ddb.uuid = \"60 00 C2 9a\"\r\n";
	struct vmdk_descriptor d;
	char err[256];

	(void)state;
	assert_int_equal(parse(text, &d, err, sizeof(err)), 0);
	assert_int_equal(d.cid, 0xfffffffe);
	assert_int_equal(d.n_extents, 3);
	assert_string_equal(d.extents[0].file, "my disk-flat.vmdk");
	assert_int_equal(d.extents[0].type, VMDK_EXTENT_VMFS);
	assert_int_equal(d.extents[1].access, VMDK_ACCESS_RDONLY);
	assert_int_equal(d.extents[1].offset_sectors, 4096);
	assert_int_equal(d.extents[2].type, VMDK_EXTENT_ZERO);
	assert_null(d.extents[2].file);
	assert_int_equal(d.size_sectors, 20971520 + 2048 + 8);
	assert_string_equal(vmdk__descriptor_get(&d, "encoding"), "UTF-8");
	assert_string_equal(vmdk__descriptor_get(&d, "ddb.uuid"),
			    "60 00 C2 9a");
	vmdk__descriptor_fini(&d);
}

static void test_descriptor_round_trip_keeps_unknown_keys(void **state)
{
	const char *text =
		"version=1\nCID=0000abcd\nparentCID=12345678\n"
		"isNativeSnapshot=\"no\"\ncreateType=\"vmfsSparse\"\n"
		"parentFileNameHint=\"base.vmdk\"\n"
		"RW 100 VMFSSPARSE \"d-delta.vmdk\"\n"
		"ddb.longContentID = \"0123\"\n";
	struct vmdk_descriptor d, d2;
	char err[256];
	size_t len;
	char *out;

	(void)state;
	assert_int_equal(parse(text, &d, err, sizeof(err)), 0);
	vmdk__descriptor_set_cid(&d, 0xdeadbeef);
	assert_int_equal(vmdk__descriptor_format(&d, &out, &len), 0);
	assert_non_null(strstr(out, "CID=deadbeef\n"));
	assert_non_null(strstr(out, "isNativeSnapshot=\"no\"\n"));
	assert_int_equal(parse(out, &d2, err, sizeof(err)), 0);
	assert_int_equal(d2.cid, 0xdeadbeef);
	assert_int_equal(d2.parent_cid, 0x12345678);
	assert_string_equal(vmdk__descriptor_get(&d2, "parentFileNameHint"),
			    "base.vmdk");
	assert_int_equal(d2.extents[0].type, VMDK_EXTENT_VMFSSPARSE);
	assert_string_equal(vmdk__descriptor_get(&d2, "ddb.longContentID"),
			    "0123");
	assert_int_equal(d2.n_keys, d.n_keys);
	free(out);
	vmdk__descriptor_fini(&d);
	vmdk__descriptor_fini(&d2);
}

static void test_descriptor_stops_at_nul_padding(void **state)
{
	char text[600];
	struct vmdk_descriptor d;
	char err[256];

	(void)state;
	memset(text, 0, sizeof(text));
	memcpy(text, qemu_sparse, strlen(qemu_sparse));
	text[sizeof(text) - 2] = 'X'; /* junk after the NUL is not read */
	assert_int_equal(vmdk__descriptor_parse(text, sizeof(text), &d, err,
						sizeof(err)),
			 0);
	vmdk__descriptor_fini(&d);
}

struct bad_case {
	const char *text;
	int err;
	const char *msg;
};

static const struct bad_case bad_cases[] = {
	{ "CID=1\ncreateType=\"vmfs\"\nRW 1 VMFS \"f\"\n", -EINVAL,
	  "no version line" },
	{ "version=1\ncreateType=\"vmfs\"\nRW 1 VMFS \"f\"\n", -EINVAL,
	  "no CID line" },
	{ "version=1\nCID=1\nRW 1 VMFS \"f\"\n", -EINVAL,
	  "no createType line" },
	{ "version=1\nCID=1\ncreateType=\"vmfs\"\n", -EINVAL,
	  "no extent lines" },
	{ "version=4\n", -EINVAL, "line 1: version is not 1, 2 or 3" },
	{ "version=1\nCID=xyz\n", -EINVAL, "line 2: CID is not 8 hex digits" },
	{ "version=1\nCID=123456789\n", -EINVAL, "line 2: CID" },
	{ "version=1\nparentCID=-1\n", -EINVAL, "line 2: parentCID" },
	{ "RW 0 VMFS \"f\"\n", -EINVAL, "line 1: extent size" },
	{ "RW 137438953473 VMFS \"f\"\n", -EINVAL, "line 1: extent size" },
	{ "RW 99999999999999999999999 VMFS \"f\"\n", -EINVAL,
	  "line 1: extent size" },
	{ "RW 137438953472 VMFS \"f\"\nRW 1 VMFS \"g\"\n", -EINVAL,
	  "line 2: extents add up to more than 64 TiB" },
	{ "RW 10 FOO \"f\"\n", -EINVAL, "line 1: unknown extent type" },
	{ "RW 10 VMFSRDM \"f\"\n", -ENOTSUP,
	  "line 1: extent type not supported" },
	{ "RW 10 VMFS f\n", -EINVAL, "line 1: extent file name not quoted" },
	{ "RW 10 VMFS \"f\n", -EINVAL, "line 1: extent file name not quoted" },
	{ "RW 10\n", -EINVAL, "line 1: extent line has no type" },
	{ "RW\n", -EINVAL, "line 1: extent line has no size" },
	{ "RW 10 FLAT \"f\" 0 junk\n", -EINVAL, "line 1: junk after extent" },
	{ "RW 10 SPARSE \"f\" 5\n", -EINVAL, "line 1: bad extent offset" },
	{ "\n\nversion=1\nversion=1\n", -EINVAL, "line 4: key defined twice" },
	{ "ddb.a = \"1\"\nddb.a = \"2\"\n", -EINVAL,
	  "line 2: key defined twice" },
	{ "createType=\"vm\"fs\"\n", -EINVAL, "line 1: unbalanced quotes" },
	{ "createType=\"vmfs\n", -EINVAL, "line 1: unbalanced quotes" },
	{ "ddb.a =2\" 5s\"\n", -EINVAL, "line 1: unbalanced quotes" },
	{ "this is not a descriptor\n", -EINVAL,
	  "line 1: neither key=value nor extent line" },
	{ "bad key!=1\n", -EINVAL, "line 1: bad key" },
	{ "=1\n", -EINVAL, "line 1: bad key" },
	{ "createType=\"a\x01\"\n", -EINVAL,
	  "line 1: control character in value" },
	{ "version=1\nCID=1\ncreateType=\"monolithicSparse\"\n"
	  "parentFileNameHint=\"p.vmdk\"\nRW 1 SPARSE \"f\"\n",
	  -EINVAL, "parentFileNameHint without a parentCID" },
};

static void test_descriptor_rejects_bad_input_naming_the_line(void **state)
{
	struct vmdk_descriptor d;
	char err[256];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad_cases); i++) {
		int r = parse(bad_cases[i].text, &d, err, sizeof(err));

		if (r != bad_cases[i].err || !strstr(err, bad_cases[i].msg)) {
			fail_msg("case %zu: got %d '%s', want %d '%s'", i, r,
				 err, bad_cases[i].err, bad_cases[i].msg);
		}
		assert_int_equal(d.n_extents, 0);
		assert_null(d.keys);
	}
}

static void test_descriptor_over_1mib_is_refused(void **state)
{
	size_t len = VMDK_MAX_DESCRIPTOR_BYTES + 2;
	char *text = malloc(len + 1);
	struct vmdk_descriptor d;
	char err[256];

	(void)state;
	assert_non_null(text);
	memset(text, '\n', len);
	text[len] = '\0';
	assert_int_equal(parse(text, &d, err, sizeof(err)), -EFBIG);
	assert_non_null(strstr(err, "exceeds"));
	free(text);
}

static void test_descriptor_caps_extent_count(void **state)
{
	size_t n = VMDK_MAX_EXTENTS + 1;
	char *text = malloc(n * 16 + 64);
	struct vmdk_descriptor d;
	char err[256];
	size_t pos = 0;

	(void)state;
	assert_non_null(text);
	for (size_t i = 0; i < n; i++) {
		pos += (size_t)sprintf(text + pos, "RW 1 ZERO\n");
	}
	assert_int_equal(parse(text, &d, err, sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "more than 32768 extents"));
	free(text);
}

static void test_descriptor_new_has_geometry_and_parent(void **state)
{
	struct vmdk_descriptor d, d2;
	char err[256];
	size_t len;
	char *out;

	(void)state;
	assert_int_equal(vmdk__descriptor_init(&d, "vmfs"), 0);
	assert_int_not_equal(d.cid, VMDK_CID_NONE);
	assert_int_equal(vmdk__descriptor_add_extent(&d, VMDK_ACCESS_RW,
						     20971520, VMDK_EXTENT_VMFS,
						     "x-flat.vmdk", 0),
			 0);
	assert_int_equal(
		vmdk__descriptor_set_geometry(&d, 20971520, "lsilogic"), 0);
	assert_int_equal(vmdk__descriptor_set_parent(&d, 0x11223344, "p.vmdk"),
			 0);
	assert_int_equal(vmdk__descriptor_format(&d, &out, &len), 0);
	assert_int_equal(parse(out, &d2, err, sizeof(err)), 0);
	assert_string_equal(vmdk__descriptor_get(&d2, "ddb.geometry.cylinders"),
			    "1305");
	assert_string_equal(vmdk__descriptor_get(&d2, "ddb.geometry.heads"),
			    "255");
	assert_int_equal(d2.parent_cid, 0x11223344);
	assert_non_null(strstr(out, "RW 20971520 VMFS \"x-flat.vmdk\"\n"));
	vmdk__descriptor_unset(&d2, "parentFileNameHint");
	assert_null(vmdk__descriptor_get(&d2, "parentFileNameHint"));
	free(out);
	vmdk__descriptor_fini(&d);
	vmdk__descriptor_fini(&d2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_descriptor_parses_qemu_monolithic_sparse),
		cmocka_unit_test(
			test_descriptor_parses_esxi_flat_crlf_and_blanks),
		cmocka_unit_test(test_descriptor_round_trip_keeps_unknown_keys),
		cmocka_unit_test(test_descriptor_stops_at_nul_padding),
		cmocka_unit_test(
			test_descriptor_rejects_bad_input_naming_the_line),
		cmocka_unit_test(test_descriptor_over_1mib_is_refused),
		cmocka_unit_test(test_descriptor_caps_extent_count),
		cmocka_unit_test(test_descriptor_new_has_geometry_and_parent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
