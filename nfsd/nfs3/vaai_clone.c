// SPDX-License-Identifier: Apache-2.0
/*
 * vaai_clone: VAAI-NAS Full File Clone in-band (procedure 22, FCLONE).
 * The plug-in creates the destination (an empty file, by CREATE) and
 * names it and the source by handle; the copy then runs as one of the
 * server's long operations (admin/ops_engine.h, the admin API's engine:
 * listed under /operations, its progress read and its abort asked by
 * FCLNPROC and FCLNABORT through the destination's file id).  It copies
 * through the store's own read and write, so a local and a CephFS
 * datastore are alike, and skips blocks of zeros (the destination stays
 * thin where the source is).  A copy that fails or is aborted truncates
 * the destination back to empty, as it was when the call came.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/admin/ops_engine.h"
#include "nfsd/nfs3/nfs3_int.h"
#include "nfsd/nfs3/vaai_nas.h"
#include "nfsd/quota/quota.h"

/* One read and one write per step; the progress moves by it. */
#define VAAI_CLONE_STEP_BYTES (1u << 20)

/* What a run holds: references to both files, taken for its life. */
struct vaai_clone {
	struct export *exp;
	struct store *st;
	struct store_obj *src, *dst;
	uint64_t dst_fileid;
};

static void vaai_clone_free(void *arg)
{
	struct vaai_clone *c = arg;

	if (!c) {
		return;
	}
	if (c->src) {
		store_obj_unref(c->st, c->src);
	}
	if (c->dst) {
		store_obj_unref(c->st, c->dst);
	}
	free(c);
}

static bool vaai_block_zero(const uint8_t *p, uint32_t n)
{
	return n == 0 || (p[0] == 0 && !memcmp(p, p + 1, n - 1));
}

/* Sets the destination's size (server's privileges: the caller's were
 * checked when it started). */
static int vaai_clone_size(struct vaai_clone *c, uint64_t size)
{
	static const uint32_t no_groups[1];
	struct store_cred root = { .groups = no_groups };
	struct store_sattr sa = { .set_size = true, .size_bytes = size };

	return store_setattr(c->st, c->dst, &sa, &root);
}

static int vaai_clone_copy(struct admin_op *op, struct vaai_clone *c,
			   uint8_t *buf, char *errbuf, size_t errlen)
{
	struct store_attr sa;
	uint64_t off = 0;
	bool sync_failed = false;
	int err;

	err = store_getattr(c->st, c->src, &sa);
	if (err) {
		snprintf(errbuf, errlen, "the source: %s", strerror(-err));
		return err;
	}
	err = admin__op_progress(op, 0, sa.size_bytes);
	while (!err && off < sa.size_bytes) {
		uint64_t left = sa.size_bytes - off;
		uint32_t want = left < VAAI_CLONE_STEP_BYTES
					? (uint32_t)left
					: VAAI_CLONE_STEP_BYTES;
		uint32_t n = 0;
		bool eof = false;

		err = store_read(c->st, c->src, off, buf, want, &n, &eof);
		if (err) {
			snprintf(errbuf, errlen,
				 "reading the source at %llu: %s",
				 (unsigned long long)off, strerror(-err));
			break;
		}
		if (n == 0) {
			break; /* it shrank meanwhile: the size below says */
		}
		if (!vaai_block_zero(buf, n)) {
			err = store_write(c->st, c->dst, off, buf, n,
					  STORE_UNSTABLE, &sync_failed);
			if (err) {
				snprintf(errbuf, errlen,
					 "writing the target at %llu: %s",
					 (unsigned long long)off,
					 strerror(-err));
				break;
			}
		}
		off += n;
		err = admin__op_progress(op, off, sa.size_bytes);
	}
	if (err == -ECANCELED && !errbuf[0]) {
		snprintf(errbuf, errlen, "aborted after %llu of %llu bytes",
			 (unsigned long long)off,
			 (unsigned long long)sa.size_bytes);
	}
	if (!err) {
		/* The tail of zeros is a hole: the size gives it. */
		err = vaai_clone_size(c, off);
	}
	if (!err) {
		err = store_commit(c->st, c->dst, 0, 0, &sync_failed);
		if (err) {
			snprintf(errbuf, errlen, "syncing the target: %s",
				 strerror(-err));
		}
	}
	return err;
}

static int vaai_clone_run(struct admin_op *op, char *errbuf, size_t errlen)
{
	struct admin_op_args a;
	struct vaai_clone *c;
	struct nfs3_file f = { 0 };
	uint8_t *buf;
	int err;

	admin__op_args(op, &a);
	c = a.arg;
	buf = malloc(VAAI_CLONE_STEP_BYTES);
	err = buf ? vaai_clone_copy(op, c, buf, errbuf, errlen) : -ENOMEM;
	free(buf);
	if (err) {
		/* Nothing half-made stays: the empty file it was. */
		(void)vaai_clone_size(c, 0);
	}
	f.exp = c->exp;
	f.st = c->st;
	nfs3__usage_note(&f, c->dst, c->dst_fileid);
	return err;
}

