// SPDX-License-Identifier: Apache-2.0
/*
 * files: the per-inode allocation records of a datastore's quota
 * (files.h), a chained hash table that doubles as it fills.
 */
#include "nfsd/quota/files.h"

#include <errno.h>
#include <stdlib.h>

#define QUOTA_BUCKETS_MIN 64

static size_t quota_bucket(uint64_t fileid, size_t nbuckets)
{
	/* Fibonacci hashing: inode numbers come in runs. */
	return (size_t)((fileid * UINT64_C(0x9E3779B97F4A7C15)) >> 32) &
	       (nbuckets - 1);
}

struct quota_file *quota_files_find(struct quota_files *t, uint64_t fileid)
{
	if (!t->nbuckets) {
		return NULL;
	}
	for (struct quota_file *f =
		     t->buckets[quota_bucket(fileid, t->nbuckets)];
	     f; f = f->next) {
		if (f->fileid == fileid) {
			return f;
		}
	}
	return NULL;
}

/* Doubles the table (or makes the first one).  0 or -ENOMEM. */
static int quota_files_grow(struct quota_files *t)
{
	size_t n = t->nbuckets ? t->nbuckets * 2 : QUOTA_BUCKETS_MIN;
	struct quota_file **b = calloc(n, sizeof(*b));

	if (!b) {
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->nbuckets; i++) {
		struct quota_file *f = t->buckets[i];

		while (f) {
			struct quota_file *next = f->next;
			size_t j = quota_bucket(f->fileid, n);

			f->next = b[j];
			b[j] = f;
			f = next;
		}
	}
	free(t->buckets);
	t->buckets = b;
	t->nbuckets = n;
	return 0;
}

struct quota_file *quota_files_add(struct quota_files *t, uint64_t fileid,
				   uint64_t used_bytes)
{
	struct quota_file *f;
	size_t i;

	if (t->count >= t->nbuckets && quota_files_grow(t) && !t->nbuckets) {
		return NULL;
	}
	f = malloc(sizeof(*f));
	if (!f) {
		return NULL;
	}
	i = quota_bucket(fileid, t->nbuckets);
	f->fileid = fileid;
	f->used_bytes = used_bytes;
	f->next = t->buckets[i];
	t->buckets[i] = f;
	t->count++;
	return f;
}

void quota_files_clear(struct quota_files *t)
{
	for (size_t i = 0; i < t->nbuckets; i++) {
		struct quota_file *f = t->buckets[i];

		while (f) {
			struct quota_file *next = f->next;

			free(f);
			f = next;
		}
	}
	free(t->buckets);
	t->buckets = NULL;
	t->nbuckets = 0;
	t->count = 0;
}

bool quota_files_remove(struct quota_files *t, uint64_t fileid,
			uint64_t *used_bytes)
{
	struct quota_file **pp;

	if (!t->nbuckets) {
		return false;
	}
	for (pp = &t->buckets[quota_bucket(fileid, t->nbuckets)]; *pp;
	     pp = &(*pp)->next) {
		struct quota_file *f = *pp;

		if (f->fileid != fileid) {
			continue;
		}
		*pp = f->next;
		t->count--;
		*used_bytes = f->used_bytes;
		free(f);
		return true;
	}
	return false;
}
