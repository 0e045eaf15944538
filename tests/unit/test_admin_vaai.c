// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of the admin API's storage-side operations (nfsd/admin/
 * ops.c, vaai.c, snapshots.c) through admin__api_handle(), on datastores
 * in a scratch directory (ext4 or tmpfs: no reflink there, so native
 * clones and snapshots are refused): routing of the sub-resources, the
 * operation registry (busy paths, exclusive operations, joined threads),
 * clones, Reserve Space, Extended Statistics and every refusal.
 */
#include "tests/lib/admin_fixture.h"
#include "nfsd/admin/ops.h"

#include <errno.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "nfsd/base/base.h"
#include "vmdk/vmdk.h"

#define MIB (1024u * 1024u)

static int setup(void **state)
{
	struct admin_fixture *fx = admin_fixture_new();

	assert_int_equal(admin__ops_new(&fx->api.ops), 0);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct admin_fixture *fx = *state;

	admin__ops_free(fx->api.ops);
	admin_fixture_free(fx);
	return 0;
}

/* A thin disk ds1/@name of @size with 1 MiB written at 0. */
static void disk_make(struct admin_fixture *fx, const char *name, uint64_t size)
{
	struct vmdk_create_opts o = { .size_bytes = size,
				      .type = VMDK_TYPE_THIN };
	uint8_t *buf = malloc(MIB);
	char path[4200], err[256];
	struct vmdk *v;

	snprintf(path, sizeof(path), "%s/%s", fx->exports[0].dir, name);
	assert_int_equal(vmdk_create(NULL, path, &o, err, sizeof(err)), 0);
	assert_int_equal(
		vmdk_open(NULL, path, VMDK_OPEN_RDWR, &v, err, sizeof(err)), 0);
	memset(buf, 0x5a, MIB);
	assert_int_equal(vmdk_pwrite(v, buf, MIB, 0), 0);
	vmdk_close(v);
	free(buf);
}

/* GET @url?path=@path (the arguments as libmicrohttpd hands them). */
static unsigned stats_get(struct admin_fixture *fx, const char *path,
			  json_t **doc)
{
	struct admin_arg arg = { .key = "path", .value = path };
	json_error_t e;

	admin__reply_fini(&fx->reply);
	admin__api_handle_args(&fx->api, "GET", "/volumes/ds1/stats", &arg,
			       path ? 1 : 0, NULL, NULL, 0, &fx->reply);
	*doc = json_loadb(fx->reply.body, fx->reply.len, 0, &e);
	return fx->reply.status;
}

static bool ds1_has(struct admin_fixture *fx, const char *name)
{
	char path[4200];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", fx->exports[0].dir, name);
	return lstat(path, &st) == 0;
}

static void test_routes_reach_subresources(void **state)
{
	struct admin_fixture *fx = *state;
	json_t *doc;

	assert_int_equal(
		admin_fixture_call(fx, "GET", "/operations", NULL, &doc), 200);
	assert_int_equal(json_array_size(json_object_get(doc, "operations")),
			 0);
	json_decref(doc);
	assert_int_equal(
		admin_fixture_call(fx, "GET", "/operations/7", NULL, NULL),
		404);
	assert_int_equal(
		admin_fixture_call(fx, "GET", "/operations/x", NULL, NULL),
		404);
	assert_int_equal(admin_fixture_call(fx, "GET", "/volumes/ds1/clones",
					    NULL, NULL),
			 405);
	assert_string_equal(fx->reply.allow, "POST");
	assert_int_equal(admin_fixture_call(fx, "GET",
					    "/volumes/ds1/clones/a/b/c", NULL,
					    NULL),
			 404);
	assert_int_equal(admin_fixture_call(fx, "GET", "/volumes/ds1/snapshots",
					    NULL, &doc),
			 200);
	assert_int_equal(json_array_size(json_object_get(doc, "snapshots")), 0);
	json_decref(doc);
	/* The old shapes still route. */
	assert_int_equal(
		admin_fixture_call(fx, "GET", "/volumes/ds1/", NULL, NULL),
		200);
	assert_int_equal(admin_fixture_call(fx, "GET", "/volumes/", NULL, NULL),
			 200);
}

