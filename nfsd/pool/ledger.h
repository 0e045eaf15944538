/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ledger: the append-only, durable record of capacity events (a pool
 * created, resized, its level or purchased throughput changed, deleted),
 * from which billing.h computes bills.  Each event carries the pool's whole
 * billable state after it, so a bill never needs anything but the ledger
 * and a price list.
 *
 * File format (little endian):
 *   header   8 bytes "DSNFSLD1"
 *   record   u32 payload length | payload | u64 xxh64(length + payload)
 *   payload  u8 version (1) | u8 type | u8 level | u8 name length |
 *            u32 size_tib | u32 purchased_mibps | i64 time_s | name
 * Every append is fsync'd before it returns.  On open the file is replayed:
 * a torn or corrupt LAST record (a crash during an append) is reported and
 * dropped (truncated away when the ledger is opened for writing); damage
 * before the last record is an error, never skipped.
 */
#ifndef DSNFS_POOL_LEDGER_H
#define DSNFS_POOL_LEDGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nfsd/pool/pool.h"

#define POOL_LEDGER_MAGIC "DSNFSLD1"
#define POOL_LEDGER_HEADER_BYTES 8
#define POOL_LEDGER_PAYLOAD_FIXED_BYTES 20
#define POOL_LEDGER_PAYLOAD_MAX_BYTES                                          \
	(POOL_LEDGER_PAYLOAD_FIXED_BYTES + POOL_NAME_MAX - 1)
#define POOL_LEDGER_RECORD_MAX_BYTES (4 + POOL_LEDGER_PAYLOAD_MAX_BYTES + 8)
#define POOL_LEDGER_MAX_EVENTS (1u << 20)

enum pool_event_type {
	POOL_EVENT_CREATED = 1,
	POOL_EVENT_RESIZED,
	POOL_EVENT_LEVEL_CHANGED,
	POOL_EVENT_THROUGHPUT_CHANGED, /* Flexible purchased throughput */
	POOL_EVENT_DELETED,
};

/* One capacity event.  level, size_tib and purchased_mibps are the pool's
 * state after the event (before it, for POOL_EVENT_DELETED). */
struct pool_event {
	enum pool_event_type type;
	int64_t time_s; /* UTC seconds since the epoch */
	char pool[POOL_NAME_MAX];
	enum pool_level level;
	uint32_t size_tib;
	uint32_t purchased_mibps;
};

/* What a replay found at the end of the file. */
struct pool_ledger_recovery {
	bool torn; /* a torn or corrupt last record was dropped */
	uint64_t offset; /* where the dropped bytes started */
	uint64_t dropped_bytes;
	char why[128]; /* "record cut short", "checksum mismatch" */
};

enum pool_ledger_mode {
	POOL_LEDGER_READ_ONLY = 0, /* replay only; the file is not changed */
	POOL_LEDGER_READ_WRITE, /* created if missing, locked, appendable */
};

struct pool_ledger;

/* "created", "resized", "level-changed", "throughput-changed", "deleted". */
const char *pool_event_type_name(enum pool_event_type type);

/*
 * Opens and replays the ledger at @path.  READ_WRITE creates a missing file,
 * takes an exclusive lock (-EBUSY when another process holds it) and
 * truncates a torn last record away; READ_ONLY only skips it (a writer may
 * be appending it right now).  @rec (may be NULL) says what was dropped.
 * Returns 0 and *out (owned, pool_ledger_close()), or -errno with the file,
 * offset and reason in errbuf: -EILSEQ for damage before the last record or
 * a file that is not a ledger.
 */
int pool_ledger_open(const char *path, enum pool_ledger_mode mode,
		     struct pool_ledger **out, struct pool_ledger_recovery *rec,
		     char *errbuf, size_t errlen);

/* Closes @ledger (takes). */
void pool_ledger_close(struct pool_ledger *ledger);

/*
 * Appends @n events (borrowed) and fsyncs.  An event stamped before the
 * last one is stamped with the last one's time (the wall clock stepped
 * back), so the ledger's times never decrease.  On failure the file is cut
 * back to where it was and -errno returned with a message.  -EBADF for a
 * read-only ledger, -EINVAL for an invalid event, -ENOSPC past
 * POOL_LEDGER_MAX_EVENTS.  Thread-safe.
 */
int pool_ledger_append(struct pool_ledger *ledger,
		       const struct pool_event *events, size_t n, char *errbuf,
		       size_t errlen);

/* A copy of every event so far, in order.  Returns 0 and *out (owned,
 * free()) with *n, or -ENOMEM.  *out is NULL when *n is 0.  Thread-safe. */
int pool_ledger_events(struct pool_ledger *ledger, struct pool_event **out,
		       size_t *n);

/*
 * Decodes a whole ledger image (the pure half of pool_ledger_open(), for
 * tests and fuzzing).  @buf is borrowed.  Returns 0 with *events (owned,
 * free(); NULL when none), *n, *valid_len (the bytes worth keeping) and
 * @rec filled, or -EILSEQ / -ENOMEM with the offset and reason in errbuf.
 */
int pool_ledger_decode(const uint8_t *buf, size_t len,
		       struct pool_event **events, size_t *n, size_t *valid_len,
		       struct pool_ledger_recovery *rec, char *errbuf,
		       size_t errlen);

/* Encodes one event as a record into @buf (room for
 * POOL_LEDGER_RECORD_MAX_BYTES).  Returns the record's length, or -EINVAL
 * for an invalid event. */
int pool_ledger_encode(const struct pool_event *ev, uint8_t *buf, size_t len);

/* ---- events (events.c) ------------------------------------------------- */

/*
 * Replays @events into the pools alive after them (in order of creation):
 * fills @out (room for @max) and *nout.  The pools' qos is left auto; the
 * ledger does not record it.  Returns 0, -EINVAL when an event breaks a
 * pool's life cycle (resized before created, created twice), or -ENOSPC,
 * with the event's index and the reason in errbuf.
 */
int pool_events_replay(const struct pool_event *events, size_t n,
		       struct pool *out, size_t max, size_t *nout, char *errbuf,
		       size_t errlen);

/*
 * The events that turn the billable state of pools @from into @to, stamped
 * @now_s: created / deleted, and for a changed pool one event per changed
 * field (level, size, purchased throughput), each with the state so far.
 * Fills @out (room for @max) and *nout.  Returns 0 or -ENOSPC.
 */
int pool_events_diff(const struct pool *from, size_t nfrom,
		     const struct pool *to, size_t nto, int64_t now_s,
		     struct pool_event *out, size_t max, size_t *nout);

/*
 * Applies @ev to the life of one pool: *alive and *state are its state
 * before and after.  Returns 0, or -EINVAL with the reason in errbuf when
 * the event cannot happen (a pool created twice, changed or deleted before
 * it was created).
 */
int pool_event_apply(const struct pool_event *ev, bool *alive,
		     struct pool *state, char *errbuf, size_t errlen);

#endif
