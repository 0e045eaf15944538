// SPDX-License-Identifier: Apache-2.0
/*
 * test_store_cephfs: the CephFS store (nfsd/store/cephfs/cephfs*.c) on a real
 * cluster, through its ops: handles that a second store on the same
 * cluster (a second gateway) resolves to the same file, a removed file's
 * handle is STALE, FILE_SYNC writes read back, READ's eof (from the
 * store's stat, and from the caller's size: read_sized), used bytes
 * counted in RADOS objects for a sparse file (not its size), and READDIR
 * cookies that the other store resumes from, a SETATTR of the size that
 * outlives the gateway that answered it, an eviction without a blocklist
 * (after a snapshot, or with another OSD map before the gateway's own
 * blocklist) that answers the COMMIT it held, and the RADOS
 * intent log's records settled by inode before a size change.  The
 * cluster is the one DSNFS_CEPH_CONF names (tests/run.sh starts one for
 * the suite); without it every test is skipped.
 */
/* First: it sets what libcephfs.h needs of the libc headers. */
#include "nfsd/store/cephfs/cephfs_rlog.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/unit/test_cephfs_dir.h"
#include "tests/unit/test_cephfs_state.h"

/* The state directory of every store opened here. */
static char sdir[600];

#include "nfsd/store/cephfs/cephfs.h"
#include "nfsd/store/store.h"
#include "nfsd/store/store_tree.h"
#include "tests/lib/log_capture.h"

#define TEST_EXPORT_ID 77
#define MIB (1024u * 1024u)

static int setup(void **state)
{
	return test_cephfs_pair_setup(state, TEST_EXPORT_ID,
				      "test_store_cephfs");
}

static void need_cluster(struct test_cephfs_pair *f)
{
	if (!f->a) {
		skip();
	}
}

static struct store_obj *make_file(struct test_cephfs_pair *f, const char *name)
{
	struct store_obj *obj = NULL;
	const uint8_t verf[8] = { 0 };

	assert_int_equal(f->a->ops->create(f->a, f->dir_a, name,
					   STORE_CREATE_GUARDED, NULL, verf,
					   NULL, &obj),
			 0);
	return obj;
}

/* Creates @name in the test's directory through another gateway @c. */
static struct store_obj *create_through(struct test_cephfs_pair *f,
					struct store *c, const char *name)
{
	struct store_obj *dir_c, *obj = NULL;
	struct store_fh fh;

	f->a->ops->obj_fh(f->dir_a, &fh);
	assert_int_equal(c->ops->resolve(c, &fh, &dir_c), 0);
	assert_int_equal(c->ops->create(c, dir_c, name, STORE_CREATE_UNCHECKED,
					NULL, NULL, NULL, &obj),
			 0);
	c->ops->obj_unref(dir_c);
	return obj;
}

static struct store_attr attr_of(struct store *st, struct store_obj *obj)
{
	struct store_attr a;

	assert_int_equal(st->ops->getattr(st, obj, &a), 0);
	return a;
}

static void test_cephfs_handle_is_valid_on_the_other_gateway(void **state)
{
	struct test_cephfs_pair *f = *state;
	struct store_obj *obj, *other;
	struct store_fh fh, fh2;
	struct store_attr a, b;
	bool sync_failed;
	char buf[16];
	uint32_t n;
	bool eof;

	need_cluster(f);
	obj = make_file(f, "shared");
	assert_int_equal(f->a->ops->write(f->a, obj, 0, "hello cephfs", 12,
					  STORE_FILE_SYNC, &sync_failed),
			 0);
	f->a->ops->obj_fh(obj, &fh);
	assert_true(fh.len <= STORE_FH_MAX);
	assert_int_equal(fh.len, 23);
	assert_int_equal(f->b->ops->resolve(f->b, &fh, &other), 0);
	f->b->ops->obj_fh(other, &fh2);
	assert_memory_equal(&fh, &fh2, sizeof(fh));
	a = attr_of(f->a, obj);
	b = attr_of(f->b, other);
	assert_int_equal(a.fileid, b.fileid);
	assert_int_equal(b.size_bytes, 12);
	assert_int_equal(b.fsid, TEST_EXPORT_ID);
	assert_int_equal(
		f->b->ops->read(f->b, other, 0, buf, sizeof(buf), &n, &eof), 0);
	assert_int_equal(n, 12);
	assert_true(eof);
	assert_memory_equal(buf, "hello cephfs", 12);
	f->b->ops->obj_unref(other);
	f->a->ops->obj_unref(obj);
}

