/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nfs3_int.h: declarations shared by the files of nfsd/nfs3 and nowhere
 * else (tests include it to reach the handlers through the table).  The
 * handlers have the rpc_handler_fn shape; procs.c puts them in the table.
 */
#ifndef DSNFS_NFS3_INT_H
#define DSNFS_NFS3_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nfs3_prot.h"
#include "nfsd/export/export.h"
#include "nfsd/nfs3/nfs3.h"
#include "nfsd/rpc/request.h"
#include "nfsd/store/store.h"

/* Encoded XDR sizes used to fill READDIR pages (RFC 1813 2.5, 3.3.16). */
#define NFS3_XDR_FATTR3_BYTES 84
#define NFS3_XDR_POST_OP_ATTR_BYTES (4 + NFS3_XDR_FATTR3_BYTES)
#define NFS3_XDR_POST_OP_FH_BYTES (4 + 4 + STORE_FH_MAX)

/*
 * One file a call is about: its export, its store and the caller's
 * credentials squashed for that export.  cred.groups points into groups[],
 * so a struct nfs3_file is never copied; it lives on the handler's stack.
 */
struct nfs3_file {
	struct export *exp; /* borrowed from the export table */
	struct store *st; /* exp->store, borrowed */
	bool read_only; /* the export's option when the call was checked */
	bool snapshot_dir; /* and its snapshot_dir */
	struct store_obj *obj; /* owned reference, NULL until resolved */
	struct store_cred cred; /* the caller as this export sees it */
	uint32_t groups[RPC_AUTH_SYS_MAX_GROUPS];
};

/* The READ or WRITE size limit in force for a configured one: 0 or more
 * than the data<> decode bound means the bound. */
static inline uint32_t nfs3__io_limit(uint32_t configured_bytes)
{
	if (configured_bytes == 0 ||
	    configured_bytes > NFS3_SERVICE_IO_MAX_BYTES) {
		return NFS3_SERVICE_IO_MAX_BYTES;
	}
	return configured_bytes;
}

/* The READ and WRITE sizes @req may move: the configured limit, within
 * what its transport carries (32 KiB in a UDP datagram). */
static inline uint32_t nfs3__read_limit(const struct request *req)
{
	const struct nfs3_service *svc = req->svc;
	uint32_t lim = nfs3__io_limit(svc->max_read_bytes);
	uint32_t transport = request_max_payload(req);

	return transport < lim ? transport : lim;
}

static inline uint32_t nfs3__write_limit(const struct request *req)
{
	const struct nfs3_service *svc = req->svc;
	uint32_t lim = nfs3__io_limit(svc->max_write_bytes);
	uint32_t transport = request_max_payload(req);

	return transport < lim ? transport : lim;
}

/* How a procedure uses a name (name.c). */
enum nfs3_name_use {
	NFS3_NAME_LOOKUP, /* "." and ".." allowed */
	NFS3_NAME_CREATE, /* "." and ".." exist: -EEXIST */
	NFS3_NAME_REMOVE, /* "." and ".." cannot go: -EINVAL */
};

/* ---- fh.c ---------------------------------------------------------- */

/*
 * The live export whose id @fh carries (borrowed), found once per call and
 * kept on @req (req->export: the call's first export; the same @fh, in the
 * call's decoded arguments, is not even parsed again).  NULL with *err set
 * when @fh is not one of our handles (-STORE_EBADHANDLE), or with *err 0
 * when no live export has its id.  Any thread the call runs on.
 */
struct export *nfs3__fh_request_export(struct request *req, const nfs_fh3 *fh,
				       int *err);

/*
 * Finds the export of @fh and checks the caller against it, without
 * touching the store: the handle is ours (-STORE_EBADHANDLE when empty,
 * longer than STORE_FH_MAX or not in our format), its export exists
 * (-ESTALE when it was removed), the client is on its list (-EACCES) and,
 * when @modify, the export is writable (-EROFS).  Fills f->exp, f->st and
 * f->cred (squashed per export); f->obj stays NULL.  Sets req->export_name
 * and req->path_hint (the handle summary).  @fh is borrowed.  The export
 * and the caller's access come from req->export after the call's first
 * check (rpc/request.h): one lookup and one read of the options per call.
 */
