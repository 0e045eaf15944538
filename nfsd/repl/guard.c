// SPDX-License-Identifier: Apache-2.0
/*
 * guard: the replication engine's snapshots under the admin operations'
 * exclusion (guard.h).
 */
#include "nfsd/repl/guard.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>

#include "nfsd/admin/ops_engine.h"
#include "nfsd/snap/snap.h"

struct guard_call {
	repl_guard_fn *fn;
	void *arg;
};

/* The operation's run: the guarded call. */
static int guard_op_run(struct admin_op *op, char *errbuf, size_t errlen)
{
	struct admin_op_args a;
	struct guard_call *c;

	admin__op_args(op, &a);
	c = a.arg;
	return c->fn(c->arg, errbuf, errlen);
}

int repl_guard_run(const struct repl_guard *g, const char *mode,
		   const char *snap, repl_guard_fn *fn, void *arg, char *errbuf,
		   size_t errlen)
{
	struct guard_call c = { .fn = fn, .arg = arg };
	struct admin_op_spec spec = {
		.kind = "replication",
		.mode = mode,
		.source = SNAP_DIR_NAME,
		.target = snap,
		.exclusive = true,
		.run = guard_op_run,
		.arg = &c,
	};

	if (!g || !g->ops || !g->export) {
		return fn(arg, errbuf, errlen);
	}
	spec.export = g->export;
	return admin__op_run(g->ops, &spec, g->wait_ms, errbuf, errlen);
}

struct guard_snap {
	enum repl_guard_op op;
	const char *root, *manifest, *name;
	int64_t created_s; /* CREATE: 0 now */
};

static int guard_snap_fn(void *arg, char *errbuf, size_t errlen)
{
	const struct guard_snap *s = arg;

	switch (s->op) {
	case REPL_GUARD_CREATE:
		return snap_create_at(s->root, s->manifest, s->name,
				      s->created_s, NULL, errbuf, errlen);
	case REPL_GUARD_DELETE:
		return snap_delete(s->root, s->manifest, s->name, errbuf,
				   errlen);
	case REPL_GUARD_RESTORE:
		return snap_restore(s->root, s->manifest, s->name, NULL, errbuf,
				    errlen);
	}
	return -EINVAL;
}

int repl_guard_snap(const struct repl_guard *g, enum repl_guard_op op,
		    const char *root, const char *manifest, const char *name,
		    char *errbuf, size_t errlen)
{
	static const char *const modes[] = {
		[REPL_GUARD_CREATE] = "create",
		[REPL_GUARD_DELETE] = "delete",
		[REPL_GUARD_RESTORE] = "restore",
	};
	struct guard_snap s = {
		.op = op, .root = root, .manifest = manifest, .name = name
	};
	char dummy[8];

	if (!errbuf) {
		errbuf = dummy;
		errlen = sizeof(dummy);
	}
	return repl_guard_run(g, modes[op], name, guard_snap_fn, &s, errbuf,
			      errlen);
}

int repl_guard_create_at(const struct repl_guard *g, const char *root,
			 const char *manifest, const char *name,
			 int64_t created_s, char *errbuf, size_t errlen)
{
	struct guard_snap s = { .op = REPL_GUARD_CREATE,
				.root = root,
				.manifest = manifest,
				.name = name,
				.created_s = created_s };
	char dummy[8];

	if (!errbuf) {
		errbuf = dummy;
		errlen = sizeof(dummy);
	}
	return repl_guard_run(g, "create", name, guard_snap_fn, &s, errbuf,
			      errlen);
}
