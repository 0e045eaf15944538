// SPDX-License-Identifier: Apache-2.0
/*
 * test_store_fcache: the bounded object cache (nfsd/store/local/fcache.c).  It
 * evicts the least recently used entry no one else holds, keeps held
 * entries past its bound (one object per file), keeps the first object of a
 * handle, and forgets on request.  Its bound changes while it serves:
 * shrinking evicts the least recently used, growing keeps every entry
 * (the table is rehashed).  Out of descriptors, it gives back a quarter.
 * A removed name drops its file's entry only with the file's last link.
 * Objects wrap O_PATH descriptors of /dev/null; the handles are made-up bytes
 * (the cache does not read them).
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

#include "nfsd/store/local/local_int.h"

static struct store_fh key(uint8_t n)
{
	struct store_fh fh = { .len = 23 };

	memset(fh.data, 0xee, fh.len);
	fh.data[10] = n;
	return fh;
}

static struct local_obj *obj_make(uint8_t n)
{
	struct store_fh fh = key(n);
	struct local_obj *obj = NULL;
	struct stat sb;
	int fd;

	fd = open("/dev/null", O_PATH | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &sb), 0);
	assert_int_equal(store__obj_new(fd, false, &sb, &fh, &obj), 0);
	return obj;
}

/* Caches a new object for key @n and drops the caller's reference. */
static void put_new(struct store_fcache *fc, uint8_t n)
{
	store__obj_unref(store__fcache_put(fc, obj_make(n)));
}

static bool cached(struct store_fcache *fc, uint8_t n)
{
	struct store_fh fh = key(n);
	struct local_obj *obj = store__fcache_get(fc, &fh);

	store__obj_unref(obj);
	return obj != NULL;
}

static void test_fcache_rejects_a_zero_bound(void **state)
{
	struct store_fcache *fc = NULL;

	(void)state;
	assert_int_equal(store__fcache_new(0, &fc), -EINVAL);
	assert_null(fc);
}

static void test_fcache_evicts_the_least_recently_used(void **state)
{
	struct store_fcache *fc;
	struct store_fh fh = key(1);
	struct local_obj *obj;

	(void)state;
	assert_int_equal(store__fcache_new(3, &fc), 0);
	put_new(fc, 1);
	put_new(fc, 2);
	put_new(fc, 3);
	assert_int_equal(store__fcache_count(fc), 3);
	/* Using 1 makes 2 the oldest. */
	obj = store__fcache_get(fc, &fh);
	assert_non_null(obj);
	store__obj_unref(obj);
	put_new(fc, 4);
	assert_int_equal(store__fcache_count(fc), 3);
	assert_false(cached(fc, 2));
	assert_true(cached(fc, 1));
	assert_true(cached(fc, 3));
	assert_true(cached(fc, 4));
	store__fcache_free(fc);
}

/* An entry in use is not evicted: the cache goes past its bound while it
 * is held, its descriptor stays open, and it goes once it is let go. */
static void test_fcache_reference_outlives_eviction(void **state)
{
	struct store_fcache *fc;
	struct local_obj *held;
	struct stat sb;

	(void)state;
	assert_int_equal(store__fcache_new(1, &fc), 0);
	held = store__fcache_put(fc, obj_make(1));
	put_new(fc, 2);
	assert_true(cached(fc, 1));
	assert_int_equal(store__fcache_count(fc), 2);
	/* Its descriptor is still open: ASan and fstat would tell. */
	assert_int_equal(fstat(held->fd, &sb), 0);
	assert_true(S_ISCHR(sb.st_mode));
	store__obj_unref(held);
	put_new(fc, 3);
	assert_int_equal(store__fcache_count(fc), 1);
	assert_false(cached(fc, 1));
	assert_false(cached(fc, 2));
	assert_true(cached(fc, 3));
	store__fcache_free(fc);
}

