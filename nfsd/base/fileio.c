// SPDX-License-Identifier: Apache-2.0
/*
 * fileio: the state files' I/O (fileio.h).  Files here are small (a ledger
 * of at most a few MiB, a JSON document), so a whole-file read grows one
 * buffer by doubling, bounded by the caller's maximum.
 */
#include "nfsd/base/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FILEIO_FIRST_READ_BYTES 4096

int fileio_pwrite_all(int fd, const void *buf, size_t len, uint64_t off_bytes)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t w = pwrite(fd, p, len, (off_t)off_bytes);

		if (w < 0 && errno == EINTR) {
			continue;
		}
		if (w < 0) {
			return -errno;
		}
		if (w == 0) {
			return -EIO;
		}
		p += w;
		len -= (size_t)w;
		off_bytes += (uint64_t)w;
	}
	return 0;
}

/* Makes room for at least one more byte in *buf past @n (capacity *cap),
 * never beyond @max + 1 bytes (one byte past @max says "too large"). */
static int fileio_grow(uint8_t **buf, size_t *cap, size_t n, size_t max)
{
	size_t want = *cap * 2;
	uint8_t *p;

	if (n < *cap) {
		return 0;
	}
	if (*cap > max) {
		return -EFBIG;
	}
	if (want > max + 1) {
		want = max + 1;
	}
	p = realloc(*buf, want + 1); /* + the NUL */
	if (!p) {
		return -ENOMEM;
	}
	*buf = p;
	*cap = want;
	return 0;
}

int fileio_read_whole(int fd, size_t max, uint8_t **out, size_t *len)
{
	size_t cap = FILEIO_FIRST_READ_BYTES, n = 0;
	uint8_t *buf = malloc(cap + 1);
	int err = 0;

	if (!buf) {
		return -ENOMEM;
	}
	for (;;) {
		ssize_t r;

		err = fileio_grow(&buf, &cap, n, max);
		if (err) {
			goto fail;
		}
		r = pread(fd, buf + n, cap - n, (off_t)n);
		if (r < 0 && errno == EINTR) {
			continue;
		}
		if (r < 0) {
			err = -errno;
			goto fail;
		}
		if (r == 0) {
			break;
		}
		n += (size_t)r;
	}
	if (n > max) {
		err = -EFBIG;
		goto fail;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
fail:
	free(buf);
	return err;
}

int fileio_sync_parent_dir(const char *path)
{
	char dir[PATH_MAX];
	int fd, err = 0;

	if ((size_t)snprintf(dir, sizeof(dir), "%s", path) >= sizeof(dir)) {
		return -ENAMETOOLONG;
	}
	fd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		return -errno;
	}
	if (fsync(fd) < 0) {
		err = -errno;
	}
	close(fd);
	return err;
}

int fileio_replace(const char *path, const void *text, size_t len, char *errbuf,
		   size_t errlen)
{
	char tmp[PATH_MAX];
	int fd, err = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) {
		snprintf(errbuf, errlen, "%.200s: path too long", path);
		return -ENAMETOOLONG;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0) {
		err = -errno;
	} else {
		err = fileio_pwrite_all(fd, text, len, 0);
		if (!err && fsync(fd)) {
			err = -errno;
		}
		close(fd);
	}
	if (!err && rename(tmp, path)) {
		err = -errno;
	}
	if (!err) {
		err = fileio_sync_parent_dir(path);
		if (err) {
			snprintf(errbuf, errlen,
				 "%.3900s: fsync of its directory: %s", path,
				 strerror(-err));
		}
		return err;
	}
	snprintf(errbuf, errlen, "%.3900s: cannot write it: %s", path,
		 strerror(-err));
	unlink(tmp);
	return err;
}

int fileio_replace_printed(const char *path,
			   void (*print)(FILE *f, const void *arg),
			   const void *arg, char *errbuf, size_t errlen)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int err = -ENOMEM;

	if (f) {
		print(f, arg);
		if (!fclose(f)) {
			err = fileio_replace(path, text, len, errbuf, errlen);
		}
	}
	if (err == -ENOMEM) {
		snprintf(errbuf, errlen, "%.3900s: out of memory", path);
	}
	free(text);
	return err;
}
