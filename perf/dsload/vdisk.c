// SPDX-License-Identifier: Apache-2.0
/*
 * vdisk: a VMDK made over NFS the way ESXi makes one on an NFS datastore:
 * a folder per VM, a text descriptor `vmN-diskK.vmdk` (createType "vmfs",
 * one extent line naming the flat file), the flat extent
 * `vmN-diskK-flat.vmdk` created empty and then sized with SETATTR (thin:
 * no data is written; a flat file left by an earlier run is kept as it
 * is, since emptying it costs the server seconds), and a lock file
 * `.lck-<fileid>` beside it, which ESXi rewrites every
 * NFS.DiskFileLockUpdateFreq (10 s) while the disk is open and removes when it
 * closes.  RFC 1813 3.3.3 LOOKUP, 3.3.9 MKDIR, 3.3.8 CREATE, 3.3.2
 * SETATTR, 3.3.7 WRITE, 3.3.12 REMOVE.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/base/base.h"
#include "perf/dsload/fleet_int.h"

/* ESXi rewrites 84 bytes of a .lck file (NFS.DiskFileLockUpdateFreq) */
#define VDISK_LCK_RECORD_BYTES ESXI_LCK_BYTES

/* Setup calls share their connection, timeout and error buffer. */
struct vdisk_ctx {
	struct rpcconn *c;
	int timeout_ms;
	char *errbuf;
	size_t errlen;
	const char *ds;
};

static int vdisk_status_errno(nfsstat3 st)
{
	switch (st) {
	case NFS3_OK:
		return 0;
	case NFS3ERR_NOENT:
		return -ENOENT;
	case NFS3ERR_EXIST:
		return -EEXIST;
	case NFS3ERR_NOSPC:
		return -ENOSPC;
	case NFS3ERR_ACCES:
	case NFS3ERR_PERM:
		return -EACCES;
	case NFS3ERR_ROFS:
		return -EROFS;
	default:
		break;
	}
	return -EIO;
}

/* Runs one call; on failure writes "<ds>: <op> <name>: <why>". */
static int vdisk_call(struct vdisk_ctx *x, uint32_t proc, const char *op,
		      const char *name, xdrproc_t args_fn, const void *args,
		      xdrproc_t res_fn, void *res)
{
	int err = nfsc_call_sync(x->c, NFS_PROGRAM, NFS_V3, proc, args_fn, args,
				 res_fn, res, x->timeout_ms);

	if (err) {
		snprintf(x->errbuf, x->errlen, "%s: %s %s: %s", x->ds, op, name,
			 strerror(-err));
	}
	return err;
}

static int vdisk_status(struct vdisk_ctx *x, nfsstat3 st, const char *op,
			const char *name, bool quiet_noent)
{
	int err = vdisk_status_errno(st);

	if (err && !(quiet_noent && err == -ENOENT)) {
		snprintf(x->errbuf, x->errlen, "%s: %s %s: %s", x->ds, op, name,
			 nfsc_status_name(st));
	}
	return err;
}

static int vdisk_lookup(struct vdisk_ctx *x, const struct nfsc_fh *dir,
			const char *name, struct nfsc_fh *out)
{
	LOOKUP3args a = { .what = { .dir = nfsc_fh3(dir),
				    .name = (char *)name } };
	LOOKUP3res r;
	int err;

	memset(&r, 0, sizeof(r));
	err = vdisk_call(x, NFSPROC3_LOOKUP, "LOOKUP", name,
			 (xdrproc_t)xdr_LOOKUP3args, &a,
			 (xdrproc_t)xdr_LOOKUP3res, &r);
	if (err) {
		return err;
	}
	err = vdisk_status(x, r.status, "LOOKUP", name, true);
	if (!err) {
		nfs_fh3 *fh = &r.LOOKUP3res_u.resok.object;

		err = nfsc_fh_set(out, fh->data.data_val, fh->data.data_len);
	}
	xdr_free((xdrproc_t)xdr_LOOKUP3res, (char *)&r);
	return err;
}