/*
 * One object per file: a resolve (get, else put of a new object, as
 * local.c does) of a file whose object a request still holds gives that
 * object, however many other files came in meanwhile.  On the old cache
 * the held object was evicted and the second resolve made another.
 */
static void test_fcache_one_object_per_file_while_held(void **state)
{
	struct store_fcache *fc;
	struct store_fh fh = key(1);
	struct local_obj *first, *again;

	(void)state;
	assert_int_equal(store__fcache_new(2, &fc), 0);
	first = store__fcache_put(fc, obj_make(1));
	for (uint8_t n = 2; n < 10; n++) {
		put_new(fc, n);
	}
	again = store__fcache_get(fc, &fh);
	if (again == NULL) {
		again = store__fcache_put(fc, obj_make(1));
	}
	assert_ptr_equal(again, first);
	/* The others were evicted down to the bound, the held one kept. */
	assert_int_equal(store__fcache_count(fc), 2);
	assert_true(cached(fc, 9));
	store__obj_unref(again);
	store__obj_unref(first);
	store__fcache_free(fc);
}

/* Shrinking and relieving skip entries in use too. */
static void test_fcache_resize_keeps_held_entries(void **state)
{
	struct store_fcache *fc;
	struct local_obj *held;

	(void)state;
	assert_int_equal(store__fcache_new(4, &fc), 0);
	held = store__fcache_put(fc, obj_make(1));
	put_new(fc, 2);
	put_new(fc, 3);
	assert_int_equal(store__fcache_resize(fc, 1), 0);
	assert_int_equal(store__fcache_count(fc), 1);
	assert_true(cached(fc, 1));
	assert_false(store__fcache_relieve(fc, -EMFILE));
	assert_true(cached(fc, 1));
	store__obj_unref(held);
	assert_true(store__fcache_relieve(fc, -EMFILE));
	assert_int_equal(store__fcache_count(fc), 0);
	store__fcache_free(fc);
}

static void test_fcache_keeps_the_first_object_of_a_handle(void **state)
{
	struct store_fcache *fc;
	struct local_obj *first, *second, *dup;

	(void)state;
	assert_int_equal(store__fcache_new(8, &fc), 0);
	first = store__fcache_put(fc, obj_make(7));
	dup = obj_make(7);
	second = store__fcache_put(fc, dup);
	assert_ptr_equal(second, first);
	assert_int_equal(store__fcache_count(fc), 1);
	store__obj_unref(second);
	store__obj_unref(first);
	store__fcache_free(fc);
}

static void test_fcache_drop_forgets(void **state)
{
	struct store_fcache *fc;
	struct store_fh fh = key(5);

	(void)state;
	assert_int_equal(store__fcache_new(8, &fc), 0);
	put_new(fc, 5);
	put_new(fc, 6);
	store__fcache_drop(fc, &fh);
	assert_false(cached(fc, 5));
	assert_true(cached(fc, 6));
	store__fcache_drop(fc, &fh);
	assert_int_equal(store__fcache_count(fc), 1);
	store__fcache_free(fc);
}

/* An object of the file at @path, cached under key @n. */
static struct local_obj *put_path(struct store_fcache *fc, uint8_t n,
				  const char *path)
{
	struct store_fh fh = key(n);
	struct local_obj *obj = NULL;
	struct stat sb;
	int fd = open(path, O_PATH | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &sb), 0);
	assert_int_equal(store__obj_new(fd, false, &sb, &fh, &obj), 0);
	return store__fcache_put(fc, obj);
}

/*
 * A removed name drops its file's entry only when the file has no link
 * left: while another hard link keeps it, a resolve through that link
 * gets the object a request still holds.  On the old cache the entry went
 * with the name and the next resolve made a second object of the file.
 */