/* READ's copy (store_read_sized) takes eof from the size the caller's
 * attributes gave, with no stat of its own: a read within that size is
 * not at the end, one reaching it is, one past it reads nothing; a file
 * shrunk meanwhile (through the other gateway) ends short, with eof. */
static void test_cephfs_read_sized_eof_from_the_callers_size(void **state)
{
	struct test_cephfs_pair *f = *state;
	struct store_sattr shrink = { .set_size = true, .size_bytes = 5 };
	struct store_obj *obj, *other;
	struct store_fh fh;
	bool sync_failed;
	char buf[16];
	uint32_t n;
	bool eof;

	need_cluster(f);
	assert_non_null(f->b->ops->read_sized);
	obj = make_file(f, "sized");
	assert_int_equal(f->a->ops->write(f->a, obj, 0, "hello cephfs", 12,
					  STORE_FILE_SYNC, &sync_failed),
			 0);
	f->a->ops->obj_fh(obj, &fh);
	assert_int_equal(f->b->ops->resolve(f->b, &fh, &other), 0);
	assert_int_equal(store_read_sized(f->b, other, 12, 0, buf, 4, &n, &eof),
			 0);
	assert_int_equal(n, 4);
	assert_false(eof);
	assert_int_equal(store_read_sized(f->b, other, 12, 4, buf, sizeof(buf),
					  &n, &eof),
			 0);
	assert_int_equal(n, 8);
	assert_true(eof);
	assert_memory_equal(buf, "o cephfs", 8);
	assert_int_equal(store_read_sized(f->b, other, 12, 20, buf, sizeof(buf),
					  &n, &eof),
			 0);
	assert_int_equal(n, 0);
	assert_true(eof);
	assert_int_equal(f->a->ops->setattr(f->a, obj, &shrink, NULL), 0);
	assert_int_equal(
		store_read_sized(f->b, other, 12, 0, buf, 12, &n, &eof), 0);
	assert_int_equal(n, 5);
	assert_true(eof);
	assert_memory_equal(buf, "hello", 5);
	f->b->ops->obj_unref(other);
	f->a->ops->obj_unref(obj);
}

static void test_cephfs_removed_file_is_stale_forged_is_bad(void **state)
{
	struct test_cephfs_pair *f = *state;
	struct store_obj *obj, *other = NULL;
	struct store_fh fh;

	need_cluster(f);
	obj = make_file(f, "doomed");
	f->a->ops->obj_fh(obj, &fh);
	f->a->ops->obj_unref(obj);
	assert_int_equal(f->a->ops->remove(f->a, f->dir_a, "doomed"), 0);
	assert_int_equal(f->b->ops->resolve(f->b, &fh, &other), -ESTALE);
	fh.data[fh.len - 1] ^= 1;
	assert_int_equal(f->a->ops->resolve(f->a, &fh, &other),
			 -STORE_EBADHANDLE);
	assert_null(other);
}

/* A 1 GiB file with 64 KiB written at 0 and at 512 MiB holds two
 * objects: used is 8 MiB of 4 MiB objects, not the size; both gateways
 * count the same once they look. */
