// SPDX-License-Identifier: Apache-2.0
/*
 * test_dsload_model: the traffic model of a profile (perf/dsload/model.c)
 * and its fit (profile_fit.c).  Shapes go through their VMs, flows,
 * hosts and volumes as the docs/pools.md model says; the fitter finds
 * known parameters again from their own figures; the shipped anf-avs fit
 * gives the values etc/lab/anf-avs.conf holds and the predictions the
 * docs print; the fitted config keeps everything but the caps.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "perf/dsload/model.h"
#include "perf/dsload/profile.h"

static void assert_within(double got, double want, double rel)
{
	if (!(fabs(got / want - 1) <= rel)) {
		fail_msg("%g is not within %g%% of %g", got, rel * 100, want);
	}
}

static struct model_shape shape(unsigned hosts, unsigned vms, unsigned vmdks,
				unsigned ds, enum place_policy policy,
				unsigned nconnect, uint32_t bs)
{
	struct model_shape s = {
		.place = { hosts, vms, vmdks, ds, policy },
		.nconnect = nconnect,
		.bs_bytes = bs,
		.mibps = bs >= 65536,
	};
	return s;
}

static double predict(const struct model_params *m, struct model_shape s,
		      unsigned *flows)
{
	double v;

	assert_int_equal(model_predict(m, &s, &v, flows), 0);
	return v;
}

static const struct model_params known = {
	.v = { [MODEL_FLOW_IOPS] = 10000,
	       [MODEL_FLOW_MIBPS] = 100,
	       [MODEL_CONTENTION] = 0.25,
	       [MODEL_HOST_MIBPS] = 150,
	       [MODEL_VM_IOPS] = 18000 },
	.volume_mibps = 200,
};

static void test_model_one_flow_is_its_cap_whatever_stands_behind(void **state)
{
	unsigned flows;

	(void)state;
	assert_within(
		predict(&known, shape(1, 1, 1, 1, PLACE_ONE, 1, 8192), &flows),
		10000, 1e-9);
	assert_int_equal(flows, 1);
	/* 16 VMDKs behind one flow: still one flow. */
	assert_within(
		predict(&known, shape(1, 4, 4, 1, PLACE_ONE, 1, 8192), &flows),
		10000, 1e-9);
	assert_int_equal(flows, 1);
	assert_within(
		predict(&known, shape(1, 1, 1, 1, PLACE_ONE, 1, 65536), NULL),
		100, 1e-9);
}

static void test_model_contention_host_nic_vm_and_volume(void **state)
{
	unsigned flows;

	(void)state;
	/* two flows of one host: 2 / 1.25 */
	assert_within(
		predict(&known, shape(1, 2, 1, 2, PLACE_SPREAD, 1, 8192), NULL),
		16000, 1e-9);
	/* one VM over 4 datastores: 4 / 1.75 x 10000 = 22857, its 18000
	 * (below the NIC's 19200 8K IOPS) */
	assert_within(predict(&known, shape(1, 1, 4, 4, PLACE_SPREAD, 1, 8192),
			      &flows),
		      18000, 1e-9);
	assert_int_equal(flows, 4);
	/* 64K, 4 flows of one host: 4 / 1.75 x 100 = 229, the NIC's 150 */
	assert_within(predict(&known, shape(1, 1, 4, 4, PLACE_SPREAD, 1, 65536),
			      NULL),
		      150, 1e-9);
	/* 4 hosts on one volume: contention 4 / 1.75, then its 200 */
	assert_within(
		predict(&known, shape(4, 1, 1, 1, PLACE_ONE, 1, 8192), NULL),
		40000 / 1.75, 1e-9);
	assert_within(
		predict(&known, shape(4, 1, 1, 1, PLACE_ONE, 1, 65536), NULL),
		200, 1e-9);
	/* 2 connections per host and volume: slowed once, by 1.25, not by
	 * both levels; 8 flows. */
	assert_within(predict(&known, shape(4, 1, 1, 4, PLACE_PER_VM, 2, 8192),
			      &flows),
		      80000 / 1.25, 1e-9);
	assert_int_equal(flows, 8);
}

