/* SPDX-License-Identifier: Apache-2.0 */
/*
 * repl wire: the operations a replication transfer does on its
 * destination (docs/replication.md, "Transport"), as one message each:
 * the source's engine (xfer.c, relation.c) builds a struct repl_msg, and
 * either applies it to a destination this process reaches (dst_local.c)
 * or sends it to the destination dsnfsd (client.c), whose admin endpoint
 * decodes it (repl_msg_decode(), bounded: every length is checked against
 * the body before it is used) and applies it the same way (peer.c).
 *
 * A message (little-endian): the fixed header REPL_MSG_HEAD bytes, then
 * the path, the argument and the data, their lengths in the header and
 * summing exactly to the body's.  A result: magic, -errno, the entry's
 * type, a value, the reason's length and the reason.
 */
#ifndef DSNFS_REPL_WIRE_H
#define DSNFS_REPL_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nfsd/repl/xfer.h"

enum repl_op {
	REPL_OP_HELLO = 1, /* arg: the source's identity; checks the pair */
	REPL_OP_EMPTY, /* value 1: the datastore holds nothing but .snapshot */
	REPL_OP_STAT, /* type of path (REPL_TYPE_*), value its size */
	REPL_OP_REMOVE, /* path, whatever it is (a tree with it) */
	REPL_OP_MKDIR, /* path a directory (what else was there goes) */
	REPL_OP_SYMLINK, /* path a symlink to arg (what was there goes) */
	/* path a regular file of size; flag WHOLE: emptied (its size comes
	 * with its ATTRS SIZE) */
	REPL_OP_OPEN,
	/* data (up to REPL_WRITE_MAX: a run of contiguous blocks) at off of
	 * path; xxh the xxh64 of the snapshot's bytes, checked against the
	 * bytes received before they are written */
	REPL_OP_WRITE,
	REPL_OP_ATTRS, /* owner, mode, times of path; flag SYNC: fsync */
	REPL_OP_PRUNE, /* removes from dir path what arg (names, NUL each)
			* does not list; value: how many went */
	REPL_OP_COMMIT, /* the destination's snapshot arg, made at mtime_s */
	REPL_OP_DELSNAP, /* deletes the destination's snapshot arg */
	REPL_OP_RESYNC, /* reverts to snapshot arg (if any), ends a break */
	REPL_OP_BREAK, /* the destination becomes writable */
	/* arg "NAME BASE" (BASE "" for a baseline): transfer NAME starts
	 * being applied on top of the destination's snapshot BASE; another
	 * one applied in part is undone first (undo.h); value 1: NAME
	 * itself is there in part (the source's journal holds), 0: the
	 * tree is at BASE (the journal is void) */
	REPL_OP_BEGIN,
	REPL_OP_ABORT, /* undoes the transfer being applied: back at BASE */
	/* arg: the last snapshot both sides hold; sent by the relation's
	 * destination to its source: the source reverts to it and becomes
	 * the destination (reverse.h) */
	REPL_OP_REVERSE,
	/* value 1: the destination holds snapshot arg, 0: not (a source
	 * that stopped around a COMMIT learns whether it was made) */
	REPL_OP_HASSNAP,
	REPL_OP_MAX = REPL_OP_HASSNAP,
};

#define REPL_FLAG_WHOLE 1u
#define REPL_FLAG_SYNC 2u
/* ATTRS of a regular file: its size is @size (set before the SYNC).  An
 * OPEN WHOLE empties the file and leaves its size to this: the file then
 * grows by appending, as a copy does, and XFS allocates it in the large
 * extents of its appends instead of filling holes inside EOF. */
#define REPL_FLAG_SIZE 4u

enum repl_type {
	REPL_TYPE_NONE = 0,
	REPL_TYPE_REG,
	REPL_TYPE_DIR,
	REPL_TYPE_LNK,
	REPL_TYPE_OTHER,
};

