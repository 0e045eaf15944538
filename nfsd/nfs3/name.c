// SPDX-License-Identifier: Apache-2.0
/*
 * name: the rules for file names from the wire (RFC 1813 2.5 filename3,
 * 3.3.3 LOOKUP).  The RFC leaves empty names and names with '/' open; we
 * answer NFS3ERR_ACCES for both, as knfsd does (the Linux VFS refuses them
 * in lookup_one_len() with EACCES), so that no name can walk a path.
 */
#include <errno.h>
#include <string.h>

#include "nfsd/nfs3/nfs3_int.h"
#include "nfsd/snap/snap.h"

static bool nfs3_name_is_dot(const char *name)
{
	return strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
}

int nfs3__name_check(const char *name, enum nfs3_name_use use)
{
	size_t len;

	if (!name || name[0] == '\0') {
		return -EACCES;
	}
	len = strnlen(name, STORE_NAME_MAX + 1);
	if (len > STORE_NAME_MAX) {
		return -ENAMETOOLONG;
	}
	if (memchr(name, '/', len)) {
		return -EACCES;
	}
	if (!nfs3_name_is_dot(name)) {
		return 0;
	}
	switch (use) {
	case NFS3_NAME_LOOKUP:
		return 0;
	case NFS3_NAME_CREATE:
		return -EEXIST;
	case NFS3_NAME_REMOVE:
		return -EINVAL;
	}
	return -EINVAL;
}

bool nfs3__name_is_snapdir(const struct nfs3_file *dir,
			   const struct store_attr *dir_attr, const char *name)
{
	return dir->exp && dir->exp->root_fileid &&
	       dir_attr->fileid == dir->exp->root_fileid &&
	       !strcmp(name, SNAP_DIR_NAME);
}

int nfs3__name_lookup(const struct nfs3_file *dir, const char *name,
		      struct store_obj **out)
{
	if (strcmp(name, ".") == 0) {
		store_obj_ref(dir->st, dir->obj);
		*out = dir->obj;
		return 0;
	}
	return store_lookup(dir->st, dir->obj, name, out);
}