static void test_clone_linked_and_full(void **state)
{
	struct admin_fixture *fx = *state;
	json_t *doc;

	disk_make(fx, "src.vmdk", 8 * MIB);
	assert_int_equal(admin_fixture_call(fx, "POST", "/volumes/ds1/clones",
					    "{\"source\":\"src.vmdk\","
					    "\"target\":\"l.vmdk\","
					    "\"mode\":\"linked\"}",
					    &doc),
			 201);
	assert_string_equal(json_string_value(json_object_get(doc, "state")),
			    "done");
	assert_string_equal(fx->reply.location, "/operations/1");
	json_decref(doc);
	assert_true(ds1_has(fx, "l.vmdk"));

	assert_int_equal(admin_fixture_call(fx, "POST", "/volumes/ds1/clones",
					    "{\"source\":\"l.vmdk\","
					    "\"target\":\"f.vmdk\","
					    "\"mode\":\"full\"}",
					    &doc),
			 202);
	assert_string_equal(fx->reply.location, "/operations/2");
	json_decref(doc);
	admin__ops_drain(fx->api.ops);
	assert_int_equal(
		admin_fixture_call(fx, "GET", "/operations/2", NULL, &doc),
		200);
	assert_string_equal(json_string_value(json_object_get(doc, "state")),
			    "done");
	assert_int_equal(json_integer_value(json_object_get(doc, "done_bytes")),
			 8 * MIB);
	json_decref(doc);
	assert_true(ds1_has(fx, "f.vmdk"));
	assert_true(ds1_has(fx, "f-flat.vmdk"));
	assert_int_equal(stats_get(fx, "f.vmdk", &doc), 200);
	assert_int_equal(json_integer_value(json_object_get(doc, "size_bytes")),
			 8 * MIB);
	json_decref(doc);
}

static void test_clone_refusals(void **state)
{
	struct admin_fixture *fx = *state;
	static const struct {
		const char *body;
		unsigned status;
		const char *says;
	} cases[] = {
		{ "{\"source\":\"../ds2/x.vmdk\",\"target\":\"t.vmdk\","
		  "\"mode\":\"full\"}",
		  400, "outside the export" },
		{ "{\"source\":\"src.vmdk\",\"target\":\"/etc/t.vmdk\","
		  "\"mode\":\"full\"}",
		  400, "outside the export" },
		{ "{\"source\":\"a//src.vmdk\",\"target\":\"t.vmdk\","
		  "\"mode\":\"full\"}",
		  400, "outside the export" },
		{ "{\"source\":\"src.vmdk\",\"target\":\"t.raw\","
		  "\"mode\":\"full\"}",
		  400, "must end in .vmdk" },
		{ "{\"source\":\"src.vmdk\",\"target\":\"src.vmdk\","
		  "\"mode\":\"full\"}",
		  409, "exists" },
		{ "{\"source\":\"notes.vmdk\",\"target\":\"t.vmdk\","
		  "\"mode\":\"full\"}",
		  409, "not a VMDK" },
		{ "{\"source\":\"none.vmdk\",\"target\":\"t.vmdk\","
		  "\"mode\":\"full\"}",
		  404, "none.vmdk" },
		{ "{\"source\":\"src.vmdk\",\"target\":\"t.vmdk\","
		  "\"mode\":\"deep\"}",
		  400, "not full, linked or native" },
		{ "{\"source\":\"src.vmdk\",\"target\":\"t.vmdk\"}", 400,
		  "needed" },
		{ "{\"source\":\"src.vmdk\",\"target\":\"n.vmdk\","
		  "\"mode\":\"native\"}",
		  422, "reflink" },
	};
	char notes[4200];
	FILE *f;

	disk_make(fx, "src.vmdk", 4 * MIB);
	snprintf(notes, sizeof(notes), "%s/notes.vmdk", fx->exports[0].dir);
	f = fopen(notes, "w");
	assert_non_null(f);
	fputs("not a disk\n", f);
	fclose(f);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		unsigned got = admin_fixture_call(
			fx, "POST", "/volumes/ds1/clones", cases[i].body, NULL);

		if (got != cases[i].status ||
		    !strstr(fx->error, cases[i].says)) {
			fail_msg("%s: %u '%s'", cases[i].body, got, fx->error);
		}
	}
	assert_false(ds1_has(fx, "t.vmdk"));
	assert_false(ds1_has(fx, "n.vmdk"));
	assert_false(ds1_has(fx, "n-flat.vmdk"));
	/* The error names paths inside the datastore only. */
	assert_null(strstr(fx->error, fx->dir));
	assert_int_equal(admin_fixture_call(fx, "POST", "/volumes/no/clones",
					    "{\"source\":\"src.vmdk\","
					    "\"target\":\"t.vmdk\","
					    "\"mode\":\"full\"}",
					    NULL),
			 404);
}

