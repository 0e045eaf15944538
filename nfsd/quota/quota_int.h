/*
 * quota_int: what the quota module's files share: the per-inode records
 * (files.c) and the used figure (quota.c).
 */
#ifndef DSNFS_QUOTA_INT_H
#define DSNFS_QUOTA_INT_H

#include "nfsd/quota/quota.h"

/* One inode's allocation as last measured; chained in q->buckets. */
struct quota_file {
	uint64_t fileid;
	uint64_t used_bytes;
	struct quota_file *next;
};

/* The used figure, never below 0. */
uint64_t quota__used(struct quota *q);

/* Adds @delta_bytes (may be negative) to the used figure. */
void quota__add(struct quota *q, int64_t delta_bytes);

/* The record of @fileid, or NULL.  q->lock held. */
struct quota_file *quota__file_find(struct quota *q, uint64_t fileid);

/* Adds a record of @fileid (not on record yet) with @used_bytes.  Returns
 * it, or NULL without memory.  q->lock held. */
struct quota_file *quota__file_add(struct quota *q, uint64_t fileid,
				   uint64_t used_bytes);

/* Frees every record.  q->lock held, or the quota unused. */
void quota__files_clear(struct quota *q);

#endif
