// SPDX-License-Identifier: Apache-2.0
/*
 * A replication relation between two datastores on loop-mounted XFS file
 * systems made with reflink=1 (nfsd/repl/relation.c; skipped unless run
 * as root with mkfs.xfs): a baseline of a 64 MiB disk, then 1% of it
 * rewritten and an incremental that sends about that much (FIEMAP: the
 * blocks still shared with the last replicated snapshot are not read);
 * the destination's snapshot reads back as the source's; a destination
 * that fills up ends the transfer with ENOSPC, its live tree back at the
 * last replica (aborted, undo.h) and the lag still counted from that
 * replica, and the next transfer starts it again and completes; break refuses
 * transfers, resync reverts what the destination's clients wrote and the next
 * transfer sends only what changed; a transfer killed (SIGKILL) half
 * way leaves the last replica whole and the next one resumes from its
 * journal; a destination inside the source is refused.  Prints the bytes moved
 * (docs/replication.md quotes them).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "nfsd/repl/chain.h"
#include "nfsd/repl/dst.h"
#include "nfsd/repl/relation.h"
#include "nfsd/snap/snap.h"

#define MIB (1u << 20)
#define DISK (64 * MIB)

struct lab {
	char root[64], src[96], dst[96], sman[96], dman[96];
	bool mounted;
};

static int sh(const char *fmt, const char *a)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), fmt, a, a, a, a);
	return system(cmd);
}

static int setup(void **state)
{
	struct lab *l = calloc(1, sizeof(*l));

	assert_non_null(l);
	strcpy(l->root, "/tmp/test_repl_xfs.XXXXXX");
	assert_non_null(mkdtemp(l->root));
	snprintf(l->src, sizeof(l->src), "%s/src", l->root);
	snprintf(l->dst, sizeof(l->dst), "%s/dst/ds", l->root);
	snprintf(l->sman, sizeof(l->sman), "%s/src.manifest", l->root);
	snprintf(l->dman, sizeof(l->dman), "%s/dst.manifest", l->root);
	*state = l;
	if (geteuid() != 0 || system("command -v mkfs.xfs >/dev/null")) {
		return 0;
	}
	l->mounted = !sh(
		"cd %s && mkdir src dst && truncate -s 320M s.img d.img && "
		"mkfs.xfs -q -m reflink=1 s.img && mkfs.xfs -q -m reflink=1 "
		"d.img && mount -o loop s.img src && (mount -o loop d.img dst "
		"|| (umount src; false)) && mkdir dst/ds",
		l->root);
	return 0;
}

static int teardown(void **state)
{
	struct lab *l = *state;

	if (l->mounted) {
		(void)sh("cd %s && umount src dst", l->root);
	}
	(void)sh("rm -rf %s", l->root);
	free(l);
	return 0;
}

static void scribble(const char *path, uint64_t off, size_t len, int seed)
{
	unsigned char *b = malloc(len);
	int fd = open(path, O_WRONLY | O_CREAT, 0644);

	assert_non_null(b);
	assert_true(fd >= 0);
	srand((unsigned)seed);
	for (size_t i = 0; i < len; i++) {
		b[i] = (unsigned char)rand();
	}
	assert_int_equal(pwrite(fd, b, len, (off_t)off), (ssize_t)len);
	assert_int_equal(fsync(fd), 0);
	close(fd);
	free(b);
}

/* Whether the destination's snapshot @name reads as the source's. */
static int replica_same(const struct lab *l, const char *name)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd),
		 "diff -r --no-dereference %s/.snapshot/%s %s/.snapshot/%s "
		 ">/dev/null",
		 l->src, name, l->dst, name);
	return system(cmd) == 0;
}

/* Whether the destination's live tree is its snapshot @name. */
static int live_is(const struct lab *l, const char *name)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd),
		 "diff -r --no-dereference -x .snapshot %s %s/.snapshot/%s "
		 ">/dev/null",
		 l->dst, l->dst, name);
	return system(cmd) == 0;
}

/* Runs a transfer of @r in a child and kills it (SIGKILL) as soon as
 * its journal records a file of transfer @step (NULL: any). */
