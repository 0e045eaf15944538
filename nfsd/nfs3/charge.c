// SPDX-License-Identifier: Apache-2.0
/*
 * charge: what an NFSv3 call costs in the traffic model (traffic.h), named
 * before its handler runs so that it can wait in its flow's queue.  Every
 * procedure but NULL carries the handle it is about as the first member
 * of its arguments (diropargs3 starts with its directory's), so the
 * datastore comes from that handle's export id alone, without the store.
 * READ and WRITE pay their byte count; every call pays one op, VAAI-NAS's
 * procedure 22 too (its handle is the one its command is about).
 */
#include <stddef.h>

#include "nfsd/nfs3/nfs3_int.h"
#include "nfsd/nfs3/vaai_nas.h"

_Static_assert(offsetof(GETATTR3args, object) == 0 &&
		       offsetof(SETATTR3args, object) == 0 &&
		       offsetof(LOOKUP3args, what) == 0 &&
		       offsetof(ACCESS3args, object) == 0 &&
		       offsetof(READLINK3args, symlink) == 0 &&
		       offsetof(READ3args, file) == 0 &&
		       offsetof(WRITE3args, file) == 0 &&
		       offsetof(CREATE3args, where) == 0 &&
		       offsetof(MKDIR3args, where) == 0 &&
		       offsetof(SYMLINK3args, where) == 0 &&
		       offsetof(MKNOD3args, where) == 0 &&
		       offsetof(REMOVE3args, object) == 0 &&
		       offsetof(RMDIR3args, object) == 0 &&
		       offsetof(RENAME3args, from) == 0 &&
		       offsetof(LINK3args, file) == 0 &&
		       offsetof(READDIR3args, dir) == 0 &&
		       offsetof(READDIRPLUS3args, dir) == 0 &&
		       offsetof(FSSTAT3args, fsroot) == 0 &&
		       offsetof(FSINFO3args, fsroot) == 0 &&
		       offsetof(PATHCONF3args, object) == 0 &&
		       offsetof(COMMIT3args, file) == 0 &&
		       offsetof(diropargs3, dir) == 0 &&
		       offsetof(struct vaai_nas_args, dst) == 0,
	       "the arguments of every procedure but NULL start with a handle");

static uint32_t nfs3_charge_min(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* The export the handle starting @args names (served or not), or NULL:
 * NULL's arguments, a handle that is not ours.  Found once per call and
 * kept on the request (nfs3__fh_request_export()): the charge, the
 * offload hook and the handler share one lookup. */
static struct export *nfs3_charge_export(struct request *req, const void *args)
{
	int err;

	if (req->proc == NFSPROC3_NULL) {
		return NULL;
	}
	return nfs3__fh_request_export(req, (const nfs_fh3 *)args, &err);
}

bool nfs3__offload(struct request *req, const void *args)
{
	const struct export *exp = nfs3_charge_export(req, args);
	const struct store *st = exp ? export_store(exp) : NULL;

	/* VAAI-NAS's commands may block on a local store too (FIEMAP of a
	 * large disk, fallocate of all of it): rare calls, off the loop. */
	return st && (st->blocking || req->proc == VAAI_NAS_PROC);
}

bool nfs3__charge(struct request *req, const void *args)
{
	const struct export *exp = nfs3_charge_export(req, args);

	if (!exp || !export_store(exp)) {
		return false;
	}
	req->export_name = exp->name;
	req->cost.bytes = 0;
	req->cost.op = TRAFFIC_OP_OTHER;
	if (req->proc == NFSPROC3_READ) {
		const READ3args *a = args;

		req->cost.op = TRAFFIC_OP_READ;
		req->cost.bytes =
			nfs3_charge_min(a->count, nfs3__read_limit(req));
	} else if (req->proc == NFSPROC3_WRITE) {
		const WRITE3args *a = args;

		req->cost.op = TRAFFIC_OP_WRITE;
		req->cost.bytes =
			nfs3_charge_min(a->count, nfs3__write_limit(req));
	}
	return true;
}
