// SPDX-License-Identifier: Apache-2.0
/*
 * src_store: the source datastore reached through its store's ops
 * (src.h): the cephfs backend.  Its snapshots are the store's native
 * ones (store_tree.h: on CephFS a mkdir in the root's .snap), made and
 * deleted under the datastore's guard; a snapshot's tree is walked from
 * the root's ".snapshot/NAME" with the store's lookup (never following
 * a symlink), readdir, getattr, readlink and read, as an NFS client of
 * the gateway would see it; a file's changed ranges come from the
 * store (store_snapread.h) or are the whole file.
 */
#include "nfsd/repl/src.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/export/export.h"
#include "nfsd/repl/xfer.h"
#include "nfsd/store/store.h"
#include "nfsd/store/store_tree.h"

/* The most entries of one directory a tree lists (a datastore holds a
 * VM a directory, a few files each). */
#define SRC_STORE_DIR_MAX 65536u
/* One store read at most. */
#define SRC_STORE_READ_MAX (1u << 20)

struct src_store {
	struct repl_src pub;
	const struct export *exp;
	const struct repl_guard *guard;
};

struct store_tree_h {
	struct repl_src_tree pub;
	struct store *st;
	struct store_obj *root; /* the snapshot's root directory */
};

struct store_dir {
	struct store *st;
	struct store_obj *dir;
	char **names;
	size_t n, cap, next;
	int err;
};

struct store_file {
	struct repl_src_file pub;
	struct store *st;
	struct store_obj *obj;
};

static struct store_tree_h *tree_of(struct repl_src_tree *t)
{
	return (struct store_tree_h *)t;
}

/* What lstat(2) would say of @a. */
static void store_to_stat(const struct store_attr *a, struct stat *st)
{
	static const mode_t types[] = {
		[STORE_REG] = S_IFREG,	[STORE_DIR] = S_IFDIR,
		[STORE_BLK] = S_IFBLK,	[STORE_CHR] = S_IFCHR,
		[STORE_LNK] = S_IFLNK,	[STORE_SOCK] = S_IFSOCK,
		[STORE_FIFO] = S_IFIFO,
	};

	memset(st, 0, sizeof(*st));
	st->st_mode =
		(a->type >= STORE_REG && a->type <= STORE_FIFO ? types[a->type]
							       : 0) |
		(a->mode & 07777);
	st->st_nlink = a->nlink;
	st->st_uid = a->uid;
	st->st_gid = a->gid;
	st->st_size = (off_t)a->size_bytes;
	st->st_ino = a->fileid;
	st->st_atim = a->atime;
	st->st_mtim = a->mtime;
	st->st_ctim = a->ctime;
}

/* The object at @rel ("": the root) of @t.  *out owned (unref). */
static int store_walk(struct store_tree_h *t, const char *rel,
		      struct store_obj **out)
{
	char name[REPL_SRC_NAME_MAX + 1];
	struct store_obj *cur = t->root, *next;
	const char *p = rel;
	int err;

	store_obj_ref(t->st, cur);
	while (*p) {
		size_t len = strcspn(p, "/");

		if (len == 0 || len > REPL_SRC_NAME_MAX) {
			store_obj_unref(t->st, cur);
			return len ? -ENAMETOOLONG : -EINVAL;
		}
		memcpy(name, p, len);
		name[len] = '\0';
		p += len + (p[len] == '/');
		if (!strcmp(name, ".") || !strcmp(name, "..")) {
			store_obj_unref(t->st, cur);
			return -EINVAL;
		}
		err = store_lookup(t->st, cur, name, &next);
		store_obj_unref(t->st, cur);
		if (err) {
			return err;
		}
		cur = next;
	}
	*out = cur;
	return 0;
}

static int store_dir_entry_cb(void *arg, const char *name, uint64_t fileid,
			      uint64_t cookie)
{
	struct store_dir *d = arg;

	(void)fileid;
	(void)cookie;
	if (!strcmp(name, ".") || !strcmp(name, "..")) {
		return 0;
	}
	if (d->n >= SRC_STORE_DIR_MAX || strlen(name) > REPL_SRC_NAME_MAX) {
		d->err = d->n >= SRC_STORE_DIR_MAX ? -E2BIG : -ENAMETOOLONG;
		return d->err;
	}
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 32;
		char **grown = realloc(d->names, cap * sizeof(*grown));

		if (!grown) {
			d->err = -ENOMEM;
			return d->err;
		}
		d->names = grown;
		d->cap = cap;
	}
	d->names[d->n] = strdup(name);
	if (!d->names[d->n]) {
		d->err = -ENOMEM;
		return d->err;
	}
	d->n++;
	return 0;
}

static void store_dir_close(struct repl_src_dir *dp)
{
	struct store_dir *d = (struct store_dir *)dp;

	for (size_t i = 0; i < d->n; i++) {
		free(d->names[i]);
	}
	free(d->names);
	store_obj_unref(d->st, d->dir);
	free(d);
}

