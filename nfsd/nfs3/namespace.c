// SPDX-License-Identifier: Apache-2.0
/*
 * namespace: the procedures that add or remove directory entries: CREATE,
 * MKDIR, SYMLINK, MKNOD, REMOVE, RMDIR, RENAME, LINK (RFC 1813 3.3.8 to
 * 3.3.15).  Every one answers the directory's wcc_data, on failure too.
 * Entries change only within one export: RENAME and LINK across exports
 * are NFS3ERR_XDEV.  The store takes the squashed caller for ownership;
 * the permission checks are ours (access.c).
 */
#include <errno.h>
#include <string.h>

#include "nfsd/nfs3/nfs3_int.h"

/* What the create family answers (CREATE3resok and its three twins). */
struct nfs3_new_obj {
	post_op_fh3 obj;
	post_op_attr attr;
	wcc_data dir_wcc;
};

/*
 * Resolves the directory of @where for a change, fills wcc->before and
 * *pre, and checks the name for @use and the caller's right to change the
 * directory.  dir->obj returns owned even on failure (release it).
 */
static int nfs3_dir_open(struct request *req, const diropargs3 *where,
			 enum nfs3_name_use use, struct nfs3_file *dir,
			 struct store_attr *pre, wcc_data *wcc)
{
	int err;

	err = nfs3__fh_resolve(req, &where->dir, true, dir);
	nfs3__hint_name(req, where->name);
	if (err) {
		return err;
	}
	err = nfs3__wcc_pre(dir, pre, wcc);
	if (err) {
		return err;
	}
	if (pre->type != STORE_DIR) {
		return -ENOTDIR;
	}
	err = nfs3__name_check(where->name, use);
	if (err) {
		return err;
	}
	if (nfs3__name_is_snapdir(dir, pre, where->name)) {
		return -EACCES; /* the server's own */
	}
	return nfs3__may_change_dir(pre, &dir->cred);
}

/* In a sticky directory only root, the directory's owner or the entry's
 * owner may remove or replace the entry @name (absent entries pass). */
static int nfs3_sticky_check(const struct nfs3_file *dir,
			     const struct store_attr *dir_attr,
			     const char *name)
{
	struct store_obj *victim;
	struct store_attr va;
	int err;

	if (nfs3__may_unlink_sticky(dir_attr, dir_attr, &dir->cred) == 0) {
		return 0;
	}
	err = store_lookup(dir->st, dir->obj, name, &victim);
	if (err) {
		return err == -ENOENT ? 0 : err;
	}
	err = store_getattr(dir->st, victim, &va);
	store_obj_unref(dir->st, victim);
	if (err) {
		return err;
	}
	return nfs3__may_unlink_sticky(dir_attr, &va, &dir->cred);
}

/* The attributes a new file gets: only root may give it away. */
static int nfs3_new_sattr(const sattr3 *in, const struct store_cred *cred,
			  struct store_sattr *out)
{
	struct store_attr owner = {
		.type = STORE_REG,
		.mode = 0600,
		.uid = cred->uid,
		.gid = cred->gid,
	};
	int err;

	err = nfs3__sattr_to_store(in, out);
	if (err) {
		return err;
	}
	return nfs3__may_setattr(&owner, out, cred);
}

/* Finishes a create: takes @obj (may be NULL), fills n->obj and n->attr
 * when @err is 0 (either may be left out, as the RFC allows) and the
 * directory's post-op attributes; counts what the new object and the
 * directory (@dir_pre, set when @err is 0) now allocate. */
static void nfs3_new_finish(const struct nfs3_file *dir,
			    const struct store_attr *dir_pre,
			    struct store_obj *obj, int err,
			    struct nfs3_new_obj *n)
{
	struct store_attr a;

	if (!err && obj) {
		if (nfs3__fh_dup(dir->st, obj, &n->obj.post_op_fh3_u.handle) ==
		    0) {
			n->obj.handle_follows = TRUE;
		}
		if (store_getattr(dir->st, obj, &a) == 0) {
			nfs3__post_op_from_attr(&a, &n->attr);
			nfs3__usage_note(dir, obj, a.fileid);
		}
	}
	if (!err) {
		nfs3__usage_note(dir, dir->obj, dir_pre->fileid);
	}
	if (obj) {
		store_obj_unref(dir->st, obj);
	}
	nfs3__wcc_post(dir, &n->dir_wcc);
}