static void test_reserve_and_stats(void **state)
{
	struct admin_fixture *fx = *state;
	json_t *doc;

	disk_make(fx, "r.vmdk", 8 * MIB);
	assert_int_equal(stats_get(fx, "r.vmdk", &doc), 200);
	if (!json_is_true(json_object_get(doc, "fiemap"))) {
		json_decref(doc);
		skip(); /* no FIEMAP here */
	}
	assert_int_equal(json_integer_value(json_object_get(doc, "nb")), 1);
	assert_int_equal(json_integer_value(json_object_get(doc, "size_bytes")),
			 8 * MIB);
	json_decref(doc);
	assert_int_equal(admin_fixture_call(fx, "POST", "/volumes/ds1/reserve",
					    "{\"path\":\"r.vmdk\","
					    "\"type\":\"zeroedthick\"}",
					    NULL),
			 201);
	assert_int_equal(stats_get(fx, "r.vmdk", &doc), 200);
	assert_string_equal(
		json_string_value(json_object_get(doc, "provisioning")),
		"zeroedthick");
	assert_int_equal(json_integer_value(json_object_get(doc, "nb")), 8);
	assert_int_equal(json_integer_value(json_object_get(doc, "tbz")), 7);
	json_decref(doc);
	assert_int_equal(admin_fixture_call(fx, "POST", "/volumes/ds1/reserve",
					    "{\"path\":\"r.vmdk\","
					    "\"type\":\"thin\"}",
					    NULL),
			 400);
	assert_int_equal(stats_get(fx, NULL, &doc), 400);
	json_decref(doc);
	assert_int_equal(stats_get(fx, "../ds2/r.vmdk", &doc), 400);
	json_decref(doc);
}

/* An operation that runs until the test lets it end. */
static sem_t op_release;

static int op_wait_run(struct admin_op *op, char *errbuf, size_t errlen)
{
	(void)op;
	(void)errbuf;
	(void)errlen;
	while (sem_wait(&op_release) && errno == EINTR) {
	}
	return 0;
}

static int op_quick_run(struct admin_op *op, char *errbuf, size_t errlen)
{
	(void)op;
	snprintf(errbuf, errlen, "quick");
	return 0;
}

