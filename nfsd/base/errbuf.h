/* SPDX-License-Identifier: Apache-2.0 */
/*
 * errbuf: the convention of the functions that explain a refusal: the
 * caller passes `char *errbuf, size_t errlen` (errbuf may be NULL) and gets
 * the reason there as one line, the error code as the return value.
 */
#ifndef DSNFS_ERRBUF_H
#define DSNFS_ERRBUF_H

#include <stddef.h>

/* Formats the reason into @errbuf (when it is not NULL and @errlen is not
 * 0) and returns @err, so that a refusal is one `return` statement. */
int errbuf_printf(char *errbuf, size_t errlen, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
