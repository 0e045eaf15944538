// SPDX-License-Identifier: Apache-2.0
/*
 * test_config: dsnfsd.conf and -e NAME=DIR (nfsd/config/config.c).  Defaults, a
 * full valid file, one test per kind of error (the message names the file,
 * the line and the key), the first of several errors is the one reported,
 * unknown sections and unknown [datastore] keys go to the section hook,
 * and config_validate() catches what single keys cannot.
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

/* Loads @text from a temporary file. */
static int load_file(struct fixture *f, const char *text)
{
	char path[] = "/tmp/test_config_XXXXXX";
	int fd = mkstemp(path), rc;
	FILE *fp;

	assert_true(fd >= 0);
	fp = fdopen(fd, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
	f->err[0] = '\0';
	rc = config_load_file(&f->cfg, path, f->err, sizeof(f->err));
	unlink(path);
	return rc;
}

static void test_config_defaults(void **state)
{
	struct fixture *f = *state;
	struct config *c = &f->cfg;

	assert_string_equal(c->listen, "127.0.0.1");
	assert_int_equal(c->nfs_port, 2049);
	assert_int_equal(c->mount_port, 20048);
	assert_int_equal(c->portmap_port, 111);
	assert_int_equal(c->workers, 0);
	assert_int_equal(c->work_threads, 0);
	assert_int_equal(config_work_threads(c), CONFIG_WORK_THREADS_LOCAL);
	assert_int_equal(CONFIG_WORK_THREADS_LOCAL, 16);
	assert_int_equal(c->file_cache_fds, 0); /* from RLIMIT_NOFILE */
	assert_true(c->group_commit);
	assert_string_equal(c->state_dir, "var/state");
	assert_false(c->trace);
	assert_int_equal(c->max_record_bytes, 1024 * 1024 + 4096);
	assert_int_equal(c->max_inflight_per_conn, 128);
	assert_int_equal(c->max_output_bytes_per_conn, 8 * 1024 * 1024);
	assert_true(c->read_zero_copy);
	assert_int_equal(c->read_zero_copy_min_bytes, 32 * 1024);
	assert_false(c->io_offload_auto);
	assert_int_equal(c->ndatastores, 0);
	assert_null(c->section_hook);
}

static const char full_conf[] = "; dsnfsd test configuration\n"
				"[server]\n"
				"listen = 0.0.0.0\n"
				"nfs_port = 12049\n"
				"mount_port = 0\n"
				"portmap_port = 1111\n"
				"workers = 2\n"
				"work_threads = 3\n"
				"group_commit = false\n"
				"state_dir = /tmp/dsnfs-state\n"
				"trace = yes\n"
				"max_record_bytes = 65536\n"
				"max_inflight_per_conn = 16\n"
				"max_output_bytes_per_conn = 131072\n"

				"file_cache_fds = 5000\n"
				"read_zero_copy = false\n"
				"read_zero_copy_min_bytes = 0\n"
				"io_offload = auto\n"
				"\n"
				"[datastore ds1]\n"
				"path = /srv/ds1\n"
				"clients = 10.0.0.0/8, 127.0.0.1 ::1\n"
				"read_only = true\n"
				"squash = all\n"
				"anonuid = 1001\n"
				"anongid = 1002\n"
				"fsid = 7\n"
				"\n"
				"[datastore ds-2.b_c]\n"
				"path = /srv/ds2\n";

static void test_config_full_file_loads(void **state)
{
	struct fixture *f = *state;
	struct config *c = &f->cfg;
	const struct config_datastore *a, *b;

	assert_int_equal(load(f, full_conf), 0);
	assert_string_equal(c->listen, "0.0.0.0");
	assert_int_equal(c->nfs_port, 12049);
	assert_int_equal(c->mount_port, 0);
	assert_int_equal(c->portmap_port, 1111);
	assert_int_equal(c->workers, 2);
	assert_int_equal(c->work_threads, 3);
	assert_false(c->group_commit);
	assert_string_equal(c->state_dir, "/tmp/dsnfs-state");
	assert_true(c->trace);
	assert_int_equal(c->max_record_bytes, 65536);
	assert_int_equal(c->max_inflight_per_conn, 16);
	assert_int_equal(c->max_output_bytes_per_conn, 131072);
	assert_int_equal(c->file_cache_fds, 5000);
	assert_false(c->read_zero_copy);
	assert_int_equal(c->read_zero_copy_min_bytes, 0);
	assert_true(c->io_offload_auto);
	assert_int_equal(c->ndatastores, 2);

	a = &c->datastores[0];
	assert_string_equal(a->name, "ds1");
	assert_string_equal(a->path, "/srv/ds1");
	assert_int_equal(a->nclients, 3);
	assert_int_equal(a->clients[0].family, AF_INET);
	assert_int_equal(a->clients[0].prefix_len, 8);
	assert_int_equal(a->clients[0].addr[0], 10);
	assert_int_equal(a->clients[1].prefix_len, 32);
	assert_int_equal(a->clients[2].family, AF_INET6);
	assert_int_equal(a->clients[2].prefix_len, 128);
	assert_true(a->read_only);
	assert_int_equal(a->squash, EXPORT_SQUASH_ALL);
	assert_int_equal(a->anon_uid, 1001);
	assert_int_equal(a->anon_gid, 1002);
	assert_int_equal(a->fsid, 7);

	b = &c->datastores[1];
	assert_string_equal(b->name, "ds-2.b_c");
	assert_string_equal(b->path, "/srv/ds2");
	/* Issue 23: knfsd's defaults, and no clients given means loopback
	 * only (127.0.0.0/8 and ::1). */
	assert_int_equal(b->nclients, 2);
	assert_true(b->clients_default);
	assert_int_equal(b->clients[0].family, AF_INET);
	assert_int_equal(b->clients[0].addr[0], 127);
	assert_int_equal(b->clients[0].prefix_len, 8);
	assert_int_equal(b->clients[1].family, AF_INET6);
	assert_int_equal(b->clients[1].addr[15], 1);
	assert_int_equal(b->clients[1].prefix_len, 128);
	assert_true(b->secure);
	assert_false(a->clients_default);
	assert_false(b->read_only);
	assert_int_equal(b->squash, EXPORT_SQUASH_ROOT);
	assert_int_equal(b->anon_uid, EXPORT_ANON_ID);
	assert_int_equal(b->anon_gid, EXPORT_ANON_ID);
	assert_int_equal(b->fsid, 0);
	assert_int_equal(config_validate(c, f->err, sizeof(f->err)), 0);
}

static void test_config_file_on_disk_loads(void **state)
{
	struct fixture *f = *state;
	char text[sizeof(full_conf) + 64];
	char want[64];
	unsigned line = 2; /* the bad key is the 2nd line after full_conf */

	for (const char *p = full_conf; *p; p++) {
		line += *p == '\n';
	}
	snprintf(text, sizeof(text), "%s[server]\nnfs_port = x\n", full_conf);
	assert_int_equal(load_file(f, text), -EINVAL);
	/* The bad key's line, in the file named by its own path. */
	snprintf(want, sizeof(want),
		 ":%u: [server] nfs_port: invalid value 'x'", line);
	assert_non_null(strstr(f->err, want));
	assert_memory_equal(f->err, "/tmp/test_config_", 17);
	assert_int_equal(f->cfg.ndatastores, 2);
	assert_int_equal(f->cfg.nfs_port, 12049);
}

static void test_config_missing_file_is_named(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(config_load_file(&f->cfg, "/nonexistent/d.conf",
					  f->err, sizeof(f->err)),
			 -ENOENT);
	assert_string_equal(f->err, "/nonexistent/d.conf: cannot open: No "
				    "such file or directory");
}

static void test_config_unknown_key_names_line_and_key(void **state)
{
	assert_load_error(*state, "[server]\nnfs_port = 1\nbogus = 2\n",
			  "t.conf:3: [server]: unknown key 'bogus'");
	assert_load_error(*state, "[datastore a]\npathh = /x\n",
			  "t.conf:2: [datastore a]: unknown key 'pathh'");
}

static void test_config_unknown_section_names_line(void **state)
{
	assert_load_error(*state, "\n[pools]\nsize = 1\n",
			  "t.conf:3: unknown section [pools]");
}

static void test_config_bad_port_names_line_and_key(void **state)
{
	assert_load_error(*state, "[server]\nnfs_port = 65536\n",
			  "t.conf:2: [server] nfs_port: invalid value '65536'");
	assert_load_error(*state, "[server]\nmount_port = -1\n",
			  "t.conf:2: [server] mount_port: invalid value '-1'");
	assert_load_error(*state, "[server]\nnfs_port = off\n",
			  "t.conf:2: [server] nfs_port: invalid value 'off'");
	assert_load_error(*state, "[server]\nnfs_port = 20x\n",
			  "t.conf:2: [server] nfs_port: invalid value '20x'");
}

static void test_config_bad_bool_names_line_and_key(void **state)
{
	assert_load_error(*state, "[server]\n\ntrace = maybe\n",
			  "t.conf:3: [server] trace: invalid value 'maybe'");
	assert_load_error(
		*state, "[datastore a]\nread_only = 2\n",
		"t.conf:2: [datastore a] read_only: invalid value '2'");
}

static void test_config_bad_cidr_names_line_and_key(void **state)
{
	assert_load_error(
		*state, "[datastore a]\nclients = 10.0.0.0/33\n",
		"t.conf:2: [datastore a] clients: invalid value '10.0.0.0/33'");
	assert_load_error(
		*state, "[datastore a]\nclients = 127.0.0.1, host.example\n",
		"t.conf:2: [datastore a] clients: invalid value '127.0.0.1, "
		"host.example'");
}

static void test_config_bad_datastore_name_is_refused(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(load(f, "[datastore a/b]\npath = /x\n"), -EINVAL);
	assert_non_null(strstr(f->err, "t.conf:2: [datastore a/b]: bad name"));
	assert_int_equal(f->cfg.ndatastores, 0);
}

static void test_config_bad_values_of_limits(void **state)
{
	assert_load_error(*state, "[server]\nwork_threads = 0\n",
			  "t.conf:2: [server] work_threads: invalid value '0'");
	assert_load_error(
		*state, "[server]\nmax_record_bytes = 100\n",
		"t.conf:2: [server] max_record_bytes: invalid value '100'");
	assert_load_error(*state,
			  "[server]\nread_zero_copy_min_bytes = 2097152\n",
			  "t.conf:2: [server] read_zero_copy_min_bytes: "
			  "invalid value '2097152'");
	assert_load_error(*state, "[server]\nio_offload = on\n",
			  "t.conf:2: [server] io_offload: invalid value 'on'");
	assert_load_error(*state, "[datastore a]\nsquash = some\n",
			  "t.conf:2: [datastore a] squash: invalid value "
			  "'some'");
	assert_load_error(*state, "[datastore a]\nfsid = 0\n",
			  "t.conf:2: [datastore a] fsid: invalid value '0'");
}

/* Each numeric [server] key takes its bounds and refuses one past them,
 * with the same message: the bounds of the key table in config.c, written
 * here again so that a slip in the table shows. */
static void test_config_server_bounds(void **state)
{
	static const struct {
		const char *key;
		unsigned long min, max;
	} keys[] = {
		{ "read_zero_copy_min_bytes", 0, 1ul << 20 },
		{ "intent_log_mib", 8, 1ul << 20 },
		{ "intent_log_checkpoint_ms", 0, 3600000 },
		{ "intent_log_inplace_min_bytes", 0, 1ul << 20 },
		{ "intent_log_immediate_max_bytes", 0, 1ul << 20 },
		{ "intent_log_inplace_sequential_min_bytes", 0, 1ul << 20 },
		{ "workers", 0, 256 },
		{ "work_threads", 1, 256 },
		{ "max_record_bytes", 8192, 64ul << 20 },
		{ "max_inflight_per_conn", 1, 65536 },
		{ "max_output_bytes_per_conn", 65536, 1ul << 30 },
		{ "max_conns", 1, 1000000 },
		{ "max_conns_per_host", 1, 1000000 },
		{ "idle_timeout_ms", 0, 86400000 },
		{ "record_timeout_ms", 0, 3600000 },
		{ "memory_trim_ms", 0, 3600000 },
		{ "file_cache_fds", 0, 1ul << 25 },
	};
	struct fixture *f = *state;
	char text[128], want[256];

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		snprintf(text, sizeof(text), "[server]\n%s = %lu\n",
			 keys[i].key, keys[i].min);
		assert_int_equal(load(f, text), 0);
		snprintf(text, sizeof(text), "[server]\n%s = %lu\n",
			 keys[i].key, keys[i].max);
		assert_int_equal(load(f, text), 0);
		snprintf(text, sizeof(text), "[server]\n%s = %lu\n",
			 keys[i].key, keys[i].max + 1);
		snprintf(want, sizeof(want),
			 "t.conf:2: [server] %s: invalid value '%lu'",
			 keys[i].key, keys[i].max + 1);
		assert_load_error(f, text, want);
		if (keys[i].min > 0) {
			snprintf(text, sizeof(text), "[server]\n%s = %lu\n",
				 keys[i].key, keys[i].min - 1);
			snprintf(want, sizeof(want),
				 "t.conf:2: [server] %s: invalid value '%lu'",
				 keys[i].key, keys[i].min - 1);
			assert_load_error(f, text, want);
		}
	}
	/* The values held: the last row's maximum, the ports and strings. */
	assert_int_equal(f->cfg.file_cache_fds, 1u << 25);
	assert_int_equal(load(f, "[server]\nnfs_port = 65535\n"
				 "admin_port = off\nlisten = ::1\n"
				 "workers = 7\n"),
			 0);
	assert_int_equal(f->cfg.nfs_port, 65535);
	assert_int_equal(f->cfg.admin_port, CONFIG_PORT_OFF);
	assert_string_equal(f->cfg.listen, "::1");
	assert_int_equal(f->cfg.workers, 7);
	assert_load_error(f, "[server]\nmount_port = off\n",
			  "t.conf:2: [server] mount_port: invalid value 'off'");
}

