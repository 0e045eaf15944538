// SPDX-License-Identifier: Apache-2.0
/*
 * fake_store: an in-memory store (see fake_store.h).  Nodes live in an
 * array indexed by fileid - 1 and are never freed before the store, so a
 * removed node simply turns stale.  Directory entries keep their insertion
 * order and a cookie that is never reused, which keeps cookies valid across
 * changes as the real store's are.  One mutex guards everything.  The
 * namespace ops are in fake_store_ns.c.
 */
#include "tests/lib/fake_store_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

struct fake_store *fake_store__of(const struct store *st)
{
	return (struct fake_store *)st;
}

void fake_store__now(struct timespec *ts)
{
	clock_gettime(CLOCK_REALTIME, ts);
}

struct fake_node *fake_store__node_get(struct fake_store *fs, uint64_t fileid)
{
	if (fileid == 0 || fileid > fs->nnodes) {
		return NULL;
	}
	return fs->nodes[fileid - 1];
}

struct fake_node *fake_store__obj_node(struct store_obj *obj)
{
	return fake_store__node_get(fake_obj_of(obj)->fs,
				    fake_obj_of(obj)->fileid);
}

/* The failure a test asked for, once; call with the lock held. */
int fake_store__injected(struct fake_store *fs, const char *op)
{
	int err = fs->fail_err;

	if (!err || strcmp(fs->fail_op, op) != 0) {
		return 0;
	}
	fs->fail_err = 0;
	return err;
}

int fake_store__obj_new(struct fake_store *fs, uint64_t fileid,
			struct store_obj **out)
{
	struct fake_obj *obj = calloc(1, sizeof(*obj));

	if (!obj) {
		return -ENOMEM;
	}
	obj->fs = fs;
	obj->fileid = fileid;
	obj->refs = 1;
	fs->refs++;
	*out = &obj->base;
	return 0;
}

struct fake_node *fake_store__node_new(struct fake_store *fs,
				       enum store_ftype type, uint32_t mode,
				       const struct store_cred *cred)
{
	struct fake_node *n;

	if (fs->nnodes == fs->cap) {
		size_t cap = fs->cap ? fs->cap * 2 : 64;
		struct fake_node **nodes =
			realloc(fs->nodes, cap * sizeof(*nodes));

		if (!nodes) {
			return NULL;
		}
		fs->nodes = nodes;
		fs->cap = cap;
	}
	n = calloc(1, sizeof(*n));
	if (!n) {
		return NULL;
	}
	fs->nodes[fs->nnodes++] = n;
	n->fileid = fs->nnodes;
	n->gen = 7;
	n->next_cookie = FAKE_COOKIE_FIRST;
	n->attr.type = type;
	n->attr.mode = mode & 07777;
	n->attr.nlink = type == STORE_DIR ? 2 : 1;
	n->attr.uid = cred->uid;
	n->attr.gid = cred->gid;
	n->attr.fsid = fs->base.export_id;
	n->attr.fileid = n->fileid;
	fake_store__now(&n->attr.atime);
	n->attr.mtime = n->attr.atime;
	n->attr.ctime = n->attr.atime;
	return n;
}

struct fake_dirent *fake_store__dir_find(struct fake_node *dir,
					 const char *name)
{
	for (size_t i = 0; i < dir->nents; i++) {
		if (strcmp(dir->ents[i].name, name) == 0) {
			return &dir->ents[i];
		}
	}
	return NULL;
}

static void fake_touch(struct fake_node *n)
{
	fake_store__now(&n->attr.mtime);
	n->attr.ctime = n->attr.mtime;
}

int fake_store__dir_add(struct fake_node *dir, const char *name,
			uint64_t fileid)
{
	struct fake_dirent *e;

	if (strlen(name) > STORE_NAME_MAX) {
		return -ENAMETOOLONG;
	}
	if (dir->nents == dir->cap) {
		size_t cap = dir->cap ? dir->cap * 2 : 16;
		struct fake_dirent *ents =
			realloc(dir->ents, cap * sizeof(*ents));

		if (!ents) {
			return -ENOMEM;
		}
		dir->ents = ents;
		dir->cap = cap;
	}
	e = &dir->ents[dir->nents++];
	snprintf(e->name, sizeof(e->name), "%s", name);
	e->fileid = fileid;
	e->cookie = dir->next_cookie++;
	fake_touch(dir);
	return 0;
}