static void test_cephfs_used_counts_objects_of_a_sparse_file(void **state)
{
	struct test_cephfs_pair *f = *state;
	struct store_sattr grow = { .set_size = true,
				    .size_bytes = 1024ull * MIB };
	struct store_obj *obj, *other;
	static char block[65536];
	struct store_fh fh;
	bool sync_failed;

	need_cluster(f);
	memset(block, 0xa5, sizeof(block));
	obj = make_file(f, "thin.vmdk");
	assert_int_equal(f->a->ops->setattr(f->a, obj, &grow, NULL), 0);
	assert_int_equal(attr_of(f->a, obj).used_bytes, 0);
	assert_int_equal(f->a->ops->write(f->a, obj, 0, block, sizeof(block),
					  STORE_FILE_SYNC, &sync_failed),
			 0);
	assert_int_equal(f->a->ops->write(f->a, obj, 512ull * MIB, block,
					  sizeof(block), STORE_FILE_SYNC,
					  &sync_failed),
			 0);
	assert_int_equal(attr_of(f->a, obj).size_bytes, 1024ull * MIB);
	assert_int_equal(attr_of(f->a, obj).used_bytes, 8ull * MIB);
	f->a->ops->obj_fh(obj, &fh);
	assert_int_equal(f->b->ops->resolve(f->b, &fh, &other), 0);
	assert_int_equal(attr_of(f->b, other).used_bytes, 8ull * MIB);
	f->b->ops->obj_unref(other);
	f->a->ops->obj_unref(obj);
}

/* This gateway's size changes keep its count without looking again:
 * objects past a cut are gone at once, a grown tail is a hole, a write
 * there counts. */
static void test_cephfs_used_follows_size_changes(void **state)
{
	struct test_cephfs_pair *f = *state;
	struct store_sattr size = { .set_size = true };
	static char block[65536];
	struct store_obj *obj;
	bool sync_failed;

	need_cluster(f);
	obj = make_file(f, "resized.vmdk");
	assert_int_equal(f->a->ops->write(f->a, obj, 0, block, sizeof(block),
					  STORE_FILE_SYNC, &sync_failed),
			 0);
	assert_int_equal(f->a->ops->write(f->a, obj, 12ull * MIB, block,
					  sizeof(block), STORE_FILE_SYNC,
					  &sync_failed),
			 0);
	assert_int_equal(attr_of(f->a, obj).used_bytes, 8ull * MIB);
	size.size_bytes = 6ull * MIB; /* object 3 goes */
	assert_int_equal(f->a->ops->setattr(f->a, obj, &size, NULL), 0);
	assert_int_equal(attr_of(f->a, obj).used_bytes, 4ull * MIB);
	size.size_bytes = 40ull * MIB; /* a hole up to 40 MiB */
	assert_int_equal(f->a->ops->setattr(f->a, obj, &size, NULL), 0);
	assert_int_equal(attr_of(f->a, obj).used_bytes, 4ull * MIB);
	assert_int_equal(f->a->ops->write(f->a, obj, 32ull * MIB, block,
					  sizeof(block), STORE_FILE_SYNC,
					  &sync_failed),
			 0);
	assert_int_equal(attr_of(f->a, obj).used_bytes, 8ull * MIB);
	size.size_bytes = 1ull * MIB; /* object 0 left, counted to 1 MiB */
	assert_int_equal(f->a->ops->setattr(f->a, obj, &size, NULL), 0);
	assert_int_equal(attr_of(f->a, obj).used_bytes, 1ull * MIB);
	f->a->ops->obj_unref(obj);
}

/* A small file is used up to its size rounded to 4 KiB, not a whole
 * object. */
static void test_cephfs_used_of_a_small_file_is_its_blocks(void **state)
{
	struct test_cephfs_pair *f = *state;
	struct store_obj *obj;
	bool sync_failed;

	need_cluster(f);
	obj = make_file(f, "small");
	assert_int_equal(f->a->ops->write(f->a, obj, 0, "x", 1, STORE_FILE_SYNC,
					  &sync_failed),
			 0);
	assert_int_equal(attr_of(f->a, obj).used_bytes, 4096);
	f->a->ops->obj_unref(obj);
}

struct listing {
	char names[64][32];
	uint64_t cookies[64];
	size_t n, stop_after;
};

static int list_cb(void *arg, const char *name, uint64_t fileid,
		   uint64_t cookie)
{
	struct listing *l = arg;

	(void)fileid;
	if (!strcmp(name, ".") || !strcmp(name, "..")) {
		return 0;
	}
	assert_true(l->n < 64);
	snprintf(l->names[l->n], sizeof(l->names[0]), "%s", name);
	l->cookies[l->n++] = cookie;
	return l->n == l->stop_after ? 1 : 0;
}

/* A listing stopped on one gateway goes on from its cookie on the other,
 * with every name once. */
