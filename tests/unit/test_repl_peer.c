// SPDX-License-Identifier: Apache-2.0
/*
 * The destination side of a replication relation (nfsd/repl/peer.c,
 * dst_local.c, wire.c): a message with the relation's key is applied
 * beneath its datastore; a missing or wrong key (401), a relation not
 * configured (404), a body that is not a message (400) are refused with
 * nothing written; paths that leave the datastore ("..", absolute, a
 * symlink on the way, .snapshot) are refused with nothing written
 * outside; a block whose xxh64 is not the one sent is refused (EIO); a
 * relation broken on the destination takes no more writes until resync;
 * a key file readable by others or not 64 hex digits is refused.  The
 * transfer being applied (undo.h): no tree operation outside BEGIN ..
 * COMMIT (-ESTALE); a BEGIN of the same transfer resumes it, ABORT, a
 * break and a restart (the peers made again) undo it; a baseline BEGIN
 * into a datastore that holds something is refused and marks nothing; a
 * COMMIT of another transfer is refused.  The source's end takes only
 * HELLO and REVERSE; a CephFS source's entry (source only) takes HELLO
 * with its key, refuses a REVERSE and every other operation with 409
 * and why, is never a replica and writes nothing.  A message of another
 * wire version is refused (400) with the versions in its reason,
 * nothing applied.  A WRITE of up to REPL_WRITE_MAX (16 blocks) is
 * applied, a larger one refused by the encoder and the decoder; the
 * file is kept open from its OPEN to its ATTRS (one descriptor more, not
 * one per WRITE) and closed by a REMOVE (a WRITE after it never lands in
 * the removed file), a refused WRITE (its bytes not written), ABORT and
 * a break.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "nfsd/repl/peer.h"

#define KEY "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define AUTH "Bearer " KEY

struct lab {
	char root[64], ds[96], out[96], keyf[96], applying[128];
	struct repl_peers peers;
};

/* The marker of transfer "repl-r1-1", a baseline, as BEGIN makes it. */
static void mark(const struct lab *l)
{
	FILE *f = fopen(l->applying, "w");

	assert_non_null(f);
	fputs("repl-r1-1 \n", f);
	fclose(f);
}

static int sh(const char *fmt, const char *a)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), fmt, a, a, a, a, a);
	return system(cmd);
}

static int setup(void **state)
{
	struct lab *l = calloc(1, sizeof(*l));
	char err[256];

	assert_non_null(l);
	strcpy(l->root, "/tmp/test_repl_peer.XXXXXX");
	assert_non_null(mkdtemp(l->root));
	snprintf(l->ds, sizeof(l->ds), "%s/ds", l->root);
	snprintf(l->out, sizeof(l->out), "%s/outside", l->root);
	snprintf(l->keyf, sizeof(l->keyf), "%s/r1.key", l->root);
	assert_int_equal(sh("cd %s && mkdir ds outside ds/.snapshot && "
			    "ln -s ../outside ds/link && echo " KEY
			    " > r1.key && chmod 600 r1.key",
			    l->root),
			 0);
	assert_int_equal(repl_peers_add(&l->peers, "r1", "ds", l->ds, "",
					l->root, l->keyf, NULL, true, err,
					sizeof(err)),
			 0);
	snprintf(l->applying, sizeof(l->applying), "%s/repl-r1.applying",
		 l->root);
	mark(l);
	*state = l;
	return 0;
}

static int teardown(void **state)
{
	struct lab *l = *state;

	repl_peers_fini(&l->peers);
	(void)sh("rm -rf %s", l->root);
	free(l);
	return 0;
}

/* Sends @m for @rel with @auth; returns the status, the result in @r. */
static unsigned send_msg(struct lab *l, const char *rel, const char *auth,
			 const struct repl_msg *m, struct repl_result *r)
{
	unsigned char out[REPL_RESULT_HEAD + REPL_REASON_MAX], *b;
	long n = repl_msg_encode(m, &b);
	size_t olen;
	unsigned st;

	assert_true(n > 0);
	st = repl_peers_handle(&l->peers, rel, auth, b, (size_t)n, out, &olen);
	free(b);
	assert_int_equal(repl_result_decode(out, olen, r), 0);
	return st;
}

