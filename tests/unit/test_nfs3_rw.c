// SPDX-License-Identifier: Apache-2.0
/*
 * test_nfs3_rw: READ, WRITE and COMMIT (nfsd/nfs3/rw.c) through the
 * procedure table against the fake store: data and eof exactly as stored,
 * size caps, which writes leave the loop, what `committed` and the
 * verifier say, and the errors.
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
#include "tests/lib/fake_store.h"
#include "tests/lib/log_capture.h"
#include "tests/lib/nfs3_fixture.h"

/* The dispatcher's request_defer() without its work pool: runs the work at
 * once, and still answers RPC_PENDING so tests see what was deferred. */
enum rpc_disposition request_defer(struct request *req,
				   void (*work)(struct request *req))
{
	rpc_call_of(req)->work = work;
	work(req);
	return RPC_PENDING;
}

static const char hello[] = "hello, world"; /* 12 bytes */

/* @verf is the verifier the service hands out now for ds1. */
static void assert_verf_now(struct nfs3_fixture *fx, const char *verf)
{
	char now[8];

	nfs3_write_verf(&fx->svc, &fx->exports[NFS3_FIXTURE_DS1], now);
	assert_memory_equal(verf, now, 8);
}

static nfs_fh3 hello_file(struct nfs3_fixture *fx, int exp, uint32_t mode)
{
	nfs_fh3 root = nfs3_fixture_root(fx, exp);

	return nfs3_fixture_mkfile(fx, exp, &root, "hello", hello, 12, mode);
}

/* READ of @count at @off; checks status OK and returns the result, which
 * the caller releases. */
static READ3res read_ok(struct nfs3_fixture *fx, const nfs_fh3 *fh,
			uint64_t off, uint32_t count)
{
	READ3args args = { .file = *fh, .offset = off, .count = count };
	READ3res res;

	assert_int_equal(nfs3_fixture_call(fx, NFSPROC3_READ, &args, &res),
			 RPC_REPLY);
	assert_int_equal(res.status, NFS3_OK);
	return res;
}

static void assert_read(struct nfs3_fixture *fx, const nfs_fh3 *fh,
			uint64_t off, uint32_t count, const char *want,
			bool eof)
{
	READ3res res = read_ok(fx, fh, off, count);
	READ3resok *ok = &res.READ3res_u.resok;

	assert_int_equal(ok->count, strlen(want));
	assert_int_equal(ok->data.data_len, strlen(want));
	assert_memory_equal(ok->data.data_val, want, strlen(want));
	assert_int_equal(ok->eof, eof);
	assert_int_equal(fx->call.req.payload_bytes, strlen(want));
	assert_true(ok->file_attributes.attributes_follow);
	nfs3_fixture_release(fx, NFSPROC3_READ, &res);
}

static void test_read_eof_is_exactly_the_stores(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 fh = hello_file(fx, NFS3_FIXTURE_DS1, 0644);

	assert_read(fx, &fh, 0, 5, "hello", false);
	assert_read(fx, &fh, 7, 5, "world", true);
	assert_read(fx, &fh, 0, 11, "hello, worl", false);
	assert_read(fx, &fh, 0, 12, hello, true);
	assert_read(fx, &fh, 0, 4096, hello, true);
	assert_read(fx, &fh, 12, 10, "", true);
	assert_read(fx, &fh, 1000, 10, "", true);
	assert_string_equal(fx->call.req.export_name, "ds1");
}

static void test_read_count_is_capped_at_max_read(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 fh = hello_file(fx, NFS3_FIXTURE_DS1, 0644);

	fx->svc.max_read_bytes = 4;
	assert_read(fx, &fh, 0, 100, "hell", false);
}

static void assert_read_fails(struct nfs3_fixture *fx, const nfs_fh3 *fh,
			      nfsstat3 want)
{
	READ3args args = { .file = *fh, .offset = 0, .count = 10 };
	READ3res res;

	nfs3_fixture_call(fx, NFSPROC3_READ, &args, &res);
	assert_int_equal(res.status, want);
	nfs3_fixture_release(fx, NFSPROC3_READ, &res);
}

static void test_read_of_directory_is_isdir(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	READ3args args = { .file = root, .count = 10 };
	READ3res res;

	nfs3_fixture_call(fx, NFSPROC3_READ, &args, &res);
	assert_int_equal(res.status, NFS3ERR_ISDIR);
	assert_true(res.READ3res_u.resfail.file_attributes.attributes_follow);
	nfs3_fixture_release(fx, NFSPROC3_READ, &res);
}

