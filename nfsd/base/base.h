/* SPDX-License-Identifier: Apache-2.0 */
/*
 * base: the two macros the house rules allow everywhere
 * (docs/architecture.md, "Comments and logging").
 */
#ifndef DSNFS_BASE_H
#define DSNFS_BASE_H

#include <stddef.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* The struct that embeds *ptr as its member @member (libev watchers). */
#define container_of(ptr, type, member)                                        \
	((type *)(void *)((char *)(ptr)-offsetof(type, member)))

#endif
