// SPDX-License-Identifier: Apache-2.0
/*
 * test_config_validate: config_validate (nfsd/config/validate.c): a config
 * needs a datastore, each with a path, unique fsids, and no datastore's
 * directory inside another's.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "nfsd/base/base.h"
#include "nfsd/config/config.h"

#include "tests/unit/test_config_fixture.h"

static void test_config_validate_needs_a_datastore(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(config_validate(&f->cfg, f->err, sizeof(f->err)),
			 -EINVAL);
	assert_non_null(strstr(f->err, "no datastores"));
}

static void test_config_validate_refuses_duplicate_fsid(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(load(f, "[datastore a]\npath = /a\nfsid = 5\n"
				 "[datastore b]\npath = /b\nfsid = 5\n"),
			 0);
	assert_int_equal(config_validate(&f->cfg, f->err, sizeof(f->err)),
			 -EINVAL);
	assert_string_equal(f->err, "datastores a and b have the same fsid 5; "
				    "set fsid in one of them");
}

static void test_config_validate_refuses_missing_path(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(load(f, "[datastore a]\npath = /a\n"
				 "[datastore b]\nread_only = yes\n"),
			 0);
	assert_int_equal(config_validate(&f->cfg, f->err, sizeof(f->err)),
			 -EINVAL);
	assert_string_equal(f->err, "[datastore b]: no path");
}

/* Issue 23: one datastore's directory inside another's (the outer export
 * would reach the inner one's files under its own rules), or the same
 * directory twice, is refused, naming both, after realpath (a symlink or
 * "/./" does not hide it). */
static void test_config_validate_refuses_nested_datastores(void **state)
{
	struct fixture *f = *state;
	char dir[] = "/tmp/test_config_nest_XXXXXX";
	char text[1024], inner[128], link[128];

	assert_non_null(mkdtemp(dir));
	snprintf(inner, sizeof(inner), "%s/vms", dir);
	assert_int_equal(mkdir(inner, 0700), 0);
	snprintf(link, sizeof(link), "%s-link", dir);
	assert_int_equal(symlink(inner, link), 0);

	snprintf(text, sizeof(text),
		 "[datastore outer]\npath = %s\n"
		 "[datastore inner]\npath = %s/./\n",
		 dir, link);
	assert_int_equal(load(f, text), 0);
	assert_int_equal(config_validate(&f->cfg, f->err, sizeof(f->err)),
			 -EINVAL);
	assert_non_null(strstr(f->err, "datastores inner"));
	assert_non_null(strstr(f->err, "and outer"));
	assert_non_null(strstr(f->err, "one lies inside the other"));

	/* The same directory under two names. */
	config_defaults(&f->cfg);
	snprintf(text, sizeof(text),
		 "[datastore a]\npath = %s\n[datastore b]\npath = %s/\n", inner,
		 inner);
	assert_int_equal(load(f, text), 0);
	assert_int_equal(config_validate(&f->cfg, f->err, sizeof(f->err)),
			 -EINVAL);
	assert_non_null(strstr(f->err, "the same directory"));

	/* Siblings, and a name that merely starts like the other: fine. */
	config_defaults(&f->cfg);
	snprintf(text, sizeof(text),
		 "[datastore a]\npath = %s/vms\n[datastore b]\npath = "
		 "%s-link2\n[datastore c]\npath = %s/vm\n",
		 dir, dir, dir);
	assert_int_equal(load(f, text), 0);
	assert_int_equal(config_validate(&f->cfg, f->err, sizeof(f->err)), 0);

	unlink(link);
	rmdir(inner);
	rmdir(dir);
}

/* Issue 23: "clients = *" is everyone, said explicitly; an empty list is
 * an error (it used to mean everyone). */

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_config_validate_needs_a_datastore, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_config_validate_refuses_duplicate_fsid, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_config_validate_refuses_missing_path, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_config_validate_refuses_nested_datastores, setup,
			teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
