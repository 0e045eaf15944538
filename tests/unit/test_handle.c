// SPDX-License-Identifier: Apache-2.0
/*
 * test_handle: our file handle (nfsd/store/handle.c) and the secret that
 * signs it (secret.c).  A handle decodes to what was encoded; any changed
 * byte, a wrong length or version is -STORE_EBADHANDLE; the key file is
 * created once (0600, 32 bytes) and reused, so a handle resolves to the
 * same file after the store is reopened and after the file was renamed.
 * The MAC is HMAC-SHA-256 (RFC 4231's vectors pin it); a version-1 handle
 * (keyed xxh3) is accepted only with the version-1 secret.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
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

#include <nettle/hmac.h>
#include <xxhash.h>

#include "nfsd/store/store.h"
#include "nfsd/store/local/local.h"
#include "nfsd/store/store_int.h"

#define TEST_EXPORT_ID 0x11223344u

struct fixture {
	char dir[64];
	char state[96];
	char ds[96];
	struct store *st;
	struct store_secret sec;
};

static int rm_one(const char *path, const struct stat *sb, int flag,
		  struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static int store_reopen(struct fixture *f)
{
	char err[256] = "";

	if (f->st != NULL) {
		f->st->ops->close(f->st);
		f->st = NULL;
	}
	return store_local_open("ds1", f->ds, TEST_EXPORT_ID, f->state, &f->st,
				err, sizeof(err));
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (f == NULL) {
		return -1;
	}
	strcpy(f->dir, "/tmp/dsnfs-handle-XXXXXX");
	if (mkdtemp(f->dir) == NULL) {
		return -1;
	}
	snprintf(f->state, sizeof(f->state), "%s/state", f->dir);
	snprintf(f->ds, sizeof(f->ds), "%s/ds", f->dir);
	if (mkdir(f->state, 0700) != 0 || mkdir(f->ds, 0755) != 0) {
		return -1;
	}
	if (store_reopen(f) != 0) {
		return -1;
	}
	if (store__secret_load(f->state, &f->sec, NULL, 0) != 0) {
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	if (f->st != NULL) {
		f->st->ops->close(f->st);
	}
	nftw(f->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
	return 0;
}

static void sample_kfh(struct store_kfh *kfh)
{
	memset(kfh, 0, sizeof(*kfh));
	kfh->type = 1;
	kfh->len = 8;
	for (int i = 0; i < 8; i++) {
		kfh->f_handle[i] = (uint8_t)(0xa0 + i);
	}
}

static void test_handle_round_trips_with_its_export_id(void **state)
{
	struct fixture *f = *state;
	struct store_kfh in, out;
	struct store_fh fh;
	uint32_t id = 0;

	sample_kfh(&in);
	store__fh_encode(&f->sec, TEST_EXPORT_ID, &in, &fh);
	assert_int_equal(fh.len, 23);
	assert_int_equal(fh.data[0], STORE_FH_VERSION);
	assert_int_equal(store__fh_decode(&f->sec, &fh, &id, &out), 0);
	assert_int_equal(id, TEST_EXPORT_ID);
	assert_int_equal(out.type, 1);
	assert_int_equal(out.len, 8);
	assert_memory_equal(out.f_handle, in.f_handle, 8);
	id = 0;
	assert_int_equal(store_fh_export_id(&fh, &id), 0);
	assert_int_equal(id, TEST_EXPORT_ID);
}

static void test_handle_longest_kernel_handle_fits_56_bytes(void **state)
{
	struct fixture *f = *state;
	struct store_kfh in, out;
	struct store_fh fh;
	uint32_t id;

	memset(&in, 0x5a, sizeof(in));
	in.len = STORE_KFH_MAX;
	store__fh_encode(&f->sec, 7, &in, &fh);
	assert_int_equal(fh.len, STORE_FH_MAX);
	assert_int_equal(store__fh_decode(&f->sec, &fh, &id, &out), 0);
	assert_int_equal(out.len, STORE_KFH_MAX);
}

static void test_handle_any_flipped_bit_is_badhandle(void **state)
{
	struct fixture *f = *state;
	struct store_kfh kfh, out;
	struct store_fh fh, bad;
	uint32_t id;

	sample_kfh(&kfh);
	store__fh_encode(&f->sec, TEST_EXPORT_ID, &kfh, &fh);
	for (uint32_t i = 0; i < fh.len; i++) {
		for (int bit = 0; bit < 8; bit++) {
			bad = fh;
			bad.data[i] ^= (uint8_t)(1u << bit);
			assert_int_equal(
				store__fh_decode(&f->sec, &bad, &id, &out),
				-STORE_EBADHANDLE);
		}
	}
}

static void test_handle_other_secret_is_badhandle(void **state)
{
	struct fixture *f = *state;
	struct store_secret other = f->sec;
	struct store_kfh kfh, out;
	struct store_fh fh;
	uint32_t id;

	sample_kfh(&kfh);
	store__fh_encode(&f->sec, TEST_EXPORT_ID, &kfh, &fh);
	other.key[STORE_KEY_BYTES - 1] ^= 1;
	store__secret_keyed(&other);
	assert_int_equal(store__fh_decode(&other, &fh, &id, &out),
			 -STORE_EBADHANDLE);
}

static void test_handle_wrong_length_or_version_is_badhandle(void **state)
{
	struct fixture *f = *state;
	struct store_kfh kfh, out;
	struct store_fh fh, bad;
	uint32_t id;

	sample_kfh(&kfh);
	store__fh_encode(&f->sec, TEST_EXPORT_ID, &kfh, &fh);
	for (uint32_t len = 0; len < fh.len; len++) {
		bad = fh;
		bad.len = len;
		assert_int_equal(store__fh_decode(&f->sec, &bad, &id, &out),
				 -STORE_EBADHANDLE);
		assert_int_equal(store_fh_export_id(&bad, &id),
				 -STORE_EBADHANDLE);
	}
	bad = fh;
	bad.len = fh.len + 1;
	assert_int_equal(store__fh_decode(&f->sec, &bad, &id, &out),
			 -STORE_EBADHANDLE);
	bad.len = STORE_FH_MAX + 1;
	assert_int_equal(store_fh_export_id(&bad, &id), -STORE_EBADHANDLE);
	bad.len = UINT32_MAX;
	assert_int_equal(store__fh_decode(&f->sec, &bad, &id, &out),
			 -STORE_EBADHANDLE);
	bad = fh;
	bad.data[0] = 3;
	assert_int_equal(store_fh_export_id(&bad, &id), -STORE_EBADHANDLE);
	/* A kernel length that disagrees with the handle length. */
	bad = fh;
	bad.data[6] = 9;
	assert_int_equal(store_fh_export_id(&bad, &id), -STORE_EBADHANDLE);
	bad.data[6] = 0;
	assert_int_equal(store_fh_export_id(&bad, &id), -STORE_EBADHANDLE);
}

