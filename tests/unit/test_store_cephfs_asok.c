// SPDX-License-Identifier: Apache-2.0
/*
 * test_store_cephfs_asok: a cephfs mount's own admin socket and the name
 * of its MDS session, without a cluster: the parser of libcephfs's
 * `mds_sessions` answer (cephfs_evict.c), the socket's client against a
 * fake socket and the kick sent through it, the socket's path in the
 * state directory (cephfs_asok.c), and the session's name
 * (cephfs_reclaim.c).
 */
#include "nfsd/store/cephfs/cephfs_int.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/lib/log_capture.h"

/* libcephfs's `mds_sessions` answer (cephfs_evict.c): the session with
 * rank 0 of this client, stale or not; anything else is "cannot say". */
static int session_state(const char *json, uint64_t id)
{
	return store__cephfs_session_state(json, strlen(json), id);
}

static void test_session_state_reads_rank0_of_this_client(void **state)
{
	const char *open = "{\"id\": 4145, \"sessions\": [{\"mds\": 1, "
			   "\"state\": \"stale\"}, {\"mds\": 0, \"state\": "
			   "\"open\"}], \"mdsmap_epoch\": 9}";
	const char *stale = "{\"id\": 4145, \"sessions\": [{\"mds\": 0, "
			    "\"state\": \"stale\"}]}";

	(void)state;
	assert_int_equal(session_state(open, 4145), 1);
	assert_int_equal(session_state(stale, 4145), 0);
	/* Another client's socket says nothing of this one. */
	assert_int_equal(session_state(stale, 4146), -ESTALE);
	/* No session with rank 0 now (it failed over): cannot say. */
	assert_int_equal(session_state("{\"id\": 1, \"sessions\": []}", 1),
			 -ENOENT);
	assert_int_equal(
		session_state("{\"id\": 1, \"sessions\": [{\"mds\": 0}]}", 1),
		-EINVAL);
	assert_int_equal(session_state("{\"sessions\": []}", 1), -EINVAL);
	assert_int_equal(session_state("{\"id\": 1}", 1), -EINVAL);
	assert_int_equal(session_state("[]", 1), -EINVAL);
	assert_int_equal(session_state("{\"id\": 1, \"sess", 1), -EINVAL);
	assert_int_equal(session_state("", 1), -EINVAL);
}

/* A fake admin socket: one connection, the command read up to its NUL,
 * then @reply (a length and bytes, or less). */
struct fake_asok {
	char path[108];
	int lfd;
	char got[128];
	const void *reply;
	size_t reply_len;
	pthread_t thread;
};

static void *fake_asok_run(void *arg)
{
	struct fake_asok *fa = arg;
	int fd = accept(fa->lfd, NULL, NULL);
	size_t n = 0;

	if (fd < 0) {
		return NULL;
	}
	while (n < sizeof(fa->got) - 1 && read(fd, fa->got + n, 1) == 1 &&
	       fa->got[n] != '\0') {
		n++;
	}
	if (fa->reply_len) {
		(void)!write(fd, fa->reply, fa->reply_len);
	}
	close(fd);
	return NULL;
}

static void fake_asok_start(struct fake_asok *fa, const void *reply,
			    size_t reply_len)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };

	memset(fa->got, 0, sizeof(fa->got));
	snprintf(fa->path, sizeof(fa->path), "/tmp/test-asok-%d.asok",
		 (int)getpid());
	unlink(fa->path);
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", fa->path);
	fa->lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(fa->lfd >= 0);
	assert_int_equal(bind(fa->lfd, (struct sockaddr *)&addr, sizeof(addr)),
			 0);
	assert_int_equal(listen(fa->lfd, 1), 0);
	fa->reply = reply;
	fa->reply_len = reply_len;
	assert_int_equal(pthread_create(&fa->thread, NULL, fake_asok_run, fa),
			 0);
}

static void fake_asok_stop(struct fake_asok *fa)
{
	pthread_join(fa->thread, NULL);
	close(fa->lfd);
	unlink(fa->path);
}