static void test_config_first_of_two_errors_is_reported(void **state)
{
	assert_load_error(*state, "[server]\nbogus = 1\nnfs_port = x\n",
			  "t.conf:2: [server]: unknown key 'bogus'");
	/* A syntax error before a bad key: the syntax error is first. */
	assert_load_error(*state, "[server]\nno equals sign\nbogus = 1\n",
			  "t.conf:2: syntax error");
}

/* "[datastore a]\npath = /DIGITS\n" with a path line of @line_len bytes;
 * @tail follows. */
static void long_path_conf(char *text, size_t len, int line_len,
			   const char *tail)
{
	snprintf(text, len, "[datastore a]\npath = /%0*d\n%s", line_len - 8, 0,
		 tail);
}

static void test_config_long_line_is_refused_not_cut(void **state)
{
	struct fixture *f = *state;
	char text[512];

	/* 199 characters fit: "path = /" and 191 digits. */
	long_path_conf(text, sizeof(text), 199, "read_only = 1\n");
	assert_int_equal(load(f, text), 0);
	assert_int_equal(strlen(f->cfg.datastores[0].path), 192);
	assert_true(f->cfg.datastores[0].read_only);
	/* 200 do not: not cut to 199, nor the rest read as a line. */
	long_path_conf(text, sizeof(text), 200, "read_only = 1\n");
	assert_load_error(f, text, "t.conf:2: line longer than 199 characters");
	long_path_conf(text, sizeof(text), 200, "");
	assert_load_error(f, text, "t.conf:2: line longer than 199 characters");
	/* The same from a file. */
	long_path_conf(text, sizeof(text), 199, "");
	assert_int_equal(load_file(f, text), 0);
	long_path_conf(text, sizeof(text), 200, "");
	assert_int_equal(load_file(f, text), -EINVAL);
	assert_non_null(strstr(f->err, ":2: line longer than 199 characters"));
	/* A long comment must not hide a key in its tail. */
	memset(text, 0, sizeof(text));
	text[0] = ';';
	memset(text + 1, 'c', 198);
	memcpy(text + 199, "x = 1\n", 6);
	assert_load_error(f, text, "t.conf:1: line longer than 199 characters");
}

