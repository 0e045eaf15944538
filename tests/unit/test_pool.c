// SPDX-License-Identifier: Apache-2.0
/*
 * test_pool: service levels, the QoS rules and their refusals, and the
 * registry's checked, atomic operations (nfsd/pool/pool.h).
 */
#include "nfsd/pool/pool.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define MIB POOL_MIB_BYTES
#define GIB (UINT64_C(1) << 30)
#define TIB POOL_TIB_BYTES

struct fixture {
	struct pool_registry *reg;
	struct pool_limits limits;
	char err[256];
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	assert_int_equal(pool_registry_new(NULL, NULL, &fx->reg), 0);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	pool_registry_free(fx->reg);
	free(fx);
	return 0;
}

static struct pool pool_spec(const char *name, enum pool_level level,
			     uint32_t size_tib, enum pool_qos qos)
{
	struct pool p;

	memset(&p, 0, sizeof(p));
	strcpy(p.name, name);
	p.level = level;
	p.size_tib = size_tib;
	p.qos = qos;
	return p;
}

static struct pool_volume volume_spec(const char *name, const char *pool,
				      uint64_t quota, uint32_t manual)
{
	struct pool_volume v;

	memset(&v, 0, sizeof(v));
	strcpy(v.name, name);
	strcpy(v.pool, pool);
	v.quota_bytes = quota;
	v.manual_mibps = manual;
	return v;
}

static const struct pool_limit_volume *limit_of(const struct pool_limits *l,
						const char *name)
{
	for (size_t i = 0; i < l->nvolumes; i++) {
		if (!strcmp(l->volumes[i].name, name)) {
			return &l->volumes[i];
		}
	}
	return NULL;
}

static void add_pool(struct fixture *fx, const char *name,
		     enum pool_level level, uint32_t size_tib,
		     enum pool_qos qos)
{
	struct pool p = pool_spec(name, level, size_tib, qos);

	assert_int_equal(pool_registry_pool_create(fx->reg, &p, &fx->limits,
						   fx->err, sizeof(fx->err)),
			 0);
}

static void add_volume(struct fixture *fx, const char *name, const char *pool,
		       uint64_t quota, uint32_t manual)
{
	struct pool_volume v = volume_spec(name, pool, quota, manual);

	assert_int_equal(pool_registry_volume_create(fx->reg, &v, &fx->limits,
						     fx->err, sizeof(fx->err)),
			 0);
}

static void test_levels_give_published_throughput(void **state)
{
	struct pool std = pool_spec("s", POOL_LEVEL_STANDARD, 10, 0);
	struct pool prem = pool_spec("p", POOL_LEVEL_PREMIUM, 10, 0);
	struct pool ultra = pool_spec("u", POOL_LEVEL_ULTRA, 10, 0);
	struct pool flex = pool_spec("f", POOL_LEVEL_FLEXIBLE, 1, 1);
	enum pool_level lvl;

	(void)state;
	assert_int_equal(pool_throughput_mibps(&std), 160);
	assert_int_equal(pool_throughput_mibps(&prem), 640);
	assert_int_equal(pool_throughput_mibps(&ultra), 1280);
	assert_int_equal(pool_throughput_mibps(&flex), 128);
	flex.purchased_mibps = 512;
	assert_int_equal(pool_throughput_mibps(&flex), 640);
	assert_int_equal(pool_level_parse("uLtRa", &lvl), 0);
	assert_int_equal(lvl, POOL_LEVEL_ULTRA);
	assert_int_equal(pool_level_parse("gold", &lvl), -EINVAL);
	assert_string_equal(pool_level_name(POOL_LEVEL_FLEXIBLE), "Flexible");
}

static void test_auto_limit_is_quota_times_level_prorated(void **state)
{
	struct pool prem = pool_spec("p", POOL_LEVEL_PREMIUM, 100, 0);
	struct pool ultra = pool_spec("u", POOL_LEVEL_ULTRA, 100, 0);
	struct pool std = pool_spec("s", POOL_LEVEL_STANDARD, 200, 0);
	struct pool_volume v = volume_spec("v", "p", 2 * TIB, 0);

	(void)state;
	/* ANF example 1: 2 TiB at Premium = 128 MiB/s. */
	assert_int_equal(pool_volume_limit_bytes_per_s(&prem, &v), 128 * MIB);
	/* ANF example 2: 100 GiB at Premium = 6.25 MiB/s. */
	v.quota_bytes = 100 * GIB;
	assert_int_equal(pool_volume_limit_bytes_per_s(&prem, &v),
			 625 * MIB / 100);
	/* 1.5 TiB at Ultra = 192 MiB/s. */
	v.quota_bytes = 3 * TIB / 2;
	assert_int_equal(pool_volume_limit_bytes_per_s(&ultra, &v), 192 * MIB);
	/* 50 TiB at Ultra would be 6,400: the regular volume cap is 4,500. */
	v.quota_bytes = 50 * TIB;
	assert_int_equal(pool_volume_limit_bytes_per_s(&ultra, &v), 4500 * MIB);
	/* 101 TiB at Standard would be 1,616: Standard's cap is 1,600. */
	v.quota_bytes = 100 * TIB + 1 * TIB;
	assert_int_equal(pool_volume_limit_bytes_per_s(&std, &v), 1600 * MIB);
}