int nfs3__fh_export(struct request *req, const nfs_fh3 *fh, bool modify,
		    struct nfs3_file *f);

/*
 * nfs3__fh_export() and then resolves the handle in the store: f->obj
 * returns owned (release with nfs3__file_release()).  Returns 0 or the
 * errors above, or the store's (-ESTALE for a file that is gone).  On
 * failure f->obj is NULL.
 */
int nfs3__fh_resolve(struct request *req, const nfs_fh3 *fh, bool modify,
		     struct nfs3_file *f);

/* nfs3__fh_resolve() and then the file's attributes into *a.  Returns 0,
 * the errors above or the store's; f->obj returns owned even on failure. */
int nfs3__fh_resolve_attr(struct request *req, const nfs_fh3 *fh, bool modify,
			  struct nfs3_file *f, struct store_attr *a);

/* Drops f->obj if any.  Safe on a zeroed or failed struct nfs3_file. */
void nfs3__file_release(struct nfs3_file *f);

/*
 * Sets @out to the handle of @obj in a new buffer: out->data.data_val
 * returns owned (free()).  Returns 0 or -ENOMEM.
 */
int nfs3__fh_dup(struct store *st, const struct store_obj *obj, nfs_fh3 *out);

/*
 * Sets @out to the handle of @obj written into @room (borrowed, must
 * outlive @out; NFS3_FHSIZE bytes, in the result: no allocation).
 * Nothing to free.
 */
void nfs3__fh_set(struct store *st, const struct store_obj *obj,
		  char room[NFS3_FHSIZE], nfs_fh3 *out);

/* Frees what nfs3__fh_dup() attached to @fh (NULL-safe) and clears it. */
void nfs3__fh_free(nfs_fh3 *fh);

/* Writes the short summary of @fh ("9a3f01c2": a hash of its bytes). */
void nfs3__fh_summary(const nfs_fh3 *fh, char *buf, size_t len);

/* Sets req->path_hint to @name (borrowed), cut to fit. */
void nfs3__hint_name(struct request *req, const char *name);

/* ---- charge.c ------------------------------------------------------ */

/*
 * The program's rpc_charge_fn: names the datastore of a decoded call from
 * its handle (every procedure but NULL starts with one) and its cost:
 * READ/WRITE their count (capped as the handlers cap it), others 0 bytes,
 * one op each.  False for NULL and for handles of no export of ours.
 */
bool nfs3__charge(struct request *req, const void *args);

/*
 * The program's rpc_offload_fn: true when the call's handle names a
 * datastore whose store blocks (store.blocking: the cephfs backend), or
 * for VAAI-NAS's procedure 22 on any datastore, so that the whole call
 * runs on a work thread.  Same handle rules as nfs3__charge().
 */
bool nfs3__offload(struct request *req, const void *args);

/* ---- usage.c ------------------------------------------------------- */

/* A file a REMOVE, RMDIR or RENAME is about to unlink. */
struct nfs3_victim {
	bool found;
	bool last_link; /* its allocation goes with this name */
	uint64_t fileid;
};

/*
 * Before a WRITE of @count at @off_bytes into f->obj (attributes @pre):
 * reserves what it may allocate in the export's quota.  Returns 0 with
 * *reserved_bytes (0 when nothing can grow or nothing is counted), or
 * -ENOSPC: the write would pass the quota and must not happen.
 */
int nfs3__usage_write_reserve(const struct nfs3_file *f,
			      const struct store_attr *pre, uint64_t off_bytes,
			      uint32_t count, uint64_t *reserved_bytes);

/* After that WRITE, done or failed: counts what it allocated (a stat of
 * the file, under the quota's lock) and gives the reservation back.
 * Returns true when it stat'ed the file: *post then holds its
 * attributes, the WRITE's post-op ones (no second stat for them). */
