// SPDX-License-Identifier: Apache-2.0
/*
 * test_repl_decode: the body of POST /replications (nfsd/admin/
 * repl_decode.c) read by the rules of [replication NAME]
 * (repl_config_key()): every refusal names its field and says why.
 */
#include "nfsd/admin/repl_decode.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nfsd/admin/patch.h"

#define KEY "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define PEM "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
/* The same as a JSON string's text. */
#define PEM_JSON                                                               \
	"-----BEGIN CERTIFICATE-----\\nMIIB\\n-----END CERTIFICATE-----\\n"

static struct admin_repl_spec spec;

/* Decodes @text: 0 and the spec, or the error with its message in @err. */
static int decode(const char *text, char *err, size_t errlen)
{
	json_t *doc = NULL;
	int rc = admin__json_parse(text, strlen(text), &doc, err, errlen);

	if (!rc) {
		rc = admin__json_repl_spec(doc, &spec, err, errlen);
	}
	json_decref(doc);
	return rc;
}

/* @text is refused with a message holding @why. */
static void refused(const char *text, const char *why)
{
	char err[600] = "";

	if (decode(text, err, sizeof(err)) != -EINVAL || !strstr(err, why)) {
		fail_msg("'%s': got '%s', wanted '%s'", text, err, why);
	}
}

static void test_source_fields_read_as_the_config_reads_them(void **state)
{
	char err[600] = "";

	(void)state;
	assert_int_equal(
		decode("{\"name\": \"r1\", \"role\": \"source\", "
		       "\"datastore\": \"ds1\", \"key\": \"" KEY "\", "
		       "\"destination_url\": \"https://b:8049\", "
		       "\"destination_datastore\": \"dsr\", "
		       "\"schedule\": \"hourly\", \"schedule_seconds\": 5, "
		       "\"timeout_seconds\": 30, \"ca\": \"" PEM_JSON "\"}",
		       err, sizeof(err)),
		0);
	assert_string_equal(spec.cfg.name, "r1");
	assert_int_equal(spec.cfg.role, REPL_ROLE_SOURCE);
	assert_string_equal(spec.cfg.datastore, "ds1");
	assert_string_equal(spec.cfg.url, "https://b:8049");
	assert_string_equal(spec.cfg.dst_datastore, "dsr");
	assert_int_equal(spec.cfg.schedule, REPL_SCHED_HOURLY);
	assert_int_equal(spec.cfg.schedule_seconds, 5);
	assert_int_equal(spec.cfg.timeout_s, 30);
	assert_string_equal(spec.key, KEY);
	assert_true(spec.has_ca);
	assert_string_equal(spec.ca, PEM);
	assert_string_equal(spec.cfg.key_file, "");
	assert_string_equal(spec.cfg.ca_file, "");
}

static void test_destination_with_its_source(void **state)
{
	char err[600] = "";

	(void)state;
	assert_int_equal(
		decode("{\"name\": \"r_2-b\", \"role\": \"destination\", "
		       "\"datastore\": \"dsr\", \"key\": \"" KEY "\", "
		       "\"source_url\": \"http://a:8049\", "
		       "\"source_datastore\": \"ds1\"}",
		       err, sizeof(err)),
		0);
	assert_int_equal(spec.cfg.role, REPL_ROLE_DESTINATION);
	assert_string_equal(spec.cfg.src_url, "http://a:8049");
	assert_string_equal(spec.cfg.src_datastore, "ds1");
	assert_false(spec.has_ca);
}

static void test_missing_fields_are_named(void **state)
{
	(void)state;
	refused("{\"role\": \"source\", \"datastore\": \"d\", \"key\": \"" KEY
		"\"}",
		"'name' is missing");
	refused("{\"name\": \"r\", \"datastore\": \"d\", \"key\": \"" KEY "\"}",
		"'role' is missing");
	refused("{\"name\": \"r\", \"role\": \"source\", \"key\": \"" KEY "\"}",
		"'datastore' is missing");
	refused("{\"name\": \"r\", \"role\": \"source\", \"datastore\": \"d\"}",
		"'key' is missing");
	refused("{}", "no field given");
}

static void test_wrong_types_are_refused(void **state)
{
	(void)state;
	refused("{\"name\": 7, \"role\": \"source\", \"datastore\": \"d\", "
		"\"key\": \"" KEY "\"}",
		"'name' must be a string");
	refused("{\"name\": \"r\", \"role\": [\"source\"], \"datastore\": "
		"\"d\", \"key\": \"" KEY "\"}",
		"'role' must be a string");
	refused("{\"name\": \"r\", \"role\": \"source\", \"datastore\": \"d\", "
		"\"key\": \"" KEY "\", \"timeout_seconds\": \"30\"}",
		"'timeout_seconds' must be a whole number");
	refused("{\"name\": \"r\", \"role\": \"source\", \"datastore\": \"d\", "
		"\"key\": \"" KEY "\", \"schedule_seconds\": 1.5}",
		"'schedule_seconds' must be a whole number");
	refused("{\"name\": \"r\", \"role\": \"source\", \"datastore\": \"d\", "
		"\"key\": 12}",
		"'key' must be a string");
	refused("{\"name\": \"r\", \"role\": \"source\", \"datastore\": \"d\", "
		"\"key\": \"" KEY "\", \"ca\": true}",
		"'ca' must be a string");
}

