// SPDX-License-Identifier: Apache-2.0
/*
 * test_store_local: the local-directory store (nfsd/store/local/local*.c) on a
 * real directory: LOOKUP and the export boundary (symlinks are never
 * followed, ".." stops at the root, a signed handle of a file outside the
 * export is refused), GETATTR/SETATTR, READ eof exactness, WRITE/COMMIT,
 * READDIR cookies across 1000 entries while the directory changes, stale
 * handles of deleted files, and ops from several threads at once.  The
 * namespace ops are in test_store_local_ns.c.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tests/lib/log_capture.h"
#include "tests/unit/test_store_fixture.h"

static void test_local_root_attrs_name_the_export(void **state)
{
	struct fixture *f = *state;
	struct store_attr attr = fixture_attr(f, f->root);
	struct stat sb;

	assert_int_equal(stat(f->ds, &sb), 0);
	assert_int_equal(attr.type, STORE_DIR);
	assert_int_equal(attr.fileid, sb.st_ino);
	assert_int_equal(attr.fsid, TEST_EXPORT_ID);
	assert_int_equal(attr.mode, 0755);
	assert_int_equal(attr.used_bytes, (uint64_t)sb.st_blocks * 512);
}

static void test_local_open_names_a_bad_path(void **state)
{
	struct fixture *f = *state;
	struct store *st = NULL;
	char path[160];
	char err[256] = "";

	fixture_path(f, "missing", path, sizeof(path));
	assert_int_equal(
		store_local_open("x", path, 1, f->state, &st, err, sizeof(err)),
		-ENOENT);
	assert_non_null(strstr(err, path));
	close(open(fixture_path(f, "file", path, sizeof(path)),
		   O_CREAT | O_WRONLY, 0644));
	assert_int_equal(
		store_local_open("x", path, 1, f->state, &st, err, sizeof(err)),
		-ENOTDIR);
	assert_null(st);
}

static void test_local_lookup_rejects_bad_names(void **state)
{
	struct fixture *f = *state;
	struct store_obj *obj = NULL;
	struct store_obj *file;
	char name[STORE_NAME_MAX + 2];

	assert_int_equal(f->ops->lookup(f->st, f->root, "nope", &obj), -ENOENT);
	assert_int_equal(f->ops->lookup(f->st, f->root, "", &obj), -EACCES);
	assert_int_equal(f->ops->lookup(f->st, f->root, "a/b", &obj), -EACCES);
	assert_int_equal(f->ops->lookup(f->st, f->root, "/etc", &obj), -EACCES);
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	assert_int_equal(f->ops->lookup(f->st, f->root, name, &obj),
			 -ENAMETOOLONG);
	name[STORE_NAME_MAX] = '\0';
	assert_int_equal(f->ops->lookup(f->st, f->root, name, &obj), -ENOENT);
	file = fixture_file(f, f->root, "f", NULL, 0);
	assert_int_equal(f->ops->lookup(f->st, file, "x", &obj), -ENOTDIR);
	assert_null(obj);
	f->ops->obj_unref(file);
}

static void test_local_dotdot_stops_at_the_root(void **state)
{
	struct fixture *f = *state;
	uint64_t root_id = fixture_fileid(f, f->root);
	struct store_obj *a = fixture_dir(f, f->root, "a");
	struct store_obj *b = fixture_dir(f, a, "b");
	struct store_obj *obj;

	obj = fixture_lookup(f, f->root, "..");
	assert_int_equal(fixture_fileid(f, obj), root_id);
	f->ops->obj_unref(obj);
	obj = fixture_lookup(f, f->root, ".");
	assert_int_equal(fixture_fileid(f, obj), root_id);
	f->ops->obj_unref(obj);
	obj = fixture_lookup(f, a, "..");
	assert_int_equal(fixture_fileid(f, obj), root_id);
	f->ops->obj_unref(obj);
	obj = fixture_lookup(f, b, "..");
	assert_int_equal(fixture_fileid(f, obj), fixture_fileid(f, a));
	f->ops->obj_unref(obj);
	/* Up twice from the root is still the root. */
	f->ops->obj_unref(b);
	obj = fixture_lookup(f, f->root, "..");
	b = fixture_lookup(f, obj, "..");
	assert_int_equal(fixture_fileid(f, b), root_id);
	f->ops->obj_unref(obj);
	f->ops->obj_unref(b);
	f->ops->obj_unref(a);
}

