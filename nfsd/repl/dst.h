/* SPDX-License-Identifier: Apache-2.0 */
/*
 * repl dst: where a transfer's operations (wire.h) go.  Two kinds: a
 * destination datastore this process reaches (dst_local.c: the tests,
 * and what the destination dsnfsd runs for each message it takes) and a
 * destination on another dsnfsd (client.c: the messages over HTTP).
 */
#ifndef DSNFS_REPL_DST_H
#define DSNFS_REPL_DST_H

#include <stddef.h>

#include "nfsd/repl/wire.h"

struct repl_dst {
	/* Applies @m; fills @r (r->err: 0 or -errno, with r->reason). */
	void (*call)(struct repl_dst *d, const struct repl_msg *m,
		     struct repl_result *r);
	void (*close)(struct repl_dst *d); /* may be NULL */
	/* Another connection to the same destination, for a WRITE in
	 * flight beside this one's (lanes.h): *out closed by its close.
	 * May be NULL (one connection).  Returns 0 or -errno with the
	 * reason. */
	int (*dup)(struct repl_dst *d, struct repl_dst **out, char *errbuf,
		   size_t errlen);
};

/* d->call(), the reason ("OP PATH: ...") copied to @errbuf.  Returns
 * r->err. */
int repl_dst_call(struct repl_dst *d, const struct repl_msg *m,
		  struct repl_result *r, char *errbuf, size_t errlen);

/*
 * The file a transfer is writing, kept open from its OPEN (or first
 * WRITE) to its last message, so that a file's WRITEs do not each
 * resolve, open and close it: closed at the file's ATTRS (after its
 * fsync), at any other operation (a STAT, a REMOVE, another file, BEGIN,
 * ABORT, COMMIT, a break) and on an error.  Nothing else touches the
 * tree between a file's OPEN and its ATTRS: the destination is
 * read-only to NFS clients while it is fed, and one message is applied
 * at a time (peer.h).
 */
struct repl_open {
	int fd; /* -1: none */
	char path[REPL_PATH_MAX]; /* the message's path it was opened for */
};

void repl_open_init(struct repl_open *o);
void repl_open_close(struct repl_open *o);

/* A destination datastore of this process: its root directory and its
 * snapshot manifest (NULL: no snapshots; COMMIT, DELSNAP, RESYNC do
 * nothing but the tree's checks). */
struct repl_guard;

struct repl_local {
	struct repl_dst pub;
	int rootfd; /* O_PATH, every path resolved beneath it */
	char root[4096];
	const char *manifest; /* borrowed */
	/* Set after repl_local_open() (borrowed; NULL by default): the
	 * marker of the transfer being applied (undo.h; NULL: none kept,
	 * BEGIN never resumes) and the lock of the snapshot calls
	 * (guard.h; NULL: none). */
	const char *applying;
	const struct repl_guard *guard;
	/* The file being written: @own by default (closed by
	 * repl_local_close()); a caller whose repl_local lives for one
	 * message points it at one that outlives it (peer.h). */
	struct repl_open *open;
	struct repl_open own;
};

/* Opens @l on @root.  Returns 0 or -errno with the reason. */
int repl_local_open(struct repl_local *l, const char *root,
		    const char *manifest, char *errbuf, size_t errlen);
void repl_local_close(struct repl_local *l);

/*
 * Applies @m to @l's datastore: every path a relative one of names (no
 * "", ".", ".." component, no leading '/', not under .snapshot), resolved
 * beneath the root without following a symlink (openat2
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS: -ELOOP, -EXDEV), the entry
 * itself never followed.  A refused path changes nothing.
 */
void repl_local_apply(struct repl_local *l, const struct repl_msg *m,
		      struct repl_result *r);

/* Checks @rel as repl_local_apply() does (@root_ok: "" is the root). */
int repl_path_check(const char *rel, bool root_ok, char *errbuf, size_t errlen);

#endif