static void test_values_out_of_the_config_rules(void **state)
{
	(void)state;
	refused("{\"name\": \"r\", \"role\": \"mirror\", \"datastore\": \"d\", "
		"\"key\": \"" KEY "\"}",
		"role is source or destination");
	refused("{\"name\": \"r\", \"role\": \"source\", \"datastore\": \"d\", "
		"\"key\": \"" KEY "\", \"schedule\": \"weekly\"}",
		"schedule is 10min, hourly, daily or none");
	refused("{\"name\": \"r\", \"role\": \"source\", \"datastore\": \"d\", "
		"\"key\": \"" KEY "\", \"timeout_seconds\": 0}",
		"timeout_seconds is 1..3600");
	refused("{\"name\": \"r\", \"role\": \"source\", \"datastore\": \"d\", "
		"\"key\": \"" KEY "\", \"timeout_seconds\": 3601}",
		"timeout_seconds is 1..3600");
	refused("{\"name\": \"r\", \"role\": \"source\", \"datastore\": \"d\", "
		"\"key\": \"" KEY "\", \"schedule_seconds\": -1}",
		"'schedule_seconds' is negative");
	refused("{\"name\": \"r\", \"role\": \"source\", \"datastore\": \"\", "
		"\"key\": \"" KEY "\"}",
		"datastore: empty");
	refused("{\"name\": \"a/b\", \"role\": \"source\", \"datastore\": "
		"\"d\", \"key\": \"" KEY "\"}",
		"a name of at most 32");
	refused("{\"name\": \"r\", \"role\": \"source\", \"datastore\": \"d\", "
		"\"key\": \"" KEY "\", \"destination_url\": \"http://a\\nb\"}",
		"'destination_url' holds a control character");
	refused("{\"name\": \"r\", \"role\": \"source\", \"datastore\": \" "
		"d\", "
		"\"key\": \"" KEY "\"}",
		"'datastore' begins or ends with a space");
}

static void test_overlong_strings_are_refused(void **state)
{
	char *body = malloc(REPL_CA_PEM_MAX + 512);
	char name[40], ds[80];

	(void)state;
	memset(name, 'n', 33);
	name[33] = '\0';
	snprintf(body, 512,
		 "{\"name\": \"%s\", \"role\": \"source\", \"datastore\": "
		 "\"d\", \"key\": \"" KEY "\"}",
		 name);
	refused(body, "a name of at most 32");
	memset(ds, 'd', 64);
	ds[64] = '\0';
	snprintf(body, 512,
		 "{\"name\": \"r\", \"role\": \"source\", \"datastore\": "
		 "\"%s\", \"key\": \"" KEY "\"}",
		 ds);
	refused(body, "datastore: empty or longer than 63 bytes");
	/* A CA one byte past the bound. */
	{
		size_t n = (size_t)snprintf(
			body, 512,
			"{\"name\": \"r\", \"role\": \"source\", "
			"\"datastore\": \"d\", \"key\": \"" KEY "\", "
			"\"ca\": \"-----BEGIN CERTIFICATE-----");

		memset(body + n, 'A', REPL_CA_PEM_MAX + 1 - 27);
		strcpy(body + n + REPL_CA_PEM_MAX + 1 - 27, "\"}");
		refused(body, "'ca' is longer than 16384 bytes");
	}
	free(body);
}

static void test_bad_keys_and_paths_are_refused(void **state)
{
	(void)state;
	refused("{\"name\": \"r\", \"role\": \"source\", \"datastore\": \"d\", "
		"\"key\": \"abc\"}",
		"'key' must be 64 hex digits");
	refused("{\"name\": \"r\", \"role\": \"source\", \"datastore\": \"d\", "
		"\"key\": \"" KEY "0\"}",
		"'key' must be 64 hex digits");
	refused("{\"name\": \"r\", \"role\": \"source\", \"datastore\": \"d\", "
		"\"key\": "
		"\"0123456789abcdef0123456789abcdef0123456789abcdef0123"
		"456789abcdeg\"}",
		"'key' must be 64 hex digits");
	refused("{\"name\": \"r\", \"role\": \"source\", \"datastore\": \"d\", "
		"\"key_file\": \"/etc/shadow\"}",
		"key_file and ca_file are not taken");
	refused("{\"name\": \"r\", \"role\": \"source\", \"datastore\": \"d\", "
		"\"key\": \"" KEY "\", \"ca_file\": \"/etc/ssl/x.pem\"}",
		"key_file and ca_file are not taken");
	refused("{\"name\": \"r\", \"role\": \"source\", \"datastore\": \"d\", "
		"\"key\": \"" KEY "\", \"ca\": \"not a certificate\"}",
		"'ca' is not a PEM certificate");
	refused("{\"name\": \"r\", \"role\": \"source\", \"datastore\": \"d\", "
		"\"key\": \"" KEY "\", \"ca\": \"" PEM_JSON "\\u0001\"}",
		"'ca' holds a control character");
	refused("{\"name\": \"r\", \"role\": \"source\", \"datastore\": \"d\", "
		"\"key\": \"" KEY "\", \"color\": \"blue\"}",
		"unknown field 'color'");
}

static void test_duplicate_name_is_refused(void **state)
{
	(void)state;
	/* The body's parser refuses a key given twice: which "name" would
	 * win is never left to chance. */
	refused("{\"name\": \"r1\", \"name\": \"r2\", \"role\": \"source\", "
		"\"datastore\": \"d\", \"key\": \"" KEY "\"}",
		"duplicate");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			test_source_fields_read_as_the_config_reads_them),
		cmocka_unit_test(test_destination_with_its_source),
		cmocka_unit_test(test_missing_fields_are_named),
		cmocka_unit_test(test_wrong_types_are_refused),
		cmocka_unit_test(test_values_out_of_the_config_rules),
		cmocka_unit_test(test_overlong_strings_are_refused),
		cmocka_unit_test(test_bad_keys_and_paths_are_refused),
		cmocka_unit_test(test_duplicate_name_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
