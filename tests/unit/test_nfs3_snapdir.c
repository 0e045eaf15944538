/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_nfs3_snapdir: the NFS-layer walls of issue 23 on the real local
 * store (tests/lib/nfs3_local_fixture.h):
 *   - nothing under ROOT/.snapshot changes over NFS: WRITE, SETATTR,
 *     CREATE, MKDIR, SYMLINK, MKNOD, REMOVE, RMDIR, RENAME (from or to)
 *     and LINK (from or to) answer NFS3ERR_ROFS, by where the object is,
 *     not by the name a call gives (the tree here carries no
 *     FS_IMMUTABLE_FL, as during a snapshot's creation or deletion);
 *     COMMIT, which changes nothing, still answers OK;
 *   - WRITE by a caller other than root clears setuid, and setgid when
 *     group-execute is set, as Linux's should_remove_suid().
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "nfsd/nfs3/nfs3_int.h"
#include "tests/lib/nfs3_calls.h"
#include "tests/lib/nfs3_fixture.h"
#include "tests/lib/nfs3_local_fixture.h"

/* The dispatcher's request_defer() without its work pool: runs the work at
 * once, and still answers RPC_PENDING so tests see what was deferred. */
enum rpc_disposition request_defer(struct request *req,
				   void (*work)(struct request *req))
{
	rpc_call_of(req)->work = work;
	work(req);
	return RPC_PENDING;
}

/* The local fixture with ds1's .snapshot area served. */
static int local_setup(void **state)
{
	struct nfs3_local_fixture *lf;

	nfs3_local_fixture_setup(state, "snapdir");
	lf = *state;
	lf->fx->exports[NFS3_FIXTURE_DS1].snapshot_dir = true;
	return 0;
}

/* Handles live in a table of their own, so that a test can keep many. */
static char fh_room[16][STORE_FH_MAX];
static size_t fh_next;

static nfs_fh3 keep(const nfs_fh3 *h)
{
	nfs_fh3 out;

	assert_true(fh_next < 16);
	memcpy(fh_room[fh_next], h->data.data_val, h->data.data_len);
	out.data.data_val = fh_room[fh_next++];
	out.data.data_len = h->data.data_len;
	return out;
}

static nfs_fh3 lookup(struct nfs3_fixture *fx, const nfs_fh3 *dir,
		      const char *name)
{
	LOOKUP3args args = { .what = { .dir = *dir, .name = (char *)name } };
	struct nfs3_lookup_res res;
	nfs_fh3 out;

	nfs3_fixture_call(fx, NFSPROC3_LOOKUP, &args, &res);
	assert_int_equal(res.r.status, NFS3_OK);
	out = keep(&res.r.LOOKUP3res_u.resok.object);
	nfs3_fixture_release(fx, NFSPROC3_LOOKUP, &res);
	return out;
}

/* Calls @proc and answers its status: every NFSv3 result starts with its
 * nfsstat3, whatever the procedure. */
static nfsstat3 call_status(struct nfs3_fixture *fx, uint32_t proc, void *args,
			    void *res)
{
	nfsstat3 st;

	nfs3_fixture_call(fx, proc, args, res);
	st = *(const nfsstat3 *)res;
	nfs3_fixture_release(fx, proc, res);
	return st;
}

static nfsstat3 write_call(struct nfs3_fixture *fx, const nfs_fh3 *fh)
{
	char data[4] = "abcd";
	WRITE3args args = { .file = *fh,
			    .offset = 0,
			    .count = 4,
			    .stable = FILE_SYNC,
			    .data = { .data_len = 4, .data_val = data } };
	WRITE3res res;

	return call_status(fx, NFSPROC3_WRITE, &args, &res);
}

static nfsstat3 setattr_call(struct nfs3_fixture *fx, const nfs_fh3 *fh,
			     uint32_t mode)
{
	SETATTR3args args = { .object = *fh };
	SETATTR3res res;

	args.new_attributes.mode.set_it = TRUE;
	args.new_attributes.mode.set_mode3_u.mode = mode;
	return call_status(fx, NFSPROC3_SETATTR, &args, &res);
}

static nfsstat3 create_call(struct nfs3_fixture *fx, const nfs_fh3 *dir,
			    const char *name)
{
	CREATE3args args = { .where = { .dir = *dir, .name = (char *)name },
			     .how = { .mode = UNCHECKED } };
	CREATE3res res;

	return call_status(fx, NFSPROC3_CREATE, &args, &res);
}

static nfsstat3 mkdir_call(struct nfs3_fixture *fx, const nfs_fh3 *dir,
			   const char *name)
{
	MKDIR3args args = { .where = { .dir = *dir, .name = (char *)name } };
	MKDIR3res res;

	return call_status(fx, NFSPROC3_MKDIR, &args, &res);
}

/* REMOVE (or RMDIR) of @name in @dir: the status only (a refusal here
 * carries no wcc_data, unlike test_nfs3_namespace's on the fakes). */
static nfsstat3 unlink_call(struct nfs3_fixture *fx, uint32_t proc,
			    const nfs_fh3 *dir, const char *name)
{
	diropargs3 what = { .dir = *dir, .name = (char *)name };
	REMOVE3args args = { .object = what };
	RMDIR3args rargs = { .object = what };
	REMOVE3res res;
	RMDIR3res rres;

	if (proc == NFSPROC3_RMDIR) {
		return call_status(fx, proc, &rargs, &rres);
	}
	return call_status(fx, proc, &args, &res);
}

static nfsstat3 commit_call(struct nfs3_fixture *fx, const nfs_fh3 *fh)
{
	COMMIT3args args = { .file = *fh };
	COMMIT3res res;

	return call_status(fx, NFSPROC3_COMMIT, &args, &res);
}

/* Makes ROOT/.snapshot/s1/{sub/,disk.vmdk} and ROOT/live on disk, all
 * open to everyone, so that only the snapshot rule can refuse. */
static void make_tree(const struct nfs3_local_fixture *lf)
{
	static const char *const dirs[] = { ".snapshot", ".snapshot/s1",
					    ".snapshot/s1/sub" };
	char path[256];
	int fd;

	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/ds1/%s", lf->dir, dirs[i]);
		assert_int_equal(mkdir(path, 0777), 0);
		assert_int_equal(chmod(path, 0777), 0);
	}
	snprintf(path, sizeof(path), "%s/ds1/.snapshot/s1/disk.vmdk", lf->dir);
	fd = open(path, O_CREAT | O_WRONLY, 0666);
	assert_true(fd >= 0);
	assert_int_equal(fchmod(fd, 0666), 0);
	close(fd);
	snprintf(path, sizeof(path), "%s/ds1/live", lf->dir);
	fd = open(path, O_CREAT | O_WRONLY, 0666);
	assert_true(fd >= 0);
	assert_int_equal(fchmod(fd, 0666), 0);
	close(fd);
}