static void test_config_portmap_off(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(load(f, "[server]\nportmap_port = off\n"), 0);
	assert_int_equal(f->cfg.portmap_port, CONFIG_PORT_OFF);
	assert_int_equal(load(f, "[server]\nportmap_port = 0\n"), 0);
	assert_int_equal(f->cfg.portmap_port, 0);
}

static int hook_keys;

static int section_hook(void *arg, const char *section, const char *key,
			const char *value, char *errbuf, size_t errlen)
{
	(void)arg;
	if (!strcmp(section, "datastore a") && !strcmp(key, "quota")) {
		hook_keys++;
		return 0;
	}
	if (strcmp(section, "pool p1") != 0) {
		return -ENOENT;
	}
	if (!strcmp(key, "size") && !strcmp(value, "huge")) {
		snprintf(errbuf, errlen, "not a size");
		return -EINVAL;
	}
	hook_keys++;
	return 0;
}

static void test_config_other_sections_go_to_the_hook(void **state)
{
	struct fixture *f = *state;

	f->cfg.section_hook = section_hook;
	hook_keys = 0;
	assert_int_equal(load(f, "[pool p1]\nsize = 10G\nowner = x\n"), 0);
	assert_int_equal(hook_keys, 2);
	assert_load_error(f, "[pool p1]\nsize = huge\n",
			  "t.conf:2: [pool p1] size: not a size");
	assert_load_error(f, "[pool p2]\nsize = 1\n",
			  "t.conf:2: [pool p2]: unknown key 'size'");
}

