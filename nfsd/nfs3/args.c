// SPDX-License-Identifier: Apache-2.0
/*
 * args: argument decoders that differ from the generated ones.
 *
 * Those of the procedures that carry a filename3 or an nfspath3 (RFC 1813
 * 2.5; LOOKUP, CREATE, MKDIR, SYMLINK, MKNOD, REMOVE, RMDIR, RENAME, LINK)
 * decode what the generated routines decode, with one more rule: a name
 * or path holding a NUL byte fails, so the call gets GARBAGE_ARGS (as
 * knfsd's svcxdr_decode_filename3()).  The generated xdr_string() keeps
 * the bytes after a NUL and the handlers read the name as a C string, so
 * "a\0b" would be taken for "a": REMOVE would remove "a".  Encoding and
 * freeing are the generated routines' own.
 *
 * Those of the common calls (GETATTR, ACCESS, LOOKUP, READ, WRITE, COMMIT)
 * allocate nothing: the handle and name land in room after the wire struct
 * and WRITE's data stays in the record (nfs3_int.h).
 */

#include "nfsd/nfs3/nfs3_int.h"
#include "nfsd/proto/xdr_cstring.h"

static bool_t nfs3_xdr_diropargs3(XDR *xdrs, diropargs3 *objp)
{
	return xdr_nfs_fh3(xdrs, &objp->dir) &&
	       xdr_cstring(xdrs, &objp->name, NFS3_NAMELEN_BOUND);
}

bool_t nfs3__xdr_CREATE3args(XDR *xdrs, CREATE3args *objp)
{
	return nfs3_xdr_diropargs3(xdrs, &objp->where) &&
	       xdr_createhow3(xdrs, &objp->how);
}

bool_t nfs3__xdr_MKDIR3args(XDR *xdrs, MKDIR3args *objp)
{
	return nfs3_xdr_diropargs3(xdrs, &objp->where) &&
	       xdr_sattr3(xdrs, &objp->attributes);
}

bool_t nfs3__xdr_SYMLINK3args(XDR *xdrs, SYMLINK3args *objp)
{
	return nfs3_xdr_diropargs3(xdrs, &objp->where) &&
	       xdr_sattr3(xdrs, &objp->symlink.symlink_attributes) &&
	       xdr_cstring(xdrs, &objp->symlink.symlink_data,
			   NFS3_PATHLEN_BOUND);
}

bool_t nfs3__xdr_MKNOD3args(XDR *xdrs, MKNOD3args *objp)
{
	return nfs3_xdr_diropargs3(xdrs, &objp->where) &&
	       xdr_mknoddata3(xdrs, &objp->what);
}

bool_t nfs3__xdr_REMOVE3args(XDR *xdrs, REMOVE3args *objp)
{
	return nfs3_xdr_diropargs3(xdrs, &objp->object);
}

bool_t nfs3__xdr_RMDIR3args(XDR *xdrs, RMDIR3args *objp)
{
	return nfs3_xdr_diropargs3(xdrs, &objp->object);
}

bool_t nfs3__xdr_RENAME3args(XDR *xdrs, RENAME3args *objp)
{
	return nfs3_xdr_diropargs3(xdrs, &objp->from) &&
	       nfs3_xdr_diropargs3(xdrs, &objp->to);
}

bool_t nfs3__xdr_LINK3args(XDR *xdrs, LINK3args *objp)
{
	return xdr_nfs_fh3(xdrs, &objp->file) &&
	       nfs3_xdr_diropargs3(xdrs, &objp->link);
}

/*
 * The handle of a common call, decoded into @room (NFS3_FHSIZE bytes:
 * xdr_bytes() decodes into a buffer that is already there, after checking
 * the length against the same bound).  XDR_FREE frees nothing.
 */