bool nfs3__usage_write_end(const struct nfs3_file *f,
			   const struct store_attr *pre,
			   uint64_t reserved_bytes, struct store_attr *post);

/* @obj (file @fileid, in f's export; borrowed, may be NULL) may have
 * allocated or freed space: re-measures it for the export's quota. */
void nfs3__usage_note(const struct nfs3_file *f, struct store_obj *obj,
		      uint64_t fileid);

/* Before unlinking @name from dir->obj: what the name is (v->found false
 * when it does not exist or nothing is counted). */
void nfs3__usage_victim(const struct nfs3_file *dir, const char *name,
			struct nfs3_victim *v);

/* The unlink succeeded: a last link's allocation leaves the count. */
void nfs3__usage_gone(const struct nfs3_file *dir, const struct nfs3_victim *v);

/* FSSTAT of a datastore with a quota: the quota is the size, and the
 * room left under it caps free and available bytes. */
void nfs3__usage_fsstat(const struct nfs3_file *f, struct store_fsstat *fs);

/* ---- name.c -------------------------------------------------------- */

/*
 * Checks a file name from the wire for @use: -EACCES when empty or when it
 * contains '/', -ENAMETOOLONG above STORE_NAME_MAX bytes, and the
 * "." / ".." rules of enum nfs3_name_use.  @name is borrowed (may be NULL).
 */
int nfs3__name_check(const char *name, enum nfs3_name_use use);

/* Whether @name in directory @dir (whose attributes are @dir_attr) is the
 * datastore's snapshot area, ROOT/.snapshot (snap.h): hidden from LOOKUP
 * and READDIR unless the export's snapshot_dir, never made, removed or
 * renamed by a client. */
bool nfs3__name_is_snapdir(const struct nfs3_file *dir,
			   const struct store_attr *dir_attr, const char *name);

/*
 * Looks @name up in the directory f->obj; "." answers the directory
 * itself.  *out returns owned (unref it).  The name must have passed
 * nfs3__name_check().
 */
int nfs3__name_lookup(const struct nfs3_file *dir, const char *name,
		      struct store_obj **out);

/* ---- access.c ------------------------------------------------------ */

/* The ACCESS3_* bits of @want that @cred is granted on a file with @a,
 * without MODIFY/EXTEND/DELETE when @read_only (RFC 1813 3.3.4). */
uint32_t nfs3__access_mask(const struct store_attr *a,
			   const struct store_cred *cred, uint32_t want,
			   bool read_only);

/* 0 or -EACCES: reading the data of a file or listing a directory (the
 * owner of a file that is not a directory always may). */
int nfs3__may_read(const struct store_attr *a, const struct store_cred *cred);

/* 0 or -EACCES: writing the data of a file (the owner of a file that is
 * not a directory always may). */
int nfs3__may_write(const struct store_attr *a, const struct store_cred *cred);

/* 0 or -EACCES: searching a directory (execute permission). */
int nfs3__may_lookup(const struct store_attr *dir,
		     const struct store_cred *cred);

/* 0 or -EACCES: adding or removing entries (write + execute). */
int nfs3__may_change_dir(const struct store_attr *dir,
			 const struct store_cred *cred);

/* 0 or -EACCES: removing @victim from a sticky directory @dir (01000):
 * only the owner of either or root may. */
int nfs3__may_unlink_sticky(const struct store_attr *dir,
			    const struct store_attr *victim,
			    const struct store_cred *cred);

/* 0, -EPERM or -EACCES: the VFS rules for chmod, chown, truncate and
 * utimes (only root gives files away; only the owner sets times). */
int nfs3__may_setattr(const struct store_attr *a,
		      const struct store_sattr *sattr,
		      const struct store_cred *cred);

/* ---- attr.c -------------------------------------------------------- */

/* Store attributes as the wire has them (times cut to 32-bit seconds). */
void nfs3__fattr_from_store(const struct store_attr *a, fattr3 *out);
/* post_op_attr / pre_op_attr (the wcc "before" half) that follow. */
void nfs3__post_op_from_attr(const struct store_attr *a, post_op_attr *out);
void nfs3__pre_op_from_attr(const struct store_attr *a, pre_op_attr *out);

