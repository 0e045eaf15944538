// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of VMFS's zeroing on first write (store/local/zero_first.c)
 * through the local store: a write into a thin (sparse) or lazy-zeroed
 * (unwritten extents) block leaves the whole 1 MiB block written, its data and
 * zeros where they belong; blocks already written are left alone and not
 * counted; with the option off nothing is zeroed; and concurrent first
 * writes into one block never zero each other's data.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <pthread.h>

#include "tests/unit/test_store_fixture.h"

#define MIB (1u << 20)

static int zf_setup(void **state)
{
	int err = fixture_setup(state);
	struct fixture *f;

	if (err) {
		return err;
	}
	f = *state;
	atomic_store(&f->st->zero_on_first_write, true);
	return 0;
}

/* A file of @size: a hole (thin), or unwritten extents (lazy-zeroed). */
static struct store_obj *disk_file(struct fixture *f, const char *name,
				   uint64_t size, bool lazy_zeroed)
{
	struct store_obj *obj = fixture_file(f, f->root, name, NULL, 0);
	char path[160];
	int fd;

	fd = open(fixture_path(f, name, path, sizeof(path)), O_RDWR);
	assert_true(fd >= 0);
	if (lazy_zeroed) {
		assert_int_equal(fallocate(fd, 0, 0, (off_t)size), 0);
	} else {
		assert_int_equal(ftruncate(fd, (off_t)size), 0);
	}
	close(fd);
	return obj;
}

/* The first hole of @name at or after @from (SEEK_HOLE), as the server's
 * descriptor sees it: an unwritten extent without data is a hole. */
static off_t first_hole(struct fixture *f, const char *name, off_t from)
{
	char path[160];
	off_t h;
	int fd;

	fd = open(fixture_path(f, name, path, sizeof(path)), O_RDONLY);
	assert_true(fd >= 0);
	h = lseek(fd, from, SEEK_HOLE);
	close(fd);
	return h;
}

static void write_ok(struct fixture *f, struct store_obj *obj, uint64_t off,
		     const void *buf, uint32_t len)
{
	bool sync_failed;

	assert_int_equal(f->ops->write(f->st, obj, off, buf, len,
				       STORE_UNSTABLE, &sync_failed),
			 0);
}

static void assert_bytes(struct fixture *f, const char *name, uint64_t off,
			 uint32_t len, uint8_t want)
{
	static uint8_t buf[MIB];
	char path[160];
	int fd;

	assert_true(len <= sizeof(buf));
	fd = open(fixture_path(f, name, path, sizeof(path)), O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, len, (off_t)off), (ssize_t)len);
	close(fd);
	for (uint32_t i = 0; i < len; i++) {
		if (buf[i] != want) {
			fail_msg("%s: byte %" PRIu64 " is 0x%02x, want 0x%02x",
				 name, off + i, buf[i], want);
		}
	}
}

static void first_write_zeroes_the_block(struct fixture *f, const char *name,
					 bool lazy_zeroed)
{
	struct store_obj *obj = disk_file(f, name, 4 * MIB, lazy_zeroed);
	uint8_t data[4096];

	memset(data, 0xab, sizeof(data));
	assert_true(first_hole(f, name, MIB) == MIB);
	write_ok(f, obj, MIB + 8192, data, sizeof(data));
	/* Block 1 is written through; blocks 2 and 3 are still holes. */
	assert_int_equal(first_hole(f, name, MIB), 2 * MIB);
	assert_int_equal(atomic_load(&f->st->zeroed_blocks), 1);
	assert_bytes(f, name, MIB, 8192, 0);
	assert_bytes(f, name, MIB + 8192, 4096, 0xab);
	assert_bytes(f, name, MIB + 12288, MIB - 12288, 0);
	/* A second write into the zeroed block zeroes nothing. */
	write_ok(f, obj, MIB, data, sizeof(data));
	assert_int_equal(atomic_load(&f->st->zeroed_blocks), 1);
	assert_bytes(f, name, MIB, 4096, 0xab);
	assert_bytes(f, name, MIB + 8192, 4096, 0xab);
	f->ops->obj_unref(obj);
}

static void test_thin_block_zeroed_on_first_write(void **state)
{
	first_write_zeroes_the_block(*state, "thin-flat.vmdk", false);
}

static void test_lazy_zeroed_block_zeroed_on_first_write(void **state)
{
	first_write_zeroes_the_block(*state, "lazy-flat.vmdk", true);
}