static struct repl_msg open_msg(const char *path)
{
	struct repl_msg m = { .op = REPL_OP_OPEN, .size = 4096 };

	snprintf(m.path, sizeof(m.path), "%s", path);
	return m;
}

static bool exists(const char *dir, const char *rel)
{
	char p[256];
	struct stat sb;

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	return lstat(p, &sb) == 0;
}

static void refuses_callers(void **state)
{
	struct lab *l = *state;
	struct repl_msg m = open_msg("a.vmdk");
	struct repl_result r;

	assert_int_equal(send_msg(l, "r1", NULL, &m, &r), 401);
	assert_int_equal(send_msg(l, "r1", "Bearer 0123", &m, &r), 401);
	assert_int_equal(send_msg(l, "r1",
				  "Bearer "
				  "1123456789abcdef0123456789abcdef0123456789ab"
				  "cdef0123456789abcdef",
				  &m, &r),
			 401);
	assert_int_equal(send_msg(l, "r1", "Basic " KEY, &m, &r), 401);
	assert_int_equal(send_msg(l, "r2", AUTH, &m, &r), 404);
	assert_int_equal(r.err, -ENOENT);
	assert_false(exists(l->ds, "a.vmdk"));
	assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
	assert_int_equal(r.err, 0);
	assert_true(exists(l->ds, "a.vmdk"));
}

static void refuses_escapes(void **state)
{
	static const char *const bad[] = {
		"../outside/x", "/etc/dsnfs-x",	     "link/x", "a//b", "./x",
		".snapshot/x",	"d/../../outside/x", "",
	};
	struct lab *l = *state;
	struct repl_result r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct repl_msg m = open_msg(bad[i]);

		assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
		assert_int_not_equal(r.err, 0);
		m.op = REPL_OP_MKDIR;
		assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
		assert_int_not_equal(r.err, 0);
	}
	assert_false(exists(l->out, "x"));
	assert_false(exists("/etc", "dsnfs-x"));
	assert_false(exists(l->ds, ".snapshot/x"));
	/* The symlink itself is an entry of the datastore: replaced, and
	 * what it pointed to stays as it was. */
	{
		struct repl_msg m = open_msg("link");

		assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
		assert_int_equal(r.err, 0);
		assert_false(exists(l->out, "link"));
	}
	/* A symlink's target is data: it is made, never followed. */
	{
		struct repl_msg m = { .op = REPL_OP_SYMLINK,
				      .arg = "/etc/passwd",
				      .arg_len = 11 };

		strcpy(m.path, "sl");
		assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
		assert_int_equal(r.err, 0);
		m = open_msg("sl/x");
		assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
		assert_int_not_equal(r.err, 0);
	}
}

static void writes_checked(void **state)
{
	struct lab *l = *state;
	struct repl_msg m = open_msg("b.vmdk");
	unsigned char blk[4096], back[4096];
	struct repl_result r;
	char p[256];
	int fd;

	memset(blk, 0x5a, sizeof(blk));
	assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
	m = (struct repl_msg){ .op = REPL_OP_WRITE,
			       .data = blk,
			       .len = sizeof(blk),
			       .xxh = repl_write_hash(blk, sizeof(blk)) + 1 };
	strcpy(m.path, "b.vmdk");
	assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
	assert_int_equal(r.err, -EIO);
	m.xxh--;
	assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
	assert_int_equal(r.err, 0);
	snprintf(p, sizeof(p), "%s/b.vmdk", l->ds);
	fd = open(p, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, back, sizeof(back)), sizeof(back));
	close(fd);
	assert_memory_equal(back, blk, sizeof(blk));
	/* Not a message: 400, nothing applied. */
	{
		unsigned char out[REPL_RESULT_HEAD + REPL_REASON_MAX];
		size_t olen;

		assert_int_equal(repl_peers_handle(&l->peers, "r1", AUTH,
						   (const unsigned char *)"xx",
						   2, out, &olen),
				 400);
	}
}

