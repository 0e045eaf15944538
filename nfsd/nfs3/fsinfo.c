// SPDX-License-Identifier: Apache-2.0
/*
 * fsinfo: FSSTAT, FSINFO and PATHCONF (RFC 1813 3.3.18 to 3.3.20): what a
 * datastore holds and what the server accepts.  FSSTAT of a datastore
 * with a quota reports the quota as its size (usage.c).  FSINFO reports
 * the service's READ/WRITE limits; the rest is fixed by the local store's
 * POSIX semantics (names of 255 bytes, case preserved, no truncation).
 */
#include <errno.h>
#include <string.h>

#include "nfsd/nfs3/nfs3_int.h"

#define NFS3_IO_MULT_BYTES 4096u
#define NFS3_LINK_MAX 65000u /* ext4's, the usual datastore disk */

enum rpc_disposition nfs3__proc_fsstat(struct request *req, const void *argp,
				       void *resp)
{
	const FSSTAT3args *args = argp;
	FSSTAT3res *res = resp;
	struct store_fsstat fs;
	struct nfs3_file f;
	int err;

	err = nfs3__fh_resolve(req, &args->fsroot, false, &f);
	if (!err) {
		err = store_fsstat_get(f.st, &fs);
	}
	if (!err) {
		nfs3__usage_fsstat(&f, &fs);
	}
	res->status = nfs3__status_from_errno(err);
	if (res->status == NFS3_OK) {
		FSSTAT3resok *ok = &res->FSSTAT3res_u.resok;

		nfs3__post_op_fill(&f, &ok->obj_attributes);
		ok->tbytes = fs.total_bytes;
		ok->fbytes = fs.free_bytes;
		ok->abytes = fs.avail_bytes;
		ok->tfiles = fs.total_files;
		ok->ffiles = fs.free_files;
		ok->afiles = fs.avail_files;
		ok->invarsec = 0; /* volumes change at any time */
	} else {
		nfs3__post_op_fill(&f,
				   &res->FSSTAT3res_u.resfail.obj_attributes);
	}
	nfs3__file_release(&f);
	return RPC_REPLY;
}

enum rpc_disposition nfs3__proc_fsinfo(struct request *req, const void *argp,
				       void *resp)
{
	const FSINFO3args *args = argp;
	FSINFO3res *res = resp;
	const struct nfs3_service *svc = req->svc;
	struct nfs3_file f;
	int err;

	err = nfs3__fh_resolve(req, &args->fsroot, false, &f);
	res->status = nfs3__status_from_errno(err);
	if (res->status == NFS3_OK) {
		FSINFO3resok *ok = &res->FSINFO3res_u.resok;

		nfs3__post_op_fill(&f, &ok->obj_attributes);
		/* Preferred = maximum, as knfsd: large transfers cost fewer
		 * calls, and the limits are the ones the handlers apply. */
		ok->rtmax = nfs3__read_limit(req);
		ok->rtpref = ok->rtmax;
		ok->rtmult = NFS3_IO_MULT_BYTES;
		ok->wtmax = nfs3__write_limit(req);
		ok->wtpref = ok->wtmax;
		ok->wtmult = NFS3_IO_MULT_BYTES;
		ok->dtpref = svc->dir_pref_bytes < request_max_payload(req)
				     ? svc->dir_pref_bytes
				     : request_max_payload(req);
		ok->maxfilesize = store_max_file_bytes(f.st);
		ok->time_delta.seconds = 0;
		ok->time_delta.nseconds = 1;
		ok->properties = FSF3_LINK | FSF3_SYMLINK | FSF3_HOMOGENEOUS |
				 FSF3_CANSETTIME;
	} else {
		nfs3__post_op_fill(&f,
				   &res->FSINFO3res_u.resfail.obj_attributes);
	}
	nfs3__file_release(&f);
	return RPC_REPLY;
}

enum rpc_disposition nfs3__proc_pathconf(struct request *req, const void *argp,
					 void *resp)
{
	const PATHCONF3args *args = argp;
	PATHCONF3res *res = resp;
	struct nfs3_file f;
	int err;

	err = nfs3__fh_resolve(req, &args->object, false, &f);
	res->status = nfs3__status_from_errno(err);
	if (res->status == NFS3_OK) {
		PATHCONF3resok *ok = &res->PATHCONF3res_u.resok;

		nfs3__post_op_fill(&f, &ok->obj_attributes);
		ok->linkmax = NFS3_LINK_MAX;
		ok->name_max = STORE_NAME_MAX;
		ok->no_trunc = TRUE;
		ok->chown_restricted = TRUE;
		ok->case_insensitive = FALSE;
		ok->case_preserving = TRUE;
	} else {
		nfs3__post_op_fill(&f,
				   &res->PATHCONF3res_u.resfail.obj_attributes);
	}
	nfs3__file_release(&f);
	return RPC_REPLY;
}
