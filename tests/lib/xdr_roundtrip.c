// SPDX-License-Identifier: Apache-2.0
/*
 * xdr_roundtrip: encode/decode/compare helpers for the XDR unit tests, and
 * the writer of fuzz seeds (see xdr_roundtrip.h).
 */
#include "tests/lib/xdr_roundtrip.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int xdr_roundtrip_encode(xdrproc_t proc, const void *obj, uint8_t *buf,
			 size_t len, size_t *out_len)
{
	XDR xdrs;
	int ret = 0;

	xdrmem_create(&xdrs, (char *)buf, (u_int)len, XDR_ENCODE);
	/* The generated encoders take non-const pointers but only read. */
	if (!proc(&xdrs, (void *)obj)) {
		ret = -EMSGSIZE;
		goto out;
	}
	*out_len = xdr_getpos(&xdrs);
out:
	xdr_destroy(&xdrs);
	return ret;
}

int xdr_roundtrip_decode(xdrproc_t proc, const uint8_t *buf, size_t len,
			 void *obj)
{
	XDR xdrs;
	int ret = 0;

	xdrmem_create(&xdrs, (char *)buf, (u_int)len, XDR_DECODE);
	if (!proc(&xdrs, obj) || xdr_getpos(&xdrs) != len) {
		ret = -EBADMSG;
	}
	xdr_destroy(&xdrs);
	return ret;
}

int xdr_roundtrip(xdrproc_t proc, const void *obj, size_t size, void **decoded)
{
	uint8_t *first, *second;
	size_t first_len, second_len;
	void *copy;
	int ret = -ENOMEM;

	first = malloc(XDR_ROUNDTRIP_BUF_MAX);
	if (!first) {
		goto out;
	}
	second = malloc(XDR_ROUNDTRIP_BUF_MAX);
	if (!second) {
		goto free_first;
	}
	copy = calloc(1, size);
	if (!copy) {
		goto free_second;
	}
	ret = xdr_roundtrip_encode(proc, obj, first, XDR_ROUNDTRIP_BUF_MAX,
				   &first_len);
	if (ret < 0) {
		goto free_copy;
	}
	ret = xdr_roundtrip_decode(proc, first, first_len, copy);
	if (ret < 0) {
		goto free_copy;
	}
	ret = xdr_roundtrip_encode(proc, copy, second, XDR_ROUNDTRIP_BUF_MAX,
				   &second_len);
	if (ret < 0) {
		goto free_copy;
	}
	if (first_len != second_len || memcmp(first, second, first_len)) {
		ret = -EPROTO;
		goto free_copy;
	}
	*decoded = copy;
	copy = NULL;
free_copy:
	if (copy) {
		xdr_roundtrip_release(proc, copy);
	}
free_second:
	free(second);
free_first:
	free(first);
out:
	return ret;
}

void xdr_roundtrip_release(xdrproc_t proc, void *obj)
{
	xdr_free(proc, obj);
	free(obj);
}

static int seed_file_write(const char *path, const uint8_t *buf, size_t len)
{
	size_t done = 0;
	int fd, ret = 0;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		return -errno;
	}
	while (done < len) {
		ssize_t n = write(fd, buf + done, len - done);

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			ret = -errno;
			break;
		}
		done += (size_t)n;
	}
	if (close(fd) < 0 && ret == 0) {
		ret = -errno;
	}
	return ret;
}

int xdr_roundtrip_seed_write(const char *name, uint8_t selector, xdrproc_t proc,
			     const void *obj)
{
	const char *dir = getenv("DSNFS_FUZZ_SEED_DIR");
	char path[PATH_MAX];
	uint8_t *buf;
	size_t len;
	int ret;

	if (!dir || !*dir) {
		return 0;
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    sizeof(path)) {
		return -ENAMETOOLONG;
	}
	buf = malloc(XDR_ROUNDTRIP_BUF_MAX);
	if (!buf) {
		return -ENOMEM;
	}
	buf[0] = selector;
	ret = xdr_roundtrip_encode(proc, obj, buf + 1,
				   XDR_ROUNDTRIP_BUF_MAX - 1, &len);
	if (ret == 0) {
		ret = seed_file_write(path, buf, len + 1);
	}
	free(buf);
	return ret;
}

int xdr_wire_open(struct xdr_wire *w, size_t cap)
{
	w->buf = malloc(cap);
	if (!w->buf) {
		return -ENOMEM;
	}
	w->cap = cap;
	xdrmem_create(&w->xdrs, (char *)w->buf, (u_int)cap, XDR_ENCODE);
	return 0;
}

int xdr_wire_counted(struct xdr_wire *w, u_int len)
{
	char *data = malloc(len ? len : 1);
	int ret = 0;

	if (!data) {
		return -ENOMEM;
	}
	memset(data, 'n', len);
	if (!xdr_bytes(&w->xdrs, &data, &len, ~0u)) {
		ret = -EMSGSIZE;
	}
	free(data);
	return ret;
}

int xdr_wire_decode(struct xdr_wire *w, xdrproc_t proc, size_t size)
{
	void *obj = calloc(1, size);
	int ret;

	if (!obj) {
		return -ENOMEM;
	}
	ret = xdr_roundtrip_decode(proc, w->buf, xdr_getpos(&w->xdrs), obj);
	xdr_free(proc, obj);
	free(obj);
	return ret;
}

void xdr_wire_close(struct xdr_wire *w)
{
	xdr_destroy(&w->xdrs);
	free(w->buf);
	w->buf = NULL;
}
