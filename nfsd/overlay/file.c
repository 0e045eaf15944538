/*
 * file: STATE_DIR/admin-state.json on disk.  Read whole, within
 * OVERLAY_FILE_MAX_BYTES; replaced atomically (write PATH.tmp, fsync,
 * rename over PATH, fsync the directory), so a crash leaves the old
 * overlay or the new one, never a mix.
 */
#include "nfsd/overlay/overlay.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nfsd/errbuf.h"

#define FILE_PATH_MAX 4096

/* Reads all of @fd, at most @max bytes, into *out (owned, free()). */
static int file_read_all(int fd, size_t max, char **out, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t r;

		if (n == cap) {
			char *p = cap > max ? NULL : realloc(buf, cap * 2);

			if (!p) {
				free(buf);
				return cap > max ? -E2BIG : -ENOMEM;
			}
			buf = p;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = -errno;

			free(buf);
			return err;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (n > max) {
		free(buf);
		return -E2BIG;
	}
	*out = buf;
	*len = n;
	return 0;
}

int overlay_file_read(const char *path, struct overlay *out, char *errbuf,
		      size_t errlen)
{
	char why[400];
	char *buf = NULL;
	size_t len = 0;
	int fd, err;

	overlay_clear(out);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return -ENOENT;
	if (fd < 0) {
		err = -errno;
		return errbuf_printf(errbuf, errlen, err, "%s: %s", path,
				     strerror(-err));
	}
	err = file_read_all(fd, OVERLAY_FILE_MAX_BYTES, &buf, &len);
	close(fd);
	if (err == -E2BIG)
		return errbuf_printf(errbuf, errlen, err,
				     "%s: larger than %u bytes", path,
				     OVERLAY_FILE_MAX_BYTES);
	if (err)
		return errbuf_printf(errbuf, errlen, err, "%s: %s", path,
				     strerror(-err));
	err = overlay_decode(buf, len, out, why, sizeof(why));
	free(buf);
	if (err)
		return errbuf_printf(errbuf, errlen, err, "%s: %s", path, why);
	return 0;
}

/* Writes all of @text to @fd. */
static int file_write_all(int fd, const char *text, size_t len)
{
	while (len) {
		ssize_t w = write(fd, text, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		text += w;
		len -= (size_t)w;
	}
	return 0;
}

/* fsyncs the directory that holds @path, so that a rename in it lasts. */
static int file_sync_dir(const char *path)
{
	char dir[FILE_PATH_MAX];
	int fd, err = 0;

	snprintf(dir, sizeof(dir), "%s", path);
	fd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		err = -errno;
	close(fd);
	return err;
}

int overlay_file_write(const char *path, const char *text, size_t len,
		       char *errbuf, size_t errlen)
{
	char tmp[FILE_PATH_MAX];
	const char *step = "open";
	int fd, err;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp))
		return errbuf_printf(errbuf, errlen, -ENAMETOOLONG,
				     "%s: path too long", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
		goto fail;
	}
	step = "write";
	err = file_write_all(fd, text, len);
	if (!err) {
		step = "fsync";
		err = fsync(fd) < 0 ? -errno : 0;
	}
	if (close(fd) < 0 && !err) {
		step = "close";
		err = -errno;
	}
	if (err)
		goto fail_unlink;
	step = "rename";
	if (rename(tmp, path) < 0) {
		err = -errno;
		goto fail_unlink;
	}
	err = file_sync_dir(path);
	if (err)
		return errbuf_printf(errbuf, errlen, err,
				     "%s: fsync of its directory: %s", path,
				     strerror(-err));
	return 0;
fail_unlink:
	unlink(tmp);
fail:
	return errbuf_printf(errbuf, errlen, err, "%s: %s: %s", tmp, step,
			     strerror(-err));
}
