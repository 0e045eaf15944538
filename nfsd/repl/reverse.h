/* SPDX-License-Identifier: Apache-2.0 */
/*
 * repl reverse: the reverse resync of a relation (docs/replication.md,
 * "Reverse resync"), as ANF's: after a break, the old destination (its
 * clients wrote since) becomes the source and the old source the
 * destination, reverted to the last snapshot both hold (what was written
 * on it since that snapshot is lost); the next transfers send the new
 * source's changes back.  A reverse asked again the other way brings the
 * pair back to its first direction.
 *
 * Asked (POST /volumes/NAME/replication/reverse) of the server whose
 * end is the destination now, broken (its datastore writable), with the
 * other end's URL (source_url on a configured destination; the
 * destination_url of a configured source): it sends HELLO and REVERSE
 * COMMON (its last committed replica); the other end, not transferring,
 * reverts its datastore to COMMON (snap_restore, under guard.h), drops a
 * transfer cut before and becomes the destination (read-only to NFS
 * clients); then this end becomes the source at COMMON.  Each end keeps
 * which way round it is in STATE_DIR/repl-NAME.reversed (present: the
 * role is not the configured one).  A crash between the two ends'
 * switches is mended by asking again (the other end takes REVERSE again).
 */
#ifndef DSNFS_REPL_REVERSE_H
#define DSNFS_REPL_REVERSE_H

#include <stdbool.h>
#include <stddef.h>

struct repl_item;
struct repl_service;

/* Whether relation @name is reversed here (STATE_DIR/repl-NAME.reversed). */
bool repl_reversed_load(const char *state_dir, const char *name);

/* Keeps (made durable) or drops that file.  Returns 0 or -errno. */
int repl_reversed_save(const char *state_dir, const char *name, bool on);

/* The reverse asked of this end @x (see above).  Returns 0, or -EINVAL
 * (this end is the source, is not broken, has no URL of the other, or
 * no replica both hold), -EBUSY (a transfer runs) or the other end's
 * refusal, with the reason; nothing changes here on failure. */
int repl__reverse_start(struct repl_service *s, struct repl_item *x,
			char *errbuf, size_t errlen);

/* REVERSE @common taken for relation @name (peer.h's repl_reverse_fn,
 * @arg the service; the peers' lock held). */
int repl__reverse_accept(void *arg, const char *name, const char *common,
			 char *reason, size_t len);

#endif
