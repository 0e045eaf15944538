/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ops_engine: the registry of long storage-side operations (clones,
 * reservations, snapshots) and its runs, without HTTP or JSON, so that
 * both callers share one engine: the admin API (ops.h, which lists the
 * operations under /operations) and the NFS side's VAAI-NAS procedure 22
 * (nfs3/vaai.c: a clone started in-band, its progress and its abort).
 * The server owns the registry (server.c) and hands it to both.
 */
#ifndef DSNFS_ADMIN_OPS_ENGINE_H
#define DSNFS_ADMIN_OPS_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct export;
struct admin_ops;
struct admin_op;

/* Datastore-relative paths of an operation, bytes with the NUL. */
#define ADMIN_OP_PATH_MAX 1024
/* Operations running at once (each holds a thread); more are 409. */
#define ADMIN_OPS_RUNNING_MAX 4
/* Finished operations kept for GET /operations; the oldest go first. */
#define ADMIN_OPS_KEPT 64

enum admin_op_state {
	ADMIN_OP_RUNNING = 0,
	ADMIN_OP_DONE,
	ADMIN_OP_FAILED,
};

/* Runs @op: returns 0 or -errno with the reason in @errbuf.  Reports
 * progress with admin__op_progress(), whose error it must return. */
typedef int admin_op_run_fn(struct admin_op *op, char *errbuf, size_t errlen);

/* What an operation is, fixed when it starts (copied). */
struct admin_op_spec {
	const char *kind; /* "clone", "reserve" (static) */
	const char *mode; /* "full", "eagerzeroedthick", ... (static) */
	const struct export *export; /* borrowed; slots never move */
	const char *source; /* relative to the datastore's root */
	const char *target; /* "" for an operation on one file */
	uint64_t total_bytes; /* 0 until the run says */
	uint64_t quota_bytes; /* reserved in the datastore's quota */
	/* The whole datastore (a snapshot): refused while any operation of
	 * it runs, and refuses them while it runs. */
	bool exclusive;
	admin_op_run_fn *run;
	/* Non-zero: the file the operation makes, by file id, so that a
	 * caller who knows only that file (an in-band clone's progress and
	 * abort) finds it; two running ones of a datastore never share it. */
	uint64_t key;
	/* The run's own state (may be NULL), taken: @arg_free(@arg) once
	 * the run is over, or when the operation does not start. */
	void *arg;
	void (*arg_free)(void *arg);
};

/* What a run reads of its operation: borrowed from @op, fixed. */
struct admin_op_args {
	const struct export *export;
	const char *source;
	const char *target;
	const char *mode;
	void *arg; /* admin_op_spec.arg */
};

void admin__op_args(const struct admin_op *op, struct admin_op_args *out);

/* Returns 0, or -ECANCELED once the server stops or the operation is
 * aborted (admin__op_cancel()).  Thread-safe. */
int admin__op_progress(struct admin_op *op, uint64_t done_bytes,
		       uint64_t total_bytes);

/* Returns 0 and *out (owned: admin__ops_free()) or -ENOMEM. */
int admin__ops_new(struct admin_ops **out);

/* Cancels the running operations, waits for them, frees @ops (takes;
 * NULL is fine). */
void admin__ops_free(struct admin_ops *ops);

/*
 * Starts an operation of @spec (borrowed) on a thread of its own, as
 * admin__op_start() (ops.h) with background, without its JSON: 0 and
 * *id, or -EBUSY / -ENOMEM / a thread's error with the reason in @errbuf
 * (spec->arg is then freed).
 */
int admin__op_start_bg(struct admin_ops *ops, const struct admin_op_spec *spec,
		       uint64_t *id, char *errbuf, size_t errlen);

/*
 * Runs an operation of @spec (borrowed) here, on the calling thread,
 * listed as any other: while a running operation of the datastore
 * excludes it (-EBUSY) it waits for operations to end, at most @wait_ms
 * (0: refused at once).  Returns the run's result, or -EBUSY / -ENOMEM
 * with the reason in @errbuf (spec->arg is then freed).  The caller must
 * not run in an operation of the same datastore (it would wait for
 * itself).  The replication engine's snapshots go through it
 * (repl/guard.h).
 */
int admin__op_run(struct admin_ops *ops, const struct admin_op_spec *spec,
		  int wait_ms, char *errbuf, size_t errlen);

/* How an operation stands (admin__op_find()). */
struct admin_op_view {
	uint64_t id;
	enum admin_op_state state;
	int err; /* -errno when ADMIN_OP_FAILED */
	uint64_t done_bytes, total_bytes;
	bool cancelled; /* admin__op_cancel() asked it to stop */
	char error[512];
};

/* The newest operation of @exp made with @key (non-zero): 0 and *out,
 * or -ENOENT (none kept). */
int admin__op_find(struct admin_ops *ops, const struct export *exp,
		   uint64_t key, struct admin_op_view *out);

/* Asks the running operation of @exp with @key to stop (its run sees
 * -ECANCELED at its next progress): 0, -EALREADY when the newest one
 * with @key has ended, -ENOENT when none is kept. */
int admin__op_cancel(struct admin_ops *ops, const struct export *exp,
		     uint64_t key);

#endif
