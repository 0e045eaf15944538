// SPDX-License-Identifier: Apache-2.0
/*
 * relfile: the relations made through the admin API, kept in the state
 * directory (relfile.h).
 */
#include "nfsd/repl/relfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nfsd/base/errbuf.h"
#include "nfsd/base/log.h"
#include "nfsd/repl/peer.h"
#include "nfsd/repl/sched.h"

#define RELFILE_HEADER "# dsnfsd replication relation 1"
#define RELFILE_END "end"

static int relfile_path(char *out, size_t len, const char *state_dir,
			const char *name, const char *ext)
{
	return snprintf(out, len, "%s/repl-%s.%s", state_dir, name, ext) >=
			       (int)len
		       ? -ENAMETOOLONG
		       : 0;
}

static int relfile_dir_sync(const char *state_dir)
{
	int fd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int err = 0;

	if (fd < 0) {
		return -errno;
	}
	if (fsync(fd) < 0) {
		err = -errno;
	}
	close(fd);
	return err;
}

/* @len bytes of @data as @path, mode 0600: a temporary file written,
 * fsync'd and renamed over it, so that a crash leaves the old file or
 * the new one, never a part. */
static int relfile_write(const char *path, const char *data, size_t len)
{
	char tmp[PATH_MAX];
	size_t done = 0;
	int fd, err = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) {
		return -ENAMETOOLONG;
	}
	(void)unlink(tmp); /* a crash's leftover */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0) {
		return -errno;
	}
	while (done < len && !err) {
		ssize_t n = write(fd, data + done, len - done);

		if (n < 0 && errno != EINTR) {
			err = -errno;
		} else if (n > 0) {
			done += (size_t)n;
		}
	}
	if (!err && fsync(fd) < 0) {
		err = -errno;
	}
	if (close(fd) < 0 && !err) {
		err = -errno;
	}
	if (!err && rename(tmp, path) < 0) {
		err = -errno;
	}
	if (err) {
		(void)unlink(tmp);
	}
	return err;
}

static int relfile_write_named(const char *state_dir, const char *name,
			       const char *ext, const char *data, size_t len,
			       char *path, size_t plen, char *errbuf,
			       size_t errlen)
{
	int err = relfile_path(path, plen, state_dir, name, ext);

	if (!err) {
		err = relfile_write(path, data, len);
	}
	return err ? errbuf_printf(errbuf, errlen, err,
				   "relation %s: %s/repl-%s.%s: %s", name,
				   state_dir, name, ext, strerror(-err))
		   : 0;
}

int repl_relfile_secrets_save(const char *state_dir, struct repl_rel_config *c,
			      const char *key, const char *ca_pem, char *errbuf,
			      size_t errlen)
{
	char text[REPL_KEY_HEX_LEN + 1];
	int err;

	snprintf(text, sizeof(text), "%s", key);
	err = relfile_write_named(state_dir, c->name, "key", text, strlen(text),
				  c->key_file, sizeof(c->key_file), errbuf,
				  errlen);
	explicit_bzero(text, sizeof(text));
	c->ca_file[0] = '\0';
	if (!err && ca_pem) {
		err = relfile_write_named(state_dir, c->name, "ca", ca_pem,
					  strlen(ca_pem), c->ca_file,
					  sizeof(c->ca_file), errbuf, errlen);
	}
	if (!err) {
		err = relfile_dir_sync(state_dir);
		if (err) {
			errbuf_printf(errbuf, errlen, err, "%s: fsync: %s",
				      state_dir, strerror(-err));
		}
	}
	if (err) {
		(void)repl_relfile_remove(state_dir, c->name);
	}
	return err;
}

