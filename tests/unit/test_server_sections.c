// SPDX-License-Identifier: Apache-2.0
/*
 * test_server_sections: the config keys the server's modules parse
 * themselves (nfsd/server/pools.c): [traffic], [pool NAME] and the pool
 * keys of [datastore NAME] reach their modules through the config's
 * section hook, their errors name the line, and a key no module takes is
 * still an unknown key.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nfsd/server/server.h"

struct fixture {
	struct config cfg;
	struct server_sections sections;
	char err[512];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f) {
		return -1;
	}
	config_defaults(&f->cfg);
	if (server_sections_init(&f->sections, &f->cfg)) {
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	server_sections_fini(&f->sections);
	free(f);
	return 0;
}

static int load(struct fixture *f, const char *text)
{
	f->err[0] = '\0';
	return config_load_string(&f->cfg, "t.conf", text, f->err,
				  sizeof(f->err));
}

static void test_sections_keys_reach_their_modules(void **state)
{
	struct fixture *f = *state;
	const struct pool_state *st;

	assert_int_equal(load(f, "[traffic]\n"
				 "scale = 0.5\n"
				 "flow_mibps = 100\n"
				 "[datastore ds1]\n"
				 "path = /x\n"
				 "pool = p\n"
				 "quota = 1TiB\n"
				 "[pool p]\n"
				 "level = ultra\n"
				 "size_tib = 2\n"),
			 0);
	assert_true(f->sections.caps.scale == 0.5);
	assert_int_equal(f->sections.caps.flow_bytes_per_s, 100 << 20);
	assert_string_equal(f->cfg.datastores[0].path, "/x");
	assert_int_equal(pool_config_finish(&f->sections.pools, &st, f->err,
					    sizeof(f->err)),
			 0);
	assert_int_equal(st->npools, 1);
	assert_int_equal(st->pools[0].level, POOL_LEVEL_ULTRA);
	assert_int_equal(st->nvolumes, 1);
	assert_string_equal(st->volumes[0].pool, "p");
	assert_int_equal(st->volumes[0].quota_bytes, POOL_TIB_BYTES);
}

static void test_sections_errors_name_the_line(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(load(f, "[datastore ds1]\npath = /x\nqouta = 1TiB\n"),
			 -EINVAL);
	assert_string_equal(f->err,
			    "t.conf:3: [datastore ds1]: unknown key 'qouta'");
	assert_int_equal(load(f, "[pool p]\nlevel = platinum\n"), -EINVAL);
	assert_string_equal(f->err, "t.conf:2: [pool p] level: level is "
				    "standard, premium, ultra or flexible");
	assert_int_equal(load(f, "\n[traffic]\nscale = -1\n"), -EINVAL);
	assert_true(!strncmp(f->err, "t.conf:3: [traffic] scale: ", 27));
	assert_non_null(strstr(f->err, "a number above 0"));
	assert_int_equal(load(f, "[pools]\nsize = 1\n"), -EINVAL);
	assert_string_equal(f->err, "t.conf:2: [pools]: unknown key 'size'");
}

/* A whole state that breaks a rule is refused once the file is read. */
static void test_sections_rules_are_checked_as_a_whole(void **state)
{
	struct fixture *f = *state;
	const struct pool_state *st;

	assert_int_equal(load(f, "[pool p]\nlevel = standard\nsize_tib = 1\n"
				 "[datastore a]\npath = /a\npool = p\n"
				 "quota = 1TiB\n"
				 "[datastore b]\npath = /b\npool = p\n"
				 "quota = 1TiB\n"),
			 0);
	assert_int_equal(pool_config_finish(&f->sections.pools, &st, f->err,
					    sizeof(f->err)),
			 -EINVAL);
	assert_non_null(strstr(f->err, "pool p"));
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_sections_keys_reach_their_modules),
		T(test_sections_errors_name_the_line),
		T(test_sections_rules_are_checked_as_a_whole),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
