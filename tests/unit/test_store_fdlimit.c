// SPDX-License-Identifier: Apache-2.0
/*
 * test_store_fdlimit: the local store out of descriptors, and the budget
 * its file cache gets (nfsd/store/local/local_fd.c, fcache.c,
 * nfsd/server/fd_budget.c). With a cache of 4 files and RLIMIT_NOFILE a few
 * descriptors above what the process holds, 40 files are each looked up and
 * read: every open that meets EMFILE evicts from the cache and succeeds on its
 * retry.  With every descriptor held by objects in use, nothing can be evicted:
 * the lookup fails with -EMFILE, which NFS answers NFS3ERR_JUKEBOX.  The
 * budget: RLIMIT_NOFILE - max_conns - reserve, shared by the exports, two
 * descriptors a file; file_cache_fds overrides it; a limit too low keeps
 * a minimum and says so.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>

#include <cmocka.h>

#include "nfsd/nfs3/nfs3_int.h"
#include "nfsd/server/server_int.h"
#include "test_store_fixture.h"
#include "tests/lib/log_capture.h"

#define NFILES 40

struct fdl {
	struct fixture *f;
	struct rlimit saved;
};

static int setup(void **state)
{
	struct fdl *t = calloc(1, sizeof(*t));
	void *fs = NULL;

	if (t == NULL || fixture_setup(&fs) != 0) {
		return -1;
	}
	t->f = fs;
	if (getrlimit(RLIMIT_NOFILE, &t->saved) != 0) {
		return -1;
	}
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct fdl *t = *state;
	void *fs = t->f;

	setrlimit(RLIMIT_NOFILE, &t->saved);
	fixture_teardown(&fs);
	free(t);
	return 0;
}

/* The lowest free descriptor: what the limit must stay above. */
static int lowest_free_fd(void)
{
	int fd = dup(0);

	assert_true(fd >= 0);
	close(fd);
	return fd;
}

static void limit_set(int nofile)
{
	struct rlimit rl;

	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	rl.rlim_cur = (rlim_t)nofile;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
}

static void name_of(int i, char *buf, size_t len)
{
	snprintf(buf, len, "f%02d", i);
}

/* Makes NFILES files of 8 bytes, then drops every cached object. */
static void files_make(struct fixture *f)
{
	for (int i = 0; i < NFILES; i++) {
		char name[8];

		name_of(i, name, sizeof(name));
		f->ops->obj_unref(
			fixture_file(f, f->root, name, "12345678", 8));
	}
	fixture_reopen(f);
}

static void test_tiny_budget_evicts_and_retries(void **state)
{
	struct fdl *t = *state;
	struct fixture *f = t->f;

	files_make(f);
	assert_int_equal(store_local_cache_resize(f->st, 4), 0);
	/* 4 cached files hold up to 8 descriptors: more than the limit
	 * leaves, so opens meet EMFILE and must evict to go on. */
	limit_set(lowest_free_fd() + 5);
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < NFILES; i++) {
			struct store_obj *obj = NULL;
			char name[8], buf[8];
			uint32_t nread = 0;
			bool eof = false;

			name_of(i, name, sizeof(name));
			assert_int_equal(
				f->ops->lookup(f->st, f->root, name, &obj), 0);
			assert_int_equal(f->ops->read(f->st, obj, 0, buf,
						      sizeof(buf), &nread,
						      &eof),
					 0);
			assert_int_equal(nread, 8);
			assert_memory_equal(buf, "12345678", 8);
			f->ops->obj_unref(obj);
		}
	}
	assert_true(store__fcache_count(store__local(f->st)->fc) <= 4);
}

static void test_nothing_to_evict_is_jukebox(void **state)
{
	struct fdl *t = *state;
	struct fixture *f = t->f;
	struct store_obj *held[NFILES] = { NULL };
	int nheld = 0, err = 0;

	files_make(f);
	assert_int_equal(store_local_cache_resize(f->st, 4), 0);
	limit_set(lowest_free_fd() + 8);
	/* Objects in use keep their descriptors, evicted or not: the
	 * lookups succeed until the table is full, then fail cleanly. */
	for (int i = 0; i < NFILES && !err; i++) {
		char name[8];

		name_of(i, name, sizeof(name));
		err = f->ops->lookup(f->st, f->root, name, &held[nheld]);
		if (!err) {
			nheld++;
		}
	}
	assert_int_equal(err, -EMFILE);
	assert_true(nheld >= 4 && nheld < NFILES);
	assert_int_equal(nfs3__status_from_errno(err), NFS3ERR_JUKEBOX);
	assert_int_equal(nfs3__status_from_errno(-ENFILE), NFS3ERR_JUKEBOX);
	/* Given back, the descriptors serve again. */
	for (int i = 0; i < nheld; i++) {
		f->ops->obj_unref(held[i]);
	}
	held[0] = NULL;
	assert_int_equal(f->ops->lookup(f->st, f->root, "f39", &held[0]), 0);
	f->ops->obj_unref(held[0]);
}

