// SPDX-License-Identifier: Apache-2.0
/*
 * buf: the growing text buffer replies are built in.  The first failure
 * sticks, so writers append freely and check once.
 */
#include "nfsd/admin/admin_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void admin__buf_init(struct admin_buf *b)
{
	memset(b, 0, sizeof(*b));
}

void admin__buf_fini(struct admin_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

/* Room for @more bytes and a NUL; 0 or the sticky error. */
static int buf_reserve(struct admin_buf *b, size_t more)
{
	size_t cap;
	char *p;

	if (b->err) {
		return b->err;
	}
	if (more > ADMIN_BUF_MAX_BYTES - b->len - 1 ||
	    b->len >= ADMIN_BUF_MAX_BYTES) {
		b->err = -E2BIG;
		return b->err;
	}
	if (b->len + more + 1 <= b->cap) {
		return 0;
	}
	cap = b->cap ? b->cap : 4096;
	while (cap < b->len + more + 1) {
		cap *= 2;
	}
	if (cap > ADMIN_BUF_MAX_BYTES) {
		cap = ADMIN_BUF_MAX_BYTES;
	}
	p = realloc(b->data, cap);
	if (!p) {
		b->err = -ENOMEM;
		return b->err;
	}
	b->data = p;
	b->cap = cap;
	return 0;
}

void admin__buf_append(struct admin_buf *b, const char *s, size_t n)
{
	if (buf_reserve(b, n)) {
		return;
	}
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void admin__buf_puts(struct admin_buf *b, const char *s)
{
	admin__buf_append(b, s, strlen(s));
}

void admin__buf_printf(struct admin_buf *b, const char *fmt, ...)
{
	char small[256];
	va_list ap;
	int n;

	if (b->err) {
		return;
	}
	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->err = -EINVAL;
		return;
	}
	if ((size_t)n < sizeof(small)) {
		admin__buf_append(b, small, (size_t)n);
		return;
	}
	if (buf_reserve(b, (size_t)n)) {
		return;
	}
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}