static void test_handle_secret_file_is_private_and_stable(void **state)
{
	struct fixture *f = *state;
	struct store_secret again;
	char path[160];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/%s", f->state, STORE_KEY_FILE);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0600);
	assert_int_equal(sb.st_size, STORE_KEY_BYTES);
	assert_int_equal(store__secret_load(f->state, &again, NULL, 0), 0);
	assert_memory_equal(again.key, f->sec.key, STORE_KEY_BYTES);
	/* No version-1 secret is ever made. */
	snprintf(path, sizeof(path), "%s/%s", f->state, STORE_SECRET_FILE);
	assert_int_equal(stat(path, &sb), -1);
	assert_false(again.legacy_ok);
}

struct loader {
	const char *dir;
	struct store_secret sec;
	int err;
};

static void *loader_run(void *arg)
{
	struct loader *l = arg;

	l->err = store__secret_load(l->dir, &l->sec, NULL, 0);
	return NULL;
}

static void test_handle_racing_first_starts_agree_on_one_secret(void **state)
{
	struct fixture *f = *state;
	struct loader l[8];
	pthread_t t[8];
	char dir[160];

	snprintf(dir, sizeof(dir), "%s/fresh", f->dir);
	assert_int_equal(mkdir(dir, 0700), 0);
	for (int i = 0; i < 8; i++) {
		l[i] = (struct loader){ .dir = dir };
		assert_int_equal(pthread_create(&t[i], NULL, loader_run, &l[i]),
				 0);
	}
	for (int i = 0; i < 8; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(l[i].err, 0);
		assert_memory_equal(l[i].sec.key, l[0].sec.key,
				    STORE_KEY_BYTES);
	}
	/* The new key is not the fixture's: each state dir has its own. */
	assert_memory_not_equal(l[0].sec.key, f->sec.key, STORE_KEY_BYTES);
}

