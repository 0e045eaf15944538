/* SPDX-License-Identifier: Apache-2.0 */
/*
 * alarm: the thin-provisioning alarms of every datastore, a concern of its
 * own beside the admin API that shows them (/alarms, /metrics).  dirscan.c
 * walks a datastore's directory for its flat extents; alarm.c keeps one
 * view per datastore, a thread that rescans them every interval, and the
 * evaluation against the quotas that raises and clears each alarm.
 */
#ifndef DSNFS_ALARM_H
#define DSNFS_ALARM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nfsd/export/export.h"
#include "nfsd/pool/pool.h"

/* Bytes of @volume in use (its quota accounting).  Returns 0 or -ENOENT
 * when the volume is not known.  Called from the alarm thread. */
typedef int (*alarm_usage_fn)(void *arg, const char *volume,
			      uint64_t *used_bytes);

/* ---- datastore scan (dirscan.c) ---------------------------------------- */

/* Directory levels a scan descends (a datastore holds VM folders). */
#define ALARM_SCAN_MAX_DEPTH 8
/* Entries a scan looks at before it gives up with -E2BIG. */
#define ALARM_SCAN_MAX_ENTRIES 1000000

/* What one datastore's directory holds. */
struct alarm_scan {
	uint64_t provisioned_bytes; /* logical sizes of all *-flat.vmdk */
	uint64_t thin_provisioned_bytes; /* of those with holes (thin) */
	uint64_t allocated_bytes; /* blocks of every regular file */
	uint32_t disks; /* flat extents */
	uint32_t thin_disks;
	uint64_t files;
};

/*
 * Walks @dir (borrowed) without following symlinks or leaving its file
 * system, ALARM_SCAN_MAX_DEPTH levels deep.  A flat extent is thin when
 * fewer bytes are allocated than its logical size.  Returns 0 and fills
 * @out, or -errno (-E2BIG past ALARM_SCAN_MAX_ENTRIES).  Blocks: run it
 * off any event loop.
 */
int alarm_scan_dir(const char *dir, struct alarm_scan *out);

/* ---- thin-provisioning alarms (alarm.c) ------------------------------- */

enum alarm_kind {
	ALARM_USAGE = 0, /* used / quota */
	ALARM_OVERALLOCATION, /* provisioned / quota */
	ALARM_COUNT,
};

/* One datastore as last evaluated. */
struct alarm_view {
	char volume[POOL_NAME_MAX];
	bool scanned; /* scan holds a result */
	int scan_err; /* the last scan's error, 0 if it worked */
	int64_t scan_time_s; /* UTC, of the last good scan */
	struct alarm_scan scan;
	uint64_t quota_bytes; /* 0: not pooled, no alarms */
	bool used_known;
	uint64_t used_bytes;
	double percent[ALARM_COUNT]; /* valid with a quota */
	bool valid[ALARM_COUNT]; /* percent computed */
	bool raised[ALARM_COUNT];
};

/* What the alarms watch; the pointers are borrowed and must outlive the
 * alarm set. */
struct alarm_source {
	struct pool_registry *pools; /* the quotas */
	const struct export_table *exports; /* may be NULL: no datastores */
	/* May be NULL: a datastore's usage is then the allocated bytes of
	 * its directory, as the last scan found them. */
	alarm_usage_fn usage;
	void *usage_arg;
	uint32_t usage_percent; /* used / quota raises at this */
	uint32_t overallocation_percent; /* provisioned / quota */
	uint32_t interval_s; /* between scans */
};

struct alarm_set;

/* "usage", "overallocation". */
const char *alarm_kind_name(enum alarm_kind kind);

/* One alarm per export of src->exports; @src is copied.  Returns 0 and
 * *out (owned: alarm_set_free()), or -ENOMEM. */
int alarm_set_new(const struct alarm_source *src, struct alarm_set **out);

/* Starts the thread that calls alarm_set_scan() at once and then
 * every src->interval_s.  Returns 0 or -errno. */
int alarm_set_start(struct alarm_set *al);

/* Stops the thread, if started, and frees @al (takes).  NULL is fine. */
void alarm_set_free(struct alarm_set *al);

/* Scans every datastore, then evaluates (blocks for the scans). */
void alarm_set_scan(struct alarm_set *al);

/*
 * Evaluates every alarm against the last scans and the current quotas and
 * usage; an alarm that is raised is logged at warn, one that clears at
 * info, each once per crossing.  Returns 0 and a copy of every datastore
 * in *out (owned, free()) with *n, or -ENOMEM.
 */
int alarm_set_evaluate(struct alarm_set *al, struct alarm_view **out,
		       size_t *n);

#endif