static void broken_takes_no_writes(void **state)
{
	struct lab *l = *state;
	struct repl_msg m = { .op = REPL_OP_BREAK };
	struct repl_result r;

	assert_true(repl_peers_feeding(&l->peers, "r1"));
	assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
	assert_false(repl_peers_feeding(&l->peers, "r1"));
	m = open_msg("c.vmdk");
	assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 409);
	assert_false(exists(l->ds, "c.vmdk"));
	m = (struct repl_msg){ .op = REPL_OP_RESYNC };
	assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
	assert_int_equal(r.err, 0);
	assert_true(repl_peers_feeding(&l->peers, "r1"));
}

static struct repl_msg arg_msg(unsigned op, const char *arg)
{
	struct repl_msg m = { .op = (uint8_t)op,
			      .arg = arg,
			      .arg_len = strlen(arg) };

	return m;
}

static void transfer_marker_undone(void **state)
{
	struct lab *l = *state;
	struct repl_msg m = arg_msg(REPL_OP_BEGIN, "repl-r1-1 ");
	struct repl_result r;
	char err[256];

	/* The datastore holds "link": a baseline is refused, no marker. */
	assert_int_equal(unlink(l->applying), 0);
	assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
	assert_int_equal(r.err, -ENOTEMPTY);
	assert_int_equal(access(l->applying, F_OK), -1);
	m = open_msg("x.vmdk");
	assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
	assert_int_equal(r.err, -ESTALE);
	assert_false(exists(l->ds, "x.vmdk"));

	/* Empty: BEGIN marks, the same BEGIN resumes, ABORT undoes. */
	assert_int_equal(sh("rm %s/ds/link", l->root), 0);
	m = arg_msg(REPL_OP_BEGIN, "repl-r1-1 ");
	assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
	assert_int_equal(r.err, 0);
	assert_int_equal(r.value, 0);
	m = open_msg("x.vmdk");
	assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
	assert_int_equal(r.err, 0);
	m = arg_msg(REPL_OP_BEGIN, "repl-r1-1 ");
	assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
	assert_int_equal(r.value, 1);
	assert_true(exists(l->ds, "x.vmdk"));
	m = arg_msg(REPL_OP_COMMIT, "repl-r1-9");
	assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
	assert_int_equal(r.err, -ESTALE);
	m = arg_msg(REPL_OP_ABORT, "");
	assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
	assert_int_equal(r.err, 0);
	assert_false(exists(l->ds, "x.vmdk"));
	assert_true(exists(l->ds, ".snapshot"));
	assert_int_equal(access(l->applying, F_OK), -1);

	/* Another transfer's BEGIN undoes the one applied in part. */
	m = arg_msg(REPL_OP_BEGIN, "repl-r1-1 ");
	assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
	m = open_msg("y.vmdk");
	assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
	m = arg_msg(REPL_OP_BEGIN, "repl-r1-2 ");
	assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
	assert_int_equal(r.err, 0);
	assert_int_equal(r.value, 0);
	assert_false(exists(l->ds, "y.vmdk"));

	/* The restart (the table made again) undoes it. */
	m = open_msg("z.vmdk");
	assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
	assert_true(exists(l->ds, "z.vmdk"));
	repl_peers_fini(&l->peers); /* the server stopped */
	memset(&l->peers.list, 0, sizeof(l->peers.list));
	l->peers.n = 0;
	assert_int_equal(repl_peers_add(&l->peers, "r1", "ds", l->ds, "",
					l->root, l->keyf, NULL, true, err,
					sizeof(err)),
			 0);
	assert_false(exists(l->ds, "z.vmdk"));
	assert_int_equal(access(l->applying, F_OK), -1);

	/* A break undoes it too. */
	m = arg_msg(REPL_OP_BEGIN, "repl-r1-3 ");
	assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
	m = open_msg("w.vmdk");
	assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
	assert_int_equal(repl_peers_break(&l->peers, "r1", err, sizeof(err)),
			 0);
	assert_false(exists(l->ds, "w.vmdk"));
	assert_false(repl_peers_feeding(&l->peers, "r1"));
}