/* Out of descriptors, the handle of a live file cannot be opened: EMFILE
 * (JUKEBOX, logged with its cause); the handle of a deleted file is STALE
 * all the same, since the kernel decodes a handle before it takes a
 * descriptor. */
static void
test_no_descriptor_left_live_is_jukebox_deleted_is_stale(void **state)
{
	struct fdl *t = *state;
	struct fixture *f = t->f;
	struct store_obj *live, *gone, *obj = NULL;
	struct store_fh live_fh, gone_fh;
	char path[160];
	int spare[64], nspare = 0, err;

	live = fixture_file(f, f->root, "live", "12345678", 8);
	gone = fixture_file(f, f->root, "gone", "12345678", 8);
	f->ops->obj_fh(live, &live_fh);
	f->ops->obj_fh(gone, &gone_fh);
	f->ops->obj_unref(live);
	f->ops->obj_unref(gone);
	assert_int_equal(unlink(fixture_path(f, "gone", path, sizeof(path))),
			 0);
	fixture_reopen(f);
	limit_set(lowest_free_fd() + 8);
	while (nspare < 64 && (spare[nspare] = dup(0)) >= 0) {
		nspare++;
	}
	assert_true(nspare < 64);
	log_capture_reset();
	err = f->ops->resolve(f->st, &live_fh, &obj);
	assert_int_equal(err, -EMFILE);
	assert_int_equal(nfs3__status_from_errno(err), NFS3ERR_JUKEBOX);
	assert_true(log_capture_contains(
		"open_by_handle_at: Too many open files; answering "
		"NFS3ERR_JUKEBOX"));
	assert_int_equal(f->ops->resolve(f->st, &gone_fh, &obj), -ESTALE);
	while (nspare > 0) {
		close(spare[--nspare]);
	}
	assert_int_equal(f->ops->resolve(f->st, &live_fh, &obj), 0);
	f->ops->obj_unref(obj);
}

static void test_budget_follows_the_limit(void **state)
{
	const struct server_fd_inputs in = { .max_conns = 4096,
					     .loops = 2,
					     .work_threads = 16 };
	struct server_fd_inputs over = in;
	struct server_fd_budget b;

	(void)state;
	server__fd_budget_compute(&in, 20000, 2, &b);
	assert_int_equal(b.reserve, 160 + 4 + 16 + 4);
	assert_int_equal(b.total, 20000 - 4096 - 184);
	assert_int_equal(b.files_per_export, (20000 - 4096 - 184) / 2 / 2);
	assert_false(b.overridden);
	assert_false(b.too_low);

	/* 32 exports share it. */
	server__fd_budget_compute(&in, 20000, 32, &b);
	assert_int_equal(b.files_per_export,
			 (20000 - 4096 - (160 + 4 + 16 + 64)) / 32 / 2);

	/* A huge limit: each cache stops at 65536 files. */
	server__fd_budget_compute(&in, 1u << 30, 1, &b);
	assert_int_equal(b.files_per_export, 65536);

	/* Below the connections: the minimum, flagged. */
	server__fd_budget_compute(&in, 1024, 2, &b);
	assert_int_equal(b.total, 0);
	assert_true(b.too_low);
	assert_int_equal(b.files_per_export, 16);

	/* file_cache_fds overrides, even above the automatic cap. */
	over.file_cache_fds = 1000;
	server__fd_budget_compute(&over, 20000, 4, &b);
	assert_true(b.overridden);
	assert_int_equal(b.total, 1000);
	assert_int_equal(b.files_per_export, 125);
	over.file_cache_fds = 1u << 22;
	server__fd_budget_compute(&over, 20000, 1, &b);
	assert_int_equal(b.files_per_export, 1u << 21);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_tiny_budget_evicts_and_retries, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_nothing_to_evict_is_jukebox, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_no_descriptor_left_live_is_jukebox_deleted_is_stale,
			setup, teardown),
		cmocka_unit_test(test_budget_follows_the_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