static void test_cephfs_readdir_cookie_resumes_on_the_other(void **state)
{
	struct test_cephfs_pair *f = *state;
	struct listing first = { .stop_after = 10 }, rest = { 0 };
	struct store_obj *dir_b;
	struct store_fh fh;
	char name[16];

	need_cluster(f);
	for (int i = 0; i < 30; i++) {
		snprintf(name, sizeof(name), "e%02d", i);
		f->a->ops->obj_unref(make_file(f, name));
	}
	assert_int_equal(f->a->ops->readdir(f->a, f->dir_a, 0, list_cb, &first),
			 0);
	assert_int_equal(first.n, 10);
	f->a->ops->obj_fh(f->dir_a, &fh);
	assert_int_equal(f->b->ops->resolve(f->b, &fh, &dir_b), 0);
	assert_int_equal(f->b->ops->readdir(f->b, dir_b, first.cookies[9],
					    list_cb, &rest),
			 0);
	f->b->ops->obj_unref(dir_b);
	assert_int_equal(first.n + rest.n, 30);
	for (size_t i = 0; i < first.n; i++) {
		for (size_t j = 0; j < rest.n; j++) {
			assert_string_not_equal(first.names[i], rest.names[j]);
		}
	}
}

static void test_cephfs_open_names_datastore_and_cluster(void **state)
{
	struct test_cephfs_pair *f = *state;
	const char *conf = getenv("DSNFS_CEPH_CONF");
	struct store *st = NULL;
	char err[512] = "";

	need_cluster(f);
	assert_int_equal(
		store_cephfs_open("c2", 78, conf, "/no/such/dir", "admin", "",
				  test_cephfs_state(conf, sdir, sizeof(sdir)),
				  NULL, 8, &st, err, sizeof(err)),
		-ENOENT);
	assert_null(st);
	assert_non_null(strstr(err, "datastore c2: cephfs cluster "));
	assert_non_null(strstr(err, conf));
}

/* The log levels left at Ceph's default go to 0/0 (no entries formatted
 * per call for the in-memory ring); a level that ceph.conf sets stays. */
static void test_cephfs_default_log_levels_quiet_set_ones_kept(void **state)
{
	struct test_cephfs_pair *f = *state;
	const char *conf = getenv("DSNFS_CEPH_CONF");
	char path[700], cur[32], line[512];
	struct store *st = NULL;
	char err[512] = "";
	FILE *in, *out;

	need_cluster(f);
	assert_int_equal(ceph_conf_get(store__cephfs(f->a)->cm, "debug_client",
				       cur, sizeof(cur)),
			 0);
	assert_string_equal(cur, "0/0");
	assert_int_equal(ceph_conf_get(store__cephfs(f->a)->cm,
				       "debug_objectcacher", cur, sizeof(cur)),
			 0);
	assert_string_equal(cur, "0/0");
	snprintf(path, sizeof(path), "%s/loud-%d.conf",
		 test_cephfs_state(conf, sdir, sizeof(sdir)), (int)getpid());
	in = fopen(conf, "r");
	out = fopen(path, "w");
	assert_non_null(in);
	assert_non_null(out);
	while (fgets(line, sizeof(line), in)) {
		fputs(line, out);
	}
	fputs("[client]\ndebug_client = 1/7\n", out);
	fclose(in);
	fclose(out);
	assert_int_equal(store_cephfs_open("c3", 79, path, "/", "admin", "",
					   sdir, NULL, 8, &st, err,
					   sizeof(err)),
			 0);
	assert_int_equal(ceph_conf_get(store__cephfs(st)->cm, "debug_client",
				       cur, sizeof(cur)),
			 0);
	assert_string_equal(cur, "1/7");
	assert_int_equal(ceph_conf_get(store__cephfs(st)->cm, "debug_objecter",
				       cur, sizeof(cur)),
			 0);
	assert_string_equal(cur, "0/0");
	st->ops->close(st);
	unlink(path);
}

/* Evicts @st's CephFS client through @by's mount (an MDS "client evict",
 * which blocklists it): what a takeover does to a gateway that died, so
 * that the MDS drops its session and caps with whatever it had not
 * flushed. */
