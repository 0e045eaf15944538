// SPDX-License-Identifier: Apache-2.0
/*
 * ops: the admin API's long operations (storage-side clones, Reserve
 * Space) and GET /operations.  The HTTP server has one thread, so an
 * operation that takes time runs on a thread of its own and the request
 * that started it is answered at once (202); short ones run on the HTTP
 * thread and are answered when done.  Either way it is listed with its
 * progress until ADMIN_OPS_KEPT later ones push it out.  Nothing here
 * touches an event loop: the NFS side sees the files appear as any
 * client's would.
 */
#include "nfsd/admin/admin_int.h"
#include "nfsd/admin/ops.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nfsd/base/base.h"
#include "nfsd/export/export.h"
#include "nfsd/quota/quota.h"

struct admin_op {
	struct admin_ops *ops; /* borrowed: its registry */
	uint64_t id;
	const char *kind, *mode; /* static */
	const struct export *export; /* borrowed */
	char source[ADMIN_OP_PATH_MAX];
	char target[ADMIN_OP_PATH_MAX];
	uint64_t quota_bytes;
	bool exclusive;
	admin_op_run_fn *run;
	uint64_t key;
	void *arg;
	void (*arg_free)(void *arg);
	_Atomic uint64_t done_bytes, total_bytes;
	_Atomic bool cancel;
	/* Under the registry's lock: */
	enum admin_op_state state;
	int err;
	char error[512];
	int64_t started_ms, finished_ms; /* UTC */
	bool threaded; /* thread to join */
	pthread_t thread;
};

struct admin_ops {
	pthread_mutex_t lock;
	pthread_cond_t ended; /* an operation ended (admin__op_run() waits) */
	struct admin_op *list[ADMIN_OPS_KEPT + ADMIN_OPS_RUNNING_MAX];
	size_t n; /* oldest first */
	uint64_t next_id;
};

static int64_t ops_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void admin__op_args(const struct admin_op *op, struct admin_op_args *out)
{
	out->export = op->export;
	out->source = op->source;
	out->target = op->target;
	out->mode = op->mode;
	out->arg = op->arg;
}

int admin__op_progress(struct admin_op *op, uint64_t done_bytes,
		       uint64_t total_bytes)
{
	atomic_store(&op->total_bytes, total_bytes);
	atomic_store(&op->done_bytes, done_bytes);
	return atomic_load(&op->cancel) ? -ECANCELED : 0;
}

int admin__ops_new(struct admin_ops **out)
{
	struct admin_ops *ops = calloc(1, sizeof(*ops));

	if (!ops) {
		return -ENOMEM;
	}
	pthread_mutex_init(&ops->lock, NULL);
	pthread_cond_init(&ops->ended, NULL);
	ops->next_id = 1;
	*out = ops;
	return 0;
}

void admin__ops_drain(struct admin_ops *ops)
{
	pthread_t threads[ARRAY_SIZE(ops->list)];
	size_t n = 0;

	/* A thread joined here is not joined again: it is marked. */
	pthread_mutex_lock(&ops->lock);
	for (size_t i = 0; i < ops->n; i++) {
		if (ops->list[i]->threaded) {
			threads[n++] = ops->list[i]->thread;
			ops->list[i]->threaded = false;
		}
	}
	pthread_mutex_unlock(&ops->lock);
	for (size_t i = 0; i < n; i++) {
		pthread_join(threads[i], NULL);
	}
}

void admin__ops_free(struct admin_ops *ops)
{
	if (!ops) {
		return;
	}
	pthread_mutex_lock(&ops->lock);
	for (size_t i = 0; i < ops->n; i++) {
		atomic_store(&ops->list[i]->cancel, true);
	}
	pthread_mutex_unlock(&ops->lock);
	/* A thread finishing takes the lock to record its result: join
	 * without it.  No new operation starts: the HTTP server is down. */
	for (size_t i = 0; i < ops->n; i++) {
		if (ops->list[i]->threaded) {
			pthread_join(ops->list[i]->thread, NULL);
		}
	}
	for (size_t i = 0; i < ops->n; i++) {
		free(ops->list[i]);
	}
	pthread_cond_destroy(&ops->ended);
	pthread_mutex_destroy(&ops->lock);
	free(ops);
}

unsigned admin__op_status_from_err(int err)
{
	switch (err) {
	case -EINVAL:
	case -EXDEV:
	case -ELOOP:
		return 400;
	case -ENOENT:
		return 404;
	case -EEXIST:
	case -EBUSY:
	case -EROFS:
		return 409;
	case -EOPNOTSUPP:
		return 422;
	case -ENOSPC:
	case -EDQUOT:
		return 507;
	default:
		return 500;
	}
}