void fake_store__dir_del(struct fake_node *dir, struct fake_dirent *e)
{
	size_t i = (size_t)(e - dir->ents);

	memmove(e, e + 1, (dir->nents - i - 1) * sizeof(*e));
	dir->nents--;
	fake_touch(dir);
}

/* One link of @n is gone; the last one makes it stale. */
void fake_store__unlink_node(struct fake_node *n)
{
	if (n->attr.nlink > 0) {
		n->attr.nlink--;
	}
	if (n->attr.type == STORE_DIR || n->attr.nlink == 0) {
		n->attr.nlink = 0;
		n->gone = true;
	}
	fake_store__now(&n->attr.ctime);
}

static int fake_set_size(struct fake_node *n, uint64_t size)
{
	if (size > n->attr.size_bytes) {
		uint8_t *data = realloc(n->data, size ? size : 1);

		if (!data) {
			return -ENOMEM;
		}
		memset(data + n->attr.size_bytes, 0, size - n->attr.size_bytes);
		n->data = data;
	}
	n->attr.size_bytes = size;
	n->attr.used_bytes = (size + 4095) & ~(uint64_t)4095;
	return 0;
}

int fake_store__apply_sattr(struct fake_node *n, const struct store_sattr *sa)
{
	struct timespec now;
	int err;

	fake_store__now(&now);
	if (sa->set_size) {
		if (n->attr.type == STORE_DIR) {
			return -EISDIR;
		}
		if (n->attr.type != STORE_REG) {
			return -EINVAL;
		}
		err = fake_set_size(n, sa->size_bytes);
		if (err) {
			return err;
		}
		n->attr.mtime = now;
	}
	if (sa->set_mode) {
		n->attr.mode = sa->mode & 07777;
	}
	if (sa->set_uid) {
		n->attr.uid = sa->uid;
	}
	if (sa->set_gid) {
		n->attr.gid = sa->gid;
	}
	if (sa->atime_how == STORE_TIME_SERVER) {
		n->attr.atime = now;
	} else if (sa->atime_how == STORE_TIME_CLIENT) {
		n->attr.atime = sa->atime;
	}
	if (sa->mtime_how == STORE_TIME_SERVER) {
		n->attr.mtime = now;
	} else if (sa->mtime_how == STORE_TIME_CLIENT) {
		n->attr.mtime = sa->mtime;
	}
	n->attr.ctime = now;
	return 0;
}

/* ---- handles and objects ------------------------------------------- */

static uint64_t fake_fh_tag(const uint8_t *p)
{
	return XXH64(p, 7 + FAKE_FH_BODY, FAKE_FH_KEY);
}

static void fake_put_be(uint8_t *p, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++) {
		p[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
	}
}

static uint64_t fake_get_be(const uint8_t *p, int bytes)
{
	uint64_t v = 0;

	for (int i = 0; i < bytes; i++) {
		v = v << 8 | p[i];
	}
	return v;
}

static void fake_obj_fh(const struct store_obj *sobj, struct store_fh *fh)
{
	const struct fake_obj *obj = fake_obj_of(sobj);
	struct fake_store *fs = obj->fs;
	struct fake_node *n;

	pthread_mutex_lock(&fs->lock);
	n = fake_store__node_get(fs, obj->fileid);
	memset(fh, 0, sizeof(*fh));
	fh->data[0] = FAKE_FH_VERSION;
	fake_put_be(fh->data + 1, fs->base.export_id, 4);
	fh->data[5] = FAKE_FH_TYPE;
	fh->data[6] = FAKE_FH_BODY;
	fake_put_be(fh->data + 7, obj->fileid, 8);
	fake_put_be(fh->data + 15, n ? n->gen : 0, 4);
	fake_put_be(fh->data + 19, fake_fh_tag(fh->data), 8);
	fh->len = FAKE_FH_LEN;
	pthread_mutex_unlock(&fs->lock);
}

static int fake_resolve(struct store *st, const struct store_fh *fh,
			struct store_obj **out)
{
	struct fake_store *fs = fake_store__of(st);
	struct fake_node *n;
	uint64_t fileid;
	int err;