static void test_read_of_symlink_is_inval(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	nfs_fh3 link =
		nfs3_fixture_symlink(fx, NFS3_FIXTURE_DS1, &root, "l", "hello");

	assert_read_fails(fx, &link, NFS3ERR_INVAL);
}

static void test_read_needs_read_permission_but_not_from_owner(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 fh = hello_file(fx, NFS3_FIXTURE_DS1, 0600);
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	nfs_fh3 locked = nfs3_fixture_mkfile(fx, NFS3_FIXTURE_DS1, &root,
					     "locked", "x", 1, 0000);

	nfs3_fixture_cred(fx, AUTH_SYS, 2000, 2000);
	assert_read_fails(fx, &fh, NFS3ERR_ACCES);
	nfs3_fixture_cred(fx, AUTH_SYS, NFS3_FIXTURE_UID, NFS3_FIXTURE_GID);
	assert_read(fx, &locked, 0, 10, "x", true);
}

/* WRITE of @data at @off with @stable; returns the disposition. */
static enum rpc_disposition write_call(struct nfs3_fixture *fx,
				       const nfs_fh3 *fh, uint64_t off,
				       const char *data, stable_how stable,
				       WRITE3res *res)
{
	WRITE3args args = {
		.file = *fh,
		.offset = off,
		.count = (count3)strlen(data),
		.stable = stable,
		.data = { .data_len = (u_int)strlen(data),
			  .data_val = (char *)data },
	};

	return nfs3_fixture_call(fx, NFSPROC3_WRITE, &args, res);
}

static void test_write_unstable_runs_on_the_loop(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 fh = hello_file(fx, NFS3_FIXTURE_DS1, 0644);
	struct store *st = nfs3_fixture_store(fx, NFS3_FIXTURE_DS1);
	WRITE3res res;
	WRITE3resok *ok = &res.WRITE3res_u.resok;

	assert_int_equal(write_call(fx, &fh, 12, "!!", UNSTABLE, &res),
			 RPC_REPLY);
	assert_null(fx->call.work);
	assert_int_equal(res.status, NFS3_OK);
	assert_int_equal(ok->count, 2);
	assert_int_equal(ok->committed, UNSTABLE);
	assert_verf_now(fx, ok->verf);
	assert_true(ok->file_wcc.before.attributes_follow);
	assert_int_equal(ok->file_wcc.before.pre_op_attr_u.attributes.size, 12);
	assert_true(ok->file_wcc.after.attributes_follow);
	assert_int_equal(ok->file_wcc.after.post_op_attr_u.attributes.size, 14);
	assert_int_equal(fx->call.req.payload_bytes, 2);
	assert_int_equal(fake_store_last_stable(st), STORE_UNSTABLE);
	assert_read(fx, &fh, 10, 10, "ld!!", true);
}

static void test_write_stable_leaves_the_loop(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 fh = hello_file(fx, NFS3_FIXTURE_DS1, 0644);
	struct store *st = nfs3_fixture_store(fx, NFS3_FIXTURE_DS1);
	const stable_how levels[] = { DATA_SYNC, FILE_SYNC };

	for (size_t i = 0; i < 2; i++) {
		WRITE3res res;

		assert_int_equal(
			write_call(fx, &fh, 0, "HELLO", levels[i], &res),
			RPC_PENDING);
		assert_non_null(fx->call.work);
		assert_int_equal(fx->call.req.disposition, RPC_REPLY);
		assert_int_equal(res.status, NFS3_OK);
		assert_int_equal(res.WRITE3res_u.resok.count, 5);
		assert_int_equal(res.WRITE3res_u.resok.committed, levels[i]);
		assert_verf_now(fx, res.WRITE3res_u.resok.verf);
		assert_int_equal(fake_store_last_stable(st),
				 (enum store_stable)levels[i]);
	}
	assert_read(fx, &fh, 0, 12, "HELLO, world", true);
}

static void test_write_count_not_data_length_is_inval(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 fh = hello_file(fx, NFS3_FIXTURE_DS1, 0644);
	struct store *st = nfs3_fixture_store(fx, NFS3_FIXTURE_DS1);
	unsigned writes = fake_store_writes(st);
	WRITE3args args = {
		.file = fh,
		.count = 10,
		.stable = FILE_SYNC,
		.data = { .data_len = 5, .data_val = (char *)"abcde" },
	};
	WRITE3res res;

	assert_int_equal(nfs3_fixture_call(fx, NFSPROC3_WRITE, &args, &res),
			 RPC_REPLY);
	assert_int_equal(res.status, NFS3ERR_INVAL);
	assert_int_equal(fake_store_writes(st), writes);
	args.stable = 3; /* not a stable_how */
	args.count = 5;
	nfs3_fixture_call(fx, NFSPROC3_WRITE, &args, &res);
	assert_int_equal(res.status, NFS3ERR_INVAL);
	assert_int_equal(fake_store_writes(st), writes);
}

