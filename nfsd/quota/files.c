/*
 * files: the per-inode allocation records of a datastore (quota.h), a
 * chained hash table that doubles as it fills, and the two updates the
 * NFS calls make through it.  Everything here runs under q->lock.
 */
#include <errno.h>
#include <stdlib.h>

#include "nfsd/quota/quota_int.h"

#define QUOTA_BUCKETS_MIN 64

static size_t quota_bucket(uint64_t fileid, size_t nbuckets)
{
	/* Fibonacci hashing: inode numbers come in runs. */
	return (size_t)((fileid * UINT64_C(0x9E3779B97F4A7C15)) >> 32) &
	       (nbuckets - 1);
}

struct quota_file *quota__file_find(struct quota *q, uint64_t fileid)
{
	if (!q->nbuckets)
		return NULL;
	for (struct quota_file *f =
		     q->buckets[quota_bucket(fileid, q->nbuckets)];
	     f; f = f->next) {
		if (f->fileid == fileid)
			return f;
	}
	return NULL;
}

/* Doubles the table (or makes the first one).  0 or -ENOMEM. */
static int quota_files_grow(struct quota *q)
{
	size_t n = q->nbuckets ? q->nbuckets * 2 : QUOTA_BUCKETS_MIN;
	struct quota_file **b = calloc(n, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < q->nbuckets; i++) {
		struct quota_file *f = q->buckets[i];

		while (f) {
			struct quota_file *next = f->next;
			size_t j = quota_bucket(f->fileid, n);

			f->next = b[j];
			b[j] = f;
			f = next;
		}
	}
	free(q->buckets);
	q->buckets = b;
	q->nbuckets = n;
	return 0;
}

struct quota_file *quota__file_add(struct quota *q, uint64_t fileid,
				   uint64_t used_bytes)
{
	struct quota_file *f;
	size_t i;

	if (q->nfiles >= q->nbuckets && quota_files_grow(q) && !q->nbuckets)
		return NULL;
	f = malloc(sizeof(*f));
	if (!f)
		return NULL;
	i = quota_bucket(fileid, q->nbuckets);
	f->fileid = fileid;
	f->used_bytes = used_bytes;
	f->next = q->buckets[i];
	q->buckets[i] = f;
	q->nfiles++;
	return f;
}

void quota__files_clear(struct quota *q)
{
	for (size_t i = 0; i < q->nbuckets; i++) {
		struct quota_file *f = q->buckets[i];

		while (f) {
			struct quota_file *next = f->next;

			free(f);
			f = next;
		}
	}
	free(q->buckets);
	q->buckets = NULL;
	q->nbuckets = 0;
	q->nfiles = 0;
}

int quota_file_update(struct quota *q, uint64_t fileid,
		      quota_measure_fn measure, void *arg)
{
	struct quota_file *f;
	uint64_t now;
	int err;

	pthread_mutex_lock(&q->lock);
	err = measure(arg, &now);
	if (err)
		goto out;
	f = quota__file_find(q, fileid);
	if (!f) {
		f = quota__file_add(q, fileid, 0);
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
	size_t i;

	pthread_mutex_lock(&q->lock);
	if (!q->nbuckets)
		goto out;
	i = quota_bucket(fileid, q->nbuckets);
	for (struct quota_file **pp = &q->buckets[i]; *pp; pp = &(*pp)->next) {
		struct quota_file *f = *pp;

		if (f->fileid != fileid)
			continue;
		*pp = f->next;
		q->nfiles--;
		quota__add(q, -(int64_t)f->used_bytes);
		free(f);
		break;
	}
out:
	pthread_mutex_unlock(&q->lock);
}