static void old_version_refused(void **state)
{
	struct lab *l = *state;
	unsigned char out[REPL_RESULT_HEAD + REPL_REASON_MAX], *b;
	struct repl_msg m = open_msg("v2.vmdk");
	struct repl_result r;
	size_t olen;
	long n = repl_msg_encode(&m, &b);

	assert_true(n > 0);
	b[4] = 2; /* a source of the version before (64 KiB WRITEs) */
	assert_int_equal(repl_peers_handle(&l->peers, "r1", AUTH, b, (size_t)n,
					   out, &olen),
			 400);
	free(b);
	assert_int_equal(repl_result_decode(out, olen, &r), 0);
	assert_int_equal(r.err, -EINVAL);
	assert_non_null(strstr(r.reason, "version 2"));
	assert_non_null(strstr(r.reason, "speaks 3"));
	assert_false(exists(l->ds, "v2.vmdk"));
}

/* Descriptors this process holds. */
static int fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d)) {
		n++;
	}
	closedir(d);
	return n;
}

static struct repl_msg write_msg(const char *path, const void *data, size_t len,
				 uint64_t off)
{
	struct repl_msg m = { .op = REPL_OP_WRITE,
			      .data = data,
			      .len = len,
			      .off = off,
			      .xxh = repl_write_hash(data, len) };

	snprintf(m.path, sizeof(m.path), "%s", path);
	return m;
}

static void writes_runs_file_kept(void **state)
{
	struct lab *l = *state;
	unsigned char *run = malloc(REPL_WRITE_MAX + 1), *back, *b;
	struct repl_msg m = open_msg("c.vmdk");
	char p[256], why[256], *arg;
	struct repl_result r;
	int base = fds(), fd;
	long n;

	assert_non_null(run);
	back = malloc(REPL_WRITE_MAX);
	assert_non_null(back);
	for (size_t i = 0; i <= REPL_WRITE_MAX; i++) {
		run[i] = (unsigned char)(i * 2654435761u >> 11);
	}
	m.size = 2 * REPL_WRITE_MAX;
	assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
	assert_int_equal(r.err, 0);
	assert_int_equal(fds(), base + 1);
	/* 16 blocks in one message, twice: the same descriptor. */
	m = write_msg("c.vmdk", run, REPL_WRITE_MAX, 0);
	assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
	assert_int_equal(r.err, 0);
	m.off = REPL_WRITE_MAX;
	assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
	assert_int_equal(r.err, 0);
	assert_int_equal(fds(), base + 1);
	snprintf(p, sizeof(p), "%s/c.vmdk", l->ds);
	fd = open(p, O_RDONLY);
	assert_true(fd >= 0);
	base++; /* this test's own */
	assert_int_equal(pread(fd, back, REPL_WRITE_MAX, REPL_WRITE_MAX),
			 (ssize_t)REPL_WRITE_MAX);
	assert_memory_equal(back, run, REPL_WRITE_MAX);
	/* The file's end: synced and closed. */
	m = (struct repl_msg){ .op = REPL_OP_ATTRS,
			       .flags = REPL_FLAG_SYNC,
			       .mode = 0640 };
	strcpy(m.path, "c.vmdk");
	assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
	assert_int_equal(r.err, 0);
	assert_int_equal(fds(), base);

	/* One byte more than a message holds: refused both ways. */
	m = write_msg("c.vmdk", run, REPL_WRITE_MAX + 1, 0);
	assert_int_equal(repl_msg_encode(&m, &b), -E2BIG);
	m.len = REPL_WRITE_MAX;
	n = repl_msg_encode(&m, &b);
	assert_true(n > 0);
	b = realloc(b, (size_t)n + 1);
	assert_non_null(b);
	b[16] = 1; /* data length REPL_WRITE_MAX + 1 (little-endian) */
	b[(size_t)n] = 0;
	assert_int_not_equal(
		repl_msg_decode(b, (size_t)n + 1, &m, &arg, why, sizeof(why)),
		0);
	free(b);

	/* A WRITE whose bytes are not the snapshot's: refused before they
	 * are written, the file closed. */
	m = open_msg("c.vmdk");
	m.size = 2 * REPL_WRITE_MAX;
	assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
	m = write_msg("c.vmdk", run + 1, REPL_BLOCK, 3 * REPL_BLOCK);
	m.xxh++;
	assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
	assert_int_equal(r.err, -EIO);
	assert_int_equal(fds(), base);
	assert_int_equal(pread(fd, back, REPL_BLOCK, 3 * REPL_BLOCK),
			 (ssize_t)REPL_BLOCK);
	assert_memory_equal(back, run + 3 * REPL_BLOCK, REPL_BLOCK);

	/* A REMOVE closes it: the next WRITE finds no file, and writes
	 * nothing into the removed one. */
	m = write_msg("c.vmdk", run, REPL_BLOCK, 0);
	assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
	assert_int_equal(fds(), base + 1);
	m = (struct repl_msg){ .op = REPL_OP_REMOVE };
	strcpy(m.path, "c.vmdk");
	assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
	assert_int_equal(r.err, 0);
	assert_int_equal(fds(), base);
	m = write_msg("c.vmdk", run, REPL_BLOCK, 0);
	assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
	assert_int_equal(r.err, -ENOENT);
	assert_false(exists(l->ds, "c.vmdk"));
	close(fd);
	base--;

	/* ABORT and a break close it. */
	m = open_msg("d.vmdk");
	assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
	assert_int_equal(fds(), base + 1);
	m = arg_msg(REPL_OP_ABORT, "");
	assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
	assert_int_equal(fds(), base);
	mark(l);
	m = open_msg("e.vmdk");
	assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
	assert_int_equal(fds(), base + 1);
	assert_int_equal(repl_peers_break(&l->peers, "r1", why, sizeof(why)),
			 0);
	assert_int_equal(fds(), base);
	free(back);
	free(run);
}

