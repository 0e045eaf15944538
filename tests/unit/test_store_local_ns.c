// SPDX-License-Identifier: Apache-2.0
/*
 * test_store_local_ns: the namespace ops of the local store
 * (nfsd/store/local/local_ns.c): CREATE in its three modes (EXCLUSIVE retries
 * with the same verifier succeed), MKDIR, SYMLINK, MKNOD, REMOVE, RMDIR,
 * RENAME and LINK with their error cases, "." and ".." as targets, and the
 * owner and mode of new objects.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/sysmacros.h>

#include <cmocka.h>

#include "tests/unit/test_store_fixture.h"

static const uint8_t verf_a[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
static const uint8_t verf_b[8] = { 8, 7, 6, 5, 4, 3, 2, 1 };

static int create_how(struct fixture *f, const char *name,
		      enum store_create_how how,
		      const struct store_sattr *sattr, const uint8_t *verf,
		      struct store_obj **out)
{
	return f->ops->create(f->st, f->root, name, how, sattr, verf,
			      &test_root_cred, out);
}

static void test_ns_create_guarded_and_unchecked(void **state)
{
	struct fixture *f = *state;
	struct store_sattr trunc = { .set_size = true, .size_bytes = 0 };
	struct store_obj *obj, *again = NULL;
	struct store_obj *dir;
	char path[160];

	obj = fixture_file(f, f->root, "f", "data", 4);
	assert_int_equal(
		create_how(f, "f", STORE_CREATE_GUARDED, NULL, NULL, &again),
		-EEXIST);
	assert_null(again);
	/* UNCHECKED without a size keeps the data... */
	assert_int_equal(
		create_how(f, "f", STORE_CREATE_UNCHECKED, NULL, NULL, &again),
		0);
	assert_int_equal(fixture_fileid(f, again), fixture_fileid(f, obj));
	assert_int_equal(fixture_attr(f, again).size_bytes, 4);
	f->ops->obj_unref(again);
	/* ...and with one truncates. */
	assert_int_equal(create_how(f, "f", STORE_CREATE_UNCHECKED, &trunc,
				    NULL, &again),
			 0);
	assert_int_equal(fixture_attr(f, obj).size_bytes, 0);
	f->ops->obj_unref(again);
	again = NULL;
	/* An existing name that is no regular file: EEXIST in every mode. */
	dir = fixture_dir(f, f->root, "d");
	assert_int_equal(
		create_how(f, "d", STORE_CREATE_UNCHECKED, NULL, NULL, &again),
		-EEXIST);
	assert_int_equal(symlink("/etc/passwd",
				 fixture_path(f, "l", path, sizeof(path))),
			 0);
	assert_int_equal(create_how(f, "l", STORE_CREATE_UNCHECKED, &trunc,
				    NULL, &again),
			 -EEXIST);
	assert_int_equal(create_how(f, "l", STORE_CREATE_EXCLUSIVE, NULL,
				    verf_a, &again),
			 -EEXIST);
	assert_null(again);
	f->ops->obj_unref(dir);
	f->ops->obj_unref(obj);
}

static void test_ns_create_exclusive_retry_keeps_the_file(void **state)
{
	struct fixture *f = *state;
	struct store_obj *obj, *again = NULL, *other;
	bool sync_failed;
	uint64_t fileid;

	assert_int_equal(
		create_how(f, "x", STORE_CREATE_EXCLUSIVE, NULL, verf_a, &obj),
		0);
	fileid = fixture_fileid(f, obj);
	assert_int_equal(f->ops->write(f->st, obj, 0, "abc", 3, STORE_UNSTABLE,
				       &sync_failed),
			 0);
	/* The reply was lost; the client retries with the same verifier. */
	assert_int_equal(create_how(f, "x", STORE_CREATE_EXCLUSIVE, NULL,
				    verf_a, &again),
			 0);
	assert_int_equal(fixture_fileid(f, again), fileid);
	assert_int_equal(fixture_attr(f, again).size_bytes, 3);
	f->ops->obj_unref(again);
	again = NULL;
	/* After a restart too. */
	f->ops->obj_unref(obj);
	fixture_reopen(f);
	assert_int_equal(create_how(f, "x", STORE_CREATE_EXCLUSIVE, NULL,
				    verf_a, &again),
			 0);
	assert_int_equal(fixture_fileid(f, again), fileid);
	f->ops->obj_unref(again);
	again = NULL;
	/* Another client's create of the same name. */
	assert_int_equal(create_how(f, "x", STORE_CREATE_EXCLUSIVE, NULL,
				    verf_b, &again),
			 -EEXIST);
	other = fixture_file(f, f->root, "plain", NULL, 0);
	assert_int_equal(create_how(f, "plain", STORE_CREATE_EXCLUSIVE, NULL,
				    verf_a, &again),
			 -EEXIST);
	assert_null(again);
	f->ops->obj_unref(other);
}

