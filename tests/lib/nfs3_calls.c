// SPDX-License-Identifier: Apache-2.0
/*
 * nfs3_calls: the namespace procedures through an nfs3_fixture
 * (tests/lib/nfs3_calls.h).
 */
#include "tests/lib/nfs3_calls.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

nfsstat3 nfs3_call_symlink(struct nfs3_fixture *fx, const nfs_fh3 *dir,
			   const char *name, const char *target)
{
	SYMLINK3args args = {
		.where = { .dir = *dir, .name = (char *)name },
		.symlink = { .symlink_data = (char *)target },
	};
	SYMLINK3res res;
	nfsstat3 status;

	nfs3_fixture_call(fx, NFSPROC3_SYMLINK, &args, &res);
	status = res.status;
	if (status == NFS3_OK) {
		assert_int_equal(res.SYMLINK3res_u.resok.obj_attributes
					 .post_op_attr_u.attributes.type,
				 NF3LNK);
	}
	nfs3_fixture_release(fx, NFSPROC3_SYMLINK, &res);
	return status;
}

nfsstat3 nfs3_call_mknod(struct nfs3_fixture *fx, const nfs_fh3 *dir,
			 const char *name, ftype3 type, fattr3 *attr)
{
	MKNOD3args args = {
		.where = { .dir = *dir, .name = (char *)name },
		.what = { .type = type },
	};
	MKNOD3res res;
	nfsstat3 status;

	if (type == NF3CHR || type == NF3BLK) {
		args.what.mknoddata3_u.device.spec.specdata1 = 8;
		args.what.mknoddata3_u.device.spec.specdata2 = 1;
	}
	nfs3_fixture_call(fx, NFSPROC3_MKNOD, &args, &res);
	status = res.status;
	if (status == NFS3_OK) {
		*attr = res.MKNOD3res_u.resok.obj_attributes.post_op_attr_u
				.attributes;
	}
	nfs3_fixture_release(fx, NFSPROC3_MKNOD, &res);
	return status;
}

nfsstat3 nfs3_call_rename(struct nfs3_fixture *fx, const nfs_fh3 *from,
			  const char *from_name, const nfs_fh3 *to,
			  const char *to_name)
{
	RENAME3args args = {
		.from = { .dir = *from, .name = (char *)from_name },
		.to = { .dir = *to, .name = (char *)to_name },
	};
	RENAME3res res;

	nfs3_fixture_call(fx, NFSPROC3_RENAME, &args, &res);
	if (res.status == NFS3_OK) {
		assert_true(res.RENAME3res_u.resok.fromdir_wcc.after
				    .attributes_follow);
		assert_true(res.RENAME3res_u.resok.todir_wcc.after
				    .attributes_follow);
	}
	return res.status;
}

nfsstat3 nfs3_call_link(struct nfs3_fixture *fx, const nfs_fh3 *file,
			const nfs_fh3 *dir, const char *name, uint32_t *nlink)
{
	LINK3args args = { .file = *file,
			   .link = { .dir = *dir, .name = (char *)name } };
	LINK3res res;

	nfs3_fixture_call(fx, NFSPROC3_LINK, &args, &res);
	if (res.status == NFS3_OK) {
		*nlink = res.LINK3res_u.resok.file_attributes.post_op_attr_u
				 .attributes.nlink;
	}
	return res.status;
}
