/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rlog: the intent log of a cephfs datastore's stable writes kept in a
 * RADOS object of the gateway (docs/durability.md, "RADOS intent log"),
 * so that it survives the gateway: the pool's replication keeps it, and
 * the gateway that takes over replays it.  The records and the superblock
 * are the local log's (ilog/ilog_record.h: same header, checksums, salt
 * and LSNs); this file adds what a log in RADOS needs beyond them:
 *
 * - The object "dsnfs.ilog.<datastore>.<gateway>" in the file system's
 *   data pool: a 4 KiB header (superblock slots 0 and 1 at 0 and 512, the
 *   owner block at STORE_RLOG_OWNER_OFF), then the ring.  A RADOS write is
 *   atomic (all of it or none), so a batch is never torn; the superblock
 *   slots are kept anyway (the codec is the local log's).
 * - The owner block: who wrote the log (gateway name) and the addresses of
 *   its two cluster clients (librados, libcephfs), and whether it closed
 *   cleanly.  A gateway that opens a log not closed cleanly blocklists
 *   those addresses first (rados_blocklist_add): the old owner's late
 *   writes, to the log or to the files, cannot land after the replay.
 * - Replay reads the ring from the head into memory (store__rlog_scan
 *   walks it) and stops at the first record that is not whole: the end of
 *   the log (another run's salt, zeros, an older lap), or a corrupt record
 *   (logged once, with its LSN and the reason; nothing after it is
 *   replayed).
 */
#ifndef DSNFS_STORE_RLOG_H
#define DSNFS_STORE_RLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nfsd/store/ilog/ilog_record.h"

#define STORE_RLOG_HEADER_BYTES 4096u /* the ring starts here */
#define STORE_RLOG_OWNER_OFF 1024u
#define STORE_RLOG_OWNER_BYTES 1024u
#define STORE_RLOG_ADDR_MAX 256u /* a client's address list, with NUL */
#define STORE_RLOG_NAME_MAX 64u
/* RADOS refuses objects past osd_max_object_size (128 MiB by default):
 * the ring and its header stay well below. */
#define STORE_RLOG_RING_MAX (64ull << 20)

/* The owner block (rlog.c encodes it, little endian, xxh3-sealed). */
struct store_rlog_owner {
	char gateway[STORE_RLOG_NAME_MAX];
	/* The old owner's clients to fence: librados's, libcephfs's. */
	char addr[2][STORE_RLOG_ADDR_MAX];
	bool clean; /* closed with everything checkpointed */
};

/* Encodes @o into STORE_RLOG_OWNER_BYTES at @out. */
void store__rlog_owner_encode(uint8_t *out, const struct store_rlog_owner *o);
/* Decodes the owner block at @buf: 0, or -EINVAL (magic, checksum, an
 * address or name without its NUL). */
int store__rlog_owner_decode(const uint8_t *buf, struct store_rlog_owner *o);

/*
 * Decodes the 4 KiB header @hdr: the newer valid superblock slot into
 * *sb, the owner into *owner.  0; -ENODATA when neither slot holds a
 * superblock nor its magic (zeros: no log); -EINVAL when the header is
 * damaged (a slot's magic without a valid slot, a bad owner block).
 */
int store__rlog_header_decode(const uint8_t *hdr, struct store_ilog_super *sb,
			      struct store_rlog_owner *owner);
/* Encodes the header of @sb (both slots: a RADOS write is atomic) and
 * @owner into @hdr (STORE_RLOG_HEADER_BYTES, zeroed first). */
void store__rlog_header_encode(uint8_t *hdr, const struct store_ilog_super *sb,
			       const struct store_rlog_owner *owner);

/* A record replay found; 0 to go on, -errno to stop the scan with it. */
typedef int (*store_rlog_rec_fn)(void *arg, const struct store_ilog_rec *rec);

/* How a scan ended. */
struct store_rlog_scan_end {
	uint64_t end_lsn; /* the first LSN not replayed */
	uint64_t records; /* WRITE records handed to the callback */
	/* 0: the normal end of the log; -EBADMSG / -EINVAL: the record at
	 * end_lsn is corrupt (a checksum, a field out of bounds);
	 * another -errno: the callback's. */
	int err;
};

/*
 * Walks the records in @ring (@len bytes: the ring read from LSN
 * @head_lsn on, in order, unwrapped) of the log with @salt, calling @fn on
 * each WRITE record (PAD and SYNCED records are passed over: a RADOS log
 * writes neither, but the codec knows them).  Stops at the first bytes
 * that are not a record of this log at their LSN.
 */
void store__rlog_scan(const uint8_t *ring, size_t len, uint64_t salt,
		      uint64_t head_lsn, store_rlog_rec_fn fn, void *arg,
		      struct store_rlog_scan_end *end);

/* The object's name for datastore @ds and gateway @gw: 0 or
 * -ENAMETOOLONG. */
int store__rlog_oid(char *out, size_t outlen, const char *ds, const char *gw);

#endif