static void test_model_refuses_empty_and_huge_shapes(void **state)
{
	double v;
	struct model_shape s = shape(1, 1, 1, 1, PLACE_ONE, 1, 8192);

	(void)state;
	s.place.vms = 0;
	assert_int_equal(model_predict(&known, &s, &v, NULL), -EINVAL);
	s = shape(64, 64, 64, 1, PLACE_ONE, 1, 8192);
	assert_int_equal(model_predict(&known, &s, &v, NULL), -EINVAL);
}

static void test_fit_finds_known_parameters_again(void **state)
{
	struct model_point pts[5] = {
		{ shape(1, 1, 1, 1, PLACE_ONE, 1, 8192), 0 },
		{ shape(1, 1, 1, 1, PLACE_ONE, 1, 65536), 0 },
		{ shape(1, 2, 1, 2, PLACE_SPREAD, 1, 8192), 0 },
		{ shape(1, 1, 8, 8, PLACE_SPREAD, 1, 65536), 0 },
		{ shape(1, 1, 8, 8, PLACE_SPREAD, 1, 8192), 0 },
	};
	struct model_params m = { .volume_mibps = known.volume_mibps };
	double rms;

	(void)state;
	for (int i = 0; i < 5; i++) {
		pts[i].target = predict(&known, pts[i].shape, NULL);
	}
	assert_int_equal(model_fit(pts, 5, &m, &rms), 0);
	assert_true(rms < 1e-6);
	for (int k = 0; k < MODEL_NPARAMS; k++) {
		assert_within(m.v[k], known.v[k], 1e-4);
	}
	assert_int_equal(model_fit(pts, 0, &m, NULL), -EINVAL);
	assert_int_equal(model_fit(pts, MODEL_FIT_MAX + 1, &m, NULL), -EINVAL);
	pts[0].target = 0;
	assert_int_equal(model_fit(pts, 5, &m, NULL), -EINVAL);
}

/* The value of @key in the [traffic] section of @path. */
static double conf_value(const char *path, const char *key)
{
	FILE *f = fopen(path, "r");
	char line[256], k[64];
	double v = NAN, x;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s = %lf", k, &x) == 2 && !strcmp(k, key)) {
			v = x;
		}
	}
	fclose(f);
	return v;
}

/* The model's figure of the profile's scenario @id. */
static double fig(const struct profile *p, const struct model_params *m,
		  const char *id)
{
	const struct profile_scenario *sc = profile_find(p, id);
	struct model_shape s;

	assert_non_null(sc);
	profile_model_shape(sc, &s);
	return predict(m, s, NULL);
}

