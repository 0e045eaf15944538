// SPDX-License-Identifier: Apache-2.0
/*
 * replybuf: see replybuf.h.  Kept free of libcurl's headers: the callback's
 * signature is plain C, so this file builds and links without libcurl.
 */
#include "nfsd/base/replybuf.h"

#include <stdlib.h>
#include <string.h>

size_t replybuf_write(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct replybuf *b = arg;
	size_t n = size * nmemb;
	char *grown;

	if (n > b->max - b->len) {
		b->too_large = true;
		return 0;
	}
	grown = realloc(b->data, b->len + n + 1);
	if (!grown) {
		return 0;
	}
	b->data = grown;
	memcpy(b->data + b->len, ptr, n);
	b->len += n;
	b->data[b->len] = '\0';
	return n;
}