static void test_local_symlink_is_never_followed(void **state)
{
	struct fixture *f = *state;
	struct store_obj *obj, *out = NULL;
	struct store_attr attr;
	struct stat etc;
	char path[160];
	char buf[64];
	size_t len = 0;

	assert_int_equal(
		symlink("/etc", fixture_path(f, "etc", path, sizeof(path))), 0);
	assert_int_equal(
		symlink("..", fixture_path(f, "up", path, sizeof(path))), 0);
	assert_int_equal(stat("/etc", &etc), 0);
	obj = fixture_lookup(f, f->root, "etc");
	attr = fixture_attr(f, obj);
	assert_int_equal(attr.type, STORE_LNK);
	assert_int_not_equal(attr.fileid, etc.st_ino);
	assert_int_equal(f->ops->lookup(f->st, obj, "passwd", &out), -ENOTDIR);
	assert_int_equal(f->ops->create(f->st, obj, "x", STORE_CREATE_GUARDED,
					NULL, NULL, &test_root_cred, &out),
			 -ENOTDIR);
	assert_int_equal(f->ops->readlink(f->st, obj, buf, sizeof(buf), &len),
			 0);
	assert_int_equal(len, 4);
	assert_memory_equal(buf, "/etc", 4);
	f->ops->obj_unref(obj);
	obj = fixture_lookup(f, f->root, "up");
	assert_int_equal(fixture_attr(f, obj).type, STORE_LNK);
	f->ops->obj_unref(obj);
	assert_null(out);
}

static void test_local_symlink_handle_resolves_to_the_link(void **state)
{
	struct fixture *f = *state;
	struct store_obj *obj;
	struct store_fh fh;
	char path[160];
	char buf[64];
	size_t len = 0;

	assert_int_equal(symlink("/etc/passwd",
				 fixture_path(f, "pw", path, sizeof(path))),
			 0);
	obj = fixture_lookup(f, f->root, "pw");
	f->ops->obj_fh(obj, &fh);
	f->ops->obj_unref(obj);
	fixture_reopen(f);
	assert_int_equal(f->ops->resolve(f->st, &fh, &obj), 0);
	assert_int_equal(fixture_attr(f, obj).type, STORE_LNK);
	assert_int_equal(f->ops->readlink(f->st, obj, buf, sizeof(buf), &len),
			 0);
	assert_int_equal(len, 11);
	assert_memory_equal(buf, "/etc/passwd", 11);
	f->ops->obj_unref(obj);
}

/* Wraps the kernel handle of @path into our format with a valid MAC. */
static void forge_handle(struct fixture *f, const char *path,
			 struct store_fh *fh)
{
	struct store_secret sec;
	struct store_kfh kfh;

	assert_int_equal(store__secret_load(f->state, &sec, NULL, 0), 0);
	assert_int_equal(store__kfh_get(AT_FDCWD, path, 0, &kfh), 0);
	store__fh_encode(&sec, TEST_EXPORT_ID, &kfh, fh);
}

static void test_local_signed_handle_outside_export_is_refused(void **state)
{
	struct fixture *f = *state;
	struct store_obj *obj = NULL;
	char shm[] = "/dev/shm/dsnfs-store-XXXXXX";
	struct store_fh fh;
	struct store_kfh kfh;
	char path[160];
	int fd;

	/* Same filesystem (the test dir is on /tmp): a file... */
	log_capture_reset();
	forge_handle(f, "/etc/passwd", &fh);
	assert_int_equal(f->ops->resolve(f->st, &fh, &obj), -ESTALE);
	assert_true(log_capture_contains(
		"store: ds1: a signed handle names a file outside the export"));
	/* ...a directory, and the directory right above the export. */
	forge_handle(f, "/etc", &fh);
	assert_int_equal(f->ops->resolve(f->st, &fh, &obj), -ESTALE);
	forge_handle(f, f->dir, &fh);
	assert_int_equal(f->ops->resolve(f->st, &fh, &obj), -ESTALE);
	assert_null(obj);
	/* Another filesystem (tmpfs), where it gives handles. */
	fd = mkstemp(shm);
	if (fd >= 0 && store__kfh_get(AT_FDCWD, shm, 0, &kfh) == 0) {
		forge_handle(f, shm, &fh);
		assert_int_equal(f->ops->resolve(f->st, &fh, &obj), -ESTALE);
	}
	if (fd >= 0) {
		close(fd);
		unlink(shm);
	}
	/* The real thing, for contrast: the export's own subdirectory. */
	obj = fixture_dir(f, f->root, "inside");
	f->ops->obj_unref(obj);
	fixture_reopen(f);
	forge_handle(f, fixture_path(f, "inside", path, sizeof(path)), &fh);
	assert_int_equal(f->ops->resolve(f->st, &fh, &obj), 0);
	f->ops->obj_unref(obj);
}

