// SPDX-License-Identifier: Apache-2.0
/*
 * test_mount: the MOUNT v3 procedures (nfsd/mount/, RFC 1813 5) called
 * through their program table with hand-built requests, against an export
 * table of fake stores (tests/lib/fake_root_store.c).  /ds1 is open to
 * everyone; /ds2 only to 10.0.0.0/8 and 192.168.1.5.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nfsd/mount/mount.h"
#include "nfsd/rpc/dispatch.h"
#include "mount3.h"
#include "tests/lib/fake_root_store.h"
#include "tests/lib/log_capture.h"
#include "tests/lib/xdr_roundtrip.h"

struct fixture {
	struct export exports[2];
	struct export_table table;
	struct mount_service *svc;
	struct rpc_program prog;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct export *e;

	assert_non_null(f);
	e = &f->exports[0];
	snprintf(e->name, sizeof(e->name), "ds1");
	snprintf(e->path, sizeof(e->path), "/ds1");
	e->id = 11;
	assert_int_equal(fake_root_store_new("ds1", 11, &e->store), 0);
	e = &f->exports[1];
	snprintf(e->name, sizeof(e->name), "ds2");
	snprintf(e->path, sizeof(e->path), "/ds2");
	e->id = 22;
	assert_int_equal(fake_root_store_new("ds2", 22, &e->store), 0);
	assert_int_equal(export_client_parse("10.0.0.0/8", &e->clients[0]), 0);
	assert_int_equal(export_client_parse("192.168.1.5", &e->clients[1]), 0);
	e->nclients = 2;
	f->table.exports = f->exports;
	f->table.count = 2;
	assert_int_equal(mount_service_new(&f->table, &f->svc), 0);
	mount_program_init(&f->prog, f->svc);
	log_capture_reset();
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	size_t i;

	mount_service_free(f->svc);
	for (i = 0; i < 2; i++) {
		assert_int_equal(fake_root_store_refs(f->exports[i].store), 0);
		f->exports[i].store->ops->close(f->exports[i].store);
	}
	free(f);
	return 0;
}

/* A request from @addr ("10.1.2.3" or "::ffff:10.1.2.3"). */
static void request_from(struct fixture *f, struct request *req,
			 const char *addr)
{
	memset(req, 0, sizeof(*req));
	req->svc = f->svc;
	req->program = &f->prog;
	if (strchr(addr, ':')) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&req->peer;

		in6->sin6_family = AF_INET6;
		assert_int_equal(inet_pton(AF_INET6, addr, &in6->sin6_addr), 1);
		in6->sin6_port = htons(800);
		req->peer_len = sizeof(*in6);
	} else {
		struct sockaddr_in *in4 = (struct sockaddr_in *)&req->peer;

		in4->sin_family = AF_INET;
		assert_int_equal(inet_pton(AF_INET, addr, &in4->sin_addr), 1);
		in4->sin_port = htons(800);
		req->peer_len = sizeof(*in4);
	}
}

/* Runs procedure @proc of the table; *res returns owned (free()). */
static enum rpc_disposition call(struct fixture *f, struct request *req,
				 uint32_t proc, const void *args, void **res)
{
	const struct rpc_proc *desc = &f->prog.procs[proc];

	assert_true(proc < f->prog.nprocs);
	assert_non_null(desc->handler);
	req->proc = proc;
	req->desc = desc;
	*res = calloc(1, desc->res_size ? desc->res_size : 1);
	assert_non_null(*res);
	return desc->handler(req, args, *res);
}

static void release(struct fixture *f, struct request *req, uint32_t proc,
		    void *res)
{
	if (f->prog.procs[proc].release) {
		f->prog.procs[proc].release(req, res);
	}
	free(res);
}

static mountstat3 mnt(struct fixture *f, const char *addr, const char *path)
{
	struct rpc_call req_call = { .pool = NULL };
	dirpath arg = (char *)path;
	void *res;
	mountstat3 stat;

	request_from(f, &req_call.req, addr);
	assert_int_equal(call(f, &req_call.req, MOUNTPROC3_MNT, &arg, &res),
			 RPC_REPLY);
	stat = ((mountres3 *)res)->fhs_status;
	release(f, &req_call.req, MOUNTPROC3_MNT, res);
	return stat;
}