static void test_write_on_read_only_export_is_rofs(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 fh = hello_file(fx, NFS3_FIXTURE_RO, 0644);
	WRITE3res res;

	write_call(fx, &fh, 0, "x", UNSTABLE, &res);
	assert_int_equal(res.status, NFS3ERR_ROFS);
	write_call(fx, &fh, 0, "x", FILE_SYNC, &res);
	assert_int_equal(res.status, NFS3ERR_ROFS);
	assert_read(fx, &fh, 0, 5, "hello", false);
}

static void test_write_on_full_store_is_nospc(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 fh = hello_file(fx, NFS3_FIXTURE_DS1, 0644);
	WRITE3res res;

	fake_store_fail_next(nfs3_fixture_store(fx, NFS3_FIXTURE_DS1), "write",
			     -ENOSPC);
	write_call(fx, &fh, 0, "x", UNSTABLE, &res);
	assert_int_equal(res.status, NFS3ERR_NOSPC);
	assert_true(res.WRITE3res_u.resfail.file_wcc.before.attributes_follow);
	assert_true(res.WRITE3res_u.resfail.file_wcc.after.attributes_follow);
}

static void test_write_count_is_capped_at_max_write(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 fh = hello_file(fx, NFS3_FIXTURE_DS1, 0644);
	WRITE3res res;

	fx->svc.max_write_bytes = 3;
	write_call(fx, &fh, 0, "HELLO", UNSTABLE, &res);
	assert_int_equal(res.status, NFS3_OK);
	assert_int_equal(res.WRITE3res_u.resok.count, 3);
	assert_read(fx, &fh, 0, 5, "HELlo", false);
}

static void test_write_to_directory_is_isdir(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	WRITE3res res;

	write_call(fx, &root, 0, "x", UNSTABLE, &res);
	assert_int_equal(res.status, NFS3ERR_ISDIR);
}

static void test_write_needs_write_permission(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 fh = hello_file(fx, NFS3_FIXTURE_DS1, 0644);
	WRITE3res res;

	nfs3_fixture_cred(fx, AUTH_SYS, 2000, 2000);
	write_call(fx, &fh, 0, "x", UNSTABLE, &res);
	assert_int_equal(res.status, NFS3ERR_ACCES);
}

static void test_commit_leaves_the_loop_and_returns_the_verifier(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 fh = hello_file(fx, NFS3_FIXTURE_DS1, 0644);
	struct store *st = nfs3_fixture_store(fx, NFS3_FIXTURE_DS1);
	COMMIT3args args = { .file = fh, .offset = 0, .count = 0 };
	COMMIT3res res;

	assert_int_equal(nfs3_fixture_call(fx, NFSPROC3_COMMIT, &args, &res),
			 RPC_PENDING);
	assert_int_equal(fx->call.req.disposition, RPC_REPLY);
	assert_int_equal(res.status, NFS3_OK);
	assert_verf_now(fx, res.COMMIT3res_u.resok.verf);
	assert_true(res.COMMIT3res_u.resok.file_wcc.before.attributes_follow);
	assert_true(res.COMMIT3res_u.resok.file_wcc.after.attributes_follow);
	assert_int_equal(fake_store_commits(st), 1);
}

/* A read-only client has nothing to commit and must not make the server
 * sync at will: answered on the loop, with the verifier, never synced. */
static void test_commit_on_read_only_export_does_not_sync(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 fh = hello_file(fx, NFS3_FIXTURE_RO, 0644);
	struct store *st = nfs3_fixture_store(fx, NFS3_FIXTURE_RO);
	COMMIT3args args = { .file = fh, .offset = 0, .count = 0 };
	COMMIT3res res;
	char verf[8];

	nfs3_write_verf(&fx->svc, &fx->exports[NFS3_FIXTURE_RO], verf);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(
			nfs3_fixture_call(fx, NFSPROC3_COMMIT, &args, &res),
			RPC_REPLY);
		assert_int_equal(res.status, NFS3_OK);
		assert_memory_equal(res.COMMIT3res_u.resok.verf, verf, 8);
		assert_true(res.COMMIT3res_u.resok.file_wcc.before
				    .attributes_follow);
		assert_true(res.COMMIT3res_u.resok.file_wcc.after
				    .attributes_follow);
	}
	assert_int_equal(fake_store_commits(st), 0);
}

