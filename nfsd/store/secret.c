// SPDX-License-Identifier: Apache-2.0
/*
 * secret: the keys that sign file handles (see handle.c), kept in files of
 * the state directory so that handles stay valid across restarts.  A key
 * file holds its random bytes and nothing else; it is created once from
 * getrandom() and only read afterwards.  It must be ours: a regular file
 * of the right size, owned by our uid, mode 0600 (a key another user can
 * read lets them forge handles).  Deleting handle.key invalidates every
 * handle clients hold (they get NFS3ERR_BADHANDLE); deleting handle.secret
 * ends the acceptance of version-1 handles (docs/security.md, section 4).
 */
#include "nfsd/store/store_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "nfsd/base/log.h"

static void store_key_err(char *errbuf, size_t errlen, const char *dir,
			  const char *file, const char *why)
{
	if (errbuf != NULL && errlen > 0) {
		snprintf(errbuf, errlen, "%s/%s: %s", dir, file, why);
	}
}

/* Returns 0, -ENOENT when there is no key yet, or another -errno. */
static int store_key_read(int dirfd, const char *dir, const char *file,
			  uint8_t *out, size_t len, char *errbuf, size_t errlen)
{
	struct stat st;
	size_t done;
	char why[128];
	int fd;
	int err;

	fd = openat(dirfd, file,
		    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		if (err != -ENOENT) {
			store_key_err(errbuf, errlen, dir, file,
				      strerror(-err));
		}
		return err;
	}
	if (fstat(fd, &st) != 0) {
		err = -errno;
		store_key_err(errbuf, errlen, dir, file, strerror(-err));
		goto out_close;
	}
	if (!S_ISREG(st.st_mode) || st.st_size != (off_t)len) {
		err = -EINVAL;
		snprintf(why, sizeof(why), "expected a file of %zu bytes", len);
		store_key_err(errbuf, errlen, dir, file, why);
		goto out_close;
	}
	if (st.st_uid != geteuid()) {
		err = -EACCES;
		snprintf(why, sizeof(why),
			 "owned by uid %u, not by dsnfsd's uid %u: refused",
			 (unsigned)st.st_uid, (unsigned)geteuid());
		store_key_err(errbuf, errlen, dir, file, why);
		goto out_close;
	}
	if ((st.st_mode & 077) != 0) {
		err = -EACCES;
		snprintf(why, sizeof(why),
			 "mode %04o lets others read it; expected 0600",
			 (unsigned)(st.st_mode & 07777));
		store_key_err(errbuf, errlen, dir, file, why);
		goto out_close;
	}
	err = store__pread_full(fd, out, len, 0, &done);
	if (err == 0 && done != len) {
		err = -EIO;
	}
	if (err) {
		store_key_err(errbuf, errlen, dir, file, strerror(-err));
	}
out_close:
	close(fd);
	return err;
}

static int store_key_random(uint8_t *out, size_t len)
{
	size_t pos = 0;
	ssize_t n;

	while (pos < len) {
		n = getrandom(out + pos, len - pos, 0);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			return -errno;
		}
		pos += (size_t)n;
	}
	return 0;
}

/* Returns 0, -EEXIST when another process created it first, or -errno. */
static int store_key_create(int dirfd, const char *dir, const char *file,
			    uint8_t *out, size_t len, const uint8_t *seed,
			    char *errbuf, size_t errlen)
{
	char tmp[128];
	char why[128];
	int fd;
	int err = 0;

	if (seed != NULL) {
		memcpy(out, seed, len);
	} else {
		err = store_key_random(out, len);
	}
	if (err) {
		snprintf(why, sizeof(why), "getrandom: %s", strerror(-err));
		store_key_err(errbuf, errlen, dir, file, why);
		return err;
	}
	/* Per thread: stores may be opened from several threads at once. */
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld.%ld", file, (long)getpid(),
		 (long)gettid());
	fd = openat(dirfd, tmp,
		    O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd < 0) {
		err = -errno;
		goto out_err;
	}
	/* A stale temporary file of an earlier run keeps its old mode. */
	if (fchmod(fd, 0600) != 0) {
		err = -errno;
	}
	if (err == 0) {
		err = store__pwrite_full(fd, out, len, 0);
	}
	if (err == 0 && fsync(fd) != 0) {
		err = -errno;
	}
	if (close(fd) != 0 && err == 0) {
		err = -errno;
	}
	if (err) {
		goto out_unlink;
	}
	if (renameat2(dirfd, tmp, dirfd, file, RENAME_NOREPLACE) != 0) {
		err = -errno;
		goto out_unlink;
	}
	if (fsync(dirfd) != 0) {
		err = -errno;
		goto out_err;
	}
	return 0;

out_unlink:
	unlinkat(dirfd, tmp, 0);
	if (err == -EEXIST) {
		return err;
	}
out_err:
	snprintf(why, sizeof(why), "cannot create: %s", strerror(-err));
	store_key_err(errbuf, errlen, dir, file, why);
	return err;
}

int store__key_load(const char *state_dir, const char *file, uint8_t *out,
		    size_t len, bool create, const uint8_t *seed, char *errbuf,
		    size_t errlen)
{
	int dirfd;
	int err;

	dirfd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		err = -errno;
		if (errbuf != NULL && errlen > 0) {
			snprintf(errbuf, errlen, "%s: state directory: %s",
				 state_dir, strerror(-err));
		}
		return err;
	}
	err = store_key_read(dirfd, state_dir, file, out, len, errbuf, errlen);
	if (err == -ENOENT && create) {
		err = store_key_create(dirfd, state_dir, file, out, len, seed,
				       errbuf, errlen);
		/* Said once: a key made anew (a state directory lost or
		 * replaced) is why the handles clients hold go BADHANDLE. */
		if (err == 0) {
			log_info("store: %s/%s made: a new key (handles signed "
				 "with another are refused)",
				 state_dir, file);
		}
		if (err == -EEXIST) {
			err = store_key_read(dirfd, state_dir, file, out, len,
					     errbuf, errlen);
		}
	}
	close(dirfd);
	return err;
}

int store__secret_load(const char *state_dir, struct store_secret *out,
		       char *errbuf, size_t errlen)
{
	int err;

	memset(out, 0, sizeof(*out));
	err = store__key_load(state_dir, STORE_KEY_FILE, out->key,
			      sizeof(out->key), true, NULL, errbuf, errlen);
	if (err) {
		return err;
	}
	store__secret_keyed(out);
	err = store__key_load(state_dir, STORE_SECRET_FILE, out->legacy,
			      sizeof(out->legacy), false, NULL, errbuf, errlen);
	if (err == -ENOENT) {
		return 0;
	}
	if (err) {
		explicit_bzero(out, sizeof(*out));
		return err;
	}
	out->legacy_ok = true;
	return 0;
}
