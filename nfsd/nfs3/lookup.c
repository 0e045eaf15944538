// SPDX-License-Identifier: Apache-2.0
/*
 * lookup: the procedures that read or set one file's attributes or find
 * it by name: GETATTR, SETATTR, LOOKUP, ACCESS, READLINK (RFC 1813 3.3.1
 * to 3.3.5).  All run on the loop: each is a few store calls on one file.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/nfs3/nfs3_int.h"

enum rpc_disposition nfs3__proc_getattr(struct request *req, const void *argp,
					void *resp)
{
	const GETATTR3args *args = argp;
	GETATTR3res *res = resp;
	struct nfs3_file f;
	struct store_attr a;
	int err;

	err = nfs3__fh_resolve_attr(req, &args->object, false, &f, &a);
	if (!err) {
		nfs3__fattr_from_store(
			&a, &res->GETATTR3res_u.resok.obj_attributes);
	}
	res->status = nfs3__status_from_errno(err);
	nfs3__file_release(&f);
	return RPC_REPLY;
}

/* The guard compares what the client saw, i.e. ctime as sent on the wire. */
static bool nfs3_ctime_matches(const nfstime3 *guard, const struct timespec *ts)
{
	return guard->seconds == (uint32)ts->tv_sec &&
	       guard->nseconds == (uint32)ts->tv_nsec;
}

static int nfs3_setattr_run(const SETATTR3args *args, struct nfs3_file *f,
			    wcc_data *wcc)
{
	struct store_sattr sa;
	struct store_attr pre;
	int err;

	err = nfs3__wcc_pre(f, &pre, wcc);
	if (err) {
		return err;
	}
	err = nfs3__sattr_to_store(&args->new_attributes, &sa);
	if (err) {
		return err;
	}
	if (args->guard.check &&
	    !nfs3_ctime_matches(&args->guard.sattrguard3_u.obj_ctime,
				&pre.ctime)) {
		return -STORE_ENOTSYNC;
	}
	err = nfs3__may_setattr(&pre, &sa, &f->cred);
	if (err) {
		return err;
	}
	if (sa.set_size && pre.type == STORE_DIR) {
		return -EISDIR;
	}
	if (sa.set_size && pre.type != STORE_REG) {
		return -EINVAL;
	}
	if (sa.set_size && sa.size_bytes > store_max_file_bytes(f->st)) {
		return -EFBIG;
	}
	err = store_setattr(f->st, f->obj, &sa, &f->cred);
	/* A size change allocates nothing when it grows (the new part is a
	 * hole) but frees what a shrink cuts off. */
	if (sa.set_size) {
		nfs3__usage_note(f, f->obj, pre.fileid);
	}
	return err;
}

enum rpc_disposition nfs3__proc_setattr(struct request *req, const void *argp,
					void *resp)
{
	const SETATTR3args *args = argp;
	SETATTR3res *res = resp;
	struct nfs3_file f;
	wcc_data wcc;
	int err;

	memset(&wcc, 0, sizeof(wcc));
	err = nfs3__fh_resolve(req, &args->object, true, &f);
	if (!err) {
		err = nfs3_setattr_run(args, &f, &wcc);
	}
	nfs3__wcc_post(&f, &wcc);
	res->status = nfs3__status_from_errno(err);
	if (res->status == NFS3_OK) {
		res->SETATTR3res_u.resok.obj_wcc = wcc;
	} else {
		res->SETATTR3res_u.resfail.obj_wcc = wcc;
	}
	nfs3__file_release(&f);
	return RPC_REPLY;
}

/* LOOKUP once the directory is resolved: fills ok (handle and attributes,
 * the handle returns owned in ok->object) and *dir_attr. */
static int nfs3_lookup_run(const char *name, struct nfs3_file *dir,
			   LOOKUP3resok *ok, char fh_room[NFS3_FHSIZE],
			   struct store_attr *dir_attr, bool *have_dir_attr)
{
	struct store_obj *obj = NULL;
	struct store_attr a;
	int err;