static void nfs3_new_free(post_op_fh3 *obj)
{
	if (obj->handle_follows) {
		nfs3__fh_free(&obj->post_op_fh3_u.handle);
	}
	obj->handle_follows = FALSE;
}

/* Makes the new object named by the procedure's arguments @argp in the
 * directory @dir, which it borrows; *obj returns owned on success. */
typedef int nfs3_new_make_fn(const void *argp, struct nfs3_file *dir,
			     struct store_obj **obj);

/*
 * The create family's common course: opens the directory of @where, lets
 * @make add the object there and fills *n (zeroed first) with its handle,
 * attributes and the directory's wcc_data, on failure too.  Returns 0 or
 * -errno, for the caller's status.
 */
static int nfs3_new_obj_make(struct request *req, const diropargs3 *where,
			     nfs3_new_make_fn *make, const void *argp,
			     struct nfs3_new_obj *n)
{
	struct store_obj *obj = NULL;
	struct nfs3_file dir;
	struct store_attr pre;
	int err;

	memset(n, 0, sizeof(*n));
	err = nfs3_dir_open(req, where, NFS3_NAME_CREATE, &dir, &pre,
			    &n->dir_wcc);
	if (!err) {
		err = make(argp, &dir, &obj);
	}
	nfs3_new_finish(&dir, &pre, obj, err, n);
	nfs3__file_release(&dir);
	return err;
}

static int nfs3_create_run(const void *argp, struct nfs3_file *dir,
			   struct store_obj **obj)
{
	static const uint8_t no_verf[NFS3_CREATEVERFSIZE];
	const CREATE3args *args = argp;
	const createhow3 *how = &args->how;
	const uint8_t *verf = no_verf;
	struct store_sattr sa;
	int err;

	memset(&sa, 0, sizeof(sa));
	switch (how->mode) {
	case UNCHECKED:
	case GUARDED:
		err = nfs3_new_sattr(&how->createhow3_u.obj_attributes,
				     &dir->cred, &sa);
		if (err) {
			return err;
		}
		break;
	case EXCLUSIVE:
		/* The verifier is kept with the file by the store; the client
		 * sets the attributes with SETATTR afterwards. */
		verf = (const uint8_t *)how->createhow3_u.verf;
		break;
	default:
		return -EINVAL;
	}
	return store_create(dir->st, dir->obj, args->where.name,
			    (enum store_create_how)how->mode, &sa, verf,
			    &dir->cred, obj);
}

enum rpc_disposition nfs3__proc_create(struct request *req, const void *argp,
				       void *resp)
{
	const CREATE3args *args = argp;
	CREATE3res *res = resp;
	struct nfs3_new_obj n;
	int err;

	err = nfs3_new_obj_make(req, &args->where, nfs3_create_run, argp, &n);
	res->status = nfs3__status_from_errno(err);
	if (res->status == NFS3_OK) {
		res->CREATE3res_u.resok.obj = n.obj;
		res->CREATE3res_u.resok.obj_attributes = n.attr;
		res->CREATE3res_u.resok.dir_wcc = n.dir_wcc;
	} else {
		res->CREATE3res_u.resfail.dir_wcc = n.dir_wcc;
	}
	return RPC_REPLY;
}

static int nfs3_mkdir_run(const void *argp, struct nfs3_file *dir,
			  struct store_obj **obj)
{
	const MKDIR3args *args = argp;
	struct store_sattr sa;
	int err;

	err = nfs3_new_sattr(&args->attributes, &dir->cred, &sa);
	if (err) {
		return err;
	}
	sa.set_size = false; /* a directory has no size to set */
	return store_mkdir(dir->st, dir->obj, args->where.name, &sa, &dir->cred,
			   obj);
}

