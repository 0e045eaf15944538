// SPDX-License-Identifier: Apache-2.0
/*
 * ilog_file: the intent log's file, and what it must be before dsnfsd
 * writes to it.  The log zeroes its whole ring when it is made, so a path
 * that names anything but our own log (a disk named by typo, a device, a
 * file another user planted) would be destroyed or read as records: such a
 * path is refused with its reason, and the file is left as it was.  A new
 * log is built under a temporary name (O_EXCL, 0600) and renamed into
 * place with its superblock written, so the path never names a zeroed file
 * without the log's magic (which the next start would refuse).
 */
#include "nfsd/store/ilog/ilog_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int store_ilog_file_refuse(char *errbuf, size_t errlen, const char *path,
				  int err, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int store_ilog_file_refuse(char *errbuf, size_t errlen, const char *path,
				  int err, const char *fmt, ...)
{
	char why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (errbuf && errlen) {
		snprintf(errbuf, errlen, "intent_log %s: %s", path, why);
	}
	return err;
}

/* Type, owner and mode of what @fd names; the error names the reason. */
static int store_ilog_file_check(int fd, const char *path, struct stat *sb,
				 char *errbuf, size_t errlen)
{
	if (fstat(fd, sb) != 0) {
		return store_ilog_file_refuse(errbuf, errlen, path, -errno,
					      "stat: %s", strerror(errno));
	}
	if (!S_ISREG(sb->st_mode)) {
		return store_ilog_file_refuse(
			errbuf, errlen, path, -EINVAL,
			"not a regular file (mode %06o): refused",
			(unsigned)sb->st_mode);
	}
	if (sb->st_uid != geteuid()) {
		return store_ilog_file_refuse(
			errbuf, errlen, path, -EPERM,
			"owned by uid %u, not by dsnfsd's uid %u: refused",
			(unsigned)sb->st_uid, (unsigned)geteuid());
	}
	if (sb->st_mode & 077) {
		return store_ilog_file_refuse(
			errbuf, errlen, path, -EPERM,
			"mode %04o lets others read or write it; expected "
			"0600: refused",
			(unsigned)(sb->st_mode & 07777));
	}
	return 0;
}

int store__ilog_file_open(const char *path, int *fd, char *errbuf,
			  size_t errlen)
{
	uint8_t block[STORE_ILOG_BLOCK];
	struct stat sb;
	size_t done = 0;
	int err;
	int f;

	*fd = -1;
	/* O_NONBLOCK: a FIFO planted there must not hang the start. */
	f = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (f < 0 && errno == ENOENT) {
		return 0;
	}
	if (f < 0 && errno == ELOOP) {
		return store_ilog_file_refuse(errbuf, errlen, path, -ELOOP,
					      "a symbolic link: refused");
	}
	if (f < 0) {
		return store_ilog_file_refuse(errbuf, errlen, path, -errno,
					      "open: %s", strerror(errno));
	}
	err = store_ilog_file_check(f, path, &sb, errbuf, errlen);
	if (err) {
		goto out_close;
	}
	if (fcntl(f, F_SETFL, 0) != 0) {
		err = -errno;
		goto out_close;
	}
	if (sb.st_size == 0) {
		/* Empty: a log made here now loses nothing. */
		close(f);
		return 0;
	}
	err = store__pread_full(f, block, sizeof(block), 0, &done);
	if (err) {
		store_ilog_file_refuse(errbuf, errlen, path, err, "read: %s",
				       strerror(-err));
		goto out_close;
	}
	if (done < sizeof(block) ||
	    (!store__ilog_super_has_magic(block) &&
	     !store__ilog_super_has_magic(block + STORE_ILOG_SUPER_SLOT))) {
		err = store_ilog_file_refuse(
			errbuf, errlen, path, -EINVAL,
			"a file of %jd bytes that is not an intent log (no "
			"superblock magic): refused, left as it was; name a "
			"new file or remove it",
			(intmax_t)sb.st_size);
		goto out_close;
	}
	*fd = f;
	return 0;

out_close:
	close(f);
	return err;
}

int store__ilog_file_make(const char *path, uint64_t total, int *fd, char *tmp,
			  size_t tmplen)
{
	uint8_t *zero;
	int err = 0;
	int f;

	if ((size_t)snprintf(tmp, tmplen, "%s.new.%ld", path, (long)getpid()) >=
	    tmplen) {
		return -ENAMETOOLONG;
	}
	f = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (f < 0) {
		return -errno;
	}
	zero = calloc(1, 1u << 20);
	if (!zero) {
		err = -ENOMEM;
	}
	/* Written once with zeros, so that later O_DIRECT writes change
	 * no extent (no journal). */
	for (uint64_t off = 0; off < total && !err; off += 1u << 20) {
		size_t n = total - off < (1u << 20) ? (size_t)(total - off)
						    : (1u << 20);

		err = store__pwrite_full(f, zero, n, off);
	}
	free(zero);
	if (!err && fsync(f) != 0) {
		err = -errno;
	}
	if (err) {
		close(f);
		unlink(tmp);
		return err;
	}
	*fd = f;
	return 0;
}

int store__ilog_file_publish(const char *tmp, const char *path, bool replace)
{
	char dir[4096];
	int dfd;
	int rc;

	rc = replace ? rename(tmp, path)
		     : renameat2(AT_FDCWD, tmp, AT_FDCWD, path,
				 RENAME_NOREPLACE);
	if (rc != 0) {
		rc = -errno;
		unlink(tmp);
		return rc;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		return -errno;
	}
	rc = fsync(dfd) != 0 ? -errno : 0;
	close(dfd);
	return rc;
}