static void umnt(struct fixture *f, const char *addr, const char *path)
{
	struct rpc_call req_call = { .pool = NULL };
	dirpath arg = (char *)path;
	void *res;

	request_from(f, &req_call.req, addr);
	assert_int_equal(call(f, &req_call.req, MOUNTPROC3_UMNT, &arg, &res),
			 RPC_REPLY);
	release(f, &req_call.req, MOUNTPROC3_UMNT, res);
}

/* DUMP as "host:path host:path ..." in list order. */
static void dump_text(struct fixture *f, char *buf, size_t len)
{
	struct rpc_call req_call = { .pool = NULL };
	const struct mountbody *b;
	size_t used = 0;
	void *res;

	buf[0] = '\0';
	request_from(f, &req_call.req, "127.0.0.1");
	assert_int_equal(call(f, &req_call.req, MOUNTPROC3_DUMP, NULL, &res),
			 RPC_REPLY);
	for (b = *(mountlist *)res; b; b = b->ml_next) {
		used += (size_t)snprintf(buf + used, len - used, "%s%s:%s",
					 used ? " " : "", b->ml_hostname,
					 b->ml_directory);
		assert_true(used < len);
	}
	release(f, &req_call.req, MOUNTPROC3_DUMP, res);
}

static void test_null_replies(void **state)
{
	struct fixture *f = *state;
	struct rpc_call req_call = { .pool = NULL };
	void *res;

	request_from(f, &req_call.req, "127.0.0.1");
	assert_int_equal(call(f, &req_call.req, MOUNTPROC3_NULL, NULL, &res),
			 RPC_REPLY);
	release(f, &req_call.req, MOUNTPROC3_NULL, res);
	assert_int_equal(f->prog.prog, 100005);
	assert_int_equal(f->prog.vers, 3);
	assert_ptr_equal(f->prog.ctx, f->svc);
	assert_int_equal(f->prog.nprocs, 6);
}

static void test_mnt_returns_root_handle_and_flavors(void **state)
{
	struct fixture *f = *state;
	struct rpc_call req_call = { .pool = NULL };
	dirpath arg = "/ds1";
	struct store_fh want;
	mountres3 *res, *decoded = NULL;
	mountres3_ok *ok;
	void *out;

	request_from(f, &req_call.req, "127.0.0.1");
	assert_int_equal(call(f, &req_call.req, MOUNTPROC3_MNT, &arg, &out),
			 RPC_REPLY);
	res = out;
	assert_int_equal(res->fhs_status, MNT3_OK);
	assert_string_equal(req_call.req.export_name, "ds1");
	fake_root_store_fh(f->exports[0].store, &want);
	ok = &res->mountres3_u.mountinfo;
	assert_int_equal(ok->fhandle.fhandle3_len, want.len);
	assert_memory_equal(ok->fhandle.fhandle3_val, want.data, want.len);
	assert_int_equal(ok->auth_flavors.auth_flavors_len, 2);
	assert_int_equal(ok->auth_flavors.auth_flavors_val[0], AUTH_SYS);
	assert_int_equal(ok->auth_flavors.auth_flavors_val[1], AUTH_NONE);
	assert_int_equal(fake_root_store_refs(f->exports[0].store), 0);

	/* The reply encodes with the table's routine and decodes intact. */
	assert_int_equal(xdr_roundtrip(f->prog.procs[MOUNTPROC3_MNT].encode,
				       res, sizeof(*res), (void **)&decoded),
			 0);
	assert_memory_equal(decoded->mountres3_u.mountinfo.fhandle.fhandle3_val,
			    want.data, want.len);
	xdr_roundtrip_release((xdrproc_t)xdr_mountres3, decoded);
	release(f, &req_call.req, MOUNTPROC3_MNT, out);
	assert_int_equal(mount_service_count(f->svc), 1);
	assert_true(log_capture_contains("mount: 127.0.0.1: mounted /ds1"));
}

