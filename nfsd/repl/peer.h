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
 * relation broken on this side takes nothing but HELLO, BREAK and
 * RESYNC: a failed-over datastore is never written by a late source.
 */
#ifndef DSNFS_REPL_PEER_H
#define DSNFS_REPL_PEER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "nfsd/repl/dst.h"

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
	bool broken;
};

struct repl_peers {
	pthread_mutex_t lock; /* one message at a time per server */
	struct repl_peer list[REPL_PEERS_MAX];
	size_t n;
};

/* Reads key file @path into @key: a regular file, not readable by group
 * or others, 64 hex digits and an optional newline.  Returns 0 or -errno
 * (-EPERM: its mode; -EINVAL: its text) with the reason. */
int repl_key_load(const char *path, char key[REPL_KEY_HEX_LEN + 1],
		  char *errbuf, size_t errlen);

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
 * manifest @manifest, "" none; its broken flag kept in @state_dir) with
 * key file @key_path.  Returns 0 or -errno with the reason. */
int repl_peers_add(struct repl_peers *t, const char *name,
		   const char *datastore, const char *root,
		   const char *manifest, const char *state_dir,
		   const char *key_path, char *errbuf, size_t errlen);

/* Whether relation @name is configured and not broken: its datastore
 * is then read-only to NFS clients. */
bool repl_peers_feeding(struct repl_peers *t, const char *name);

/*
 * One request: POST of body @b (@n bytes) for relation @name with
 * header @authorization (may be NULL).  The result goes to @out
 * (REPL_RESULT_HEAD + REPL_REASON_MAX bytes; *outlen).  Returns the HTTP
 * status: 200 (applied, or the operation's own error in the result),
 * 401 (no key or a wrong one), 404 (no such relation here), 400 (not a
 * message), 409 (the relation is broken here); nothing is written but
 * for a 200.  A HELLO whose source is this very datastore, or that names
 * another destination datastore, is answered -EINVAL with the reason.
 */
/* Breaks relation @name on this side (the destination's failover when
 * its source is gone): as a BREAK message.  Returns 0 or -errno. */
int repl_peers_break(struct repl_peers *t, const char *name, char *errbuf,
		     size_t errlen);

/* Whether @authorization may call relation @name, before its body is
 * read: 200, 404 or 401 as repl_peers_handle() would answer. */
unsigned repl_peers_auth(struct repl_peers *t, const char *name,
			 const char *authorization);

unsigned repl_peers_handle(struct repl_peers *t, const char *name,
			   const char *authorization, const unsigned char *b,
			   size_t n, unsigned char *out, size_t *outlen);

#endif
