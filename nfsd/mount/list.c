// SPDX-License-Identifier: Apache-2.0
/*
 * list: the mount service object and its mount list (RFC 1813 5.2.2 DUMP,
 * 5.2.3 UMNT, 5.2.4 UMNTALL).  The list is an array grown by doubling up
 * to MOUNT_LIST_MAX entries, guarded by the service's mutex because every
 * worker loop answers MOUNT calls.
 */
#include "nfsd/mount/mount_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/base/log.h"

#define MOUNT_LIST_INITIAL 16

int mount_service_new(const struct export_table *exports,
		      struct mount_service **out)
{
	struct mount_service *svc = calloc(1, sizeof(*svc));
	int err;

	if (!svc) {
		return -ENOMEM;
	}
	err = pthread_mutex_init(&svc->lock, NULL);
	if (err) {
		free(svc);
		return -err;
	}
	svc->exports = exports;
	*out = svc;
	return 0;
}

void mount_service_free(struct mount_service *svc)
{
	if (!svc) {
		return;
	}
	pthread_mutex_destroy(&svc->lock);
	free(svc->entries);
	free(svc);
}

size_t mount_service_count(struct mount_service *svc)
{
	size_t count;

	pthread_mutex_lock(&svc->lock);
	count = svc->count;
	pthread_mutex_unlock(&svc->lock);
	return count;
}

/* Index of (@host, @path) in the list, or svc->count.  Lock held. */
static size_t mount_list_find(const struct mount_service *svc, const char *host,
			      const char *path)
{
	size_t i;

	for (i = 0; i < svc->count; i++) {
		if (!strcmp(svc->entries[i].host, host) &&
		    !strcmp(svc->entries[i].path, path)) {
			break;
		}
	}
	return i;
}

/* Makes room for one more entry.  Lock held.  Returns 0, -ENOSPC, -ENOMEM. */
static int mount_list_reserve(struct mount_service *svc)
{
	struct mount_entry *grown;
	size_t cap;

	if (svc->count < svc->cap) {
		return 0;
	}
	if (svc->cap >= MOUNT_LIST_MAX) {
		return -ENOSPC;
	}
	cap = svc->cap ? svc->cap * 2 : MOUNT_LIST_INITIAL;
	if (cap > MOUNT_LIST_MAX) {
		cap = MOUNT_LIST_MAX;
	}
	grown = realloc(svc->entries, cap * sizeof(*grown));
	if (!grown) {
		return -ENOMEM;
	}
	svc->entries = grown;
	svc->cap = cap;
	return 0;
}

int mount__list_add(struct mount_service *svc, const char *host,
		    const char *path)
{
	struct mount_entry *e;
	int err = 0;

	if (strlen(host) >= sizeof(e->host) ||
	    strlen(path) >= sizeof(e->path)) {
		return -ENAMETOOLONG;
	}
	pthread_mutex_lock(&svc->lock);
	if (mount_list_find(svc, host, path) < svc->count) {
		goto unlock;
	}
	err = mount_list_reserve(svc);
	if (err == -ENOSPC && !svc->full_warned) {
		svc->full_warned = true;
		log_warn("mount: %s: mount list full (%d entries); "
			 "further mounts are not listed by DUMP",
			 host, MOUNT_LIST_MAX);
	}
	if (err) {
		goto unlock;
	}
	e = &svc->entries[svc->count++];
	strcpy(e->host, host);
	strcpy(e->path, path);
unlock:
	pthread_mutex_unlock(&svc->lock);
	return err;
}

/* Removes entry @i by moving the last one into its place.  Lock held. */
static void mount_list_delete(struct mount_service *svc, size_t i)
{
	svc->count--;
	if (i != svc->count) {
		svc->entries[i] = svc->entries[svc->count];
	}
}

int mount__list_remove(struct mount_service *svc, const char *host,
		       const char *path)
{
	int err = -ENOENT;
	size_t i;

	pthread_mutex_lock(&svc->lock);
	i = mount_list_find(svc, host, path);
	if (i < svc->count) {
		mount_list_delete(svc, i);
		err = 0;
	}
	pthread_mutex_unlock(&svc->lock);
	return err;
}

size_t mount__list_remove_host(struct mount_service *svc, const char *host)
{
	size_t i = 0, removed = 0;

	pthread_mutex_lock(&svc->lock);
	while (i < svc->count) {
		if (!strcmp(svc->entries[i].host, host)) {
			mount_list_delete(svc, i);
			removed++;
		} else {
			i++;
		}
	}
	pthread_mutex_unlock(&svc->lock);
	return removed;
}

/* One DUMP element and the strings it points to, allocated together. */
struct mount_dump_node {
	struct mountbody body;
	struct mount_entry entry;
};

int mount__list_dump(struct mount_service *svc, mountlist *out)
{
	struct mount_dump_node *nodes = NULL;
	size_t i, n;
	int err = 0;

	pthread_mutex_lock(&svc->lock);
	n = svc->count;
	if (n == 0) {
		goto unlock;
	}
	nodes = calloc(n, sizeof(*nodes));
	if (!nodes) {
		err = -ENOMEM;
		goto unlock;
	}
	for (i = 0; i < n; i++) {
		nodes[i].entry = svc->entries[i];
		nodes[i].body.ml_hostname = nodes[i].entry.host;
		nodes[i].body.ml_directory = nodes[i].entry.path;
		nodes[i].body.ml_next = i + 1 < n ? &nodes[i + 1].body : NULL;
	}
unlock:
	pthread_mutex_unlock(&svc->lock);
	*out = nodes ? &nodes[0].body : NULL;
	return err;
}

void mount__list_dump_free(mountlist list)
{
	/* body is the first member: the list head is the allocation. */
	free(list);
}