static void kill9_mid_step(const struct lab *l, struct repl_relation *r,
			   const char *step)
{
	char journal[160], line[256];
	int lines = 0, status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (!pid) {
		char err[256];

		_exit(repl_relation_transfer(r, 2900, err, sizeof(err)) ? 1
									: 0);
	}
	snprintf(journal, sizeof(journal), "%s/repl-r1.journal", l->root);
	for (int i = 0; i < 20000 && lines < 2; i++) {
		FILE *f = fopen(journal, "r");

		lines = 0;
		while (f && fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = '\0';
			if (!lines && step && strcmp(line, step)) {
				break; /* another step's journal */
			}
			lines++;
		}
		if (f) {
			fclose(f);
		}
		usleep(500);
	}
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status)); /* killed, not finished */
	assert_int_equal(lines, 2);
}

static void kill9_mid_transfer(const struct lab *l, struct repl_relation *r)
{
	kill9_mid_step(l, r, NULL);
}

static void relation_on_xfs(void **state)
{
	struct lab *l = *state;
	struct repl_relation r = { .name = "r1",
				   .src_root = l->src,
				   .src_manifest = l->sman,
				   .dst_root = l->dst,
				   .dst_manifest = l->dman,
				   .state_dir = l->root };
	struct repl_relation bad = r;
	char disk[128], p[160], err[512] = "", old[SNAP_NAME_MAX + 1];
	uint64_t base_bytes;

	if (!l->mounted) {
		skip();
	}
	snprintf(disk, sizeof(disk), "%s/disk-flat.vmdk", l->src);
	scribble(disk, 0, DISK, 1);
	assert_int_equal(repl_relation_open(&r, err, sizeof(err)), 0);
	assert_int_equal(repl_relation_transfer(&r, 1000, err, sizeof(err)), 0);
	base_bytes = r.last_stats.sent_bytes;
	assert_int_equal(base_bytes, DISK);
	assert_true(replica_same(l, r.last));

	/* 1% of the disk rewritten, not block aligned. */
	scribble(disk, 10 * MIB + 1000, DISK / 100, 2);
	assert_int_equal(repl_relation_transfer(&r, 1600, err, sizeof(err)), 0);
	print_message("repl: baseline %llu bytes, incremental after 1%% "
		      "changed %llu bytes (candidates %llu)\n",
		      (unsigned long long)base_bytes,
		      (unsigned long long)r.last_stats.sent_bytes,
		      (unsigned long long)r.last_stats.candidate_bytes);
	assert_true(r.last_stats.sent_bytes >= DISK / 100);
	assert_true(r.last_stats.sent_bytes <= DISK / 100 + 2 * REPL_BLOCK);
	assert_true(replica_same(l, r.last));
	assert_string_equal(r.last, "repl-r1-2");
	assert_int_equal(repl_relation_lag(&r, 1700), 100);

	/* The destination fills up (a file beside the datastore takes all
	 * but 4 MiB): ENOSPC, the last replica intact. */
	snprintf(p, sizeof(p), "%s/dst/filler", l->root);
	assert_int_equal(
		sh("fallocate -l $(($(stat -f -c '%%a*%%S' %s/dst)-4194304)) "
		   "%s/dst/filler",
		   l->root),
		0);
	scribble(disk, 20 * MIB, 16 * MIB, 3);
	snprintf(old, sizeof(old), "%s", r.last);
	assert_int_equal(repl_relation_transfer(&r, 2200, err, sizeof(err)),
			 -ENOSPC);
	print_message("repl: full destination: %s\n", err);
	assert_string_equal(r.last, old);
	assert_true(replica_same(l, old));
	assert_int_equal(r.transfers_failed, 1);
	assert_int_equal(r.last_err, -ENOSPC);
	assert_true(live_is(l, old)); /* aborted: back at the replica */
	snprintf(p, sizeof(p), "%s/repl-r1.applying", l->root);
	assert_int_equal(access(p, F_OK), -1);
	/* The lag counts from the last committed replica (1600), not from
	 * the failed transfer's snapshot (2200). */
	assert_int_equal(repl_relation_lag(&r, 2300), 700);
	/* Room again: the same transfer starts again and completes. */
	snprintf(p, sizeof(p), "%s/dst/filler", l->root);
	assert_int_equal(unlink(p), 0);
	assert_int_equal(repl_relation_transfer(&r, 2800, err, sizeof(err)), 0);
	assert_string_equal(r.last, "repl-r1-3");
	assert_true(r.last_stats.restarted);
	assert_int_equal(r.last_err, 0);
	assert_true(replica_same(l, r.last));
	assert_int_equal(repl_relation_lag(&r, 2900), 700);

	/* kill -9 of the transfer once its journal holds one file of three:
	 * the last replica stays whole, the next run skips that file. */
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/vm%d-flat.vmdk", l->src, i);
		scribble(p, 0, 16 * MIB, 10 + i);
	}
	kill9_mid_transfer(l, &r);
	assert_true(replica_same(l, r.last));
	assert_int_equal(repl_relation_open(&r, err, sizeof(err)), 0);
	assert_int_equal(repl_relation_transfer(&r, 3000, err, sizeof(err)), 0);
	print_message("repl: after kill -9: %llu files resumed, %llu applied\n",
		      (unsigned long long)r.last_stats.files_resumed,
		      (unsigned long long)r.last_stats.files);
	assert_true(r.last_stats.files_resumed >= 1);
	assert_string_equal(r.last, "repl-r1-4");
	assert_true(replica_same(l, r.last));

	/* Break: no transfers; the destination's clients write. */
	assert_int_equal(repl_relation_break(&r, err, sizeof(err)), 0);
	assert_int_equal(repl_relation_transfer(&r, 3400, err, sizeof(err)),
			 -EPERM);
	snprintf(p, sizeof(p), "%s/written-after-break", l->dst);
	scribble(p, 0, 4096, 4);
	/* Resync: reverted to the common snapshot, then only the change. */
	assert_int_equal(repl_relation_resync(&r, err, sizeof(err)), 0);
	assert_int_equal(access(p, F_OK), -1);
	scribble(disk, 0, 128 << 10, 5);
	assert_int_equal(repl_relation_transfer(&r, 4000, err, sizeof(err)), 0);
	assert_int_equal(r.last_stats.sent_bytes, 128 << 10);
	assert_true(replica_same(l, r.last));

	/* A destination inside the source datastore. */
	snprintf(p, sizeof(p), "%s/sub", l->src);
	assert_int_equal(mkdir(p, 0755), 0);
	bad.name = "r2";
	bad.dst_root = p;
	assert_int_equal(repl_relation_open(&bad, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "inside"));
}

