// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of a replication transfer (nfsd/repl/xfer.c) between plain
 * directories of the scratch file system (no reflink: every block is a
 * candidate, the xxh64 comparison with the base picks what is sent): a
 * baseline copies the tree, an incremental after one 64 KiB block changed
 * sends that block only, removes what the source lost, follows a file
 * turned into a directory; a baseline into a destination that is not
 * empty is refused and writes nothing; a transfer started again after a
 * kill skips the files its journal records while the destination still
 * holds the transfer in part (its marker, undo.h), and starts again
 * (restarted) when the destination undid it; a transfer that fails on
 * the destination's side is aborted there: the tree goes back to where
 * it was (a baseline's: empty).  Contiguous changed blocks go as one
 * WRITE of at most REPL_WRITE_MAX (16 blocks): a 48-block file and a
 * tail is 4 WRITEs; an incremental with runs of 3, 1 and 18 blocks and
 * the tail changed is 5 (the 18 cut at a 16-block chunk's end).
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

#include "nfsd/repl/xfer.h"

#include "nfsd/repl/dst.h"

struct dirs {
	char root[64];
	char s1[96], s2[96], dst[96], journal[96], applying[96];
};

static int setup(void **state)
{
	struct dirs *d = calloc(1, sizeof(*d));

	assert_non_null(d);
	strcpy(d->root, "/tmp/test_repl_xfer.XXXXXX");
	assert_non_null(mkdtemp(d->root));
	snprintf(d->s1, sizeof(d->s1), "%s/s1", d->root);
	snprintf(d->s2, sizeof(d->s2), "%s/s2", d->root);
	snprintf(d->dst, sizeof(d->dst), "%s/dst", d->root);
	snprintf(d->journal, sizeof(d->journal), "%s/journal", d->root);
	snprintf(d->applying, sizeof(d->applying), "%s/applying", d->root);
	assert_int_equal(mkdir(d->s1, 0755), 0);
	assert_int_equal(mkdir(d->s2, 0755), 0);
	assert_int_equal(mkdir(d->dst, 0755), 0);
	*state = d;
	return 0;
}

static int teardown(void **state)
{
	struct dirs *d = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", d->root);
	assert_int_equal(system(cmd), 0);
	free(d);
	return 0;
}

static void put(const char *dir, const char *rel, const void *buf, size_t len)
{
	char p[256];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

static int same(const char *a, const char *b)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd),
		 "diff -r --no-dereference -x .snapshot %s %s >/dev/null", a,
		 b);
	return system(cmd) == 0;
}

/* Owner, mode and mtime of @rel: the destination's are the source's. */
static void same_attrs(const struct dirs *d, const char *rel)
{
	char a[256], b[256];
	struct stat sa, sb;

	snprintf(a, sizeof(a), "%s/%s", d->s2, rel);
	snprintf(b, sizeof(b), "%s/%s", d->dst, rel);
	assert_int_equal(lstat(a, &sa), 0);
	assert_int_equal(lstat(b, &sb), 0);
	assert_int_equal(sa.st_mode, sb.st_mode);
	assert_int_equal(sa.st_uid, sb.st_uid);
	assert_int_equal(sa.st_mtim.tv_sec, sb.st_mtim.tv_sec);
	assert_int_equal(sa.st_mtim.tv_nsec, sb.st_mtim.tv_nsec);
}

static unsigned char *disk(size_t len)
{
	unsigned char *b = malloc(len);

	assert_non_null(b);
	for (size_t i = 0; i < len; i++) {
		b[i] = (unsigned char)(i * 2654435761u >> 13);
	}
	return b;
}