static int store_dir_open(struct repl_src_tree *tp, const char *rel,
			  struct repl_src_dir **out)
{
	struct store_tree_h *t = tree_of(tp);
	struct store_dir *d = calloc(1, sizeof(*d));
	int err;

	if (!d) {
		return -ENOMEM;
	}
	d->st = t->st;
	err = store_walk(t, rel, &d->dir);
	if (err) {
		free(d);
		return err;
	}
	/* The whole listing at once: the walk then looks each name up. */
	err = t->st->ops->readdir(t->st, d->dir, 0, store_dir_entry_cb, d);
	if (d->err || err) {
		err = d->err ? d->err : err;
		store_dir_close((struct repl_src_dir *)d);
		return err;
	}
	*out = (struct repl_src_dir *)d;
	return 0;
}

static int store_dir_next(struct repl_src_dir *dp, char *name, struct stat *st)
{
	struct store_dir *d = (struct store_dir *)dp;
	struct store_attr a;
	struct store_obj *o;
	int err;

	if (d->next >= d->n) {
		return 0;
	}
	strcpy(name, d->names[d->next++]);
	if (!st) {
		return 1;
	}
	err = store_lookup(d->st, d->dir, name, &o);
	if (err) {
		return err;
	}
	err = store_getattr(d->st, o, &a);
	store_obj_unref(d->st, o);
	if (err) {
		return err;
	}
	store_to_stat(&a, st);
	return 1;
}

static int store_tree_readlink(struct repl_src_tree *tp, const char *rel,
			       char *buf, size_t len)
{
	struct store_tree_h *t = tree_of(tp);
	struct store_obj *o;
	size_t n = 0;
	int err = store_walk(t, rel, &o);

	if (err) {
		return err;
	}
	err = store_readlink(t->st, o, buf, len - 1, &n);
	store_obj_unref(t->st, o);
	if (err) {
		return err;
	}
	buf[n] = '\0';
	return (int)n;
}

static const struct repl_src_tree_ops store_tree_ops;

static int store_file_open(struct repl_src_tree *tp, const char *rel,
			   struct repl_src_file **out, struct stat *st)
{
	struct store_tree_h *t = tree_of(tp);
	struct store_file *f;
	struct store_attr a;
	struct store_obj *o;
	int err = store_walk(t, rel, &o);

	if (err) {
		return err;
	}
	err = store_getattr(t->st, o, &a);
	if (!err && a.type != STORE_REG) {
		err = -EINVAL;
	}
	f = err ? NULL : malloc(sizeof(*f));
	if (!f) {
		store_obj_unref(t->st, o);
		return err ? err : -ENOMEM;
	}
	store_to_stat(&a, st);
	f->pub.ops = &store_tree_ops;
	f->st = t->st;
	f->obj = o;
	*out = &f->pub;
	return 0;
}

static ssize_t store_file_pread(struct repl_src_file *fp, void *buf, size_t len,
				uint64_t off)
{
	struct store_file *f = (struct store_file *)fp;
	size_t done = 0;

	while (done < len) {
		size_t want = len - done;
		uint32_t nread = 0;
		bool eof = false;
		int err = store_read(
			f->st, f->obj, off + done, (char *)buf + done,
			want < SRC_STORE_READ_MAX ? (uint32_t)want
						  : SRC_STORE_READ_MAX,
			&nread, &eof);

		if (err) {
			return err;
		}
		done += nread;
		if (eof || nread == 0) {
			break;
		}
	}
	return (ssize_t)done;
}

static void store_file_close(struct repl_src_file *fp)
{
	struct store_file *f = (struct store_file *)fp;

	store_obj_unref(f->st, f->obj);
	free(f);
}

/* The store's answer, at the engine's block size, or the whole file. */
static int store_changed(struct repl_src_tree *tp, struct repl_src_file *cur,
			 struct repl_src_file *base, uint64_t size,
			 uint64_t base_size, struct repl_range **out, size_t *n)
{
	struct store_tree_h *t = tree_of(tp);
	const struct store_snap_ops *ops = store_snap(t->st);
	struct store_range *r = NULL;
	size_t nr = 0;
	int err = -EOPNOTSUPP;

	*out = NULL;
	*n = 0;
	if (ops && ops->changed) {
		err = ops->changed(t->st, ((struct store_file *)cur)->obj,
				   base ? ((struct store_file *)base)->obj
					: NULL,
				   size, base_size, &r, &nr);
	}
	if (err == -EOPNOTSUPP) {
		if (!size) {
			return 0;
		}
		r = malloc(sizeof(*r));
		if (!r) {
			return -ENOMEM;
		}
		r->off = 0;
		r->len = size;
		nr = 1;
	} else if (err) {
		return err;
	}
	/* The store's ranges start on the engine's blocks (64 KiB, 4 MiB
	 * objects); the lanes compare them block by block. */
	*out = nr ? malloc(nr * sizeof(**out)) : NULL;
	if (nr && !*out) {
		free(r);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nr; i++) {
		(*out)[i].off = r[i].off;
		(*out)[i].len = r[i].len;
	}
	*n = nr;
	free(r);
	return 0;
}