/* The checks of both files; fills the attributes.  @dst and @src are
 * resolved (and released by the caller) whatever it returns. */
static int vaai_clone_check(struct request *req, const struct vaai_nas_args *a,
			    struct nfs3_file *dst, struct store_attr *da,
			    struct nfs3_file *src, struct store_attr *sa,
			    char *errbuf, size_t errlen)
{
	int err;

	err = nfs3__fh_resolve_attr(req, &a->dst, true, dst, da);
	if (err) {
		snprintf(errbuf, errlen, "the target handle: %s",
			 nfs3__status_name(nfs3__status_from_errno(err)));
		return err;
	}
	if (a->src_kind != VAAI_NAS_SRC_FH) {
		snprintf(errbuf, errlen, "a clone needs the source's handle");
		return -EINVAL;
	}
	err = nfs3__fh_resolve_attr(req, &a->src, false, src, sa);
	if (err) {
		snprintf(errbuf, errlen, "the source handle: %s",
			 nfs3__status_name(nfs3__status_from_errno(err)));
		return err;
	}
	if (src->exp != dst->exp) {
		snprintf(errbuf, errlen,
			 "source in %s, target in %s: a clone stays inside "
			 "one datastore",
			 src->exp->name, dst->exp->name);
		return -EXDEV;
	}
	if (sa->type != STORE_REG || da->type != STORE_REG) {
		snprintf(errbuf, errlen,
			 "the %s is not a regular file (type %d)",
			 sa->type != STORE_REG ? "source" : "target",
			 sa->type != STORE_REG ? (int)sa->type : (int)da->type);
		return sa->type == STORE_DIR || da->type == STORE_DIR ? -EISDIR
								      : -EINVAL;
	}
	if (sa->fileid == da->fileid) {
		snprintf(errbuf, errlen, "source and target are one file");
		return -EINVAL;
	}
	if (da->size_bytes) {
		snprintf(errbuf, errlen,
			 "the target holds %llu bytes: a clone makes a new "
			 "file, never overwrites one",
			 (unsigned long long)da->size_bytes);
		return -EEXIST;
	}
	if (nfs3__may_read(sa, &src->cred) || nfs3__may_write(da, &dst->cred)) {
		snprintf(errbuf, errlen, "the caller may not %s",
			 nfs3__may_read(sa, &src->cred) ? "read the source"
							: "write the target");
		return -EACCES;
	}
	return 0;
}

int nfs3__vaai_clone_start(struct request *req, const struct vaai_nas_args *a,
			   const struct vaai_nas_cmd_in *cmd, char *errbuf,
			   size_t errlen)
{
	const struct nfs3_service *svc = req->svc;
	struct nfs3_file dst, src;
	struct store_attr da, sa;
	struct admin_op_spec spec = { .kind = "clone", .mode = "vaai-nas" };
	struct vaai_clone *c = NULL;
	char source[64];
	uint64_t id = 0;
	int err;

	memset(&dst, 0, sizeof(dst));
	memset(&src, 0, sizeof(src));
	err = vaai_clone_check(req, a, &dst, &da, &src, &sa, errbuf, errlen);
	if (!err && !svc->ops) {
		snprintf(errbuf, errlen, "this server runs no operations");
		err = -STORE_ENOTSUPP;
	}
	if (!err) {
		c = calloc(1, sizeof(*c));
		err = c ? 0 : -ENOMEM;
	}
	if (err) {
		goto out;
	}
	/* A full copy may allocate what the source does: reserved first,
	 * given back by the engine when the run ends. */
	spec.quota_bytes = sa.used_bytes;
	if (dst.exp->quota && spec.quota_bytes &&
	    quota_reserve(dst.exp->quota, spec.quota_bytes)) {
		snprintf(errbuf, errlen,
			 "the source allocates %llu bytes: more than the "
			 "quota of %s leaves",
			 (unsigned long long)spec.quota_bytes, dst.exp->name);
		free(c);
		err = -ENOSPC;
		goto out;
	}
	c->exp = dst.exp;
	c->st = dst.st;
	c->src = src.obj;
	c->dst = dst.obj;
	c->dst_fileid = da.fileid;
	src.obj = NULL; /* the run's now */
	dst.obj = NULL;
	snprintf(source, sizeof(source), "fileid %llu",
		 (unsigned long long)sa.fileid);
	spec.export = c->exp;
	spec.source = source;
	spec.target = cmd->name;
	spec.total_bytes = sa.size_bytes;
	spec.key = da.fileid;
	spec.run = vaai_clone_run;
	spec.arg = c;
	spec.arg_free = vaai_clone_free;
	err = admin__op_start_bg(svc->ops, &spec, &id, errbuf, errlen);
	if (err == -EBUSY) {
		err = -EAGAIN; /* NFS3ERR_JUKEBOX: try again later */
	}
	/* @c is the engine's (freed when it does not start): the export
	 * through the spec. */
	if (err && spec.quota_bytes && spec.export->quota && !id) {
		quota_release(spec.export->quota, spec.quota_bytes);
	}
out:
	nfs3__file_release(&src);
	nfs3__file_release(&dst);
	return err;
}
