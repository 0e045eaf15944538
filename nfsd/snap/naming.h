/* SPDX-License-Identifier: Apache-2.0 */
/*
 * snap/naming: what a snapshot may be called, where snapshots live, and how
 * many a datastore holds: the rules snap.c (making them) and manifest.c
 * (recording them) both apply.
 */
#ifndef DSNFS_SNAP_NAMING_H
#define DSNFS_SNAP_NAMING_H

#include <stddef.h>

/* The hidden area, in the datastore's root. */
#define SNAP_DIR_NAME ".snapshot"
/* A name is [A-Za-z0-9_-][A-Za-z0-9._-]*, at most this long. */
#define SNAP_NAME_MAX 63
/* Snapshots listed per datastore, at most. */
#define SNAP_LIST_MAX 1024

/* Returns 0, or -EINVAL with the reason ("/", "..", a leading dot, an
 * empty or too long name). */
int snap_name_check(const char *name, char *errbuf, size_t errlen);

#endif
