// SPDX-License-Identifier: Apache-2.0
/*
 * test_dsload_profile: the profile file (perf/dsload/profile_file.c) and
 * the pass rule.  The shipped anf-avs.ini loads with the table of
 * docs/published.md section 1; a ratio passes inside its range or within
 * 15 % of its middle; files with unknown keys, bad values or dangling
 * baselines are refused with the reason.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "perf/dsload/profile.h"

static void test_profile_anf_avs_loads(void **state)
{
	struct profile *p = malloc(sizeof(*p));
	const struct profile_scenario *s;
	char err[256] = "";

	(void)state;
	assert_int_equal(
		profile_load("perf/profiles/anf-avs.ini", p, err, sizeof(err)),
		0);
	assert_string_equal(p->name, "anf-avs");
	assert_int_equal(p->n, 16);
	assert_true(p->verify);
	assert_int_equal(p->nfit, 5);
	assert_true(p->volume_mibps == 4500);
	assert_true(profile_find(p, "D2")->fitted);
	assert_false(profile_find(p, "M4")->fitted);
	assert_int_equal(profile_find(p, "M4")->nconnect, 2);
	assert_int_equal(profile_find(p, "V1")->nconnect, 1);
	s = profile_find(p, "V2");
	assert_non_null(s);
	assert_int_equal(s->vmdks, 2);
	assert_int_equal(s->datastores, 2);
	assert_int_equal(s->policy, PLACE_SPREAD);
	assert_int_equal(s->read_pcts.n, 3);
	assert_string_equal(s->baseline, "V1");
	assert_true(s->ratio_lo == 1.76 && s->ratio_hi == 1.76);
	s = profile_find(p, "H1");
	assert_true(s->ratio_lo == 1.03 && s->ratio_hi == 1.16);
	assert_int_equal(s->vms * s->vmdks, 16);
	s = profile_find(p, "S3");
	assert_true(s->mibps);
	assert_int_equal(s->bs_bytes, 65536);
	assert_int_equal(s->random_pct, 0);
	s = profile_find(p, "M4");
	assert_true(s->ceiling);
	assert_int_equal(s->policy, PLACE_PER_VM);
	assert_string_equal(s->baseline, "D1");
	/* ESXi 8's nConnect: claims, checked apart from the verdict */
	s = profile_find(p, "N1");
	assert_true(s->claim && !s->fitted && s->nconnect == 4);
	assert_string_equal(s->baseline, "D1");
	assert_true(s->ratio_lo == 2.63);
	s = profile_find(p, "N4");
	assert_true(s->claim && s->hosts == 4 && s->nconnect == 4);
	assert_true(s->ratio_lo == 6.97);
	assert_false(profile_find(p, "D4")->claim);
	assert_null(profile_find(p, "X9"));
	free(p);
}

static void test_profile_ratio_rule(void **state)
{
	(void)state;
	assert_true(profile_ratio_ok(1.76, 1.76, 1.76));
	assert_true(profile_ratio_ok(1.76 * 1.149, 1.76, 1.76));
	assert_false(profile_ratio_ok(1.76 * 1.151, 1.76, 1.76));
	assert_false(profile_ratio_ok(1.76 * 0.849, 1.76, 1.76));
	/* a range: inside, or within 15 % of its middle (1.095) */
	assert_true(profile_ratio_ok(1.16, 1.03, 1.16));
	assert_true(profile_ratio_ok(0.94, 1.03, 1.16));
	assert_false(profile_ratio_ok(0.92, 1.03, 1.16));
	assert_true(profile_ratio_ok(1.25, 1.03, 1.16));
	assert_false(profile_ratio_ok(1.27, 1.03, 1.16));
}

/* Writes @text to a temporary file; returns its path (static buffer). */
static const char *write_tmp(const char *text)
{
	static char path[64];
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "/tmp/test_dsload_profile.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	return path;
}

static void expect_refused(const char *text, const char *why)
{
	struct profile *p = malloc(sizeof(*p));
	const char *path = write_tmp(text);
	char err[256] = "";

	assert_int_equal(profile_load(path, p, err, sizeof(err)), -EINVAL);
	if (!strstr(err, why)) {
		fail_msg("error '%s' does not say '%s'", err, why);
	}
	unlink(path);
	free(p);
}

static void test_profile_refuses_bad_files(void **state)
{
	(void)state;
	expect_refused("[scenario A]\nhosts = 1\ncolour = red\n",
		       "colour = red");
	expect_refused("[scenario A]\nhosts = many\n", "hosts = many");
	expect_refused("[scenario A]\nplacement = random\n", "placement");
	expect_refused("[scenario A]\nratio = 2-1\nbaseline = A\n", "ratio");
	expect_refused("[scenario A]\nbaseline = B\nratio = 1\n",
		       "needs a baseline");
	expect_refused("[scenario A]\nbaseline = A\n", "needs a baseline");
	expect_refused("[profile]\nname = empty\n", "no [scenario");
	expect_refused("[other]\nx = 1\n", "[other] x = 1");
	expect_refused("[profile]\nfit = A\n[scenario B]\nbaseline = B\n"
		       "ratio = 1\n",
		       "fit names A");
	expect_refused("[profile]\nfit = A,B,C,D,E,F\n", "fit = A,B,C,D,E,F");
	expect_refused("[scenario A]\nnconnect = 0\n", "nconnect = 0");
}

static void test_profile_missing_file(void **state)
{
	struct profile *p = malloc(sizeof(*p));
	char err[256];

	(void)state;
	assert_int_equal(
		profile_load("/nonexistent/x.ini", p, err, sizeof(err)),
		-ENOENT);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profile_anf_avs_loads),
		cmocka_unit_test(test_profile_ratio_rule),
		cmocka_unit_test(test_profile_refuses_bad_files),
		cmocka_unit_test(test_profile_missing_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