static bool on_disk(const struct nfs3_local_fixture *lf, const char *rel)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), "%s/ds1/%s", lf->dir, rel);
	return lstat(path, &st) == 0;
}

static void test_snapshot_tree_refuses_every_change(void **state)
{
	struct nfs3_local_fixture *lf = *state;
	struct nfs3_fixture *fx = lf->fx;
	nfs_fh3 root, area, s1, sub, disk, live;
	char path[256];
	struct stat st;
	uint32_t nlink;
	fattr3 attr;

	make_tree(lf);
	fh_next = 0;
	root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	area = lookup(fx, &root, ".snapshot");
	s1 = lookup(fx, &area, "s1");
	sub = lookup(fx, &s1, "sub");
	disk = lookup(fx, &s1, "disk.vmdk");
	live = lookup(fx, &root, "live");

	assert_int_equal(write_call(fx, &disk), NFS3ERR_ROFS);
	assert_int_equal(setattr_call(fx, &disk, 0600), NFS3ERR_ROFS);
	assert_int_equal(setattr_call(fx, &sub, 0700), NFS3ERR_ROFS);
	assert_int_equal(create_call(fx, &s1, "new"), NFS3ERR_ROFS);
	assert_int_equal(create_call(fx, &area, "s2"), NFS3ERR_ROFS);
	assert_int_equal(mkdir_call(fx, &area, "s2"), NFS3ERR_ROFS);
	assert_int_equal(mkdir_call(fx, &sub, "d"), NFS3ERR_ROFS);
	assert_int_equal(nfs3_call_symlink(fx, &s1, "l", "target"),
			 NFS3ERR_ROFS);
	assert_int_equal(nfs3_call_mknod(fx, &s1, "p", NF3FIFO, &attr),
			 NFS3ERR_ROFS);
	assert_int_equal(unlink_call(fx, NFSPROC3_REMOVE, &s1, "disk.vmdk"),
			 NFS3ERR_ROFS);
	assert_int_equal(unlink_call(fx, NFSPROC3_RMDIR, &s1, "sub"),
			 NFS3ERR_ROFS);
	assert_int_equal(unlink_call(fx, NFSPROC3_RMDIR, &area, "s1"),
			 NFS3ERR_ROFS);
	/* RENAME out of, into and within the area. */
	assert_int_equal(nfs3_call_rename(fx, &s1, "disk.vmdk", &root, "out"),
			 NFS3ERR_ROFS);
	assert_int_equal(nfs3_call_rename(fx, &root, "live", &s1, "in"),
			 NFS3ERR_ROFS);
	assert_int_equal(nfs3_call_rename(fx, &area, "s1", &area, "daily-0601"),
			 NFS3ERR_ROFS);
	/* LINK of a snapshot's file out, and of a live file in. */
	assert_int_equal(nfs3_call_link(fx, &disk, &root, "out", &nlink),
			 NFS3ERR_ROFS);
	assert_int_equal(nfs3_call_link(fx, &live, &s1, "in", &nlink),
			 NFS3ERR_ROFS);
	/* COMMIT changes nothing: harmless. */
	assert_int_equal(commit_call(fx, &disk), NFS3_OK);

	/* Nothing moved, nothing was made. */
	assert_true(on_disk(lf, ".snapshot/s1/disk.vmdk"));
	assert_true(on_disk(lf, ".snapshot/s1/sub"));
	assert_true(on_disk(lf, "live"));
	assert_false(on_disk(lf, "out"));
	assert_false(on_disk(lf, ".snapshot/s1/new"));
	assert_false(on_disk(lf, ".snapshot/s2"));
	assert_false(on_disk(lf, ".snapshot/daily-0601"));
	snprintf(path, sizeof(path), "%s/ds1/.snapshot/s1/disk.vmdk", lf->dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 0);
	assert_int_equal(st.st_mode & 07777, 0666);

	/* The live tree still takes the same calls. */
	assert_int_equal(write_call(fx, &live), NFS3_OK);
	assert_int_equal(create_call(fx, &root, "new"), NFS3_OK);
	assert_int_equal(mkdir_call(fx, &root, "dir"), NFS3_OK);
	assert_int_equal(nfs3_call_rename(fx, &root, "new", &root, "renamed"),
			 NFS3_OK);
	assert_int_equal(nfs3_call_link(fx, &live, &root, "live2", &nlink),
			 NFS3_OK);
	assert_int_equal(nlink, 2);
}