static void source_end_takes_hello_only(void **state)
{
	struct lab *l = *state;
	struct repl_msg m = open_msg("s.vmdk");
	struct repl_result r;

	assert_int_equal(repl_peers_set(&l->peers, "r1", false, false), 0);
	assert_false(repl_peers_feeding(&l->peers, "r1"));
	assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 409);
	assert_false(exists(l->ds, "s.vmdk"));
	m = (struct repl_msg){ .op = REPL_OP_HELLO };
	assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
	assert_int_equal(r.err, 0);
	/* No service here to take it: REVERSE is refused. */
	m = arg_msg(REPL_OP_REVERSE, "repl-r1-1");
	assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
	assert_int_equal(r.err, -EOPNOTSUPP);
}

/* The service's reverse: a source-only entry never gets there. */
static int reverse_never(void *arg, const char *name, const char *common,
			 char *reason, size_t len)
{
	(void)arg;
	(void)name;
	(void)common;
	(void)reason;
	(void)len;
	fail_msg("a source-only entry reached the service's reverse");
	return -EIO;
}

static void source_only_says_why(void **state)
{
	struct lab *l = *state;
	struct repl_msg m = arg_msg(REPL_OP_REVERSE, "repl-r9-1");
	struct repl_result r;
	char why[512], last[SNAP_NAME_MAX + 1] = "x";
	bool broken = true, applying = true;
	DIR *d;
	size_t n0 = l->peers.n, entries = 0;

	l->peers.reverse = reverse_never;
	/* Its key file must be one: nothing added otherwise. */
	assert_int_equal(sh("chmod 644 %s/r1.key", l->root), 0);
	assert_int_equal(repl_peers_add_source_only(&l->peers, "r9", "cephds",
						    l->keyf, why, sizeof(why)),
			 -EPERM);
	assert_int_equal(l->peers.n, n0);
	assert_int_equal(sh("chmod 600 %s/r1.key", l->root), 0);
	assert_int_equal(repl_peers_add_source_only(&l->peers, "r9", "cephds",
						    l->keyf, why, sizeof(why)),
			 0);

	/* No key, or a wrong one: 401, nothing said of the relation. */
	assert_int_equal(send_msg(l, "r9", NULL, &m, &r), 401);
	assert_null(strstr(r.reason, "CephFS"));
	assert_int_equal(send_msg(l, "r9", "Bearer 0123", &m, &r), 401);
	assert_null(strstr(r.reason, "CephFS"));

	/* HELLO answered, as any end's: the pair checked. */
	m = arg_msg(REPL_OP_HELLO, "m:1:2 cephds");
	assert_int_equal(send_msg(l, "r9", AUTH, &m, &r), 200);
	assert_int_equal(r.err, 0);
	m = arg_msg(REPL_OP_HELLO, "m:1:2 other");
	assert_int_equal(send_msg(l, "r9", AUTH, &m, &r), 200);
	assert_int_equal(r.err, -EINVAL);

	/* REVERSE: 409 and why. */
	m = arg_msg(REPL_OP_REVERSE, "repl-r9-1");
	assert_int_equal(send_msg(l, "r9", AUTH, &m, &r), 409);
	assert_int_equal(r.err, -EPERM);
	assert_non_null(strstr(r.reason,
			       "relation r9: datastore cephds here is on "
			       "CephFS: a replication source only; a reverse "
			       "would make it the destination, which is not "
			       "built"));

	/* Every other operation: 409, named. */
	for (unsigned op = REPL_OP_HELLO + 1; op <= REPL_OP_MAX; op++) {
		if (op == REPL_OP_REVERSE) {
			continue;
		}
		m = arg_msg(op, "repl-r9-1");
		strcpy(m.path, "s.vmdk");
		assert_int_equal(send_msg(l, "r9", AUTH, &m, &r), 409);
		assert_int_equal(r.err, -EPERM);
		assert_non_null(strstr(r.reason, "on CephFS"));
		assert_non_null(strstr(r.reason, repl_op_name(op)));
	}

	/* Never a replica, never set nor broken here, no state. */
	assert_false(repl_peers_feeding(&l->peers, "r9"));
	assert_int_equal(repl_peers_set(&l->peers, "r9", true, false), -EPERM);
	assert_false(repl_peers_feeding(&l->peers, "r9"));
	assert_int_equal(repl_peers_break(&l->peers, "r9", why, sizeof(why)),
			 -EPERM);
	assert_non_null(strstr(why, "on CephFS"));
	assert_int_equal(
		repl_peers_state(&l->peers, "r9", &broken, &applying, last), 0);
	assert_false(broken);
	assert_false(applying);
	assert_string_equal(last, "");

	/* Nothing written anywhere: ds holds .snapshot and link only. */
	d = opendir(l->ds);
	assert_non_null(d);
	for (struct dirent *e; (e = readdir(d));) {
		entries +=
			e->d_name[0] != '.' || !strcmp(e->d_name, ".snapshot");
	}
	closedir(d);
	assert_int_equal(entries, 2);

	/* Removed cleanly: 404 then, r1 as it was. */
	assert_int_equal(repl_peers_remove(&l->peers, "r9"), 0);
	assert_int_equal(l->peers.n, n0);
	m = arg_msg(REPL_OP_REVERSE, "repl-r9-1");
	assert_int_equal(send_msg(l, "r9", AUTH, &m, &r), 404);
	assert_int_equal(repl_peers_remove(&l->peers, "r9"), -ENOENT);
	assert_true(repl_peers_feeding(&l->peers, "r1"));
	m = open_msg("after.vmdk");
	assert_int_equal(send_msg(l, "r1", AUTH, &m, &r), 200);
}

