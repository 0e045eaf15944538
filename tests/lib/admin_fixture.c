// SPDX-License-Identifier: Apache-2.0
/*
 * admin_fixture: see admin_fixture.h.
 */
#include "tests/lib/admin_fixture.h"
#include "nfsd/alarm/alarm.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "nfsd/store/local/local.h"

static int64_t fixture_clock(void *arg)
{
	struct admin_fixture *fx = arg;

	return fx->now_s;
}

static int fixture_usage(void *arg, const char *volume, uint64_t *used)
{
	struct admin_fixture *fx = arg;

	(void)volume;
	if (!fx->used_set) {
		return -ENOENT;
	}
	*used = fx->used_bytes;
	return 0;
}

struct admin_fixture *admin_fixture_new(void)
{
	struct admin_fixture *fx = calloc(1, sizeof(*fx));
	static const char *const names[ADMIN_FIXTURE_EXPORTS] = { "ds1",
								  "ds2" };
	char err[300];

	assert_non_null(fx);
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/dsnfs-admin.XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	snprintf(fx->ledger_path, sizeof(fx->ledger_path), "%s/capacity.ledger",
		 fx->dir);
	fx->now_s = 1704067200; /* 2024-01-01 */
	assert_int_equal(pool_registry_new(fixture_clock, fx, &fx->reg), 0);
	assert_int_equal(pool_ledger_open(fx->ledger_path,
					  POOL_LEDGER_READ_WRITE, &fx->ledger,
					  NULL, err, sizeof(err)),
			 0);
	assert_int_equal(pool_registry_ledger_attach(fx->reg, fx->ledger, err,
						     sizeof(err)),
			 0);
	assert_int_equal(traffic_new(&(struct traffic_caps){ .scale = 1,
							     .burst_ms = 10 },
				     &fx->traffic),
			 0);
	for (size_t i = 0; i < ADMIN_FIXTURE_EXPORTS; i++) {
		struct export *e = &fx->exports[i];

		snprintf(e->name, sizeof(e->name), "%s", names[i]);
		snprintf(e->path, sizeof(e->path), "/%s", names[i]);
		snprintf(e->dir, sizeof(e->dir), "%s/%s", fx->dir, names[i]);
		assert_int_equal(mkdir(e->dir, 0700), 0);
		/* The storage-side operations reach it through its store. */
		assert_int_equal(store_local_open(e->name, e->dir,
						  (uint32_t)i + 1, fx->dir,
						  &e->store, err, sizeof(err)),
				 0);
	}
	fx->table.exports = fx->exports;
	fx->table.count = ADMIN_FIXTURE_EXPORTS;
	fx->api.ctx.pools = fx->reg;
	fx->api.ctx.traffic = fx->traffic;
	fx->api.ctx.exports = &fx->table;
	fx->api.ctx.usage = fixture_usage;
	fx->api.ctx.cb_arg = fx;
	fx->api.ctx.state_dir = fx->dir; /* admin_start() makes the token */
	admin_config_default(&fx->api.ctx.config);
	assert_int_equal(admin__alarms_new(&fx->api.ctx, &fx->api.alarms), 0);
	return fx;
}

static int fixture_rm(const char *path, const struct stat *st, int flag,
		      struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void admin_fixture_free(struct admin_fixture *fx)
{
	admin__reply_fini(&fx->reply);
	alarm_set_free(fx->api.alarms);
	traffic_free(fx->traffic);
	pool_registry_free(fx->reg);
	pool_ledger_close(fx->ledger);
	for (size_t i = 0; i < ADMIN_FIXTURE_EXPORTS; i++) {
		if (fx->exports[i].store) {
			fx->exports[i].store->ops->close(fx->exports[i].store);
		}
	}
	nftw(fx->dir, fixture_rm, 16, FTW_DEPTH | FTW_PHYS);
	free(fx);
}

unsigned admin_fixture_call(struct admin_fixture *fx, const char *method,
			    const char *url, const char *body, json_t **doc)
{
	struct admin_reply *r = &fx->reply;
	json_error_t e;
	json_t *parsed = NULL, *err;

	admin__reply_fini(r);
	admin__api_handle(&fx->api, method, url,
			  body ? "application/json" : NULL, body,
			  body ? strlen(body) : 0, r);
	fx->error[0] = '\0';
	if (r->len && r->content_type &&
	    !strcmp(r->content_type, "application/json")) {
		parsed = json_loadb(r->body, r->len, 0, &e);
		if (!parsed) {
			fail_msg("reply is not JSON: %s: %.*s", e.text,
				 (int)r->len, r->body);
		}
		err = json_object_get(parsed, "error");
		if (json_is_string(err)) {
			snprintf(fx->error, sizeof(fx->error), "%s",
				 json_string_value(err));
		}
	}
	if (doc) {
		*doc = parsed;
	} else {
		json_decref(parsed);
	}
	return r->status;
}

void admin_fixture_file(struct admin_fixture *fx, const char *path,
			uint64_t size, uint64_t allocated)
{
	char full[512], *slash;
	static const char block[4096];
	int fd;

	snprintf(full, sizeof(full), "%s/%s", fx->dir, path);
	slash = strrchr(full, '/');
	*slash = '\0';
	mkdir(full, 0700); /* a VM folder; it may exist */
	*slash = '/';
	fd = open(full, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	for (uint64_t done = 0; done < allocated; done += sizeof(block)) {
		assert_int_equal(write(fd, block, sizeof(block)),
				 (ssize_t)sizeof(block));
	}
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	close(fd);
}

struct pool_event *admin_fixture_events(struct admin_fixture *fx, size_t *n)
{
	struct pool_event *ev = NULL;

	assert_int_equal(pool_ledger_events(fx->ledger, &ev, n), 0);
	return ev;
}