#define REPL_MSG_MAGIC 0x50525344u /* "DSRP" */
/* 2: BEGIN, ABORT, REVERSE; 3: a WRITE of up to REPL_WRITE_MAX, ATTRS
 * SIZE, the WRITE hashed with XXH3 (HASSNAP came late in 2).  A peer
 * of another version is refused at its first message (HELLO), before a
 * body it cannot hold. */
#define REPL_MSG_VERSION 3u
#define REPL_MSG_HEAD 88u
#define REPL_PATH_MAX 4096u /* with its NUL */
#define REPL_ARG_MAX (512u << 10) /* a PRUNE's names */
/* A WRITE's data: up to 16 contiguous blocks, so that a baseline is a
 * request per MiB, not per block. */
#define REPL_WRITE_BLOCKS 16u
#define REPL_WRITE_MAX (REPL_WRITE_BLOCKS * REPL_BLOCK)
/* The largest body the destination's replication route takes (its own
 * limit: the rest of the admin API keeps ADMIN_BODY_MAX_BYTES). */
#define REPL_MSG_MAX                                                           \
	(REPL_MSG_HEAD + REPL_PATH_MAX + REPL_ARG_MAX + REPL_WRITE_MAX)
#define REPL_REASON_MAX 512u
#define REPL_RESULT_HEAD 20u

struct repl_msg {
	uint8_t op; /* enum repl_op */
	uint8_t flags;
	char path[REPL_PATH_MAX]; /* relative to the datastore; "" its root */
	const char *arg; /* NUL-terminated; arg_len bytes before it */
	size_t arg_len;
	const void *data; /* WRITE's bytes, at most REPL_WRITE_MAX */
	size_t len;
	uint64_t off, size, xxh;
	uint32_t mode, uid, gid;
	int64_t atime_s, mtime_s;
	uint32_t atime_ns, mtime_ns;
};

struct repl_result {
	int32_t err; /* 0 or -errno */
	uint8_t type; /* STAT: enum repl_type */
	uint64_t value;
	char reason[REPL_REASON_MAX];
};

/* @m as a body: returns its length and *out (owned: free()), or -errno
 * (-ENAMETOOLONG, -E2BIG past the limits, -ENOMEM). */
long repl_msg_encode(const struct repl_msg *m, unsigned char **out);

/* @m's body but its data (m->len bytes, which follow it): into @b of
 * @cap bytes.  Returns its length, or -errno as repl_msg_encode() and
 * -ENOBUFS when @cap is short (REPL_MSG_HEAD + REPL_PATH_MAX +
 * REPL_ARG_MAX always does). */
long repl_msg_encode_head(const struct repl_msg *m, unsigned char *b,
			  size_t cap);

/*
 * Decodes body @b (@n bytes, borrowed) into @m: m->data points into @b,
 * m->arg into *argbuf (owned: free(), NULL without an argument).  Refuses
 * (-EINVAL, the reason in @errbuf) a wrong magic or version, an unknown
 * operation or flag, lengths that do not sum to @n or pass their limits,
 * a NUL inside the path, nanoseconds past a second.
 */
int repl_msg_decode(const unsigned char *b, size_t n, struct repl_msg *m,
		    char **argbuf, char *errbuf, size_t errlen);

/* @r as a body into @out (REPL_RESULT_HEAD + REPL_REASON_MAX bytes);
 * returns its length. */
size_t repl_result_encode(const struct repl_result *r, unsigned char *out);

/* Decodes a result body; -EINVAL when it is not one. */
int repl_result_decode(const unsigned char *b, size_t n, struct repl_result *r);

/* A WRITE's check (its @xxh): XXH3's 64-bit hash of its data, taken by
 * the source on the snapshot's bytes and by the destination on the bytes
 * it received (version 2 took XXH64: XXH3 costs a third of it on a MiB,
 * and both ends hash every byte of a baseline). */
uint64_t repl_write_hash(const void *data, size_t len);

/* The operation's name ("write", ...), for the reasons. */
const char *repl_op_name(unsigned op);

#endif