/* getattr of f->obj.  Returns 0 or the store's error. */
int nfs3__getattr(const struct nfs3_file *f, struct store_attr *a);

/* Fills @out from f->obj's attributes now; attributes_follow = FALSE when
 * f->obj is NULL or getattr fails. */
void nfs3__post_op_fill(const struct nfs3_file *f, post_op_attr *out);

/* The "before" half of a wcc_data: reads f->obj's attributes into *pre
 * and fills out->before from them.  Returns 0 or the store's error. */
int nfs3__wcc_pre(const struct nfs3_file *f, struct store_attr *pre,
		  wcc_data *out);

/* The "after" half of a wcc_data, as nfs3__post_op_fill(). */
void nfs3__wcc_post(const struct nfs3_file *f, wcc_data *out);

/* sattr3 from the wire -> what to change in the store.  Returns 0, or
 * -EINVAL for a time_how the RFC does not define. */
int nfs3__sattr_to_store(const sattr3 *in, struct store_sattr *out);

/* ---- status.c ------------------------------------------------------ */

/* The one errno -> nfsstat3 map: 0 -> NFS3_OK, -STORE_E* -> their code,
 * anything unknown -> NFS3ERR_IO. */
nfsstat3 nfs3__status_from_errno(int err);

/* "NFS3_OK", "NFS3ERR_NOENT", ...; static strings. */
const char *nfs3__status_name(nfsstat3 status);

/* ---- handlers: lookup.c ------------------------------------------- */

enum rpc_disposition nfs3__proc_getattr(struct request *req, const void *argp,
					void *resp);
enum rpc_disposition nfs3__proc_setattr(struct request *req, const void *argp,
					void *resp);
enum rpc_disposition nfs3__proc_lookup(struct request *req, const void *argp,
				       void *resp);
enum rpc_disposition nfs3__proc_access(struct request *req, const void *argp,
				       void *resp);
enum rpc_disposition nfs3__proc_readlink(struct request *req, const void *argp,
					 void *resp);
void nfs3__readlink_release(struct request *req, void *resp);

/* ---- handlers: vaai.c, vaai_clone.c (VAAI-NAS, procedure 22) ------ */

struct vaai_nas_args;
struct vaai_nas_cmd_in;

enum rpc_disposition nfs3__proc_vaai(struct request *req, const void *argp,
				     void *resp);

/*
 * FCLONE: checks the call (dst a new, empty regular file the caller may
 * write, in a writable export; src a regular file of the same datastore
 * the caller may read) and starts the copy on the server's operations
 * (nfs3_service.ops), keyed by the destination's file id.  Returns 0
 * once it runs, or -errno with the reason in @errbuf; nothing is written
 * then.
 */
int nfs3__vaai_clone_start(struct request *req, const struct vaai_nas_args *a,
			   const struct vaai_nas_cmd_in *cmd, char *errbuf,
			   size_t errlen);

/* ---- handlers: rw.c ----------------------------------------------- */

enum rpc_disposition nfs3__proc_read(struct request *req, const void *argp,
				     void *resp);
enum rpc_disposition nfs3__proc_write(struct request *req, const void *argp,
				      void *resp);
enum rpc_disposition nfs3__proc_commit(struct request *req, const void *argp,
				       void *resp);
void nfs3__read_release(struct request *req, void *resp);

/* What nfs3__write_run() did with a WRITE. */
enum nfs3_write_outcome {
	/* Done, res filled (the error included): reply now. */
	NFS3_WRITE_REPLIED = 0,
	/* Written and logged, res filled as a success: the reply waits for
	 * the intent log's flush (request_park(); the flush may still turn
	 * it into an error). */
	NFS3_WRITE_PARKED,
	/* The store would block (with try_park only): nothing was done that
	 * needs undoing, res untouched; run the call on a work thread. */
	NFS3_WRITE_WOULD_BLOCK,
};