/* The directory's own name does not matter: a live directory named
 * .snapshot below the root is an ordinary directory. */
static void test_snapshot_rule_is_the_roots_area_only(void **state)
{
	struct nfs3_local_fixture *lf = *state;
	struct nfs3_fixture *fx = lf->fx;
	nfs_fh3 root, vm, fake_area;

	fh_next = 0;
	root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	assert_int_equal(mkdir_call(fx, &root, "vm"), NFS3_OK);
	vm = lookup(fx, &root, "vm");
	assert_int_equal(mkdir_call(fx, &vm, ".snapshot"), NFS3_OK);
	fake_area = lookup(fx, &vm, ".snapshot");
	assert_int_equal(create_call(fx, &fake_area, "f"), NFS3_OK);
}

static uint32_t mode_of(const struct nfs3_local_fixture *lf, const char *rel)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), "%s/ds1/%s", lf->dir, rel);
	assert_int_equal(stat(path, &st), 0);
	return st.st_mode & 07777;
}

/* Makes ROOT/@name with @mode, owned by the fixture's caller. */
static nfs_fh3 suid_file(struct nfs3_local_fixture *lf, const nfs_fh3 *root,
			 const char *name, uint32_t mode)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/ds1/%s", lf->dir, name);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	assert_int_equal(fchown(fd, NFS3_FIXTURE_UID, NFS3_FIXTURE_GID), 0);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
	return lookup(lf->fx, root, name);
}

static void test_write_clears_setuid_and_setgid(void **state)
{
	struct nfs3_local_fixture *lf = *state;
	struct nfs3_fixture *fx = lf->fx;
	nfs_fh3 root, a, b, c, d;

	fh_next = 0;
	root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	a = suid_file(lf, &root, "a", 06777);
	b = suid_file(lf, &root, "b", 02666);
	c = suid_file(lf, &root, "c", 04766);
	d = suid_file(lf, &root, "d", 06777);

	/* Another user (group write, other write open). */
	nfs3_fixture_cred(fx, AUTH_SYS, 2000, 2000);
	assert_int_equal(write_call(fx, &a), NFS3_OK);
	assert_int_equal(mode_of(lf, "a"), 0777);
	/* setgid without group-execute (mandatory locking) stays. */
	assert_int_equal(write_call(fx, &b), NFS3_OK);
	assert_int_equal(mode_of(lf, "b"), 02666);
	/* The owner writing clears them too, as Linux. */
	nfs3_fixture_cred(fx, AUTH_SYS, NFS3_FIXTURE_UID, NFS3_FIXTURE_GID);
	assert_int_equal(write_call(fx, &c), NFS3_OK);
	assert_int_equal(mode_of(lf, "c"), 0766);
	/* root (squash none) keeps them: it has CAP_FSETID. */
	fx->exports[NFS3_FIXTURE_DS1].squash = EXPORT_SQUASH_NONE;
	nfs3_fixture_cred(fx, AUTH_SYS, 0, 0);
	assert_int_equal(write_call(fx, &d), NFS3_OK);
	assert_int_equal(mode_of(lf, "d"), 06777);
	/* root squashed is nobody: it clears them. */
	fx->exports[NFS3_FIXTURE_DS1].squash = EXPORT_SQUASH_ROOT;
	assert_int_equal(write_call(fx, &d), NFS3_OK);
	assert_int_equal(mode_of(lf, "d"), 0777);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_snapshot_tree_refuses_every_change, local_setup,
			nfs3_local_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_snapshot_rule_is_the_roots_area_only, local_setup,
			nfs3_local_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_write_clears_setuid_and_setgid, local_setup,
			nfs3_local_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
