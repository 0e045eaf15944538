/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ops: the long operations (clones, reservations, snapshots) the admin
 * API runs in the background and lists under /operations (ops.c).
 */
#ifndef DSNFS_ADMIN_OPS_H
#define DSNFS_ADMIN_OPS_H

#include "nfsd/admin/admin_int.h"
#include "nfsd/admin/ops_engine.h"

/* The status of an operation's error: 400 (a path outside the export),
 * 404, 409 (exists, busy, read-only), 422 (the file system cannot: a
 * native clone without reflink), 507 (no space, a quota), else 500. */
unsigned admin__op_status_from_err(int err);

/* Waits until no operation runs, without cancelling any: the tests,
 * which see the result through GET /operations then. */
void admin__ops_drain(struct admin_ops *ops);

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