static int vdisk_dir_ensure(struct vdisk_ctx *x, const struct nfsc_fh *root,
			    const char *name, struct nfsc_fh *out)
{
	MKDIR3args a;
	MKDIR3res r;
	int err = vdisk_lookup(x, root, name, out);

	if (err != -ENOENT) {
		return err;
	}
	memset(&a, 0, sizeof(a));
	a.where.dir = nfsc_fh3(root);
	a.where.name = (char *)name;
	a.attributes.mode.set_it = TRUE;
	a.attributes.mode.set_mode3_u.mode = 0755;
	memset(&r, 0, sizeof(r));
	err = vdisk_call(x, NFSPROC3_MKDIR, "MKDIR", name,
			 (xdrproc_t)xdr_MKDIR3args, &a,
			 (xdrproc_t)xdr_MKDIR3res, &r);
	if (err) {
		return err;
	}
	err = r.status == NFS3ERR_EXIST
		      ? 0
		      : vdisk_status(x, r.status, "MKDIR", name, false);
	xdr_free((xdrproc_t)xdr_MKDIR3res, (char *)&r);
	return err ? err : vdisk_lookup(x, root, name, out);
}

/* How vdisk_file_create() treats a file that exists already. */
enum vdisk_create_how {
	VDISK_EMPTY, /* UNCHECKED with size 0: emptied */
	VDISK_KEEP, /* GUARDED, then LOOKUP: kept as it is */
};

/* What vdisk_file_create() found or made. */
struct vdisk_file {
	uint64_t file_id;
	uint64_t size_bytes;
	bool fresh; /* created by this call */
};

static int vdisk_getattr(struct vdisk_ctx *x, const struct nfsc_fh *fh,
			 const char *name, struct vdisk_file *out)
{
	GETATTR3args ga = { .object = nfsc_fh3(fh) };
	GETATTR3res gr;
	int err;

	memset(&gr, 0, sizeof(gr));
	err = vdisk_call(x, NFSPROC3_GETATTR, "GETATTR", name,
			 (xdrproc_t)xdr_GETATTR3args, &ga,
			 (xdrproc_t)xdr_GETATTR3res, &gr);
	if (err) {
		return err;
	}
	err = vdisk_status(x, gr.status, "GETATTR", name, false);
	if (!err) {
		out->file_id = gr.GETATTR3res_u.resok.obj_attributes.fileid;
		out->size_bytes = gr.GETATTR3res_u.resok.obj_attributes.size;
	}
	xdr_free((xdrproc_t)xdr_GETATTR3res, (char *)&gr);
	return err;
}

/*
 * Makes @name in @dir.  VDISK_EMPTY empties a file that exists (small
 * files: descriptor, lock).  VDISK_KEEP keeps it: emptying a large flat
 * file frees every block it holds, which can take the server seconds.
 */
static int vdisk_file_create(struct vdisk_ctx *x, const struct nfsc_fh *dir,
			     const char *name, enum vdisk_create_how how,
			     struct nfsc_fh *out, struct vdisk_file *file)
{
	CREATE3args a;
	CREATE3res r;
	CREATE3resok *ok = &r.CREATE3res_u.resok;
	sattr3 *attr = &a.how.createhow3_u.obj_attributes;
	int err;

	memset(&a, 0, sizeof(a));
	a.where.dir = nfsc_fh3(dir);
	a.where.name = (char *)name;
	a.how.mode = how == VDISK_KEEP ? GUARDED : UNCHECKED;
	attr->mode.set_it = TRUE;
	attr->mode.set_mode3_u.mode = 0600;
	attr->size.set_it = how == VDISK_EMPTY;
	attr->size.set_size3_u.size = 0;
	memset(&r, 0, sizeof(r));
	err = vdisk_call(x, NFSPROC3_CREATE, "CREATE", name,
			 (xdrproc_t)xdr_CREATE3args, &a,
			 (xdrproc_t)xdr_CREATE3res, &r);
	if (err) {
		return err;
	}
	file->fresh = r.status == NFS3_OK;
	if (how == VDISK_KEEP && r.status == NFS3ERR_EXIST) {
		err = vdisk_lookup(x, dir, name, out);
	} else {
		err = vdisk_status(x, r.status, "CREATE", name, false);
	}
	if (!err && file->fresh && ok->obj.handle_follows) {
		err = nfsc_fh_set(out,
				  ok->obj.post_op_fh3_u.handle.data.data_val,
				  ok->obj.post_op_fh3_u.handle.data.data_len);
	} else if (!err && file->fresh) {
		err = vdisk_lookup(x, dir, name, out);
	}
	xdr_free((xdrproc_t)xdr_CREATE3res, (char *)&r);
	if (err) {
		return err;
	}
	return vdisk_getattr(x, out, name, file);
}