static void test_local_read_eof_is_exact(void **state)
{
	struct fixture *f = *state;
	uint8_t data[100], buf[300];
	struct store_obj *obj;
	uint32_t n = 0;
	bool eof = false;

	for (size_t i = 0; i < sizeof(data); i++) {
		data[i] = (uint8_t)i;
	}
	obj = fixture_file(f, f->root, "f", data, sizeof(data));
	assert_int_equal(f->ops->read(f->st, obj, 0, buf, 99, &n, &eof), 0);
	assert_int_equal(n, 99);
	assert_false(eof);
	assert_int_equal(f->ops->read(f->st, obj, 0, buf, 100, &n, &eof), 0);
	assert_int_equal(n, 100);
	assert_true(eof);
	assert_memory_equal(buf, data, 100);
	assert_int_equal(f->ops->read(f->st, obj, 0, buf, 300, &n, &eof), 0);
	assert_int_equal(n, 100);
	assert_true(eof);
	/* At size - 1, size and size + 1. */
	assert_int_equal(f->ops->read(f->st, obj, 99, buf, 1, &n, &eof), 0);
	assert_int_equal(n, 1);
	assert_int_equal(buf[0], 99);
	assert_true(eof);
	assert_int_equal(f->ops->read(f->st, obj, 98, buf, 1, &n, &eof), 0);
	assert_false(eof);
	assert_int_equal(f->ops->read(f->st, obj, 100, buf, 10, &n, &eof), 0);
	assert_int_equal(n, 0);
	assert_true(eof);
	assert_int_equal(f->ops->read(f->st, obj, 101, buf, 10, &n, &eof), 0);
	assert_int_equal(n, 0);
	assert_true(eof);
	assert_int_equal(
		f->ops->read(f->st, obj, UINT64_MAX, buf, 10, &n, &eof), 0);
	assert_int_equal(n, 0);
	assert_true(eof);
	f->ops->obj_unref(obj);
}

static void test_local_write_sync_and_commit(void **state)
{
	struct fixture *f = *state;
	struct store_obj *obj, *dir;
	bool sync_failed = true;
	uint8_t buf[16];
	uint32_t n;
	bool eof;

	obj = fixture_file(f, f->root, "f", "0123456789", 10);
	assert_int_equal(f->ops->write(f->st, obj, 4, "ab", 2, STORE_DATA_SYNC,
				       &sync_failed),
			 0);
	assert_false(sync_failed);
	assert_int_equal(f->ops->write(f->st, obj, 12, "yz", 2, STORE_FILE_SYNC,
				       &sync_failed),
			 0);
	assert_int_equal(f->ops->commit(f->st, obj, 0, 0, &sync_failed), 0);
	assert_false(sync_failed);
	assert_int_equal(fixture_attr(f, obj).size_bytes, 14);
	assert_int_equal(f->ops->read(f->st, obj, 0, buf, 16, &n, &eof), 0);
	assert_int_equal(n, 14);
	assert_memory_equal(buf, "0123ab6789\0\0yz", 14);
	/* Refused before any sync: nothing acknowledged can be lost. */
	assert_int_equal(f->ops->write(f->st, obj, INT64_MAX, "x", 1,
				       STORE_FILE_SYNC, &sync_failed),
			 -EFBIG);
	assert_false(sync_failed);
	dir = fixture_dir(f, f->root, "d");
	assert_int_equal(f->ops->write(f->st, dir, 0, "x", 1, STORE_UNSTABLE,
				       &sync_failed),
			 -EISDIR);
	assert_int_equal(f->ops->read(f->st, dir, 0, buf, 1, &n, &eof),
			 -EISDIR);
	assert_int_equal(f->ops->commit(f->st, dir, 0, 0, &sync_failed),
			 -EISDIR);
	assert_false(sync_failed);
	f->ops->obj_unref(dir);
	f->ops->obj_unref(obj);
}