static void test_commit_errors(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 fh = hello_file(fx, NFS3_FIXTURE_DS1, 0644);
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	COMMIT3args args = { .file = root };
	COMMIT3res res;

	nfs3_fixture_call(fx, NFSPROC3_COMMIT, &args, &res);
	assert_int_equal(res.status, NFS3ERR_ISDIR);
	fake_store_fail_next(nfs3_fixture_store(fx, NFS3_FIXTURE_DS1), "commit",
			     -EIO);
	args.file = fh;
	nfs3_fixture_call(fx, NFSPROC3_COMMIT, &args, &res);
	assert_int_equal(res.status, NFS3ERR_IO);
	assert_int_equal(
		fake_store_commits(nfs3_fixture_store(fx, NFS3_FIXTURE_DS1)),
		0);
}

/* A failed sync may have lost acknowledged UNSTABLE data: the next
 * replies of that datastore carry a new verifier, so its clients resend
 * it; the other datastore keeps its verifier.  An error that loses nothing
 * leaves the verifier alone: ROFS, and a write refused before its sync
 * (ENOSPC from the write itself: a full datastore). */
static void test_failed_sync_changes_the_verifier(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 fh = hello_file(fx, NFS3_FIXTURE_DS1, 0644);
	nfs_fh3 fh2 = hello_file(fx, NFS3_FIXTURE_DS2, 0644);
	struct store *st = nfs3_fixture_store(fx, NFS3_FIXTURE_DS1);
	COMMIT3args args = { .file = fh };
	char before[8], after[8], ds2[8];
	WRITE3res wres;
	COMMIT3res res;

	write_call(fx, &fh2, 0, "y", UNSTABLE, &wres);
	assert_int_equal(wres.status, NFS3_OK);
	memcpy(ds2, wres.WRITE3res_u.resok.verf, 8);
	write_call(fx, &fh, 0, "x", UNSTABLE, &wres);
	assert_int_equal(wres.status, NFS3_OK);
	memcpy(before, wres.WRITE3res_u.resok.verf, 8);
	assert_memory_not_equal(before, ds2, 8);

	fake_store_fail_next(st, "commit", -EIO);
	nfs3_fixture_call(fx, NFSPROC3_COMMIT, &args, &res);
	assert_int_equal(res.status, NFS3ERR_IO);
	nfs3_fixture_call(fx, NFSPROC3_COMMIT, &args, &res);
	assert_int_equal(res.status, NFS3_OK);
	memcpy(after, res.COMMIT3res_u.resok.verf, 8);
	assert_memory_not_equal(before, after, 8);
	assert_true(log_capture_contains("new write verifier"));
	write_call(fx, &fh2, 0, "y", UNSTABLE, &wres);
	assert_memory_equal(wres.WRITE3res_u.resok.verf, ds2, 8);

	/* ENOSPC from the sync of a FILE_SYNC write: new verifier. */
	fake_store_fail_next(st, "sync", -ENOSPC);
	write_call(fx, &fh, 0, "x", FILE_SYNC, &wres);
	assert_int_equal(wres.status, NFS3ERR_NOSPC);
	write_call(fx, &fh, 0, "x", UNSTABLE, &wres);
	assert_memory_not_equal(wres.WRITE3res_u.resok.verf, after, 8);
	memcpy(before, wres.WRITE3res_u.resok.verf, 8);

	/* ENOSPC from the write, before any sync: the verifier stays. */
	fake_store_fail_next(st, "write", -ENOSPC);
	write_call(fx, &fh, 0, "x", FILE_SYNC, &wres);
	assert_int_equal(wres.status, NFS3ERR_NOSPC);
	write_call(fx, &fh, 0, "x", UNSTABLE, &wres);
	assert_memory_equal(wres.WRITE3res_u.resok.verf, before, 8);

	fake_store_fail_next(st, "sync", -EROFS);
	write_call(fx, &fh, 0, "x", FILE_SYNC, &wres);
	assert_int_equal(wres.status, NFS3ERR_ROFS);
	write_call(fx, &fh, 0, "x", UNSTABLE, &wres);
	assert_memory_equal(wres.WRITE3res_u.resok.verf, before, 8);
	write_call(fx, &fh2, 0, "y", UNSTABLE, &wres);
	assert_memory_equal(wres.WRITE3res_u.resok.verf, ds2, 8);
}