static int vdisk_size_set(struct vdisk_ctx *x, const struct nfsc_fh *fh,
			  const char *name, uint64_t size_bytes)
{
	SETATTR3args a;
	SETATTR3res r;
	int err;

	memset(&a, 0, sizeof(a));
	a.object = nfsc_fh3(fh);
	a.new_attributes.size.set_it = TRUE;
	a.new_attributes.size.set_size3_u.size = size_bytes;
	memset(&r, 0, sizeof(r));
	err = vdisk_call(x, NFSPROC3_SETATTR, "SETATTR", name,
			 (xdrproc_t)xdr_SETATTR3args, &a,
			 (xdrproc_t)xdr_SETATTR3res, &r);
	if (!err) {
		err = vdisk_status(x, r.status, "SETATTR", name, false);
	}
	xdr_free((xdrproc_t)xdr_SETATTR3res, (char *)&r);
	return err;
}

static int vdisk_write(struct vdisk_ctx *x, const struct nfsc_fh *fh,
		       const char *name, const void *data, uint32_t len)
{
	WRITE3args a;
	WRITE3res r;
	int err;

	memset(&a, 0, sizeof(a));
	a.file = nfsc_fh3(fh);
	a.count = len;
	a.stable = FILE_SYNC;
	a.data.data_len = len;
	a.data.data_val = (char *)data;
	memset(&r, 0, sizeof(r));
	err = vdisk_call(x, NFSPROC3_WRITE, "WRITE", name,
			 (xdrproc_t)xdr_WRITE3args, &a,
			 (xdrproc_t)xdr_WRITE3res, &r);
	if (!err) {
		err = vdisk_status(x, r.status, "WRITE", name, false);
	}
	if (!err && r.WRITE3res_u.resok.count != len) {
		snprintf(x->errbuf, x->errlen, "%s: WRITE %s: short write",
			 x->ds, name);
		err = -EIO;
	}
	xdr_free((xdrproc_t)xdr_WRITE3res, (char *)&r);
	return err;
}

int vdisk_descriptor_format(char *buf, size_t len, const char *flat_name,
			    uint64_t size_bytes, uint32_t cid)
{
	uint64_t sectors = size_bytes / 512;
	uint64_t cylinders = sectors / (255 * 63);
	int n;

	if (cylinders == 0) {
		cylinders = 1;
	}
	n = snprintf(buf, len,
		     "# Disk DescriptorFile\n"
		     "version=1\n"
		     "encoding=\"UTF-8\"\n"
		     "CID=%08x\n"
		     "parentCID=ffffffff\n"
		     "createType=\"vmfs\"\n"
		     "\n"
		     "# Extent description\n"
		     "RW %" PRIu64 " VMFS \"%s\"\n"
		     "\n"
		     "# The Disk Data Base\n"
		     "#DDB\n"
		     "\n"
		     "ddb.adapterType = \"lsilogic\"\n"
		     "ddb.geometry.cylinders = \"%" PRIu64 "\"\n"
		     "ddb.geometry.heads = \"255\"\n"
		     "ddb.geometry.sectors = \"63\"\n"
		     "ddb.thinProvisioned = \"1\"\n"
		     "ddb.virtualHWVersion = \"19\"\n",
		     cid, sectors, flat_name, cylinders);
	if (n < 0 || (size_t)n >= len) {
		return -ENOSPC;
	}
	return n;
}

static int vdisk_lck_record(const struct job *j, uint8_t *rec)
{
	char text[VDISK_LCK_RECORD_BYTES + 1];
	int n = snprintf(text, sizeof(text),
			 "dsload-lck v1 host=%s vm=%s disk=%s gen=%u\n",
			 j->host->addr, j->vm_name, j->disk_name, j->lck_gen);

	if (n < 0) {
		return -EINVAL;
	}
	memset(rec, ' ', VDISK_LCK_RECORD_BYTES);
	memcpy(rec, text,
	       (size_t)n < VDISK_LCK_RECORD_BYTES ? (size_t)n
						  : VDISK_LCK_RECORD_BYTES);
	return VDISK_LCK_RECORD_BYTES;
}

