// SPDX-License-Identifier: Apache-2.0
/*
 * test_nfs3_usage: quotas through the NFSv3 procedures (nfsd/nfs3/usage.c,
 * nfsd/quota) against the fake store, and what a call is charged for
 * admission (nfsd/nfs3/charge.c).  FSSTAT reports the quota; a WRITE past
 * it gets NOSPC and leaves the file as it was; overwriting allocated data
 * is never refused; REMOVE, RENAME over a file and a shrinking SETATTR
 * give the room back.  A WRITE that may allocate stats the file once
 * after it, for the quota and its post-op attributes both.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nfsd/nfs3/nfs3_int.h"
#include "nfsd/quota/quota.h"
#include "tests/lib/fake_store.h"
#include "tests/lib/nfs3_fixture.h"

#define KIB 1024u
#define QUOTA_BYTES (256 * KIB)

enum rpc_disposition request_defer(struct request *req,
				   void (*work)(struct request *req))
{
	rpc_call_of(req)->work = work;
	work(req);
	return RPC_PENDING;
}

struct fixture {
	struct nfs3_fixture *fx;
	struct quota q;
	uint8_t buf[QUOTA_BYTES];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	void *fx;

	if (!f || nfs3_fixture_setup(&fx)) {
		return -1;
	}
	f->fx = fx;
	quota_init(&f->q);
	quota_set_limit(&f->q, QUOTA_BYTES);
	f->fx->exports[NFS3_FIXTURE_DS1].quota = &f->q;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	void *fx = f->fx;
	int rc;

	f->fx->exports[NFS3_FIXTURE_DS1].quota = NULL;
	rc = nfs3_fixture_teardown(&fx);
	quota_fini(&f->q);
	free(f);
	return rc;
}

static uint64_t used(struct fixture *f)
{
	struct quota_usage u;

	quota_get(&f->q, &u);
	assert_int_equal(u.reserved_bytes, 0);
	return u.used_bytes;
}

static nfs_fh3 create(struct fixture *f, const char *name)
{
	nfs_fh3 root = nfs3_fixture_root(f->fx, NFS3_FIXTURE_DS1);

	return nfs3_fixture_mkfile(f->fx, NFS3_FIXTURE_DS1, &root, name, "", 0,
				   0644);
}

static nfsstat3 write_at(struct fixture *f, const nfs_fh3 *fh, uint64_t off,
			 uint32_t count, uint8_t fill, stable_how stable)
{
	WRITE3args args = {
		.file = *fh, .offset = off, .count = count, .stable = stable
	};
	WRITE3res res;

	memset(f->buf, fill, count);
	args.data.data_len = count;
	args.data.data_val = (char *)f->buf;
	nfs3_fixture_call(f->fx, NFSPROC3_WRITE, &args, &res);
	return res.status;
}

static void assert_data(struct fixture *f, const nfs_fh3 *fh, uint64_t off,
			uint32_t count, uint8_t fill)
{
	READ3args args = { .file = *fh, .offset = off, .count = count };
	READ3res res;

	nfs3_fixture_call(f->fx, NFSPROC3_READ, &args, &res);
	assert_int_equal(res.status, NFS3_OK);
	assert_int_equal(res.READ3res_u.resok.count, count);
	for (uint32_t i = 0; i < count; i++) {
		assert_int_equal((uint8_t)res.READ3res_u.resok.data.data_val[i],
				 fill);
	}
	nfs3_fixture_release(f->fx, NFSPROC3_READ, &res);
}

static FSSTAT3resok fsstat(struct fixture *f)
{
	FSSTAT3args args = { .fsroot = nfs3_fixture_root(f->fx,
							 NFS3_FIXTURE_DS1) };
	FSSTAT3res res;

	nfs3_fixture_call(f->fx, NFSPROC3_FSSTAT, &args, &res);
	assert_int_equal(res.status, NFS3_OK);
	return res.FSSTAT3res_u.resok;
}

static void test_usage_fsstat_reports_the_quota(void **state)
{
	struct fixture *f = *state;
	nfs_fh3 fh = create(f, "disk");
	FSSTAT3resok ok = fsstat(f);

	assert_int_equal(ok.tbytes, QUOTA_BYTES);
	assert_int_equal(ok.fbytes, QUOTA_BYTES);
	assert_int_equal(ok.abytes, QUOTA_BYTES);
	assert_int_equal(write_at(f, &fh, 0, 64 * KIB, 'a', UNSTABLE), NFS3_OK);
	ok = fsstat(f);
	assert_int_equal(ok.tbytes, QUOTA_BYTES);
	assert_int_equal(ok.fbytes, QUOTA_BYTES - 64 * KIB);
	assert_int_equal(ok.abytes, QUOTA_BYTES - 64 * KIB);
	/* Without a quota, the disk's own figures. */
	quota_set_limit(&f->q, 0);
	ok = fsstat(f);
	assert_int_equal(ok.tbytes, 1ull << 40);
}