static void xfer_baseline_then_incremental(void **state)
{
	struct dirs *d = *state;
	size_t len = 1u << 20;
	unsigned char *b = disk(len);
	struct repl_xfer_args a = {
		.name = "r1", .src = d->s1, .dst = d->dst, .journal = d->journal
	};
	const struct timespec old[2] = { { 1000000000, 5 }, { 1000000000, 7 } };
	struct repl_xfer_stats st;
	char err[256] = "", p[256];

	put(d->s1, "disk-flat.vmdk", b, len);
	put(d->s1, "gone.txt", "x", 1);
	put(d->s1, "becomes-dir", "y", 1);
	snprintf(p, sizeof(p), "%s/link.vmdk", d->s1);
	assert_int_equal(symlink("disk-flat.vmdk", p), 0);
	assert_int_equal(repl_xfer_run(&a, &st, err, sizeof(err)), 0);
	assert_true(same(d->s1, d->dst));
	assert_int_equal(st.files, 3);
	assert_int_equal(st.sent_bytes, len + 2);
	assert_int_equal(access(d->journal, F_OK), -1); /* committed */

	/* The next snapshot: one block rewritten, a file gone, a file now a
	 * directory. */
	memset(b + 5 * REPL_BLOCK + 100, 0xab, 1000);
	put(d->s2, "disk-flat.vmdk", b, len);
	snprintf(p, sizeof(p), "%s/becomes-dir", d->s2);
	assert_int_equal(mkdir(p, 0755), 0);
	put(d->s2, "becomes-dir/in.txt", "z", 1);
	/* An owner, mode and times of its own (the owner needs root). */
	snprintf(p, sizeof(p), "%s/disk-flat.vmdk", d->s2);
	assert_int_equal(chmod(p, 0640), 0);
	if (geteuid() == 0) {
		assert_int_equal(chown(p, 1234, 1234), 0);
	}
	assert_int_equal(utimensat(AT_FDCWD, p, old, 0), 0);
	snprintf(p, sizeof(p), "%s/becomes-dir", d->s2);
	assert_int_equal(utimensat(AT_FDCWD, p, old, 0), 0);
	snprintf(p, sizeof(p), "%s/link.vmdk", d->s2);
	assert_int_equal(symlink("disk-flat.vmdk", p), 0);
	a.name = "r2";
	a.src = d->s2;
	a.base = d->s1;
	a.base_name = "r1";
	assert_int_equal(repl_xfer_run(&a, &st, err, sizeof(err)), 0);
	assert_true(same(d->s2, d->dst));
	assert_int_equal(st.sent_bytes, REPL_BLOCK + 1);
	/* gone.txt (becomes-dir is replaced, not counted) */
	assert_int_equal(st.removed, 1);
	same_attrs(d, "disk-flat.vmdk");
	same_attrs(d, "becomes-dir");
	same_attrs(d, "link.vmdk");
	free(b);
}

/* A destination that counts the WRITEs on their way to a repl_local. */
struct counting {
	struct repl_dst pub;
	struct repl_local l;
	unsigned writes;
	size_t largest;
};

static void counting_call(struct repl_dst *d, const struct repl_msg *m,
			  struct repl_result *r)
{
	struct counting *c = (struct counting *)d;

	if (m->op == REPL_OP_WRITE) {
		c->writes++;
		c->largest = m->len > c->largest ? m->len : c->largest;
	}
	repl_local_apply(&c->l, m, r);
}

static void xfer_runs_coalesced(void **state)
{
	struct dirs *d = *state;
	size_t len = 48 * REPL_BLOCK + 100;
	unsigned char *b = disk(len);
	struct counting c = { .pub.call = counting_call };
	struct repl_xfer_args a = { .name = "r1",
				    .src = d->s1,
				    .dst = d->dst,
				    .journal = d->journal,
				    .to = &c.pub };
	struct repl_xfer_stats st;
	char err[256] = "";

	assert_int_equal(repl_local_open(&c.l, d->dst, NULL, err, sizeof(err)),
			 0);
	put(d->s1, "disk-flat.vmdk", b, len);
	assert_int_equal(repl_xfer_run(&a, &st, err, sizeof(err)), 0);
	assert_true(same(d->s1, d->dst));
	assert_int_equal(st.sent_bytes, len);
	assert_int_equal(c.writes, 4);
	assert_int_equal(c.largest, REPL_WRITE_MAX);

	/* Blocks 0-2, 5, 20-37 and the tail rewritten. */
	for (size_t i = 0; i < 48; i++) {
		if (i <= 2 || i == 5 || (i >= 20 && i <= 37)) {
			b[i * REPL_BLOCK + 7] ^= 0xff;
		}
	}
	b[len - 1] ^= 0xff;
	put(d->s2, "disk-flat.vmdk", b, len);
	c.writes = 0;
	a.name = "r2";
	a.src = d->s2;
	a.base = d->s1;
	a.base_name = "r1";
	assert_int_equal(repl_xfer_run(&a, &st, err, sizeof(err)), 0);
	assert_true(same(d->s2, d->dst));
	assert_int_equal(st.sent_bytes, 22 * REPL_BLOCK + 100);
	assert_int_equal(c.writes, 5);
	repl_local_close(&c.l);
	free(b);
}

