// SPDX-License-Identifier: Apache-2.0
/*
 * usage: keeps a datastore's allocation figure (quota.h) up to date from
 * the calls that change it, and refuses a WRITE that would pass the
 * datastore's quota with NFS3ERR_NOSPC before it touches the file (RFC
 * 1813 3.3.7 lists NOSPC; ESXi reports it as "no space left on the
 * datastore", as it would for a full disk).  Exports without a struct
 * quota (unit tests) skip all of it.
 */
#include <errno.h>
#include <string.h>

#include "nfsd/nfs3/nfs3_int.h"
#include "nfsd/quota/quota.h"

struct nfs3_usage_measure {
	struct store *st;
	struct store_obj *obj;
	struct store_attr *attr; /* where the attributes measured go */
};

static int nfs3_usage_measure(void *arg, uint64_t *used_bytes)
{
	struct nfs3_usage_measure *m = arg;
	int err = store_getattr(m->st, m->obj, m->attr);

	if (!err) {
		*used_bytes = m->attr->used_bytes;
	}
	return err;
}

/* nfs3__usage_note(), with the attributes measured in *@attr: true when
 * they were (the file has a quota record, and it was measured). */
static bool nfs3_usage_note_attr(const struct nfs3_file *f,
				 struct store_obj *obj, uint64_t fileid,
				 struct store_attr *attr)
{
	struct nfs3_usage_measure m = { .st = f->st, .obj = obj, .attr = attr };

	if (!f->exp || !f->exp->quota || !obj) {
		return false;
	}
	return quota_file_update(f->exp->quota, fileid, nfs3_usage_measure,
				 &m) == 0;
}

int nfs3__usage_write_reserve(const struct nfs3_file *f,
			      const struct store_attr *pre, uint64_t off_bytes,
			      uint32_t count, uint64_t *reserved_bytes)
{
	uint64_t grow;
	int err;

	*reserved_bytes = 0;
	if (!f->exp->quota) {
		return 0;
	}
	grow = quota_write_growth(pre->size_bytes, pre->used_bytes, off_bytes,
				  count);
	err = quota_reserve(f->exp->quota, grow);
	if (!err) {
		*reserved_bytes = grow;
	}
	return err;
}

bool nfs3__usage_write_end(const struct nfs3_file *f,
			   const struct store_attr *pre,
			   uint64_t reserved_bytes, struct store_attr *post)
{
	bool measured;

	if (!f->exp->quota || !reserved_bytes) {
		return false; /* a write that cannot allocate changed nothing */
	}
	measured = nfs3_usage_note_attr(f, f->obj, pre->fileid, post);
	quota_release(f->exp->quota, reserved_bytes);
	return measured;
}

void nfs3__usage_note(const struct nfs3_file *f, struct store_obj *obj,
		      uint64_t fileid)
{
	struct store_attr attr;

	(void)nfs3_usage_note_attr(f, obj, fileid, &attr);
}

void nfs3__usage_victim(const struct nfs3_file *dir, const char *name,
			struct nfs3_victim *v)
{
	struct store_obj *obj;
	struct store_attr a;

	memset(v, 0, sizeof(*v));
	if (!dir->exp || !dir->exp->quota || !dir->obj) {
		return;
	}
	if (store_lookup(dir->st, dir->obj, name, &obj)) {
		return;
	}
	if (store_getattr(dir->st, obj, &a) == 0) {
		v->fileid = a.fileid;
		/* A directory's link count counts its subdirectories. */
		v->last_link = a.type == STORE_DIR || a.nlink <= 1;
		v->found = true;
	}
	store_obj_unref(dir->st, obj);
}

void nfs3__usage_gone(const struct nfs3_file *dir, const struct nfs3_victim *v)
{
	if (v->found && v->last_link && dir->exp && dir->exp->quota) {
		quota_file_forget(dir->exp->quota, v->fileid);
	}
}

void nfs3__usage_fsstat(const struct nfs3_file *f, struct store_fsstat *fs)
{
	struct quota_usage u;
	uint64_t room;

	if (!f->exp->quota) {
		return;
	}
	quota_get(f->exp->quota, &u);
	if (!u.limit_bytes) {
		return;
	}
	room = u.used_bytes < u.limit_bytes ? u.limit_bytes - u.used_bytes : 0;
	fs->total_bytes = u.limit_bytes;
	/* The disk may be fuller than the quota says: the smaller wins. */
	if (fs->free_bytes > room) {
		fs->free_bytes = room;
	}
	if (fs->avail_bytes > room) {
		fs->avail_bytes = room;
	}
}