int repl_relfile_save(const char *state_dir, const struct repl_rel_config *c,
		      char *errbuf, size_t errlen)
{
	char *text = malloc(REPL_RELFILE_MAX), path[PATH_MAX];
	size_t n = 0;
	int err;

	if (!text) {
		return -ENOMEM;
	}
	n += (size_t)snprintf(text + n, REPL_RELFILE_MAX - n,
			      RELFILE_HEADER "\nrole = %s\ndatastore = %s\n",
			      c->role == REPL_ROLE_SOURCE ? "source"
							  : "destination",
			      c->datastore);
	if (c->url[0]) {
		n += (size_t)snprintf(text + n, REPL_RELFILE_MAX - n,
				      "destination_url = %s\n", c->url);
	}
	if (c->dst_datastore[0]) {
		n += (size_t)snprintf(text + n, REPL_RELFILE_MAX - n,
				      "destination_datastore = %s\n",
				      c->dst_datastore);
	}
	if (c->src_url[0]) {
		n += (size_t)snprintf(text + n, REPL_RELFILE_MAX - n,
				      "source_url = %s\n", c->src_url);
	}
	if (c->src_datastore[0]) {
		n += (size_t)snprintf(text + n, REPL_RELFILE_MAX - n,
				      "source_datastore = %s\n",
				      c->src_datastore);
	}
	n += (size_t)snprintf(text + n, REPL_RELFILE_MAX - n, "schedule = %s\n",
			      repl_sched_name(c->schedule));
	if (c->schedule_seconds) {
		n += (size_t)snprintf(text + n, REPL_RELFILE_MAX - n,
				      "schedule_seconds = %u\n",
				      c->schedule_seconds);
	}
	if (c->timeout_s) {
		n += (size_t)snprintf(text + n, REPL_RELFILE_MAX - n,
				      "timeout_seconds = %u\n", c->timeout_s);
	}
	/* The fields' bounds (4 x 1 KiB at most) keep @n below the size. */
	n += (size_t)snprintf(text + n, REPL_RELFILE_MAX - n, "ca = %s\n%s\n",
			      c->ca_file[0] ? "yes" : "no", RELFILE_END);
	err = relfile_write_named(state_dir, c->name, "relation", text, n, path,
				  sizeof(path), errbuf, errlen);
	free(text);
	if (!err) {
		err = relfile_dir_sync(state_dir);
		if (err) {
			errbuf_printf(errbuf, errlen, err, "%s: fsync: %s",
				      state_dir, strerror(-err));
		}
	}
	return err;
}

int repl_relfile_remove(const char *state_dir, const char *name)
{
	static const char *const ext[] = { "relation", "key", "ca" };
	char path[PATH_MAX];
	int first = 0;

	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		int err = relfile_path(path, sizeof(path), state_dir, name,
				       ext[i]);

		if (!err && unlink(path) < 0 && errno != ENOENT) {
			err = -errno;
		}
		first = first ? first : err;
	}
	return first ? first : relfile_dir_sync(state_dir);
}

/* The whole of @path (at most @max - 1 bytes, NUL-terminated) into @buf:
 * a regular file of mode 0600 or stricter.  Returns its length or
 * -errno (-EFBIG: larger). */
static ssize_t relfile_read(const char *path, char *buf, size_t max)
{
	struct stat sb;
	size_t n = 0;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		return -errno;
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || (sb.st_mode & 077)) {
		close(fd);
		return -EPERM;
	}
	for (;;) {
		ssize_t r = read(fd, buf + n, max - n);

		if (r < 0 && errno == EINTR) {
			continue;
		}
		if (r < 0) {
			r = -errno;
			close(fd);
			return r;
		}
		if (r == 0) {
			break;
		}
		n += (size_t)r;
		if (n == max) {
			close(fd);
			return -EFBIG;
		}
	}
	close(fd);
	buf[n] = '\0';
	return (ssize_t)n;
}

/* One "key = value" line of a .relation into @out. */
static int relfile_line(char *line, struct repl_rel_config *out, bool *ca,
			char *errbuf, size_t errlen)
{
	char *eq = strstr(line, " = ");
	int err;

	if (!eq) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "'%.64s': not key = value", line);
	}
	*eq = '\0';
	if (!strcmp(line, "ca")) {
		*ca = !strcmp(eq + 3, "yes");
		return *ca || !strcmp(eq + 3, "no")
			       ? 0
			       : errbuf_printf(errbuf, errlen, -EINVAL,
					       "ca is yes or no");
	}
	/* Kept files only: no path but the relation's own. */
	if (!strcmp(line, "key_file") || !strcmp(line, "ca_file")) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "%s: not kept in a relation file", line);
	}
	err = repl_config_key(out, line, eq + 3, errbuf, errlen);
	return err == -ENOENT ? errbuf_printf(errbuf, errlen, -EINVAL,
					      "unknown key '%.64s'", line)
			      : err;
}

