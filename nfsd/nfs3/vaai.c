// SPDX-License-Identifier: Apache-2.0
/*
 * vaai: NFSv3 procedure 22, VAAI-NAS in-band (docs/vaai-nas.md), the
 * extra procedure an ESXi host's vendor plug-in sends over the
 * datastore's own connection.  The handle of the call decides the
 * datastore and is checked as any call's (the export's client list and
 * squashing; a read-only export refuses what changes files), and the
 * call is charged to its flow as one op (charge.c).  The commands:
 * FCLONE (vaai_clone.c), FCLNPROC and FCLNABORT (the clone's progress
 * and abort, on the server's operations), FSTAT (size, allocated and
 * unique bytes), FRESERVE (a local datastore's fallocate of the whole
 * file) and the three support queries.  A command this server does not
 * know is NFS3ERR_NOTSUPP; every answer carries the plug-in's 80-byte
 * reply data, whose result tells a full datastore (1004) or a busy one
 * (1003) apart from a plain NFS error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nfsd/admin/ops_engine.h"
#include "nfsd/base/log.h"
#include "nfsd/base/ratelimit.h"
#include "nfsd/nfs3/nfs3_int.h"
#include "nfsd/nfs3/vaai_nas.h"
#include "nfsd/quota/quota.h"
#include "nfsd/store/store_tree.h"
#include "vmdk/vmdk.h"

#define VAAI_WHY_MAX 384

/* One line for a refused call, at most one a second for all clients. */
static void vaai_log_refusal(struct request *req, uint32_t cmd, int err,
			     const char *why)
{
	static struct ratelimit rl;
	uint64_t held;
	char note[64];

	if (!ratelimit_take(&rl, &held)) {
		return;
	}
	log_warn("nfs: %s: VAAI-NAS command %u refused (%s): %s%s",
		 request_peer(req), cmd,
		 nfs3__status_name(nfs3__status_from_errno(err)),
		 why[0] ? why : strerror(err < 0 ? -err : err),
		 ratelimit_held_note(held, note, sizeof(note)));
}

/* FRESERVE needs a writable descriptor: the store's tree, by the file's
 * path inside the datastore (a local store tells it). */
static bool vaai_reserve_offered(const struct store *st)
{
	return store_tree_offered(st);
}

static int vaai_support(struct request *req, const struct vaai_nas_args *a,
			uint32_t cmd, struct vaai_nas_out *out)
{
	const struct nfs3_service *svc = req->svc;
	struct nfs3_file f;
	bool yes = false;
	int err = nfs3__fh_export(req, &a->dst, false, &f);

	if (err) {
		return err;
	}
	if (cmd == VAAI_NAS_CLN_SUPPORT) {
		yes = svc->ops && !f.read_only;
	} else if (cmd == VAAI_NAS_RSV_SUPPORT) {
		yes = !f.read_only && vaai_reserve_offered(f.st);
	} else {
		yes = true;
	}
	out->result = yes ? VAAI_NAS_SUPPORTED : VAAI_NAS_NOT_SUPPORTED;
	return 0;
}

/* Extended statistics: the size, the allocation and what of it no other
 * file shares (FIEMAP_EXTENT_SHARED, as the admin API's stats) where
 * the store gives a descriptor; elsewhere (CephFS) nothing is shared. */
static int vaai_stat(struct request *req, const struct vaai_nas_args *a,
		     struct vaai_nas_out *out)
{
	struct nfs3_file f;
	struct store_attr at;
	struct store_file_ref ref;
	struct vmdk_alloc va;
	int err = nfs3__fh_resolve_attr(req, &a->dst, false, &f, &at);

	if (!err) {
		out->total_bytes = at.size_bytes;
		out->allocated_bytes = at.used_bytes;
		out->unique_bytes = at.used_bytes;
		if (at.type == STORE_REG &&
		    !store_read_ref(f.st, f.obj, &ref)) {
			if (!vmdk_alloc_get(vmdk_io_posix(), ref.fd, &va)) {
				out->unique_bytes =
					va.shared_bytes < at.used_bytes
						? at.used_bytes -
							  va.shared_bytes
						: 0;
			}
			ref.unref(ref.ref);
		}
	}
	nfs3__file_release(&f);
	return err;
}

/* Opens the regular file f->obj for writing through the store's tree,
 * the same file (its id) as the handle's.  *fd on (*tp)->io. */
static int vaai_tree_file(struct nfs3_file *f, const struct store_attr *at,
			  struct store_tree **tp, int *fd, char *why,
			  size_t whylen)
{
	char rel[STORE_PATH_MAX], *abs = NULL;
	struct stat st;
	int err;

	err = store_path(f->st, f->obj, rel, sizeof(rel));
	if (!err) {
		err = store_tree_open(f->st, tp, why, whylen);
	}
	if (err) {
		return err;
	}
	if (asprintf(&abs, "%s%s", (*tp)->root, rel) < 0) {
		abs = NULL;
		err = -ENOMEM;
	} else {
		err = (*tp)->io.ops->open((*tp)->io.ctx, abs,
					  O_WRONLY | O_NONBLOCK, 0, fd);
	}
	free(abs);
	if (!err &&
	    ((*tp)->io.ops->fstat((*tp)->io.ctx, *fd, &st) ||
	     !S_ISREG(st.st_mode) || (uint64_t)st.st_ino != at->fileid)) {
		/* Renamed meanwhile: the name leads elsewhere now. */
		(*tp)->io.ops->close((*tp)->io.ctx, *fd);
		err = -ESTALE;
	}
	if (err) {
		(*tp)->close(*tp);
	}
	return err;
}

/* Reserve Space: allocates every byte of the file's size, its data kept
 * (fallocate without a mode changes neither size nor data). */