static void test_asok_command_sends_and_reads_back(void **state)
{
	const char body[] = "{\"id\": 7}";
	unsigned char reply[4 + sizeof(body) - 1];
	struct fake_asok fa;
	char *out = NULL;
	size_t len = 0;

	(void)state;
	reply[0] = reply[1] = reply[2] = 0;
	reply[3] = (unsigned char)(sizeof(body) - 1);
	memcpy(reply + 4, body, sizeof(body) - 1);
	fake_asok_start(&fa, reply, sizeof(reply));
	assert_int_equal(
		store__cephfs_asok_command(
			fa.path, "{\"prefix\": \"mds_sessions\"}", &out, &len),
		0);
	fake_asok_stop(&fa);
	assert_string_equal(fa.got, "{\"prefix\": \"mds_sessions\"}");
	assert_int_equal(len, sizeof(body) - 1);
	assert_string_equal(out, body);
	free(out);
}

static void test_asok_command_errors_are_bounded(void **state)
{
	const unsigned char huge[4] = { 0x7f, 0xff, 0xff, 0xff };
	const unsigned char short_body[6] = { 0, 0, 0, 9, '{', '}' };
	struct fake_asok fa;
	char *out = NULL;
	size_t len = 0;
	char big[200];

	(void)state;
	/* No socket there. */
	assert_int_equal(store__cephfs_asok_command("/nonexistent/x.asok", "{}",
						    &out, &len),
			 -ENOENT);
	assert_null(out);
	/* An answer said longer than we take: not read. */
	fake_asok_start(&fa, huge, sizeof(huge));
	assert_int_equal(store__cephfs_asok_command(fa.path, "{}", &out, &len),
			 -EMSGSIZE);
	fake_asok_stop(&fa);
	/* The peer closes before the bytes it announced. */
	fake_asok_start(&fa, short_body, sizeof(short_body));
	assert_int_equal(store__cephfs_asok_command(fa.path, "{}", &out, &len),
			 -EPROTO);
	fake_asok_stop(&fa);
	/* Or before any length. */
	fake_asok_start(&fa, NULL, 0);
	assert_int_equal(store__cephfs_asok_command(fa.path, "{}", &out, &len),
			 -EPROTO);
	fake_asok_stop(&fa);
	assert_null(out);
	/* A command too long for the request buffer is not sent. */
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(store__cephfs_asok_command(fa.path, big, &out, &len),
			 -E2BIG);
}

/* The kick goes to the mount's own socket, on a thread of its own: in
 * progress until it answered, then 0; nothing without a socket. */
static void test_kick_stale_asks_the_mount_once_answered(void **state)
{
	const unsigned char empty[6] = { 0, 0, 0, 2, '{', '}' };
	struct timespec tick = { 0, 10 * 1000000 };
	struct store_cephfs sc;
	struct fake_asok fa;
	int rc = -EINPROGRESS;

	(void)state;
	memset(&sc, 0, sizeof(sc));
	snprintf(sc.base.name, sizeof(sc.base.name), "c1");
	assert_int_equal(store__cephfs_kick_stale(&sc), -ENOTSOCK);
	fake_asok_start(&fa, empty, sizeof(empty));
	snprintf(sc.asok, sizeof(sc.asok), "%s", fa.path);
	assert_int_equal(store__cephfs_kick_stale(&sc), -EINPROGRESS);
	for (int i = 0; i < 500 && rc == -EINPROGRESS; i++) {
		nanosleep(&tick, NULL);
		rc = store__cephfs_kick_stale(&sc);
	}
	fake_asok_stop(&fa);
	assert_int_equal(rc, 0);
	assert_string_equal(fa.got, "{\"prefix\": \"kick_stale_sessions\"}");
	assert_null(sc.ask);
	store__cephfs_ask_close(&sc);
}

