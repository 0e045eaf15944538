/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_config_fixture: the fixture of the config tests (test_config.c,
 * test_config_validate.c): a struct config with its defaults and an error
 * buffer, and a text loaded as "t.conf".  Include after <cmocka.h>.
 */
#ifndef DSNFS_TEST_CONFIG_FIXTURE_H
#define DSNFS_TEST_CONFIG_FIXTURE_H

#include <errno.h>
#include <stdlib.h>

#include "nfsd/config/config.h"

struct fixture {
	struct config cfg;
	char err[512];
};

static inline int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f) {
		return -1;
	}
	config_defaults(&f->cfg);
	*state = f;
	return 0;
}

static inline int teardown(void **state)
{
	free(*state);
	return 0;
}

/* Loads @text as "t.conf"; returns what config_load_string returned. */
static inline int load(struct fixture *f, const char *text)
{
	f->err[0] = '\0';
	return config_load_string(&f->cfg, "t.conf", text, f->err,
				  sizeof(f->err));
}

/* Asserts @text fails to load with exactly the message @want. */
static inline void assert_load_error(struct fixture *f, const char *text,
				     const char *want)
{
	assert_int_equal(load(f, text), -EINVAL);
	assert_string_equal(f->err, want);
}

#endif