static void test_ns_new_objects_belong_to_the_caller(void **state)
{
	struct fixture *f = *state;
	const struct store_cred cred = { .uid = 1234, .gid = 5678 };
	struct store_sattr sa = { .set_mode = true, .mode = 0640 };
	struct store_sattr dsa = { .set_mode = true, .mode = 02750 };
	struct store_obj *obj;
	struct store_attr attr;
	mode_t old = umask(077);

	assert_int_equal(f->ops->create(f->st, f->root, "f",
					STORE_CREATE_GUARDED, &sa, NULL, &cred,
					&obj),
			 0);
	attr = fixture_attr(f, obj);
	assert_int_equal(attr.type, STORE_REG);
	assert_int_equal(attr.mode, 0640);
	assert_int_equal(attr.uid, 1234);
	assert_int_equal(attr.gid, 5678);
	f->ops->obj_unref(obj);
	assert_int_equal(f->ops->mkdir(f->st, f->root, "d", &dsa, &cred, &obj),
			 0);
	attr = fixture_attr(f, obj);
	assert_int_equal(attr.type, STORE_DIR);
	assert_int_equal(attr.mode, 02750);
	assert_int_equal(attr.uid, 1234);
	f->ops->obj_unref(obj);
	assert_int_equal(
		f->ops->symlink(f->st, f->root, "l", "f", NULL, &cred, &obj),
		0);
	attr = fixture_attr(f, obj);
	assert_int_equal(attr.type, STORE_LNK);
	assert_int_equal(attr.uid, 1234);
	assert_int_equal(attr.gid, 5678);
	f->ops->obj_unref(obj);
	assert_int_equal(f->ops->mknod(f->st, f->root, "p", STORE_FIFO, 0, 0,
				       &sa, &cred, &obj),
			 0);
	attr = fixture_attr(f, obj);
	assert_int_equal(attr.type, STORE_FIFO);
	assert_int_equal(attr.mode, 0640);
	assert_int_equal(attr.gid, 5678);
	f->ops->obj_unref(obj);
	/* sattr's owner wins over the caller's. */
	sa.set_uid = true;
	sa.uid = 42;
	assert_int_equal(f->ops->create(f->st, f->root, "g",
					STORE_CREATE_GUARDED, &sa, NULL, &cred,
					&obj),
			 0);
	assert_int_equal(fixture_attr(f, obj).uid, 42);
	assert_int_equal(fixture_attr(f, obj).gid, 5678);
	f->ops->obj_unref(obj);
	umask(old);
}

static void test_ns_mkdir_rmdir_remove_errors(void **state)
{
	struct fixture *f = *state;
	struct store_obj *d, *file, *out = NULL;

	d = fixture_dir(f, f->root, "d");
	file = fixture_file(f, d, "f", NULL, 0);
	assert_int_equal(
		f->ops->mkdir(f->st, f->root, "d", NULL, &test_root_cred, &out),
		-EEXIST);
	assert_int_equal(
		f->ops->mkdir(f->st, file, "x", NULL, &test_root_cred, &out),
		-ENOTDIR);
	assert_int_equal(
		f->ops->mkdir(f->st, f->root, ".", NULL, &test_root_cred, &out),
		-EEXIST);
	assert_int_equal(f->ops->create(f->st, f->root, "..",
					STORE_CREATE_UNCHECKED, NULL, NULL,
					&test_root_cred, &out),
			 -EEXIST);
	assert_int_equal(f->ops->mkdir(f->st, f->root, "a/b", NULL,
				       &test_root_cred, &out),
			 -EACCES);
	assert_null(out);
	assert_int_equal(f->ops->rmdir(f->st, f->root, "d"), -ENOTEMPTY);
	assert_int_equal(f->ops->rmdir(f->st, d, "f"), -ENOTDIR);
	assert_int_equal(f->ops->rmdir(f->st, f->root, "missing"), -ENOENT);
	assert_int_equal(f->ops->rmdir(f->st, f->root, "."), -EINVAL);
	assert_int_equal(f->ops->rmdir(f->st, f->root, ".."), -EINVAL);
	assert_int_equal(f->ops->remove(f->st, f->root, "d"), -EISDIR);
	assert_int_equal(f->ops->remove(f->st, f->root, "missing"), -ENOENT);
	assert_int_equal(f->ops->remove(f->st, f->root, "."), -EACCES);
	assert_int_equal(f->ops->remove(f->st, f->root, ""), -EACCES);
	assert_int_equal(f->ops->remove(f->st, file, "x"), -ENOTDIR);
	assert_int_equal(f->ops->remove(f->st, d, "f"), 0);
	assert_int_equal(f->ops->rmdir(f->st, f->root, "d"), 0);
	assert_int_equal(f->ops->lookup(f->st, f->root, "d", &out), -ENOENT);
	f->ops->obj_unref(file);
	f->ops->obj_unref(d);
}

