/* SPDX-License-Identifier: Apache-2.0 */
/*
 * repl sched: when a replication relation transfers, on the server's
 * clock (UTC), as ANF's schedules: every 10 minutes (at :00, :10, ...),
 * hourly (at :00) or daily (at 00:00).  A transfer still running when its
 * next run falls due does not overlap itself: that run is skipped, said
 * in one log line and raised as an alarm by the caller
 * (repl_sched_decide()).  Pure: the unit tests drive the clock.
 */
#ifndef DSNFS_REPL_SCHED_H
#define DSNFS_REPL_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum repl_schedule {
	REPL_SCHED_NONE = 0, /* by hand only (POST .../transfer) */
	REPL_SCHED_10MIN,
	REPL_SCHED_HOURLY,
	REPL_SCHED_DAILY,
};

/* "10min", "hourly", "daily" or "none" into *out.  Returns 0 or -EINVAL. */
int repl_sched_parse(const char *s, enum repl_schedule *out);

/* The schedule's name (static). */
const char *repl_sched_name(enum repl_schedule s);

/*
 * What a relation's schedule is, as configured, for people (dsnfsctl
 * replication show, the start's log line): "every N s" when
 * @every_seconds (schedule_seconds) is set, which then replaces
 * @schedule; else @schedule ("10min", "hourly", ...; "none" when NULL or
 * empty).  Returns @buf (@len bytes, filled) or @schedule (borrowed).
 */
const char *repl_sched_text(const char *schedule, int64_t every_seconds,
			    char *buf, size_t len);

/* Its interval in seconds (0 for none). */
int64_t repl_sched_interval(enum repl_schedule s);

/* The first run strictly after @now (UTC seconds), or INT64_MAX for none. */
int64_t repl_sched_next(enum repl_schedule s, int64_t now);

enum repl_sched_action {
	REPL_SCHED_WAIT = 0, /* not due */
	REPL_SCHED_RUN, /* due: start a transfer */
	REPL_SCHED_SKIP, /* due while the last one still runs: skip, alarm */
};

/* The state of one relation's clock. */
struct repl_sched_state {
	int64_t next_s; /* the next run (UTC); 0: not computed yet */
	uint64_t skipped; /* runs skipped because a transfer overran */
};

/*
 * What to do at @now for schedule @s with a transfer running or not;
 * advances @st->next_s past @now when a run falls due (run or skipped:
 * runs missed while the server was down or a transfer overran are one
 * decision, not a burst).
 */
enum repl_sched_action repl_sched_decide(enum repl_schedule s,
					 struct repl_sched_state *st,
					 int64_t now, bool running);

#endif
