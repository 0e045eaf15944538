// SPDX-License-Identifier: Apache-2.0
/*
 * test_dsload_server: how dsload profile starts its uncapped dsnfsd
 * (perf/dsload/server.h).  Its -e NAME=DIR datastores would get dsnfsd's
 * defaults (secure, squash = root), which refuse dsload (unprivileged
 * ports, uid 0), so the runner writes the server config's access keys of
 * each datastore to a file read with -c: exactly those keys, of exactly
 * the datastores it exports, and dsnfsd's own config loader, given the
 * same -e arguments, reads them into those datastores.
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

#include "nfsd/config/config.h"
#include "perf/dsload/server.h"

/* A config like etc/lab/anf-avs.conf: caps, a pool, access keys in and
 * out of the section that has the path, a datastore without a path. */
static const char base_text[] = "[traffic]\n"
				"scale = 0.5\n"
				"flow_iops = 1000\n"
				"[pool anf]\n"
				"level = ultra\n"
				"size_tib = 4\n"
				"; access: why, in a comment\n"
				"[datastore ds1]\n"
				"clients = 127.0.0.0/8, ::1\n"
				"squash = none\n"
				"path = /srv/ds1\n"
				"pool = anf\n"
				"quota = 1TiB\n"
				"  secure = false\n"
				"[datastore ds2]\n"
				"path = /srv/ds2\n"
				"[datastore ds10]\n"
				"backend = cephfs\n"
				"secure = false\n"
				"[datastore ds2]\n"
				"anonuid = 1000\n"
				"anongid=1000\n";

/* What the runner writes from base_text: ds10 has no path (no -e). */
static const char access_text[] = "[datastore ds1]\n"
				  "clients = 127.0.0.0/8, ::1\n"
				  "squash = none\n"
				  "secure = false\n"
				  "[datastore ds2]\n"
				  "[datastore ds2]\n"
				  "anonuid = 1000\n"
				  "anongid=1000\n";

struct fixture {
	char base[64], out[80];
	struct server_config cfg;
	struct config dcfg;
	char err[256];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	FILE *fp;
	int fd;

	assert_non_null(f);
	snprintf(f->base, sizeof(f->base), "/tmp/test_dsload_server.XXXXXX");
	fd = mkstemp(f->base);
	assert_true(fd >= 0);
	fp = fdopen(fd, "w");
	assert_non_null(fp);
	fputs(base_text, fp);
	assert_int_equal(fclose(fp), 0);
	snprintf(f->out, sizeof(f->out), "%s.access", f->base);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	unlink(f->base);
	unlink(f->out);
	free(f);
	return 0;
}

/* The file's text after its first line (a comment naming the base). */
static char *read_body(const char *path)
{
	static char buf[4096];
	FILE *fp = fopen(path, "r");
	size_t n;
	char *nl;

	assert_non_null(fp);
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	assert_true(buf[0] == ';');
	nl = strchr(buf, '\n');
	assert_non_null(nl);
	return nl + 1;
}

static void test_server_access_keys_only(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(
		server_config_read(f->base, &f->cfg, f->err, sizeof(f->err)),
		0);
	assert_int_equal(f->cfg.ndatastores, 2);
	assert_int_equal(server_access_write(f->base, &f->cfg, f->out, f->err,
					     sizeof(f->err)),
			 0);
	assert_string_equal(read_body(f->out), access_text);
}

/* dsnfsd -c OUT -e ds1=... -e ds2=...: the keys land on the -e datastores
 * (ds2, with none of its own, keeps the defaults). */
static void test_server_access_read_by_dsnfsd(void **state)
{
	struct fixture *f = *state;
	const struct config_datastore *ds1 = NULL, *ds2 = NULL;

	assert_int_equal(
		server_config_read(f->base, &f->cfg, f->err, sizeof(f->err)),
		0);
	assert_int_equal(server_access_write(f->base, &f->cfg, f->out, f->err,
					     sizeof(f->err)),
			 0);
	config_defaults(&f->dcfg);
	assert_int_equal(config_add_export_arg(&f->dcfg, "ds1=/srv/ds1", f->err,
					       sizeof(f->err)),
			 0);
	assert_int_equal(config_add_export_arg(&f->dcfg, "ds2=/srv/ds2", f->err,
					       sizeof(f->err)),
			 0);
	assert_int_equal(
		config_load_file(&f->dcfg, f->out, f->err, sizeof(f->err)), 0);
	assert_int_equal(f->dcfg.ndatastores, 2);
	for (size_t i = 0; i < f->dcfg.ndatastores; i++) {
		if (!strcmp(f->dcfg.datastores[i].name, "ds1")) {
			ds1 = &f->dcfg.datastores[i];
		} else if (!strcmp(f->dcfg.datastores[i].name, "ds2")) {
			ds2 = &f->dcfg.datastores[i];
		}
	}
	assert_non_null(ds1);
	assert_non_null(ds2);
	assert_false(ds1->secure);
	assert_int_equal(ds1->squash, EXPORT_SQUASH_NONE);
	assert_int_equal(ds1->nclients, 2);
	assert_false(ds1->clients_default);
	assert_true(ds2->secure);
	assert_int_equal(ds2->squash, EXPORT_SQUASH_ROOT);
	assert_true(ds2->clients_default);
	assert_int_equal(ds2->anon_uid, 1000);
}

/* The argv: the access file before the -e datastores it speaks of. */
static void test_server_argv_uncapped(void **state)
{
	struct fixture *f = *state;
	char storage[FLEET_DS_MAX][SERVER_EXPORT_ARG_MAX];
	const char *argv[SERVER_ARGV_UNCAPPED_MAX];
	static const char *const want[] = {
		"bin/dsnfsd",
		"-s",
		"out/state-ceiling",
		"-c",
		"out/dsnfsd-uncapped.conf",
		"-e",
		"ds1=/srv/ds1",
		"-e",
		"ds2=/srv/ds2",
	};
	size_t n = 0;

	assert_int_equal(
		server_config_read(f->base, &f->cfg, f->err, sizeof(f->err)),
		0);
	server_argv_uncapped(&f->cfg, "bin/dsnfsd", "out/state-ceiling",
			     "out/dsnfsd-uncapped.conf", storage, argv);
	for (; argv[n]; n++) {
		assert_true(n < sizeof(want) / sizeof(want[0]));
		assert_string_equal(argv[n], want[n]);
	}
	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
}

static void test_server_access_missing_base(void **state)
{
	struct fixture *f = *state;

	f->cfg.ndatastores = 0;
	assert_int_equal(server_access_write("/nonexistent/x.conf", &f->cfg,
					     f->out, f->err, sizeof(f->err)),
			 -ENOENT);
	assert_non_null(strstr(f->err, "/nonexistent/x.conf"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_server_access_keys_only,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_server_access_read_by_dsnfsd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_argv_uncapped,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_access_missing_base,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