enum rpc_disposition nfs3__proc_mkdir(struct request *req, const void *argp,
				      void *resp)
{
	const MKDIR3args *args = argp;
	MKDIR3res *res = resp;
	struct nfs3_new_obj n;
	int err;

	err = nfs3_new_obj_make(req, &args->where, nfs3_mkdir_run, argp, &n);
	res->status = nfs3__status_from_errno(err);
	if (res->status == NFS3_OK) {
		res->MKDIR3res_u.resok.obj = n.obj;
		res->MKDIR3res_u.resok.obj_attributes = n.attr;
		res->MKDIR3res_u.resok.dir_wcc = n.dir_wcc;
	} else {
		res->MKDIR3res_u.resfail.dir_wcc = n.dir_wcc;
	}
	return RPC_REPLY;
}

static int nfs3_symlink_run(const void *argp, struct nfs3_file *dir,
			    struct store_obj **obj)
{
	const SYMLINK3args *args = argp;
	const char *target = args->symlink.symlink_data;
	struct store_sattr sa;
	int err;

	/* An empty target names nothing: INVAL (the VFS says ENOENT, which
	 * would read as "the directory is gone"). */
	if (!target || target[0] == '\0') {
		return -EINVAL;
	}
	if (strnlen(target, STORE_PATH_MAX + 1) > STORE_PATH_MAX) {
		return -ENAMETOOLONG;
	}
	err = nfs3_new_sattr(&args->symlink.symlink_attributes, &dir->cred,
			     &sa);
	if (err) {
		return err;
	}
	sa.set_size = false;
	return store_symlink(dir->st, dir->obj, args->where.name, target, &sa,
			     &dir->cred, obj);
}

enum rpc_disposition nfs3__proc_symlink(struct request *req, const void *argp,
					void *resp)
{
	const SYMLINK3args *args = argp;
	SYMLINK3res *res = resp;
	struct nfs3_new_obj n;
	int err;

	err = nfs3_new_obj_make(req, &args->where, nfs3_symlink_run, argp, &n);
	res->status = nfs3__status_from_errno(err);
	if (res->status == NFS3_OK) {
		res->SYMLINK3res_u.resok.obj = n.obj;
		res->SYMLINK3res_u.resok.obj_attributes = n.attr;
		res->SYMLINK3res_u.resok.dir_wcc = n.dir_wcc;
	} else {
		res->SYMLINK3res_u.resfail.dir_wcc = n.dir_wcc;
	}
	return RPC_REPLY;
}

static int nfs3_mknod_run(const void *argp, struct nfs3_file *dir,
			  struct store_obj **obj)
{
	const MKNOD3args *args = argp;
	const mknoddata3 *what = &args->what;
	uint32_t major = 0, minor = 0;
	const sattr3 *attrs;
	struct store_sattr sa;
	int err;

	switch (what->type) {
	case NF3CHR:
	case NF3BLK:
		/* As knfsd (vfs_mknod needs CAP_MKNOD): a device node is
		 * root's to make, after squashing; a device file in a
		 * datastore would open the server's disks to the client
		 * (and to the admin API's VAAI copies). */
		if (dir->cred.uid != 0) {
			return -EPERM;
		}
		attrs = &what->mknoddata3_u.device.dev_attributes;
		major = what->mknoddata3_u.device.spec.specdata1;
		minor = what->mknoddata3_u.device.spec.specdata2;
		break;
	case NF3SOCK:
	case NF3FIFO:
		attrs = &what->mknoddata3_u.pipe_attributes;
		break;
	default:
		/* Regular files, directories and links have their own
		 * procedures (RFC 1813 3.3.11). */
		return -STORE_EBADTYPE;
	}
	err = nfs3_new_sattr(attrs, &dir->cred, &sa);
	if (err) {
		return err;
	}
	sa.set_size = false;
	return store_mknod(dir->st, dir->obj, args->where.name,
			   (enum store_ftype)what->type, major, minor, &sa,
			   &dir->cred, obj);
}

enum rpc_disposition nfs3__proc_mknod(struct request *req, const void *argp,
				      void *resp)
{
	const MKNOD3args *args = argp;
	MKNOD3res *res = resp;
	struct nfs3_new_obj n;
	int err;

	err = nfs3_new_obj_make(req, &args->where, nfs3_mknod_run, argp, &n);
	res->status = nfs3__status_from_errno(err);
	if (res->status == NFS3_OK) {
		res->MKNOD3res_u.resok.obj = n.obj;
		res->MKNOD3res_u.resok.obj_attributes = n.attr;
		res->MKNOD3res_u.resok.dir_wcc = n.dir_wcc;
	} else {
		res->MKNOD3res_u.resfail.dir_wcc = n.dir_wcc;
	}
	return RPC_REPLY;
}

