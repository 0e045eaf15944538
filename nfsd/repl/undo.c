// SPDX-License-Identifier: Apache-2.0
/*
 * undo: the destination's transfer applied and not committed (undo.h).
 */
#include "nfsd/repl/undo.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nfsd/base/errbuf.h"
#include "nfsd/repl/guard.h"
#include "nfsd/snap/policy.h"
#include "nfsd/snap/snap.h"

int repl_applying_load(const char *path, struct repl_applying *out)
{
	char line[2 * SNAP_NAME_MAX + 8], *sp;
	FILE *f = fopen(path, "r");

	memset(out, 0, sizeof(*out));
	if (!f) {
		return errno == ENOENT ? -ENOENT : -errno;
	}
	if (!fgets(line, sizeof(line), f)) {
		line[0] = '\0';
	}
	fclose(f);
	line[strcspn(line, "\n")] = '\0';
	sp = strchr(line, ' ');
	if (!sp || (size_t)(sp - line) > SNAP_NAME_MAX ||
	    strlen(sp + 1) > SNAP_NAME_MAX || sp == line) {
		return -EINVAL;
	}
	memcpy(out->name, line, (size_t)(sp - line));
	snprintf(out->base, sizeof(out->base), "%s", sp + 1);
	return 0;
}

/* The directory of @path made durable (a rename or unlink in it). */
static void undo_sync_dir(const char *path)
{
	char d[PATH_MAX];
	int fd;

	snprintf(d, sizeof(d), "%s", path);
	fd = open(dirname(d), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
}

static int undo_save(const char *path, const struct repl_applying *a)
{
	char tmp[PATH_MAX + 8];
	int fd, err = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) {
		return -ENAMETOOLONG;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		return -errno;
	}
	if (dprintf(fd, "%s %s\n", a->name, a->base) < 0 || fsync(fd) < 0) {
		err = -errno;
	}
	close(fd);
	if (!err && rename(tmp, path) < 0) {
		err = -errno;
	}
	if (err) {
		(void)unlink(tmp);
		return err;
	}
	undo_sync_dir(path);
	return 0;
}

static int undo_clear(const char *path)
{
	if (unlink(path) < 0 && errno != ENOENT) {
		return -errno;
	}
	undo_sync_dir(path);
	return 0;
}

bool repl_undo_pending(const struct repl_local *l)
{
	return l->applying && access(l->applying, F_OK) == 0;
}

/* A tree operation (PRUNE, EMPTY) on @l's datastore, through the entry
 * point repl_local_open() set (dst.h): dst_local.c applies the tree and
 * calls this file for BEGIN, ABORT and COMMIT, so this file reaches the
 * tree through the pointer: the calls go one way, dst_local.c -> undo.c. */
static void undo_tree_op(struct repl_local *l, const struct repl_msg *m,
			 struct repl_result *r)
{
	l->pub.call(&l->pub, m, r);
}

/* Empties the tree but .snapshot (a baseline undone). */
static int undo_empty(struct repl_local *l, char *errbuf, size_t errlen)
{
	struct repl_msg m = { .op = REPL_OP_PRUNE, .arg = "", .arg_len = 0 };
	struct repl_result r;

	undo_tree_op(l, &m, &r);
	if (r.err) {
		snprintf(errbuf, errlen, "%s", r.reason);
	}
	return r.err;
}

int repl_undo_run(struct repl_local *l, char *errbuf, size_t errlen)
{
	struct repl_applying a;
	const char *to;
	int err;

	if (!l->applying) {
		return 0;
	}
	err = repl_applying_load(l->applying, &a);
	if (err == -ENOENT) {
		return 0;
	}
	if (err) {
		return errbuf_printf(errbuf, errlen, err,
				     "%s: %s (remove it once the datastore "
				     "is checked)",
				     l->applying,
				     err == -EINVAL ? "not a transfer marker"
						    : strerror(-err));
	}
	/* A transfer whose snapshot was made but whose marker outlived
	 * it (a crash between the two) committed: its snapshot is the
	 * tree to go back to. */
	to = l->manifest && !snap_check(l->root, l->manifest, a.name, true,
					NULL, 0)
		     ? a.name
		     : a.base;
	if (!*to) {
		err = undo_empty(l, errbuf, errlen);
	} else if (l->manifest) {
		err = repl_guard_snap(l->guard, REPL_GUARD_RESTORE, l->root,
				      l->manifest, to, errbuf, errlen);
	}
	if (err) {
		char why[256];

		snprintf(why, sizeof(why), "%s", errbuf);
		return errbuf_printf(errbuf, errlen, err,
				     "undo of transfer %s (back to %s): %s",
				     a.name, *to ? to : "empty", why);
	}
	return undo_clear(l->applying);
}

/* "NAME BASE" of BEGIN into @a. */
static int undo_parse(const struct repl_msg *m, struct repl_applying *a,
		      struct repl_result *r)
{
	const char *arg = m->arg ? m->arg : "", *sp = strchr(arg, ' ');
	size_t n = sp ? (size_t)(sp - arg) : 0;

