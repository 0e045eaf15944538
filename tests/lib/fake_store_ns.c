// SPDX-License-Identifier: Apache-2.0
/*
 * fake_store_ns: the namespace ops of the fake store (create, mkdir,
 * symlink, mknod, remove, rmdir, rename, link) with the rename(2) and
 * unlink(2) rules a POSIX directory has.
 */
#include "tests/lib/fake_store_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * The common start of every op that adds @name to @dir: the injected
 * failure, a directory, a free name.  With the lock held.
 */
static int fake_add_check(struct fake_store *fs, const char *op,
			  struct fake_node *dir, const char *name)
{
	int err = fake_store__injected(fs, op);

	if (err) {
		return err;
	}
	if (dir->attr.type != STORE_DIR) {
		return -ENOTDIR;
	}
	if (strlen(name) > STORE_NAME_MAX) {
		return -ENAMETOOLONG;
	}
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
	    fake_store__dir_find(dir, name)) {
		return -EEXIST;
	}
	return 0;
}

/* Makes a node of @type named @name in @dir; *out returns owned. */
static int fake_add_node(struct fake_store *fs, struct fake_node *dir,
			 const char *name, enum store_ftype type, uint32_t mode,
			 const struct store_sattr *sattr,
			 const struct store_cred *cred, struct fake_node **node,
			 struct store_obj **out)
{
	struct fake_node *n = fake_store__node_new(fs, type, mode, cred);
	int err;

	if (!n) {
		return -ENOMEM;
	}
	n->parent = dir->fileid;
	err = sattr ? fake_store__apply_sattr(n, sattr) : 0;
	if (!err) {
		err = fake_store__dir_add(dir, name, n->fileid);
	}
	if (err) {
		n->gone = true;
		return err;
	}
	if (type == STORE_DIR) {
		dir->attr.nlink++;
	}
	*node = n;
	return fake_store__obj_new(fs, n->fileid, out);
}

/* CREATE of a name that exists: a retried EXCLUSIVE with the same
 * verifier and UNCHECKED of a regular file succeed (the latter applying
 * @sattr); all else is -EEXIST. */
static int fake_create_existing(struct fake_store *fs, struct fake_node *n,
				enum store_create_how how,
				const struct store_sattr *sattr,
				const uint8_t verf[8], struct store_obj **out)
{
	int err;

	if (how == STORE_CREATE_EXCLUSIVE && n->has_verf &&
	    memcmp(n->verf, verf, 8) == 0) {
		return fake_store__obj_new(fs, n->fileid, out);
	}
	if (how != STORE_CREATE_UNCHECKED) {
		return -EEXIST;
	}
	err = fake_store__check_reg(n);
	if (!err) {
		err = fake_store__apply_sattr(n, sattr);
	}
	if (!err) {
		err = fake_store__obj_new(fs, n->fileid, out);
	}
	return err;
}

int fake_store__create(struct store *st, struct store_obj *dir,
		       const char *name, enum store_create_how how,
		       const struct store_sattr *sattr, const uint8_t verf[8],
		       const struct store_cred *cred, struct store_obj **out)
{
	struct fake_store *fs = fake_store__of(st);
	struct fake_node *d, *n;
	struct fake_dirent *e;
	int err;

	pthread_mutex_lock(&fs->lock);
	d = fake_store__obj_node(dir);
	err = fake_add_check(fs, "create", d, name);
	e = err == -EEXIST ? fake_store__dir_find(d, name) : NULL;
	if (e) {
		err = fake_create_existing(fs,
					   fake_store__node_get(fs, e->fileid),
					   how, sattr, verf, out);
		goto out;
	}
	if (err) {
		goto out;
	}
	err = fake_add_node(fs, d, name, STORE_REG, 0644,
			    how == STORE_CREATE_EXCLUSIVE ? NULL : sattr, cred,
			    &n, out);
	if (!err && how == STORE_CREATE_EXCLUSIVE) {
		n->has_verf = true;
		memcpy(n->verf, verf, 8);
	}
out:
	pthread_mutex_unlock(&fs->lock);
	return err;
}