static void evict_client(struct store *st, struct store *by)
{
	struct store_cephfs *sc = store__cephfs(st);
	char cmd_buf[128];
	const char *cmd[] = { cmd_buf };
	char *out = NULL, *outs = NULL;
	size_t out_len = 0, outs_len = 0;

	snprintf(cmd_buf, sizeof(cmd_buf),
		 "{\"prefix\": \"client evict\", \"filters\": "
		 "[\"id=%llu\"]}",
		 (unsigned long long)ceph_get_instance_id(sc->cm));
	assert_int_equal(ceph_mds_command(store__cephfs(by)->cm, "*", cmd, 1,
					  "", 0, &out, &out_len, &outs,
					  &outs_len),
			 0);
	ceph_buffer_free(out);
	ceph_buffer_free(outs);
}

/* evict_client(), then @st closes as a fenced gateway does (no flush). */
static void crash_gateway(struct store *st, struct store *by)
{
	evict_client(st, by);
	atomic_store(&st->fenced, true);
	st->ops->close(st);
}

/* RFC 1813 3.3.2: SETATTR is stable when answered.  libcephfs sets a
 * larger size it holds the file's exclusive caps for in its own cache
 * (a cap flush later): the size must reach the MDS before the reply, or
 * a gateway that dies after it loses it (t2114 found it: a file read
 * back shorter than an answered SETATTR made it). */
static void test_cephfs_setattr_size_outlives_the_gateway(void **state)
{
	struct test_cephfs_pair *f = *state;
	struct store_sattr grow = { .set_size = true,
				    .size_bytes = 3 * MIB + 5 };
	struct store_obj *obj, *other;
	struct store *c = NULL;
	struct store_fh fh;
	bool sync_failed;

	need_cluster(f);
	assert_int_equal(test_cephfs_gateway("c1", TEST_EXPORT_ID, &c), 0);
	obj = create_through(f, c, "grown");
	assert_int_equal(c->ops->write(c, obj, 0, "twelve bytes", 12,
				       STORE_FILE_SYNC, &sync_failed),
			 0);
	assert_int_equal(c->ops->setattr(c, obj, &grow, NULL), 0);
	assert_int_equal(attr_of(c, obj).size_bytes, 3 * MIB + 5);
	c->ops->obj_fh(obj, &fh);
	c->ops->obj_unref(obj);
	crash_gateway(c, f->a);
	assert_int_equal(f->b->ops->resolve(f->b, &fh, &other), 0);
	assert_int_equal(attr_of(f->b, other).size_bytes, 3 * MIB + 5);
	f->b->ops->obj_unref(other);
}

/* A sync's 0 is no proof for a gateway fenced while it waited: libcephfs
 * drops the caps it was flushing (a new size with them) and wakes the
 * waiter.  The getattr after each sync must then fail, -ESHUTDOWN, and
 * not answer from caps the client no longer has (t2117 catches a
 * SETATTR inside its sync; here the client is evicted between two). */
static void test_cephfs_sync_confirm_fails_once_evicted(void **state)
{
	struct test_cephfs_pair *f = *state;
	struct timespec pause = { 0, 50 * 1000000 };
	struct store_obj *obj;
	struct store *c = NULL;
	bool sync_failed;
	int rc = 0;

	need_cluster(f);
	assert_int_equal(test_cephfs_gateway("c1", TEST_EXPORT_ID, &c), 0);
	obj = create_through(f, c, "confirmed");
	assert_int_equal(c->ops->write(c, obj, 0, "twelve bytes", 12,
				       STORE_FILE_SYNC, &sync_failed),
			 0);
	assert_int_equal(store__cephfs_sync_confirm(store__cephfs(c),
						    store__cephfs_obj(obj)),
			 0);
	evict_client(c, f->a);
	/* The client learns it from the MDS or the OSD map: bounded. */
	for (int i = 0; i < 200 && !rc; i++) {
		rc = store__cephfs_sync_confirm(store__cephfs(c),
						store__cephfs_obj(obj));
		if (!rc) {
			nanosleep(&pause, NULL);
		}
	}
	assert_int_equal(rc, -ESHUTDOWN);
	c->ops->obj_unref(obj);
	atomic_store(&c->fenced, true);
	c->ops->close(c);
}