static void test_handle_secret_with_loose_mode_is_refused(void **state)
{
	struct fixture *f = *state;
	struct store_secret sec;
	char path[160];
	char err[256] = "";

	snprintf(path, sizeof(path), "%s/%s", f->state, STORE_KEY_FILE);
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(store__secret_load(f->state, &sec, err, sizeof(err)),
			 -EACCES);
	assert_non_null(strstr(err, "handle.key"));
	assert_int_equal(chmod(path, 0600), 0);
	if (geteuid() == 0) {
		/* Another owner: someone else could have planted it. */
		assert_int_equal(chown(path, 4242, 0), 0);
		assert_int_equal(
			store__secret_load(f->state, &sec, err, sizeof(err)),
			-EACCES);
		assert_non_null(strstr(err, "owned by uid 4242"));
		assert_int_equal(chown(path, 0, 0), 0);
	}
	assert_int_equal(truncate(path, 10), 0);
	assert_int_equal(store__secret_load(f->state, &sec, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "32 bytes"));
}

static void test_handle_missing_state_dir_names_it(void **state)
{
	struct fixture *f = *state;
	struct store *st = NULL;
	char bad[160];
	char err[256] = "";

	snprintf(bad, sizeof(bad), "%s/nope", f->dir);
	assert_int_equal(
		store_local_open("ds9", f->ds, 9, bad, &st, err, sizeof(err)),
		-ENOENT);
	assert_null(st);
	assert_non_null(strstr(err, "nope"));
}

/* Creates file @name in the root and returns its handle. */
static void create_file(struct fixture *f, const char *name,
			struct store_fh *fh, uint64_t *fileid)
{
	struct store_cred cred = { .uid = 0, .gid = 0 };
	struct store_obj *root, *obj;
	struct store_attr attr;

	assert_int_equal(f->st->ops->root(f->st, &root), 0);
	assert_int_equal(f->st->ops->create(f->st, root, name,
					    STORE_CREATE_GUARDED, NULL, NULL,
					    &cred, &obj),
			 0);
	f->st->ops->obj_fh(obj, fh);
	assert_int_equal(f->st->ops->getattr(f->st, obj, &attr), 0);
	*fileid = attr.fileid;
	f->st->ops->obj_unref(obj);
	f->st->ops->obj_unref(root);
}

static uint64_t resolve_fileid(struct fixture *f, const struct store_fh *fh)
{
	struct store_obj *obj = NULL;
	struct store_attr attr;

	assert_int_equal(f->st->ops->resolve(f->st, fh, &obj), 0);
	assert_int_equal(f->st->ops->getattr(f->st, obj, &attr), 0);
	f->st->ops->obj_unref(obj);
	return attr.fileid;
}

static void test_handle_survives_store_reopen(void **state)
{
	struct fixture *f = *state;
	struct store_fh fh;
	uint64_t fileid;

	create_file(f, "disk-flat.vmdk", &fh, &fileid);
	assert_int_equal(store_reopen(f), 0);
	assert_int_equal(resolve_fileid(f, &fh), fileid);
}

