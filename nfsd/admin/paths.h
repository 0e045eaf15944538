/* SPDX-License-Identifier: Apache-2.0 */
/*
 * paths: the files of a datastore a request names, checked to stay inside
 * it and opened through its store's tree (paths.c).
 */
#ifndef DSNFS_ADMIN_PATHS_H
#define DSNFS_ADMIN_PATHS_H

#include "nfsd/admin/admin_int.h"

/* ---- files of a datastore (paths.c) ----------------------------------- */

/* The live export @name (borrowed; slots never move), or NULL. */
const struct export *admin__export_find(struct admin_api *api,
					const char *name);

/* The live export @name (borrowed; slots never move), or NULL after a
 * 404 in @reply. */
const struct export *admin__export_live(struct admin_api *api, const char *name,
					struct admin_reply *reply);

/* @rel (borrowed) is a relative path of names, none empty, "." or "..",
 * shorter than ADMIN_OP_PATH_MAX - 16.  Returns 0 or -EINVAL with the
 * reason ("WHAT 'REL': outside the export: ..."). */
int admin__path_check(const char *what, const char *rel, char *errbuf,
		      size_t errlen);

struct store;
/* @exp's store when it answers: NULL with the reason (503: try again)
 * while it is not open, its cluster is down or it waits to be opened
 * anew.  An admin operation on a lost cluster is refused at once
 * instead of waiting on an admin thread for the cluster. */
struct store *admin__store_live(const struct export *exp, char *errbuf,
				size_t errlen);

struct store_tree;
/* The storage-side tree of @exp's store (store/store_tree.h): 0 and
 * *out (owned: (*out)->close()), or -EAGAIN (the store is down),
 * -EOPNOTSUPP (no such operations) or -errno, with the reason. */
int admin__tree_open(const struct export *exp, struct store_tree **out,
		     char *errbuf, size_t errlen);
/* The file @abs of @t is a regular file, checked without blocking (a
 * FIFO's open waits for a writer) and without following a symlink.
 * Returns 0, the open's -errno (-ENOENT, -ELOOP, -EXDEV), or -EINVAL
 * with the reason: a request then never opens a FIFO or a device. */
int admin__file_regular(const struct store_tree *t, const char *abs,
			char *errbuf, size_t errlen);

/* The HTTP status of admin__tree_open()'s error: 503, 422, 500. */
unsigned admin__tree_status(int err);
/* The tree's path of @rel (returns owned, free()), or NULL. */
char *admin__path_abs(const struct store_tree *t, const char *rel);

/* @abs relative to the datastore (borrowed from @abs; @abs itself when
 * it is not below it). */
const char *admin__path_rel(const struct store_tree *t, const char *abs);

/* Replies why the file @rel a request names is refused: outside the
 * export (-EXDEV, -ELOOP: 400), missing (404), or not a VMDK, with @why
 * (409). */
void admin__file_refused(struct admin_reply *reply, const char *what,
			 const char *rel, int err, const char *why);

/* Drops the datastore's directory from the paths in @msg (in place): a
 * client learns names inside its datastore, not where it lives. */
void admin__msg_relative(const struct store_tree *t, char *msg);

#endif
