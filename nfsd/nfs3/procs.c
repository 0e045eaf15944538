// SPDX-License-Identifier: Apache-2.0
/*
 * procs: the NFSv3 procedure table (RFC 1813 3.3.0 to 3.3.21, one row per
 * procedure, indexed by its number) and the service's start-up: defaults
 * and the write verifier.
 */
#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "nfsd/base/base.h"
#include "nfsd/nfs3/nfs3_int.h"
#include "nfsd/nfs3/vaai_nas.h"
#include "nfsd/proto/xdr_empty.h"
#include "nfsd/proto/xdr_fast.h"

/* RFC 1813 3.3.0: does nothing, answers nothing but success. */
static enum rpc_disposition nfs3_proc_null(struct request *req,
					   const void *argp, void *resp)
{
	(void)req;
	(void)argp;
	(void)resp;
	return RPC_REPLY;
}

static const struct rpc_proc nfs3_procs[] = {
	[NFSPROC3_NULL] = {
		.name = "NULL",
		.handler = nfs3_proc_null,
		.decode = (xdrproc_t)xdr_empty,
		.encode = (xdrproc_t)xdr_empty,
	},
	[NFSPROC3_GETATTR] = {
		.name = "GETATTR",
		.handler = nfs3__proc_getattr,
		.decode = (xdrproc_t)nfs3__xdr_GETATTR3args,
		.encode = (xdrproc_t)xdr_GETATTR3res,
		.args_size = sizeof(struct nfs3_getattr_args),
		.res_size = sizeof(GETATTR3res),
		.trace_res = nfs3__trace_res_status,
	},
	[NFSPROC3_SETATTR] = {
		.non_idempotent = true,
		.name = "SETATTR",
		.handler = nfs3__proc_setattr,
		.decode = (xdrproc_t)xdr_SETATTR3args,
		.encode = (xdrproc_t)xdr_SETATTR3res,
		.args_size = sizeof(SETATTR3args),
		.res_size = sizeof(SETATTR3res),
		.trace_args = nfs3__trace_args_setattr,
		.trace_res = nfs3__trace_res_status,
	},
	[NFSPROC3_LOOKUP] = {
		.name = "LOOKUP",
		.handler = nfs3__proc_lookup,
		.decode = (xdrproc_t)nfs3__xdr_LOOKUP3args,
		.encode = (xdrproc_t)xdr_LOOKUP3res,
		.args_size = sizeof(struct nfs3_lookup_args),
		.res_size = sizeof(struct nfs3_lookup_res),
		.trace_args = nfs3__trace_args_dirop,
		.trace_res = nfs3__trace_res_status,
	},
	[NFSPROC3_ACCESS] = {
		.name = "ACCESS",
		.handler = nfs3__proc_access,
		.decode = (xdrproc_t)nfs3__xdr_ACCESS3args,
		.encode = (xdrproc_t)xdr_ACCESS3res,
		.args_size = sizeof(struct nfs3_access_args),
		.res_size = sizeof(ACCESS3res),
		.trace_args = nfs3__trace_args_access,
		.trace_res = nfs3__trace_res_status,
	},
	[NFSPROC3_READLINK] = {
		.name = "READLINK",
		.handler = nfs3__proc_readlink,
		.release = nfs3__readlink_release,
		.decode = (xdrproc_t)xdr_READLINK3args,
		.encode = (xdrproc_t)xdr_READLINK3res,
		.args_size = sizeof(READLINK3args),
		.res_size = sizeof(READLINK3res),
		.trace_res = nfs3__trace_res_status,
	},
	[NFSPROC3_READ] = {
		.name = "READ",
		.handler = nfs3__proc_read,
		.release = nfs3__read_release,
		.decode = (xdrproc_t)nfs3__xdr_READ3args,
		.encode = (xdrproc_t)xdr_READ3res,
		.encode_head = (xdrproc_t)xdr_READ3res_head,
		.args_size = sizeof(struct nfs3_read_args),
		.res_size = sizeof(READ3res),
		.trace_args = nfs3__trace_args_io,
		.trace_res = nfs3__trace_res_read,
	},
	[NFSPROC3_WRITE] = {
		.non_idempotent = true,
		.name = "WRITE",
		.handler = nfs3__proc_write,
		.decode = (xdrproc_t)nfs3__xdr_WRITE3args,
		.encode = (xdrproc_t)xdr_WRITE3res,
		.args_size = sizeof(struct nfs3_write_args),
		.args_borrow_record = true,
		.res_size = sizeof(WRITE3res),
		.trace_args = nfs3__trace_args_write,
		.trace_res = nfs3__trace_res_write,
	},
	[NFSPROC3_CREATE] = {
		.non_idempotent = true,
		.name = "CREATE",
		.handler = nfs3__proc_create,
		.release = nfs3__create_release,
		.decode = (xdrproc_t)nfs3__xdr_CREATE3args,
		.encode = (xdrproc_t)xdr_CREATE3res,
		.args_size = sizeof(CREATE3args),
		.res_size = sizeof(CREATE3res),
		.trace_args = nfs3__trace_args_dirop,
		.trace_res = nfs3__trace_res_status,
	},
	[NFSPROC3_MKDIR] = {
		.non_idempotent = true,
		.name = "MKDIR",
		.handler = nfs3__proc_mkdir,
		.release = nfs3__mkdir_release,
		.decode = (xdrproc_t)nfs3__xdr_MKDIR3args,
		.encode = (xdrproc_t)xdr_MKDIR3res,
		.args_size = sizeof(MKDIR3args),
		.res_size = sizeof(MKDIR3res),
		.trace_args = nfs3__trace_args_dirop,
		.trace_res = nfs3__trace_res_status,
	},
	[NFSPROC3_SYMLINK] = {
		.non_idempotent = true,
		.name = "SYMLINK",
		.handler = nfs3__proc_symlink,
		.release = nfs3__symlink_release,
		.decode = (xdrproc_t)nfs3__xdr_SYMLINK3args,
		.encode = (xdrproc_t)xdr_SYMLINK3res,
		.args_size = sizeof(SYMLINK3args),
		.res_size = sizeof(SYMLINK3res),
		.trace_args = nfs3__trace_args_symlink,
		.trace_res = nfs3__trace_res_status,
	},
	[NFSPROC3_MKNOD] = {
		.non_idempotent = true,
		.name = "MKNOD",
		.handler = nfs3__proc_mknod,
		.release = nfs3__mknod_release,
		.decode = (xdrproc_t)nfs3__xdr_MKNOD3args,
		.encode = (xdrproc_t)xdr_MKNOD3res,
		.args_size = sizeof(MKNOD3args),
		.res_size = sizeof(MKNOD3res),
		.trace_args = nfs3__trace_args_dirop,
		.trace_res = nfs3__trace_res_status,
	},
	[NFSPROC3_REMOVE] = {
		.non_idempotent = true,
		.name = "REMOVE",
		.handler = nfs3__proc_remove,
		.decode = (xdrproc_t)nfs3__xdr_REMOVE3args,
		.encode = (xdrproc_t)xdr_REMOVE3res,
		.args_size = sizeof(REMOVE3args),
		.res_size = sizeof(REMOVE3res),
		.trace_args = nfs3__trace_args_dirop,
		.trace_res = nfs3__trace_res_status,
	},
	[NFSPROC3_RMDIR] = {
		.non_idempotent = true,
		.name = "RMDIR",
		.handler = nfs3__proc_rmdir,
		.decode = (xdrproc_t)nfs3__xdr_RMDIR3args,
		.encode = (xdrproc_t)xdr_RMDIR3res,
		.args_size = sizeof(RMDIR3args),
		.res_size = sizeof(RMDIR3res),
		.trace_args = nfs3__trace_args_dirop,
		.trace_res = nfs3__trace_res_status,
	},
	[NFSPROC3_RENAME] = {
		.non_idempotent = true,
		.name = "RENAME",
		.handler = nfs3__proc_rename,
		.decode = (xdrproc_t)nfs3__xdr_RENAME3args,
		.encode = (xdrproc_t)xdr_RENAME3res,
		.args_size = sizeof(RENAME3args),
		.res_size = sizeof(RENAME3res),
		.trace_args = nfs3__trace_args_rename,
		.trace_res = nfs3__trace_res_status,
	},
	[NFSPROC3_LINK] = {
		.non_idempotent = true,
		.name = "LINK",
		.handler = nfs3__proc_link,
		.decode = (xdrproc_t)nfs3__xdr_LINK3args,
		.encode = (xdrproc_t)xdr_LINK3res,
		.args_size = sizeof(LINK3args),
		.res_size = sizeof(LINK3res),
		.trace_args = nfs3__trace_args_link,
		.trace_res = nfs3__trace_res_status,
	},
	[NFSPROC3_READDIR] = {
		.name = "READDIR",
		.handler = nfs3__proc_readdir,
		.release = nfs3__readdir_release,
		.decode = (xdrproc_t)xdr_READDIR3args,
		.encode = (xdrproc_t)xdr_READDIR3res,
		.args_size = sizeof(READDIR3args),
		.res_size = sizeof(READDIR3res),
		.trace_args = nfs3__trace_args_readdir,
		.trace_res = nfs3__trace_res_readdir,
	},
	[NFSPROC3_READDIRPLUS] = {
		.name = "READDIRPLUS",
		.handler = nfs3__proc_readdirplus,
		.release = nfs3__readdirplus_release,
		.decode = (xdrproc_t)xdr_READDIRPLUS3args,
		.encode = (xdrproc_t)xdr_READDIRPLUS3res,
		.args_size = sizeof(READDIRPLUS3args),
		.res_size = sizeof(READDIRPLUS3res),
		.trace_args = nfs3__trace_args_readdirplus,
		.trace_res = nfs3__trace_res_readdirplus,
	},
	[NFSPROC3_FSSTAT] = {
		.name = "FSSTAT",
		.handler = nfs3__proc_fsstat,
		.decode = (xdrproc_t)xdr_FSSTAT3args,
		.encode = (xdrproc_t)xdr_FSSTAT3res,
		.args_size = sizeof(FSSTAT3args),
		.res_size = sizeof(FSSTAT3res),
		.trace_res = nfs3__trace_res_status,
	},
	[NFSPROC3_FSINFO] = {
		.name = "FSINFO",
		.handler = nfs3__proc_fsinfo,
		.decode = (xdrproc_t)xdr_FSINFO3args,
		.encode = (xdrproc_t)xdr_FSINFO3res,
		.args_size = sizeof(FSINFO3args),
		.res_size = sizeof(FSINFO3res),
		.trace_res = nfs3__trace_res_status,
	},
	[NFSPROC3_PATHCONF] = {
		.name = "PATHCONF",
		.handler = nfs3__proc_pathconf,
		.decode = (xdrproc_t)xdr_PATHCONF3args,
		.encode = (xdrproc_t)xdr_PATHCONF3res,
		.args_size = sizeof(PATHCONF3args),
		.res_size = sizeof(PATHCONF3res),
		.trace_res = nfs3__trace_res_status,
	},
	[NFSPROC3_COMMIT] = {
		.non_idempotent = true,
		.name = "COMMIT",
		.handler = nfs3__proc_commit,
		.decode = (xdrproc_t)nfs3__xdr_COMMIT3args,
		.encode = (xdrproc_t)xdr_COMMIT3res,
		.args_size = sizeof(struct nfs3_commit_args),
		.res_size = sizeof(COMMIT3res),
		.trace_args = nfs3__trace_args_io,
		.trace_res = nfs3__trace_res_status,
	},
	/* Not RFC 1813's: VAAI-NAS in-band (vaai.c).  Past it, 23 and up,
	 * PROC_UNAVAIL as before. */
	[VAAI_NAS_PROC] = {
		.non_idempotent = true,
		.name = "VAAI_NAS",
		.handler = nfs3__proc_vaai,
		.decode = (xdrproc_t)vaai_nas_xdr_args,
		.encode = (xdrproc_t)vaai_nas_xdr_res,
		.args_size = sizeof(struct vaai_nas_args),
		.res_size = sizeof(struct vaai_nas_res),
		.trace_res = nfs3__trace_res_status,
	},
};