/* A write across two blocks zeroes both; data already there is kept. */
static void test_write_across_blocks_keeps_old_data(void **state)
{
	struct fixture *f = *state;
	struct store_obj *obj = disk_file(f, "d", 4 * MIB, false);
	uint8_t old[4096], data[8192];
	char path[160];
	int fd;

	/* Data put there behind the server's back: block 2 has data and
	 * holes. */
	memset(old, 0x11, sizeof(old));
	fd = open(fixture_path(f, "d", path, sizeof(path)), O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, old, sizeof(old), 2 * MIB + 65536),
			 sizeof(old));
	close(fd);
	memset(data, 0x22, sizeof(data));
	write_ok(f, obj, 2 * MIB - 4096, data, sizeof(data));
	assert_int_equal(atomic_load(&f->st->zeroed_blocks), 2);
	assert_int_equal(first_hole(f, "d", MIB), 3 * MIB);
	assert_bytes(f, "d", MIB, MIB - 4096, 0);
	assert_bytes(f, "d", 2 * MIB - 4096, 8192, 0x22);
	assert_bytes(f, "d", 2 * MIB + 4096, 65536 - 4096, 0);
	assert_bytes(f, "d", 2 * MIB + 65536, 4096, 0x11);
	f->ops->obj_unref(obj);
}

static void test_option_off_zeroes_nothing(void **state)
{
	struct fixture *f = *state;
	struct store_obj *obj;
	uint8_t data[4096];

	atomic_store(&f->st->zero_on_first_write, false);
	obj = disk_file(f, "d", 2 * MIB, false);
	memset(data, 0x33, sizeof(data));
	write_ok(f, obj, 0, data, sizeof(data));
	assert_int_equal(atomic_load(&f->st->zeroed_blocks), 0);
	assert_int_equal(first_hole(f, "d", 0), 4096);
	f->ops->obj_unref(obj);
}

/* Past the end of file there is nothing to zero: the file grows by the
 * write alone. */
static void test_write_past_eof_zeroes_below_it_only(void **state)
{
	struct fixture *f = *state;
	struct store_obj *obj = disk_file(f, "d", 0, false);
	uint8_t data[4096];
	struct stat sb;
	char path[160];

	memset(data, 0x44, sizeof(data));
	write_ok(f, obj, 8192, data, sizeof(data));
	assert_int_equal(stat(fixture_path(f, "d", path, sizeof(path)), &sb),
			 0);
	assert_int_equal(sb.st_size, 12288);
	assert_int_equal(atomic_load(&f->st->zeroed_blocks), 0);
	f->ops->obj_unref(obj);
}

struct writer {
	struct fixture *f;
	struct store_obj *obj;
	unsigned index;
};

#define WRITERS 8u

static void *writer_run(void *arg)
{
	struct writer *w = arg;
	uint8_t data[4096];
	bool sync_failed;

	memset(data, 0x50 + (int)w->index, sizeof(data));
	/* Each writer owns every WRITERS-th 4 KiB piece of block 0. */
	for (uint64_t off = w->index * 4096u; off < MIB;
	     off += WRITERS * 4096u) {
		if (w->f->ops->write(w->f->st, w->obj, off, data, sizeof(data),
				     STORE_UNSTABLE, &sync_failed) != 0) {
			return (void *)1;
		}
	}
	return NULL;
}

/* Racing first writes into one block: zeros never land on data. */
static void test_concurrent_first_writes_keep_all_data(void **state)
{
	struct fixture *f = *state;
	struct store_obj *obj = disk_file(f, "d", MIB, true);
	struct writer w[WRITERS];
	pthread_t t[WRITERS];

	for (unsigned i = 0; i < WRITERS; i++) {
		w[i] = (struct writer){ f, obj, i };
		assert_int_equal(pthread_create(&t[i], NULL, writer_run, &w[i]),
				 0);
	}
	for (unsigned i = 0; i < WRITERS; i++) {
		void *ret;

		assert_int_equal(pthread_join(t[i], &ret), 0);
		assert_null(ret);
	}
	for (uint64_t off = 0; off < MIB; off += 4096) {
		assert_bytes(f, "d", off, 4096,
			     (uint8_t)(0x50 + (off / 4096) % WRITERS));
	}
	assert_int_equal(atomic_load(&f->st->zeroed_blocks), 1);
	f->ops->obj_unref(obj);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, zf_setup, fixture_teardown)
	const struct CMUnitTest tests[] = {
		T(test_thin_block_zeroed_on_first_write),
		T(test_lazy_zeroed_block_zeroed_on_first_write),
		T(test_write_across_blocks_keeps_old_data),
		T(test_option_off_zeroes_nothing),
		T(test_write_past_eof_zeroes_below_it_only),
		T(test_concurrent_first_writes_keep_all_data),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
