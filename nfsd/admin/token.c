// SPDX-License-Identifier: Apache-2.0
/*
 * token: the admin endpoint's secret, STATE_DIR/admin.token (auth.h).
 * dsnfsd makes it at its first start and refuses one that anyone but
 * its own user could have written or read; the tools only read it.
 */
#include "nfsd/admin/auth.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nfsd/base/errbuf.h"

/* The bytes a token file may hold: 64 digits and a newline; one more to
 * see that there is more. */
#define TOKEN_FILE_READ_MAX (ADMIN_TOKEN_HEX_LEN + 2)

/* @buf (@n bytes) is 64 hex digits and at most one newline: 0 and
 * @token, else -EINVAL. */
static int token_parse(const char *buf, size_t n, char *token)
{
	if (n == ADMIN_TOKEN_HEX_LEN + 1 && buf[ADMIN_TOKEN_HEX_LEN] == '\n') {
		n--;
	}
	if (n != ADMIN_TOKEN_HEX_LEN) {
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		char c = buf[i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
		      (c >= 'A' && c <= 'F'))) {
			return -EINVAL;
		}
		token[i] = (char)(c >= 'A' && c <= 'F' ? c - 'A' + 'a' : c);
	}
	token[n] = '\0';
	return 0;
}

/* Reads at most TOKEN_FILE_READ_MAX bytes of @fd into @buf. */
static ssize_t token_read_fd(int fd, char *buf)
{
	size_t n = 0;

	while (n < TOKEN_FILE_READ_MAX) {
		ssize_t r = read(fd, buf + n, TOKEN_FILE_READ_MAX - n);

		if (r < 0 && errno == EINTR) {
			continue;
		}
		if (r < 0) {
			return -errno;
		}
		if (r == 0) {
			break;
		}
		n += (size_t)r;
	}
	return (ssize_t)n;
}

/* Opens @path without following a symlink and without blocking on a
 * FIFO; a regular file only. */
static int token_open(const char *path, struct stat *st, char *errbuf,
		      size_t errlen)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0 && errno == ELOOP) {
		return errbuf_printf(errbuf, errlen, -EPERM,
				     "%s: a symlink, not a regular file", path);
	}
	if (fd < 0) {
		return errbuf_printf(errbuf, errlen, -errno, "%s: %s", path,
				     strerror(errno));
	}
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		close(fd);
		return errbuf_printf(errbuf, errlen, -EPERM,
				     "%s: not a regular file", path);
	}
	return fd;
}

/* Reads the token in @fd (closed here) into @token; @malformed says why
 * a file that holds no token is refused. The bytes read are wiped
 * either way: they are the secret. */
static int token_fd_take(int fd, const char *path, char *token,
			 const char *malformed, char *errbuf, size_t errlen)
{
	char buf[TOKEN_FILE_READ_MAX];
	ssize_t n = token_read_fd(fd, buf);
	int err = 0;

	close(fd);
	if (n < 0) {
		return errbuf_printf(errbuf, errlen, (int)n, "%s: %s", path,
				     strerror((int)-n));
	}
	if (token_parse(buf, (size_t)n, token)) {
		err = errbuf_printf(errbuf, errlen, -EINVAL, "%s: %s", path,
				    malformed);
	}
	explicit_bzero(buf, sizeof(buf));
	return err;
}

int admin_token_read(const char *path, char *token, char *errbuf, size_t errlen)
{
	struct stat st;
	int fd = token_open(path, &st, errbuf, errlen);

	if (fd < 0) {
		return fd;
	}
	return token_fd_take(fd, path, token, "not a token (64 hex digits)",
			     errbuf, errlen);
}

/* Writes a new token to @path: into PATH.new (0600, exclusive), synced,
 * then renamed to @path unless one appeared meanwhile. */
static int token_create(const char *path, char *token, char *errbuf,
			size_t errlen)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char raw[ADMIN_TOKEN_BYTES];
	char tmp[4096], text[ADMIN_TOKEN_HEX_LEN + 1];
	int fd, err = 0;

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
		return errbuf_printf(errbuf, errlen, -EIO,
				     "%s: no random bytes: %s", path,
				     strerror(errno));
	}
	for (size_t i = 0; i < sizeof(raw); i++) {
		text[2 * i] = hex[raw[i] >> 4];
		text[2 * i + 1] = hex[raw[i] & 15];
	}
	text[ADMIN_TOKEN_HEX_LEN] = '\n';
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.new", path) >= sizeof(tmp)) {
		return errbuf_printf(errbuf, errlen, -ENAMETOOLONG,
				     "%s: name too long", path);
	}
	unlink(tmp); /* a crash's leftover: never trusted */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0) {
		return errbuf_printf(errbuf, errlen, -errno, "%s: %s", tmp,
				     strerror(errno));
	}
	/* The umask cannot widen 0600, but a default ACL could. */
	if (fchmod(fd, 0600) < 0 ||
	    write(fd, text, sizeof(text)) != (ssize_t)sizeof(text) ||
	    fsync(fd) < 0) {
		err = errno ? -errno : -EIO;
	}
	close(fd);
	if (!err &&
	    renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) < 0) {
		err = -errno;
	}
	if (err) {
		unlink(tmp);
		return errbuf_printf(errbuf, errlen, err, "%s: %s", path,
				     strerror(-err));
	}
	memcpy(token, text, ADMIN_TOKEN_HEX_LEN);
	token[ADMIN_TOKEN_HEX_LEN] = '\0';
	explicit_bzero(raw, sizeof(raw));
	explicit_bzero(text, sizeof(text));
	return 0;
}

int admin_token_load(const char *path, char *token, bool *created, char *errbuf,
		     size_t errlen)
{
	struct stat st;
	int fd;

	*created = false;
	fd = token_open(path, &st, errbuf, errlen);
	if (fd == -ENOENT) {
		fd = token_create(path, token, errbuf, errlen);
		if (fd == -EEXIST) {
			/* made meanwhile (a second dsnfsd): read that one */
			return admin_token_load(path, token, created, errbuf,
						errlen);
		}
		*created = fd == 0;
		return fd;
	}
	if (fd < 0) {
		return fd;
	}
	if (st.st_uid != geteuid()) {
		close(fd);
		return errbuf_printf(errbuf, errlen, -EPERM,
				     "%s: owned by uid %u, not by dsnfsd's "
				     "uid %u: remove it or give it back",
				     path, (unsigned)st.st_uid,
				     (unsigned)geteuid());
	}
	if (st.st_mode & 077) {
		close(fd);
		return errbuf_printf(errbuf, errlen, -EPERM,
				     "%s: mode %04o lets others read or write "
				     "it: chmod 600 it (and change the token "
				     "if others may have read it)",
				     path, (unsigned)(st.st_mode & 07777));
	}
	return token_fd_take(fd, path, token,
			     "malformed (64 hex digits and a newline "
			     "expected): remove it and a new one is made at "
			     "the next start",
			     errbuf, errlen);
}

const char *admin_token_path(const char *option)
{
	const char *env;

	if (option) {
		return option;
	}
	env = getenv(ADMIN_TOKEN_ENV);
	if (env && env[0]) {
		return env;
	}
	return ADMIN_TOKEN_DEFAULT_PATH;
}