/* Sets the MDSs' mds_session_blocklist_on_evict through @by's mount (a
 * command to the daemons: in force when it returns). */
static void blocklist_on_evict(struct store *by, bool on)
{
	char cmd_buf[160];
	const char *cmd[] = { cmd_buf };
	char *out = NULL, *outs = NULL;
	size_t out_len = 0, outs_len = 0;
	int rc;

	snprintf(cmd_buf, sizeof(cmd_buf),
		 "{\"prefix\": \"config set\", \"var\": "
		 "\"mds_session_blocklist_on_evict\", \"val\": [\"%s\"]}",
		 on ? "true" : "false");
	rc = ceph_mds_command(store__cephfs(by)->cm, "*", cmd, 1, "", 0, &out,
			      &out_len, &outs, &outs_len);
	ceph_buffer_free(out);
	ceph_buffer_free(outs);
	assert_int_equal(rc, 0);
}

struct commit_call {
	struct store *st;
	struct store_obj *obj;
	_Atomic int rc;
	_Atomic bool done;
};

static void *commit_thread(void *arg)
{
	struct commit_call *c = arg;
	bool sync_failed;

	atomic_store(&c->rc,
		     c->st->ops->commit(c->st, c->obj, 0, 0, &sync_failed));
	atomic_store(&c->done, true);
	return NULL;
}

/* Each mount names its MDS session after the gateway's run
 * (cephfs_reclaim.c); a second live store of one name in one process (the
 * fixture's two gateways) mounts unnamed instead of resetting the
 * first's session, and a store opened again after a clean close takes the
 * name back, with nothing to reset. */
static void test_cephfs_session_named_once_per_process(void **state)
{
	struct test_cephfs_pair *f = *state;
	struct store_cephfs *a, *b;
	char name[sizeof(a->session)];
	struct store *c = NULL;
	struct store_obj *root;

	need_cluster(f);
	a = store__cephfs(f->a);
	b = store__cephfs(f->b);
	assert_memory_equal(a->session, "dsnfsd-", 7);
	assert_string_equal(b->session, "");
	snprintf(name, sizeof(name), "%s", a->session);
	/* The fixture's directory is an object of a: looked up again in c. */
	f->a->ops->obj_unref(f->dir_a);
	f->dir_a = NULL;
	f->a->ops->close(f->a);
	f->a = NULL;
	log_capture_reset();
	assert_int_equal(test_cephfs_gateway("c1", TEST_EXPORT_ID, &c), 0);
	f->a = c;
	assert_string_equal(store__cephfs(c)->session, name);
	assert_false(log_capture_contains("reset the MDS session"));
	assert_int_equal(c->ops->root(c, &root), 0);
	assert_int_equal(c->ops->lookup(c, root, f->dir, &f->dir_a), 0);
	c->ops->obj_unref(root);
}

/* An MDS that evicts without blocklisting tells the client nothing, and a
 * COMMIT of its UNSTABLE data waits for good (measured: over 400 s).  The
 * monitor finds the eviction through the mount's admin socket and
 * blocklists the mount itself (cephfs_evict.c): the COMMIT answers
 * -EAGAIN (JUKEBOX), bounded, the mount is blocklisted, and the store asks
 * for a new mount.  Before the eviction, a snapshot made and deleted
 * (EVICT_SNAPSHOT), or another OSD map epoch after it (EVICT_MAP_BETWEEN). */
enum evict_extra { EVICT_PLAIN, EVICT_SNAPSHOT, EVICT_MAP_BETWEEN };

static void evicted_commit_answers(struct test_cephfs_pair *f,
				   enum evict_extra extra)
{
	struct timespec settle = { 1, 0 };
	struct timespec tick = { 0, 100 * 1000000 };
	struct commit_call call = { 0 };
	static char block[65536];
	struct store *c = NULL;
	char errbuf[256];
	bool sync_failed;
	pthread_t t;
	int waited;