static const char *ops_state_name(enum admin_op_state s)
{
	switch (s) {
	case ADMIN_OP_RUNNING:
		return "running";
	case ADMIN_OP_DONE:
		return "done";
	case ADMIN_OP_FAILED:
		return "failed";
	}
	return "?";
}

/* The JSON of @op (a new reference, or NULL).  Registry locked. */
static json_t *ops_json(const struct admin_op *op)
{
	uint64_t done = atomic_load(&op->done_bytes);
	uint64_t total = atomic_load(&op->total_bytes);
	json_t *o;

	if (op->state == ADMIN_OP_DONE && total) {
		done = total;
	}
	o = json_pack("{s:I, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:f, "
		      "s:I}",
		      "id", (json_int_t)op->id, "kind", op->kind, "mode",
		      op->mode, "volume", op->export->name, "source",
		      op->source, "target", op->target, "state",
		      ops_state_name(op->state), "done_bytes", (json_int_t)done,
		      "total_bytes", (json_int_t)total, "percent",
		      total ? 100.0 * (double)done / (double)total
			    : (op->state == ADMIN_OP_DONE ? 100.0 : 0.0),
		      "started_ms", (json_int_t)op->started_ms);
	if (!o) {
		return NULL;
	}
	if (op->state != ADMIN_OP_RUNNING) {
		json_object_set_new(o, "finished_ms",
				    json_integer(op->finished_ms));
		json_object_set_new(
			o, "seconds",
			json_real((double)(op->finished_ms - op->started_ms) /
				  1000.0));
	}
	if (op->state == ADMIN_OP_FAILED) {
		json_object_set_new(o, "error", json_string(op->error));
		json_object_set_new(
			o, "status",
			json_integer(admin__op_status_from_err(op->err)));
	}
	return o;
}

/* Runs @op and records how it ended. */
static void ops_run(struct admin_op *op)
{
	char err[sizeof(op->error)] = "";
	int rc = op->run(op, err, sizeof(err));
	struct admin_ops *ops = op->ops;

	if (op->arg_free) {
		op->arg_free(op->arg);
	}
	op->arg = NULL;

	if (op->quota_bytes && op->export->quota) {
		quota_release(op->export->quota, op->quota_bytes);
	}
	pthread_mutex_lock(&ops->lock);
	op->err = rc;
	op->state = rc ? ADMIN_OP_FAILED : ADMIN_OP_DONE;
	if (rc) {
		snprintf(op->error, sizeof(op->error), "%s",
			 err[0] ? err : strerror(-rc));
	}
	op->finished_ms = ops_now_ms();
	pthread_cond_broadcast(&ops->ended);
	pthread_mutex_unlock(&ops->lock);
}

static void *ops_thread(void *arg)
{
	ops_run(arg);
	return NULL;
}

static bool ops_same(const char *a, const char *b)
{
	return a[0] && b[0] && !strcmp(a, b);
}

/* -EBUSY with the reason when a running operation holds a path of @s.
 * Registry locked. */
static int ops_check_busy(const struct admin_ops *ops,
			  const struct admin_op_spec *s, char *errbuf,
			  size_t errlen)
{
	size_t running = 0;

	for (size_t i = 0; i < ops->n; i++) {
		const struct admin_op *o = ops->list[i];
		const char *hit = NULL;

		if (o->state != ADMIN_OP_RUNNING) {
			continue;
		}
		running++;
		if (o->export != s->export) {
			continue;
		}
		if (s->key && o->key == s->key) {
			snprintf(errbuf, errlen,
				 "%s: the target is in use by running "
				 "operation %llu (%s %s)",
				 s->export->name, (unsigned long long)o->id,
				 o->kind, o->mode);
			return -EBUSY;
		}
		if (o->exclusive || s->exclusive) {
			snprintf(errbuf, errlen,
				 "%s: running operation %llu (%s %s %.300s) "
				 "and this one cannot run at once",
				 s->export->name, (unsigned long long)o->id,
				 o->kind, o->mode, o->source);
			return -EBUSY;
		}
		if (ops_same(o->source, s->source) ||
		    ops_same(o->target, s->source)) {
			hit = s->source;
		} else if (ops_same(o->source, s->target) ||
			   ops_same(o->target, s->target)) {
			hit = s->target;
		}
		if (hit) {
			snprintf(errbuf, errlen,
				 "%s: %.300s is in use by running operation "
				 "%llu (%s %s %.300s%s%.300s)",
				 s->export->name, hit,
				 (unsigned long long)o->id, o->kind, o->mode,
				 o->source, o->target[0] ? " -> " : "",
				 o->target);
			return -EBUSY;
		}
	}
	if (running >= ADMIN_OPS_RUNNING_MAX) {
		snprintf(errbuf, errlen,
			 "%zu operations are running, the most at once; "
			 "wait for one (GET /operations)",
			 running);
		return -EBUSY;
	}
	return 0;
}

