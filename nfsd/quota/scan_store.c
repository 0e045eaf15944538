// SPDX-License-Identifier: Apache-2.0
/*
 * scan_store: the allocated bytes of a datastore counted through its
 * store's ops (readdir, lookup, getattr's used_bytes), for a backend whose
 * files are not a directory of this machine (the cephfs backend).  Walked
 * once at start, depth first with a stack of directories; each inode
 * recorded once, as scan.c does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/quota/quota_int.h"
#include "nfsd/store/store.h"

/* The names of one directory, gathered by readdir's callback. */
struct scan_names {
	char **names;
	size_t n, cap;
};

static int scan_name_cb(void *arg, const char *name, uint64_t fileid,
			uint64_t cookie)
{
	struct scan_names *s = arg;
	char **grown;

	(void)fileid;
	(void)cookie;
	if (!strcmp(name, ".") || !strcmp(name, "..")) {
		return 0;
	}
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		grown = realloc(s->names, s->cap * sizeof(*grown));
		if (!grown) {
			return -ENOMEM;
		}
		s->names = grown;
	}
	s->names[s->n] = strdup(name);
	if (!s->names[s->n]) {
		return -ENOMEM;
	}
	s->n++;
	return 0;
}

static void scan_names_free(struct scan_names *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->names[i]);
	}
	free(s->names);
	memset(s, 0, sizeof(*s));
}

/* A stack of directories still to list (their references). */
struct scan_stack {
	struct store_obj **dirs;
	size_t n, cap;
};

static int scan_push(struct scan_stack *k, struct store_obj *dir)
{
	struct store_obj **grown;

	if (k->n == k->cap) {
		k->cap = k->cap ? 2 * k->cap : 16;
		grown = realloc(k->dirs, k->cap * sizeof(*grown));
		if (!grown) {
			return -ENOMEM;
		}
		k->dirs = grown;
	}
	k->dirs[k->n++] = dir;
	return 0;
}

/* Records @a unless its inode is on record; adds its bytes.  Under the
 * quota's lock. */
static int scan_store_entry(struct quota *q, const struct store_attr *a,
			    uint64_t *total)
{
	if (quota_files_find(&q->files, a->fileid)) {
		return 0;
	}
	if (!quota_files_add(&q->files, a->fileid, a->used_bytes)) {
		return -ENOMEM;
	}
	*total += a->used_bytes;
	return 0;
}

/* Lists @dir (taken), records its entries and pushes its directories. */
static int scan_store_dir(struct quota *q, struct store *st,
			  struct store_obj *dir, struct scan_stack *k,
			  uint64_t *total)
{
	struct scan_names s = { 0 };
	struct store_obj *obj;
	struct store_attr a;
	int err;

	err = store_readdir(st, dir, 0, scan_name_cb, &s);
	for (size_t i = 0; !err && i < s.n; i++) {
		/* Gone meanwhile: nothing to count. */
		if (store_lookup(st, dir, s.names[i], &obj) != 0) {
			continue;
		}
		err = store_getattr(st, obj, &a);
		if (!err) {
			err = scan_store_entry(q, &a, total);
		}
		if (!err && a.type == STORE_DIR) {
			err = scan_push(k, obj);
			if (!err) {
				continue;
			}
		}
		store_obj_unref(st, obj);
	}
	scan_names_free(&s);
	store_obj_unref(st, dir);
	return err;
}

int quota_scan_store(struct quota *q, struct store *st, char *errbuf,
		     size_t errlen)
{
	struct scan_stack k = { 0 };
	struct store_obj *root;
	struct store_attr a;
	uint64_t total = 0;
	int err;

	err = store_root(st, &root);
	if (err) {
		snprintf(errbuf, errlen, "%s: cannot scan: %s", st->name,
			 strerror(-err));
		return err;
	}
	pthread_mutex_lock(&q->lock);
	quota_files_clear(&q->files);
	err = store_getattr(st, root, &a);
	if (!err) {
		err = scan_store_entry(q, &a, &total);
	}
	if (!err) {
		err = scan_push(&k, root);
	} else {
		store_obj_unref(st, root);
	}
	while (!err && k.n > 0) {
		err = scan_store_dir(q, st, k.dirs[--k.n], &k, &total);
	}
	while (k.n > 0) {
		store_obj_unref(st, k.dirs[--k.n]);
	}
	free(k.dirs);
	if (err) {
		quota_files_clear(&q->files);
		snprintf(errbuf, errlen, "%s: cannot scan: %s", st->name,
			 strerror(-err));
	} else {
		atomic_store(&q->used_bytes,
			     total > INT64_MAX ? INT64_MAX : (int64_t)total);
	}
	pthread_mutex_unlock(&q->lock);
	return err;
}