int vdisk_create(struct job *j, char *errbuf, size_t errlen)
{
	struct dsmount *m = j->mnt;
	struct vdisk_ctx x = { .c = m->conns[0],
			       .timeout_ms = j->host->spec->timeout_ms,
			       .errbuf = errbuf,
			       .errlen = errlen,
			       .ds = m->name };
	uint8_t rec[VDISK_LCK_RECORD_BYTES];
	struct vdisk_file file;
	char desc[1024];
	int err, n;

	err = vdisk_dir_ensure(&x, &m->root, j->vm_name, &j->dir_fh);
	if (err) {
		return err;
	}
	err = vdisk_file_create(&x, &j->dir_fh, j->disk_name, VDISK_EMPTY,
				&j->desc_fh, &file);
	if (err) {
		return err;
	}
	n = vdisk_descriptor_format(desc, sizeof(desc), j->flat_name,
				    j->size_bytes,
				    (uint32_t)(0x5eed0000u + j->idx));
	if (n < 0) {
		return n;
	}
	err = vdisk_write(&x, &j->desc_fh, j->disk_name, desc, (uint32_t)n);
	if (err) {
		return err;
	}
	err = vdisk_file_create(&x, &j->dir_fh, j->flat_name, VDISK_KEEP,
				&j->flat_fh, &file);
	if (err) {
		return err;
	}
	j->file_id = file.file_id;
	j->fresh = file.fresh;
	/* Thin: the size is set, no block is written. */
	if (file.size_bytes != j->size_bytes) {
		err = vdisk_size_set(&x, &j->flat_fh, j->flat_name,
				     j->size_bytes);
		if (err) {
			return err;
		}
	}
	snprintf(j->lck_name, sizeof(j->lck_name), ".lck-%016" PRIx64,
		 j->file_id);
	err = vdisk_file_create(&x, &j->dir_fh, j->lck_name, VDISK_EMPTY,
				&j->lck_fh, &file);
	if (err) {
		return err;
	}
	n = vdisk_lck_record(j, rec);
	if (n < 0) {
		return n;
	}
	return vdisk_write(&x, &j->lck_fh, j->lck_name, rec, (uint32_t)n);
}

static void vdisk_lck_done(struct rpcconn_call *call, int err,
			   const uint8_t *body, size_t len)
{
	struct job *j = container_of(call, struct job, lck_call);
	struct nfsc_write_res res;

	if (!err) {
		err = nfsc_write_decode(body, len, &res);
	}
	if (err || res.status != NFS3_OK) {
		j->lck_failures++;
	}
}

void vdisk_lck_refresh(struct job *j)
{
	struct rpcconn *c = j->mnt->conns[0];
	uint8_t *data;
	int len;

	if (j->lck_call.state != RPCCONN_CALL_IDLE || j->lck_fh.len == 0) {
		return;
	}
	j->lck_gen++;
	j->lck_call.buf = j->lck_buf;
	j->lck_call.cap = sizeof(j->lck_buf);
	len = nfsc_write_encode(c, &j->lck_call, &j->lck_fh, 0,
				VDISK_LCK_RECORD_BYTES, FILE_SYNC, &data);
	if (len < 0 || vdisk_lck_record(j, data) < 0) {
		return;
	}
	rpcconn_submit(c, &j->lck_call, (size_t)len, vdisk_lck_done);
}

void vdisk_lck_remove(struct job *j)
{
	char errbuf[256];
	struct vdisk_ctx x = { .c = j->mnt->conns[0],
			       .timeout_ms = j->host->spec->timeout_ms,
			       .errbuf = errbuf,
			       .errlen = sizeof(errbuf),
			       .ds = j->mnt->name };
	REMOVE3args a;
	REMOVE3res r;

	if (j->lck_fh.len == 0) {
		return;
	}
	if (j->lck_call.state != RPCCONN_CALL_IDLE) {
		rpcconn_cancel(x.c, &j->lck_call);
	}
	/* A server that went away would cost a timeout per VMDK. */
	if (x.c->state != RPCCONN_UP) {
		return;
	}
	memset(&a, 0, sizeof(a));
	a.object.dir = nfsc_fh3(&j->dir_fh);
	a.object.name = j->lck_name;
	memset(&r, 0, sizeof(r));
	if (!vdisk_call(&x, NFSPROC3_REMOVE, "REMOVE", j->lck_name,
			(xdrproc_t)xdr_REMOVE3args, &a,
			(xdrproc_t)xdr_REMOVE3res, &r)) {
		xdr_free((xdrproc_t)xdr_REMOVE3res, (char *)&r);
	}
	j->lck_fh.len = 0;
}
