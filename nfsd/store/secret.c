/*
 * secret: the server secret that signs file handles (see handle.c), kept
 * in <state_dir>/handle.secret so that handles stay valid across restarts.
 * The file holds STORE_SECRET_BYTES random bytes and nothing else; it is
 * created once from getrandom() and only read afterwards.  Deleting it
 * invalidates every handle clients hold (they get NFS3ERR_BADHANDLE).
 */
#include "nfsd/store/store_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

static void store_secret_err(char *errbuf, size_t errlen, const char *fmt,
			     const char *dir, const char *why)
{
	if (errbuf != NULL && errlen > 0) {
		snprintf(errbuf, errlen, fmt, dir, STORE_SECRET_FILE, why);
	}
}

/* Returns 0, -ENOENT when there is no secret yet, or another -errno. */
static int store_secret_read(int dirfd, const char *dir,
			     struct store_secret *out, char *errbuf,
			     size_t errlen)
{
	struct stat st;
	size_t done;
	char why[64];
	int fd;
	int err;

	fd = openat(dirfd, STORE_SECRET_FILE,
		    O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		if (err != -ENOENT) {
			store_secret_err(errbuf, errlen, "%s/%s: %s", dir,
					 strerror(-err));
		}
		return err;
	}
	if (fstat(fd, &st) != 0) {
		err = -errno;
		store_secret_err(errbuf, errlen, "%s/%s: %s", dir,
				 strerror(-err));
		goto out_close;
	}
	if (!S_ISREG(st.st_mode) || st.st_size != STORE_SECRET_BYTES) {
		err = -EINVAL;
		snprintf(why, sizeof(why), "expected a file of %d bytes",
			 STORE_SECRET_BYTES);
		store_secret_err(errbuf, errlen, "%s/%s: %s", dir, why);
		goto out_close;
	}
	if ((st.st_mode & 077) != 0) {
		err = -EACCES;
		snprintf(why, sizeof(why),
			 "mode %04o lets others read it; expected 0600",
			 (unsigned)(st.st_mode & 07777));
		store_secret_err(errbuf, errlen, "%s/%s: %s", dir, why);
		goto out_close;
	}
	err = store__pread_full(fd, out->bytes, sizeof(out->bytes), 0, &done);
	if (err == 0 && done != sizeof(out->bytes)) {
		err = -EIO;
	}
	if (err) {
		store_secret_err(errbuf, errlen, "%s/%s: %s", dir,
				 strerror(-err));
	}
out_close:
	close(fd);
	return err;
}

static int store_secret_random(struct store_secret *out)
{
	size_t pos = 0;
	ssize_t n;

	while (pos < sizeof(out->bytes)) {
		n = getrandom(out->bytes + pos, sizeof(out->bytes) - pos, 0);
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
static int store_secret_create(int dirfd, const char *dir,
			       struct store_secret *out, char *errbuf,
			       size_t errlen)
{
	char tmp[64];
	int fd;
	int err;

	err = store_secret_random(out);
	if (err) {
		store_secret_err(errbuf, errlen, "%s/%s: getrandom: %s", dir,
				 strerror(-err));
		return err;
	}
	/* Per thread: stores may be opened from several threads at once. */
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld.%ld", STORE_SECRET_FILE,
		 (long)getpid(), (long)gettid());
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
		err = store__pwrite_full(fd, out->bytes, sizeof(out->bytes), 0);
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
	if (renameat2(dirfd, tmp, dirfd, STORE_SECRET_FILE, RENAME_NOREPLACE) !=
	    0) {
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
	store_secret_err(errbuf, errlen, "%s/%s: cannot create: %s", dir,
			 strerror(-err));
	return err;
}

int store__secret_load(const char *state_dir, struct store_secret *out,
		       char *errbuf, size_t errlen)
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
	err = store_secret_read(dirfd, state_dir, out, errbuf, errlen);
	if (err == -ENOENT) {
		err = store_secret_create(dirfd, state_dir, out, errbuf,
					  errlen);
		if (err == -EEXIST) {
			err = store_secret_read(dirfd, state_dir, out, errbuf,
						errlen);
		}
	}
	close(dirfd);
	return err;
}
