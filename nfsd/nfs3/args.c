/*
 * args: decoders for the NFSv3 arguments that carry a filename3 or an
 * nfspath3 (RFC 1813 2.5; LOOKUP, CREATE, MKDIR, SYMLINK, MKNOD, REMOVE,
 * RMDIR, RENAME, LINK).  They decode what the generated routines decode,
 * with one more rule: a name or path holding a NUL byte fails, so the call
 * gets GARBAGE_ARGS (as knfsd's svcxdr_decode_filename3()).  The generated
 * xdr_string() keeps the bytes after a NUL and the handlers read the name
 * as a C string, so "a\0b" would be taken for "a": REMOVE would remove "a".
 * Encoding and freeing are the generated routines' own.
 */
#include <stdlib.h>

#include "nfsd/nfs3/nfs3_int.h"
#include "nfsd/proto/xdr_cstring.h"

static bool_t nfs3_xdr_diropargs3(XDR *xdrs, diropargs3 *objp)
{
	return xdr_nfs_fh3(xdrs, &objp->dir) &&
	       xdr_cstring(xdrs, &objp->name, NFS3_NAMELEN_BOUND);
}

bool_t nfs3__xdr_LOOKUP3args(XDR *xdrs, LOOKUP3args *objp)
{
	return nfs3_xdr_diropargs3(xdrs, &objp->what);
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
 * WRITE3args, decoding the data into an uninitialised buffer: xdr_bytes()
 * calloc()s it, and zeroing a megabyte that the next instruction
 * overwrites is a fifth of a WRITE's time in user space (docs/bench.md).
 * Encoding and freeing are the generated routine's own (free() either way).
 */
bool_t nfs3__xdr_WRITE3args(XDR *xdrs, WRITE3args *objp)
{
	u_int len;

	if (xdrs->x_op != XDR_DECODE)
		return xdr_WRITE3args(xdrs, objp);
	if (!xdr_nfs_fh3(xdrs, &objp->file) ||
	    !xdr_offset3(xdrs, &objp->offset) ||
	    !xdr_count3(xdrs, &objp->count) ||
	    !xdr_stable_how(xdrs, &objp->stable) || !xdr_u_int(xdrs, &len))
		return FALSE;
	if (len > NFS3_DATA_BOUND)
		return FALSE;
	objp->data.data_val = malloc(len ? len : 1);
	if (!objp->data.data_val)
		return FALSE;
	objp->data.data_len = len;
	return xdr_opaque(xdrs, objp->data.data_val, len);
}
