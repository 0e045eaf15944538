/* SPDX-License-Identifier: Apache-2.0 */
/*
 * files: the per-inode allocation records of a datastore's quota, by
 * inode number: a chained hash table that doubles as it fills.  Not
 * thread-safe: its owner (struct quota) holds its lock around every call.
 */
#ifndef DSNFS_QUOTA_FILES_H
#define DSNFS_QUOTA_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One inode's allocation as last measured. */
struct quota_file {
	uint64_t fileid;
	uint64_t used_bytes;
	struct quota_file *next;
};

struct quota_files {
	struct quota_file **buckets; /* NULL until the first record */
	size_t nbuckets;
	size_t count;
};

/* The record of @fileid, or NULL. */
struct quota_file *quota_files_find(struct quota_files *t, uint64_t fileid);

/* Adds a record of @fileid (not on record yet) with @used_bytes.  Returns
 * it, or NULL without memory. */
struct quota_file *quota_files_add(struct quota_files *t, uint64_t fileid,
				   uint64_t used_bytes);

/* Removes the record of @fileid: true and its *used_bytes if it had one. */
bool quota_files_remove(struct quota_files *t, uint64_t fileid,
			uint64_t *used_bytes);

/* Frees every record: the table is empty, as zeroed. */
void quota_files_clear(struct quota_files *t);

#endif
