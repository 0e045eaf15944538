// SPDX-License-Identifier: Apache-2.0
/*
 * file: STATE_DIR/admin-state.json on disk.  Read whole, within
 * OVERLAY_FILE_MAX_BYTES; replaced atomically (write PATH.tmp, fsync,
 * rename over PATH, fsync the directory), so a crash leaves the old
 * overlay or the new one, never a mix.
 */
#include "nfsd/overlay/overlay.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nfsd/base/errbuf.h"
#include "nfsd/base/fileio.h"

#define FILE_PATH_MAX 4096

int overlay_file_read(const char *path, struct overlay *out, char *errbuf,
		      size_t errlen)
{
	char why[400];
	uint8_t *buf = NULL;
	size_t len = 0;
	int fd, err;

	overlay_clear(out);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		return -ENOENT;
	}
	if (fd < 0) {
		err = -errno;
		return errbuf_printf(errbuf, errlen, err, "%s: %s", path,
				     strerror(-err));
	}
	err = fileio_read_whole(fd, OVERLAY_FILE_MAX_BYTES, &buf, &len);
	close(fd);
	if (err == -EFBIG) {
		return errbuf_printf(errbuf, errlen, err,
				     "%s: larger than %u bytes", path,
				     OVERLAY_FILE_MAX_BYTES);
	}
	if (err) {
		return errbuf_printf(errbuf, errlen, err, "%s: %s", path,
				     strerror(-err));
	}
	err = overlay_decode((const char *)buf, len, out, why, sizeof(why));
	free(buf);
	if (err) {
		return errbuf_printf(errbuf, errlen, err, "%s: %s", path, why);
	}
	return 0;
}

int overlay_file_write(const char *path, const char *text, size_t len,
		       char *errbuf, size_t errlen)
{
	char tmp[FILE_PATH_MAX];
	const char *step = "open";
	int fd, err;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp)) {
		return errbuf_printf(errbuf, errlen, -ENAMETOOLONG,
				     "%s: path too long", path);
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
		goto fail;
	}
	step = "write";
	err = fileio_pwrite_all(fd, text, len, 0);
	if (!err) {
		step = "fsync";
		err = fsync(fd) < 0 ? -errno : 0;
	}
	if (close(fd) < 0 && !err) {
		step = "close";
		err = -errno;
	}
	if (err) {
		goto fail_unlink;
	}
	step = "rename";
	if (rename(tmp, path) < 0) {
		err = -errno;
		goto fail_unlink;
	}
	err = fileio_sync_parent_dir(path);
	if (err) {
		return errbuf_printf(errbuf, errlen, err,
				     "%s: fsync of its directory: %s", path,
				     strerror(-err));
	}
	return 0;
fail_unlink:
	unlink(tmp);
fail:
	return errbuf_printf(errbuf, errlen, err, "%s: %s: %s", tmp, step,
			     strerror(-err));
}