int fake_store__mkdir(struct store *st, struct store_obj *dir, const char *name,
		      const struct store_sattr *sattr,
		      const struct store_cred *cred, struct store_obj **out)
{
	struct fake_store *fs = fake_store__of(st);
	struct fake_node *d, *n;
	int err;

	pthread_mutex_lock(&fs->lock);
	d = fake_store__obj_node(dir);
	err = fake_add_check(fs, "mkdir", d, name);
	if (!err) {
		err = fake_add_node(fs, d, name, STORE_DIR, 0755, sattr, cred,
				    &n, out);
	}
	pthread_mutex_unlock(&fs->lock);
	return err;
}

int fake_store__symlink(struct store *st, struct store_obj *dir,
			const char *name, const char *target,
			const struct store_sattr *sattr,
			const struct store_cred *cred, struct store_obj **out)
{
	struct fake_store *fs = fake_store__of(st);
	struct fake_node *d, *n;
	char *copy = strdup(target);
	int err;

	if (!copy) {
		return -ENOMEM;
	}
	pthread_mutex_lock(&fs->lock);
	d = fake_store__obj_node(dir);
	err = fake_add_check(fs, "symlink", d, name);
	if (!err) {
		err = fake_add_node(fs, d, name, STORE_LNK, 0777, sattr, cred,
				    &n, out);
	}
	if (!err) {
		n->target = copy;
		n->attr.size_bytes = strlen(copy);
		copy = NULL;
	}
	pthread_mutex_unlock(&fs->lock);
	free(copy);
	return err;
}

int fake_store__mknod(struct store *st, struct store_obj *dir, const char *name,
		      enum store_ftype type, uint32_t rdev_major,
		      uint32_t rdev_minor, const struct store_sattr *sattr,
		      const struct store_cred *cred, struct store_obj **out)
{
	struct fake_store *fs = fake_store__of(st);
	struct fake_node *d, *n;
	int err;

	if (type != STORE_CHR && type != STORE_BLK && type != STORE_SOCK &&
	    type != STORE_FIFO) {
		return -STORE_EBADTYPE;
	}
	pthread_mutex_lock(&fs->lock);
	d = fake_store__obj_node(dir);
	err = fake_add_check(fs, "mknod", d, name);
	if (!err) {
		err = fake_add_node(fs, d, name, type, 0644, sattr, cred, &n,
				    out);
	}
	if (!err) {
		n->attr.rdev_major = rdev_major;
		n->attr.rdev_minor = rdev_minor;
	}
	pthread_mutex_unlock(&fs->lock);
	return err;
}

/* Finds @name in directory @d for removal; with the lock held. */
static int fake_find_victim(struct fake_store *fs, const char *op,
			    struct fake_node *d, const char *name,
			    struct fake_dirent **e, struct fake_node **n)
{
	int err = fake_store__injected(fs, op);

	if (err) {
		return err;
	}
	if (d->attr.type != STORE_DIR) {
		return -ENOTDIR;
	}
	*e = fake_store__dir_find(d, name);
	if (!*e) {
		return -ENOENT;
	}
	*n = fake_store__node_get(fs, (*e)->fileid);
	return 0;
}

int fake_store__remove(struct store *st, struct store_obj *dir,
		       const char *name)
{
	struct fake_store *fs = fake_store__of(st);
	struct fake_dirent *e;
	struct fake_node *d, *n;
	int err;

	pthread_mutex_lock(&fs->lock);
	d = fake_store__obj_node(dir);
	err = fake_find_victim(fs, "remove", d, name, &e, &n);
	if (!err && n->attr.type == STORE_DIR) {
		err = -EISDIR;
	}
	if (!err) {
		fake_store__dir_del(d, e);
		fake_store__unlink_node(n);
	}
	pthread_mutex_unlock(&fs->lock);
	return err;
}

