/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mount: the MOUNT version 3 service (RFC 1813 section 5).  MNT hands out
 * the root handle of an export to the clients its rules allow and records
 * (client, path) in the mount list; DUMP, UMNT and UMNTALL read and edit
 * that list; EXPORT lists the exports with their client rules.  The list is
 * informational (showmount), bounded and shared by all worker loops under
 * one mutex; handles stay valid whether or not a client is in it.
 */
#ifndef DSNFS_MOUNT_H
#define DSNFS_MOUNT_H

#include <stddef.h>

#include "nfsd/export/export.h"
#include "nfsd/rpc/request.h"

/* The MOUNT program and the version we serve (RFC 1813 5). */
#define MOUNT_SERVICE_PROG 100005
#define MOUNT_SERVICE_VERS 3

/* Entries the mount list keeps; MNT past this still succeeds, unrecorded. */
#define MOUNT_LIST_MAX 4096

struct mount_service;

/*
 * Creates the service for @exports (borrowed: must outlive the service and
 * stay unchanged while it runs).  *out returns owned: free it with
 * mount_service_free().  Returns 0 or -ENOMEM.
 */
int mount_service_new(const struct export_table *exports,
		      struct mount_service **out);

/* Frees @svc and its mount list.  Takes @svc; NULL is a no-op. */
void mount_service_free(struct mount_service *svc);

/* Number of entries in the mount list now. */
size_t mount_service_count(struct mount_service *svc);

/*
 * Fills @prog with the MOUNT v3 program (100005, version 3): NULL, MNT,
 * DUMP, UMNT, UMNTALL, EXPORT, with --trace summaries.  @svc is borrowed
 * and becomes the handlers' req->svc; it must outlive every request.
 */
void mount_program_init(struct rpc_program *prog, struct mount_service *svc);

#endif
