/* SPDX-License-Identifier: Apache-2.0 */
/*
 * repl client: the source's side of the transport (docs/replication.md,
 * "Transport"): a struct repl_dst whose every operation is one POST of
 * its message (wire.h) to the destination dsnfsd's admin endpoint,
 * URL/replications/NAME/peer, with the relation's key as a bearer
 * (peer.h), through libcurl (keep-alive; HTTPS checked against @ca_file
 * or the system's store).  The reply is read up to REPL_RESULT_HEAD +
 * REPL_REASON_MAX bytes and decoded; a refusal (401, 404, 409, 400)
 * comes back as the result's -errno and reason, a transport failure as
 * -ECONNREFUSED, -ETIMEDOUT, -ECONNRESET or -EPROTO with curl's reason
 * (xfer.h repl_err_transport()).
 *
 * Bounded in time: a message waits at most @timeout_s for its answer
 * (the connect too); the operations that take the destination long
 * (COMMIT, BEGIN, ABORT, RESYNC, BREAK, REVERSE, DELSNAP: a snapshot or
 * a revert of its tree) wait up to an hour, and a cut connection fails
 * them too in about @timeout_s (TCP keepalive every @timeout_s / 3 and
 * TCP_USER_TIMEOUT of @timeout_s on the socket).
 */
#ifndef DSNFS_REPL_CLIENT_H
#define DSNFS_REPL_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include "nfsd/repl/dst.h"
#include "nfsd/repl/peer.h"

struct repl_client;

/* timeout_seconds of [replication NAME] when it is not set. */
#define REPL_TIMEOUT_DEFAULT_S 60u

/*
 * A client of relation @name at @url ("http://HOST:PORT" or
 * "https://HOST:PORT", no path) with the key of @key_path (peer.h's
 * rules); @ca_file ("" or NULL: the system's store) checks an HTTPS
 * server; while *@cancel (may be NULL; read atomically) is true every
 * call fails at once with -ECANCELED (the server stops).  Returns 0 and
 * *out (owned: repl_client_free()), or -errno with the reason.
 */
int repl_client_new(const char *url, const char *name, const char *key_path,
		    const char *ca_file, unsigned timeout_s, const bool *cancel,
		    struct repl_client **out, char *errbuf, size_t errlen);

/* Its struct repl_dst (borrowed from @c). */
struct repl_dst *repl_client_dst(struct repl_client *c);

void repl_client_free(struct repl_client *c);

#endif