static void test_fcache_drop_unlinked_keeps_a_linked_file(void **state)
{
	char dir[] = "/tmp/test_fcache.XXXXXX", a[64], b[64];
	struct store_fcache *fc;
	struct store_fh fh = key(3);
	struct local_obj *held, *again;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	fd = open(a, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(link(a, b), 0);
	assert_int_equal(store__fcache_new(8, &fc), 0);
	held = put_path(fc, 3, a);
	assert_int_equal(unlink(b), 0);
	store__fcache_drop_unlinked(fc, &fh);
	again = store__fcache_get(fc, &fh);
	assert_ptr_equal(again, held);
	store__obj_unref(again);
	/* The last name goes: so does the entry; the holder keeps its
	 * object (and the file's space) until it lets go. */
	assert_int_equal(unlink(a), 0);
	store__fcache_drop_unlinked(fc, &fh);
	assert_false(cached(fc, 3));
	assert_int_equal(store__fcache_count(fc), 0);
	store__fcache_drop_unlinked(fc, &fh);
	store__obj_unref(held);
	store__fcache_free(fc);
	assert_int_equal(rmdir(dir), 0);
}

static void test_fcache_resize_shrinks_and_grows(void **state)
{
	struct store_fcache *fc;

	(void)state;
	assert_int_equal(store__fcache_new(8, &fc), 0);
	for (uint8_t n = 0; n < 8; n++) {
		put_new(fc, n);
	}
	assert_true(cached(fc, 0)); /* now the most recently used */
	assert_int_equal(store__fcache_resize(fc, 3), 0);
	assert_int_equal(store__fcache_count(fc), 3);
	assert_true(cached(fc, 0));
	assert_true(cached(fc, 7));
	assert_true(cached(fc, 6));
	assert_false(cached(fc, 5));
	/* Far past the table it was made with: every entry still found. */
	assert_int_equal(store__fcache_resize(fc, 100), 0);
	for (uint8_t n = 10; n < 110; n++) {
		put_new(fc, n);
	}
	assert_int_equal(store__fcache_count(fc), 100);
	for (uint8_t n = 10; n < 110; n++) {
		assert_true(cached(fc, n));
	}
	assert_int_equal(store__fcache_resize(fc, 0), -EINVAL);
	assert_int_equal(store__fcache_resize(fc, STORE_FCACHE_MAX_ENTRIES + 1),
			 -EINVAL);
	store__fcache_free(fc);
}

static void test_fcache_relieve_gives_back_a_quarter(void **state)
{
	struct store_fcache *fc;

	(void)state;
	assert_int_equal(store__fcache_new(16, &fc), 0);
	assert_false(store__fcache_relieve(fc, -EMFILE)); /* empty */
	for (uint8_t n = 0; n < 16; n++) {
		put_new(fc, n);
	}
	assert_false(store__fcache_relieve(fc, -EIO));
	assert_int_equal(store__fcache_count(fc), 16);
	assert_true(store__fcache_relieve(fc, -EMFILE));
	assert_int_equal(store__fcache_count(fc), 12);
	assert_false(cached(fc, 3)); /* the oldest went */
	assert_true(cached(fc, 4));
	assert_true(store__fcache_relieve(fc, -ENFILE));
	assert_int_equal(store__fcache_count(fc), 9);
	store__fcache_free(fc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fcache_rejects_a_zero_bound),
		cmocka_unit_test(test_fcache_evicts_the_least_recently_used),
		cmocka_unit_test(test_fcache_reference_outlives_eviction),
		cmocka_unit_test(test_fcache_one_object_per_file_while_held),
		cmocka_unit_test(test_fcache_resize_keeps_held_entries),
		cmocka_unit_test(
			test_fcache_keeps_the_first_object_of_a_handle),
		cmocka_unit_test(test_fcache_drop_forgets),
		cmocka_unit_test(test_fcache_drop_unlinked_keeps_a_linked_file),
		cmocka_unit_test(test_fcache_resize_shrinks_and_grows),
		cmocka_unit_test(test_fcache_relieve_gives_back_a_quarter),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