/* Makes room for one more: drops the oldest finished one.  Registry
 * locked; there is always one past the running ones. */
static void ops_make_room(struct admin_ops *ops)
{
	if (ops->n < ARRAY_SIZE(ops->list)) {
		return;
	}
	for (size_t i = 0; i < ops->n; i++) {
		struct admin_op *o = ops->list[i];

		if (o->state == ADMIN_OP_RUNNING) {
			continue;
		}
		if (o->threaded) {
			pthread_join(o->thread, NULL); /* it has ended */
		}
		free(o);
		memmove(&ops->list[i], &ops->list[i + 1],
			(ops->n - i - 1) * sizeof(ops->list[0]));
		ops->n--;
		return;
	}
}

/* ops_check_busy(), waiting while it says -EBUSY for an operation to
 * end, until @until (NULL: no wait).  Registry locked. */
static int ops_wait_room(struct admin_ops *ops, const struct admin_op_spec *s,
			 const struct timespec *until, char *errbuf,
			 size_t errlen)
{
	int err;

	while ((err = ops_check_busy(ops, s, errbuf, errlen)) == -EBUSY &&
	       until) {
		if (pthread_cond_timedwait(&ops->ended, &ops->lock, until) ==
		    ETIMEDOUT) {
			return ops_check_busy(ops, s, errbuf, errlen);
		}
	}
	return err;
}

/* admin__op_start(), its JSON only when @doc_wanted, its id in *id;
 * waits for room until @until (NULL: refuses at once). */
static int ops_start(struct admin_ops *ops, const struct admin_op_spec *spec,
		     bool background, bool doc_wanted, json_t **doc,
		     uint64_t *id, const struct timespec *until, char *errbuf,
		     size_t errlen)
{
	struct admin_op *op = calloc(1, sizeof(*op));
	int err;

	*doc = NULL;
	if (!op) {
		if (spec->arg_free) {
			spec->arg_free(spec->arg);
		}
		snprintf(errbuf, errlen, "out of memory");
		return -ENOMEM;
	}
	op->ops = ops;
	op->kind = spec->kind;
	op->mode = spec->mode;
	op->export = spec->export;
	snprintf(op->source, sizeof(op->source), "%s", spec->source);
	snprintf(op->target, sizeof(op->target), "%s", spec->target);
	op->quota_bytes = spec->quota_bytes;
	op->exclusive = spec->exclusive;
	op->run = spec->run;
	op->key = spec->key;
	op->arg = spec->arg;
	op->arg_free = spec->arg_free;
	atomic_init(&op->total_bytes, spec->total_bytes);
	op->started_ms = ops_now_ms();
	pthread_mutex_lock(&ops->lock);
	err = ops_wait_room(ops, spec, until, errbuf, errlen);
	if (err) {
		pthread_mutex_unlock(&ops->lock);
		if (op->arg_free) {
			op->arg_free(op->arg);
		}
		free(op);
		return err;
	}
	ops_make_room(ops);
	op->id = ops->next_id++;
	ops->list[ops->n++] = op;
	if (background) {
		err = -pthread_create(&op->thread, NULL, ops_thread, op);
		op->threaded = !err;
		if (err && op->quota_bytes && op->export->quota) {
			quota_release(op->export->quota, op->quota_bytes);
		}
		if (err && op->arg_free) {
			op->arg_free(op->arg);
			op->arg = NULL;
		}
		if (err) {
			op->state = ADMIN_OP_FAILED;
			op->err = err;
			snprintf(op->error, sizeof(op->error),
				 "cannot start a thread: %s", strerror(-err));
			snprintf(errbuf, errlen, "%s", op->error);
		}
		*doc = doc_wanted ? ops_json(op) : NULL;
		if (id) {
			*id = op->id;
		}
		pthread_mutex_unlock(&ops->lock);
		return err;
	}
	pthread_mutex_unlock(&ops->lock);
	ops_run(op);
	pthread_mutex_lock(&ops->lock);
	err = op->err;
	if (err) {
		snprintf(errbuf, errlen, "%s", op->error);
	}
	*doc = doc_wanted ? ops_json(op) : NULL;
	if (id) {
		*id = op->id;
	}
	pthread_mutex_unlock(&ops->lock);
	return err;
}

int admin__op_start(struct admin_ops *ops, const struct admin_op_spec *spec,
		    bool background, json_t **doc, char *errbuf, size_t errlen)
{
	return ops_start(ops, spec, background, true, doc, NULL, NULL, errbuf,
			 errlen);
}