static int vaai_reserve(struct request *req, const struct vaai_nas_args *a,
			struct vaai_nas_out *out, char *why, size_t whylen)
{
	struct nfs3_file f;
	struct store_attr at;
	struct store_tree *t = NULL;
	uint64_t want = 0;
	int fd = -1, err;

	err = nfs3__fh_resolve_attr(req, &a->dst, true, &f, &at);
	if (!err && at.type != STORE_REG) {
		snprintf(why, whylen, "not a regular file");
		err = at.type == STORE_DIR ? -EISDIR : -EINVAL;
	}
	if (!err && nfs3__may_write(&at, &f.cred)) {
		err = -EACCES;
	}
	if (!err && !vaai_reserve_offered(f.st)) {
		snprintf(why, whylen, "this datastore cannot reserve space");
		err = -STORE_ENOTSUPP;
	}
	want = !err && at.size_bytes > at.used_bytes
		       ? at.size_bytes - at.used_bytes
		       : 0;
	if (!err && f.exp->quota && want && quota_reserve(f.exp->quota, want)) {
		snprintf(why, whylen, "%llu bytes more pass the quota of %s",
			 (unsigned long long)want, f.exp->name);
		want = 0;
		err = -ENOSPC;
	}
	if (!err) {
		err = vaai_tree_file(&f, &at, &t, &fd, why, whylen);
	}
	if (!err) {
		if (at.size_bytes) {
			err = t->io.ops->fallocate(t->io.ctx, fd, 0, 0,
						   at.size_bytes);
		}
		t->io.ops->close(t->io.ctx, fd);
		t->close(t);
		nfs3__usage_note(&f, f.obj, at.fileid);
	}
	if (want && f.exp->quota) {
		quota_release(f.exp->quota, want);
	}
	out->total_bytes = at.size_bytes;
	nfs3__file_release(&f);
	return err;
}

/* A clone's progress (@abort false) or its abort, by its target. */
static int vaai_clone_follow(struct request *req, const struct vaai_nas_args *a,
			     bool abort, struct vaai_nas_out *out, char *why,
			     size_t whylen)
{
	const struct nfs3_service *svc = req->svc;
	struct admin_op_view v;
	struct nfs3_file f;
	struct store_attr at;
	int err = nfs3__fh_resolve_attr(req, &a->dst, abort, &f, &at);

	if (!err && !svc->ops) {
		err = -STORE_ENOTSUPP;
	}
	if (!err && abort) {
		err = admin__op_cancel(svc->ops, f.exp, at.fileid);
		err = err == -EALREADY ? 0 : err; /* over: nothing to stop */
	}
	if (!err) {
		err = admin__op_find(svc->ops, f.exp, at.fileid, &v);
	}
	if (err == -ENOENT) {
		snprintf(why, whylen, "no clone into this file is known");
	}
	if (!err && v.state == ADMIN_OP_FAILED && !abort) {
		snprintf(why, whylen, "the clone failed: %.300s", v.error);
		err = v.err;
	} else if (!err) {
		out->clone_flag = v.state == ADMIN_OP_DONE
					  ? VAAI_NAS_CLONE_COMPLETE
				  : v.done_bytes ? VAAI_NAS_CLONE_DOING
						 : VAAI_NAS_CLONE_START;
		out->clone_offset =
			v.state == ADMIN_OP_DONE ? v.total_bytes : v.done_bytes;
		out->total_bytes = v.total_bytes;
	}
	nfs3__file_release(&f);
	return err;
}

static int vaai_run(struct request *req, const struct vaai_nas_args *a,
		    struct vaai_nas_out *out, char *why, size_t whylen)
{
	struct vaai_nas_cmd_in cmd;
	struct nfs3_file f;
	int err;

	/* The handle first: a caller of no export learns nothing more. */
	err = nfs3__fh_export(req, &a->dst, false, &f);
	if (!err) {
		err = vaai_nas_cmd_parse(a->cmd, a->cmd_len, &cmd, why, whylen);
		out->cmd = cmd.cmd;
	}
	if (err) {
		return err;
	}
	switch (cmd.cmd) {
	case VAAI_NAS_FCLONE:
		return nfs3__vaai_clone_start(req, a, &cmd, why, whylen);
	case VAAI_NAS_FRESERVE:
		return vaai_reserve(req, a, out, why, whylen);
	case VAAI_NAS_FSTAT:
		return vaai_stat(req, a, out);
	case VAAI_NAS_FCLNPROC:
		return vaai_clone_follow(req, a, false, out, why, whylen);
	case VAAI_NAS_FCLNABORT:
		return vaai_clone_follow(req, a, true, out, why, whylen);
	default:
		return vaai_support(req, a, cmd.cmd, out);
	}
}

enum rpc_disposition nfs3__proc_vaai(struct request *req, const void *argp,
				     void *resp)
{
	const struct vaai_nas_args *a = argp;
	struct vaai_nas_res *res = resp;
	struct vaai_nas_out out = { .version = VAAI_NAS_VERSION };
	char why[VAAI_WHY_MAX] = "";
	int err = vaai_run(req, a, &out, why, sizeof(why));

	if (err == -EBUSY) {
		err = -EAGAIN;
	}
	if (err) {
		out.result = err == -ENOSPC || err == -EDQUOT ? VAAI_NAS_FS_FULL
			     : err == -EAGAIN		      ? VAAI_NAS_FS_BUSY
							      : 0;
		vaai_log_refusal(req, out.cmd, err, why);
	}
	res->status = (int32_t)nfs3__status_from_errno(err);
	vaai_nas_out_format(&out, res->data);
	res->len = VAAI_NAS_OUT_BYTES;
	return RPC_REPLY;
}