/* The socket's path: in the state directory, one per mount. */
static void test_asok_set_names_one_per_mount(void **state)
{
	struct ceph_mount_info *cm = NULL;
	struct store_cephfs sc;
	char first[sizeof(sc.asok)], got[sizeof(sc.asok)];
	char longdir[200];

	(void)state;
	memset(&sc, 0, sizeof(sc));
	snprintf(sc.base.name, sizeof(sc.base.name), "ds1");
	assert_int_equal(ceph_create(&cm, "admin"), 0);
	assert_int_equal(store__cephfs_asok_set(&sc, cm, "/var/lib/x"), 0);
	assert_memory_equal(sc.asok, "/var/lib/x/ceph-ds1-", 20);
	assert_int_equal(ceph_conf_get(cm, "admin_socket", got, sizeof(got)),
			 0);
	assert_string_equal(got, sc.asok);
	snprintf(first, sizeof(first), "%s", sc.asok);
	assert_int_equal(store__cephfs_asok_set(&sc, cm, "/var/lib/x"), 0);
	assert_string_not_equal(sc.asok, first);
	/* None without a state directory, or past a socket's path. */
	assert_int_equal(store__cephfs_asok_set(&sc, cm, NULL), 0);
	assert_string_equal(sc.asok, "");
	memset(longdir, 'd', sizeof(longdir) - 1);
	longdir[0] = '/';
	longdir[sizeof(longdir) - 1] = '\0';
	assert_int_equal(store__cephfs_asok_set(&sc, cm, longdir), 0);
	assert_string_equal(sc.asok, "");
	assert_int_equal(ceph_conf_get(cm, "admin_socket", got, sizeof(got)),
			 0);
	assert_string_equal(got, "");
	assert_true(log_capture_contains("too long a path for a socket"));
	ceph_release(cm);
}

/* A session's name: this gateway's run (host, state directory) and the
 * datastore; two state directories, or two datastores, never share one.
 * With a RADOS log, its gateway's name instead: the gateway that takes
 * over a dead one's log, from another state directory or machine, names
 * the same session. */
static void test_session_uuid_names_the_run(void **state)
{
	char a[128], b[128], c[128], again[128], tiny[24], gw[128];

	(void)state;
	assert_int_equal(store__cephfs_session_uuid("vm", "/var/lib/dsnfs",
						    NULL, "ds1", a, sizeof(a)),
			 0);
	assert_int_equal(store__cephfs_session_uuid("vm", "/var/lib/dsnfs",
						    NULL, "ds1", again,
						    sizeof(again)),
			 0);
	assert_string_equal(a, again);
	assert_memory_equal(a, "dsnfsd-vm-", 10);
	assert_int_equal(strlen(a), strlen("dsnfsd-vm-") + 16 + strlen("-ds1"));
	assert_int_equal(store__cephfs_session_uuid("vm", "/var/lib/dsnfs2",
						    NULL, "ds1", b, sizeof(b)),
			 0);
	assert_string_not_equal(a, b);
	assert_int_equal(store__cephfs_session_uuid("vm", "/var/lib/dsnfs",
						    NULL, "ds2", c, sizeof(c)),
			 0);
	assert_string_not_equal(a, c);
	assert_int_equal(store__cephfs_session_uuid("vm", "/var/lib/dsnfs",
						    NULL, "ds1", tiny,
						    sizeof(tiny)),
			 -ENAMETOOLONG);
	assert_int_equal(store__cephfs_session_uuid("vm", "/var/lib/dsnfs",
						    "gwa", "ds1", gw,
						    sizeof(gw)),
			 0);
	assert_string_equal(gw, "dsnfsd-gw-gwa-ds1");
	assert_int_equal(store__cephfs_session_uuid("other", "/srv/state",
						    "gwa", "ds1", again,
						    sizeof(again)),
			 0);
	assert_string_equal(again, gw);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_session_state_reads_rank0_of_this_client),
		cmocka_unit_test(test_asok_command_sends_and_reads_back),
		cmocka_unit_test(test_asok_command_errors_are_bounded),
		cmocka_unit_test(test_kick_stale_asks_the_mount_once_answered),
		cmocka_unit_test(test_asok_set_names_one_per_mount),
		cmocka_unit_test(test_session_uuid_names_the_run),
	};

	log_capture_reset();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
