/* SPDX-License-Identifier: Apache-2.0 */
/*
 * quota_int: what the quota module's files share: the used figure
 * (quota.c), which the scan (scan.c) adds to.
 */
#ifndef DSNFS_QUOTA_INT_H
#define DSNFS_QUOTA_INT_H

#include "nfsd/quota/quota.h"

/* The used figure, never below 0. */
uint64_t quota__used(struct quota *q);

/* Adds @delta_bytes (may be negative) to the used figure. */
void quota__add(struct quota *q, int64_t delta_bytes);

#endif
