/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ops: the long operations (clones, reservations, snapshots) the admin
 * API runs in the background and lists under /operations (ops.c).
 */
#ifndef DSNFS_ADMIN_OPS_H
#define DSNFS_ADMIN_OPS_H

#include "nfsd/admin/admin_int.h"

/* ---- long operations (ops.c) ------------------------------------------- */

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

struct admin_op;

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
};

/* What a run reads of its operation: borrowed from @op, fixed. */
struct admin_op_args {
	const struct export *export;
	const char *source;
	const char *target;
	const char *mode;
};

void admin__op_args(const struct admin_op *op, struct admin_op_args *out);

/* Returns 0, or -ECANCELED once the server stops.  Thread-safe. */
int admin__op_progress(struct admin_op *op, uint64_t done_bytes,
		       uint64_t total_bytes);

/* The status of an operation's error: 400 (a path outside the export),
 * 404, 409 (exists, busy, read-only), 422 (the file system cannot: a
 * native clone without reflink), 507 (no space, a quota), else 500. */
unsigned admin__op_status_from_err(int err);

/* Returns 0 and *out (owned: admin__ops_free()) or -ENOMEM. */
int admin__ops_new(struct admin_ops **out);

/* Waits until no operation runs, without cancelling any: the tests,
 * which see the result through GET /operations then. */
void admin__ops_drain(struct admin_ops *ops);

/* Cancels the running operations, waits for them, frees @ops (takes;
 * NULL is fine). */
void admin__ops_free(struct admin_ops *ops);

/*
 * Starts an operation of @spec (borrowed): -EBUSY with the reason when a
 * running operation of the same datastore has the source or the target
 * as its source or target, or ADMIN_OPS_RUNNING_MAX run.  @background:
 * on a thread of its own, and 0 returned at once; else run here, and its
 * result returned.  Either way the operation is listed, and its JSON
 * (owned) is returned in *doc (may be NULL when out of memory).  The
 * quota reservation of the spec is given back when it ends.
 */
int admin__op_start(struct admin_ops *ops, const struct admin_op_spec *spec,
		    bool background, json_t **doc, char *errbuf, size_t errlen);

/*
 * The reply to a POST that started an operation: its JSON @doc (takes)
 * with 202 and Location /operations/ID when it runs in the @background,
 * 201 when it ran here; or, when @err, {"error": @errtext} with the
 * operation as it ended, and the status of @err.
 */
void admin__op_reply(struct admin_reply *reply, int err, bool background,
		     json_t *doc, const char *errtext);

#endif