static void store_tree_close(struct repl_src_tree *tp)
{
	struct store_tree_h *t = tree_of(tp);

	store_obj_unref(t->st, t->root);
	free(t);
}

static const struct repl_src_tree_ops store_tree_ops = {
	.dir_open = store_dir_open,
	.dir_next = store_dir_next,
	.dir_close = store_dir_close,
	.readlink = store_tree_readlink,
	.file_open = store_file_open,
	.pread = store_file_pread,
	.file_close = store_file_close,
	.changed = store_changed,
	.close = store_tree_close,
};

/* ---- the datastore ---------------------------------------------------- */

static struct src_store *src_of(struct repl_src *s)
{
	return (struct src_store *)s;
}

/* The datastore's store now: NULL while its cluster was down at start
 * (export_store()). */
static struct store *src_st(struct repl_src *s)
{
	return export_store(src_of(s)->exp);
}

struct src_store_call {
	struct store *st;
	enum repl_guard_op op;
	const char *name;
};

static int src_store_snap_fn(void *arg, char *errbuf, size_t errlen)
{
	const struct src_store_call *c = arg;
	const struct store_snap_ops *ops = store_snap(c->st);

	switch (c->op) {
	case REPL_GUARD_CREATE:
		return ops->create(c->st, c->name, NULL, errbuf, errlen);
	case REPL_GUARD_DELETE:
		return ops->remove(c->st, c->name, errbuf, errlen);
	case REPL_GUARD_RESTORE:
		return ops->restore(c->st, c->name, NULL, NULL, NULL, errbuf,
				    errlen);
	}
	return -EINVAL;
}

static int src_store_snap(struct repl_src *s, enum repl_guard_op op,
			  const char *name, char *errbuf, size_t errlen)
{
	static const char *const modes[] = {
		[REPL_GUARD_CREATE] = "create",
		[REPL_GUARD_DELETE] = "delete",
		[REPL_GUARD_RESTORE] = "restore",
	};
	struct src_store_call c = { .st = src_st(s), .op = op, .name = name };

	if (!c.st) {
		snprintf(errbuf, errlen, "volume %s: its cluster is down",
			 src_of(s)->exp->name);
		return -EAGAIN;
	}
	return repl_guard_run(src_of(s)->guard, modes[op], name,
			      src_store_snap_fn, &c, errbuf, errlen);
}

static int src_store_snap_check(struct repl_src *s, const char *name)
{
	struct store *st = src_st(s);
	char why[256];

	if (!st) {
		return -EAGAIN;
	}
	return store_snap(st)->check(st, name, true, why, sizeof(why));
}

static int src_store_snap_list(struct repl_src *s, struct snap_entry **out,
			       size_t *n)
{
	struct store *st = src_st(s);

	if (!st) {
		return -EAGAIN;
	}
	return store_snap(st)->list(st, out, n);
}

static int src_store_tree_open(struct repl_src *s, const char *name,
			       struct repl_src_tree **out, char *errbuf,
			       size_t errlen)
{
	struct store *st = src_st(s);
	struct store_obj *root, *snapdir, *snap = NULL;
	struct store_tree_h *t;
	int err;

	if (!st) {
		snprintf(errbuf, errlen, "volume %s: its cluster is down",
			 src_of(s)->exp->name);
		return -EAGAIN;
	}
	err = store_root(st, &root);

	if (!err) {
		err = store_lookup(st, root, SNAP_DIR_NAME, &snapdir);
		store_obj_unref(st, root);
	}
	if (!err) {
		err = store_lookup(st, snapdir, name, &snap);
		store_obj_unref(st, snapdir);
	}
	if (err) {
		snprintf(errbuf, errlen, "volume %s: snapshot %s: %s", st->name,
			 name, strerror(-err));
		return err;
	}
	t = malloc(sizeof(*t));
	if (!t) {
		store_obj_unref(st, snap);
		return -ENOMEM;
	}
	t->pub.ops = &store_tree_ops;
	t->st = st;
	t->root = snap;
	*out = &t->pub;
	return 0;
}

static void src_store_free(struct repl_src *s)
{
	free(src_of(s));
}

static const struct repl_src_ops src_store_ops = {
	.snap = src_store_snap,
	.snap_check = src_store_snap_check,
	.snap_list = src_store_snap_list,
	.tree_open = src_store_tree_open,
	.free = src_store_free,
};

int repl_src_store_new(const struct export *exp, const struct repl_guard *guard,
		       struct repl_src **out)
{
	struct store *st = export_store(exp);
	struct src_store *s;

	if (st && !store_snap(st)) {
		return -EOPNOTSUPP;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		return -ENOMEM;
	}
	s->pub.ops = &src_store_ops;
	s->exp = exp;
	s->guard = guard;
	*out = &s->pub;
	return 0;
}