/* A store_ops.write_async for the tests: the fake store's write at once,
 * then the flush's callback kept for the test to call; with @would_block,
 * -EAGAIN and nothing written. */
static struct {
	const struct store_ops *fake;
	bool would_block;
	store_write_done_fn done;
	void *arg;
	unsigned unparked; /* calls handed back by request_unpark() */
} parking;

static int parking_write_async(struct store *st, struct store_obj *obj,
			       uint64_t off_bytes, const void *buf,
			       uint32_t count, struct store_write_wait *w,
			       store_write_done_fn done, void *arg)
{
	bool sync_failed = false;
	int err;

	(void)w;
	if (parking.would_block) {
		return -EAGAIN;
	}
	err = parking.fake->write(st, obj, off_bytes, buf, count,
				  STORE_UNSTABLE, &sync_failed);
	if (err) {
		return err;
	}
	parking.done = done;
	parking.arg = arg;
	return 0;
}

static void parking_defer_done(void *transport, struct rpc_call *call)
{
	(void)transport;
	(void)call;
	parking.unparked++;
}

/* A new WRITE call of @args as dispatch starts it (a zeroed request). */
static struct request *write_begin(struct nfs3_fixture *fx,
				   const WRITE3args *args, WRITE3res *res)
{
	struct request *req = &fx->call.req;

	req->proc = NFSPROC3_WRITE;
	req->args = (void *)args;
	req->res = res;
	req->disposition = RPC_PENDING;
	memset(&req->export, 0, sizeof(req->export));
	memset(res, 0, sizeof(*res));
	return req;
}

/* nfs3__write_run()'s three outcomes, and what each leaves behind. */
static void test_write_run_says_what_it_did(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 fh = hello_file(fx, NFS3_FIXTURE_DS1, 0644);
	nfs_fh3 ro = hello_file(fx, NFS3_FIXTURE_RO, 0644);
	struct store *st = nfs3_fixture_store(fx, NFS3_FIXTURE_DS1);
	static const struct rpc_transport_ops tops = {
		.defer_done = parking_defer_done,
	};
	static struct store_ops ops;
	WRITE3args args = {
		.file = fh,
		.count = 2,
		.stable = FILE_SYNC,
		.data = { .data_len = 2, .data_val = (char *)"HE" },
	};
	WRITE3res res;
	struct request *req;
	unsigned writes;

	/* Without try_park: replied, errors included. */
	req = write_begin(fx, &args, &res);
	assert_int_equal(nfs3__write_run(req, &args, &res, false),
			 NFS3_WRITE_REPLIED);
	assert_int_equal(res.status, NFS3_OK);
	args.file = ro;
	req = write_begin(fx, &args, &res);
	assert_int_equal(nfs3__write_run(req, &args, &res, false),
			 NFS3_WRITE_REPLIED);
	assert_int_equal(res.status, NFS3ERR_ROFS);
	args.file = fh;

	parking = (__typeof__(parking)){ .fake = st->ops };
	ops = *st->ops;
	ops.write_async = parking_write_async;
	st->ops = &ops;
	fx->call.tops = &tops;

	/* The store would block: nothing written, the file released
	 * (the teardown checks every reference was dropped). */
	parking.would_block = true;
	writes = fake_store_writes(st);
	req = write_begin(fx, &args, &res);
	assert_int_equal(nfs3__write_run(req, &args, &res, true),
			 NFS3_WRITE_WOULD_BLOCK);
	assert_int_equal(fake_store_writes(st), writes);
	assert_int_equal(parking.unparked, 0);

	/* Written and logged: the reply waits for the flush, whose end
	 * hands the call back to its loop. */
	parking.would_block = false;
	req = write_begin(fx, &args, &res);
	assert_int_equal(nfs3__write_run(req, &args, &res, true),
			 NFS3_WRITE_PARKED);
	assert_int_equal(res.status, NFS3_OK);
	assert_int_equal(parking.unparked, 0);
	parking.done(parking.arg, 0);
	assert_int_equal(parking.unparked, 1);
	assert_int_equal(req->disposition, RPC_REPLY);
	assert_int_equal(res.status, NFS3_OK);
	assert_int_equal(res.WRITE3res_u.resok.committed, FILE_SYNC);

	/* A failed flush turns the parked success into the error. */
	req = write_begin(fx, &args, &res);
	assert_int_equal(nfs3__write_run(req, &args, &res, true),
			 NFS3_WRITE_PARKED);
	parking.done(parking.arg, -EIO);
	assert_int_equal(parking.unparked, 2);
	assert_int_equal(res.status, NFS3ERR_IO);

	st->ops = parking.fake;
	fx->call.tops = NULL;
	assert_read(fx, &fh, 0, 5, "HEllo", false);
}