static bool_t nfs3_xdr_fh_in(XDR *xdrs, nfs_fh3 *fh, char *room)
{
	switch (xdrs->x_op) {
	case XDR_DECODE:
		fh->data.data_val = room;
		break;
	case XDR_FREE:
		fh->data.data_val = NULL;
		fh->data.data_len = 0;
		return TRUE;
	case XDR_ENCODE:
		break;
	}
	return xdr_nfs_fh3(xdrs, fh);
}

bool_t nfs3__xdr_GETATTR3args(XDR *xdrs, struct nfs3_getattr_args *objp)
{
	return nfs3_xdr_fh_in(xdrs, &objp->a.object, objp->fh);
}

bool_t nfs3__xdr_ACCESS3args(XDR *xdrs, struct nfs3_access_args *objp)
{
	return nfs3_xdr_fh_in(xdrs, &objp->a.object, objp->fh) &&
	       xdr_uint32(xdrs, &objp->a.access);
}

bool_t nfs3__xdr_READ3args(XDR *xdrs, struct nfs3_read_args *objp)
{
	return nfs3_xdr_fh_in(xdrs, &objp->a.file, objp->fh) &&
	       xdr_offset3(xdrs, &objp->a.offset) &&
	       xdr_count3(xdrs, &objp->a.count);
}

bool_t nfs3__xdr_COMMIT3args(XDR *xdrs, struct nfs3_commit_args *objp)
{
	return nfs3_xdr_fh_in(xdrs, &objp->a.file, objp->fh) &&
	       xdr_offset3(xdrs, &objp->a.offset) &&
	       xdr_count3(xdrs, &objp->a.count);
}

bool_t nfs3__xdr_LOOKUP3args(XDR *xdrs, struct nfs3_lookup_args *objp)
{
	diropargs3 *what = &objp->a.what;

	if (!nfs3_xdr_fh_in(xdrs, &what->dir, objp->fh)) {
		return FALSE;
	}
	switch (xdrs->x_op) {
	case XDR_DECODE:
		what->name = objp->name; /* NFS3_NAMELEN_BOUND + 1 bytes */
		break;
	case XDR_FREE:
		what->name = NULL;
		return TRUE;
	case XDR_ENCODE:
		break;
	}
	return xdr_cstring(xdrs, &what->name, NFS3_NAMELEN_BOUND);
}

/*
 * WRITE3args with the data left where it is: data.data_val points into
 * the XDR buffer (xdr_inline(), bounded by NFS3_DATA_BOUND and by what the
 * buffer holds), so neither a copy nor a zeroed buffer (xdr_bytes() would
 * calloc one: a fifth of a WRITE's time in user space, docs/bench.md).
 */
bool_t nfs3__xdr_WRITE3args(XDR *xdrs, struct nfs3_write_args *objp)
{
	WRITE3args *a = &objp->a;
	int32_t *data;
	u_int len;

	if (xdrs->x_op == XDR_FREE) {
		a->data.data_val = NULL;
		a->data.data_len = 0;
		return nfs3_xdr_fh_in(xdrs, &a->file, objp->fh);
	}
	if (!nfs3_xdr_fh_in(xdrs, &a->file, objp->fh) ||
	    !xdr_offset3(xdrs, &a->offset) || !xdr_count3(xdrs, &a->count) ||
	    !xdr_stable_how(xdrs, &a->stable)) {
		return FALSE;
	}
	if (xdrs->x_op == XDR_ENCODE) {
		return xdr_bytes(xdrs, &a->data.data_val, &a->data.data_len,
				 NFS3_DATA_BOUND);
	}
	if (!xdr_u_int(xdrs, &len) || len > NFS3_DATA_BOUND) {
		return FALSE;
	}
	if (len == 0) {
		a->data.data_val = objp->fh; /* any valid pointer, 0 bytes */
		a->data.data_len = 0;
		return TRUE;
	}
	data = xdr_inline(xdrs, (len + 3) & ~3u);
	if (!data) {
		return FALSE;
	}
	a->data.data_val = (char *)data;
	a->data.data_len = len;
	return TRUE;
}