static void test_handle_survives_rename(void **state)
{
	struct fixture *f = *state;
	char from[160], to[160];
	struct store_fh fh;
	uint64_t fileid;

	create_file(f, "a.vmdk", &fh, &fileid);
	snprintf(from, sizeof(from), "%s/a.vmdk", f->ds);
	snprintf(to, sizeof(to), "%s/sub", f->ds);
	assert_int_equal(mkdir(to, 0755), 0);
	snprintf(to, sizeof(to), "%s/sub/b.vmdk", f->ds);
	assert_int_equal(rename(from, to), 0);
	assert_int_equal(resolve_fileid(f, &fh), fileid);
	assert_int_equal(store_reopen(f), 0);
	assert_int_equal(resolve_fileid(f, &fh), fileid);
}

static void test_handle_of_other_export_is_badhandle(void **state)
{
	struct fixture *f = *state;
	struct store *other = NULL;
	struct store_obj *obj = NULL;
	struct store_fh fh;
	uint64_t fileid;
	char err[256];

	create_file(f, "x", &fh, &fileid);
	/* Same directory and secret, another export id. */
	assert_int_equal(store_local_open("ds2", f->ds, TEST_EXPORT_ID + 1,
					  f->state, &other, err, sizeof(err)),
			 0);
	assert_int_equal(other->ops->resolve(other, &fh, &obj),
			 -STORE_EBADHANDLE);
	assert_null(obj);
	other->ops->close(other);
}

static void test_handle_new_secret_invalidates_old_handles(void **state)
{
	struct fixture *f = *state;
	struct store_obj *obj = NULL;
	struct store_fh fh;
	uint64_t fileid;
	char path[160];

	create_file(f, "y", &fh, &fileid);
	snprintf(path, sizeof(path), "%s/%s", f->state, STORE_KEY_FILE);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(store_reopen(f), 0);
	assert_int_equal(f->st->ops->resolve(f->st, &fh, &obj),
			 -STORE_EBADHANDLE);
}

/* RFC 4231 test case 2: key "Jefe", the MAC's first 8 bytes. */
static void test_handle_mac_is_hmac_sha256(void **state)
{
	static const uint8_t want[8] = { 0x5b, 0xdc, 0xc1, 0x46,
					 0xbf, 0x60, 0x75, 0x4e };
	struct store_secret sec;
	struct store_kfh kfh;
	struct store_fh fh;
	struct hmac_sha256_ctx ctx;
	uint8_t mac[8];

	(void)state;
	memset(&sec, 0, sizeof(sec));
	for (size_t i = 0; i < sizeof(sec.key); i++) {
		sec.key[i] = (uint8_t)(i * 7 + 1);
	}
	store__secret_keyed(&sec);
	sample_kfh(&kfh);
	store__fh_encode(&sec, TEST_EXPORT_ID, &kfh, &fh);
	hmac_sha256_set_key(&ctx, sizeof(sec.key), sec.key);
	hmac_sha256_update(&ctx, fh.len - 8, fh.data);
	hmac_sha256_digest(&ctx, sizeof(mac), mac);
	assert_memory_equal(fh.data + fh.len - 8, mac, 8);
	/* ... and nettle's HMAC is the RFC's. */
	hmac_sha256_set_key(&ctx, 4, (const uint8_t *)"Jefe");
	hmac_sha256_update(&ctx, 28,
			   (const uint8_t *)"what do ya want for nothing?");
	hmac_sha256_digest(&ctx, sizeof(mac), mac);
	assert_memory_equal(mac, want, 8);
}

/* A version-1 handle of @kfh as dsnfsd issued it before: keyed xxh3. */
static void v1_handle(const struct store_secret *sec, uint32_t export_id,
		      const struct store_kfh *kfh, struct store_fh *fh)
{
	uint64_t tag;

	store__fh_encode(sec, export_id, kfh, fh);
	fh->data[0] = STORE_FH_VERSION_XXH3;
	tag = XXH3_64bits_withSecret(fh->data, fh->len - 8, sec->legacy,
				     sizeof(sec->legacy));
	for (int i = 0; i < 8; i++) {
		fh->data[fh->len - 8 + i] = (uint8_t)(tag >> (56 - 8 * i));
	}
}