	if (fh->len != FAKE_FH_LEN || fh->data[0] != FAKE_FH_VERSION ||
	    fh->data[5] != FAKE_FH_TYPE || fh->data[6] != FAKE_FH_BODY ||
	    fake_get_be(fh->data + 19, 8) != fake_fh_tag(fh->data) ||
	    fake_get_be(fh->data + 1, 4) != st->export_id) {
		return -STORE_EBADHANDLE;
	}
	fileid = fake_get_be(fh->data + 7, 8);
	pthread_mutex_lock(&fs->lock);
	n = fake_store__node_get(fs, fileid);
	err = fake_store__injected(fs, "resolve");
	if (!err && (!n || n->gone ||
		     n->gen != (uint32_t)fake_get_be(fh->data + 15, 4))) {
		err = -ESTALE;
	}
	if (!err) {
		err = fake_store__obj_new(fs, fileid, out);
	}
	pthread_mutex_unlock(&fs->lock);
	return err;
}

static void fake_obj_ref(struct store_obj *sobj)
{
	struct fake_obj *obj = fake_obj_of(sobj);
	struct fake_store *fs = obj->fs;

	pthread_mutex_lock(&fs->lock);
	obj->refs++;
	fs->refs++;
	pthread_mutex_unlock(&fs->lock);
}

static void fake_obj_unref(struct store_obj *sobj)
{
	struct fake_obj *obj = fake_obj_of(sobj);
	struct fake_store *fs = obj->fs;
	bool last;

	pthread_mutex_lock(&fs->lock);
	fs->refs--;
	last = --obj->refs == 0;
	pthread_mutex_unlock(&fs->lock);
	if (last) {
		free(obj);
	}
}

static int fake_root(struct store *st, struct store_obj **out)
{
	struct fake_store *fs = fake_store__of(st);
	int err;

	pthread_mutex_lock(&fs->lock);
	err = fake_store__injected(fs, "root");
	if (!err) {
		err = fake_store__obj_new(fs, 1, out);
	}
	pthread_mutex_unlock(&fs->lock);
	return err;
}

/* ---- attributes and data ------------------------------------------- */

static int fake_getattr(struct store *st, struct store_obj *obj,
			struct store_attr *attr)
{
	struct fake_store *fs = fake_store__of(st);
	struct fake_node *n;
	int err;

	pthread_mutex_lock(&fs->lock);
	n = fake_store__obj_node(obj);
	fs->getattrs++;
	err = fake_store__injected(fs, "getattr");
	if (!err) {
		*attr = n->attr;
		if (n->attr.type == STORE_DIR) {
			attr->size_bytes = 4096 + n->nents * 32;
		}
	}
	pthread_mutex_unlock(&fs->lock);
	return err;
}

static int fake_setattr(struct store *st, struct store_obj *obj,
			const struct store_sattr *sattr,
			const struct store_cred *cred)
{
	struct fake_store *fs = fake_store__of(st);
	int err;

	(void)cred;
	pthread_mutex_lock(&fs->lock);
	err = fake_store__injected(fs, "setattr");
	if (!err) {
		err = fake_store__apply_sattr(fake_store__obj_node(obj), sattr);
	}
	pthread_mutex_unlock(&fs->lock);
	return err;
}

static int fake_lookup(struct store *st, struct store_obj *dir,
		       const char *name, struct store_obj **out)
{
	struct fake_store *fs = fake_store__of(st);
	struct fake_node *d;
	struct fake_dirent *e;
	int err;

	pthread_mutex_lock(&fs->lock);
	d = fake_store__obj_node(dir);
	err = fake_store__injected(fs, "lookup");
	if (err) {
		goto out;
	}
	if (d->attr.type != STORE_DIR) {
		err = -ENOTDIR;
	} else if (strcmp(name, ".") == 0) {
		err = fake_store__obj_new(fs, d->fileid, out);
	} else if (strcmp(name, "..") == 0) {
		err = fake_store__obj_new(fs, d->parent ? d->parent : d->fileid,
					  out);
	} else {
		e = fake_store__dir_find(d, name);
		err = e ? fake_store__obj_new(fs, e->fileid, out) : -ENOENT;
	}
out:
	pthread_mutex_unlock(&fs->lock);
	return err;
}

