// SPDX-License-Identifier: Apache-2.0
/*
 * test_nfs3_readdir: READDIR and READDIRPLUS (nfsd/nfs3/readdir.c) through
 * the procedure table against the fake store: both leave the loop, pages
 * never exceed the client's count once encoded, eof is set on the last
 * page only, a listing of 1000 entries pages through exactly once with
 * small counts, and the cookie verifier, TOOSMALL and the other errors.
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

#include "nfsd/base/base.h"
#include "nfsd/nfs3/nfs3_int.h"
#include "tests/lib/fake_store.h"
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

#define BIG_DIR_FILES 1000

/* Names seen while paging: index = the file number, [n] for "." "..". */
struct seen {
	unsigned files[BIG_DIR_FILES];
	unsigned dot, dotdot;
	unsigned pages;
};

static nfs_fh3 big_dir(struct nfs3_fixture *fx)
{
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	nfs_fh3 dir =
		nfs3_fixture_mkdir(fx, NFS3_FIXTURE_DS1, &root, "big", 0755);
	char name[32];

	for (int i = 0; i < BIG_DIR_FILES; i++) {
		snprintf(name, sizeof(name), "disk-%04d.vmdk", i);
		nfs3_fixture_mkfile(fx, NFS3_FIXTURE_DS1, &dir, name, "", 0,
				    0644);
	}
	return dir;
}

static void seen_add(struct seen *s, const char *name)
{
	int i;

	if (strcmp(name, ".") == 0) {
		s->dot++;
		return;
	}
	if (strcmp(name, "..") == 0) {
		s->dotdot++;
		return;
	}
	assert_int_equal(sscanf(name, "disk-%04d.vmdk", &i), 1);
	assert_in_range(i, 0, BIG_DIR_FILES - 1);
	s->files[i]++;
}

static void seen_assert_once(const struct seen *s)
{
	assert_int_equal(s->dot, 1);
	assert_int_equal(s->dotdot, 1);
	for (int i = 0; i < BIG_DIR_FILES; i++) {
		assert_int_equal(s->files[i], 1);
	}
}

static enum rpc_disposition readdir_call(struct nfs3_fixture *fx,
					 const nfs_fh3 *dir, uint64_t cookie,
					 const char *verf, uint32_t count,
					 READDIR3res *res)
{
	READDIR3args args = { .dir = *dir, .cookie = cookie, .count = count };

	if (verf) {
		memcpy(args.cookieverf, verf, NFS3_COOKIEVERFSIZE);
	}
	return nfs3_fixture_call(fx, NFSPROC3_READDIR, &args, res);
}

static void test_readdir_lists_everything_off_the_loop(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	nfs_fh3 dir =
		nfs3_fixture_mkdir(fx, NFS3_FIXTURE_DS1, &root, "d", 0755);
	const char *want[] = { ".", "..", "a", "b", "c" };
	READDIR3res res;
	const entry3 *e;
	uint64_t last = 0;
	size_t n = 0;

	nfs3_fixture_mkfile(fx, NFS3_FIXTURE_DS1, &dir, "a", "", 0, 0644);
	nfs3_fixture_mkfile(fx, NFS3_FIXTURE_DS1, &dir, "b", "", 0, 0644);
	nfs3_fixture_mkdir(fx, NFS3_FIXTURE_DS1, &dir, "c", 0755);
	assert_int_equal(readdir_call(fx, &dir, 0, NULL, 4096, &res),
			 RPC_PENDING);
	assert_non_null(fx->call.work);
	assert_int_equal(fx->call.req.disposition, RPC_REPLY);
	assert_int_equal(res.status, NFS3_OK);
	assert_true(res.READDIR3res_u.resok.dir_attributes.attributes_follow);
	assert_true(res.READDIR3res_u.resok.reply.eof);
	for (e = res.READDIR3res_u.resok.reply.entries; e; e = e->nextentry) {
		assert_true(n < 5);
		assert_string_equal(e->name, want[n]);
		assert_true(e->cookie > last);
		last = e->cookie;
		n++;
	}
	assert_int_equal(n, 5);
	assert_string_equal(fx->call.req.export_name, "ds1");
	nfs3_fixture_release(fx, NFSPROC3_READDIR, &res);
}

/* Pages through @dir with READDIR of @count bytes; every page encodes
 * within @count and is not empty. */