static void test_ns_symlink_and_readlink(void **state)
{
	struct fixture *f = *state;
	char target[STORE_PATH_MAX + 2];
	struct store_obj *lnk, *file, *out = NULL;
	char buf[STORE_PATH_MAX];
	size_t len = 0;

	assert_int_equal(f->ops->symlink(f->st, f->root, "l", "sub/../x", NULL,
					 &test_root_cred, &lnk),
			 0);
	assert_int_equal(f->ops->readlink(f->st, lnk, buf, sizeof(buf), &len),
			 0);
	assert_int_equal(len, 8);
	assert_memory_equal(buf, "sub/../x", 8);
	assert_int_equal(f->ops->readlink(f->st, lnk, buf, 7, &len),
			 -ENAMETOOLONG);
	assert_int_equal(f->ops->symlink(f->st, f->root, "l", "y", NULL,
					 &test_root_cred, &out),
			 -EEXIST);
	memset(target, 't', sizeof(target) - 1);
	target[sizeof(target) - 1] = '\0';
	assert_int_equal(f->ops->symlink(f->st, f->root, "m", target, NULL,
					 &test_root_cred, &out),
			 -ENAMETOOLONG);
	target[STORE_PATH_MAX] = '\0';
	assert_int_equal(f->ops->symlink(f->st, f->root, "m", target, NULL,
					 &test_root_cred, &out),
			 0);
	assert_int_equal(f->ops->readlink(f->st, out, buf, sizeof(buf), &len),
			 0);
	assert_int_equal(len, STORE_PATH_MAX);
	f->ops->obj_unref(out);
	file = fixture_file(f, f->root, "f", NULL, 0);
	assert_int_equal(f->ops->readlink(f->st, file, buf, sizeof(buf), &len),
			 -EINVAL);
	f->ops->obj_unref(file);
	f->ops->obj_unref(lnk);
}

static void test_ns_mknod_makes_nodes_not_files(void **state)
{
	struct fixture *f = *state;
	struct store_obj *obj = NULL;
	struct store_attr attr;

	assert_int_equal(f->ops->mknod(f->st, f->root, "null", STORE_CHR, 1, 3,
				       NULL, &test_root_cred, &obj),
			 0);
	attr = fixture_attr(f, obj);
	assert_int_equal(attr.type, STORE_CHR);
	assert_int_equal(attr.rdev_major, 1);
	assert_int_equal(attr.rdev_minor, 3);
	f->ops->obj_unref(obj);
	assert_int_equal(f->ops->mknod(f->st, f->root, "sock", STORE_SOCK, 0, 0,
				       NULL, &test_root_cred, &obj),
			 0);
	assert_int_equal(fixture_attr(f, obj).type, STORE_SOCK);
	f->ops->obj_unref(obj);
	obj = NULL;
	assert_int_equal(f->ops->mknod(f->st, f->root, "r", STORE_REG, 0, 0,
				       NULL, &test_root_cred, &obj),
			 -STORE_EBADTYPE);
	assert_int_equal(f->ops->mknod(f->st, f->root, "d", STORE_DIR, 0, 0,
				       NULL, &test_root_cred, &obj),
			 -STORE_EBADTYPE);
	assert_int_equal(f->ops->mknod(f->st, f->root, "null", STORE_FIFO, 0, 0,
				       NULL, &test_root_cred, &obj),
			 -EEXIST);
	assert_null(obj);
}

