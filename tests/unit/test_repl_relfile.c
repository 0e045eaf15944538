// SPDX-License-Identifier: Apache-2.0
/*
 * test_repl_relfile: relations made through the API kept in the state
 * directory (nfsd/repl/relfile.c): written and read back whole, 0600,
 * through a temporary file; a file cut short, changed by hand past the
 * config's rules, too open or without its key is refused at the restore
 * with one log line, and the others still restored.
 */
#include "nfsd/repl/relfile.h"

#include <errno.h>
#include <fcntl.h>
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

#include "tests/lib/log_capture.h"

#define KEY "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define PEM "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

struct fx {
	char dir[64];
	char path[256];
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/test_relfile.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	log_capture_reset();
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static const char *fx_path(struct fx *f, const char *name)
{
	snprintf(f->path, sizeof(f->path), "%s/%s", f->dir, name);
	return f->path;
}

static void fx_write(struct fx *f, const char *name, const char *text,
		     mode_t mode)
{
	int fd = open(fx_path(f, name), O_WRONLY | O_CREAT | O_TRUNC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static mode_t fx_mode(struct fx *f, const char *name)
{
	struct stat sb;

	assert_int_equal(stat(fx_path(f, name), &sb), 0);
	return sb.st_mode & 0777;
}

/* Relation @name, a source with every key set, kept in @f. */
static void fx_save(struct fx *f, const char *name, const char *ca)
{
	struct repl_rel_config c = { .role = REPL_ROLE_SOURCE,
				     .schedule = REPL_SCHED_10MIN,
				     .schedule_seconds = 7,
				     .timeout_s = 45 };
	char err[512];

	snprintf(c.name, sizeof(c.name), "%s", name);
	snprintf(c.datastore, sizeof(c.datastore), "ds1");
	snprintf(c.url, sizeof(c.url), "https://b.example:8049");
	snprintf(c.dst_datastore, sizeof(c.dst_datastore), "dsr");
	snprintf(c.src_url, sizeof(c.src_url), "http://a:8049");
	snprintf(c.src_datastore, sizeof(c.src_datastore), "ds0");
	assert_int_equal(repl_relfile_secrets_save(f->dir, &c, KEY, ca, err,
						   sizeof(err)),
			 0);
	assert_int_equal(repl_relfile_save(f->dir, &c, err, sizeof(err)), 0);
}

static void test_round_trip(void **state)
{
	struct fx *f = *state;
	struct repl_rel_config c;
	char err[512], want[300];

	fx_save(f, "r1", PEM);
	assert_int_equal(repl_relfile_load(f->dir, "r1", &c, err, sizeof(err)),
			 0);
	assert_string_equal(c.name, "r1");
	assert_int_equal(c.role, REPL_ROLE_SOURCE);
	assert_string_equal(c.datastore, "ds1");
	assert_string_equal(c.url, "https://b.example:8049");
	assert_string_equal(c.dst_datastore, "dsr");
	assert_string_equal(c.src_url, "http://a:8049");
	assert_string_equal(c.src_datastore, "ds0");
	assert_int_equal(c.schedule, REPL_SCHED_10MIN);
	assert_int_equal(c.schedule_seconds, 7);
	assert_int_equal(c.timeout_s, 45);
	snprintf(want, sizeof(want), "%s/repl-r1.key", f->dir);
	assert_string_equal(c.key_file, want);
	snprintf(want, sizeof(want), "%s/repl-r1.ca", f->dir);
	assert_string_equal(c.ca_file, want);
	/* Without a CA: none read back. */
	fx_save(f, "r2", NULL);
	assert_int_equal(repl_relfile_load(f->dir, "r2", &c, err, sizeof(err)),
			 0);
	assert_string_equal(c.ca_file, "");
	assert_int_equal(access(fx_path(f, "repl-r2.ca"), F_OK), -1);
}

static void test_files_are_0600_and_the_key_apart(void **state)
{
	struct fx *f = *state;
	char buf[4096];
	FILE *fp;
	size_t n;

	fx_save(f, "r1", PEM);
	assert_int_equal(fx_mode(f, "repl-r1.relation"), 0600);
	assert_int_equal(fx_mode(f, "repl-r1.key"), 0600);
	assert_int_equal(fx_mode(f, "repl-r1.ca"), 0600);
	fp = fopen(fx_path(f, "repl-r1.relation"), "r");
	assert_non_null(fp);
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	assert_null(strstr(buf, KEY));
	assert_null(strstr(buf, "key_file"));
	assert_non_null(strstr(buf, "\nend\n"));
}

static void test_write_goes_through_a_temporary_file(void **state)
{
	struct fx *f = *state;
	struct repl_rel_config c;
	char err[512];

	/* A crash's leftover temporary beside a good file: neither read
	 * nor in the way of the next write. */
	fx_save(f, "r1", NULL);
	fx_write(f, "repl-r1.relation.tmp", "garbage", 0600);
	assert_int_equal(repl_relfile_load(f->dir, "r1", &c, err, sizeof(err)),
			 0);
	fx_save(f, "r1", NULL);
	assert_int_equal(access(fx_path(f, "repl-r1.relation.tmp"), F_OK), -1);
	assert_int_equal(access(fx_path(f, "repl-r1.key.tmp"), F_OK), -1);
	assert_int_equal(repl_relfile_load(f->dir, "r1", &c, err, sizeof(err)),
			 0);
}

static void test_remove_takes_every_file(void **state)
{
	struct fx *f = *state;
	struct repl_rel_config c;
	char err[512];

	fx_save(f, "r1", PEM);
	assert_int_equal(repl_relfile_remove(f->dir, "r1"), 0);
	assert_int_equal(access(fx_path(f, "repl-r1.relation"), F_OK), -1);
	assert_int_equal(access(fx_path(f, "repl-r1.key"), F_OK), -1);
	assert_int_equal(access(fx_path(f, "repl-r1.ca"), F_OK), -1);
	assert_int_equal(repl_relfile_load(f->dir, "r1", &c, err, sizeof(err)),
			 -ENOENT);
	assert_int_equal(repl_relfile_remove(f->dir, "r1"), 0);
}

/* Relation @name's .relation replaced by @text: refused with @why. */
static void refused_at_load(struct fx *f, const char *text, mode_t mode,
			    const char *why)
{
	struct repl_rel_config c;
	char err[512] = "", file[64];

	fx_save(f, "bad", NULL);
	snprintf(file, sizeof(file), "repl-bad.relation");
	fx_write(f, file, text, mode);
	assert_int_not_equal(
		repl_relfile_load(f->dir, "bad", &c, err, sizeof(err)), 0);
	if (!strstr(err, why)) {
		fail_msg("got '%s', wanted '%s'", err, why);
	}
}

#define HDR "# dsnfsd replication relation 1\n"

static void test_bad_files_are_refused(void **state)
{
	struct fx *f = *state;

	refused_at_load(f, HDR "role = source\ndatastore = ds1\n", 0600,
			"truncated (no \"end\" line)");
	refused_at_load(f, HDR "role = source\ndatastore = ds1\nend", 0600,
			"truncated or extended");
	refused_at_load(f, HDR "role = source\ndatastore = ds1\nend\nx = y\n",
			0600, "truncated or extended");
	refused_at_load(f, "role = source\ndatastore = ds1\nend\n", 0600,
			"not a relation file");
	refused_at_load(f, "", 0600, "truncated");
	refused_at_load(f, HDR "role = source\nschedule = weekly\nend\n", 0600,
			"schedule is 10min, hourly, daily or none");
	refused_at_load(f,
			HDR "role = source\ndatastore = ds1\ncolor = x\nend\n",
			0600, "unknown key 'color'");
	refused_at_load(f,
			HDR "role = source\ndatastore = ds1\nkey_file = "
			    "/etc/shadow\nend\n",
			0600, "key_file: not kept in a relation file");
	refused_at_load(f, HDR "role = source\nend\n", 0600,
			"role and datastore are needed");
	refused_at_load(f, HDR "role = source\ndatastore\nend\n", 0600,
			"not key = value");
	refused_at_load(f, HDR "role = source\ndatastore = ds1\nend\n", 0644,
			"Operation not permitted");
}

static void test_restore_skips_what_cannot_be_read_and_logs_it(void **state)
{
	struct fx *f = *state;
	struct repl_config *all = malloc(sizeof(*all));

	fx_save(f, "good", NULL);
	fx_save(f, "cut", NULL);
	fx_write(f, "repl-cut.relation", HDR "role = source\ndatast", 0600);
	fx_save(f, "nokey", NULL);
	assert_int_equal(unlink(fx_path(f, "repl-nokey.key")), 0);
	fx_save(f, "badkey", NULL);
	fx_write(f, "repl-badkey.key", "abc\n", 0600);
	fx_write(f, "repl-x.y.relation.tmp", "leftover", 0600);
	fx_write(f, "unrelated.relation", "x", 0600);
	assert_int_equal(repl_relfile_load_all(f->dir, all), 0);
	assert_int_equal(all->n, 1);
	assert_string_equal(all->rel[0].name, "good");
	assert_true(log_capture_contains(
		"replication: relation cut made through the API: not "
		"restored: "));
	assert_true(log_capture_contains("truncated or extended"));
	assert_true(log_capture_contains(
		"relation nokey made through the API: not restored: key file"));
	assert_true(log_capture_contains("relation badkey made through the "
					 "API: not restored: key file"));
	assert_true(log_capture_contains("not 64 hex digits"));
	assert_int_equal(repl_relfile_load_all("/nonexistent/dir", all),
			 -ENOENT);
	free(all);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_files_are_0600_and_the_key_apart, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_write_goes_through_a_temporary_file, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_remove_takes_every_file,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_files_are_refused,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_restore_skips_what_cannot_be_read_and_logs_it,
			setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