/* [datastore NAME] keys config.c does not know go to the hook (the pool
 * keys); a key nobody takes is still an error naming its line. */
static void test_config_unknown_datastore_keys_go_to_the_hook(void **state)
{
	struct fixture *f = *state;

	f->cfg.section_hook = section_hook;
	hook_keys = 0;
	assert_int_equal(load(f, "[datastore a]\npath = /x\nquota = 1G\n"), 0);
	assert_int_equal(hook_keys, 1);
	assert_string_equal(f->cfg.datastores[0].path, "/x");
	assert_load_error(f, "[datastore a]\npath = /x\n\npathh = /y\n",
			  "t.conf:4: [datastore a]: unknown key 'pathh'");
}

static void test_config_export_arg_adds_datastore(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(config_add_export_arg(&f->cfg, "ds1=/srv/a=b", f->err,
					       sizeof(f->err)),
			 0);
	assert_int_equal(f->cfg.ndatastores, 1);
	assert_string_equal(f->cfg.datastores[0].name, "ds1");
	assert_string_equal(f->cfg.datastores[0].path, "/srv/a=b");
	/* -e gets the secure defaults too (issue 23). */
	assert_int_equal(f->cfg.datastores[0].squash, EXPORT_SQUASH_ROOT);
	assert_true(f->cfg.datastores[0].secure);
	assert_true(f->cfg.datastores[0].clients_default);
	assert_int_equal(f->cfg.datastores[0].nclients, 2);
	/* The same name again replaces the path, not a second datastore. */
	assert_int_equal(config_add_export_arg(&f->cfg, "ds1=/srv/c", f->err,
					       sizeof(f->err)),
			 0);
	assert_int_equal(f->cfg.ndatastores, 1);
	assert_string_equal(f->cfg.datastores[0].path, "/srv/c");
}