static void test_local_setattr_changes_what_it_is_told(void **state)
{
	struct fixture *f = *state;
	struct store_sattr sa = { 0 };
	struct store_obj *obj, *dir, *lnk;
	struct store_attr attr;
	struct timespec before;

	obj = fixture_file(f, f->root, "f", "hello", 5);
	sa.set_mode = true;
	sa.mode = 04751;
	sa.set_uid = true;
	sa.uid = 4321;
	sa.set_gid = true;
	sa.gid = 8765;
	sa.set_size = true;
	sa.size_bytes = 1 << 20;
	sa.atime_how = STORE_TIME_CLIENT;
	sa.atime = (struct timespec){ .tv_sec = 1000, .tv_nsec = 5 };
	sa.mtime_how = STORE_TIME_CLIENT;
	sa.mtime = (struct timespec){ .tv_sec = 2000, .tv_nsec = 7 };
	assert_int_equal(f->ops->setattr(f->st, obj, &sa, &test_root_cred), 0);
	attr = fixture_attr(f, obj);
	/* The mode comes after chown, so the set-uid bit survives. */
	assert_int_equal(attr.mode, 04751);
	assert_int_equal(attr.uid, 4321);
	assert_int_equal(attr.gid, 8765);
	assert_int_equal(attr.size_bytes, 1 << 20);
	assert_int_equal(attr.atime.tv_sec, 1000);
	assert_int_equal(attr.atime.tv_nsec, 5);
	assert_int_equal(attr.mtime.tv_sec, 2000);
	assert_int_equal(attr.mtime.tv_nsec, 7);

	memset(&sa, 0, sizeof(sa));
	sa.set_size = true;
	sa.size_bytes = 2;
	sa.mtime_how = STORE_TIME_SERVER;
	clock_gettime(CLOCK_REALTIME, &before);
	assert_int_equal(f->ops->setattr(f->st, obj, &sa, &test_root_cred), 0);
	attr = fixture_attr(f, obj);
	assert_int_equal(attr.size_bytes, 2);
	assert_int_equal(attr.atime.tv_sec, 1000);
	assert_true(attr.mtime.tv_sec >= before.tv_sec - 1);

	dir = fixture_dir(f, f->root, "d");
	assert_int_equal(f->ops->setattr(f->st, dir, &sa, &test_root_cred),
			 -EISDIR);
	assert_int_equal(f->ops->symlink(f->st, f->root, "l", "f", NULL,
					 &test_root_cred, &lnk),
			 0);
	memset(&sa, 0, sizeof(sa));
	sa.set_mode = true;
	sa.mode = 0600;
	sa.set_uid = true;
	sa.uid = 77;
	assert_int_equal(f->ops->setattr(f->st, lnk, &sa, &test_root_cred), 0);
	attr = fixture_attr(f, lnk);
	assert_int_equal(attr.uid, 77);
	assert_int_equal(attr.mode, 0777);
	/* The file behind the symlink is untouched. */
	assert_int_equal(fixture_attr(f, obj).uid, 4321);
	sa.set_size = true;
	assert_int_equal(f->ops->setattr(f->st, lnk, &sa, &test_root_cred),
			 -EINVAL);
	f->ops->obj_unref(lnk);
	f->ops->obj_unref(dir);
	f->ops->obj_unref(obj);
}

static void test_local_fsstat_reports_the_filesystem(void **state)
{
	struct fixture *f = *state;
	struct store_fsstat fs;

	assert_int_equal(f->ops->fsstat(f->st, &fs), 0);
	assert_true(fs.total_bytes > 0);
	assert_true(fs.free_bytes <= fs.total_bytes);
	assert_true(fs.avail_bytes <= fs.free_bytes);
	assert_true(fs.total_files >= fs.free_files);
}

struct seen {
	char names[2200][16];
	uint64_t fileids[2200];
	size_t count;
	size_t page_max; /* entries taken per call, then 1 = stop */
	size_t page_count;
	uint64_t last_cookie;
	int fail_with;
};

static int seen_cb(void *arg, const char *name, uint64_t fileid,
		   uint64_t cookie)
{
	struct seen *s = arg;

	if (s->fail_with != 0) {
		return s->fail_with;
	}
	if (s->page_max != 0 && s->page_count == s->page_max) {
		return 1;
	}
	assert_true(s->count < 2200);
	assert_true(strlen(name) < sizeof(s->names[0]));
	strcpy(s->names[s->count], name);
	s->fileids[s->count] = fileid;
	s->count++;
	s->page_count++;
	s->last_cookie = cookie;
	return 0;
}

static size_t seen_times(const struct seen *s, const char *name)
{
	size_t n = 0;

	for (size_t i = 0; i < s->count; i++) {
		n += strcmp(s->names[i], name) == 0;
	}
	return n;
}

