// SPDX-License-Identifier: Apache-2.0
/*
 * paths: what the storage-side operations (vaai.c, stats.c) share about
 * the files a request names: the live datastore, a relative path checked
 * before any file is touched (no empty, "." or ".." part, not absolute),
 * its name on the server, and the replies that name a refused file
 * without telling the client where the datastore lives.
 */
#include "nfsd/admin/admin_int.h"
#include "nfsd/admin/ops.h"
#include "nfsd/admin/paths.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nfsd/export/export.h"
#include "nfsd/store/store_tree.h"

const struct export *admin__export_find(struct admin_api *api, const char *name)
{
	const struct export_table *tab = api->ctx.exports;

	for (size_t i = 0; tab && i < export_table_count(tab); i++) {
		const struct export *e = &tab->exports[i];

		if (export_is_live(e) && !strcmp(e->name, name)) {
			return e;
		}
	}
	return NULL;
}

const struct export *admin__export_live(struct admin_api *api, const char *name,
					struct admin_reply *reply)
{
	const struct export *e = admin__export_find(api, name);

	if (!e) {
		admin__reply_error(reply, 404,
				   "volume '%s': no datastore of that name",
				   name);
	}
	return e;
}

/* A relative path of names, none empty, "." or "..", with no '"' and no
 * control character.  Returns 0 or -EINVAL with the reason. */
int admin__path_check(const char *what, const char *rel, char *errbuf,
		      size_t errlen)
{
	const char *p = rel;
	size_t len = strlen(rel);

	if (len == 0 || len >= ADMIN_OP_PATH_MAX - 16) {
		snprintf(errbuf, errlen,
			 "%s: a path of 1 to %d bytes is needed", what,
			 ADMIN_OP_PATH_MAX - 17);
		return -EINVAL;
	}
	/* The names go into descriptors between quotes, one a line: a '"'
	 * or a control character would end the string or the line there. */
	for (const unsigned char *c = (const unsigned char *)rel; *c; c++) {
		if (*c < 0x20 || *c == 0x7f || *c == '"') {
			snprintf(errbuf, errlen,
				 "%s '%.300s': a '\"', a newline or another "
				 "control character (byte 0x%02x) would break "
				 "a VMDK descriptor: not allowed in a path",
				 what, rel, *c);
			return -EINVAL;
		}
	}
	if (rel[0] == '/') {
		snprintf(errbuf, errlen,
			 "%s '%.300s': outside the export: paths are relative "
			 "to the datastore's root",
			 what, rel);
		return -EINVAL;
	}
	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 0 || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.')) {
			snprintf(errbuf, errlen,
				 "%s '%.300s': outside the export: no empty, "
				 "'.' or '..' part is allowed",
				 what, rel);
			return -EINVAL;
		}
		p += n;
		if (*p == '/') {
			p++;
			if (!*p) {
				snprintf(errbuf, errlen,
					 "%s '%.300s': names a directory", what,
					 rel);
				return -EINVAL;
			}
		}
	}
	return 0;
}

struct store *admin__store_live(const struct export *exp, char *errbuf,
				size_t errlen)
{
	struct store *st = export_store(exp);

	if (!st || export_store_down(exp)) {
		snprintf(errbuf, errlen,
			 "volume %s: its store is not open (its cluster did "
			 "not answer at start)",
			 exp->name);
		return NULL;
	}
	if (atomic_load(&st->fenced)) {
		snprintf(errbuf, errlen,
			 "volume %s: fenced: another gateway took it over; "
			 "restart this gateway once it is handed back",
			 exp->name);
		return NULL;
	}
	if (atomic_load(&st->unavailable) || atomic_load(&st->reopen)) {
		snprintf(errbuf, errlen,
			 "volume %s: its cluster does not answer; try again "
			 "once it is back",
			 exp->name);
		return NULL;
	}
	return st;
}

int admin__tree_open(const struct export *exp, struct store_tree **out,
		     char *errbuf, size_t errlen)
{
	struct store *st = admin__store_live(exp, errbuf, errlen);

	if (!st) {
		return -EAGAIN;
	}
	return store_tree_open(st, out, errbuf, errlen);
}

unsigned admin__tree_status(int err)
{
	return err == -EAGAIN ? 503 : err == -EOPNOTSUPP ? 422 : 500;
}

/* The tree's own path of @rel (owned), or NULL. */
char *admin__path_abs(const struct store_tree *t, const char *rel)
{
	char *out;

	if (asprintf(&out, "%s/%s", t->root, rel) < 0) {
		return NULL;
	}
	return out;
}

/* @abs relative to the datastore (borrowed from @abs). */
const char *admin__path_rel(const struct store_tree *t, const char *abs)
{
	size_t n = strlen(t->root);

	if (!strncmp(abs, t->root, n) && abs[n] == '/') {
		return abs + n + 1;
	}
	return abs;
}

/* Replies the error of a file the request names: outside (400), missing
 * (404), or what is wrong with it (409). */
void admin__file_refused(struct admin_reply *reply, const char *what,
			 const char *rel, int err, const char *why)
{
	if (err == -EXDEV || err == -ELOOP) {
		admin__reply_error(reply, 400,
				   "%s '%.300s': outside the export (a symlink "
				   "or a name leads out of it)",
				   what, rel);
	} else if (err == -ENOENT) {
		admin__reply_error(reply, 404, "%s '%.300s': %s", what, rel,
				   why[0] ? why : "no such file");
	} else {
		admin__reply_error(reply, 409, "%s '%.300s': not a VMDK: %s",
				   what, rel, why[0] ? why : strerror(-err));
	}
}

/* Drops the datastore's directory from the names in @msg: a client
 * learns paths inside its datastore, not where it lives on the server. */
void admin__msg_relative(const struct store_tree *t, char *msg)
{
	size_t n = strlen(t->root);
	char *p;

	while (n && (p = strstr(msg, t->root)) && p[n] == '/') {
		memmove(p, p + n + 1, strlen(p + n + 1) + 1);
	}
}

int admin__file_regular(const struct store_tree *t, const char *abs,
			char *errbuf, size_t errlen)
{
	struct stat st;
	int fd = -1, err;

	/* O_NONBLOCK: opening a FIFO must not wait for a writer; the tree
	 * follows no symlink (RESOLVE_NO_SYMLINKS), O_NOFOLLOW says it
	 * again for a tree that would. */
	err = t->io.ops->open(t->io.ctx, abs,
			      O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC, 0,
			      &fd);
	if (err) {
		return err;
	}
	err = t->io.ops->fstat(t->io.ctx, fd, &st);
	t->io.ops->close(t->io.ctx, fd);
	if (err) {
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(errbuf, errlen, "not a regular file (%s): refused",
			 S_ISFIFO(st.st_mode)  ? "a FIFO"
			 : S_ISDIR(st.st_mode) ? "a directory"
			 : S_ISBLK(st.st_mode) ? "a block device"
			 : S_ISCHR(st.st_mode) ? "a character device"
					       : "a socket");
		return -EINVAL;
	}
	return 0;
}