static void test_config_export_arg_errors(void **state)
{
	struct fixture *f = *state;
	static const char *const no_eq[] = { "ds1", "=/srv", "ds1=", "" };
	char long_name[80];

	for (size_t i = 0; i < ARRAY_SIZE(no_eq); i++) {
		char want[64];

		assert_int_equal(config_add_export_arg(&f->cfg, no_eq[i],
						       f->err, sizeof(f->err)),
				 -EINVAL);
		snprintf(want, sizeof(want), "-e %s: expected NAME=DIR",
			 no_eq[i]);
		assert_string_equal(f->err, want);
	}
	assert_int_equal(config_add_export_arg(&f->cfg, "a b=/x", f->err,
					       sizeof(f->err)),
			 -EINVAL);
	assert_string_equal(f->err,
			    "-e a b=/x: bad datastore name or path too long");
	memset(long_name, 'n', 70);
	memcpy(long_name + 70, "=/x", 4);
	assert_int_equal(config_add_export_arg(&f->cfg, long_name, f->err,
					       sizeof(f->err)),
			 -EINVAL);
	assert_int_equal(f->cfg.ndatastores, 0);
}

static void test_config_clients_star_and_empty(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(load(f, "[datastore a]\npath = /a\nclients = *\n"), 0);
	assert_int_equal(f->cfg.datastores[0].nclients, 0);
	assert_true(f->cfg.datastores[0].everyone);
	assert_false(f->cfg.datastores[0].clients_default);
	config_defaults(&f->cfg);
	assert_int_equal(load(f, "[datastore a]\npath = /a\nclients =\n"),
			 -EINVAL);
	config_defaults(&f->cfg);
	assert_int_equal(
		load(f, "[datastore a]\npath = /a\nclients = *, 10.0.0.1\n"),
		-EINVAL);
	config_defaults(&f->cfg);
	assert_int_equal(load(f, "[datastore a]\npath = /a\nclients = "
				 "192.0.2.7\nsquash = none\nsecure = no\n"),
			 0);
	assert_int_equal(f->cfg.datastores[0].nclients, 1);
	assert_false(f->cfg.datastores[0].clients_default);
	assert_int_equal(f->cfg.datastores[0].squash, EXPORT_SQUASH_NONE);
	assert_false(f->cfg.datastores[0].secure);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

/* The intent log: off by default; [server] names the shared log,
 * [datastore] its own or "off"; ring sizes below two batches are refused. */
static void test_config_intent_log_keys(void **state)
{
	struct fixture *f = *state;

	assert_string_equal(f->cfg.intent_log, "");
	assert_int_equal(f->cfg.intent_log_mib, 128);
	assert_int_equal(f->cfg.intent_log_checkpoint_ms, 1000);
	assert_int_equal(load(f, "[server]\n"
				 "intent_log = /fast/dsnfs.ilog\n"
				 "intent_log_mib = 64\n"
				 "intent_log_checkpoint_ms = 0\n"
				 "[datastore ds1]\npath = /tmp\n"
				 "intent_log = off\n"
				 "[datastore ds2]\npath = /tmp\n"
				 "intent_log = /fast/ds2.ilog\n"),
			 0);
	assert_string_equal(f->cfg.intent_log, "/fast/dsnfs.ilog");
	assert_int_equal(f->cfg.intent_log_mib, 64);
	assert_int_equal(f->cfg.intent_log_checkpoint_ms, 0);
	assert_string_equal(f->cfg.datastores[0].intent_log, "off");
	assert_string_equal(f->cfg.datastores[1].intent_log, "/fast/ds2.ilog");
	assert_int_equal(load(f, "[server]\nintent_log = off\n"), 0);
	assert_string_equal(f->cfg.intent_log, "");
	assert_int_equal(load(f, "[server]\nintent_log_mib = 4\n"), -EINVAL);
	assert_non_null(strstr(f->err, "intent_log_mib"));
}

/* By default 32 KiB and up go in place and the stream rule is off
 * (docs/durability.md: measured slower than the log); the older key's name
 * sets the same size; 0 turns a rule off; past the largest WRITE (1 MiB) is
 * refused. */
static void test_config_intent_log_immediate_max(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(f->cfg.intent_log_inplace_min_bytes, 32768);
	assert_int_equal(f->cfg.intent_log_inplace_seq_min_bytes, 0);
	assert_int_equal(load(f,
			      "[server]\n"
			      "intent_log_immediate_max_bytes = 0\n"
			      "intent_log_inplace_sequential_min_bytes = 0\n"),
			 0);
	assert_int_equal(f->cfg.intent_log_inplace_min_bytes, 0);
	assert_int_equal(f->cfg.intent_log_inplace_seq_min_bytes, 0);
	assert_int_equal(load(f, "[server]\n"
				 "intent_log_inplace_min_bytes = 65536\n"),
			 0);
	assert_int_equal(f->cfg.intent_log_inplace_min_bytes, 65536);
	assert_int_equal(load(f, "[server]\n"
				 "intent_log_immediate_max_bytes = 65536\n"),
			 0);
	assert_int_equal(f->cfg.intent_log_inplace_min_bytes, 65536);
	assert_int_equal(load(f, "[server]\n"
				 "intent_log_immediate_max_bytes = 2097152\n"),
			 -EINVAL);
	assert_non_null(strstr(f->err, "intent_log_immediate_max_bytes"));
	assert_int_equal(load(f, "[server]\n"
				 "intent_log_immediate_max_bytes = big\n"),
			 -EINVAL);
	/* Direct in-place writes: on by default, "no" turns them off, a
	 * word that is no boolean is refused with the key named. */
	assert_true(f->cfg.intent_log_inplace_direct);
	assert_int_equal(load(f, "[server]\nintent_log_inplace_direct = no\n"),
			 0);
	assert_false(f->cfg.intent_log_inplace_direct);
	assert_int_equal(
		load(f, "[server]\nintent_log_inplace_direct = maybe\n"),
		-EINVAL);
	assert_non_null(strstr(f->err, "intent_log_inplace_direct"));
}

/* backend = cephfs with its keys; ceph_user defaults to admin. */
static void test_config_cephfs_keys(void **state)
{
	struct fixture *f = *state;
	const struct config_datastore *ds;

	assert_int_equal(load(f, "[datastore l]\npath = /l\n"
				 "[datastore c]\nbackend = cephfs\n"
				 "ceph_conf = /etc/ceph/ceph.conf\n"
				 "ceph_path = /vols/c\n"
				 "[datastore d]\nbackend = cephfs\n"
				 "ceph_conf = /c.conf\nceph_path = /\n"
				 "ceph_user = dsnfs\nceph_fs = fs2\n"
				 "ceph_readahead_mib = 0\n"
				 "intent_log = rados\n"
				 "intent_log_gateway = gw-a_1\n"),
			 0);
	assert_int_equal(f->cfg.datastores[0].backend, CONFIG_BACKEND_LOCAL);
	ds = &f->cfg.datastores[1];
	assert_int_equal(ds->backend, CONFIG_BACKEND_CEPHFS);
	assert_string_equal(ds->ceph_conf, "/etc/ceph/ceph.conf");
	assert_string_equal(ds->ceph_path, "/vols/c");
	assert_string_equal(ds->ceph_user, "admin");
	assert_string_equal(ds->ceph_fs, "");
	assert_int_equal(ds->ceph_readahead_mib, 8);
	ds = &f->cfg.datastores[2];
	assert_string_equal(ds->ceph_user, "dsnfs");
	assert_string_equal(ds->ceph_fs, "fs2");
	assert_int_equal(ds->ceph_readahead_mib, 0);
	assert_string_equal(ds->intent_log, "rados");
	assert_string_equal(ds->intent_log_gateway, "gw-a_1");
	assert_int_equal(config_validate(&f->cfg, f->err, sizeof(f->err)), 0);
}

/* ceph_readahead_mib: 0 to 64 MiB, a number. */
static void test_config_ceph_readahead_bounds(void **state)
{
	struct fixture *f = *state;
	static const char *const bad[] = { "65", "-1", "8m", "" };

	assert_int_equal(load(f, "[datastore c]\nbackend = cephfs\n"
				 "ceph_conf = /c.conf\nceph_path = /\n"
				 "ceph_readahead_mib = 64\n"),
			 0);
	assert_int_equal(f->cfg.datastores[0].ceph_readahead_mib, 64);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[256];

		snprintf(text, sizeof(text),
			 "[datastore c]\nbackend = cephfs\n"
			 "ceph_conf = /c.conf\nceph_path = /\n"
			 "ceph_readahead_mib = %s\n",
			 bad[i]);
		config_defaults(&f->cfg);
		assert_int_equal(load(f, text), -EINVAL);
		assert_non_null(strstr(f->err, "ceph_readahead_mib"));
	}
}