static void key_files(void **state)
{
	struct lab *l = *state;
	char key[REPL_KEY_HEX_LEN + 1], err[256];

	assert_int_equal(repl_key_load(l->keyf, key, err, sizeof(err)), 0);
	assert_string_equal(key, KEY);
	assert_int_equal(sh("chmod 640 %s/r1.key", l->root), 0);
	assert_int_equal(repl_key_load(l->keyf, key, err, sizeof(err)), -EPERM);
	assert_int_equal(
		sh("echo short > %s/r1.key && chmod 600 %s/r1.key", l->root),
		0);
	assert_int_equal(repl_key_load(l->keyf, key, err, sizeof(err)),
			 -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(refuses_callers, setup,
						teardown),
		cmocka_unit_test_setup_teardown(refuses_escapes, setup,
						teardown),
		cmocka_unit_test_setup_teardown(writes_checked, setup,
						teardown),
		cmocka_unit_test_setup_teardown(broken_takes_no_writes, setup,
						teardown),
		cmocka_unit_test_setup_teardown(transfer_marker_undone, setup,
						teardown),
		cmocka_unit_test_setup_teardown(source_end_takes_hello_only,
						setup, teardown),
		cmocka_unit_test_setup_teardown(source_only_says_why, setup,
						teardown),
		cmocka_unit_test_setup_teardown(key_files, setup, teardown),
		cmocka_unit_test_setup_teardown(old_version_refused, setup,
						teardown),
		cmocka_unit_test_setup_teardown(writes_runs_file_kept, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