static void test_local_readdir_lists_dots_and_keeps_root_parent(void **state)
{
	struct fixture *f = *state;
	struct seen *s = calloc(1, sizeof(*s));
	struct store_obj *obj;

	assert_non_null(s);
	obj = fixture_file(f, f->root, "file", NULL, 0);
	assert_int_equal(f->ops->readdir(f->st, f->root, 0, seen_cb, s), 0);
	assert_int_equal(s->count, 3);
	assert_int_equal(seen_times(s, "."), 1);
	assert_int_equal(seen_times(s, ".."), 1);
	assert_int_equal(seen_times(s, "file"), 1);
	for (size_t i = 0; i < s->count; i++) {
		if (strcmp(s->names[i], "file") == 0) {
			assert_int_equal(s->fileids[i], fixture_fileid(f, obj));
		} else {
			assert_int_equal(s->fileids[i],
					 fixture_fileid(f, f->root));
		}
	}
	assert_int_equal(f->ops->readdir(f->st, obj, 0, seen_cb, s), -ENOTDIR);
	assert_int_equal(
		f->ops->readdir(f->st, f->root, UINT64_MAX, seen_cb, s),
		-STORE_EBADCOOKIE);
	s->fail_with = -ENOSPC;
	assert_int_equal(f->ops->readdir(f->st, f->root, 0, seen_cb, s),
			 -ENOSPC);
	f->ops->obj_unref(obj);
	free(s);
}

static void test_local_readdir_pages_1000_entries_while_adding(void **state)
{
	struct fixture *f = *state;
	struct seen *s = calloc(1, sizeof(*s));
	struct store_obj *dir, *obj;
	uint64_t cookie = 0;
	char name[32];
	int added = 0;
	int pages = 0;

	assert_non_null(s);
	dir = fixture_dir(f, f->root, "big");
	for (int i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "f%04d", i);
		obj = fixture_file(f, dir, name, NULL, 0);
		f->ops->obj_unref(obj);
	}
	s->page_max = 37;
	for (;;) {
		s->page_count = 0;
		assert_int_equal(
			f->ops->readdir(f->st, dir, cookie, seen_cb, s), 0);
		pages++;
		if (s->page_count < s->page_max) {
			break;
		}
		cookie = s->last_cookie;
		/* The directory changes between pages. */
		for (int i = 0; i < 10; i++) {
			snprintf(name, sizeof(name), "n%04d", added++);
			obj = fixture_file(f, dir, name, NULL, 0);
			f->ops->obj_unref(obj);
		}
	}
	assert_true(pages > 27);
	for (int i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "f%04d", i);
		assert_int_equal(seen_times(s, name), 1);
	}
	for (int i = 0; i < added; i++) {
		snprintf(name, sizeof(name), "n%04d", i);
		assert_true(seen_times(s, name) <= 1);
	}
	assert_int_equal(seen_times(s, "."), 1);
	assert_int_equal(seen_times(s, ".."), 1);
	f->ops->obj_unref(dir);
	free(s);
}

/* A handle found in the cache skips the MAC (the cache compares every
 * byte): one whose MAC or export id differs is still refused while the
 * genuine one sits in the cache. */
static void test_local_cached_handle_still_needs_its_own_bytes(void **state)
{
	struct fixture *f = *state;
	struct store_obj *obj, *out = NULL;
	struct store_fh fh, forged;

	obj = fixture_file(f, f->root, "c", "x", 1);
	f->ops->obj_fh(obj, &fh);
	f->ops->obj_unref(obj);
	assert_int_equal(f->ops->resolve(f->st, &fh, &out), 0);
	f->ops->obj_unref(out);
	out = NULL;
	forged = fh;
	forged.data[forged.len - 1] ^= 1;
	assert_int_equal(f->ops->resolve(f->st, &forged, &out),
			 -STORE_EBADHANDLE);
	forged = fh;
	forged.data[1] ^= 1; /* the export id (handle.c) */
	assert_int_equal(f->ops->resolve(f->st, &forged, &out),
			 -STORE_EBADHANDLE);
	assert_null(out);
	assert_int_equal(f->ops->resolve(f->st, &fh, &out), 0);
	f->ops->obj_unref(out);
}