/* work_threads unset: 128 once a datastore is on cephfs (every call there
 * waits on a work thread), 128 too when one logs in RADOS, 16 with local
 * ones only; a value set wins. */
static void test_config_work_threads_follow_backends(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(load(f, "[datastore l]\npath = /l\n"), 0);
	assert_int_equal(config_work_threads(&f->cfg), 16);
	assert_int_equal(load(f, "[datastore c]\nbackend = cephfs\n"
				 "ceph_conf = /c.conf\nceph_path = /\n"),
			 0);
	assert_int_equal(config_work_threads(&f->cfg), 128);
	assert_int_equal(CONFIG_WORK_THREADS_CEPHFS, 128);
	/* A RADOS intent log: 128, though l and c come first. */
	assert_int_equal(load(f, "[datastore r]\nbackend = cephfs\n"
				 "ceph_conf = /c.conf\nceph_path = /r\n"
				 "intent_log = rados\n"),
			 0);
	assert_int_equal(config_work_threads(&f->cfg), 128);
	assert_int_equal(load(f, "[server]\nwork_threads = 12\n"), 0);
	assert_int_equal(config_work_threads(&f->cfg), 12);
}

/* Each error names the file, the line of the key at fault, and the key. */
/* assert_load_error() on a config holding nothing else. */
static void assert_fresh_load_error(struct fixture *f, const char *text,
				    const char *want)
{
	config_defaults(&f->cfg);
	assert_load_error(f, text, want);
}

