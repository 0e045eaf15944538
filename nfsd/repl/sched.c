// SPDX-License-Identifier: Apache-2.0
/*
 * sched: a replication relation's schedule (sched.h).
 */
#include "nfsd/repl/sched.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char *const sched_names[] = {
	[REPL_SCHED_NONE] = "none",
	[REPL_SCHED_10MIN] = "10min",
	[REPL_SCHED_HOURLY] = "hourly",
	[REPL_SCHED_DAILY] = "daily",
};

int repl_sched_parse(const char *s, enum repl_schedule *out)
{
	for (size_t i = 0; i < sizeof(sched_names) / sizeof(sched_names[0]);
	     i++) {
		if (s && !strcmp(s, sched_names[i])) {
			*out = (enum repl_schedule)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *repl_sched_name(enum repl_schedule s)
{
	return (unsigned)s < sizeof(sched_names) / sizeof(sched_names[0])
		       ? sched_names[s]
		       : "?";
}

int64_t repl_sched_interval(enum repl_schedule s)
{
	switch (s) {
	case REPL_SCHED_10MIN:
		return 600;
	case REPL_SCHED_HOURLY:
		return 3600;
	case REPL_SCHED_DAILY:
		return 86400;
	default:
		return 0;
	}
}

int64_t repl_sched_next(enum repl_schedule s, int64_t now)
{
	int64_t iv = repl_sched_interval(s);
	int64_t q;

	if (!iv) {
		return INT64_MAX;
	}
	/* UTC has no leap seconds in time_t: the slots are multiples. */
	q = now >= 0 ? now / iv : (now - iv + 1) / iv;
	return (q + 1) * iv;
}

enum repl_sched_action repl_sched_decide(enum repl_schedule s,
					 struct repl_sched_state *st,
					 int64_t now, bool running)
{
	if (s == REPL_SCHED_NONE) {
		return REPL_SCHED_WAIT;
	}
	if (!st->next_s) {
		st->next_s = repl_sched_next(s, now);
		return REPL_SCHED_WAIT;
	}
	if (now < st->next_s) {
		return REPL_SCHED_WAIT;
	}
	st->next_s = repl_sched_next(s, now);
	if (running) {
		st->skipped++;
		return REPL_SCHED_SKIP;
	}
	return REPL_SCHED_RUN;
}

const char *repl_sched_text(const char *schedule, int64_t every_seconds,
			    char *buf, size_t len)
{
	if (every_seconds > 0) {
		snprintf(buf, len, "every %" PRId64 " s", every_seconds);
		return buf;
	}
	return schedule && *schedule ? schedule : "none";
}