	need_cluster(f);
	/* A COMMIT that never comes back must fail the test, not hang it. */
	alarm(120);
	assert_int_equal(test_cephfs_gateway("c1", TEST_EXPORT_ID, &c), 0);
	if (extra == EVICT_SNAPSHOT) {
		assert_int_equal(store_snap(c)->create(c, "s1", NULL, errbuf,
						       sizeof(errbuf)),
				 0);
		assert_int_equal(
			store_snap(c)->remove(c, "s1", errbuf, sizeof(errbuf)),
			0);
	}
	call.st = c;
	call.obj = create_through(f, c, "evicted-unstable");
	memset(block, 'u', sizeof(block));
	for (int i = 0; i < 16; i++) {
		assert_int_equal(c->ops->write(c, call.obj, i * sizeof(block),
					       block, sizeof(block),
					       STORE_UNSTABLE, &sync_failed),
				 0);
	}
	blocklist_on_evict(f->a, false);
	evict_client(c, f->a);
	blocklist_on_evict(f->a, true);
	if (extra == EVICT_MAP_BETWEEN) {
		/* Once the mount asked for the next epoch (when the MDS
		 * dropped it), an entry for an address no one has makes it. */
		nanosleep(&settle, NULL);
		assert_true(store__cephfs(f->a)->rados_ok);
		assert_int_equal(rados_blocklist_add(store__cephfs(f->a)->rados,
						     "127.0.0.2:0/1", 60),
				 0);
	}
	assert_int_equal(pthread_create(&t, NULL, commit_thread, &call), 0);
	/* The bound, two asks of the MDS, the blocklist's OSD map. */
	for (waited = 0; waited < 300 && !atomic_load(&call.done); waited++) {
		nanosleep(&tick, NULL);
	}
	assert_true(atomic_load(&call.done));
	pthread_join(t, NULL);
	alarm(0);
	assert_int_equal(atomic_load(&call.rc), -EAGAIN);
	assert_true(atomic_load(&c->reopen));
	assert_true(log_capture_contains(
		"evicted this gateway's session without blocklisting it: "
		"blocklisted its own client"));
	/* Another mount reads what the file holds: nothing of the old one's
	 * cache reaches it later (blocklisted), whatever it had flushed. */
	c->ops->obj_unref(call.obj);
	c->ops->close(c);
}

static void test_cephfs_eviction_without_blocklist_is_found(void **state)
{
	evicted_commit_answers(*state, EVICT_PLAIN);
}

/* The same after a snapshot made and deleted: the OSD map that queues
 * its removal may be the one the idle mount is sent after the MDS dropped
 * it, the blocklist's then never comes, and the COMMIT waited for the MDS
 * to acknowledge its caps' flush for good (t2122 found it).  The mount,
 * told to drop its stale session, drops those caps and the COMMIT fails:
 * -EAGAIN, never 0. */
static void test_cephfs_eviction_after_a_snapshot_is_found(void **state)
{
	evicted_commit_answers(*state, EVICT_SNAPSHOT);
}

/* The snapshot's case made certain: whatever makes the next OSD map
 * epoch after the MDS dropped the mount hides the blocklist from it. */
static void test_cephfs_eviction_with_a_map_between_is_found(void **state)
{
	evicted_commit_answers(*state, EVICT_MAP_BETWEEN);
}

/* FSSTAT asks the mon, one thread at a time per store: while one asks,
 * the others answer with the last figures it gave (JUKEBOX before the
 * first), and nothing of it touches the store's health. */
static void test_cephfs_fsstat_answers_last_while_the_mon_is_asked(void **state)
{
	struct test_cephfs_pair *f = *state;
	struct store_fsstat first, meanwhile;
	struct store_cephfs *sc;

	need_cluster(f);
	sc = store__cephfs(f->a);
	assert_int_equal(f->a->ops->fsstat(f->a, &first), 0);
	assert_true(first.total_bytes > 0);
	/* Another thread waits on the mon: its last answer, at once. */
	sc->statfs.asking = true;
	memset(&meanwhile, 0xff, sizeof(meanwhile));
	assert_int_equal(f->a->ops->fsstat(f->a, &meanwhile), 0);
	assert_int_equal(meanwhile.total_bytes, first.total_bytes);
	assert_int_equal(meanwhile.total_files, first.total_files);
	/* None yet: try again later. */
	sc->statfs.have_last = false;
	assert_int_equal(f->a->ops->fsstat(f->a, &meanwhile), -EAGAIN);
	sc->statfs.asking = false;
	assert_int_equal(f->a->ops->fsstat(f->a, &meanwhile), 0);
	assert_true(sc->statfs.have_last);
	assert_false(atomic_load(&f->a->unavailable));
	/* Down: refused without the cluster, as every call. */
	atomic_store(&f->a->unavailable, true);
	assert_int_equal(f->a->ops->fsstat(f->a, &meanwhile), -EAGAIN);
	atomic_store(&f->a->unavailable, false);
}