static void readdir_all(struct nfs3_fixture *fx, const nfs_fh3 *dir,
			uint32_t count, struct seen *s)
{
	char verf[NFS3_COOKIEVERFSIZE] = { 0 };
	uint64_t cookie = 0;
	bool eof = false;

	while (!eof) {
		READDIR3res res;
		READDIR3resok *ok = &res.READDIR3res_u.resok;
		const entry3 *e;

		readdir_call(fx, dir, cookie, verf, count, &res);
		assert_int_equal(res.status, NFS3_OK);
		assert_true(xdr_sizeof((xdrproc_t)xdr_READDIR3res, &res) <=
			    count);
		assert_non_null(ok->reply.entries);
		for (e = ok->reply.entries; e; e = e->nextentry) {
			seen_add(s, e->name);
			assert_true(e->cookie > cookie);
			cookie = e->cookie;
		}
		eof = ok->reply.eof;
		memcpy(verf, ok->cookieverf, sizeof(verf));
		nfs3_fixture_release(fx, NFSPROC3_READDIR, &res);
		s->pages++;
		assert_true(s->pages < 2000);
	}
}

static void test_readdir_pages_1000_entries_with_small_counts(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 dir = big_dir(fx);
	const uint32_t counts[] = { 150, 512, 4096, 65536 };

	for (size_t i = 0; i < ARRAY_SIZE(counts); i++) {
		struct seen s = { 0 };

		readdir_all(fx, &dir, counts[i], &s);
		seen_assert_once(&s);
		if (counts[i] == 150) {
			assert_int_equal(s.pages, BIG_DIR_FILES + 2);
		}
		if (counts[i] == 65536) {
			assert_int_equal(s.pages, 1);
		}
	}
}

static enum rpc_disposition
readdirplus_call(struct nfs3_fixture *fx, const nfs_fh3 *dir, uint64_t cookie,
		 const char *verf, uint32_t dircount, uint32_t maxcount,
		 READDIRPLUS3res *res)
{
	READDIRPLUS3args args = { .dir = *dir,
				  .cookie = cookie,
				  .dircount = dircount,
				  .maxcount = maxcount };

	if (verf) {
		memcpy(args.cookieverf, verf, NFS3_COOKIEVERFSIZE);
	}
	return nfs3_fixture_call(fx, NFSPROC3_READDIRPLUS, &args, res);
}

/* Every entry's handle resolves to the file its attributes describe. */
static void assert_entryplus(struct nfs3_fixture *fx, const entryplus3 *e)
{
	const fattr3 *a = &e->name_attributes.post_op_attr_u.attributes;

	assert_true(e->name_attributes.attributes_follow);
	assert_true(e->name_handle.handle_follows);
	assert_int_equal(a->fileid, e->fileid);
	assert_int_equal(nfs3_fixture_attr(fx, NFS3_FIXTURE_DS1,
					   &e->name_handle.post_op_fh3_u.handle)
				 .fileid,
			 e->fileid);
}

static void readdirplus_all(struct nfs3_fixture *fx, const nfs_fh3 *dir,
			    uint32_t dircount, uint32_t maxcount,
			    struct seen *s)
{
	char verf[NFS3_COOKIEVERFSIZE] = { 0 };
	uint64_t cookie = 0;
	bool eof = false;

	while (!eof) {
		READDIRPLUS3res res;
		READDIRPLUS3resok *ok = &res.READDIRPLUS3res_u.resok;
		const entryplus3 *e;

		assert_int_equal(readdirplus_call(fx, dir, cookie, verf,
						  dircount, maxcount, &res),
				 RPC_PENDING);
		assert_int_equal(res.status, NFS3_OK);
		assert_true(xdr_sizeof((xdrproc_t)xdr_READDIRPLUS3res, &res) <=
			    maxcount);
		assert_non_null(ok->reply.entries);
		for (e = ok->reply.entries; e; e = e->nextentry) {
			seen_add(s, e->name);
			assert_entryplus(fx, e);
			cookie = e->cookie;
		}
		eof = ok->reply.eof;
		memcpy(verf, ok->cookieverf, sizeof(verf));
		nfs3_fixture_release(fx, NFSPROC3_READDIRPLUS, &res);
		s->pages++;
		assert_true(s->pages < 2000);
	}
}

static void test_readdirplus_pages_1000_entries_with_handles(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 dir = big_dir(fx);
	struct seen small = { 0 }, one = { 0 }, large = { 0 };

	readdirplus_all(fx, &dir, 512, 1024, &small);
	seen_assert_once(&small);
	/* dircount bounds the page, but the first entry always goes. */
	readdirplus_all(fx, &dir, 1, 1 << 20, &one);
	seen_assert_once(&one);
	assert_int_equal(one.pages, BIG_DIR_FILES + 2);
	readdirplus_all(fx, &dir, 1 << 20, 1 << 20, &large);
	seen_assert_once(&large);
	assert_int_equal(large.pages, 1);
}

