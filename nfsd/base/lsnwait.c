// SPDX-License-Identifier: Apache-2.0
/*
 * lsnwait: the futex behind lsnwait.h.  A waiter reads its lane's word
 * before it looks at the LSN; a waker changes the word after it set the
 * LSN, so FUTEX_WAIT returns at once if anything moved in between (no
 * lost wake-up).
 */
#include "nfsd/base/lsnwait.h"

#include <limits.h>
#include <linux/futex.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

void lsnwait_init(struct lsnwait *w)
{
	atomic_store(&w->durable_lsn, 0);
	atomic_store(&w->failed, false);
	for (unsigned i = 0; i < LSNWAIT_LANES; i++) {
		atomic_store(&w->seq[i], 0);
	}
}

bool lsnwait_wait(struct lsnwait *w, unsigned lane, uint64_t end_lsn)
{
	_Atomic uint32_t *word = &w->seq[lane % LSNWAIT_LANES];

	for (;;) {
		uint32_t seen = atomic_load(word);

		if (atomic_load(&w->durable_lsn) >= end_lsn) {
			return true;
		}
		if (atomic_load(&w->failed)) {
			return false;
		}
		/* EAGAIN (the word moved), EINTR, a spurious wake-up: look
		 * again. */
		syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, seen,
			NULL, NULL, 0);
	}
}

void lsnwait_advance(struct lsnwait *w, uint64_t lsn)
{
	uint64_t cur = atomic_load(&w->durable_lsn);

	while (cur < lsn &&
	       !atomic_compare_exchange_weak(&w->durable_lsn, &cur, lsn)) {
	}
}

void lsnwait_wake(struct lsnwait *w, unsigned lane)
{
	_Atomic uint32_t *word = &w->seq[lane % LSNWAIT_LANES];

	atomic_fetch_add(word, 1);
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL,
		NULL, 0);
}

void lsnwait_wake_all(struct lsnwait *w)
{
	for (unsigned i = 0; i < LSNWAIT_LANES; i++) {
		lsnwait_wake(w, i);
	}
}

void lsnwait_fail(struct lsnwait *w)
{
	atomic_store(&w->failed, true);
	lsnwait_wake_all(w);
}