static void test_write_verifier_changes_at_every_start(void **state)
{
	struct nfs3_fixture *fx = *state;
	struct nfs3_service a, b;

	assert_int_equal(nfs3_service_init(&a, &fx->table), 0);
	assert_int_equal(nfs3_service_init(&b, &fx->table), 0);
	assert_memory_not_equal(a.write_verf, b.write_verf, 8);
	assert_int_equal(a.max_read_bytes, 1024 * 1024);
	assert_int_equal(a.max_write_bytes, 1024 * 1024);
}

static void test_read_and_write_trace_lines(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 fh = hello_file(fx, NFS3_FIXTURE_DS1, 0644);
	const struct rpc_proc *rd = &fx->prog.procs[NFSPROC3_READ];
	const struct rpc_proc *wr = &fx->prog.procs[NFSPROC3_WRITE];
	READ3args rargs = { .file = fh, .offset = 0, .count = 5 };
	WRITE3args wargs = {
		.file = fh,
		.offset = 4096,
		.count = 3,
		.stable = FILE_SYNC,
		.data = { .data_len = 3, .data_val = (char *)"abc" },
	};
	char hint[16], buf[RPC_TRACE_DETAIL_MAX];
	READ3res rres;
	WRITE3res wres;

	nfs3_fixture_call(fx, NFSPROC3_READ, &rargs, &rres);
	nfs3__fh_summary(&fh, hint, sizeof(hint));
	assert_string_equal(fx->call.req.path_hint, hint);
	rd->trace_args(&fx->call.req, &rargs, &rres, buf, sizeof(buf));
	assert_string_equal(buf, "off=0 count=5");
	rd->trace_res(&fx->call.req, &rargs, &rres, buf, sizeof(buf));
	assert_string_equal(buf, "status=NFS3_OK count=5 eof=0");
	nfs3_fixture_release(fx, NFSPROC3_READ, &rres);
	nfs3_fixture_call(fx, NFSPROC3_WRITE, &wargs, &wres);
	wr->trace_args(&fx->call.req, &wargs, &wres, buf, sizeof(buf));
	assert_string_equal(buf, "off=4096 count=3 stable=FILE_SYNC");
	wr->trace_res(&fx->call.req, &wargs, &wres, buf, sizeof(buf));
	assert_string_equal(buf, "status=NFS3_OK count=3 committed=FILE_SYNC");
	assert_int_equal(fx->call.req.payload_bytes, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_read_eof_is_exactly_the_stores, nfs3_fixture_setup,
			nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_read_count_is_capped_at_max_read,
			nfs3_fixture_setup, nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_read_of_directory_is_isdir,
						nfs3_fixture_setup,
						nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_read_of_symlink_is_inval,
						nfs3_fixture_setup,
						nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_read_needs_read_permission_but_not_from_owner,
			nfs3_fixture_setup, nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_write_unstable_runs_on_the_loop,
			nfs3_fixture_setup, nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_write_stable_leaves_the_loop, nfs3_fixture_setup,
			nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_write_count_not_data_length_is_inval,
			nfs3_fixture_setup, nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_write_on_read_only_export_is_rofs,
			nfs3_fixture_setup, nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_write_on_full_store_is_nospc, nfs3_fixture_setup,
			nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_write_count_is_capped_at_max_write,
			nfs3_fixture_setup, nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_write_to_directory_is_isdir, nfs3_fixture_setup,
			nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_write_needs_write_permission, nfs3_fixture_setup,
			nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_commit_leaves_the_loop_and_returns_the_verifier,
			nfs3_fixture_setup, nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_failed_sync_changes_the_verifier,
			nfs3_fixture_setup, nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_commit_on_read_only_export_does_not_sync,
			nfs3_fixture_setup, nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_commit_errors,
						nfs3_fixture_setup,
						nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_write_verifier_changes_at_every_start,
			nfs3_fixture_setup, nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_read_and_write_trace_lines,
						nfs3_fixture_setup,
						nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_write_run_says_what_it_did,
						nfs3_fixture_setup,
						nfs3_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
