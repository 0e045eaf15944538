// SPDX-License-Identifier: Apache-2.0
/*
 * test_nfs3_fsinfo: NULL, FSSTAT, FSINFO and PATHCONF (nfsd/nfs3/fsinfo.c)
 * and the procedure table itself (nfsd/nfs3/procs.c).
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

static void test_program_has_rfc1813s_22_procedures_and_vaai_nas(void **state)
{
	struct nfs3_fixture *fx = *state;
	const struct rpc_program *p = &fx->prog;

	assert_string_equal(p->name, "nfs");
	assert_int_equal(p->prog, 100003);
	assert_int_equal(p->vers, 3);
	assert_ptr_equal(p->ctx, &fx->svc);
	/* RFC 1813's 22 (0-21), then VAAI-NAS's in-band procedure, 22. */
	assert_int_equal(p->nprocs, 23);
	for (size_t i = 0; i < p->nprocs; i++) {
		const struct rpc_proc *d = &p->procs[i];

		assert_non_null(d->name);
		assert_non_null(d->handler);
		assert_non_null(d->decode);
		assert_non_null(d->encode);
		if (i != NFSPROC3_NULL) {
			assert_true(d->args_size > 0);
			assert_true(d->res_size > 0);
			assert_non_null(d->trace_res);
		}
	}
	assert_string_equal(p->procs[NFSPROC3_READDIRPLUS].name, "READDIRPLUS");
	assert_string_equal(p->procs[NFSPROC3_COMMIT].name, "COMMIT");
	assert_string_equal(p->procs[22].name, "VAAI_NAS");
}

static void test_null_answers_nothing(void **state)
{
	struct nfs3_fixture *fx = *state;
	char res[1];

	assert_int_equal(nfs3_fixture_call(fx, NFSPROC3_NULL, NULL, res),
			 RPC_REPLY);
}

static void test_fsstat_reports_the_store(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	FSSTAT3args args = { .fsroot = root };
	FSSTAT3res res;
	FSSTAT3resok *ok = &res.FSSTAT3res_u.resok;

	nfs3_fixture_call(fx, NFSPROC3_FSSTAT, &args, &res);
	assert_int_equal(res.status, NFS3_OK);
	assert_true(ok->obj_attributes.attributes_follow);
	assert_int_equal(ok->tbytes, 1ull << 40);
	assert_int_equal(ok->fbytes, 1ull << 39);
	assert_int_equal(ok->abytes, (1ull << 39) - 4096);
	assert_int_equal(ok->tfiles, 1000000);
	assert_int_equal(ok->invarsec, 0);
	fake_store_fail_next(nfs3_fixture_store(fx, NFS3_FIXTURE_DS1), "fsstat",
			     -EIO);
	nfs3_fixture_call(fx, NFSPROC3_FSSTAT, &args, &res);
	assert_int_equal(res.status, NFS3ERR_IO);
	assert_true(res.FSSTAT3res_u.resfail.obj_attributes.attributes_follow);
}

static void test_fsinfo_reports_the_service_limits(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	FSINFO3args args = { .fsroot = root };
	FSINFO3res res;
	FSINFO3resok *ok = &res.FSINFO3res_u.resok;

	nfs3_fixture_call(fx, NFSPROC3_FSINFO, &args, &res);
	assert_int_equal(res.status, NFS3_OK);
	assert_true(ok->obj_attributes.attributes_follow);
	assert_int_equal(ok->rtmax, 1024 * 1024);
	assert_int_equal(ok->rtpref, 1024 * 1024);
	assert_int_equal(ok->wtmax, 1024 * 1024);
	assert_int_equal(ok->wtpref, 1024 * 1024);
	assert_int_equal(ok->rtmult, 4096);
	assert_int_equal(ok->dtpref, 64 * 1024);
	assert_int_equal(ok->maxfilesize, (uint64_t)INT64_MAX);
	assert_int_equal(ok->time_delta.seconds, 0);
	assert_int_equal(ok->time_delta.nseconds, 1);
	assert_int_equal(ok->properties, FSF3_LINK | FSF3_SYMLINK |
						 FSF3_HOMOGENEOUS |
						 FSF3_CANSETTIME);
	fx->svc.max_read_bytes = 65536;
	fx->svc.max_write_bytes = 32768;
	nfs3_fixture_call(fx, NFSPROC3_FSINFO, &args, &res);
	assert_int_equal(ok->rtmax, 65536);
	assert_int_equal(ok->wtmax, 32768);
	assert_int_equal(ok->wtpref, 32768);
}

static void test_pathconf_reports_posix_names(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_DS1);
	PATHCONF3args args = { .object = root };
	PATHCONF3res res;
	PATHCONF3resok *ok = &res.PATHCONF3res_u.resok;

	nfs3_fixture_call(fx, NFSPROC3_PATHCONF, &args, &res);
	assert_int_equal(res.status, NFS3_OK);
	assert_int_equal(ok->name_max, 255);
	assert_true(ok->linkmax > 1);
	assert_true(ok->no_trunc);
	assert_true(ok->chown_restricted);
	assert_false(ok->case_insensitive);
	assert_true(ok->case_preserving);
}

static void test_fs_calls_check_the_client_list(void **state)
{
	struct nfs3_fixture *fx = *state;
	nfs_fh3 root = nfs3_fixture_root(fx, NFS3_FIXTURE_LIMITED);
	FSINFO3args iargs = { .fsroot = root };
	PATHCONF3args pargs = { .object = root };
	FSINFO3res ires;
	PATHCONF3res pres;

	nfs3_fixture_call(fx, NFSPROC3_FSINFO, &iargs, &ires);
	assert_int_equal(ires.status, NFS3ERR_ACCES);
	nfs3_fixture_call(fx, NFSPROC3_PATHCONF, &pargs, &pres);
	assert_int_equal(pres.status, NFS3ERR_ACCES);
	assert_string_equal(fx->call.req.export_name, "limited");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_program_has_rfc1813s_22_procedures_and_vaai_nas,
			nfs3_fixture_setup, nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_null_answers_nothing,
						nfs3_fixture_setup,
						nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_fsstat_reports_the_store,
						nfs3_fixture_setup,
						nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_fsinfo_reports_the_service_limits,
			nfs3_fixture_setup, nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_pathconf_reports_posix_names, nfs3_fixture_setup,
			nfs3_fixture_teardown),
		cmocka_unit_test_setup_teardown(
			test_fs_calls_check_the_client_list, nfs3_fixture_setup,
			nfs3_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