static void test_config_cephfs_errors_name_line_and_key(void **state)
{
	assert_fresh_load_error(
		*state, "[datastore c]\nbackend = rados\n",
		"t.conf:2: [datastore c] backend: invalid value "
		"'rados'");
	assert_fresh_load_error(*state,
				"[datastore c]\nbackend = cephfs\n"
				"ceph_path = /x\n",
				"t.conf:2: [datastore c] backend: cephfs needs "
				"ceph_conf (the cluster's ceph.conf)");
	assert_fresh_load_error(*state,
				"[datastore c]\nceph_conf = /c\n"
				"backend = cephfs\n",
				"t.conf:3: [datastore c] backend: cephfs needs "
				"ceph_path (the CephFS directory served)");
	assert_fresh_load_error(
		*state,
		"[datastore c]\nbackend = cephfs\n"
		"ceph_conf = /c\nceph_path = x\n",
		"t.conf:4: [datastore c] ceph_path: invalid value "
		"'x'");
	assert_fresh_load_error(
		*state,
		"[datastore c]\nbackend = cephfs\n"
		"ceph_conf = /c\nceph_path = /x\n"
		"path = /local\n",
		"t.conf:5: [datastore c] path: not used by backend "
		"cephfs (ceph_path names its directory)");
	assert_fresh_load_error(
		*state,
		"[datastore c]\nbackend = cephfs\n"
		"ceph_conf = /c\nceph_path = /x\n"
		"intent_log = /l.ilog\n",
		"t.conf:5: [datastore c] intent_log: the cephfs "
		"backend's log is in the cluster: rados or off, not a "
		"file");
	assert_fresh_load_error(*state,
				"[datastore l]\npath = /l\n"
				"intent_log = rados\n",
				"t.conf:3: [datastore l] intent_log: rados is "
				"for backend = cephfs (a local datastore's log "
				"is a file: give its path)");
	/* It names a RADOS object: no separators. */
	assert_fresh_load_error(*state,
				"[datastore c]\nintent_log_gateway = a/b\n",
				"t.conf:2: [datastore c] intent_log_gateway: "
				"invalid value 'a/b'");
	assert_fresh_load_error(
		*state,
		"[datastore l]\npath = /l\n"
		"ceph_user = bob\n",
		"t.conf:3: [datastore l] ceph_*: only for backend "
		"= cephfs");
	assert_fresh_load_error(
		*state, "[datastore c]\nceph_user =\n",
		"t.conf:2: [datastore c] ceph_user: invalid value "
		"''");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_config_defaults),
		T(test_config_cephfs_keys),
		T(test_config_ceph_readahead_bounds),
		T(test_config_work_threads_follow_backends),
		T(test_config_cephfs_errors_name_line_and_key),
		T(test_config_full_file_loads),
		T(test_config_file_on_disk_loads),
		T(test_config_missing_file_is_named),
		T(test_config_unknown_key_names_line_and_key),
		T(test_config_unknown_section_names_line),
		T(test_config_bad_port_names_line_and_key),
		T(test_config_bad_bool_names_line_and_key),
		T(test_config_bad_cidr_names_line_and_key),
		T(test_config_bad_datastore_name_is_refused),
		T(test_config_bad_values_of_limits),
		T(test_config_server_bounds),
		T(test_config_first_of_two_errors_is_reported),
		T(test_config_long_line_is_refused_not_cut),
		T(test_config_portmap_off),
		T(test_config_other_sections_go_to_the_hook),
		T(test_config_unknown_datastore_keys_go_to_the_hook),
		T(test_config_export_arg_adds_datastore),
		T(test_config_export_arg_errors),
		T(test_config_clients_star_and_empty),
		T(test_config_intent_log_keys),
		T(test_config_intent_log_immediate_max),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