/* The RADOS intent log settles a file's records by its inode, not by the
 * object the store had when it wrote them: the object cache may drop an
 * object still in use (FIFO, 4096 entries) and make another for the same
 * file.  A size change through the new one must still checkpoint the
 * records first, or a replay after a crash would put them back over it. */
static void test_cephfs_rlog_size_change_settles_a_dropped_object(void **state)
{
	struct test_cephfs_pair *f = *state;
	const char *conf = getenv("DSNFS_CEPH_CONF");
	struct store_sattr cut = { .set_size = true, .size_bytes = 0 };
	static char data[64 * 1024];
	struct store_obj *obj, *again;
	struct store_rlog *rl;
	struct store *c = NULL;
	struct store_fh fh;
	uintptr_t first;
	bool sync_failed;
	char err[512] = "";
	char gw[64];
	uint64_t head, tail;

	need_cluster(f);
	assert_int_equal(test_cephfs_gateway("c1", TEST_EXPORT_ID, &c), 0);
	snprintf(gw, sizeof(gw), "unit-%d", (int)getpid());
	assert_int_equal(
		store_cephfs_rlog_open(c,
				       &(const struct store_rlog_params){
					       .ceph_conf = conf,
					       .gateway = gw,
					       .ring_bytes = 8 * MIB,
					       .checkpoint_ms = 3600000 },
				       err, sizeof(err)),
		0);
	rl = store__cephfs(c)->rlog;
	obj = create_through(f, c, "settled");
	memset(data, 'r', sizeof(data));
	assert_int_equal(c->ops->write(c, obj, 0, data, sizeof(data),
				       STORE_FILE_SYNC, &sync_failed),
			 0);
	c->ops->obj_fh(obj, &fh);
	first = (uintptr_t)obj;
	/* The cache drops it (the log's list of written files keeps it). */
	store__cephfs_cache_drop(store__cephfs(c), store__cephfs_obj(obj)->ino);
	c->ops->obj_unref(obj);
	assert_int_equal(c->ops->resolve(c, &fh, &again), 0);
	assert_true((uintptr_t)again != first);
	assert_int_equal(c->ops->setattr(c, again, &cut, NULL), 0);
	pthread_mutex_lock(&rl->lock);
	head = rl->head_lsn;
	tail = rl->tail_lsn;
	pthread_mutex_unlock(&rl->lock);
	assert_int_equal(head, tail);
	c->ops->obj_unref(again);
	c->ops->close(c);
}

#define T(name)                                                                \
	cmocka_unit_test_setup_teardown(name, setup, test_cephfs_pair_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_cephfs_handle_is_valid_on_the_other_gateway),
		T(test_cephfs_read_sized_eof_from_the_callers_size),
		T(test_cephfs_removed_file_is_stale_forged_is_bad),
		T(test_cephfs_used_counts_objects_of_a_sparse_file),
		T(test_cephfs_used_of_a_small_file_is_its_blocks),
		T(test_cephfs_used_follows_size_changes),
		T(test_cephfs_readdir_cookie_resumes_on_the_other),
		T(test_cephfs_open_names_datastore_and_cluster),
		T(test_cephfs_default_log_levels_quiet_set_ones_kept),
		T(test_cephfs_setattr_size_outlives_the_gateway),
		T(test_cephfs_sync_confirm_fails_once_evicted),
		T(test_cephfs_session_named_once_per_process),
		T(test_cephfs_eviction_without_blocklist_is_found),
		T(test_cephfs_eviction_after_a_snapshot_is_found),
		T(test_cephfs_eviction_with_a_map_between_is_found),
		T(test_cephfs_fsstat_answers_last_while_the_mon_is_asked),
		T(test_cephfs_rlog_size_change_settles_a_dropped_object),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
