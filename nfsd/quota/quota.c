// SPDX-License-Identifier: Apache-2.0
/*
 * quota: the running figures of one datastore (quota.h).  A reservation
 * is taken with a compare-and-swap on reserved_bytes against the used
 * figure and the limit read just before: two writers cannot both take the
 * last room, because the second one's swap fails and it looks again.
 */
#include "nfsd/quota/quota.h"

#include <errno.h>
#include <stdlib.h>

#include "nfsd/quota/quota_int.h"

void quota_init(struct quota *q)
{
	atomic_init(&q->limit_bytes, 0);
	atomic_init(&q->used_bytes, 0);
	atomic_init(&q->reserved_bytes, 0);
	pthread_mutex_init(&q->lock, NULL);
	q->files = (struct quota_files){ 0 };
}

void quota_fini(struct quota *q)
{
	quota_files_clear(&q->files);
	pthread_mutex_destroy(&q->lock);
}

void quota_set_limit(struct quota *q, uint64_t limit_bytes)
{
	atomic_store(&q->limit_bytes, limit_bytes);
}

uint64_t quota__used(struct quota *q)
{
	int64_t used = atomic_load(&q->used_bytes);

	return used > 0 ? (uint64_t)used : 0;
}

void quota_get(struct quota *q, struct quota_usage *out)
{
	out->limit_bytes = atomic_load(&q->limit_bytes);
	out->used_bytes = quota__used(q);
	out->reserved_bytes = atomic_load(&q->reserved_bytes);
	pthread_mutex_lock(&q->lock);
	out->files = q->files.count;
	pthread_mutex_unlock(&q->lock);
}

static uint64_t quota_round_up(uint64_t v)
{
	uint64_t r = v % QUOTA_BLOCK_BYTES;

	if (!r) {
		return v;
	}
	return v > UINT64_MAX - (QUOTA_BLOCK_BYTES - r)
		       ? UINT64_MAX
		       : v + (QUOTA_BLOCK_BYTES - r);
}

uint64_t quota_write_growth(uint64_t size_bytes, uint64_t used_bytes,
			    uint64_t off_bytes, uint32_t count)
{
	uint64_t end;

	if (count == 0) {
		return 0;
	}
	end = off_bytes > UINT64_MAX - count ? UINT64_MAX : off_bytes + count;
	if (used_bytes >= quota_round_up(size_bytes) && end <= size_bytes) {
		return 0;
	}
	return quota_round_up(end) -
	       (off_bytes - off_bytes % QUOTA_BLOCK_BYTES);
}

int quota_reserve(struct quota *q, uint64_t bytes)
{
	uint64_t limit = atomic_load(&q->limit_bytes);
	uint64_t reserved = atomic_load(&q->reserved_bytes);

	if (!limit || !bytes) {
		atomic_fetch_add(&q->reserved_bytes, bytes);
		return 0;
	}
	for (;;) {
		uint64_t used = quota__used(q);

		if (used > limit || reserved > limit - used ||
		    bytes > limit - used - reserved) {
			return -ENOSPC;
		}
		if (atomic_compare_exchange_weak(&q->reserved_bytes, &reserved,
						 reserved + bytes)) {
			return 0;
		}
	}
}

void quota_release(struct quota *q, uint64_t bytes)
{
	if (bytes) {
		atomic_fetch_sub(&q->reserved_bytes, bytes);
	}
}

void quota__add(struct quota *q, int64_t delta_bytes)
{
	if (delta_bytes) {
		atomic_fetch_add(&q->used_bytes, delta_bytes);
	}
}

int quota_file_update(struct quota *q, uint64_t fileid,
		      quota_measure_fn measure, void *arg)
{
	struct quota_file *f;
	uint64_t now;
	int err;

	pthread_mutex_lock(&q->lock);
	err = measure(arg, &now);
	if (err) {
		goto out;
	}
	f = quota_files_find(&q->files, fileid);
	if (!f) {
		f = quota_files_add(&q->files, fileid, 0);
		if (!f) {
			err = -ENOMEM;
			goto out;
		}
	}
	quota__add(q, (int64_t)(now - f->used_bytes));
	f->used_bytes = now;
out:
	pthread_mutex_unlock(&q->lock);
	return err;
}

void quota_file_forget(struct quota *q, uint64_t fileid)
{
	uint64_t used;

	pthread_mutex_lock(&q->lock);
	if (quota_files_remove(&q->files, fileid, &used)) {
		quota__add(q, -(int64_t)used);
	}
	pthread_mutex_unlock(&q->lock);
}
