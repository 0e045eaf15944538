// SPDX-License-Identifier: Apache-2.0
/*
 * attr: store attributes -> fattr3, post_op_attr, pre_op_attr and
 * wcc_data, and sattr3 -> store_sattr (RFC 1813 2.5, 2.6: weak cache
 * consistency).  Attributes that cannot be had are left out
 * (attributes_follow = FALSE), never invented.
 */
#include <errno.h>
#include <string.h>

#include "nfsd/nfs3/nfs3_int.h"

static nfstime3 nfs3_time_from_store(const struct timespec *ts)
{
	nfstime3 t = {
		.seconds = (uint32)ts->tv_sec,
		.nseconds = (uint32)ts->tv_nsec,
	};

	return t;
}

static struct timespec nfs3_time_to_store(const nfstime3 *t)
{
	struct timespec ts = {
		.tv_sec = (time_t)t->seconds,
		.tv_nsec = (long)t->nseconds,
	};

	return ts;
}

void nfs3__fattr_from_store(const struct store_attr *a, fattr3 *out)
{
	out->type = (ftype3)a->type;
	out->mode = a->mode & 07777;
	out->nlink = a->nlink;
	out->uid = a->uid;
	out->gid = a->gid;
	out->size = a->size_bytes;
	out->used = a->used_bytes;
	out->rdev.specdata1 = a->rdev_major;
	out->rdev.specdata2 = a->rdev_minor;
	out->fsid = a->fsid;
	out->fileid = a->fileid;
	out->atime = nfs3_time_from_store(&a->atime);
	out->mtime = nfs3_time_from_store(&a->mtime);
	out->ctime = nfs3_time_from_store(&a->ctime);
}

void nfs3__post_op_from_attr(const struct store_attr *a, post_op_attr *out)
{
	out->attributes_follow = TRUE;
	nfs3__fattr_from_store(a, &out->post_op_attr_u.attributes);
}

void nfs3__pre_op_from_attr(const struct store_attr *a, pre_op_attr *out)
{
	wcc_attr *w = &out->pre_op_attr_u.attributes;

	out->attributes_follow = TRUE;
	w->size = a->size_bytes;
	w->mtime = nfs3_time_from_store(&a->mtime);
	w->ctime = nfs3_time_from_store(&a->ctime);
}

int nfs3__getattr(const struct nfs3_file *f, struct store_attr *a)
{
	return store_getattr(f->st, f->obj, a);
}

void nfs3__post_op_fill(const struct nfs3_file *f, post_op_attr *out)
{
	struct store_attr a;

	memset(out, 0, sizeof(*out));
	if (!f->obj || nfs3__getattr(f, &a) != 0) {
		return;
	}
	nfs3__post_op_from_attr(&a, out);
}

int nfs3__wcc_pre(const struct nfs3_file *f, struct store_attr *pre,
		  wcc_data *out)
{
	int err;

	err = nfs3__getattr(f, pre);
	if (err) {
		return err;
	}
	nfs3__pre_op_from_attr(pre, &out->before);
	return 0;
}

void nfs3__wcc_post(const struct nfs3_file *f, wcc_data *out)
{
	nfs3__post_op_fill(f, &out->after);
}

static bool nfs3_time_how_valid(time_how how)
{
	return how == DONT_CHANGE || how == SET_TO_SERVER_TIME ||
	       how == SET_TO_CLIENT_TIME;
}

int nfs3__sattr_to_store(const sattr3 *in, struct store_sattr *out)
{
	memset(out, 0, sizeof(*out));
	if (!nfs3_time_how_valid(in->atime.set_it) ||
	    !nfs3_time_how_valid(in->mtime.set_it)) {
		return -EINVAL;
	}
	out->set_mode = in->mode.set_it;
	out->mode = in->mode.set_mode3_u.mode & 07777;
	out->set_uid = in->uid.set_it;
	out->uid = in->uid.set_uid3_u.uid;
	out->set_gid = in->gid.set_it;
	out->gid = in->gid.set_gid3_u.gid;
	out->set_size = in->size.set_it;
	out->size_bytes = in->size.set_size3_u.size;
	out->atime_how = (enum store_time_how)in->atime.set_it;
	if (in->atime.set_it == SET_TO_CLIENT_TIME) {
		out->atime = nfs3_time_to_store(&in->atime.set_atime_u.atime);
	}
	out->mtime_how = (enum store_time_how)in->mtime.set_it;
	if (in->mtime.set_it == SET_TO_CLIENT_TIME) {
		out->mtime = nfs3_time_to_store(&in->mtime.set_mtime_u.mtime);
	}
	return 0;
}