/* The time snapshot @name has in manifest @man of @root; -1: none. */
static int64_t snap_time(const char *root, const char *man, const char *name)
{
	struct snap_entry *list = NULL;
	int64_t t = -1;
	size_t n = 0;

	assert_int_equal(snap_list(root, man, &list, &n), 0);
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(list[i].name, name)) {
			t = list[i].created_s;
		}
	}
	free(list);
	return t;
}

/* How many snapshots @root holds. */
static size_t snap_count(const char *root, const char *man)
{
	struct snap_entry *list = NULL;
	size_t n = 0;

	assert_int_equal(snap_list(root, man, &list, &n), 0);
	free(list);
	return n;
}

/* Source snapshot @name by hand, after @len bytes of the disk at @off
 * were rewritten. */
static void change_and_snap(const struct lab *l, const char *disk, uint64_t off,
			    size_t len, int seed, const char *name)
{
	char err[256] = "";

	scribble(disk, off, len, seed);
	assert_int_equal(
		snap_create(l->src, l->sman, name, NULL, err, sizeof(err)), 0);
}

/* The source's own snapshots go with each transfer (chain.h): each an
 * incremental from the one before, committed with the source's time;
 * one deleted on the source goes from the destination; a kill -9 in the
 * middle of the chain leaves only whole snapshots and the next transfer
 * resumes the step it was in; break and resync; the destination's 255. */