static void test_usage_write_past_quota_is_nospc_and_data_stays(void **state)
{
	struct fixture *f = *state;
	nfs_fh3 fh = create(f, "disk");

	assert_int_equal(write_at(f, &fh, 0, 128 * KIB, 'a', UNSTABLE),
			 NFS3_OK);
	assert_int_equal(write_at(f, &fh, 128 * KIB, 64 * KIB, 'b', FILE_SYNC),
			 NFS3_OK);
	assert_int_equal(used(f), 192 * KIB);
	/* 64 KiB + 1 byte is 17 blocks: one too many. */
	assert_int_equal(
		write_at(f, &fh, 192 * KIB, 64 * KIB + 1, 'c', UNSTABLE),
		NFS3ERR_NOSPC);
	assert_int_equal(
		write_at(f, &fh, 192 * KIB, 64 * KIB + 1, 'c', FILE_SYNC),
		NFS3ERR_NOSPC);
	assert_int_equal(
		nfs3_fixture_attr(f->fx, NFS3_FIXTURE_DS1, &fh).size_bytes,
		192 * KIB);
	assert_data(f, &fh, 0, 128 * KIB, 'a');
	assert_data(f, &fh, 128 * KIB, 64 * KIB, 'b');
	assert_int_equal(used(f), 192 * KIB);
	/* What fits still goes in, to the last block. */
	assert_int_equal(write_at(f, &fh, 192 * KIB, 64 * KIB, 'c', UNSTABLE),
			 NFS3_OK);
	assert_int_equal(used(f), QUOTA_BYTES);
	assert_int_equal(write_at(f, &fh, QUOTA_BYTES, 1, 'd', UNSTABLE),
			 NFS3ERR_NOSPC);
	/* A full datastore still takes overwrites of allocated data. */
	assert_int_equal(write_at(f, &fh, 4 * KIB, 8 * KIB, 'e', FILE_SYNC),
			 NFS3_OK);
	assert_data(f, &fh, 4 * KIB, 8 * KIB, 'e');
	assert_int_equal(used(f), QUOTA_BYTES);
}

/* A WRITE of @count bytes of @fill at @off; returns the getattr calls it
 * made and checks its post-op attributes say @size_bytes. */
static unsigned write_stats(struct fixture *f, const nfs_fh3 *fh, uint64_t off,
			    uint32_t count, uint8_t fill, uint64_t size_bytes)
{
	struct store *st = nfs3_fixture_store(f->fx, NFS3_FIXTURE_DS1);
	WRITE3args args = {
		.file = *fh, .offset = off, .count = count, .stable = UNSTABLE
	};
	unsigned before = fake_store_getattrs(st), stats;
	WRITE3res res;
	post_op_attr *after;

	memset(f->buf, fill, count);
	args.data.data_len = count;
	args.data.data_val = (char *)f->buf;
	nfs3_fixture_call(f->fx, NFSPROC3_WRITE, &args, &res);
	stats = fake_store_getattrs(st) - before;
	assert_int_equal(res.status, NFS3_OK);
	after = &res.WRITE3res_u.resok.file_wcc.after;
	assert_true(after->attributes_follow);
	assert_int_equal(after->post_op_attr_u.attributes.size, size_bytes);
	assert_int_equal(
		after->post_op_attr_u.attributes.used,
		nfs3_fixture_attr(f->fx, NFS3_FIXTURE_DS1, fh).used_bytes);
	return stats;
}

static void test_usage_write_stats_the_file_once_after_it(void **state)
{
	struct fixture *f = *state;
	nfs_fh3 fh = create(f, "disk");
	unsigned growing, overwrite;

	/* It may allocate: the quota's measure is the post-op stat. */
	growing = write_stats(f, &fh, 0, 8 * KIB, 'a', 8 * KIB);
	assert_int_equal(used(f), 8 * KIB);
	/* Allocated already: nothing to count, a stat for the reply. */
	overwrite = write_stats(f, &fh, 0, 8 * KIB, 'b', 8 * KIB);
	assert_int_equal(used(f), 8 * KIB);
	/* Both stat once before (the handle) and once after. */
	assert_int_equal(growing, overwrite);
	assert_int_equal(growing, 2);
	assert_data(f, &fh, 0, 8 * KIB, 'b');
}