static void test_anf_avs_fit_and_its_predictions(void **state)
{
	struct profile *p = malloc(sizeof(*p));
	struct model_params m;
	char err[256] = "";
	double rms, d1, s1, v1;

	(void)state;
	assert_non_null(p);
	assert_int_equal(
		profile_load("perf/profiles/anf-avs.ini", p, err, sizeof(err)),
		0);
	assert_int_equal(profile_fit(p, &m, &rms, err, sizeof(err)), 0);
	assert_true(rms < 1e-3);
	assert_within(m.v[MODEL_FLOW_IOPS], 76000, 1e-3);
	assert_within(m.v[MODEL_FLOW_MIBPS], 2148, 1e-3);
	assert_within(m.v[MODEL_CONTENTION], 2 / 1.76 - 1, 1e-3);
	assert_within(m.v[MODEL_HOST_MIBPS], 2786, 1e-3);
	assert_within(m.v[MODEL_VM_IOPS], 147000, 1e-3);
	/* etc/lab/anf-avs.conf carries the same fit (by hand: lab 5). */
	assert_within(conf_value("etc/lab/anf-avs.conf", "flow_iops"),
		      m.v[MODEL_FLOW_IOPS], 0.005);
	assert_within(conf_value("etc/lab/anf-avs.conf", "flow_mibps"),
		      m.v[MODEL_FLOW_MIBPS], 0.005);
	assert_within(conf_value("etc/lab/anf-avs.conf", "host_mibps"),
		      m.v[MODEL_HOST_MIBPS], 0.005);
	assert_within(conf_value("etc/lab/anf-avs.conf", "host_contention"),
		      m.v[MODEL_CONTENTION], 0.005);
	assert_within(conf_value("etc/lab/anf-avs.conf", "volume_contention"),
		      m.v[MODEL_CONTENTION], 0.005);

	/* The predictions docs/pools.md prints, as ratios. */
	v1 = fig(p, &m, "V1");
	d1 = fig(p, &m, "D1");
	s1 = fig(p, &m, "S1");
	assert_within(fig(p, &m, "V2") / v1, 1.76, 0.005);
	assert_within(fig(p, &m, "H1") / v1, 1.00, 0.005);
	assert_within(fig(p, &m, "S2") / s1, 1.00, 0.005);
	assert_within(fig(p, &m, "D4") / d1, 4 / (1 + 3 * (2 / 1.76 - 1)),
		      0.005);
	assert_within(fig(p, &m, "M1") / s1, 4500.0 / 2148, 0.005);
	assert_within(fig(p, &m, "M2") / d1, 4 / (1 + 3 * (2 / 1.76 - 1)),
		      0.005);
	assert_within(fig(p, &m, "M3") / s1, 4 * 2786.0 / 2148, 0.005);
	assert_within(fig(p, &m, "M4") / d1, 4 * 1.76, 0.005);
	/* nConnect, predicted before any run: one host's four connections
	 * to one datastore are four flows, as D4's four datastores (the
	 * claim holds: 2.84 against 2.63, +7.9%); four hosts' sixteen on
	 * one volume contend there (5.25 against M4's 6.97: the model says
	 * the claim does not carry to four hosts on one datastore) */
	assert_within(fig(p, &m, "N1") / d1, fig(p, &m, "D4") / d1, 0.001);
	assert_within(fig(p, &m, "N4") / d1, 16 / (1 + 15 * (2 / 1.76 - 1)),
		      0.005);
	assert_true(profile_ratio_ok(fig(p, &m, "N1") / d1, 2.63, 2.63));
	assert_false(profile_ratio_ok(fig(p, &m, "N4") / d1, 6.97, 6.97));
	free(p);
}

static void test_fitted_config_replaces_only_the_caps(void **state)
{
	char in[] = "/tmp/test_dsload_model.in.XXXXXX";
	char out[] = "/tmp/test_dsload_model.out.XXXXXX";
	struct model_params m = known;
	char err[256], buf[4096];
	FILE *f;
	size_t n;
	int fd;

	(void)state;
	fd = mkstemp(in);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs("[server]\nworkers = 2\n\n[traffic]\nscale = 0.5\n"
	      "host_iops = 9\nburst_ms = 20\n\n[datastore ds1]\npath = x\n",
	      f);
	fclose(f);
	fd = mkstemp(out);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(
		profile_config_write(in, out, &m, 0.01, err, sizeof(err)), 0);
	assert_within(conf_value(out, "scale"), 0.01, 1e-9);
	assert_within(conf_value(out, "flow_iops"), 10000, 1e-9);
	assert_within(conf_value(out, "volume_contention"), 0.25, 1e-9);
	assert_within(conf_value(out, "burst_ms"), 20, 1e-9);
	assert_true(isnan(conf_value(out, "host_iops")));
	f = fopen(out, "r");
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	assert_non_null(strstr(buf, "[server]\nworkers = 2\n"));
	assert_non_null(strstr(buf, "[datastore ds1]\npath = x\n"));
	assert_int_equal(profile_config_write("/nonexistent/x.conf", out, &m, 1,
					      err, sizeof(err)),
			 -ENOENT);
	unlink(in);
	unlink(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			test_model_one_flow_is_its_cap_whatever_stands_behind),
		cmocka_unit_test(test_model_contention_host_nic_vm_and_volume),
		cmocka_unit_test(test_model_refuses_empty_and_huge_shapes),
		cmocka_unit_test(test_fit_finds_known_parameters_again),
		cmocka_unit_test(test_anf_avs_fit_and_its_predictions),
		cmocka_unit_test(test_fitted_config_replaces_only_the_caps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
