// SPDX-License-Identifier: Apache-2.0
/*
 * src_local: the source datastore on a local file system (src.h): the
 * snapshots of nfsd/snap (reflink copies under ROOT/.snapshot, listed in
 * the manifest), each a directory read with the system calls, its
 * changed ranges from FIEMAP (plan.h) or the whole file where the file
 * system has none.
 */
#include "nfsd/repl/src.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nfsd/repl/xfer.h"

struct local_tree {
	struct repl_src_tree pub;
	char dir[PATH_MAX];
};

struct local_dir {
	DIR *d;
	char path[PATH_MAX];
};

struct local_file {
	struct repl_src_file pub;
	int fd;
};

static struct local_tree *local_tree_of(struct repl_src_tree *t)
{
	return (struct local_tree *)t;
}

static int local_path(char *out, const char *root, const char *rel)
{
	int n = snprintf(out, PATH_MAX, "%s%s%s", root, *rel ? "/" : "", rel);

	return n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

static int local_dir_open(struct repl_src_tree *t, const char *rel,
			  struct repl_src_dir **out)
{
	struct local_dir *d = calloc(1, sizeof(*d));
	int err;

	if (!d) {
		return -ENOMEM;
	}
	err = local_path(d->path, local_tree_of(t)->dir, rel);
	if (!err) {
		d->d = opendir(d->path);
		err = d->d ? 0 : -errno;
	}
	if (err) {
		free(d);
		return err;
	}
	*out = (struct repl_src_dir *)d;
	return 0;
}

static int local_dir_next(struct repl_src_dir *dp, char *name, struct stat *st)
{
	struct local_dir *d = (struct local_dir *)dp;
	char p[PATH_MAX];
	struct dirent *de;

	errno = 0;
	while ((de = readdir(d->d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) {
			continue;
		}
		if (strlen(de->d_name) > REPL_SRC_NAME_MAX ||
		    local_path(p, d->path, de->d_name)) {
			return -ENAMETOOLONG;
		}
		strcpy(name, de->d_name);
		if (st && lstat(p, st) < 0) {
			return -errno;
		}
		return 1;
	}
	return errno ? -errno : 0;
}

static void local_dir_close(struct repl_src_dir *dp)
{
	struct local_dir *d = (struct local_dir *)dp;

	closedir(d->d);
	free(d);
}

static int local_readlink(struct repl_src_tree *t, const char *rel, char *buf,
			  size_t len)
{
	char p[PATH_MAX];
	ssize_t n;
	int err = local_path(p, local_tree_of(t)->dir, rel);

	if (err) {
		return err;
	}
	n = readlink(p, buf, len - 1);
	if (n < 0) {
		return -errno;
	}
	buf[n] = '\0';
	return (int)n;
}

static const struct repl_src_tree_ops local_tree_ops;

static int local_file_open(struct repl_src_tree *t, const char *rel,
			   struct repl_src_file **out, struct stat *st)
{
	struct local_file *f;
	char p[PATH_MAX];
	int fd, err = local_path(p, local_tree_of(t)->dir, rel);

	if (err) {
		return err;
	}
	fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		return -errno;
	}
	if (fstat(fd, st) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISREG(st->st_mode)) {
		close(fd);
		return -EINVAL;
	}
	f = malloc(sizeof(*f));
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	f->pub.ops = &local_tree_ops;
	f->fd = fd;
	*out = &f->pub;
	return 0;
}

static ssize_t local_pread(struct repl_src_file *fp, void *buf, size_t len,
			   uint64_t off)
{
	struct local_file *f = (struct local_file *)fp;
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(f->fd, (char *)buf + done, len - done,
				  (off_t)(off + done));

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			return -errno;
		}
		if (n == 0) {
			break;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static void local_file_close(struct repl_src_file *fp)
{
	struct local_file *f = (struct local_file *)fp;

	close(f->fd);
	free(f);
}

/* FIEMAP's shared extents, or the whole file where a file system has
 * none. */
static int local_changed(struct repl_src_tree *t, struct repl_src_file *cur,
			 struct repl_src_file *base, uint64_t size,
			 uint64_t base_size, struct repl_range **r, size_t *n)
{
	int sfd = ((struct local_file *)cur)->fd;
	int bfd = base ? ((struct local_file *)base)->fd : -1;
	struct repl_extent *ce = NULL, *be = NULL;
	size_t nc = 0, nb = 0;
	int err;

	(void)t;
	*r = NULL;
	*n = 0;
	err = repl_plan_fiemap(sfd, &ce, &nc);
	if (!err && bfd >= 0) {
		err = repl_plan_fiemap(bfd, &be, &nb);
	}
	if (err == -EOPNOTSUPP) {
		free(ce);
		if (!size) {
			return 0;
		}
		*r = malloc(sizeof(**r));
		if (!*r) {
			return -ENOMEM;
		}
		(*r)->off = 0;
		(*r)->len = size;
		*n = 1;
		return 0;
	}
	if (!err) {
		err = repl_plan_changed(ce, nc, be, nb, size,
					bfd >= 0 ? base_size : 0, REPL_BLOCK, r,
					n);
	}
	free(ce);
	free(be);
	return err;
}

static void local_tree_close(struct repl_src_tree *t)
{
	free(local_tree_of(t));
}

static const struct repl_src_tree_ops local_tree_ops = {
	.dir_open = local_dir_open,
	.dir_next = local_dir_next,
	.dir_close = local_dir_close,
	.readlink = local_readlink,
	.file_open = local_file_open,
	.pread = local_pread,
	.file_close = local_file_close,
	.changed = local_changed,
	.close = local_tree_close,
};

int repl_src_dir_tree(const char *dir, struct repl_src_tree **out)
{
	struct local_tree *t = malloc(sizeof(*t));

	if (!t) {
		return -ENOMEM;
	}
	if (snprintf(t->dir, sizeof(t->dir), "%s", dir) >=
	    (int)sizeof(t->dir)) {
		free(t);
		return -ENAMETOOLONG;
	}
	t->pub.ops = &local_tree_ops;
	*out = &t->pub;
	return 0;
}

/* ---- the datastore ---------------------------------------------------- */

static struct repl_src_local *local_of(struct repl_src *s)
{
	return (struct repl_src_local *)s;
}

static int local_snap(struct repl_src *s, enum repl_guard_op op,
		      const char *name, char *errbuf, size_t errlen)
{
	struct repl_src_local *l = local_of(s);

	return repl_guard_snap(l->guard, op, l->root, l->manifest, name, errbuf,
			       errlen);
}

static int local_snap_check(struct repl_src *s, const char *name)
{
	struct repl_src_local *l = local_of(s);

	return snap_check(l->root, l->manifest, name, true, NULL, 0);
}

static int local_snap_list(struct repl_src *s, struct snap_entry **out,
			   size_t *n)
{
	struct repl_src_local *l = local_of(s);

	return snap_list(l->root, l->manifest, out, n);
}

static int local_tree_open(struct repl_src *s, const char *name,
			   struct repl_src_tree **out, char *errbuf,
			   size_t errlen)
{
	char dir[PATH_MAX];

	if (snprintf(dir, sizeof(dir), "%s/%s/%s", local_of(s)->root,
		     SNAP_DIR_NAME, name) >= (int)sizeof(dir)) {
		snprintf(errbuf, errlen, "snapshot %s: path too long", name);
		return -ENAMETOOLONG;
	}
	return repl_src_dir_tree(dir, out);
}

static const struct repl_src_ops local_ops = {
	.snap = local_snap,
	.snap_check = local_snap_check,
	.snap_list = local_snap_list,
	.tree_open = local_tree_open,
};

void repl_src_local_init(struct repl_src_local *l, const char *root,
			 const char *manifest, const struct repl_guard *guard)
{
	l->pub.ops = &local_ops;
	l->root = root;
	l->manifest = manifest;
	l->guard = guard;
}

void repl_src_free(struct repl_src *s)
{
	if (s && s->ops->free) {
		s->ops->free(s);
	}
}
