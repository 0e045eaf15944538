/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lsnwait: threads waiting for a log to be durable up to their record's
 * end, woken without a mutex.  With a condition variable each woken
 * waiter takes the log's lock again, one after the other, and a
 * broadcast wakes the writers of the batch still filling too; here a
 * waiter sleeps on the futex of its batch's buffer (of LSNWAIT_LANES),
 * checks an atomic LSN and returns.  The log sets the LSN (under its own
 * lock), then wakes the lane of the buffer whose write returned, or every
 * lane (a checkpoint, a failure).
 */
#ifndef DSNFS_LSNWAIT_H
#define DSNFS_LSNWAIT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define LSNWAIT_LANES 2u

struct lsnwait {
	_Atomic uint64_t durable_lsn; /* records ending at or below: stable */
	_Atomic bool failed; /* no record becomes stable any more */
	_Atomic uint32_t seq[LSNWAIT_LANES]; /* the futex words */
};

/* All zero is a valid start (durable_lsn 0, not failed). */
void lsnwait_init(struct lsnwait *w);

/* Waits on @lane until durable_lsn >= @end_lsn (true) or the log failed
 * (false); durable wins over failed. */
bool lsnwait_wait(struct lsnwait *w, unsigned lane, uint64_t end_lsn);

/* Raises durable_lsn to @lsn (never lowers it); wakes nobody. */
void lsnwait_advance(struct lsnwait *w, uint64_t lsn);

/* Wakes every waiter of @lane (they look again). */
void lsnwait_wake(struct lsnwait *w, unsigned lane);

/* Wakes every waiter of every lane. */
void lsnwait_wake_all(struct lsnwait *w);

/* Marks the log failed and wakes everyone. */
void lsnwait_fail(struct lsnwait *w);

#endif