static void test_ops_refuse_busy_paths_and_exclusive(void **state)
{
	struct admin_fixture *fx = *state;
	struct admin_op_spec a = { .kind = "clone",
				   .mode = "full",
				   .export = &fx->exports[0],
				   .source = "a.vmdk",
				   .target = "b.vmdk",
				   .run = op_wait_run };
	struct admin_op_spec s = a;
	char err[512];
	json_t *doc;

	assert_int_equal(sem_init(&op_release, 0, 0), 0);
	assert_int_equal(
		admin__op_start(fx->api.ops, &a, true, &doc, err, sizeof(err)),
		0);
	assert_string_equal(json_string_value(json_object_get(doc, "state")),
			    "running");
	json_decref(doc);
	/* Its target as a source, its source as a target: busy. */
	s.source = "b.vmdk";
	s.target = "c.vmdk";
	s.run = op_quick_run;
	assert_int_equal(
		admin__op_start(fx->api.ops, &s, false, &doc, err, sizeof(err)),
		-EBUSY);
	assert_non_null(strstr(err, "b.vmdk is in use by running operation 1"));
	s.source = "x.vmdk";
	s.target = "a.vmdk";
	assert_int_equal(
		admin__op_start(fx->api.ops, &s, false, &doc, err, sizeof(err)),
		-EBUSY);
	/* Other paths run; on the other datastore too. */
	s.target = "y.vmdk";
	assert_int_equal(
		admin__op_start(fx->api.ops, &s, false, &doc, err, sizeof(err)),
		0);
	json_decref(doc);
	/* A whole-datastore operation waits for none. */
	s.exclusive = true;
	assert_int_equal(
		admin__op_start(fx->api.ops, &s, false, &doc, err, sizeof(err)),
		-EBUSY);
	assert_non_null(strstr(err, "cannot run at once"));
	s.export = &fx->exports[1];
	assert_int_equal(
		admin__op_start(fx->api.ops, &s, false, &doc, err, sizeof(err)),
		0);
	json_decref(doc);
	assert_int_equal(
		admin_fixture_call(fx, "GET", "/operations", NULL, &doc), 200);
	assert_int_equal(json_array_size(json_object_get(doc, "operations")),
			 3);
	json_decref(doc);
	sem_post(&op_release);
	admin__ops_free(fx->api.ops); /* joins the waiting one */
	assert_int_equal(admin__ops_new(&fx->api.ops), 0);
	sem_destroy(&op_release);
}

/* The engine as procedure 22 uses it (nfs3/vaai_clone.c): by key. */
static int op_arg_frees;

static void op_arg_free(void *arg)
{
	(*(int *)arg)++;
	__atomic_add_fetch(&op_arg_frees, 1, __ATOMIC_SEQ_CST);
}

static int op_until_cancel_run(struct admin_op *op, char *errbuf, size_t errlen)
{
	for (uint64_t i = 1;; i++) {
		int err = admin__op_progress(op, i, 1u << 20);

		if (err) {
			snprintf(errbuf, errlen, "stopped at %llu",
				 (unsigned long long)i);
			return err;
		}
		usleep(1000);
	}
}

static void test_ops_key_find_cancel(void **state)
{
	struct admin_fixture *fx = *state;
	int freed_a = 0, freed_b = 0;
	struct admin_op_spec k = { .kind = "clone",
				   .mode = "vaai-nas",
				   .export = &fx->exports[0],
				   .source = "fileid 1",
				   .target = "t.img",
				   .key = 77,
				   .total_bytes = 1u << 20,
				   .run = op_until_cancel_run,
				   .arg = &freed_a,
				   .arg_free = op_arg_free };
	struct admin_op_spec again = k;
	struct admin_op_view v;
	char err[512];
	uint64_t id = 0;

	op_arg_frees = 0;
	assert_int_equal(
		admin__op_start_bg(fx->api.ops, &k, &id, err, sizeof(err)), 0);
	assert_true(id > 0);
	assert_int_equal(admin__op_find(fx->api.ops, &fx->exports[0], 77, &v),
			 0);
	assert_int_equal(v.id, id);
	assert_int_equal(v.state, ADMIN_OP_RUNNING);
	assert_int_equal(v.total_bytes, 1u << 20);
	/* Another key, another datastore: not it. */
	assert_int_equal(admin__op_find(fx->api.ops, &fx->exports[0], 78, &v),
			 -ENOENT);
	assert_int_equal(admin__op_find(fx->api.ops, &fx->exports[1], 77, &v),
			 -ENOENT);
	/* The same key while it runs, whatever the names: busy, and the
	 * refused one's state freed at once. */
	again.target = "other-name.img";
	again.arg = &freed_b;
	assert_int_equal(
		admin__op_start_bg(fx->api.ops, &again, &id, err, sizeof(err)),
		-EBUSY);
	assert_non_null(strstr(err, "the target is in use by running"));
	assert_int_equal(freed_b, 1);
	assert_int_equal(freed_a, 0);
	assert_int_equal(admin__op_cancel(fx->api.ops, &fx->exports[0], 77), 0);
	admin__ops_drain(fx->api.ops);
	assert_int_equal(admin__op_find(fx->api.ops, &fx->exports[0], 77, &v),
			 0);
	assert_int_equal(v.state, ADMIN_OP_FAILED);
	assert_int_equal(v.err, -ECANCELED);
	assert_true(v.cancelled);
	assert_non_null(strstr(v.error, "stopped at"));
	assert_int_equal(freed_a, 1); /* once the run was over */
	assert_int_equal(op_arg_frees, 2);
	assert_int_equal(admin__op_cancel(fx->api.ops, &fx->exports[0], 77),
			 -EALREADY);
	assert_int_equal(admin__op_cancel(fx->api.ops, &fx->exports[0], 99),
			 -ENOENT);
}