static void test_usage_remove_gives_room_back(void **state)
{
	struct fixture *f = *state;
	nfs_fh3 root = nfs3_fixture_root(f->fx, NFS3_FIXTURE_DS1);
	nfs_fh3 a = create(f, "a");
	REMOVE3args rm = { .object = { .dir = root, .name = "a" } };
	REMOVE3res res;

	assert_int_equal(write_at(f, &a, 0, QUOTA_BYTES, 'a', UNSTABLE),
			 NFS3_OK);
	nfs_fh3 b = create(f, "b");
	assert_int_equal(write_at(f, &b, 0, 4 * KIB, 'b', UNSTABLE),
			 NFS3ERR_NOSPC);
	nfs3_fixture_call(f->fx, NFSPROC3_REMOVE, &rm, &res);
	assert_int_equal(res.status, NFS3_OK);
	assert_int_equal(used(f), 0);
	assert_int_equal(write_at(f, &b, 0, 4 * KIB, 'b', UNSTABLE), NFS3_OK);
	assert_int_equal(used(f), 4 * KIB);
}

static void test_usage_rename_over_a_file_frees_it(void **state)
{
	struct fixture *f = *state;
	nfs_fh3 root = nfs3_fixture_root(f->fx, NFS3_FIXTURE_DS1);
	nfs_fh3 a = create(f, "a"), b = create(f, "b");
	RENAME3args mv = { .from = { .dir = root, .name = "a" },
			   .to = { .dir = root, .name = "b" } };
	RENAME3res res;

	assert_int_equal(write_at(f, &a, 0, 8 * KIB, 'a', UNSTABLE), NFS3_OK);
	assert_int_equal(write_at(f, &b, 0, 64 * KIB, 'b', UNSTABLE), NFS3_OK);
	assert_int_equal(used(f), 72 * KIB);
	nfs3_fixture_call(f->fx, NFSPROC3_RENAME, &mv, &res);
	assert_int_equal(res.status, NFS3_OK);
	assert_int_equal(used(f), 8 * KIB);
}

static void test_usage_setattr_shrink_frees(void **state)
{
	struct fixture *f = *state;
	nfs_fh3 fh = create(f, "disk");
	SETATTR3args args = { .object = fh };
	SETATTR3res res;

	assert_int_equal(write_at(f, &fh, 0, 128 * KIB, 'a', UNSTABLE),
			 NFS3_OK);
	args.new_attributes.size.set_it = TRUE;
	args.new_attributes.size.set_size3_u.size = 4 * KIB;
	nfs3_fixture_call(f->fx, NFSPROC3_SETATTR, &args, &res);
	assert_int_equal(res.status, NFS3_OK);
	assert_int_equal(used(f), 4 * KIB);
}

static void test_charge_names_datastore_and_bytes(void **state)
{
	struct fixture *f = *state;
	struct request *req = &f->fx->call.req;
	nfs_fh3 fh = create(f, "disk");
	READ3args rd = { .file = fh, .offset = 0, .count = 65536 };
	WRITE3args wr = { .file = fh, .count = 8 * 1024 * 1024 };
	GETATTR3args ga = { .object = fh };
	uint8_t junk[8] = { 0 };
	nfs_fh3 bad = { .data = { .data_len = 8, .data_val = (char *)junk } };

	req->proc = NFSPROC3_READ;
	assert_true(nfs3__charge(req, &rd));
	assert_string_equal(req->export_name,
			    f->fx->exports[NFS3_FIXTURE_DS1].name);
	assert_int_equal(req->cost.op, TRAFFIC_OP_READ);
	assert_int_equal(req->cost.bytes, 65536);
	/* A WRITE pays what the handler will write at most. */
	req->proc = NFSPROC3_WRITE;
	assert_true(nfs3__charge(req, &wr));
	assert_int_equal(req->cost.op, TRAFFIC_OP_WRITE);
	assert_int_equal(req->cost.bytes, NFS3_SERVICE_IO_MAX_BYTES);
	req->proc = NFSPROC3_GETATTR;
	assert_true(nfs3__charge(req, &ga));
	assert_int_equal(req->cost.op, TRAFFIC_OP_OTHER);
	assert_int_equal(req->cost.bytes, 0);
	/* Not charged: NULL, and handles that are not ours. */
	req->proc = NFSPROC3_NULL;
	assert_false(nfs3__charge(req, &ga));
	req->proc = NFSPROC3_GETATTR;
	ga.object = bad;
	assert_false(nfs3__charge(req, &ga));
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_usage_fsstat_reports_the_quota),
		T(test_usage_write_past_quota_is_nospc_and_data_stays),
		T(test_usage_write_stats_the_file_once_after_it),
		T(test_usage_remove_gives_room_back),
		T(test_usage_rename_over_a_file_frees_it),
		T(test_usage_setattr_shrink_frees),
		T(test_charge_names_datastore_and_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
