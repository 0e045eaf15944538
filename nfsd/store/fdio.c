// SPDX-License-Identifier: Apache-2.0
/*
 * fdio: the one place nfsd/store loops over short reads and writes.
 * pread(2)/pwrite(2) may move fewer bytes than asked (a signal, a full
 * pipe of the page cache, the end of the file); callers see all or an
 * error.
 */
#include "nfsd/store/store_int.h"

#include <errno.h>
#include <unistd.h>

int store__pread_full(int fd, void *buf, size_t len, uint64_t off_bytes,
		      size_t *done)
{
	size_t pos = 0;
	ssize_t n;

	while (pos < len) {
		n = pread(fd, (char *)buf + pos, len - pos,
			  (off_t)(off_bytes + pos));
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			*done = pos;
			return -errno;
		}
		if (n == 0) {
			break;
		}
		pos += (size_t)n;
	}
	*done = pos;
	return 0;
}

int store__pwrite_full(int fd, const void *buf, size_t len, uint64_t off_bytes)
{
	size_t pos = 0;
	ssize_t n;

	while (pos < len) {
		n = pwrite(fd, (const char *)buf + pos, len - pos,
			   (off_t)(off_bytes + pos));
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			return -errno;
		}
		if (n == 0) {
			/* A regular file never accepts 0 of >0 bytes. */
			return -EIO;
		}
		pos += (size_t)n;
	}
	return 0;
}
