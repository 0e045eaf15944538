// SPDX-License-Identifier: Apache-2.0
/*
 * test_dsload_opts: dsload's command line (perf/dsload/opts.c): sizes,
 * lists, datastore names or counts, the three commands, and refusals
 * that name the bad option.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "perf/dsload/opts.h"

static int parse(struct dsload_opts *o, char *err, size_t errlen, ...)
{
	char *argv[32];
	int argc = 0;
	va_list ap;

	argv[argc++] = "dsload";
	va_start(ap, errlen);
	for (char *a; (a = va_arg(ap, char *));) {
		argv[argc++] = a;
	}
	va_end(ap);
	argv[argc] = NULL;
	return opts_parse(argc, argv, o, err, errlen);
}

static void test_opts_sizes(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(opts_size_parse("8k", &v), 0);
	assert_int_equal(v, 8192);
	assert_int_equal(opts_size_parse("64KiB", &v), 0);
	assert_int_equal(v, 65536);
	assert_int_equal(opts_size_parse("256m", &v), 0);
	assert_int_equal(v, 256u << 20);
	assert_int_equal(opts_size_parse("1G", &v), 0);
	assert_int_equal(v, 1u << 30);
	assert_int_equal(opts_size_parse("4096", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(opts_size_parse("8x", &v), -EINVAL);
	assert_int_equal(opts_size_parse("-1k", &v), -EINVAL);
	assert_int_equal(opts_size_parse("99999999999999999999k", &v), -EINVAL);
}

static void test_opts_lists(void **state)
{
	struct opts_list l;

	(void)state;
	assert_int_equal(opts_list_parse("1,2,4", 1, 8, &l), 0);
	assert_int_equal(l.n, 3);
	assert_int_equal(l.v[2], 4);
	assert_int_equal(opts_list_parse("0,1", 1, 8, &l), -EINVAL);
	assert_int_equal(opts_list_parse("1,,2", 1, 8, &l), 0);
	assert_int_equal(l.n, 2);
	assert_int_equal(opts_list_parse("", 1, 8, &l), -EINVAL);
	assert_int_equal(opts_list_parse("9", 1, 8, &l), -EINVAL);
}

static void test_opts_run_fleet_and_workload(void **state)
{
	struct dsload_opts *o = malloc(sizeof(*o));
	char err[256];

	(void)state;
	assert_int_equal(parse(o, err, sizeof(err), "-H", "3", "-D", "2",
			       "--vms", "4", "--vmdks", "2", "--bs", "64k",
			       "--read-pct", "0,100", "--stable", "unstable",
			       "--verify", "--placement", "per-vm", NULL),
			 0);
	assert_int_equal(o->cmd, DSLOAD_CMD_RUN);
	assert_int_equal(o->spec.hosts, 3);
	assert_int_equal(o->spec.ndatastores, 2);
	assert_string_equal(o->spec.datastores[1], "ds2");
	assert_int_equal(o->spec.vms, 4);
	assert_int_equal(o->spec.vmdks, 2);
	assert_int_equal(o->spec.policy, PLACE_PER_VM);
	assert_int_equal(o->w.bs_bytes, 65536);
	assert_int_equal(o->read_pcts.n, 2);
	assert_int_equal(o->w.stable, UNSTABLE);
	assert_true(o->w.verify);
	free(o);
}

static void test_opts_named_datastores_and_commands(void **state)
{
	struct dsload_opts *o = malloc(sizeof(*o));
	char err[256];

	(void)state;
	assert_int_equal(parse(o, err, sizeof(err), "sweep", "-D",
			       "gold,silver", "-H", "1,2", NULL),
			 0);
	assert_int_equal(o->cmd, DSLOAD_CMD_SWEEP);
	assert_true(o->datastores_named);
	assert_string_equal(o->spec.datastores[0], "gold");
	assert_int_equal(o->hosts.n, 2);
	assert_int_equal(parse(o, err, sizeof(err), "profile", "anf-avs",
			       "--runtime", "2", NULL),
			 0);
	assert_int_equal(o->cmd, DSLOAD_CMD_PROFILE);
	assert_string_equal(o->profile, "anf-avs");
	assert_true(o->runtime_set);
	assert_int_equal(parse(o, err, sizeof(err), "--profile", "x", NULL), 0);
	assert_int_equal(o->cmd, DSLOAD_CMD_PROFILE);
	free(o);
}

static void test_opts_refusals_name_the_option(void **state)
{
	struct dsload_opts *o = malloc(sizeof(*o));
	char err[256];

	(void)state;
	assert_int_equal(parse(o, err, sizeof(err), "--bs", "2m", NULL),
			 -EINVAL);
	assert_non_null(strstr(err, "'2m' for '--bs'"));
	assert_int_equal(parse(o, err, sizeof(err), "--frobnicate", NULL),
			 -EINVAL);
	assert_non_null(strstr(err, "--frobnicate"));
	assert_int_equal(parse(o, err, sizeof(err), "--read-pct", "101", NULL),
			 -EINVAL);
	assert_int_equal(parse(o, err, sizeof(err), "walk", NULL), -EINVAL);
	assert_non_null(strstr(err, "unknown command 'walk'"));
	assert_int_equal(parse(o, err, sizeof(err), "profile", NULL), -EINVAL);
	assert_int_equal(parse(o, err, sizeof(err), "-D", "a/b", NULL),
			 -EINVAL);
	free(o);
}

/* ESXi's rules at parse time: the limit and its setting in the error. */
static void test_opts_esxi_limits(void **state)
{
	struct dsload_opts *o = malloc(sizeof(*o));
	char err[300];

	(void)state;
	assert_int_equal(parse(o, err, sizeof(err), NULL), 0);
	assert_int_equal(o->spec.esxi.version, 8);
	assert_int_equal(o->spec.esxi.max_conn_per_ip, 32);
	assert_true(o->spec.esxi.hb_frequency_s == 12.0);
	assert_true(o->spec.esxi.lck_refresh_s == 10.0);
	assert_int_equal(parse(o, err, sizeof(err), "--nconnect", "4", NULL),
			 0);
	assert_int_equal(parse(o, err, sizeof(err), "--nconnect", "8", NULL),
			 -EINVAL);
	assert_non_null(strstr(err, "--max-connections-per-datastore 8"));
	assert_int_equal(parse(o, err, sizeof(err), "--nconnect", "8",
			       "--max-connections-per-datastore", "8", NULL),
			 0);
	assert_int_equal(parse(o, err, sizeof(err), "--esxi", "7", "--nconnect",
			       "2", NULL),
			 -EINVAL);
	assert_non_null(strstr(err, "ESXi 7 opens one connection"));
	/* sweep: the largest datastore count counts */
	assert_int_equal(parse(o, err, sizeof(err), "sweep", "-D", "1,64",
			       "--nconnect", "8",
			       "--max-connections-per-datastore", "8", NULL),
			 -EINVAL);
	assert_non_null(strstr(err, "256 NFSv3 connections"));
	assert_int_equal(parse(o, err, sizeof(err), "--max-conn-per-ip", "4",
			       "--esxi-timer-scale", "0.1", "--heartbeat", "6",
			       NULL),
			 0);
	assert_int_equal(o->spec.esxi.max_conn_per_ip, 4);
	assert_true(o->spec.esxi.timer_scale == 0.1);
	assert_true(o->spec.esxi.hb_frequency_s == 6.0);
	free(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opts_sizes),
		cmocka_unit_test(test_opts_lists),
		cmocka_unit_test(test_opts_run_fleet_and_workload),
		cmocka_unit_test(test_opts_named_datastores_and_commands),
		cmocka_unit_test(test_opts_refusals_name_the_option),
		cmocka_unit_test(test_opts_esxi_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