/*
 * The whole WRITE of @args into @res (the handle resolved, checked and
 * written), on the loop or on a work thread.  With @try_park (a stable
 * WRITE on the loop whose store has write_async and an intent log) the
 * store write does not block: PARKED or WOULD_BLOCK may come back.
 * Without it, always NFS3_WRITE_REPLIED.
 */
enum nfs3_write_outcome nfs3__write_run(struct request *req,
					const WRITE3args *args, WRITE3res *res,
					bool try_park);

/* ---- handlers: namespace.c ---------------------------------------- */

enum rpc_disposition nfs3__proc_create(struct request *req, const void *argp,
				       void *resp);
enum rpc_disposition nfs3__proc_mkdir(struct request *req, const void *argp,
				      void *resp);
enum rpc_disposition nfs3__proc_symlink(struct request *req, const void *argp,
					void *resp);
enum rpc_disposition nfs3__proc_mknod(struct request *req, const void *argp,
				      void *resp);
enum rpc_disposition nfs3__proc_remove(struct request *req, const void *argp,
				       void *resp);
enum rpc_disposition nfs3__proc_rmdir(struct request *req, const void *argp,
				      void *resp);
enum rpc_disposition nfs3__proc_rename(struct request *req, const void *argp,
				       void *resp);
enum rpc_disposition nfs3__proc_link(struct request *req, const void *argp,
				     void *resp);
void nfs3__create_release(struct request *req, void *resp);
void nfs3__mkdir_release(struct request *req, void *resp);
void nfs3__symlink_release(struct request *req, void *resp);
void nfs3__mknod_release(struct request *req, void *resp);

/* ---- handlers: readdir.c ------------------------------------------ */

enum rpc_disposition nfs3__proc_readdir(struct request *req, const void *argp,
					void *resp);
enum rpc_disposition nfs3__proc_readdirplus(struct request *req,
					    const void *argp, void *resp);
void nfs3__readdir_release(struct request *req, void *resp);
void nfs3__readdirplus_release(struct request *req, void *resp);

/* The cookie verifier of a directory with @fileid: constant, because store
 * cookies stay valid across directory changes (readdir.c). */
void nfs3__cookieverf(uint64_t fileid, cookieverf3 out);

/* ---- handlers: fsinfo.c ------------------------------------------- */

enum rpc_disposition nfs3__proc_fsstat(struct request *req, const void *argp,
				       void *resp);
enum rpc_disposition nfs3__proc_fsinfo(struct request *req, const void *argp,
				       void *resp);
enum rpc_disposition nfs3__proc_pathconf(struct request *req, const void *argp,
					 void *resp);

/* ---- trace.c: rpc_trace_fn per procedure family -------------------- */
/* Calls about one handle alone (GETATTR, READLINK, FS*, PATHCONF) have no
 * args trace: the dispatcher prints the handle summary as the hint. */

void nfs3__trace_args_setattr(const struct request *req, const void *args,
			      const void *res, char *buf, size_t len);
void nfs3__trace_args_access(const struct request *req, const void *args,
			     const void *res, char *buf, size_t len);
void nfs3__trace_args_io(const struct request *req, const void *args,
			 const void *res, char *buf, size_t len);
void nfs3__trace_args_write(const struct request *req, const void *args,
			    const void *res, char *buf, size_t len);
void nfs3__trace_args_dirop(const struct request *req, const void *args,
			    const void *res, char *buf, size_t len);
void nfs3__trace_args_symlink(const struct request *req, const void *args,
			      const void *res, char *buf, size_t len);
void nfs3__trace_args_rename(const struct request *req, const void *args,
			     const void *res, char *buf, size_t len);
void nfs3__trace_args_link(const struct request *req, const void *args,
			   const void *res, char *buf, size_t len);
void nfs3__trace_args_readdir(const struct request *req, const void *args,
			      const void *res, char *buf, size_t len);
void nfs3__trace_args_readdirplus(const struct request *req, const void *args,
				  const void *res, char *buf, size_t len);
void nfs3__trace_res_status(const struct request *req, const void *args,
			    const void *res, char *buf, size_t len);