	err = nfs3__getattr(dir, dir_attr);
	if (err) {
		return err;
	}
	*have_dir_attr = true;
	if (dir_attr->type != STORE_DIR) {
		return -ENOTDIR;
	}
	err = nfs3__name_check(name, NFS3_NAME_LOOKUP);
	if (err) {
		return err;
	}
	if (!dir->snapshot_dir && nfs3__name_is_snapdir(dir, dir_attr, name)) {
		return -ENOENT;
	}
	err = nfs3__may_lookup(dir_attr, &dir->cred);
	if (err) {
		return err;
	}
	err = nfs3__name_lookup(dir, name, &obj);
	if (err) {
		return err;
	}
	nfs3__fh_set(dir->st, obj, fh_room, &ok->object);
	if (store_getattr(dir->st, obj, &a) == 0) {
		nfs3__post_op_from_attr(&a, &ok->obj_attributes);
	}
	/* A lookup changes nothing in the directory: its attributes from
	 * before are its attributes after. */
	nfs3__post_op_from_attr(dir_attr, &ok->dir_attributes);
	store_obj_unref(dir->st, obj);
	return 0;
}

enum rpc_disposition nfs3__proc_lookup(struct request *req, const void *argp,
				       void *resp)
{
	const LOOKUP3args *args = argp;
	struct nfs3_lookup_res *lres = resp;
	LOOKUP3res *res = &lres->r;
	LOOKUP3resok ok;
	struct nfs3_file dir;
	struct store_attr dir_attr;
	bool have_dir_attr = false;
	int err;

	memset(&ok, 0, sizeof(ok));
	err = nfs3__fh_resolve(req, &args->what.dir, false, &dir);
	nfs3__hint_name(req, args->what.name);
	if (!err) {
		err = nfs3_lookup_run(args->what.name, &dir, &ok, lres->fh,
				      &dir_attr, &have_dir_attr);
	}
	res->status = nfs3__status_from_errno(err);
	if (res->status == NFS3_OK) {
		res->LOOKUP3res_u.resok = ok;
	} else {
		memset(&res->LOOKUP3res_u.resfail, 0,
		       sizeof(res->LOOKUP3res_u.resfail));
		if (have_dir_attr) {
			nfs3__post_op_from_attr(
				&dir_attr,
				&res->LOOKUP3res_u.resfail.dir_attributes);
		}
	}
	nfs3__file_release(&dir);
	return RPC_REPLY;
}

enum rpc_disposition nfs3__proc_access(struct request *req, const void *argp,
				       void *resp)
{
	const ACCESS3args *args = argp;
	ACCESS3res *res = resp;
	struct nfs3_file f;
	struct store_attr a;
	int err;

	err = nfs3__fh_resolve_attr(req, &args->object, false, &f, &a);
	res->status = nfs3__status_from_errno(err);
	if (res->status == NFS3_OK) {
		ACCESS3resok *ok = &res->ACCESS3res_u.resok;

		ok->access = nfs3__access_mask(&a, &f.cred, args->access,
					       f.read_only);
		nfs3__post_op_from_attr(&a, &ok->obj_attributes);
	}
	nfs3__file_release(&f);
	return RPC_REPLY;
}

static int nfs3_readlink_run(struct nfs3_file *f, struct store_attr *a,
			     char **target)
{
	size_t len = 0;
	char *buf;
	int err;

	err = nfs3__getattr(f, a);
	if (err) {
		return err;
	}
	if (a->type != STORE_LNK) {
		return -EINVAL;
	}
	buf = malloc(STORE_PATH_MAX + 1);
	if (!buf) {
		return -ENOMEM;
	}
	err = store_readlink(f->st, f->obj, buf, STORE_PATH_MAX, &len);
	if (err) {
		free(buf);
		return err;
	}
	buf[len < STORE_PATH_MAX ? len : STORE_PATH_MAX] = '\0';
	*target = buf;
	return 0;
}

enum rpc_disposition nfs3__proc_readlink(struct request *req, const void *argp,
					 void *resp)
{
	const READLINK3args *args = argp;
	READLINK3res *res = resp;
	struct nfs3_file f;
	struct store_attr a;
	char *target = NULL;
	int err;

	err = nfs3__fh_resolve(req, &args->symlink, false, &f);
	if (!err) {
		err = nfs3_readlink_run(&f, &a, &target);
	}
	res->status = nfs3__status_from_errno(err);
	if (res->status == NFS3_OK) {
		res->READLINK3res_u.resok.data = target;
		nfs3__post_op_from_attr(
			&a, &res->READLINK3res_u.resok.symlink_attributes);
	} else {
		nfs3__post_op_fill(
			&f, &res->READLINK3res_u.resfail.symlink_attributes);
	}
	nfs3__file_release(&f);
	return RPC_REPLY;
}

void nfs3__readlink_release(struct request *req, void *resp)
{
	READLINK3res *res = resp;

	(void)req;
	if (res->status == NFS3_OK) {
		free(res->READLINK3res_u.resok.data);
		res->READLINK3res_u.resok.data = NULL;
	}
}