static void test_mnt_unknown_path_is_noent(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(mnt(f, "127.0.0.1", "/ds3"), MNT3ERR_NOENT);
	assert_int_equal(mnt(f, "127.0.0.1", "/"), MNT3ERR_NOENT);
	assert_int_equal(mnt(f, "127.0.0.1", ""), MNT3ERR_NOENT);
	assert_int_equal(mnt(f, "127.0.0.1", "/ds1/sub"), MNT3ERR_NOENT);
	assert_int_equal(mount_service_count(f->svc), 0);
}

static void test_mnt_checks_client_rules(void **state)
{
	struct fixture *f = *state;
	char text[256];

	assert_int_equal(mnt(f, "127.0.0.1", "/ds2"), MNT3ERR_ACCES);
	assert_int_equal(mnt(f, "192.168.1.6", "/ds2"), MNT3ERR_ACCES);
	assert_true(log_capture_contains("refused"));
	assert_int_equal(mnt(f, "10.1.2.3", "/ds2"), MNT3_OK);
	assert_int_equal(mnt(f, "192.168.1.5", "/ds2/"), MNT3_OK);
	/* A v4-mapped address is the IPv4 client, in rules and in DUMP. */
	assert_int_equal(mnt(f, "::ffff:10.9.9.9", "/ds2"), MNT3_OK);
	assert_int_equal(mnt(f, "::1", "/ds2"), MNT3ERR_ACCES);
	dump_text(f, text, sizeof(text));
	assert_string_equal(text,
			    "10.1.2.3:/ds2 192.168.1.5:/ds2 10.9.9.9:/ds2");
}

static void test_mnt_store_failure(void **state)
{
	struct fixture *f = *state;

	fake_root_store_fail_root(f->exports[0].store, -EIO);
	assert_int_equal(mnt(f, "127.0.0.1", "/ds1"), MNT3ERR_IO);
	fake_root_store_fail_root(f->exports[0].store, -ENOMEM);
	assert_int_equal(mnt(f, "127.0.0.1", "/ds1"), MNT3ERR_SERVERFAULT);
	assert_true(log_capture_contains(
		"mount: ds1: cannot open the datastore root"));
	assert_int_equal(mount_service_count(f->svc), 0);
}

static void test_dump_lists_each_mount_once(void **state)
{
	struct fixture *f = *state;
	char text[256];

	dump_text(f, text, sizeof(text));
	assert_string_equal(text, "");
	assert_int_equal(mnt(f, "127.0.0.1", "/ds1"), MNT3_OK);
	assert_int_equal(mnt(f, "127.0.0.1", "/ds1/"), MNT3_OK);
	assert_int_equal(mnt(f, "fd00::7", "/ds1"), MNT3_OK);
	assert_int_equal(mnt(f, "10.0.0.2", "/ds2"), MNT3_OK);
	dump_text(f, text, sizeof(text));
	assert_string_equal(text, "127.0.0.1:/ds1 fd00::7:/ds1 10.0.0.2:/ds2");
}

static void test_umnt_removes_only_that_entry(void **state)
{
	struct fixture *f = *state;
	char text[256];

	assert_int_equal(mnt(f, "10.0.0.1", "/ds1"), MNT3_OK);
	assert_int_equal(mnt(f, "10.0.0.1", "/ds2"), MNT3_OK);
	assert_int_equal(mnt(f, "10.0.0.2", "/ds1"), MNT3_OK);
	umnt(f, "10.0.0.1", "/ds1/");
	umnt(f, "10.0.0.1", "/nosuch");
	umnt(f, "10.0.0.3", "/ds1");
	dump_text(f, text, sizeof(text));
	assert_string_equal(text, "10.0.0.2:/ds1 10.0.0.1:/ds2");
}