static void xfer_baseline_needs_empty(void **state)
{
	struct dirs *d = *state;
	struct repl_xfer_args a = {
		.name = "r1", .src = d->s1, .dst = d->dst, .journal = d->journal
	};
	struct repl_xfer_stats st;
	char err[256] = "", p[256];

	put(d->s1, "a.txt", "new", 3);
	put(d->dst, "mine.txt", "keep", 4);
	assert_int_equal(repl_xfer_run(&a, &st, err, sizeof(err)), -ENOTEMPTY);
	assert_non_null(strstr(err, "not empty"));
	snprintf(p, sizeof(p), "%s/a.txt", d->dst);
	assert_int_equal(access(p, F_OK), -1);
	snprintf(p, sizeof(p), "%s/mine.txt", d->dst);
	assert_int_equal(access(p, F_OK), 0);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void xfer_resume_skips_journal(void **state)
{
	struct dirs *d = *state;
	struct repl_xfer_args a = { .name = "r1",
				    .src = d->s1,
				    .dst = d->dst,
				    .journal = d->journal,
				    .dst_applying = d->applying };
	struct repl_xfer_stats st;
	char err[256] = "";

	put(d->s1, "a.txt", "aaaa", 4);
	put(d->s1, "b.txt", "bbbb", 4);
	/* A run killed after a.txt was applied (and a half line after);
	 * the destination still holds it in part (its marker). */
	put(d->dst, "a.txt", "aaaa", 4);
	put(d->dst, "b.txt", "bb", 2);
	write_file(d->journal, "r1\na.txt\nb.t");
	write_file(d->applying, "r1 \n");
	assert_int_equal(repl_xfer_run(&a, &st, err, sizeof(err)), 0);
	assert_int_equal(st.files_resumed, 1);
	assert_int_equal(st.files, 1);
	assert_int_equal(st.sent_bytes, 4);
	assert_false(st.restarted);
	assert_true(same(d->s1, d->dst));
	assert_int_equal(access(d->applying, F_OK), -1); /* committed */
	/* A journal of another transfer is not a resume. */
	write_file(d->journal, "r0\na.txt\n");
	a.name = "r2";
	a.base = d->s1;
	a.base_name = "r1";
	assert_int_equal(repl_xfer_run(&a, &st, err, sizeof(err)), 0);
	assert_int_equal(st.files_resumed, 0);
	assert_int_equal(st.sent_bytes, 0);
}

static void xfer_restarts_when_undone(void **state)
{
	struct dirs *d = *state;
	struct repl_xfer_args a = { .name = "r1",
				    .src = d->s1,
				    .dst = d->dst,
				    .journal = d->journal,
				    .dst_applying = d->applying };
	struct repl_xfer_stats st;
	char err[256] = "";

	put(d->s1, "a.txt", "aaaa", 4);
	put(d->s1, "b.txt", "bbbb", 4);
	/* The journal says a.txt, but the destination undid the transfer
	 * (it restarted): no marker, its tree back at empty. */
	write_file(d->journal, "r1\na.txt\n");
	assert_int_equal(repl_xfer_run(&a, &st, err, sizeof(err)), 0);
	assert_true(st.restarted);
	assert_int_equal(st.files_resumed, 0);
	assert_int_equal(st.files, 2);
	assert_int_equal(st.sent_bytes, 8);
	assert_true(same(d->s1, d->dst));
}

static void xfer_failure_aborts(void **state)
{
	struct dirs *d = *state;
	struct repl_xfer_args a = { .name = "r1",
				    .src = d->s1,
				    .dst = d->dst,
				    .journal = d->journal,
				    .dst_applying = d->applying };
	struct repl_xfer_stats st;
	char err[256] = "", p[256];
	DIR *dir;
	int n = 0;

	/* A name the journal cannot hold fails the transfer (-EINVAL) on
	 * the source's side, after other files went. */
	put(d->s1, "a.txt", "aaaa", 4);
	put(d->s1, "z.txt", "zzzz", 4);
	put(d->s1, "new\nline", "nl", 2);
	assert_int_equal(repl_xfer_run(&a, &st, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "journal"));
	/* Aborted: the baseline's tree is empty again, no marker. */
	snprintf(p, sizeof(p), "%s", d->dst);
	dir = opendir(p);
	assert_non_null(dir);
	for (struct dirent *de; (de = readdir(dir));) {
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	}
	closedir(dir);
	assert_int_equal(n, 0);
	assert_int_equal(access(d->applying, F_OK), -1);
	/* The journal stays: the next run takes up the same transfer. */
	assert_int_equal(access(d->journal, F_OK), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(xfer_baseline_then_incremental,
						setup, teardown),
		cmocka_unit_test_setup_teardown(xfer_runs_coalesced, setup,
						teardown),
		cmocka_unit_test_setup_teardown(xfer_baseline_needs_empty,
						setup, teardown),
		cmocka_unit_test_setup_teardown(xfer_resume_skips_journal,
						setup, teardown),
		cmocka_unit_test_setup_teardown(xfer_restarts_when_undone,
						setup, teardown),
		cmocka_unit_test_setup_teardown(xfer_failure_aborts, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
