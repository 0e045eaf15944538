/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mount_int: what the files of nfsd/mount/ share: the service object and
 * its mount list (list.c), used by the procedures (procs.c).
 */
#ifndef DSNFS_MOUNT_INT_H
#define DSNFS_MOUNT_INT_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "mount3.h"
#include "nfsd/mount/mount.h"

/* A client address as text, without port: "10.0.0.7", "fd00::1". */
#define MOUNT_HOST_MAX INET6_ADDRSTRLEN

/* One (client, export) pair of the mount list; @path is the export's own
 * path, so "/ds1/" and "/ds1" are one entry. */
struct mount_entry {
	char host[MOUNT_HOST_MAX];
	char path[sizeof(((struct export *)0)->path)];
};

struct mount_service {
	const struct export_table *exports; /* borrowed */
	pthread_mutex_t lock; /* guards everything below */
	struct mount_entry *entries; /* owned, @cap slots */
	size_t count;
	size_t cap;
	bool full_warned; /* the list-full warning was logged */
};

/*
 * Records (@host, @path), both borrowed, unless already present.  Returns
 * 0, -ENOSPC when MOUNT_LIST_MAX entries are recorded, -ENAMETOOLONG, or
 * -ENOMEM.
 */
int mount__list_add(struct mount_service *svc, const char *host,
		    const char *path);

/* Removes (@host, @path).  Returns 0 or -ENOENT. */
int mount__list_remove(struct mount_service *svc, const char *host,
		       const char *path);

/* Removes every entry of @host.  Returns how many it removed. */
size_t mount__list_remove_host(struct mount_service *svc, const char *host);

/*
 * Copies the list into a DUMP reply.  *out returns owned: one allocation
 * (NULL for an empty list) released with mount__list_dump_free().  Returns
 * 0 or -ENOMEM.
 */
int mount__list_dump(struct mount_service *svc, mountlist *out);

/* Frees what mount__list_dump() returned.  Takes @list. */
void mount__list_dump_free(mountlist list);

#endif