static void test_umntall_removes_the_callers_entries(void **state)
{
	struct fixture *f = *state;
	struct rpc_call req_call = { .pool = NULL };
	char text[256];
	void *res;

	assert_int_equal(mnt(f, "10.0.0.1", "/ds1"), MNT3_OK);
	assert_int_equal(mnt(f, "10.0.0.2", "/ds1"), MNT3_OK);
	assert_int_equal(mnt(f, "10.0.0.1", "/ds2"), MNT3_OK);
	request_from(f, &req_call.req, "10.0.0.1");
	assert_int_equal(call(f, &req_call.req, MOUNTPROC3_UMNTALL, NULL, &res),
			 RPC_REPLY);
	release(f, &req_call.req, MOUNTPROC3_UMNTALL, res);
	dump_text(f, text, sizeof(text));
	assert_string_equal(text, "10.0.0.2:/ds1");
}

static void test_export_lists_rules_as_groups(void **state)
{
	struct fixture *f = *state;
	struct rpc_call req_call = { .pool = NULL };
	const struct exportnode *e;
	void *res;

	request_from(f, &req_call.req, "10.0.0.1");
	assert_int_equal(call(f, &req_call.req, MOUNTPROC3_EXPORT, NULL, &res),
			 RPC_REPLY);
	e = *(exports *)res;
	assert_non_null(e);
	assert_string_equal(e->ex_dir, "/ds1");
	assert_null(e->ex_groups);
	e = e->ex_next;
	assert_non_null(e);
	assert_string_equal(e->ex_dir, "/ds2");
	assert_string_equal(e->ex_groups->gr_name, "10.0.0.0/8");
	assert_string_equal(e->ex_groups->gr_next->gr_name, "192.168.1.5");
	assert_null(e->ex_groups->gr_next->gr_next);
	assert_null(e->ex_next);
	release(f, &req_call.req, MOUNTPROC3_EXPORT, res);
}

static void test_export_of_empty_table_is_empty(void **state)
{
	struct fixture *f = *state;
	struct rpc_call req_call = { .pool = NULL };
	void *res;

	f->table.count = 0;
	request_from(f, &req_call.req, "10.0.0.1");
	assert_int_equal(call(f, &req_call.req, MOUNTPROC3_EXPORT, NULL, &res),
			 RPC_REPLY);
	assert_null(*(exports *)res);
	release(f, &req_call.req, MOUNTPROC3_EXPORT, res);
	f->table.count = 2;
}

/* A SIGHUP that drops an export: MNT refuses it and EXPORT leaves it out,
 * even when it was the first slot (the list head must stay the
 * allocation); bringing it back answers again. */
static void test_removed_export_is_not_mounted_nor_listed(void **state)
{
	struct fixture *f = *state;
	struct rpc_call req_call = { .pool = NULL };
	const struct exportnode *e;
	void *res;

	export_table_set_removed(&f->exports[0], true);
	assert_int_equal(mnt(f, "10.0.0.1", "/ds1"), MNT3ERR_NOENT);
	request_from(f, &req_call.req, "10.0.0.1");
	assert_int_equal(call(f, &req_call.req, MOUNTPROC3_EXPORT, NULL, &res),
			 RPC_REPLY);
	e = *(exports *)res;
	assert_non_null(e);
	assert_string_equal(e->ex_dir, "/ds2");
	assert_null(e->ex_next);
	release(f, &req_call.req, MOUNTPROC3_EXPORT, res);
	export_table_set_removed(&f->exports[1], true);
	request_from(f, &req_call.req, "10.0.0.1");
	assert_int_equal(call(f, &req_call.req, MOUNTPROC3_EXPORT, NULL, &res),
			 RPC_REPLY);
	assert_null(*(exports *)res);
	release(f, &req_call.req, MOUNTPROC3_EXPORT, res);
	export_table_set_removed(&f->exports[0], false);
	assert_int_equal(mnt(f, "10.0.0.1", "/ds1"), MNT3_OK);
}

/* Options changed in place (as a SIGHUP does under the write lock) rule
 * the next MNT. */