int fake_store__rmdir(struct store *st, struct store_obj *dir, const char *name)
{
	struct fake_store *fs = fake_store__of(st);
	struct fake_dirent *e;
	struct fake_node *d, *n;
	int err;

	pthread_mutex_lock(&fs->lock);
	d = fake_store__obj_node(dir);
	err = fake_find_victim(fs, "rmdir", d, name, &e, &n);
	if (!err && n->attr.type != STORE_DIR) {
		err = -ENOTDIR;
	}
	if (!err && n->nents > 0) {
		err = -ENOTEMPTY;
	}
	if (!err) {
		fake_store__dir_del(d, e);
		fake_store__unlink_node(n);
		d->attr.nlink--;
	}
	pthread_mutex_unlock(&fs->lock);
	return err;
}

/* True when directory @anc is @fileid or one of its ancestors. */
static bool fake_is_ancestor(struct fake_store *fs, uint64_t anc,
			     uint64_t fileid)
{
	for (struct fake_node *n = fake_store__node_get(fs, fileid); n;
	     n = n->parent ? fake_store__node_get(fs, n->parent) : NULL) {
		if (n->fileid == anc) {
			return true;
		}
	}
	return false;
}

/* Can @src replace @dst (rename(2) rules)?  With the lock held. */
static int fake_rename_check(struct fake_node *src, struct fake_node *dst)
{
	if (src->attr.type == STORE_DIR && dst->attr.type != STORE_DIR) {
		return -ENOTDIR;
	}
	if (src->attr.type != STORE_DIR && dst->attr.type == STORE_DIR) {
		return -EISDIR;
	}
	if (dst->attr.type == STORE_DIR && dst->nents > 0) {
		return -ENOTEMPTY;
	}
	return 0;
}

int fake_store__rename(struct store *st, struct store_obj *from_dir,
		       const char *from_name, struct store_obj *to_dir,
		       const char *to_name)
{
	struct fake_store *fs = fake_store__of(st);
	struct fake_node *fd, *td, *src, *dst;
	struct fake_dirent *e, *te;
	uint64_t fileid;
	int err;

	pthread_mutex_lock(&fs->lock);
	fd = fake_store__obj_node(from_dir);
	td = fake_store__obj_node(to_dir);
	err = fake_find_victim(fs, "rename", fd, from_name, &e, &src);
	if (!err && td->attr.type != STORE_DIR) {
		err = -ENOTDIR;
	}
	if (!err && src->attr.type == STORE_DIR &&
	    fake_is_ancestor(fs, src->fileid, td->fileid)) {
		err = -EINVAL;
	}
	if (err) {
		goto out;
	}
	te = fake_store__dir_find(td, to_name);
	if (te && te->fileid == src->fileid) {
		goto out;
	}
	if (te) {
		dst = fake_store__node_get(fs, te->fileid);
		err = fake_rename_check(src, dst);
		if (err) {
			goto out;
		}
		fake_store__dir_del(td, te);
		fake_store__unlink_node(dst);
		if (dst->attr.type == STORE_DIR) {
			td->attr.nlink--;
		}
	}
	fileid = src->fileid;
	fake_store__dir_del(fd, fake_store__dir_find(fd, from_name));
	err = fake_store__dir_add(td, to_name, fileid);
	if (!err && src->attr.type == STORE_DIR) {
		src->parent = td->fileid;
		fd->attr.nlink--;
		td->attr.nlink++;
	}
	fake_store__now(&src->attr.ctime);
out:
	pthread_mutex_unlock(&fs->lock);
	return err;
}

int fake_store__link(struct store *st, struct store_obj *obj,
		     struct store_obj *dir, const char *name)
{
	struct fake_store *fs = fake_store__of(st);
	struct fake_node *n, *d;
	int err;

	pthread_mutex_lock(&fs->lock);
	n = fake_store__obj_node(obj);
	d = fake_store__obj_node(dir);
	err = fake_add_check(fs, "link", d, name);
	if (!err && n->attr.type == STORE_DIR) {
		err = -EPERM;
	}
	if (!err) {
		err = fake_store__dir_add(d, name, n->fileid);
	}
	if (!err) {
		n->attr.nlink++;
		fake_store__now(&n->attr.ctime);
	}
	pthread_mutex_unlock(&fs->lock);
	return err;
}
