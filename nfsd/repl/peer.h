/* SPDX-License-Identifier: Apache-2.0 */
/*
 * repl peer: the destination side of a replication relation between two
 * dsnfsd (docs/replication.md, "Transport"; docs/security.md,
 * "Replication"): one message (wire.h) a source sent for relation NAME,
 * checked and applied to the one datastore that relation feeds.
 *
 * Who may call: whoever holds the relation's key, a file of 64 hex
 * digits on both sides (mode 0600 or stricter, as admin.token), sent as
 * "Authorization: Bearer KEY" and compared in constant time.  The key
 * opens this relation's datastore only, for these operations only: not
 * the admin API (its token is another), not another relation's
 * datastore.  Every path is resolved beneath that datastore (dst.h).  A
 * relation broken on this side takes nothing but HELLO, BREAK, RESYNC
 * and REVERSE: a failed-over datastore is never written by a late
 * source.  The transfer being applied is kept and undone as undo.h says
 * (at the start too: repl_peers_add()).
 *
 * Both ends of a relation have an entry here (reverse.h swaps their
 * roles); only the end that is the relation's destination now (@active)
 * takes the operations; the source's takes HELLO and REVERSE only.  A
 * source whose datastore is on CephFS has a source-only entry
 * (repl_peers_add_source_only()): the same key, HELLO only, every other
 * operation refused with its reason; it never touches the datastore.
 */
#ifndef DSNFS_REPL_PEER_H
#define DSNFS_REPL_PEER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "nfsd/repl/dst.h"
#include "nfsd/repl/guard.h"
#include "nfsd/snap/naming.h"

#define REPL_KEY_HEX_LEN 64
#define REPL_PEERS_MAX 32

/* A datastore's identity: "MACHINE-ID:DEV:INO" of its root. */
#define REPL_IDENTITY_MAX 96

struct repl_peer {
	char name[64]; /* the relation */
	char datastore[64]; /* the name of the datastore it feeds */
	char identity[REPL_IDENTITY_MAX]; /* repl_identity() of @root */
	char key[REPL_KEY_HEX_LEN + 1];
	char root[4096]; /* the datastore it feeds */
	char manifest[4096 + 128]; /* its snapshot manifest; "" none */
	char state[4096 + 128]; /* where "broken" is kept */
	char applying[4096 + 128]; /* the transfer marker (undo.h); "" none */
	struct repl_guard guard; /* its snapshot calls */
	/* The file a transfer writes, kept across its messages (dst.h;
	 * under the peers' lock, closed at a break and a role's change). */
	struct repl_open open;
	bool active; /* this end is the relation's destination now */
	bool broken;
	/* A CephFS source's: never the destination, no datastore here
	 * (@root, @manifest, @state and @applying are ""). */
	bool source_only;
};

/* REVERSE (reverse.h) for relation @name at snapshot @common, the peers'
 * lock held: 0 or -errno with the reason in @reason. */
typedef int repl_reverse_fn(void *arg, const char *name, const char *common,
			    char *reason, size_t len);

struct repl_peers {
	pthread_mutex_t lock; /* one message at a time per server */
	struct repl_peer list[REPL_PEERS_MAX];
	size_t n;
	repl_reverse_fn *reverse; /* NULL: REVERSE is refused */
	void *reverse_arg;
};

/* Reads key file @path into @key: a regular file, not readable by group
 * or others, 64 hex digits and an optional newline.  Returns 0 or -errno
 * (-EPERM: its mode; -EINVAL: its text) with the reason. */
int repl_key_load(const char *path, char key[REPL_KEY_HEX_LEN + 1],
		  char *errbuf, size_t errlen);

/* Key text @text (@n bytes: 64 hex digits, an optional newline) into
 * @key.  Returns 0 or -EINVAL. */
int repl_key_parse(const char *text, size_t n, char key[REPL_KEY_HEX_LEN + 1]);

/* @given (any length, may be NULL) is @key: constant time. */
bool repl_key_equal(const char *key, const char *given);

/* The identity of the datastore at @root into @out: this machine's
 * /etc/machine-id (else its host name), the root's device and inode.
 * Two relations' ends with the same identity are the same datastore.
 * Returns 0 or -errno. */
int repl_identity(const char *root, char out[REPL_IDENTITY_MAX]);