/* The first page of @dir: its last cookie and its verifier. */
static void first_page(struct nfs3_fixture *fx, const nfs_fh3 *dir,
		       uint32_t count, uint64_t *cookie, char *verf)
{
	READDIR3res res;
	const entry3 *e;

	readdir_call(fx, dir, 0, NULL, count, &res);
	assert_int_equal(res.status, NFS3_OK);
	assert_false(res.READDIR3res_u.resok.reply.eof);
	for (e = res.READDIR3res_u.resok.reply.entries; e; e = e->nextentry) {
		*cookie = e->cookie;
	}
	memcpy(verf, res.READDIR3res_u.resok.cookieverf, NFS3_COOKIEVERFSIZE);
	nfs3_fixture_release(fx, NFSPROC3_READDIR, &res);
}

static void test_readdir_cookie_verifier(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	nfs_fh3 dir = big_dir(fx);
	char verf[NFS3_COOKIEVERFSIZE], root_verf[NFS3_COOKIEVERFSIZE];
	const char zero[NFS3_COOKIEVERFSIZE] = { 0 };
	uint64_t cookie = 0, root_cookie = 0;
	READDIR3res res;

	first_page(fx, &dir, 512, &cookie, verf);
	first_page(fx, &root, 140, &root_cookie, root_verf);
	assert_memory_not_equal(verf, zero, NFS3_COOKIEVERFSIZE);
	assert_memory_not_equal(verf, root_verf, NFS3_COOKIEVERFSIZE);
	readdir_call(fx, &dir, cookie, root_verf, 512, &res);
	assert_int_equal(res.status, NFS3ERR_BAD_COOKIE);
	assert_true(res.READDIR3res_u.resfail.dir_attributes.attributes_follow);
	nfs3_fixture_release(fx, NFSPROC3_READDIR, &res);
	readdir_call(fx, &dir, cookie, verf, 512, &res);
	assert_int_equal(res.status, NFS3_OK);
	nfs3_fixture_release(fx, NFSPROC3_READDIR, &res);
	readdir_call(fx, &dir, cookie, zero, 512, &res);
	assert_int_equal(res.status, NFS3_OK);
	nfs3_fixture_release(fx, NFSPROC3_READDIR, &res);
	/* A cookie the directory never handed out. */
	readdir_call(fx, &dir, 1u << 30, verf, 512, &res);
	assert_int_equal(res.status, NFS3ERR_BAD_COOKIE);
	nfs3_fixture_release(fx, NFSPROC3_READDIR, &res);
}

static void test_readdir_too_small_for_one_entry(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	READDIR3res res;
	READDIRPLUS3res pres;

	readdir_call(fx, &root, 0, NULL, 100, &res);
	assert_int_equal(res.status, NFS3ERR_TOOSMALL);
	nfs3_fixture_release(fx, NFSPROC3_READDIR, &res);
	readdir_call(fx, &root, 0, NULL, 130, &res);
	assert_int_equal(res.status, NFS3ERR_TOOSMALL);
	nfs3_fixture_release(fx, NFSPROC3_READDIR, &res);
	readdir_call(fx, &root, 0, NULL, 136, &res);
	assert_int_equal(res.status, NFS3_OK);
	assert_string_equal(res.READDIR3res_u.resok.reply.entries->name, ".");
	assert_null(res.READDIR3res_u.resok.reply.entries->nextentry);
	nfs3_fixture_release(fx, NFSPROC3_READDIR, &res);
	readdirplus_call(fx, &root, 0, NULL, 4096, 250, &pres);
	assert_int_equal(pres.status, NFS3ERR_TOOSMALL);
	nfs3_fixture_release(fx, NFSPROC3_READDIRPLUS, &pres);
}

static void test_readdir_errors(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	nfs_fh3 f = nfs3_fixture_mkfile(fx, NFS3_FIXTURE_DS1, &root, "f", "", 0,
					0644);
	nfs_fh3 closed =
		nfs3_fixture_mkdir(fx, NFS3_FIXTURE_DS1, &root, "closed", 0311);
	nfs_fh3 limited = nfs3_fixture_root(fx, NFS3_FIXTURE_LIMITED);
	READDIR3res res;
	READDIRPLUS3res pres;

	readdir_call(fx, &f, 0, NULL, 4096, &res);
	assert_int_equal(res.status, NFS3ERR_NOTDIR);
	nfs3_fixture_release(fx, NFSPROC3_READDIR, &res);
	assert_int_equal(readdir_call(fx, &limited, 0, NULL, 4096, &res),
			 RPC_REPLY);
	assert_int_equal(res.status, NFS3ERR_ACCES);
	assert_null(fx->call.work);
	nfs3_fixture_release(fx, NFSPROC3_READDIR, &res);
	nfs3_fixture_cred(fx, AUTH_SYS, 2000, 2000);
	readdirplus_call(fx, &closed, 0, NULL, 4096, 4096, &pres);
	assert_int_equal(pres.status, NFS3ERR_ACCES);
	nfs3_fixture_release(fx, NFSPROC3_READDIRPLUS, &pres);
	fake_store_fail_next(nfs3_fixture_store(fx, NFS3_FIXTURE_DS1),
			     "readdir", -EIO);
	readdir_call(fx, &root, 0, NULL, 4096, &res);
	assert_int_equal(res.status, NFS3ERR_IO);
	nfs3_fixture_release(fx, NFSPROC3_READDIR, &res);
}

