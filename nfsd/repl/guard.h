/* SPDX-License-Identifier: Apache-2.0 */
/*
 * repl guard: the replication engine's snapshot calls on a datastore
 * (snap.h: the create, delete and restore of repl-NAME-SEQ, and the undo
 * of a transfer applied in part, undo.h) made as exclusive operations of
 * that datastore in the server's registry of admin operations
 * (admin/ops_engine.h, kind "replication"), so that a snapshot, restore
 * or clone asked by hand at the same moment is excluded: refused (409)
 * while the engine's runs, and the engine's waits (at most
 * REPL_GUARD_WAIT_MS) for one asked by hand.  snap.h is not thread-safe
 * for one datastore; this is the lock it asks of its callers.
 */
#ifndef DSNFS_REPL_GUARD_H
#define DSNFS_REPL_GUARD_H

#include <stddef.h>
#include <stdint.h>

struct admin_ops;
struct export;

/* How long an engine's snapshot call waits for the datastore's
 * operations (a snapshot or a clone by hand) to end. */
#define REPL_GUARD_WAIT_MS 30000

struct repl_guard {
	struct admin_ops *ops; /* NULL: no registry, calls run as they are */
	const struct export *export; /* the datastore (borrowed) */
	int wait_ms;
};

enum repl_guard_op {
	REPL_GUARD_CREATE = 0,
	REPL_GUARD_DELETE,
	REPL_GUARD_RESTORE,
};

/* A call run under the guard: 0 or -errno with the reason. */
typedef int repl_guard_fn(void *arg, char *errbuf, size_t errlen);

/*
 * Runs @fn(@arg) as operation @mode ("create", "delete", "restore",
 * static) of snapshot @snap of @g's datastore, under the registry's
 * exclusion (@g NULL or without a registry: runs it as is).  Returns
 * @fn's result, or -EBUSY with the reason when the datastore stayed busy
 * for @g->wait_ms.  @fn is called on this thread, or not at all.
 */
int repl_guard_run(const struct repl_guard *g, const char *mode,
		   const char *snap, repl_guard_fn *fn, void *arg, char *errbuf,
		   size_t errlen);

/* snap_create / snap_delete / snap_restore of snapshot @name of the
 * datastore at @root (manifest @manifest) through repl_guard_run(). */
int repl_guard_snap(const struct repl_guard *g, enum repl_guard_op op,
		    const char *root, const char *manifest, const char *name,
		    char *errbuf, size_t errlen);

/* repl_guard_snap(REPL_GUARD_CREATE) of a snapshot made at @created_s
 * (snap_create_at(); 0: now). */
int repl_guard_create_at(const struct repl_guard *g, const char *root,
			 const char *manifest, const char *name,
			 int64_t created_s, char *errbuf, size_t errlen);

#endif