/* HELLO's argument: "IDENTITY DATASTORE", the source datastore's
 * identity and the destination datastore's name the source expects. */
int repl_hello_arg(const char *src_root, const char *dst_datastore, char *out,
		   size_t len);

/* Adds relation @name feeding datastore @datastore at @root (its
 * manifest @manifest, "" none; its broken flag and transfer marker kept
 * in @state_dir, NULL: not kept) with key file @key_path; @guard (may be
 * NULL; copied) locks its snapshot calls; @active: this end is the
 * destination now.  A transfer left applied in part (the server was
 * killed) is undone here.  Takes the peers' lock (at start too).
 * Returns 0 or -errno with the reason. */
int repl_peers_add(struct repl_peers *t, const char *name,
		   const char *datastore, const char *root,
		   const char *manifest, const char *state_dir,
		   const char *key_path, const struct repl_guard *guard,
		   bool active, char *errbuf, size_t errlen);

/* Adds relation @name whose source is datastore @datastore here, on
 * CephFS (a replication source only, docs/replication.md): with key file
 * @key_path, its requests are authenticated as any other's; it answers
 * HELLO and refuses every other operation with 409 and why (a REVERSE
 * would make it the destination, which is not built).  It is never
 * "feeding", never broken, never set or broken here, and touches no
 * datastore.  Takes the peers' lock.  Returns 0 or -errno with the
 * reason. */
int repl_peers_add_source_only(struct repl_peers *t, const char *name,
			       const char *datastore, const char *key_path,
			       char *errbuf, size_t errlen);

/* Removes relation @name from @t (DELETE /replications/NAME), its open
 * file closed, under the peers' lock.  Returns 0 or -ENOENT. */
int repl_peers_remove(struct repl_peers *t, const char *name);

/* Closes the files @t's relations keep open (the server stops). */
void repl_peers_fini(struct repl_peers *t);

/* Whether relation @name is configured here as its destination now and
 * not broken: its datastore is then read-only to NFS clients. */
bool repl_peers_feeding(struct repl_peers *t, const char *name);

/* How relation @name's end stands here: *broken, *applying (a transfer
 * is being applied), and its last committed replica into @last ("":
 * none; the newest repl-NAME-SEQ snapshot of its datastore).  Returns 0
 * or -ENOENT. */
int repl_peers_state(struct repl_peers *t, const char *name, bool *broken,
		     bool *applying, char last[SNAP_NAME_MAX + 1]);

/* Makes relation @name's end here the destination (@active) or not, and
 * broken or not (the broken flag kept).  The peers' lock must not be
 * held (repl_peers_set_locked() for a reverse callback).  Returns 0 or
 * -errno (-EPERM: a source-only entry, never the destination). */
int repl_peers_set(struct repl_peers *t, const char *name, bool active,
		   bool broken);
int repl_peers_set_locked(struct repl_peers *t, const char *name, bool active,
			  bool broken);

/* Breaks relation @name on this side (the destination's failover when
 * its source is gone): as a BREAK message (a transfer applied in part is
 * undone first).  Returns 0 or -errno with the reason (-EPERM: a
 * source-only entry). */
int repl_peers_break(struct repl_peers *t, const char *name, char *errbuf,
		     size_t errlen);

/* Whether @authorization may call relation @name, before its body is
 * read: 200, 404 or 401 as repl_peers_handle() would answer. */
unsigned repl_peers_auth(struct repl_peers *t, const char *name,
			 const char *authorization);

/*
 * One request: POST of body @b (@n bytes) for relation @name with
 * header @authorization (may be NULL).  The result goes to @out
 * (REPL_RESULT_HEAD + REPL_REASON_MAX bytes; *outlen).  Returns the HTTP
 * status: 200 (applied, or the operation's own error in the result),
 * 401 (no key or a wrong one), 404 (no such relation here), 400 (not a
 * message), 409 (the relation is broken here, or this end is its
 * source now, or a source only and the operation is not HELLO); nothing
 * is written but for a 200.  A HELLO whose source is this very
 * datastore, or that names another destination datastore, is answered
 * -EINVAL with the reason.
 */
unsigned repl_peers_handle(struct repl_peers *t, const char *name,
			   const char *authorization, const unsigned char *b,
			   size_t n, unsigned char *out, size_t *outlen);

#endif