int admin__op_start_bg(struct admin_ops *ops, const struct admin_op_spec *spec,
		       uint64_t *id, char *errbuf, size_t errlen)
{
	json_t *doc = NULL;

	return ops_start(ops, spec, true, false, &doc, id, NULL, errbuf,
			 errlen);
}

int admin__op_run(struct admin_ops *ops, const struct admin_op_spec *spec,
		  int wait_ms, char *errbuf, size_t errlen)
{
	struct timespec until;
	json_t *doc = NULL;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += wait_ms / 1000;
	until.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	return ops_start(ops, spec, false, false, &doc, NULL,
			 wait_ms > 0 ? &until : NULL, errbuf, errlen);
}

/* The newest operation of @exp with @key.  Registry locked. */
static struct admin_op *ops_by_key(struct admin_ops *ops,
				   const struct export *exp, uint64_t key)
{
	for (size_t i = ops->n; key && i > 0; i--) {
		struct admin_op *o = ops->list[i - 1];

		if (o->export == exp && o->key == key) {
			return o;
		}
	}
	return NULL;
}

int admin__op_find(struct admin_ops *ops, const struct export *exp,
		   uint64_t key, struct admin_op_view *out)
{
	struct admin_op *o;

	pthread_mutex_lock(&ops->lock);
	o = ops_by_key(ops, exp, key);
	if (o) {
		out->id = o->id;
		out->state = o->state;
		out->err = o->err;
		out->done_bytes = atomic_load(&o->done_bytes);
		out->total_bytes = atomic_load(&o->total_bytes);
		out->cancelled = atomic_load(&o->cancel);
		snprintf(out->error, sizeof(out->error), "%s", o->error);
	}
	pthread_mutex_unlock(&ops->lock);
	return o ? 0 : -ENOENT;
}

int admin__op_cancel(struct admin_ops *ops, const struct export *exp,
		     uint64_t key)
{
	struct admin_op *o;
	int err = -ENOENT;

	pthread_mutex_lock(&ops->lock);
	o = ops_by_key(ops, exp, key);
	if (o && o->state == ADMIN_OP_RUNNING) {
		atomic_store(&o->cancel, true);
		err = 0;
	} else if (o) {
		err = -EALREADY;
	}
	pthread_mutex_unlock(&ops->lock);
	return err;
}

void admin__operations_list(struct admin_api *api,
			    const struct admin_request *req,
			    struct admin_reply *reply)
{
	struct admin_ops *ops = api->ops;
	json_t *list = json_array();
	bool ok = list != NULL;

	(void)req;
	if (ops && ok) {
		pthread_mutex_lock(&ops->lock);
		for (size_t i = 0; ok && i < ops->n; i++) {
			ok = !json_array_append_new(list,
						    ops_json(ops->list[i]));
		}
		pthread_mutex_unlock(&ops->lock);
	}
	admin__reply_json(reply, 200,
			  ok ? json_pack("{s:o}", "operations", list) : NULL);
	if (!ok) {
		json_decref(list);
	}
}

void admin__operation_get(struct admin_api *api,
			  const struct admin_request *req,
			  struct admin_reply *reply)
{
	struct admin_ops *ops = api->ops;
	json_t *doc = NULL;
	uint64_t id = 0;
	char *end;

	id = strtoull(req->name, &end, 10);
	if (ops && *end == '\0') {
		pthread_mutex_lock(&ops->lock);
		for (size_t i = 0; i < ops->n && !doc; i++) {
			if (ops->list[i]->id == id) {
				doc = ops_json(ops->list[i]);
				if (!doc) {
					break;
				}
			}
		}
		pthread_mutex_unlock(&ops->lock);
	}
	if (!doc) {
		admin__reply_error(reply, 404,
				   "operation '%s' does not exist (or is "
				   "no longer kept)",
				   req->name);
		return;
	}
	admin__reply_json(reply, 200, doc);
}

void admin__op_reply(struct admin_reply *reply, int err, bool background,
		     json_t *doc, const char *errtext)
{
	json_t *id = doc ? json_object_get(doc, "id") : NULL;
	long long n = id ? (long long)json_integer_value(id) : 0;

	if (err) {
		json_t *e = json_pack("{s:s}", "error", errtext);

		if (e && doc) {
			json_object_set_new(e, "operation", doc);
		} else {
			json_decref(doc);
		}
		admin__reply_json(reply, admin__op_status_from_err(err), e);
		return;
	}
	admin__reply_json(reply, background ? 202 : 201, doc);
	if (n) {
		snprintf(reply->location, sizeof(reply->location),
			 "/operations/%lld", n);
	}
}