void nfs3__trace_res_read(const struct request *req, const void *args,
			  const void *res, char *buf, size_t len);
void nfs3__trace_res_write(const struct request *req, const void *args,
			   const void *res, char *buf, size_t len);
void nfs3__trace_res_readdir(const struct request *req, const void *args,
			     const void *res, char *buf, size_t len);
void nfs3__trace_res_readdirplus(const struct request *req, const void *args,
				 const void *res, char *buf, size_t len);

/* ---- args.c ------------------------------------------------------- */

/*
 * The argument decoders of the procedures that take a name or a path: the
 * generated routines, except that on XDR_DECODE a filename3 or nfspath3
 * holding a NUL byte fails (the call gets GARBAGE_ARGS).  Encode and free
 * as the generated ones.  Return TRUE or FALSE as any xdrproc_t.
 */
bool_t nfs3__xdr_CREATE3args(XDR *xdrs, CREATE3args *objp);
bool_t nfs3__xdr_MKDIR3args(XDR *xdrs, MKDIR3args *objp);
bool_t nfs3__xdr_SYMLINK3args(XDR *xdrs, SYMLINK3args *objp);
bool_t nfs3__xdr_MKNOD3args(XDR *xdrs, MKNOD3args *objp);
bool_t nfs3__xdr_REMOVE3args(XDR *xdrs, REMOVE3args *objp);
bool_t nfs3__xdr_RMDIR3args(XDR *xdrs, RMDIR3args *objp);
bool_t nfs3__xdr_RENAME3args(XDR *xdrs, RENAME3args *objp);
bool_t nfs3__xdr_LINK3args(XDR *xdrs, LINK3args *objp);

/*
 * The arguments of the common calls as dispatch decodes them (their
 * rpc_proc.args_size): the wire struct first, so handlers see the RFC
 * type, then the room its handle (and LOOKUP's name) is decoded into, so
 * that decoding allocates nothing.  Their decoders point the fields at
 * that room on XDR_DECODE and free nothing on XDR_FREE (the pointers are
 * cleared); XDR_ENCODE is the generated routine's.  WRITE's data is not
 * copied at all: data.data_val borrows the XDR buffer, which must outlive
 * the arguments (dispatch keeps the record: rpc_proc.args_borrow_record).
 * Return TRUE or FALSE as any xdrproc_t.
 */
struct nfs3_getattr_args {
	GETATTR3args a;
	char fh[NFS3_FHSIZE];
};
struct nfs3_access_args {
	ACCESS3args a;
	char fh[NFS3_FHSIZE];
};
struct nfs3_read_args {
	READ3args a;
	char fh[NFS3_FHSIZE];
};
struct nfs3_commit_args {
	COMMIT3args a;
	char fh[NFS3_FHSIZE];
};
struct nfs3_write_args {
	WRITE3args a;
	char fh[NFS3_FHSIZE];
};
/* LOOKUP also refuses a name holding a NUL byte (as the decoders above). */
struct nfs3_lookup_args {
	LOOKUP3args a;
	char fh[NFS3_FHSIZE];
	char name[NFS3_NAMELEN_BOUND + 1];
};

/* LOOKUP's result as dispatch allocates it (rpc_proc.res_size): the
 * handle it returns is written into fh (nfs3__fh_set), not allocated. */
struct nfs3_lookup_res {
	LOOKUP3res r;
	char fh[NFS3_FHSIZE];
};

bool_t nfs3__xdr_GETATTR3args(XDR *xdrs, struct nfs3_getattr_args *objp);
bool_t nfs3__xdr_ACCESS3args(XDR *xdrs, struct nfs3_access_args *objp);
bool_t nfs3__xdr_READ3args(XDR *xdrs, struct nfs3_read_args *objp);
bool_t nfs3__xdr_COMMIT3args(XDR *xdrs, struct nfs3_commit_args *objp);
bool_t nfs3__xdr_WRITE3args(XDR *xdrs, struct nfs3_write_args *objp);
bool_t nfs3__xdr_LOOKUP3args(XDR *xdrs, struct nfs3_lookup_args *objp);

#endif