static void test_snapshot_refusals(void **state)
{
	struct admin_fixture *fx = *state;
	static const char *const bad[] = {
		"{\"name\":\"a/b\"}",  "{\"name\":\"..\"}",
		"{\"name\":\"x..y\"}", "{\"name\":\".h\"}",
		"{\"name\":\"\"}",     "{\"nom\":\"s1\"}"
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_equal(admin_fixture_call(fx, "POST",
						    "/volumes/ds1/snapshots",
						    bad[i], NULL),
				 400);
	}
	/* No reflink in the scratch directory: refused, nothing left. */
	assert_int_equal(admin_fixture_call(fx, "POST",
					    "/volumes/ds1/snapshots",
					    "{\"name\":\"s1\"}", NULL),
			 422);
	assert_non_null(strstr(fx->error, "reflink"));
	assert_false(ds1_has(fx, ".snapshot"));
	assert_int_equal(admin_fixture_call(fx, "DELETE",
					    "/volumes/ds1/snapshots/s1", NULL,
					    NULL),
			 404);
	assert_int_equal(admin_fixture_call(fx, "POST",
					    "/volumes/ds1/snapshots/s1/restore",
					    "{}", NULL),
			 404);
	assert_int_equal(admin_fixture_call(fx, "POST",
					    "/volumes/ds1/snapshots/s1/restore",
					    "{\"now\":true}", NULL),
			 400);
	assert_int_equal(admin_fixture_call(fx, "DELETE",
					    "/volumes/ds1/snapshots/..", NULL,
					    NULL),
			 400);
}

/* A datastore whose store did not open (a CephFS cluster down at start):
 * every storage-side request is 503 with the reason, nothing touched. */
static void test_store_down_is_503(void **state)
{
	struct admin_fixture *fx = *state;
	struct store *st = fx->exports[1].store;

	fx->exports[1].store = NULL;
	assert_int_equal(admin_fixture_call(fx, "POST", "/volumes/ds2/clones",
					    "{\"source\":\"a.vmdk\",\"target\":"
					    "\"b.vmdk\",\"mode\":\"full\"}",
					    NULL),
			 503);
	assert_non_null(strstr(fx->error, "not open"));
	{
		struct admin_arg arg = { .key = "path", .value = "a.vmdk" };

		admin__reply_fini(&fx->reply);
		admin__api_handle_args(&fx->api, "GET", "/volumes/ds2/stats",
				       &arg, 1, NULL, NULL, 0, &fx->reply);
		assert_int_equal(fx->reply.status, 503);
	}
	assert_int_equal(admin_fixture_call(fx, "POST",
					    "/volumes/ds2/snapshots",
					    "{\"name\":\"s1\"}", NULL),
			 503);
	assert_int_equal(admin_fixture_call(fx, "GET", "/volumes/ds2/snapshots",
					    NULL, NULL),
			 503);
	fx->exports[1].store = st;
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_routes_reach_subresources),
		T(test_clone_linked_and_full),
		T(test_clone_refusals),
		T(test_reserve_and_stats),
		T(test_ops_refuse_busy_paths_and_exclusive),
		T(test_ops_key_find_cancel),
		T(test_snapshot_refusals),
		T(test_store_down_is_503),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