_Static_assert(sizeof(struct vaai_nas_args) <= NFS3_ARGS_MAX_BYTES,
	       "NFS3_ARGS_MAX_BYTES must hold VAAI-NAS's arguments");
_Static_assert(sizeof(struct nfs3_lookup_args) <= NFS3_ARGS_MAX_BYTES,
	       "NFS3_ARGS_MAX_BYTES must hold the largest arguments");
_Static_assert(VAAI_NAS_PROC == NFSPROC3_COMMIT + 1 &&
		       ARRAY_SIZE(nfs3_procs) == VAAI_NAS_PROC + 1,
	       "one row per NFSv3 procedure, and VAAI-NAS's after them");
_Static_assert(NFS3_SERVICE_PROG == NFS_PROGRAM && NFS3_SERVICE_VERS == NFS_V3,
	       "nfs3.h names the program of nfs3_prot.x");

int nfs3_service_init(struct nfs3_service *svc,
		      const struct export_table *exports)
{
	uint32_t start = (uint32_t)time(NULL);
	ssize_t n;

	memset(svc, 0, sizeof(*svc));
	svc->exports = exports;
	svc->max_read_bytes = NFS3_SERVICE_IO_MAX_BYTES;
	svc->max_write_bytes = NFS3_SERVICE_IO_MAX_BYTES;
	svc->dir_pref_bytes = NFS3_SERVICE_DIR_PREF_BYTES;
	svc->max_dir_bytes = NFS3_SERVICE_IO_MAX_BYTES;
	svc->read_zero_copy = true;
	svc->read_zero_copy_min_bytes = NFS3_SERVICE_ZERO_COPY_MIN_BYTES;
	/* Start time in the first half, so two starts in the same second
	 * still differ by the random half, and vice versa. */
	memcpy(svc->write_verf, &start, sizeof(start));
	n = getrandom(svc->write_verf + 4, 4, 0);
	if (n < 0) {
		return -errno;
	}
	if (n != 4) {
		return -EIO;
	}
	return 0;
}

void nfs3_write_verf(const struct nfs3_service *svc, const struct export *exp,
		     char out[8])
{
	/* XOR with a datastore's own constant: each generation gives it a
	 * verifier it never had before, and datastores' verifiers differ. */
	uint32_t gen = atomic_load(&exp->write_verf_gen);
	uint32_t mix = gen ^ (exp->id << 8) ^ (exp->id >> 24);

	memcpy(out, svc->write_verf, 8);
	for (int i = 0; i < 4; i++) {
		out[4 + i] =
			(char)((uint8_t)out[4 + i] ^ (uint8_t)(mix >> (8 * i)));
	}
}

void nfs3_program_init(struct rpc_program *prog, struct nfs3_service *svc)
{
	memset(prog, 0, sizeof(*prog));
	prog->name = "nfs";
	prog->prog = NFS3_SERVICE_PROG;
	prog->vers = NFS3_SERVICE_VERS;
	prog->procs = nfs3_procs;
	prog->nprocs = ARRAY_SIZE(nfs3_procs);
	prog->ctx = svc;
	prog->charge = nfs3__charge;
	prog->offload = nfs3__offload;
}
