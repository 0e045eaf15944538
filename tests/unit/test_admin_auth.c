// SPDX-License-Identifier: Apache-2.0
/*
 * test_admin_auth: the admin endpoint's walls without HTTP
 * (nfsd/admin/auth.c, token.c): the token file made and refused, the
 * Host allowlist, Origin and Sec-Fetch-Site, the bearer token, sessions,
 * the pages that need no credential, and the once-per-peer log.
 */
#include "nfsd/admin/admin.h"
#include "nfsd/admin/auth.h"

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

#include "nfsd/base/base.h"

#define TOKEN "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

struct auth_fixture {
	char dir[64];
	char path[128];
	struct admin_auth auth;
};

static int setup(void **state)
{
	struct auth_fixture *f = calloc(1, sizeof(*f));
	struct admin_auth_config cfg = {
		.listen = "127.0.0.1",
		.port = 8049,
		.metrics_auth = true,
		.allowed_hosts = "nas1.example, NAS2.example\tfd00::5",
	};
	char err[256];

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/dsnfs-auth.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/admin.token", f->dir);
	assert_int_equal(
		admin_auth_init(&f->auth, &cfg, TOKEN, err, sizeof(err)), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct auth_fixture *f = *state;
	char cmd[128];

	admin_auth_fini(&f->auth);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

/* ---- the token file ------------------------------------------------- */

static void test_token_made_once_0600(void **state)
{
	struct auth_fixture *f = *state;
	char t1[ADMIN_TOKEN_HEX_LEN + 1], t2[ADMIN_TOKEN_HEX_LEN + 1];
	char err[256];
	struct stat st;
	bool created;

	assert_int_equal(
		admin_token_load(f->path, t1, &created, err, sizeof(err)), 0);
	assert_true(created);
	assert_int_equal(strlen(t1), ADMIN_TOKEN_HEX_LEN);
	assert_int_equal(stat(f->path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_uid, geteuid());
	assert_int_equal(st.st_size, ADMIN_TOKEN_HEX_LEN + 1);
	/* the second start reads the same one */
	assert_int_equal(
		admin_token_load(f->path, t2, &created, err, sizeof(err)), 0);
	assert_false(created);
	assert_string_equal(t1, t2);
	/* and a tool reads it too */
	assert_int_equal(admin_token_read(f->path, t2, err, sizeof(err)), 0);
	assert_string_equal(t1, t2);
	/* no leftover of the write */
	strcat(f->path, ".new");
	assert_int_equal(access(f->path, F_OK), -1);
}

static void test_token_two_makes_differ(void **state)
{
	struct auth_fixture *f = *state;
	char t1[ADMIN_TOKEN_HEX_LEN + 1], t2[ADMIN_TOKEN_HEX_LEN + 1];
	char err[256];
	bool created;

	assert_int_equal(
		admin_token_load(f->path, t1, &created, err, sizeof(err)), 0);
	unlink(f->path);
	assert_int_equal(
		admin_token_load(f->path, t2, &created, err, sizeof(err)), 0);
	assert_string_not_equal(t1, t2);
}

/* admin_token_load() refuses f->path with -EPERM, and the reason names
 * @why when one is given. */
static void assert_load_refused(const struct auth_fixture *f, const char *why)
{
	char t[ADMIN_TOKEN_HEX_LEN + 1], err[256];
	bool created;

	assert_int_equal(
		admin_token_load(f->path, t, &created, err, sizeof(err)),
		-EPERM);
	if (why) {
		assert_non_null(strstr(err, why));
	}
}

static void test_token_refused_mode(void **state)
{
	struct auth_fixture *f = *state;
	char t[ADMIN_TOKEN_HEX_LEN + 1], err[256];
	bool created;

	write_file(f->path, TOKEN "\n", 0640);
	assert_load_refused(f, "mode 0640 lets others");
	write_file(f->path, TOKEN "\n", 0604);
	assert_load_refused(f, NULL);
	write_file(f->path, TOKEN "\n", 0400);
	assert_int_equal(
		admin_token_load(f->path, t, &created, err, sizeof(err)), 0);
	assert_string_equal(t, TOKEN);
}

static void test_token_refused_owner(void **state)
{
	struct auth_fixture *f = *state;

	if (geteuid() != 0) {
		skip();
	}
	write_file(f->path, TOKEN "\n", 0600);
	assert_int_equal(chown(f->path, 65534, 65534), 0);
	assert_load_refused(f, "owned by uid 65534");
}

static void test_token_refused_not_regular(void **state)
{
	struct auth_fixture *f = *state;
	char t[ADMIN_TOKEN_HEX_LEN + 1], err[256], other[160];

	snprintf(other, sizeof(other), "%s/elsewhere", f->dir);
	write_file(other, TOKEN "\n", 0600);
	assert_int_equal(symlink(other, f->path), 0);
	assert_load_refused(f, "a symlink");
	assert_int_equal(admin_token_read(f->path, t, err, sizeof(err)),
			 -EPERM);
	unlink(f->path);
	/* A FIFO: refused at once, the open does not wait for a writer. */
	assert_int_equal(mkfifo(f->path, 0600), 0);
	assert_load_refused(f, "not a regular file");
	unlink(f->path);
	assert_int_equal(mkdir(f->path, 0700), 0);
	assert_load_refused(f, NULL);
	rmdir(f->path);
}

static void test_token_refused_malformed(void **state)
{
	static const char *const bad[] = {
		"",
		"abc\n",
		TOKEN "0\n", /* 65 digits */
		TOKEN "\n\n",
		"g123456789abcdef0123456789abcdef0123456789abcdef0123456789abcd"
		"ef",
		" " TOKEN,
	};
	struct auth_fixture *f = *state;
	char t[ADMIN_TOKEN_HEX_LEN + 1], err[256];
	bool created;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		write_file(f->path, bad[i], 0600);
		assert_int_equal(admin_token_load(f->path, t, &created, err,
						  sizeof(err)),
				 -EINVAL);
		assert_non_null(strstr(err, "malformed"));
		assert_int_equal(admin_token_read(f->path, t, err, sizeof(err)),
				 -EINVAL);
	}
	/* no newline, upper case: the same token */
	write_file(f->path,
		   "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789"
		   "abcdef",
		   0600);
	assert_int_equal(
		admin_token_load(f->path, t, &created, err, sizeof(err)), 0);
	assert_string_equal(t, TOKEN);
}

static void test_token_path_order(void **state)
{
	(void)state;
	unsetenv(ADMIN_TOKEN_ENV);
	assert_string_equal(admin_token_path(NULL), ADMIN_TOKEN_DEFAULT_PATH);
	setenv(ADMIN_TOKEN_ENV, "/env/t", 1);
	assert_string_equal(admin_token_path(NULL), "/env/t");
	assert_string_equal(admin_token_path("/opt/t"), "/opt/t");
	setenv(ADMIN_TOKEN_ENV, "", 1);
	assert_string_equal(admin_token_path(NULL), ADMIN_TOKEN_DEFAULT_PATH);
	unsetenv(ADMIN_TOKEN_ENV);
}

/* ---- the decision --------------------------------------------------- */

static unsigned decide(struct admin_auth *a, const char *method,
		       const char *url, const char *host, const char *origin,
		       const char *site, const char *authz, const char *cookie)
{
	struct admin_auth_request r = {
		.method = method,
		.url = url,
		.host = host,
		.origin = origin,
		.sec_fetch_site = site,
		.authorization = authz,
		.cookie = cookie,
	};
	struct admin_auth_verdict v;

	admin_auth_decide(a, &r, 1000, &v);
	assert_true(v.status == 0 || v.why[0]);
	assert_false(v.status == 0 && !v.authenticated && strcmp(url, "/") &&
		     strcmp(url, "/index.html") &&
		     strcmp(url, "/dashboard.js") && strcmp(url, "/chart.js") &&
		     strcmp(url, "/login") && strcmp(url, "/logout") &&
		     strcmp(url, "/metrics"));
	return v.status;
}

#define BEARER "Bearer " TOKEN

static void test_host_allowlist(void **state)
{
	struct admin_auth *a = &((struct auth_fixture *)*state)->auth;
	static const char *const good[] = {
		"127.0.0.1",	  "127.0.0.1:8049",
		"localhost",	  "LOCALHOST:8049",
		"[::1]",	  "[::1]:8049",
		"nas1.example",	  "nas2.example:8049",
		"[fd00::5]:8049",
	};
	static const char *const bad[] = {
		"evil.example",
		"evil.example:8049",
		"127.0.0.1:8050",
		"127.0.0.1:",
		"127.0.0.1:80490",
		"127.0.0.1:+8049",
		"::1",
		"[::1",
		"[::1]x",
		"",
		"nas1.example.evil.example",
		"localhost.",
		"127.0.0.2",
		"nas1.example:8049:1",
		"nas1 example",
		"0.0.0.0",
	};

	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		assert_int_equal(decide(a, "GET", "/volumes", good[i], NULL,
					NULL, BEARER, NULL),
				 0);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_equal(decide(a, "GET", "/volumes", bad[i], NULL,
					NULL, BEARER, NULL),
				 421);
		/* the pages too: a rebound name gets nothing */
		assert_int_equal(
			decide(a, "GET", "/", bad[i], NULL, NULL, NULL, NULL),
			421);
	}
	assert_int_equal(
		decide(a, "GET", "/volumes", NULL, NULL, NULL, BEARER, NULL),
		421);
}

static void test_allowed_hosts_checked(void **state)
{
	struct admin_auth a;
	struct admin_auth_config cfg = { .listen = "127.0.0.1", .port = 1 };
	char err[256];

	(void)state;
	cfg.allowed_hosts = "good.example bad/host";
	assert_int_equal(admin_auth_init(&a, &cfg, TOKEN, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "'bad/host' is not a host name"));
	cfg.allowed_hosts = "a b c d e f g h i j k l m n o p q";
	assert_int_equal(admin_auth_init(&a, &cfg, TOKEN, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "more than 16"));
	/* The listen literal, bracketed IPv6 in the config or not. */
	cfg.allowed_hosts = NULL;
	cfg.listen = "[FD00::7]";
	assert_int_equal(admin_auth_init(&a, &cfg, TOKEN, err, sizeof(err)), 0);
	assert_int_equal(decide(&a, "GET", "/volumes", "[fd00::7]:1", NULL,
				NULL, BEARER, NULL),
			 0);
	admin_auth_fini(&a);
	cfg.listen = "0.0.0.0";
	assert_int_equal(admin_auth_init(&a, &cfg, TOKEN, err, sizeof(err)), 0);
	assert_int_equal(decide(&a, "GET", "/volumes", "0.0.0.0:1", NULL, NULL,
				BEARER, NULL),
			 421);
	admin_auth_fini(&a);
}

static void test_origin_and_fetch_site(void **state)
{
	struct admin_auth *a = &((struct auth_fixture *)*state)->auth;
	static const char *const methods[] = { "GET", "HEAD", "POST", "PATCH",
					       "DELETE" };

	for (size_t i = 0; i < ARRAY_SIZE(methods); i++) {
		const char *m = methods[i];

		assert_int_equal(decide(a, m, "/volumes", "127.0.0.1:8049",
					"http://evil.example", NULL, BEARER,
					NULL),
				 403);
		assert_int_equal(decide(a, m, "/volumes", "127.0.0.1:8049",
					"null", NULL, BEARER, NULL),
				 403);
		assert_int_equal(decide(a, m, "/volumes", "127.0.0.1:8049",
					NULL, "cross-site", BEARER, NULL),
				 403);
		assert_int_equal(decide(a, m, "/volumes", "127.0.0.1:8049",
					NULL, "same-site", BEARER, NULL),
				 403);
	}
	/* another name of this endpoint is another origin */
	assert_int_equal(decide(a, "GET", "/volumes", "127.0.0.1:8049",
				"http://localhost:8049", NULL, BEARER, NULL),
			 403);
	/* the scheme counts */
	assert_int_equal(decide(a, "GET", "/volumes", "127.0.0.1:8049",
				"https://127.0.0.1:8049", NULL, BEARER, NULL),
			 403);
	assert_int_equal(decide(a, "GET", "/volumes", "127.0.0.1:8049",
				"http://127.0.0.1:8049", "same-origin", BEARER,
				NULL),
			 0);
	assert_int_equal(decide(a, "GET", "/volumes", "127.0.0.1:8049",
				"HTTP://127.0.0.1:8049", "none", BEARER, NULL),
			 0);
	/* the login itself: cross-origin is refused before the token */
	assert_int_equal(decide(a, "POST", "/login", "127.0.0.1:8049",
				"http://evil.example", NULL, NULL, NULL),
			 403);
	assert_int_equal(decide(a, "POST", "/login", "127.0.0.1:8049",
				"http://127.0.0.1:8049", "same-origin", NULL,
				NULL),
			 0);
}

static void test_credentials(void **state)
{
	struct admin_auth *a = &((struct auth_fixture *)*state)->auth;
	char wrong[] = BEARER;

	assert_int_equal(decide(a, "GET", "/volumes", "127.0.0.1", NULL, NULL,
				NULL, NULL),
			 401);
	assert_int_equal(decide(a, "POST", "/volumes/ds1/snapshots",
				"127.0.0.1", NULL, NULL, NULL, NULL),
			 401);
	assert_int_equal(decide(a, "GET", "/volumes", "127.0.0.1", NULL, NULL,
				"bearer " TOKEN, NULL),
			 0);
	assert_int_equal(decide(a, "GET", "/volumes", "127.0.0.1", NULL, NULL,
				"Basic " TOKEN, NULL),
			 401);
	wrong[sizeof(wrong) - 2] = 'e';
	assert_int_equal(decide(a, "GET", "/volumes", "127.0.0.1", NULL, NULL,
				wrong, NULL),
			 401);
	assert_int_equal(decide(a, "GET", "/volumes", "127.0.0.1", NULL, NULL,
				BEARER "0", NULL),
			 401);
	assert_int_equal(decide(a, "GET", "/volumes", "127.0.0.1", NULL, NULL,
				"Bearer ", NULL),
			 401);
	/* /metrics needs it by default; the pages do not */
	assert_int_equal(decide(a, "GET", "/metrics", "127.0.0.1", NULL, NULL,
				NULL, NULL),
			 401);
	assert_int_equal(
		decide(a, "GET", "/", "127.0.0.1", NULL, NULL, NULL, NULL), 0);
	assert_int_equal(decide(a, "GET", "/chart.js", "127.0.0.1", NULL, NULL,
				NULL, NULL),
			 0);
	assert_int_equal(
		decide(a, "POST", "/", "127.0.0.1", NULL, NULL, NULL, NULL),
		401);
	assert_int_equal(
		decide(a, "GET", "/login", "127.0.0.1", NULL, NULL, NULL, NULL),
		401);
	a->metrics_auth = false;
	assert_int_equal(decide(a, "GET", "/metrics", "127.0.0.1", NULL, NULL,
				NULL, NULL),
			 0);
	assert_int_equal(decide(a, "GET", "/metrics", "evil.example", NULL,
				NULL, NULL, NULL),
			 421);
}

static void test_token_equal(void **state)
{
	(void)state;
	assert_true(admin_auth_token_equal(TOKEN, TOKEN));
	assert_false(admin_auth_token_equal(TOKEN, NULL));
	assert_false(admin_auth_token_equal(TOKEN, ""));
	assert_false(admin_auth_token_equal(TOKEN, TOKEN "0"));
	assert_false(admin_auth_token_equal(TOKEN, "0123456789abcdef"));
}

static void test_sessions(void **state)
{
	struct admin_auth *a = &((struct auth_fixture *)*state)->auth;
	char id[ADMIN_TOKEN_HEX_LEN + 1], first[ADMIN_TOKEN_HEX_LEN + 1];
	char cookie[160];
	struct admin_auth_request r = { .method = "GET",
					.url = "/volumes",
					.host = "127.0.0.1" };
	struct admin_auth_verdict v;

	assert_int_equal(admin_auth_login(a, "nope", 1000, id), -EACCES);
	assert_int_equal(admin_auth_login(a, TOKEN, 1000, id), 0);
	assert_string_not_equal(id, TOKEN);
	snprintf(cookie, sizeof(cookie), "a=b; dsnfs_session=%s; c=d", id);
	r.cookie = cookie;
	admin_auth_decide(a, &r, 1000, &v);
	assert_int_equal(v.status, 0);
	assert_true(v.authenticated);
	/* expired */
	admin_auth_decide(a, &r, 1000 + ADMIN_SESSION_LIFETIME_S, &v);
	assert_int_equal(v.status, 401);
	/* a cookie of another name, or a changed id */
	snprintf(cookie, sizeof(cookie), "xdsnfs_session=%s", id);
	admin_auth_decide(a, &r, 1001, &v);
	assert_int_equal(v.status, 401);
	snprintf(cookie, sizeof(cookie), "dsnfs_session=%.63s", id);
	admin_auth_decide(a, &r, 1001, &v);
	assert_int_equal(v.status, 401);
	/* a wrong bearer is refused even with a good cookie */
	snprintf(cookie, sizeof(cookie), "dsnfs_session=%s", id);
	r.authorization = "Bearer 00";
	admin_auth_decide(a, &r, 1001, &v);
	assert_int_equal(v.status, 401);
	r.authorization = NULL;
	/* logout ends it */
	admin_auth_logout(a, cookie);
	admin_auth_decide(a, &r, 1001, &v);
	assert_int_equal(v.status, 401);
	/* more logins than slots: the oldest goes */
	assert_int_equal(admin_auth_login(a, TOKEN, 2000, first), 0);
	for (int i = 1; i <= ADMIN_SESSIONS_MAX; i++) {
		assert_int_equal(admin_auth_login(a, TOKEN, 2000 + i, id), 0);
	}
	snprintf(cookie, sizeof(cookie), "dsnfs_session=%s", first);
	admin_auth_decide(a, &r, 2100, &v);
	assert_int_equal(v.status, 401);
	snprintf(cookie, sizeof(cookie), "dsnfs_session=%s", id);
	admin_auth_decide(a, &r, 2100, &v);
	assert_int_equal(v.status, 0);
}

static void test_peer_logged_once(void **state)
{
	struct admin_auth *a = &((struct auth_fixture *)*state)->auth;
	char peer[32];
	int logged = 0;

	assert_true(admin_auth_peer_first(a, "127.0.0.1"));
	assert_false(admin_auth_peer_first(a, "127.0.0.1"));
	assert_true(admin_auth_peer_first(a, "::1"));
	/* a flood of peers: the table fills, one line says so, then quiet */
	for (int i = 0; i < 3 * ADMIN_AUTH_PEERS_LOGGED; i++) {
		snprintf(peer, sizeof(peer), "10.0.%d.%d", i / 256, i % 256);
		logged += admin_auth_peer_first(a, peer);
	}
	assert_int_equal(logged, ADMIN_AUTH_PEERS_LOGGED - 2 + 1);
}

/* The [admin] keys of the walls (config.c). */
static void test_config_keys(void **state)
{
	struct admin_config cfg;
	char err[256];

	(void)state;
	admin_config_default(&cfg);
	assert_true(cfg.metrics_auth);
	assert_string_equal(cfg.allowed_hosts, "");
	assert_int_equal(admin_config_section(&cfg, "admin", "allowed_hosts",
					      "a.example b.example", err,
					      sizeof(err)),
			 0);
	assert_string_equal(cfg.allowed_hosts, "a.example b.example");
	assert_int_equal(admin_config_section(&cfg, "admin", "metrics_auth",
					      "false", err, sizeof(err)),
			 0);
	assert_false(cfg.metrics_auth);
	assert_int_equal(admin_config_section(&cfg, "admin", "metrics_auth",
					      "maybe", err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "true or false"));
	assert_int_equal(admin_config_section(&cfg, "admin", "tls_cert",
					      "/etc/dsnfs/a.crt", err,
					      sizeof(err)),
			 0);
	assert_string_equal(cfg.tls_cert, "/etc/dsnfs/a.crt");
	assert_int_equal(admin_config_section(&cfg, "admin", "nope", "1", err,
					      sizeof(err)),
			 -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_token_made_once_0600,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_token_two_makes_differ,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_token_refused_mode, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_token_refused_owner, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_token_refused_not_regular,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_token_refused_malformed,
						setup, teardown),
		cmocka_unit_test(test_token_path_order),
		cmocka_unit_test_setup_teardown(test_host_allowlist, setup,
						teardown),
		cmocka_unit_test(test_allowed_hosts_checked),
		cmocka_unit_test_setup_teardown(test_origin_and_fetch_site,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_credentials, setup,
						teardown),
		cmocka_unit_test(test_token_equal),
		cmocka_unit_test_setup_teardown(test_sessions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_peer_logged_once, setup,
						teardown),
		cmocka_unit_test(test_config_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