static void snapshots_on_xfs(void **state)
{
	struct lab *l = *state;
	struct repl_relation r = { .name = "r1",
				   .src_root = l->src,
				   .src_manifest = l->sman,
				   .dst_root = l->dst,
				   .dst_manifest = l->dman,
				   .state_dir = l->root };
	char disk[128], p[160], err[512] = "", name[32];
	static const char *const three[] = { "hourly-2026-12-06_0100",
					     "by-hand", "daily-2026-12-06" };

	if (!l->mounted) {
		skip();
	}
	snprintf(disk, sizeof(disk), "%s/disk-flat.vmdk", l->src);
	scribble(disk, 0, 16 * MIB, 1);
	assert_int_equal(repl_relation_open(&r, err, sizeof(err)), 0);
	assert_int_equal(repl_relation_transfer(&r, 1000, err, sizeof(err)), 0);
	assert_int_equal(r.last_snapshots, 0);

	/* Three snapshots on the source between two transfers, 256 KiB
	 * rewritten before each: each carried as an incremental. */
	for (int i = 0; i < 3; i++) {
		change_and_snap(l, disk, (uint64_t)i * MIB, 256 << 10, 20 + i,
				three[i]);
		sleep(1); /* distinct times: the order is theirs */
	}
	scribble(disk, 8 * MIB, 64 << 10, 30); /* after the last one */
	assert_int_equal(repl_relation_transfer(&r, 2000, err, sizeof(err)), 0);
	print_message("repl: 3 snapshots carried, %llu bytes sent in all\n",
		      (unsigned long long)r.last_stats.sent_bytes);
	assert_int_equal(r.last_snapshots, 3);
	assert_int_equal(r.snapshots_total, 3);
	assert_int_equal(r.last_stats.sent_bytes, 3 * (256 << 10) + (64 << 10));
	for (int i = 0; i < 3; i++) {
		assert_true(replica_same(l, three[i]));
		assert_int_equal(snap_time(l->dst, l->dman, three[i]),
				 snap_time(l->src, l->sman, three[i]));
	}
	assert_string_equal(r.last, "repl-r1-2");
	assert_true(replica_same(l, r.last));
	assert_true(live_is(l, r.last));

	/* Nothing new: nothing carried, nothing sent. */
	assert_int_equal(repl_relation_transfer(&r, 2100, err, sizeof(err)), 0);
	assert_int_equal(r.last_snapshots, 0);
	assert_int_equal(r.last_stats.sent_bytes, 0);

	/* One deleted on the source: gone from the destination. */
	assert_int_equal(
		snap_delete(l->src, l->sman, "by-hand", err, sizeof(err)), 0);
	assert_int_equal(repl_relation_transfer(&r, 2200, err, sizeof(err)), 0);
	assert_int_equal(r.last_snapshots_deleted, 1);
	assert_int_equal(snap_time(l->dst, l->dman, "by-hand"), -1);
	assert_true(replica_same(l, three[0]));
	assert_true(replica_same(l, three[2]));

	/* kill -9 in the middle of the chain's second step: the first is
	 * committed whole, the second is not there; the next transfer
	 * resumes it from its journal. */
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/vm%d-flat.vmdk", l->src, i);
		scribble(p, 0, 16 * MIB, 40 + i);
	}
	assert_int_equal(
		snap_create(l->src, l->sman, "step-a", NULL, err, sizeof(err)),
		0);
	sleep(1);
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/vm%d-flat.vmdk", l->src, i);
		scribble(p, 0, 16 * MIB, 50 + i);
	}
	assert_int_equal(
		snap_create(l->src, l->sman, "step-b", NULL, err, sizeof(err)),
		0);
	kill9_mid_step(l, &r, "step-b");
	assert_true(replica_same(l, "step-a"));
	assert_int_equal(snap_time(l->dst, l->dman, "step-b"), -1);
	assert_true(replica_same(l, "repl-r1-4"));
	memset(&r, 0, sizeof(r));
	r = (struct repl_relation){ .name = "r1",
				    .src_root = l->src,
				    .src_manifest = l->sman,
				    .dst_root = l->dst,
				    .dst_manifest = l->dman,
				    .state_dir = l->root };
	assert_int_equal(repl_relation_open(&r, err, sizeof(err)), 0);
	assert_string_equal(r.tip, "step-a");
	assert_int_equal(repl_relation_transfer(&r, 3000, err, sizeof(err)), 0);
	print_message("repl: after kill -9 mid-chain: %llu carried, %llu "
		      "files resumed\n",
		      (unsigned long long)r.last_snapshots,
		      (unsigned long long)r.last_stats.files_resumed);
	assert_int_equal(r.last_snapshots, 1); /* step-b */
	assert_true(r.last_stats.files_resumed >= 1);
	assert_true(replica_same(l, "step-b"));
	assert_true(replica_same(l, r.last));
	assert_true(live_is(l, r.last));

	/* Break, a client's write, resync: back at the last common
	 * snapshot; the next transfer carries a new one. */
	assert_int_equal(repl_relation_break(&r, err, sizeof(err)), 0);
	snprintf(p, sizeof(p), "%s/written-after-break", l->dst);
	scribble(p, 0, 4096, 4);
	assert_int_equal(repl_relation_resync(&r, err, sizeof(err)), 0);
	assert_int_equal(access(p, F_OK), -1);
	change_and_snap(l, disk, 0, 128 << 10, 60, "after-resync");
	assert_int_equal(repl_relation_transfer(&r, 4000, err, sizeof(err)), 0);
	assert_int_equal(r.last_snapshots, 1);
	assert_int_equal(r.last_stats.sent_bytes, 128 << 10);
	assert_true(replica_same(l, "after-resync"));

	/* The destination at 255 snapshots (filled by hand there): the
	 * transfer fails with the reason; room made, it goes. */
	for (size_t n = snap_count(l->dst, l->dman), i = 0; n < 255; n++, i++) {
		snprintf(name, sizeof(name), "dst-%zu", i);
		assert_int_equal(snap_create(l->dst, l->dman, name, NULL, err,
					     sizeof(err)),
				 0);
	}
	change_and_snap(l, disk, 0, 4096, 61, "one-too-many");
	assert_int_equal(repl_relation_transfer(&r, 5000, err, sizeof(err)),
			 -ENOSPC);
	print_message("repl: destination at 255: %s\n", err);
	assert_non_null(strstr(err, "255"));
	assert_int_equal(snap_count(l->dst, l->dman), 255);
	assert_true(live_is(l, r.last)); /* aborted: back at the replica */
	for (int i = 0; i < 2; i++) {
		snprintf(name, sizeof(name), "dst-%d", i);
		assert_int_equal(
			snap_delete(l->dst, l->dman, name, err, sizeof(err)),
			0);
	}
	assert_int_equal(repl_relation_transfer(&r, 5100, err, sizeof(err)), 0);
	assert_true(replica_same(l, "one-too-many"));
	/* 253 + one-too-many + the new replica, the old one gone. */
	assert_int_equal(snap_count(l->dst, l->dman), 254);

	/* HASSNAP on the destination: whether it holds a snapshot. */
	{
		struct repl_local loc;
		struct repl_msg m = { .op = REPL_OP_HASSNAP };
		struct repl_result res;

		assert_int_equal(repl_local_open(&loc, l->dst, l->dman, err,
						 sizeof(err)),
				 0);
		m.arg = "one-too-many";
		m.arg_len = strlen(m.arg);
		repl_local_apply(&loc, &m, &res);
		assert_int_equal(res.err, 0);
		assert_int_equal(res.value, 1);
		m.arg = "by-hand";
		m.arg_len = strlen(m.arg);
		repl_local_apply(&loc, &m, &res);
		assert_int_equal(res.err, 0);
		assert_int_equal(res.value, 0);
		m.arg = "../x";
		m.arg_len = strlen(m.arg);
		repl_local_apply(&loc, &m, &res);
		assert_int_equal(res.err, -EINVAL);
		repl_local_close(&loc);
	}

	/* A COMMIT made whose answer the source lost (it stopped before
	 * it recorded it): the next transfer asks (HASSNAP), takes it as
	 * the tip and does not send it again. */
	{
		struct repl_snaps held;
		char rec[160], prev[SNAP_NAME_MAX + 1];

		assert_int_equal(
			snap_delete(l->dst, l->dman, "dst-2", err, sizeof(err)),
			0);
		snprintf(prev, sizeof(prev), "%s", r.tip);
		change_and_snap(l, disk, 0, 4096, 62, "answer-lost");
		assert_int_equal(
			repl_relation_transfer(&r, 5200, err, sizeof(err)), 0);
		assert_int_equal(r.last_snapshots, 1);
		snprintf(rec, sizeof(rec), "%s/repl-r1.snapshots", l->root);
		assert_int_equal(repl_snaps_load(rec, &held, err, sizeof(err)),
				 0);
		repl_snaps_del(&held, "answer-lost");
		assert_int_equal(repl_snaps_save(rec, &held, err, sizeof(err)),
				 0);
		repl_snaps_free(&held);
		snprintf(r.committing, sizeof(r.committing), "answer-lost");
		snprintf(r.tip, sizeof(r.tip), "%s", prev);
		assert_int_equal(
			repl_relation_transfer(&r, 5300, err, sizeof(err)), 0);
		assert_int_equal(r.last_snapshots, 0);
		assert_int_equal(r.committing[0], '\0');
		assert_true(replica_same(l, "answer-lost"));
		assert_true(replica_same(l, r.last));
		assert_int_equal(repl_snaps_load(rec, &held, err, sizeof(err)),
				 0);
		assert_true(repl_snaps_find(&held, "answer-lost") >= 0);
		repl_snaps_free(&held);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(relation_on_xfs, setup,
						teardown),
		cmocka_unit_test_setup_teardown(snapshots_on_xfs, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