void nfs3__create_release(struct request *req, void *resp)
{
	CREATE3res *res = resp;

	(void)req;
	if (res->status == NFS3_OK) {
		nfs3_new_free(&res->CREATE3res_u.resok.obj);
	}
}

void nfs3__mkdir_release(struct request *req, void *resp)
{
	MKDIR3res *res = resp;

	(void)req;
	if (res->status == NFS3_OK) {
		nfs3_new_free(&res->MKDIR3res_u.resok.obj);
	}
}

void nfs3__symlink_release(struct request *req, void *resp)
{
	SYMLINK3res *res = resp;

	(void)req;
	if (res->status == NFS3_OK) {
		nfs3_new_free(&res->SYMLINK3res_u.resok.obj);
	}
}

void nfs3__mknod_release(struct request *req, void *resp)
{
	MKNOD3res *res = resp;

	(void)req;
	if (res->status == NFS3_OK) {
		nfs3_new_free(&res->MKNOD3res_u.resok.obj);
	}
}

/* REMOVE and RMDIR: @rmdir picks the store op.  Fills *wcc. */
static int nfs3_unlink_run(struct request *req, const diropargs3 *what,
			   bool rmdir, wcc_data *wcc)
{
	struct nfs3_victim victim;
	struct nfs3_file dir;
	struct store_attr pre;
	int err;

	err = nfs3_dir_open(req, what, NFS3_NAME_REMOVE, &dir, &pre, wcc);
	if (!err) {
		err = nfs3_sticky_check(&dir, &pre, what->name);
	}
	if (!err) {
		nfs3__usage_victim(&dir, what->name, &victim);
	}
	if (!err && rmdir) {
		err = store_rmdir(dir.st, dir.obj, what->name);
	} else if (!err) {
		err = store_remove(dir.st, dir.obj, what->name);
	}
	if (!err) {
		nfs3__usage_gone(&dir, &victim);
		nfs3__usage_note(&dir, dir.obj, pre.fileid);
	}
	nfs3__wcc_post(&dir, wcc);
	nfs3__file_release(&dir);
	return err;
}

enum rpc_disposition nfs3__proc_remove(struct request *req, const void *argp,
				       void *resp)
{
	const REMOVE3args *args = argp;
	REMOVE3res *res = resp;
	wcc_data wcc;
	int err;

	memset(&wcc, 0, sizeof(wcc));
	err = nfs3_unlink_run(req, &args->object, false, &wcc);
	res->status = nfs3__status_from_errno(err);
	if (res->status == NFS3_OK) {
		res->REMOVE3res_u.resok.dir_wcc = wcc;
	} else {
		res->REMOVE3res_u.resfail.dir_wcc = wcc;
	}
	return RPC_REPLY;
}

enum rpc_disposition nfs3__proc_rmdir(struct request *req, const void *argp,
				      void *resp)
{
	const RMDIR3args *args = argp;
	RMDIR3res *res = resp;
	wcc_data wcc;
	int err;

	memset(&wcc, 0, sizeof(wcc));
	err = nfs3_unlink_run(req, &args->object, true, &wcc);
	res->status = nfs3__status_from_errno(err);
	if (res->status == NFS3_OK) {
		res->RMDIR3res_u.resok.dir_wcc = wcc;
	} else {
		res->RMDIR3res_u.resfail.dir_wcc = wcc;
	}
	return RPC_REPLY;
}