/* The lines of @text (NUL-terminated) into @out. */
static int relfile_parse(char *text, struct repl_rel_config *out, bool *ca,
			 char *errbuf, size_t errlen)
{
	char *line = text, *nl;
	bool header = false, end = false;
	int err = 0;

	while (!err && *line) {
		nl = strchr(line, '\n');
		if (!nl || end) {
			/* A line after "end", or a last line without its
			 * newline: not the file we wrote. */
			return errbuf_printf(errbuf, errlen, -EINVAL,
					     "truncated or extended");
		}
		*nl = '\0';
		if (!header) {
			header = !strcmp(line, RELFILE_HEADER);
			err = header ? 0
				     : errbuf_printf(errbuf, errlen, -EINVAL,
						     "not a relation file");
		} else if (!strcmp(line, RELFILE_END)) {
			end = true;
		} else {
			err = relfile_line(line, out, ca, errbuf, errlen);
		}
		line = nl + 1;
	}
	if (!err && !end) {
		err = errbuf_printf(errbuf, errlen, -EINVAL,
				    "truncated (no \"end\" line)");
	}
	if (!err && (!out->role || !out->datastore[0])) {
		err = errbuf_printf(errbuf, errlen, -EINVAL,
				    "role and datastore are needed");
	}
	return err;
}

int repl_relfile_load(const char *state_dir, const char *name,
		      struct repl_rel_config *out, char *errbuf, size_t errlen)
{
	char path[PATH_MAX], *text, key[REPL_KEY_HEX_LEN + 1];
	char why[512] = "";
	bool ca = false;
	ssize_t n;
	int err;

	memset(out, 0, sizeof(*out));
	err = repl_config_name_check(name, errbuf, errlen);
	if (err) {
		return err;
	}
	snprintf(out->name, sizeof(out->name), "%s", name);
	err = relfile_path(path, sizeof(path), state_dir, name, "relation");
	if (err) {
		return errbuf_printf(errbuf, errlen, err, "relation %s: %s",
				     name, strerror(-err));
	}
	text = malloc(REPL_RELFILE_MAX);
	if (!text) {
		return -ENOMEM;
	}
	n = relfile_read(path, text, REPL_RELFILE_MAX);
	err = n < 0 ? (int)n : relfile_parse(text, out, &ca, why, sizeof(why));
	free(text);
	if (err) {
		return errbuf_printf(errbuf, errlen, err, "%s: %s", path,
				     why[0] ? why : strerror(-err));
	}
	if (relfile_path(out->key_file, sizeof(out->key_file), state_dir, name,
			 "key") ||
	    (ca && relfile_path(out->ca_file, sizeof(out->ca_file), state_dir,
				name, "ca"))) {
		return errbuf_printf(errbuf, errlen, -ENAMETOOLONG,
				     "relation %s: a path too long", name);
	}
	err = repl_key_load(out->key_file, key, errbuf, errlen);
	explicit_bzero(key, sizeof(key));
	if (!err && ca && access(out->ca_file, R_OK) < 0) {
		err = errbuf_printf(errbuf, errlen, -errno, "%s: %s",
				    out->ca_file, strerror(errno));
	}
	return err;
}

/* The NAME of "repl-NAME.relation" into @name; false for another file. */
static bool relfile_name(const char *file, char *name, size_t len)
{
	static const char pre[] = "repl-", post[] = ".relation";
	size_t n = strlen(file);

	if (n <= strlen(pre) + strlen(post) ||
	    strncmp(file, pre, strlen(pre)) ||
	    strcmp(file + n - strlen(post), post)) {
		return false;
	}
	n -= strlen(pre) + strlen(post);
	if (n >= len) {
		return false;
	}
	memcpy(name, file + strlen(pre), n);
	name[n] = '\0';
	return true;
}

int repl_relfile_load_all(const char *state_dir, struct repl_config *out)
{
	DIR *d = opendir(state_dir);
	struct dirent *e;
	char name[256], err[768];

	memset(out, 0, sizeof(*out));
	if (!d) {
		return -errno;
	}
	while ((e = readdir(d))) {
		if (!relfile_name(e->d_name, name, sizeof(name))) {
			continue;
		}
		if (out->n >= REPL_PEERS_MAX) {
			log_error("replication: %s: more than %d relations "
				  "kept: not restored",
				  e->d_name, REPL_PEERS_MAX);
			continue;
		}
		if (repl_relfile_load(state_dir, name, &out->rel[out->n], err,
				      sizeof(err))) {
			log_error("replication: relation %.64s made through "
				  "the API: not restored: %s",
				  name, err);
			continue;
		}
		out->n++;
	}
	closedir(d);
	return 0;
}