static void test_check_refuses_with_the_rule(void **state)
{
	struct pool_state *st = calloc(1, sizeof(*st));
	char err[256];

	(void)state;
	assert_non_null(st);
	st->npools = 1;
	st->pools[0] = pool_spec("p1", POOL_LEVEL_PREMIUM, 0, 0);
	assert_int_equal(pool_state_check(st, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "pool p1: size 0 TiB is below the 1 TiB "
				 "minimum");

	st->pools[0].size_tib = 4;
	st->nvolumes = 2;
	st->volumes[0] = volume_spec("a", "p1", 3 * TIB, 0);
	st->volumes[1] = volume_spec("b", "p1", 2 * TIB, 0);
	assert_int_equal(pool_state_check(st, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "pool p1: volume quotas sum to 5 TiB, more "
				 "than the pool's 4 TiB");

	st->volumes[1].quota_bytes = 512 * GIB;
	assert_int_equal(pool_state_check(st, err, sizeof(err)), 0);
	st->volumes[1].manual_mibps = 10;
	assert_int_equal(pool_state_check(st, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "a throughput limit is set only in "
				    "manual QoS pools"));

	st->pools[0].qos = POOL_QOS_MANUAL;
	st->volumes[0].manual_mibps = 200;
	st->volumes[1].manual_mibps = 100;
	/* 4 TiB Premium = 256 MiB/s; 300 do not fit. */
	assert_int_equal(pool_state_check(st, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "pool p1: manual volume limits sum to 300 "
				 "MiB/s, more than the pool's 256 MiB/s");

	st->volumes[1].manual_mibps = 0;
	assert_int_equal(pool_state_check(st, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "needs a throughput limit of at least"));

	st->volumes[1].manual_mibps = 56;
	assert_int_equal(pool_state_check(st, err, sizeof(err)), 0);

	st->volumes[1].pool[0] = 'x';
	assert_int_equal(pool_state_check(st, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "volume b: pool 'x1' does not exist");
	free(st);
}

static void test_check_volume_caps(void **state)
{
	struct pool_state *st = calloc(1, sizeof(*st));
	char err[256];

	(void)state;
	assert_non_null(st);
	st->npools = 1;
	st->pools[0] = pool_spec("big", POOL_LEVEL_ULTRA, 100, POOL_QOS_MANUAL);
	st->nvolumes = 1;
	st->volumes[0] = volume_spec("v", "big", 10 * TIB, 4501);
	assert_int_equal(pool_state_check(st, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "volume v: 4501 MiB/s is above the 4500 "
				 "MiB/s regular volume cap at Ultra");
	st->volumes[0].manual_mibps = 4500;
	assert_int_equal(pool_state_check(st, err, sizeof(err)), 0);

	st->pools[0].level = POOL_LEVEL_STANDARD;
	st->volumes[0].manual_mibps = 1601;
	assert_int_equal(pool_state_check(st, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "1600 MiB/s regular volume cap at "
				    "Standard"));

	st->volumes[0].manual_mibps = 100;
	st->volumes[0].quota_bytes = 100 * TIB + 1;
	assert_int_equal(pool_state_check(st, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "volume v: quota 109951162777601 bytes is "
				 "above the 100 TiB regular volume maximum");
	free(st);
}

static void test_check_flexible_rules(void **state)
{
	struct pool_state *st = calloc(1, sizeof(*st));
	char err[256];

	(void)state;
	assert_non_null(st);
	st->npools = 1;
	st->pools[0] = pool_spec("f", POOL_LEVEL_FLEXIBLE, 2, POOL_QOS_AUTO);
	assert_int_equal(pool_state_check(st, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "pool f: the Flexible service level needs "
				 "manual QoS");
	st->pools[0].qos = POOL_QOS_MANUAL;
	/* 2 TiB: at most 1,280 MiB/s in all, 128 of them the baseline. */
	st->pools[0].purchased_mibps = 1152;
	assert_int_equal(pool_state_check(st, err, sizeof(err)), 0);
	st->pools[0].purchased_mibps = 1153;
	assert_int_equal(pool_state_check(st, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "pool f: Flexible throughput 128 + 1153 "
				 "MiB/s is above 640 MiB/s per TiB x 2 TiB = "
				 "1280 MiB/s");
	st->pools[0].level = POOL_LEVEL_ULTRA;
	assert_int_equal(pool_state_check(st, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "pool f: purchased throughput is for "
				 "Flexible pools only, not Ultra");
	free(st);
}

static void test_registry_refusal_changes_nothing(void **state)
{
	struct fixture *fx = *state;
	struct pool_state *before = calloc(1, sizeof(*before));
	struct pool_state *after = calloc(1, sizeof(*after));

	assert_non_null(before);
	assert_non_null(after);
	add_pool(fx, "p1", POOL_LEVEL_PREMIUM, 4, POOL_QOS_AUTO);
	add_volume(fx, "ds1", "p1", 3 * TIB, 0);
	pool_registry_snapshot(fx->reg, before);

	assert_int_equal(pool_registry_pool_resize(fx->reg, "p1", 2, NULL,
						   fx->err, sizeof(fx->err)),
			 -EINVAL);
	assert_string_equal(fx->err, "pool p1: volume quotas sum to 3 TiB, "
				     "more than the pool's 2 TiB");
	assert_int_equal(pool_registry_volume_resize(fx->reg, "ds1", 5 * TIB,
						     NULL, fx->err,
						     sizeof(fx->err)),
			 -EINVAL);
	assert_int_equal(pool_registry_pool_delete(fx->reg, "p1", NULL, fx->err,
						   sizeof(fx->err)),
			 -EINVAL);
	assert_string_equal(fx->err, "pool p1: still holds 1 volume(s); "
				     "delete or move them first");
	assert_int_equal(pool_registry_pool_resize(fx->reg, "nope", 2, NULL,
						   fx->err, sizeof(fx->err)),
			 -ENOENT);
	assert_int_equal(pool_registry_volume_set_limit(fx->reg, "ds1", 10,
							NULL, fx->err,
							sizeof(fx->err)),
			 -EINVAL);
	pool_registry_snapshot(fx->reg, after);
	assert_memory_equal(before, after, sizeof(*before));
	free(before);
	free(after);
}

static void test_registry_ops_return_new_limits(void **state)
{
	struct fixture *fx = *state;
	struct pool p = pool_spec("p1", POOL_LEVEL_PREMIUM, 4, 0);

	add_pool(fx, "p1", POOL_LEVEL_PREMIUM, 8, POOL_QOS_AUTO);
	assert_int_equal(pool_registry_pool_create(fx->reg, &p, NULL, fx->err,
						   sizeof(fx->err)),
			 -EEXIST);
	add_volume(fx, "ds1", "p1", 2 * TIB, 0);
	assert_int_equal(limit_of(&fx->limits, "ds1")->limit_bytes_per_s,
			 128 * MIB);
	assert_int_equal(fx->limits.npools, 1);
	assert_int_equal(fx->limits.pools[0].throughput_bytes_per_s, 512 * MIB);

	assert_int_equal(pool_registry_volume_resize(fx->reg, "ds1", 4 * TIB,
						     &fx->limits, fx->err,
						     sizeof(fx->err)),
			 0);
	assert_int_equal(limit_of(&fx->limits, "ds1")->limit_bytes_per_s,
			 256 * MIB);
	assert_int_equal(limit_of(&fx->limits, "ds1")->quota_bytes, 4 * TIB);

	assert_int_equal(pool_registry_pool_set_level(
				 fx->reg, "p1", POOL_LEVEL_ULTRA, &fx->limits,
				 fx->err, sizeof(fx->err)),
			 0);
	assert_int_equal(limit_of(&fx->limits, "ds1")->limit_bytes_per_s,
			 512 * MIB);

	/* Move to a manual Ultra pool keeping the current limit. */
	add_pool(fx, "u1", POOL_LEVEL_ULTRA, 4, POOL_QOS_MANUAL);
	assert_int_equal(pool_registry_volume_move(fx->reg, "ds1", "u1", 0,
						   &fx->limits, fx->err,
						   sizeof(fx->err)),
			 0);
	assert_string_equal(limit_of(&fx->limits, "ds1")->pool, "u1");
	assert_int_equal(limit_of(&fx->limits, "ds1")->limit_bytes_per_s,
			 512 * MIB);
	assert_int_equal(pool_registry_volume_set_limit(fx->reg, "ds1", 100,
							&fx->limits, fx->err,
							sizeof(fx->err)),
			 0);
	assert_int_equal(limit_of(&fx->limits, "ds1")->limit_bytes_per_s,
			 100 * MIB);
	/* 4 TiB Ultra = 512 MiB/s: 513 breaks the pool sum. */
	assert_int_equal(pool_registry_volume_set_limit(fx->reg, "ds1", 513,
							NULL, fx->err,
							sizeof(fx->err)),
			 -EINVAL);
	assert_non_null(strstr(fx->err, "manual volume limits sum to 513"));

	assert_int_equal(pool_registry_volume_delete(fx->reg, "ds1",
						     &fx->limits, fx->err,
						     sizeof(fx->err)),
			 0);
	assert_int_equal(fx->limits.nvolumes, 0);
	assert_int_equal(pool_registry_pool_delete(fx->reg, "u1", &fx->limits,
						   fx->err, sizeof(fx->err)),
			 0);
	assert_int_equal(fx->limits.npools, 1);
}

static void test_registry_auto_to_manual_keeps_limits(void **state)
{
	struct fixture *fx = *state;

	add_pool(fx, "p1", POOL_LEVEL_STANDARD, 4, POOL_QOS_AUTO);
	add_volume(fx, "a", "p1", 100 * GIB, 0); /* 1.5625 MiB/s */
	add_volume(fx, "b", "p1", 3 * TIB, 0); /* 48 MiB/s */
	assert_int_equal(pool_registry_pool_set_qos(
				 fx->reg, "p1", POOL_QOS_MANUAL, &fx->limits,
				 fx->err, sizeof(fx->err)),
			 0);
	assert_int_equal(limit_of(&fx->limits, "a")->limit_bytes_per_s,
			 1 * MIB);
	assert_int_equal(limit_of(&fx->limits, "b")->limit_bytes_per_s,
			 48 * MIB);
	assert_int_equal(pool_registry_pool_set_qos(fx->reg, "p1",
						    POOL_QOS_AUTO, NULL,
						    fx->err, sizeof(fx->err)),
			 -EINVAL);
	assert_string_equal(fx->err, "pool p1: QoS changes only from auto to "
				     "manual");
}

static void test_registry_flexible_throughput(void **state)
{
	struct fixture *fx = *state;

	add_pool(fx, "f", POOL_LEVEL_FLEXIBLE, 1, POOL_QOS_MANUAL);
	add_volume(fx, "v", "f", 500 * GIB, 128);
	assert_int_equal(pool_registry_volume_set_limit(fx->reg, "v", 129, NULL,
							fx->err,
							sizeof(fx->err)),
			 -EINVAL);
	assert_int_equal(pool_registry_pool_set_throughput(fx->reg, "f", 512,
							   &fx->limits, fx->err,
							   sizeof(fx->err)),
			 0);
	assert_int_equal(fx->limits.pools[0].throughput_bytes_per_s, 640 * MIB);
	assert_int_equal(pool_registry_volume_set_limit(fx->reg, "v", 640,
							&fx->limits, fx->err,
							sizeof(fx->err)),
			 0);
	assert_int_equal(pool_registry_pool_set_throughput(fx->reg, "f", 513,
							   NULL, fx->err,
							   sizeof(fx->err)),
			 -EINVAL);
	/* Shrinking the purchase below the volumes' limits is refused. */
	assert_int_equal(pool_registry_pool_set_throughput(fx->reg, "f", 0,
							   NULL, fx->err,
							   sizeof(fx->err)),
			 -EINVAL);
	assert_non_null(strstr(fx->err, "manual volume limits sum to 640"));
}

static void test_config_builds_state(void **state)
{
	struct pool_config cfg;
	const struct pool_state *st;
	char err[256];

	(void)state;
	assert_int_equal(pool_config_init(&cfg), 0);
	assert_int_equal(pool_config_section(&cfg, "datastore ds1", "pool",
					     "anf", err, sizeof(err)),
			 0);
	assert_int_equal(pool_config_section(&cfg, "datastore ds1", "quota",
					     "20TiB", err, sizeof(err)),
			 0);
	assert_int_equal(pool_config_section(&cfg, "datastore ds1", "path",
					     "/srv/ds1", err, sizeof(err)),
			 -ENOENT);
	assert_int_equal(pool_config_section(&cfg, "server", "workers", "2",
					     err, sizeof(err)),
			 -ENOENT);
	assert_int_equal(pool_config_section(&cfg, "pool anf", "level", "ultra",
					     err, sizeof(err)),
			 0);
	assert_int_equal(pool_config_section(&cfg, "pool anf", "size_tib", "80",
					     err, sizeof(err)),
			 0);
	assert_int_equal(pool_config_section(&cfg, "pool anf", "colour", "red",
					     err, sizeof(err)),
			 -ENOENT);
	assert_int_equal(pool_config_section(&cfg, "pool anf", "level", "gold",
					     err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "level is standard, premium, ultra or "
				 "flexible");
	assert_int_equal(pool_config_section(&cfg, "pool anf", "level", "Ultra",
					     err, sizeof(err)),
			 0);
	assert_int_equal(pool_config_finish(&cfg, &st, err, sizeof(err)), 0);
	assert_int_equal(st->npools, 1);
	assert_int_equal(st->pools[0].size_tib, 80);
	assert_int_equal(st->volumes[0].quota_bytes, 20 * TIB);

	/* A quota that does not fit is refused with the rule. */
	assert_int_equal(pool_config_section(&cfg, "datastore ds2", "pool",
					     "anf", err, sizeof(err)),
			 0);
	assert_int_equal(pool_config_section(&cfg, "datastore ds2", "quota",
					     "61TiB", err, sizeof(err)),
			 0);
	assert_int_equal(pool_config_finish(&cfg, &st, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "pool anf: volume quotas sum to 81 TiB, more "
				 "than the pool's 80 TiB");
	pool_config_fini(&cfg);
}

static void test_config_needs_pool_and_quota(void **state)
{
	struct pool_config cfg;
	const struct pool_state *st;
	char err[256];

	(void)state;
	assert_int_equal(pool_config_init(&cfg), 0);
	assert_int_equal(pool_config_section(&cfg, "datastore ds1", "quota",
					     "1TiB", err, sizeof(err)),
			 0);
	assert_int_equal(pool_config_finish(&cfg, &st, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "[datastore ds1]: a pooled datastore needs "
				 "both pool and quota");
	pool_config_fini(&cfg);

	assert_int_equal(pool_config_init(&cfg), 0);
	assert_int_equal(pool_config_section(&cfg, "pool f", "level",
					     "flexible", err, sizeof(err)),
			 0);
	assert_int_equal(pool_config_section(&cfg, "pool f", "size_tib", "2",
					     err, sizeof(err)),
			 0);
	assert_int_equal(pool_config_finish(&cfg, &st, err, sizeof(err)), 0);
	/* Flexible defaults to manual QoS, the only kind it supports. */
	assert_int_equal(st->pools[0].qos, POOL_QOS_MANUAL);
	pool_config_fini(&cfg);
}

static void test_size_parse(void **state)
{
	uint64_t b;

	(void)state;
	assert_int_equal(pool_size_parse("4TiB", &b), 0);
	assert_int_equal(b, 4 * TIB);
	assert_int_equal(pool_size_parse("500 GiB", &b), 0);
	assert_int_equal(b, 500 * GIB);
	assert_int_equal(pool_size_parse("64m", &b), 0);
	assert_int_equal(b, 64 * MIB);
	assert_int_equal(pool_size_parse("1048576", &b), 0);
	assert_int_equal(b, MIB);
	assert_int_equal(pool_size_parse("0", &b), -EINVAL);
	assert_int_equal(pool_size_parse("-1G", &b), -EINVAL);
	assert_int_equal(pool_size_parse("4PB", &b), -EINVAL);
	assert_int_equal(pool_size_parse("99999999999999999TiB", &b), -ERANGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_levels_give_published_throughput),
		cmocka_unit_test(test_auto_limit_is_quota_times_level_prorated),
		cmocka_unit_test(test_check_refuses_with_the_rule),
		cmocka_unit_test(test_check_volume_caps),
		cmocka_unit_test(test_check_flexible_rules),
		cmocka_unit_test_setup_teardown(
			test_registry_refusal_changes_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_registry_ops_return_new_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_registry_auto_to_manual_keeps_limits, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_registry_flexible_throughput, setup, teardown),
		cmocka_unit_test(test_config_builds_state),
		cmocka_unit_test(test_config_needs_pool_and_quota),
		cmocka_unit_test(test_size_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