	memset(a, 0, sizeof(*a));
	if (!sp || !n || n > SNAP_NAME_MAX || strlen(sp + 1) > SNAP_NAME_MAX) {
		return errbuf_printf(r->reason, sizeof(r->reason), -EINVAL,
				     "begin: not \"TRANSFER BASE\"");
	}
	memcpy(a->name, arg, n);
	snprintf(a->base, sizeof(a->base), "%s", sp + 1);
	if (snap_name_check(a->name, r->reason, sizeof(r->reason)) ||
	    (a->base[0] &&
	     snap_name_check(a->base, r->reason, sizeof(r->reason)))) {
		return -EINVAL;
	}
	return 0;
}

int repl_undo_begin(struct repl_local *l, const struct repl_msg *m,
		    struct repl_result *r)
{
	struct repl_msg em = { .op = REPL_OP_EMPTY };
	struct repl_applying a, cur;
	struct repl_result er;
	int err = undo_parse(m, &a, r);

	if (err) {
		return err;
	}
	if (l->applying && !repl_applying_load(l->applying, &cur)) {
		if (!strcmp(cur.name, a.name) && !strcmp(cur.base, a.base)) {
			r->value = 1; /* the same transfer: it resumes */
			return 0;
		}
		err = repl_undo_run(l, r->reason, sizeof(r->reason));
		if (err) {
			return err;
		}
	}
	if (a.base[0] && l->manifest &&
	    snap_check(l->root, l->manifest, a.base, true, NULL, 0)) {
		return errbuf_printf(r->reason, sizeof(r->reason), -ENOENT,
				     "the destination has no snapshot %s, the "
				     "last one the source says both hold "
				     "(resync the relation)",
				     a.base);
	}
	if (!a.base[0]) {
		undo_tree_op(l, &em, &er);
		if (er.err || !er.value) {
			return er.err ? errbuf_printf(r->reason,
						      sizeof(r->reason), er.err,
						      "%s", er.reason)
				      : errbuf_printf(r->reason,
						      sizeof(r->reason),
						      -ENOTEMPTY,
						      "destination %s: not "
						      "empty: a baseline needs "
						      "an empty datastore",
						      l->root);
		}
	}
	r->value = 0;
	if (!l->applying) {
		return 0;
	}
	err = undo_save(l->applying, &a);
	return err ? errbuf_printf(r->reason, sizeof(r->reason), err, "%s: %s",
				   l->applying, strerror(-err))
		   : 0;
}

/* -ENOSPC with the reason when @l's datastore holds the most snapshots
 * a datastore may (ANF's 255: the source's snapshots, carried, count
 * here as there). */
static int undo_room(struct repl_local *l, struct repl_result *r)
{
	struct snap_entry *list = NULL;
	size_t n = 0;
	int err = snap_list(l->root, l->manifest, &list, &n);

	free(list);
	if (err) {
		return errbuf_printf(r->reason, sizeof(r->reason), err,
				     "destination %s: its snapshots: %s",
				     l->root, strerror(-err));
	}
	if (n >= SNAP_POLICY_MAX_SNAPSHOTS) {
		return errbuf_printf(
			r->reason, sizeof(r->reason), -ENOSPC,
			"destination %s holds %zu snapshots, the most a "
			"datastore may (%d): delete some there (by hand) or "
			"on the source",
			l->root, n, SNAP_POLICY_MAX_SNAPSHOTS);
	}
	return 0;
}

int repl_undo_commit(struct repl_local *l, const struct repl_msg *m,
		     struct repl_result *r)
{
	struct repl_applying cur;
	int err;

	if (snap_name_check(m->arg, r->reason, sizeof(r->reason))) {
		return -EINVAL;
	}
	if (l->applying && (repl_applying_load(l->applying, &cur) ||
			    strcmp(cur.name, m->arg))) {
		return errbuf_printf(r->reason, sizeof(r->reason), -ESTALE,
				     "no transfer %s is being applied here "
				     "(the destination restarted or undid "
				     "it): it starts again",
				     m->arg);
	}
	/* Made already: a COMMIT whose answer was lost, the transfer then
	 * applied again (the same bytes). */
	if (l->manifest &&
	    snap_check(l->root, l->manifest, m->arg, true, NULL, 0)) {
		err = undo_room(l, r);
		if (err) {
			return err;
		}
		/* mtime_s: the source snapshot's time (0: an older source,
		 * now). */
		err = repl_guard_create_at(l->guard, l->root, l->manifest,
					   m->arg, m->mtime_s, r->reason,
					   sizeof(r->reason));
		if (err) {
			return err;
		}
	}
	return l->applying ? undo_clear(l->applying) : 0;
}

int repl_undo_check(const struct repl_local *l, struct repl_result *r)
{
	if (!l->applying || repl_undo_pending(l)) {
		return 0;
	}
	return errbuf_printf(r->reason, sizeof(r->reason), -ESTALE,
			     "no transfer is being applied here (the "
			     "destination restarted or undid it): it starts "
			     "again");
}