static int fake_readlink(struct store *st, struct store_obj *obj, char *buf,
			 size_t buflen, size_t *len)
{
	struct fake_store *fs = fake_store__of(st);
	struct fake_node *n;
	int err;

	pthread_mutex_lock(&fs->lock);
	n = fake_store__obj_node(obj);
	err = fake_store__injected(fs, "readlink");
	if (!err && n->attr.type != STORE_LNK) {
		err = -EINVAL;
	}
	if (!err) {
		*len = strlen(n->target);
		if (*len > buflen) {
			*len = buflen;
		}
		memcpy(buf, n->target, *len);
	}
	pthread_mutex_unlock(&fs->lock);
	return err;
}

int fake_store__check_reg(const struct fake_node *n)
{
	if (n->attr.type == STORE_DIR) {
		return -EISDIR;
	}
	return n->attr.type == STORE_REG ? 0 : -EINVAL;
}

static int fake_read(struct store *st, struct store_obj *obj,
		     uint64_t off_bytes, void *buf, uint32_t count,
		     uint32_t *nread, bool *eof)
{
	struct fake_store *fs = fake_store__of(st);
	struct fake_node *n;
	uint64_t size;
	int err;

	pthread_mutex_lock(&fs->lock);
	n = fake_store__obj_node(obj);
	err = fake_store__injected(fs, "read");
	if (!err) {
		err = fake_store__check_reg(n);
	}
	if (!err) {
		size = n->attr.size_bytes;
		*nread = 0;
		if (off_bytes < size) {
			*nread = (uint32_t)(size - off_bytes < count
						    ? size - off_bytes
						    : count);
		}
		memcpy(buf, n->data + (off_bytes < size ? off_bytes : 0),
		       *nread);
		*eof = off_bytes + *nread >= size;
	}
	pthread_mutex_unlock(&fs->lock);
	return err;
}

/* An injected "write" failure refuses the write before any byte lands; a
 * "sync" failure lands the bytes, then fails a stable write's sync. */
static int fake_write(struct store *st, struct store_obj *obj,
		      uint64_t off_bytes, const void *buf, uint32_t count,
		      enum store_stable stable, bool *sync_failed)
{
	struct fake_store *fs = fake_store__of(st);
	struct fake_node *n;
	int err;

	*sync_failed = false;
	pthread_mutex_lock(&fs->lock);
	n = fake_store__obj_node(obj);
	err = fake_store__injected(fs, "write");
	if (!err) {
		err = fake_store__check_reg(n);
	}
	if (!err && off_bytes + count > n->attr.size_bytes) {
		err = fake_set_size(n, off_bytes + count);
	}
	if (!err) {
		memcpy(n->data + off_bytes, buf, count);
		fake_touch(n);
		fs->last_stable = stable;
		fs->writes++;
	}
	if (!err && stable != STORE_UNSTABLE) {
		err = fake_store__injected(fs, "sync");
		*sync_failed = err != 0;
	}
	pthread_mutex_unlock(&fs->lock);
	return err;
}

/* An injected "commit" failure is a failed sync. */
static int fake_commit(struct store *st, struct store_obj *obj,
		       uint64_t off_bytes, uint32_t count, bool *sync_failed)
{
	struct fake_store *fs = fake_store__of(st);
	int err;

	(void)obj;
	(void)off_bytes;
	(void)count;
	pthread_mutex_lock(&fs->lock);
	err = fake_store__injected(fs, "commit");
	*sync_failed = err != 0;
	if (!err) {
		fs->commits++;
	}
	pthread_mutex_unlock(&fs->lock);
	return err;
}

static int fake_readdir(struct store *st, struct store_obj *dir,
			uint64_t cookie, store_readdir_fn cb, void *arg)
{
	struct fake_store *fs = fake_store__of(st);
	struct fake_node *d;
	int err, rc = 0;

	pthread_mutex_lock(&fs->lock);
	d = fake_store__obj_node(dir);
	err = fake_store__injected(fs, "readdir");
	if (!err && d->attr.type != STORE_DIR) {
		err = -ENOTDIR;
	}
	if (!err && cookie >= d->next_cookie) {
		err = -STORE_EBADCOOKIE;
	}
	if (err) {
		goto out;
	}
	if (cookie < 1) {
		rc = cb(arg, ".", d->fileid, 1);
	}
	if (rc == 0 && cookie < 2) {
		rc = cb(arg, "..", d->parent ? d->parent : d->fileid, 2);
	}
	for (size_t i = 0; rc == 0 && i < d->nents; i++) {
		if (d->ents[i].cookie > cookie) {
			rc = cb(arg, d->ents[i].name, d->ents[i].fileid,
				d->ents[i].cookie);
		}
	}
	err = rc < 0 ? rc : 0;
out:
	pthread_mutex_unlock(&fs->lock);
	return err;
}

