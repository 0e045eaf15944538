/* SPDX-License-Identifier: Apache-2.0 */
/*
 * replybuf: an HTTP reply's body gathered in memory, as libcurl's write
 * callback hands it over, up to a bound: the one body buffer of the tools'
 * HTTP clients (dsnfsctl's nfsd/ctl/http.c, dsload's perf/dsload/admin.c).
 */
#ifndef DSNFS_REPLYBUF_H
#define DSNFS_REPLYBUF_H

#include <stdbool.h>
#include <stddef.h>

struct replybuf {
	char *data; /* owned (free()); NUL-terminated once anything came */
	size_t len;
	size_t max; /* the most body bytes taken; set before the transfer */
	bool too_large; /* the body passed @max: the transfer was stopped */
};

/*
 * A CURLOPT_WRITEFUNCTION with a struct replybuf as its CURLOPT_WRITEDATA:
 * appends @size * @nmemb bytes of @ptr.  Returns what it took, or 0 (which
 * makes libcurl fail the transfer with CURLE_WRITE_ERROR) past b->max
 * (too_large set) or out of memory.
 */
size_t replybuf_write(char *ptr, size_t size, size_t nmemb, void *arg);

#endif