static void test_handle_v1_needs_the_v1_secret(void **state)
{
	struct fixture *f = *state;
	struct store_secret sec = f->sec;
	struct store_kfh kfh, out;
	struct store_fh fh, bad;
	uint32_t id;

	sample_kfh(&kfh);
	memset(sec.legacy, 0x42, sizeof(sec.legacy));
	v1_handle(&sec, TEST_EXPORT_ID, &kfh, &fh);
	/* Without the version-1 secret: refused. */
	sec.legacy_ok = false;
	assert_int_equal(store__fh_decode(&sec, &fh, &id, &out),
			 -STORE_EBADHANDLE);
	sec.legacy_ok = true;
	assert_int_equal(store__fh_decode(&sec, &fh, &id, &out), 0);
	assert_true(store__fh_is_legacy(&fh));
	assert_memory_equal(out.f_handle, kfh.f_handle, kfh.len);
	/* Its tag is checked as before. */
	bad = fh;
	bad.data[fh.len - 1] ^= 1;
	assert_int_equal(store__fh_decode(&sec, &bad, &id, &out),
			 -STORE_EBADHANDLE);
	/* An xxh3 tag is never taken for a version-2 handle. */
	bad = fh;
	bad.data[0] = STORE_FH_VERSION;
	assert_int_equal(store__fh_decode(&sec, &bad, &id, &out),
			 -STORE_EBADHANDLE);
}

/* A handle issued before the upgrade (handle.secret kept) resolves to the
 * same object as today's handle of the file. */
static void test_handle_v1_of_the_store_resolves_after_upgrade(void **state)
{
	struct fixture *f = *state;
	struct store_secret sec;
	struct store_obj *a = NULL, *b = NULL;
	struct store_fh fh, v1;
	struct store_kfh kfh;
	uint64_t fileid;
	uint32_t id;
	char path[160];
	int fd;

	create_file(f, "old.vmdk", &fh, &fileid);
	snprintf(path, sizeof(path), "%s/%s", f->state, STORE_SECRET_FILE);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	memset(sec.legacy, 0x5c, sizeof(sec.legacy));
	assert_int_equal(write(fd, sec.legacy, sizeof(sec.legacy)),
			 (ssize_t)sizeof(sec.legacy));
	close(fd);
	assert_int_equal(store_reopen(f), 0);
	assert_int_equal(store__secret_load(f->state, &sec, NULL, 0), 0);
	assert_true(sec.legacy_ok);
	assert_int_equal(store__fh_decode(&sec, &fh, &id, &kfh), 0);
	v1_handle(&sec, TEST_EXPORT_ID, &kfh, &v1);
	assert_int_equal(resolve_fileid(f, &v1), fileid);
	assert_int_equal(f->st->ops->resolve(f->st, &v1, &a), 0);
	assert_int_equal(f->st->ops->resolve(f->st, &fh, &b), 0);
	assert_ptr_equal(a, b);
	f->st->ops->obj_unref(a);
	f->st->ops->obj_unref(b);
	/* Without handle.secret, the old handle is stale for good. */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(store_reopen(f), 0);
	assert_int_equal(f->st->ops->resolve(f->st, &v1, &a),
			 -STORE_EBADHANDLE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_handle_round_trips_with_its_export_id, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_handle_longest_kernel_handle_fits_56_bytes, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_handle_any_flipped_bit_is_badhandle, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_handle_other_secret_is_badhandle, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_handle_wrong_length_or_version_is_badhandle, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_handle_secret_file_is_private_and_stable, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_handle_racing_first_starts_agree_on_one_secret,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_handle_secret_with_loose_mode_is_refused, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_handle_missing_state_dir_names_it, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_handle_survives_store_reopen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_handle_survives_rename,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_handle_of_other_export_is_badhandle, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_handle_new_secret_invalidates_old_handles, setup,
			teardown),
		cmocka_unit_test(test_handle_mac_is_hmac_sha256),
		cmocka_unit_test_setup_teardown(
			test_handle_v1_needs_the_v1_secret, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_handle_v1_of_the_store_resolves_after_upgrade,
			setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
