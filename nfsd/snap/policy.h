/* SPDX-License-Identifier: Apache-2.0 */
/*
 * snap/policy: snapshot policies as Azure NetApp Files has them (its
 * snapshotPolicies resource): per datastore an hourly schedule (at a
 * minute), a daily one (at HH:MM), a weekly one (on some days of the week
 * at HH:MM) and a monthly one (on some days of the month at HH:MM), each
 * with a number of snapshots to keep, the keeps together at most 255, the
 * most snapshots a volume holds.  Times are UTC, as ANF's.
 *
 * This file is the pure part, no I/O, so that unit tests drive it through
 * days without waiting: the text form of a schedule (the config keys and
 * dsnfsctl), the slot a schedule last came due at a given "now", the name
 * of a policy snapshot (KIND-YYYY-MM-DD_HHMM, ANF's form), and the
 * retention plan (which of a kind go, before or after the new one, or a
 * refusal at 255).  The engine that runs it is nfsd/admin/snap_policy.c;
 * the record of which snapshots a policy made, policy_record.c.
 */
#ifndef DSNFS_SNAP_POLICY_H
#define DSNFS_SNAP_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum snap_policy_kind {
	SNAP_POLICY_HOURLY = 0,
	SNAP_POLICY_DAILY,
	SNAP_POLICY_WEEKLY,
	SNAP_POLICY_MONTHLY,
	SNAP_POLICY_KINDS,
};

/* Snapshots a datastore holds at most, by hand and by policy (ANF's). */
#define SNAP_POLICY_MAX_SNAPSHOTS 255

struct snap_policy_sched {
	bool on;
	uint8_t minute; /* 0..59 */
	uint8_t hour; /* 0..23; not hourly */
	uint8_t wdays; /* weekly: bit 0 Sunday .. bit 6 Saturday */
	uint32_t mdays; /* monthly: bit D for day D, 1..31 */
	uint16_t keep; /* 1..255 */
};

struct snap_policy {
	struct snap_policy_sched k[SNAP_POLICY_KINDS];
};

/* "hourly", "daily", "weekly", "monthly". */
const char *snap_policy_kind_name(enum snap_policy_kind kind);
/* Returns 0 and *out, or -EINVAL. */
int snap_policy_kind_parse(const char *name, enum snap_policy_kind *out);

/*
 * The text form of one schedule, as the config keys snapshot_hourly ..
 * snapshot_monthly and dsnfsctl take it:
 *   hourly   ":MM keep N"            (at minute MM of every hour)
 *   daily    "HH:MM keep N"
 *   weekly   "DAYS HH:MM keep N"     (DAYS: mon,fri; sun..sat)
 *   monthly  "DAYS HH:MM keep N"     (DAYS: 1,15,31; a month without
 *                                     the day skips it)
 *   any      "off"                   (no schedule of that kind)
 * Returns 0 with *out filled, or -EINVAL with the reason in @errbuf.
 */
int snap_policy_sched_parse(enum snap_policy_kind kind, const char *text,
			    struct snap_policy_sched *out, char *errbuf,
			    size_t errlen);
/* The text form of @s (what parse reads back). */
void snap_policy_sched_format(enum snap_policy_kind kind,
			      const struct snap_policy_sched *s, char *buf,
			      size_t len);

/* Whether any schedule of @p is on. */
bool snap_policy_any(const struct snap_policy *p);

/* The keeps of @p summed; more than SNAP_POLICY_MAX_SNAPSHOTS is
 * -EINVAL with the reason (ANF: "Total number of snapshots to keep
 * exceeds 255"). */
int snap_policy_check(const struct snap_policy *p, char *errbuf, size_t errlen);

/* The latest time (UTC seconds) at or before @now at which @s came due,
 * or -1 when it is off (or came due never in the last 100 days). */
int64_t snap_policy_slot(enum snap_policy_kind kind,
			 const struct snap_policy_sched *s, int64_t now);

/* What the engine remembers of one datastore's policy: the slot each
 * kind last ran for.  Zeroed = not primed. */
struct snap_policy_state {
	bool primed;
	int64_t last[SNAP_POLICY_KINDS];
};

/*
 * The kinds of @p due at @now, as a bit mask (bit KIND), with the slot of
 * each in @slots.  The first call on a zeroed @st primes it: the slots of
 * that moment count as done (no snapshot for a time before the policy
 * ran, as ANF takes none in arrears), and nothing is due.  A kind whose
 * slot has moved on since snap_policy_done() is due once, however many
 * slots went by (a server that slept takes one, not all it missed).
 */
unsigned snap_policy_due(const struct snap_policy *p,
			 struct snap_policy_state *st, int64_t now,
			 int64_t slots[SNAP_POLICY_KINDS]);
/* Marks @kind's @slot done (made, or failed for good). */
void snap_policy_done(struct snap_policy_state *st, enum snap_policy_kind kind,
		      int64_t slot);

/* The name of @kind's snapshot of @slot: "hourly-2026-12-04_2015". */
void snap_policy_name(enum snap_policy_kind kind, int64_t slot, char *buf,
		      size_t len);
/* Reads such a name back.  Returns 0 with *kind and *slot, or -EINVAL. */
int snap_policy_name_parse(const char *name, enum snap_policy_kind *kind,
			   int64_t *slot);

/*
 * What a new policy snapshot of a kind takes, given @total snapshots in
 * the datastore (by hand and by policy), @nkind of them this kind's made
 * by the policy, and its @keep: the oldest of the kind that go before
 * the new one is made (only so that it does not pass 255) and after, or
 * @refused when even then it would pass SNAP_POLICY_MAX_SNAPSHOTS
 * (snapshots by hand fill the rest: they are never deleted by a policy).
 */
struct snap_policy_plan {
	size_t del_before;
	size_t del_after;
	bool refused;
};
void snap_policy_plan(size_t total, size_t nkind, unsigned keep,
		      struct snap_policy_plan *out);

/* ---- policy_record.c: which snapshots a policy made --------------------
 *
 * STATE_DIR/snapshot-policy-NAME.record, one snapshot name a line after a
 * version line, replaced atomically.  A snapshot by hand is never in it,
 * so retention never takes one, whatever its name.
 */
struct snap_policy_record {
	char (*names)[64]; /* owned */
	size_t n;
};

/* Reads @path (absent: empty).  Returns 0 or -errno with the reason. */
int snap_policy_record_load(const char *path, struct snap_policy_record *r,
			    char *errbuf, size_t errlen);
int snap_policy_record_save(const char *path,
			    const struct snap_policy_record *r, char *errbuf,
			    size_t errlen);
bool snap_policy_record_has(const struct snap_policy_record *r,
			    const char *name);
int snap_policy_record_add(struct snap_policy_record *r, const char *name);
void snap_policy_record_del(struct snap_policy_record *r, const char *name);
void snap_policy_record_free(struct snap_policy_record *r);

#endif
