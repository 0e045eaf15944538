// SPDX-License-Identifier: Apache-2.0
/*
 * The replication engine's snapshots under the admin operations' lock
 * (nfsd/repl/guard.c, admin__op_run() of nfsd/admin/ops.c): while a
 * snapshot by hand of the datastore runs, the engine's is refused when
 * it may not wait (-EBUSY, the running operation named, its call never
 * made) and waits for it when it may; while the engine's runs, a
 * snapshot by hand of the same datastore is refused (-EBUSY), one of
 * another datastore is not; without a registry the call is made as is;
 * a snapshot call's own failure comes back as it is.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "nfsd/admin/ops_engine.h"
#include "nfsd/export/export.h"
#include "nfsd/repl/guard.h"

struct lab {
	struct admin_ops *ops;
	struct export ds, other;
	int gate[2]; /* the hand operation runs until a byte comes */
};

static int setup(void **state)
{
	struct lab *l = calloc(1, sizeof(*l));

	assert_non_null(l);
	assert_int_equal(admin__ops_new(&l->ops), 0);
	snprintf(l->ds.name, sizeof(l->ds.name), "ds");
	snprintf(l->other.name, sizeof(l->other.name), "other");
	assert_int_equal(pipe(l->gate), 0);
	*state = l;
	return 0;
}

static int teardown(void **state)
{
	struct lab *l = *state;

	admin__ops_free(l->ops);
	close(l->gate[0]);
	close(l->gate[1]);
	free(l);
	return 0;
}

/* A snapshot by hand: runs until the gate opens. */
static int hand_run(struct admin_op *op, char *errbuf, size_t errlen)
{
	struct admin_op_args a;
	char c;

	(void)errbuf;
	(void)errlen;
	admin__op_args(op, &a);
	return read(*(int *)a.arg, &c, 1) == 1 ? 0 : -EIO;
}

static struct admin_op_spec hand_spec(struct lab *l, const struct export *e)
{
	struct admin_op_spec s = { .kind = "snapshot",
				   .mode = "create",
				   .export = e,
				   .source = ".snapshot",
				   .target = "by-hand",
				   .exclusive = true,
				   .run = hand_run,
				   .arg = &l->gate[0] };

	return s;
}

struct engine {
	struct lab *l;
	int calls;
	int hand_same, hand_other; /* the hand snapshots tried meanwhile */
};

/* The engine's call: tries snapshots by hand while it runs. */
static int engine_fn(void *arg, char *errbuf, size_t errlen)
{
	struct engine *e = arg;
	struct admin_op_spec same = hand_spec(e->l, &e->l->ds);
	struct admin_op_spec other = hand_spec(e->l, &e->l->other);
	char why[256];
	uint64_t id;

	(void)errbuf;
	(void)errlen;
	e->calls++;
	e->hand_same =
		admin__op_start_bg(e->l->ops, &same, &id, why, sizeof(why));
	e->hand_other =
		admin__op_start_bg(e->l->ops, &other, &id, why, sizeof(why));
	if (!e->hand_other) {
		assert_int_equal(write(e->l->gate[1], "x", 1), 1);
	}
	return 0;
}

static void engine_excludes_hand(void **state)
{
	struct lab *l = *state;
	struct repl_guard g = { .ops = l->ops, .export = &l->ds };
	struct engine e = { .l = l };
	char err[256] = "";

	assert_int_equal(repl_guard_run(&g, "create", "repl-r1-1", engine_fn,
					&e, err, sizeof(err)),
			 0);
	assert_int_equal(e.calls, 1);
	assert_int_equal(e.hand_same, -EBUSY);
	assert_int_equal(e.hand_other, 0);
}

static int count_fn(void *arg, char *errbuf, size_t errlen)
{
	(void)errbuf;
	(void)errlen;
	++*(int *)arg;
	return 0;
}

static void hand_excludes_engine(void **state)
{
	struct lab *l = *state;
	struct admin_op_spec hand = hand_spec(l, &l->ds);
	struct repl_guard g = { .ops = l->ops, .export = &l->ds };
	char err[256] = "";
	uint64_t id;
	int calls = 0;

	assert_int_equal(
		admin__op_start_bg(l->ops, &hand, &id, err, sizeof(err)), 0);
	/* No wait: refused, the running operation named, nothing run. */
	assert_int_equal(repl_guard_run(&g, "create", "repl-r1-1", count_fn,
					&calls, err, sizeof(err)),
			 -EBUSY);
	assert_non_null(strstr(err, "snapshot create"));
	assert_int_equal(calls, 0);
	/* With a wait: runs once the snapshot by hand ends. */
	assert_int_equal(write(l->gate[1], "x", 1), 1);
	g.wait_ms = 10000;
	assert_int_equal(repl_guard_run(&g, "create", "repl-r1-1", count_fn,
					&calls, err, sizeof(err)),
			 0);
	assert_int_equal(calls, 1);
}

static void no_registry_runs_as_is(void **state)
{
	struct lab *l = *state;
	struct admin_op_spec hand = hand_spec(l, &l->ds);
	char err[256] = "";
	uint64_t id;
	int calls = 0;

	assert_int_equal(
		admin__op_start_bg(l->ops, &hand, &id, err, sizeof(err)), 0);
	assert_int_equal(repl_guard_run(NULL, "create", "s", count_fn, &calls,
					err, sizeof(err)),
			 0);
	assert_int_equal(calls, 1);
	assert_int_equal(write(l->gate[1], "x", 1), 1);
}

static void snapshot_failure_comes_back(void **state)
{
	struct lab *l = *state;
	struct repl_guard g = { .ops = l->ops, .export = &l->ds };
	char dir[] = "/tmp/test_repl_guard.XXXXXX", man[64], err[256] = "";

	assert_non_null(mkdtemp(dir));
	snprintf(man, sizeof(man), "%s.manifest", dir);
	/* Not a snapshot of this datastore: refused by snap.h, through
	 * the registry. */
	assert_int_equal(repl_guard_snap(&g, REPL_GUARD_DELETE, dir, man,
					 "repl-r1-1", err, sizeof(err)),
			 -ENOENT);
	assert_int_equal(repl_guard_snap(&g, REPL_GUARD_RESTORE, dir, man,
					 "repl-r1-1", err, sizeof(err)),
			 -ENOENT);
	assert_int_equal(rmdir(dir), 0);
	(void)unlink(man);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(engine_excludes_hand, setup,
						teardown),
		cmocka_unit_test_setup_teardown(hand_excludes_engine, setup,
						teardown),
		cmocka_unit_test_setup_teardown(no_registry_runs_as_is, setup,
						teardown),
		cmocka_unit_test_setup_teardown(snapshot_failure_comes_back,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