static void test_ns_rename_moves_and_keeps_the_object(void **state)
{
	struct fixture *f = *state;
	struct store_obj *a, *b, *file, *full, *moved, *out = NULL;
	uint64_t fileid;

	a = fixture_dir(f, f->root, "a");
	b = fixture_dir(f, f->root, "b");
	file = fixture_file(f, a, "f", "x", 1);
	fileid = fixture_fileid(f, file);
	assert_int_equal(f->ops->rename(f->st, a, "f", b, "g"), 0);
	assert_int_equal(f->ops->lookup(f->st, a, "f", &out), -ENOENT);
	moved = fixture_lookup(f, b, "g");
	assert_int_equal(fixture_fileid(f, moved), fileid);
	f->ops->obj_unref(moved);
	assert_int_equal(f->ops->rename(f->st, a, "missing", b, "h"), -ENOENT);
	assert_int_equal(f->ops->rename(f->st, a, ".", b, "h"), -EINVAL);
	assert_int_equal(f->ops->rename(f->st, b, "g", a, ".."), -EINVAL);
	assert_int_equal(f->ops->rename(f->st, file, "g", a, "h"), -ENOTDIR);
	/* A directory onto a non-empty directory, a file onto a directory. */
	full = fixture_dir(f, f->root, "full");
	f->ops->obj_unref(fixture_file(f, full, "x", NULL, 0));
	assert_int_equal(f->ops->rename(f->st, f->root, "a", f->root, "full"),
			 -ENOTEMPTY);
	assert_int_equal(f->ops->rename(f->st, b, "g", f->root, "full"),
			 -EISDIR);
	/* A directory into its own subtree. */
	assert_int_equal(f->ops->rename(f->st, f->root, "full", full, "sub"),
			 -EINVAL);
	f->ops->obj_unref(full);
	f->ops->obj_unref(file);
	f->ops->obj_unref(b);
	f->ops->obj_unref(a);
}

static void test_ns_rename_over_a_file_makes_it_stale(void **state)
{
	struct fixture *f = *state;
	struct store_obj *src, *victim, *out = NULL;
	struct store_fh fh;

	src = fixture_file(f, f->root, "new", "n", 1);
	victim = fixture_file(f, f->root, "old", "o", 1);
	f->ops->obj_fh(victim, &fh);
	f->ops->obj_unref(victim);
	assert_int_equal(f->ops->rename(f->st, f->root, "new", f->root, "old"),
			 0);
	assert_int_equal(f->ops->resolve(f->st, &fh, &out), -ESTALE);
	out = fixture_lookup(f, f->root, "old");
	assert_int_equal(fixture_fileid(f, out), fixture_fileid(f, src));
	f->ops->obj_unref(out);
	f->ops->obj_unref(src);
}

static void test_ns_link_adds_a_name(void **state)
{
	struct fixture *f = *state;
	struct store_obj *file, *dir, *other, *two;

	file = fixture_file(f, f->root, "f", "x", 1);
	dir = fixture_dir(f, f->root, "d");
	other = fixture_file(f, f->root, "o", NULL, 0);
	assert_int_equal(f->ops->link(f->st, file, dir, "f2"), 0);
	assert_int_equal(fixture_attr(f, file).nlink, 2);
	two = fixture_lookup(f, dir, "f2");
	assert_int_equal(fixture_fileid(f, two), fixture_fileid(f, file));
	f->ops->obj_unref(two);
	assert_int_equal(f->ops->link(f->st, file, f->root, "o"), -EEXIST);
	assert_int_equal(f->ops->link(f->st, file, f->root, ".."), -EEXIST);
	assert_int_equal(f->ops->link(f->st, dir, f->root, "d2"), -EISDIR);
	assert_int_equal(f->ops->link(f->st, file, other, "x"), -ENOTDIR);
	/* The removed first name leaves the file reachable by the second. */
	assert_int_equal(f->ops->remove(f->st, f->root, "f"), 0);
	assert_int_equal(fixture_attr(f, file).nlink, 1);
	f->ops->obj_unref(other);
	f->ops->obj_unref(dir);
	f->ops->obj_unref(file);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_ns_create_guarded_and_unchecked, fixture_setup,
			fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_ns_create_exclusive_retry_keeps_the_file,
			fixture_setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_ns_new_objects_belong_to_the_caller, fixture_setup,
			fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_ns_mkdir_rmdir_remove_errors, fixture_setup,
			fixture_teardown),
		cmocka_unit_test_setup_teardown(test_ns_symlink_and_readlink,
						fixture_setup,
						fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_ns_mknod_makes_nodes_not_files, fixture_setup,
			fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_ns_rename_moves_and_keeps_the_object,
			fixture_setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_ns_rename_over_a_file_makes_it_stale,
			fixture_setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_ns_link_adds_a_name,
						fixture_setup,
						fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