static int nfs3_rename_run(struct request *req, const RENAME3args *args,
			   struct nfs3_file *from, struct nfs3_file *to,
			   wcc_data *from_wcc, wcc_data *to_wcc)
{
	struct store_attr from_pre, to_pre;
	struct nfs3_victim victim;
	int err;

	err = nfs3_dir_open(req, &args->from, NFS3_NAME_REMOVE, from, &from_pre,
			    from_wcc);
	if (err) {
		return err;
	}
	err = nfs3_dir_open(req, &args->to, NFS3_NAME_REMOVE, to, &to_pre,
			    to_wcc);
	if (err) {
		return err;
	}
	if (from->exp != to->exp) {
		return -EXDEV;
	}
	err = nfs3_sticky_check(from, &from_pre, args->from.name);
	if (err) {
		return err;
	}
	err = nfs3_sticky_check(to, &to_pre, args->to.name);
	if (err) {
		return err;
	}
	/* Renaming over a file unlinks it. */
	nfs3__usage_victim(to, args->to.name, &victim);
	err = store_rename(from->st, from->obj, args->from.name, to->obj,
			   args->to.name);
	if (err) {
		return err;
	}
	nfs3__usage_gone(to, &victim);
	nfs3__usage_note(from, from->obj, from_pre.fileid);
	if (to->obj != from->obj) {
		nfs3__usage_note(to, to->obj, to_pre.fileid);
	}
	return 0;
}

enum rpc_disposition nfs3__proc_rename(struct request *req, const void *argp,
				       void *resp)
{
	const RENAME3args *args = argp;
	RENAME3res *res = resp;
	struct nfs3_file from, to;
	wcc_data from_wcc, to_wcc;
	int err;

	memset(&from, 0, sizeof(from));
	memset(&to, 0, sizeof(to));
	memset(&from_wcc, 0, sizeof(from_wcc));
	memset(&to_wcc, 0, sizeof(to_wcc));
	err = nfs3_rename_run(req, args, &from, &to, &from_wcc, &to_wcc);
	nfs3__hint_name(req, args->from.name);
	nfs3__wcc_post(&from, &from_wcc);
	nfs3__wcc_post(&to, &to_wcc);
	res->status = nfs3__status_from_errno(err);
	if (res->status == NFS3_OK) {
		res->RENAME3res_u.resok.fromdir_wcc = from_wcc;
		res->RENAME3res_u.resok.todir_wcc = to_wcc;
	} else {
		res->RENAME3res_u.resfail.fromdir_wcc = from_wcc;
		res->RENAME3res_u.resfail.todir_wcc = to_wcc;
	}
	nfs3__file_release(&to);
	nfs3__file_release(&from);
	return RPC_REPLY;
}

static int nfs3_link_run(struct request *req, const LINK3args *args,
			 struct nfs3_file *f, struct nfs3_file *dir,
			 wcc_data *wcc)
{
	struct store_attr pre;
	int err;

	err = nfs3__fh_resolve(req, &args->file, true, f);
	if (err) {
		return err;
	}
	err = nfs3_dir_open(req, &args->link, NFS3_NAME_CREATE, dir, &pre, wcc);
	if (err) {
		return err;
	}
	if (f->exp != dir->exp) {
		return -EXDEV;
	}
	err = store_link(f->st, f->obj, dir->obj, args->link.name);
	if (!err) {
		nfs3__usage_note(dir, dir->obj, pre.fileid);
	}
	return err;
}

enum rpc_disposition nfs3__proc_link(struct request *req, const void *argp,
				     void *resp)
{
	const LINK3args *args = argp;
	LINK3res *res = resp;
	struct nfs3_file f, dir;
	post_op_attr file_attr;
	wcc_data wcc;
	int err;

	memset(&f, 0, sizeof(f));
	memset(&dir, 0, sizeof(dir));
	memset(&wcc, 0, sizeof(wcc));
	err = nfs3_link_run(req, args, &f, &dir, &wcc);
	nfs3__post_op_fill(&f, &file_attr);
	nfs3__wcc_post(&dir, &wcc);
	res->status = nfs3__status_from_errno(err);
	if (res->status == NFS3_OK) {
		res->LINK3res_u.resok.file_attributes = file_attr;
		res->LINK3res_u.resok.linkdir_wcc = wcc;
	} else {
		res->LINK3res_u.resfail.file_attributes = file_attr;
		res->LINK3res_u.resfail.linkdir_wcc = wcc;
	}
	nfs3__file_release(&dir);
	nfs3__file_release(&f);
	return RPC_REPLY;
}