static void test_local_deleted_file_is_stale(void **state)
{
	struct fixture *f = *state;
	struct store_obj *obj, *out = NULL;
	struct store_fh fh, dfh;
	char path[160];

	/* Removed through the store. */
	obj = fixture_file(f, f->root, "a", "x", 1);
	f->ops->obj_fh(obj, &fh);
	f->ops->obj_unref(obj);
	assert_int_equal(f->ops->remove(f->st, f->root, "a"), 0);
	assert_int_equal(f->ops->resolve(f->st, &fh, &out), -ESTALE);
	/* Unlinked behind the store's back while cached. */
	obj = fixture_file(f, f->root, "b", "x", 1);
	f->ops->obj_fh(obj, &fh);
	f->ops->obj_unref(obj);
	assert_int_equal(f->ops->resolve(f->st, &fh, &out), 0);
	f->ops->obj_unref(out);
	out = NULL;
	assert_int_equal(unlink(fixture_path(f, "b", path, sizeof(path))), 0);
	assert_int_equal(f->ops->resolve(f->st, &fh, &out), -ESTALE);
	/* A removed directory; and both again with a cold cache. */
	obj = fixture_dir(f, f->root, "d");
	f->ops->obj_fh(obj, &dfh);
	f->ops->obj_unref(obj);
	assert_int_equal(rmdir(fixture_path(f, "d", path, sizeof(path))), 0);
	assert_int_equal(f->ops->resolve(f->st, &dfh, &out), -ESTALE);
	fixture_reopen(f);
	assert_int_equal(f->ops->resolve(f->st, &fh, &out), -ESTALE);
	assert_int_equal(f->ops->resolve(f->st, &dfh, &out), -ESTALE);
	assert_null(out);
}

static void test_local_remove_drops_the_cached_object(void **state)
{
	struct fixture *f = *state;
	struct store_fcache *fc = store__local(f->st)->fc;
	struct store_obj *obj;
	size_t before;

	obj = fixture_file(f, f->root, "big", "data", 4);
	f->ops->obj_unref(obj);
	before = store__fcache_count(fc);
	assert_int_equal(f->ops->remove(f->st, f->root, "big"), 0);
	assert_int_equal(store__fcache_count(fc), before - 1);
}

struct worker {
	struct fixture *f;
	struct store_fh fh;
	int errors;
};

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	struct fixture *f = w->f;
	struct store_obj *obj, *again;
	uint8_t buf[8];
	uint32_t n;
	bool eof;

	for (int i = 0; i < 300; i++) {
		if (f->ops->resolve(f->st, &w->fh, &obj) != 0) {
			w->errors++;
			continue;
		}
		if (f->ops->read(f->st, obj, 0, buf, sizeof(buf), &n, &eof) !=
			    0 ||
		    n != 8 || !eof) {
			w->errors++;
		}
		if (f->ops->lookup(f->st, f->root, "shared", &again) == 0) {
			f->ops->obj_unref(again);
		} else {
			w->errors++;
		}
		f->ops->obj_unref(obj);
	}
	return NULL;
}

static void test_local_ops_from_many_threads(void **state)
{
	struct fixture *f = *state;
	struct worker w[8];
	pthread_t t[8];
	struct store_obj *obj;
	struct store_fh fh;

	obj = fixture_file(f, f->root, "shared", "12345678", 8);
	f->ops->obj_fh(obj, &fh);
	f->ops->obj_unref(obj);
	fixture_reopen(f);
	for (int i = 0; i < 8; i++) {
		w[i] = (struct worker){ .f = f, .fh = fh };
		assert_int_equal(pthread_create(&t[i], NULL, worker_run, &w[i]),
				 0);
	}
	for (int i = 0; i < 8; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(w[i].errors, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_local_root_attrs_name_the_export, fixture_setup,
			fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_local_open_names_a_bad_path, fixture_setup,
			fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_local_lookup_rejects_bad_names, fixture_setup,
			fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_local_dotdot_stops_at_the_root, fixture_setup,
			fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_local_symlink_is_never_followed, fixture_setup,
			fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_local_symlink_handle_resolves_to_the_link,
			fixture_setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_local_signed_handle_outside_export_is_refused,
			fixture_setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_local_read_eof_is_exact,
						fixture_setup,
						fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_local_write_sync_and_commit, fixture_setup,
			fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_local_setattr_changes_what_it_is_told,
			fixture_setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_local_fsstat_reports_the_filesystem, fixture_setup,
			fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_local_readdir_lists_dots_and_keeps_root_parent,
			fixture_setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_local_readdir_pages_1000_entries_while_adding,
			fixture_setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_local_cached_handle_still_needs_its_own_bytes,
			fixture_setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_local_deleted_file_is_stale, fixture_setup,
			fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_local_remove_drops_the_cached_object,
			fixture_setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_local_ops_from_many_threads, fixture_setup,
			fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