static int fake_fsstat(struct store *st, struct store_fsstat *out)
{
	struct fake_store *fs = fake_store__of(st);
	int err;

	pthread_mutex_lock(&fs->lock);
	err = fake_store__injected(fs, "fsstat");
	if (!err) {
		out->total_bytes = 1ull << 40;
		out->free_bytes = 1ull << 39;
		out->avail_bytes = (1ull << 39) - 4096;
		out->total_files = 1000000;
		out->free_files = 1000000 - fs->nnodes;
		out->avail_files = out->free_files;
	}
	pthread_mutex_unlock(&fs->lock);
	return err;
}

static void fake_close(struct store *st)
{
	struct fake_store *fs = fake_store__of(st);

	for (size_t i = 0; i < fs->nnodes; i++) {
		free(fs->nodes[i]->data);
		free(fs->nodes[i]->target);
		free(fs->nodes[i]->ents);
		free(fs->nodes[i]);
	}
	free(fs->nodes);
	pthread_mutex_destroy(&fs->lock);
	free(fs);
}

static const struct store_ops fake_store_ops = {
	.resolve = fake_resolve,
	.obj_ref = fake_obj_ref,
	.obj_unref = fake_obj_unref,
	.obj_fh = fake_obj_fh,
	.root = fake_root,
	.getattr = fake_getattr,
	.setattr = fake_setattr,
	.lookup = fake_lookup,
	.readlink = fake_readlink,
	.read = fake_read,
	.write = fake_write,
	.commit = fake_commit,
	.create = fake_store__create,
	.mkdir = fake_store__mkdir,
	.symlink = fake_store__symlink,
	.mknod = fake_store__mknod,
	.remove = fake_store__remove,
	.rmdir = fake_store__rmdir,
	.rename = fake_store__rename,
	.link = fake_store__link,
	.readdir = fake_readdir,
	.fsstat = fake_fsstat,
	.close = fake_close,
};

int fake_store_new(const char *name, uint32_t export_id, uint32_t root_uid,
		   uint32_t root_gid, struct store **out)
{
	struct fake_store *fs = calloc(1, sizeof(*fs));
	struct store_cred owner = { .uid = root_uid, .gid = root_gid };

	if (!fs) {
		return -ENOMEM;
	}
	fs->base.ops = &fake_store_ops;
	snprintf(fs->base.name, sizeof(fs->base.name), "%s", name);
	fs->base.export_id = export_id;
	pthread_mutex_init(&fs->lock, NULL);
	if (!fake_store__node_new(fs, STORE_DIR, 0777, &owner)) {
		fake_close(&fs->base);
		return -ENOMEM;
	}
	*out = &fs->base;
	return 0;
}

int fake_store_refs(const struct store *st)
{
	return fake_store__of(st)->refs;
}

void fake_store_fail_next(struct store *st, const char *op, int err)
{
	struct fake_store *fs = fake_store__of(st);

	snprintf(fs->fail_op, sizeof(fs->fail_op), "%s", op);
	fs->fail_err = err;
}

enum store_stable fake_store_last_stable(const struct store *st)
{
	return fake_store__of(st)->last_stable;
}

unsigned fake_store_writes(const struct store *st)
{
	return fake_store__of(st)->writes;
}

unsigned fake_store_commits(const struct store *st)
{
	return fake_store__of(st)->commits;
}

unsigned fake_store_getattrs(const struct store *st)
{
	struct fake_store *fs = fake_store__of(st);
	unsigned n;

	pthread_mutex_lock(&fs->lock);
	n = fs->getattrs;
	pthread_mutex_unlock(&fs->lock);
	return n;
}
