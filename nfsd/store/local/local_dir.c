// SPDX-License-Identifier: Apache-2.0
/*
 * local_dir: READDIR of the local backend (RFC 1813 3.3.16; READDIRPLUS
 * builds on it).  Each call opens its own descriptor of the directory
 * (getdents64(2) moves a file offset, which threads must not share), seeks
 * to the cookie and hands out entries with getdents64.
 *
 * Cookies are the kernel's d_off values: the position after an entry.  On
 * ext4 (hash-indexed directories) they are hashes of the names and stay
 * valid while the directory changes; tmpfs (Linux 6.6+) keeps stable
 * offsets as well, so the nfs3 layer may use a constant cookie verifier.
 * A cookie the filesystem refuses to seek to (above INT64_MAX, or past
 * ext4's end marker) gives -STORE_EBADCOOKIE.  ".." of the export root
 * reports the root's fileid, so nothing outside the export shows.
 */
#include "nfsd/store/local/local_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STORE_LOCAL_DENTS_BYTES 32768

/* Hands the entries of one getdents64 buffer to @cb.  Returns 0 to read
 * on, 1 when @cb stopped, or -errno. */
static int store_local_dents_feed(const struct store_local *sl, bool is_root,
				  const uint8_t *buf, size_t len,
				  store_readdir_fn cb, void *arg)
{
	const size_t hdr = offsetof(struct dirent64, d_name);
	struct dirent64 de;
	const char *name;
	size_t pos = 0;
	uint64_t fileid;
	int ret;

	while (pos < len) {
		if (len - pos < hdr) {
			return -EIO;
		}
		memcpy(&de, buf + pos, hdr);
		if (de.d_reclen <= hdr || de.d_reclen > len - pos) {
			return -EIO;
		}
		name = (const char *)buf + pos + hdr;
		if (memchr(name, '\0', de.d_reclen - hdr) == NULL) {
			return -EIO;
		}
		fileid = de.d_ino;
		if (is_root && strcmp(name, "..") == 0) {
			fileid = sl->root_ino;
		}
		ret = cb(arg, name, fileid, (uint64_t)de.d_off);
		if (ret != 0) {
			return ret < 0 ? ret : 1;
		}
		pos += de.d_reclen;
	}
	return 0;
}

int store__local_readdir(struct store *st, struct store_obj *sdir,
			 uint64_t cookie, store_readdir_fn cb, void *arg)
{
	struct local_obj *dir = local_obj(sdir);
	struct store_local *sl = store__local(st);
	uint8_t *buf;
	bool is_root;
	ssize_t n;
	int err = 0;
	int fd;

	if (dir->type != STORE_DIR) {
		return -ENOTDIR;
	}
	if (cookie > INT64_MAX) {
		return -STORE_EBADCOOKIE;
	}
	is_root = dir->dev == sl->root_dev && dir->ino == sl->root_ino;
	fd = store__local_openat(sl, dir->fd, ".",
				 O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (fd < 0) {
		return fd;
	}
	if (cookie != 0 && lseek(fd, (off_t)cookie, SEEK_SET) < 0) {
		err = errno == EINVAL ? -STORE_EBADCOOKIE : -errno;
		goto out_close;
	}
	buf = malloc(STORE_LOCAL_DENTS_BYTES);
	if (buf == NULL) {
		err = -ENOMEM;
		goto out_close;
	}
	for (;;) {
		n = getdents64(fd, buf, STORE_LOCAL_DENTS_BYTES);
		if (n < 0) {
			err = errno == EINVAL ? -STORE_EBADCOOKIE : -errno;
			break;
		}
		if (n == 0) {
			break;
		}
		err = store_local_dents_feed(sl, is_root, buf, (size_t)n, cb,
					     arg);
		if (err != 0) {
			err = err < 0 ? err : 0;
			break;
		}
	}
	free(buf);
out_close:
	close(fd);
	return err;
}