static void test_mnt_follows_changed_client_rules(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(mnt(f, "172.16.0.1", "/ds2"), MNT3ERR_ACCES);
	export_table_write_lock(&f->table);
	f->exports[1].nclients = 0;
	export_table_write_unlock(&f->table);
	assert_int_equal(mnt(f, "172.16.0.1", "/ds2"), MNT3_OK);
}

static void test_mount_list_is_bounded(void **state)
{
	struct fixture *f = *state;
	char addr[32];
	int i;

	/* Keep the capture buffer for the one warning, not 4097 mounts. */
	log_set_level(LOG_LEVEL_WARN);
	for (i = 0; i <= MOUNT_LIST_MAX; i++) {
		snprintf(addr, sizeof(addr), "10.%d.%d.1", i / 256, i % 256);
		assert_int_equal(mnt(f, addr, "/ds1"), MNT3_OK);
	}
	assert_int_equal(mount_service_count(f->svc), MOUNT_LIST_MAX);
	log_set_level(LOG_LEVEL_DEBUG);
	assert_true(log_capture_contains("mount: 10.16.0.1: mount list full"));
	/* Room comes back once a client unmounts. */
	umnt(f, "10.0.0.1", "/ds1");
	assert_int_equal(mnt(f, "10.99.0.1", "/ds1"), MNT3_OK);
	assert_int_equal(mount_service_count(f->svc), MOUNT_LIST_MAX);
}

static void test_trace_summaries(void **state)
{
	struct fixture *f = *state;
	const struct rpc_proc *p = f->prog.procs;
	struct rpc_call req_call = { .pool = NULL };
	dirpath arg = "/ds1", bad = "/nope";
	char buf[RPC_TRACE_DETAIL_MAX];
	void *res;

	request_from(f, &req_call.req, "127.0.0.1");
	assert_int_equal(call(f, &req_call.req, MOUNTPROC3_MNT, &arg, &res),
			 RPC_REPLY);
	p[MOUNTPROC3_MNT].trace_args(&req_call.req, &arg, res, buf,
				     sizeof(buf));
	assert_string_equal(buf, "path=/ds1");
	p[MOUNTPROC3_MNT].trace_res(&req_call.req, &arg, res, buf, sizeof(buf));
	assert_string_equal(buf, "status=OK");
	release(f, &req_call.req, MOUNTPROC3_MNT, res);

	assert_int_equal(call(f, &req_call.req, MOUNTPROC3_MNT, &bad, &res),
			 RPC_REPLY);
	p[MOUNTPROC3_MNT].trace_res(&req_call.req, &bad, res, buf, sizeof(buf));
	assert_string_equal(buf, "status=NOENT");
	release(f, &req_call.req, MOUNTPROC3_MNT, res);

	assert_int_equal(call(f, &req_call.req, MOUNTPROC3_DUMP, NULL, &res),
			 RPC_REPLY);
	p[MOUNTPROC3_DUMP].trace_res(&req_call.req, NULL, res, buf,
				     sizeof(buf));
	assert_string_equal(buf, "entries=1");
	release(f, &req_call.req, MOUNTPROC3_DUMP, res);

	assert_int_equal(call(f, &req_call.req, MOUNTPROC3_EXPORT, NULL, &res),
			 RPC_REPLY);
	p[MOUNTPROC3_EXPORT].trace_res(&req_call.req, NULL, res, buf,
				       sizeof(buf));
	assert_string_equal(buf, "exports=2");
	release(f, &req_call.req, MOUNTPROC3_EXPORT, res);

	p[MOUNTPROC3_UMNT].trace_args(&req_call.req, &arg, NULL, buf,
				      sizeof(buf));
	assert_string_equal(buf, "path=/ds1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_null_replies, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_mnt_returns_root_handle_and_flavors, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_mnt_unknown_path_is_noent,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_mnt_checks_client_rules,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_mnt_store_failure, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_dump_lists_each_mount_once,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_umnt_removes_only_that_entry, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_umntall_removes_the_callers_entries, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_export_lists_rules_as_groups, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_export_of_empty_table_is_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_removed_export_is_not_mounted_nor_listed, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_mnt_follows_changed_client_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mount_list_is_bounded,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_trace_summaries, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
