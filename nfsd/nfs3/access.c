// SPDX-License-Identifier: Apache-2.0
/*
 * access: who may do what to a file, from its mode bits and the caller's
 * squashed credentials (RFC 1813 3.3.4 ACCESS, 4.4 permission issues).
 * The store trusts its caller for reads, writes and namespace changes, so
 * these checks are the server's permission model.  They follow the Linux
 * VFS as knfsd applies it: owner, group or other bits; root passes every
 * check except executing a file that has no execute bit at all; the owner
 * of a file may always read and write it (NFS has no open(), so a file
 * created 0444 must stay writable for the process that created it).
 */
#include <errno.h>

#include "nfsd/nfs3/nfs3_int.h"

#define NFS3_PERM_R 4u
#define NFS3_PERM_W 2u
#define NFS3_PERM_X 1u
#define NFS3_MODE_STICKY 01000u

static bool nfs3_cred_in_group(const struct store_cred *cred, uint32_t gid)
{
	if (cred->gid == gid) {
		return true;
	}
	for (uint32_t i = 0; i < cred->ngroups; i++) {
		if (cred->groups[i] == gid) {
			return true;
		}
	}
	return false;
}

/* The rwx bits that apply to @cred on @a, root's privileges included. */
static uint32_t nfs3_perm_bits(const struct store_attr *a,
			       const struct store_cred *cred)
{
	if (cred->uid == 0) {
		bool any_x = (a->mode & 0111) != 0;

		return NFS3_PERM_R | NFS3_PERM_W |
		       ((a->type == STORE_DIR || any_x) ? NFS3_PERM_X : 0);
	}
	if (cred->uid == a->uid) {
		return (a->mode >> 6) & 7;
	}
	if (nfs3_cred_in_group(cred, a->gid)) {
		return (a->mode >> 3) & 7;
	}
	return a->mode & 7;
}

uint32_t nfs3__access_mask(const struct store_attr *a,
			   const struct store_cred *cred, uint32_t want,
			   bool read_only)
{
	uint32_t perm = nfs3_perm_bits(a, cred);
	uint32_t granted = 0;

	if (perm & NFS3_PERM_R) {
		granted |= ACCESS3_READ;
	}
	if (a->type == STORE_DIR) {
		/* knfsd's nfs3_diraccess: changing entries needs w and x. */
		if (perm & NFS3_PERM_X) {
			granted |= ACCESS3_LOOKUP;
		}
		if ((perm & NFS3_PERM_W) && (perm & NFS3_PERM_X)) {
			granted |= ACCESS3_MODIFY | ACCESS3_EXTEND |
				   ACCESS3_DELETE;
		}
	} else {
		if (perm & NFS3_PERM_W) {
			granted |= ACCESS3_MODIFY | ACCESS3_EXTEND;
		}
		if (perm & NFS3_PERM_X) {
			granted |= ACCESS3_EXECUTE;
		}
	}
	if (read_only) {
		granted &= ~(uint32_t)(ACCESS3_MODIFY | ACCESS3_EXTEND |
				       ACCESS3_DELETE);
	}
	return want & granted;
}

int nfs3__may_read(const struct store_attr *a, const struct store_cred *cred)
{
	if (cred->uid == a->uid && a->type != STORE_DIR) {
		return 0;
	}
	return (nfs3_perm_bits(a, cred) & NFS3_PERM_R) ? 0 : -EACCES;
}

int nfs3__may_write(const struct store_attr *a, const struct store_cred *cred)
{
	if (cred->uid == a->uid && a->type != STORE_DIR) {
		return 0;
	}
	return (nfs3_perm_bits(a, cred) & NFS3_PERM_W) ? 0 : -EACCES;
}

int nfs3__may_lookup(const struct store_attr *dir,
		     const struct store_cred *cred)
{
	return (nfs3_perm_bits(dir, cred) & NFS3_PERM_X) ? 0 : -EACCES;
}

int nfs3__may_change_dir(const struct store_attr *dir,
			 const struct store_cred *cred)
{
	uint32_t need = NFS3_PERM_W | NFS3_PERM_X;

	return (nfs3_perm_bits(dir, cred) & need) == need ? 0 : -EACCES;
}

int nfs3__may_unlink_sticky(const struct store_attr *dir,
			    const struct store_attr *victim,
			    const struct store_cred *cred)
{
	if (!(dir->mode & NFS3_MODE_STICKY) || cred->uid == 0) {
		return 0;
	}
	if (cred->uid == dir->uid || cred->uid == victim->uid) {
		return 0;
	}
	return -EPERM; /* the VFS's answer (check_sticky) */
}

int nfs3__may_setattr(const struct store_attr *a,
		      const struct store_sattr *sattr,
		      const struct store_cred *cred)
{
	bool owner = cred->uid == a->uid;

	if (cred->uid == 0) {
		return 0;
	}
	if (sattr->set_uid && sattr->uid != a->uid) {
		return -EPERM;
	}
	if (sattr->set_gid && sattr->gid != a->gid &&
	    !(owner && nfs3_cred_in_group(cred, sattr->gid))) {
		return -EPERM;
	}
	if (sattr->set_mode && !owner) {
		return -EPERM;
	}
	if ((sattr->atime_how == STORE_TIME_CLIENT ||
	     sattr->mtime_how == STORE_TIME_CLIENT) &&
	    !owner) {
		return -EPERM;
	}
	if ((sattr->atime_how == STORE_TIME_SERVER ||
	     sattr->mtime_how == STORE_TIME_SERVER || sattr->set_size) &&
	    nfs3__may_write(a, cred) != 0) {
		return -EACCES;
	}
	return 0;
}