/* Listing from the last cookie: an empty page with eof. */
static void assert_end_of_listing(struct nfs3_fixture *fx, const nfs_fh3 *dir,
				  uint64_t cookie, const char *verf)
{
	READDIR3res res;

	readdir_call(fx, dir, cookie, verf, 4096, &res);
	assert_int_equal(res.status, NFS3_OK);
	assert_null(res.READDIR3res_u.resok.reply.entries);
	assert_true(res.READDIR3res_u.resok.reply.eof);
	nfs3_fixture_release(fx, NFSPROC3_READDIR, &res);
}

/* Cookies stay valid across changes: a listing resumed after a removal and
 * a creation lists the rest once and includes the new name. */
static void test_readdir_resumes_across_changes(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 dir = big_dir(fx);
	struct store *st = nfs3_fixture_store(fx, NFS3_FIXTURE_DS1);
	char verf[NFS3_COOKIEVERFSIZE];
	struct store_obj *d;
	uint64_t cookie = 0;
	bool eof = false, saw_new = false;
	unsigned n = 0;

	first_page(fx, &dir, 1024, &cookie, verf);
	assert_int_equal(nfs3_fixture_resolve(fx, NFS3_FIXTURE_DS1, &dir, &d),
			 0);
	assert_int_equal(st->ops->remove(st, d, "disk-0999.vmdk"), 0);
	st->ops->obj_unref(d);
	nfs3_fixture_mkfile(fx, NFS3_FIXTURE_DS1, &dir, "new.vmdk", "", 0,
			    0644);
	while (!eof) {
		READDIR3res res;
		const entry3 *e;

		readdir_call(fx, &dir, cookie, verf, 4096, &res);
		assert_int_equal(res.status, NFS3_OK);
		for (e = res.READDIR3res_u.resok.reply.entries; e;
		     e = e->nextentry) {
			assert_string_not_equal(e->name, "disk-0999.vmdk");
			saw_new |= strcmp(e->name, "new.vmdk") == 0;
			cookie = e->cookie;
			n++;
		}
		eof = res.READDIR3res_u.resok.reply.eof;
		nfs3_fixture_release(fx, NFSPROC3_READDIR, &res);
	}
	assert_true(saw_new);
	assert_true(n < BIG_DIR_FILES);
	assert_end_of_listing(fx, &dir, cookie, verf);
}

static void test_readdir_trace_lines(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	const struct rpc_proc *p = &fx->prog.procs[NFSPROC3_READDIRPLUS];
	READDIRPLUS3args args = { .dir = root,
				  .dircount = 512,
				  .maxcount = 8192 };
	READDIRPLUS3res res;
	char buf[RPC_TRACE_DETAIL_MAX];

	nfs3_fixture_call(fx, NFSPROC3_READDIRPLUS, &args, &res);
	p->trace_args(&fx->call.req, &args, &res, buf, sizeof(buf));
	assert_string_equal(buf, "cookie=0 dircount=512 maxcount=8192");
	p->trace_res(&fx->call.req, &args, &res, buf, sizeof(buf));
	assert_string_equal(buf, "status=NFS3_OK entries=2 eof=1");
	nfs3_fixture_release(fx, NFSPROC3_READDIRPLUS, &res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_readdir_lists_everything_off_the_loop,
			nfs3_fixture_setup, nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_readdir_pages_1000_entries_with_small_counts,
			nfs3_fixture_setup, nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_readdirplus_pages_1000_entries_with_handles,
			nfs3_fixture_setup, nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_readdir_cookie_verifier,
						nfs3_fixture_setup,
						nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_readdir_too_small_for_one_entry,
			nfs3_fixture_setup, nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_readdir_errors,
						nfs3_fixture_setup,
						nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_readdir_resumes_across_changes, nfs3_fixture_setup,
			nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_readdir_trace_lines,
						nfs3_fixture_setup,
						nfs3_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
