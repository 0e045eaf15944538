// SPDX-License-Identifier: Apache-2.0
/*
 * snap_policy: the engine of the snapshot policies (snap_policy.h): its
 * clock, its thread, one look at every datastore's policy, and a due
 * snapshot taken and its kind's oldest deleted, each a log line and a
 * count; what cannot run raises the datastore's policy alarm.
 */
#include "nfsd/admin/snap_policy.h"
#include "nfsd/admin/paths.h"
#include "nfsd/admin/view.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nfsd/base/log.h"
#include "nfsd/export/export.h"
#include "nfsd/store/store_tree.h"

#define POLICY_TICK_MS 1000
#define POLICY_TEST_TICK_MS 200
#define POLICY_CLOCK_ENV "DSNFSD_TEST_POLICY_CLOCK"

struct admin_policy_vol *admin__policy_vol(struct admin_policies *p,
					   const char *volume, bool add)
{
	struct admin_policy_vol *v;

	for (size_t i = 0; i < p->n; i++) {
		if (!strcmp(p->vols[i].volume, volume)) {
			return &p->vols[i];
		}
	}
	if (!add || p->n == ADMIN_POLICY_VOLS_MAX ||
	    strlen(volume) >= sizeof(p->vols[0].volume)) {
		return NULL;
	}
	v = &p->vols[p->n++];
	memset(v, 0, sizeof(*v));
	snprintf(v->volume, sizeof(v->volume), "%s", volume);
	return v;
}

/* The policy clock (UTC seconds): the real one, or the test one. */
static int64_t policy_now(struct admin_policies *p)
{
	struct timespec ts;
	double elapsed;

	if (!p->clock_test) {
		return (int64_t)time(NULL);
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	elapsed = (double)(ts.tv_sec - p->mono0.tv_sec) +
		  (double)(ts.tv_nsec - p->mono0.tv_nsec) / 1e9;
	return p->clock_base_s + (int64_t)(elapsed * p->clock_scale);
}

/* DSNFSD_TEST_POLICY_CLOCK=START_S[:SCALE]. */
static int policy_clock_setup(struct admin_policies *p, char *errbuf,
			      size_t errlen)
{
	const char *env = getenv(POLICY_CLOCK_ENV);
	char *end;
	long long base;
	double scale = 1;

	p->tick_ms = POLICY_TICK_MS;
	if (!env || !*env) {
		return 0;
	}
	base = strtoll(env, &end, 10);
	if (*end == ':') {
		scale = strtod(end + 1, &end);
	}
	if (*end || base < 0 || !(scale >= 1 && scale <= 1e6)) {
		snprintf(errbuf, errlen,
			 "%s=%s: START_S[:SCALE] is needed (SCALE 1..1e6)",
			 POLICY_CLOCK_ENV, env);
		return -EINVAL;
	}
	p->clock_test = true;
	p->clock_base_s = base;
	p->clock_scale = scale;
	p->tick_ms = POLICY_TEST_TICK_MS;
	clock_gettime(CLOCK_MONOTONIC, &p->mono0);
	log_warn("snapshot-policy: test clock from %lld, %g times the real "
		 "one (%s: for tests only)",
		 base, scale, POLICY_CLOCK_ENV);
	return 0;
}

/* ---- one snapshot of a policy ------------------------------------------ */

/* A due snapshot: copied out of the table, run without its lock. */
struct policy_job {
	char volume[64];
	enum snap_policy_kind kind;
	int64_t slot;
	unsigned keep;
};

enum policy_outcome {
	POLICY_DONE = 0,
	POLICY_FAILED, /* the alarm says why */
	POLICY_BUSY, /* another operation of the datastore: next look */
};

/* What a job did, counted under the lock afterwards. */
struct policy_result {
	enum policy_outcome outcome;
	unsigned made, deleted;
	char why[320];
};

static void policy_record_path(const struct admin_policies *p,
			       const char *volume, char *buf, size_t len)
{
	snprintf(buf, len, "%.3900s/snapshot-policy-%.63s.record", p->state_dir,
		 volume);
}

/* The policy snapshots of @kind that exist (in @list and @rec), oldest
 * first, into @names (owned) with *n. */
static int policy_kind_names(const struct snap_entry *list, size_t nlist,
			     const struct snap_policy_record *rec,
			     enum snap_policy_kind kind, char (**names)[64],
			     size_t *n)
{
	char(*out)[64] = calloc(nlist ? nlist : 1, sizeof(*out));
	int64_t *slots = calloc(nlist ? nlist : 1, sizeof(*slots));
	size_t k = 0;

	if (!out || !slots) {
		free(out);
		free(slots);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nlist; i++) {
		enum snap_policy_kind kk;
		int64_t slot;
		size_t j;

		if (!snap_policy_record_has(rec, list[i].name) ||
		    snap_policy_name_parse(list[i].name, &kk, &slot) ||
		    kk != kind) {
			continue;
		}
		/* Insertion by slot: a few hundred at most. */
		for (j = k; j > 0 && slots[j - 1] > slot; j--) {
			slots[j] = slots[j - 1];
			memcpy(out[j], out[j - 1], sizeof(out[0]));
		}
		slots[j] = slot;
		snprintf(out[j], sizeof(out[0]), "%s", list[i].name);
		k++;
	}
	free(slots);
	*names = out;
	*n = k;
	return 0;
}

/* Leaves out of @names (@n) the snapshots a volume made from them holds
 * (volclone.c): retention neither counts nor deletes them.  Returns the
 * count left. */
static size_t policy_unpinned(struct admin_policies *p, const char *volume,
			      char (*names)[64], size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		char err[400];

		if (admin__snapshot_pinned(p->api, volume, names[i], err,
					   sizeof(err)) == -EBUSY) {
			continue;
		}
		if (k != i) {
			memcpy(names[k], names[i], sizeof(names[0]));
		}
		k++;
	}
	return k;
}

/* Deletes @name, a policy snapshot, and takes it out of @rec. */
static int policy_delete(struct admin_policies *p, const struct export *exp,
			 const struct policy_job *j, const char *name,
			 struct snap_policy_record *rec, const char *recpath,
			 struct policy_result *res)
{
	char err[300];
	int rc;

	rc = admin__snapshot_sync(p->api, exp, "delete", name, err,
				  sizeof(err));
	if (rc && rc != -ENOENT) {
		snprintf(res->why, sizeof(res->why),
			 "deleting %.63s past the keep of %u: %.200s", name,
			 j->keep, err);
		return rc;
	}
	snap_policy_record_del(rec, name);
	(void)snap_policy_record_save(recpath, rec, err, sizeof(err));
	res->deleted++;
	log_info("snapshot-policy: %s: %s: deleted %s (keep %u)", j->volume,
		 snap_policy_kind_name(j->kind), name, j->keep);
	return 0;
}

/* The snapshot ops of @exp's store, or NULL with the reason in @res. */
static const struct store_snap_ops *policy_ops(const struct export *exp,
					       struct policy_result *res)
{
	struct store *st = NULL;

	if (!exp) {
		snprintf(res->why, sizeof(res->why),
			 "no datastore of that name");
	} else if (!(st = admin__store_live(exp, res->why, sizeof(res->why)))) {
		/* the reason is in res->why */
	} else if (!store_snap(st)) {
		snprintf(res->why, sizeof(res->why),
			 "its backend has no native snapshots");
	} else {
		return store_snap(st);
	}
	return NULL;
}

/* The snapshots of the plan's kind before and after: @list of the
 * datastore, the record, the plan.  Fills @res; returns 0 or -errno. */
static int policy_run(struct admin_policies *p, const struct policy_job *j,
		      struct policy_result *res)
{
	const struct export *exp = admin__export_find(p->api, j->volume);
	const struct store_snap_ops *so = policy_ops(exp, res);
	struct snap_policy_record rec = { 0 };
	struct snap_entry *list = NULL;
	char(*kind)[64] = NULL;
	struct snap_policy_plan plan;
	char name[64], recpath[PATH_MAX], err[300];
	size_t nlist = 0, nkind = 0, gone = 0;
	int rc;

	if (!so) {
		res->outcome = POLICY_FAILED;
		return -EAGAIN;
	}
	snap_policy_name(j->kind, j->slot, name, sizeof(name));
	policy_record_path(p, j->volume, recpath, sizeof(recpath));
	rc = so->check(export_store(exp), name, false, err, sizeof(err));
	if (!rc) {
		rc = so->list(export_store(exp), &list, &nlist);
		if (rc) {
			snprintf(err, sizeof(err), "listing: %s",
				 strerror(-rc));
		}
	}
	if (!rc) {
		rc = snap_policy_record_load(recpath, &rec, err, sizeof(err));
	}
	if (!rc) {
		rc = policy_kind_names(list, nlist, &rec, j->kind, &kind,
				       &nkind);
	}
	if (rc) {
		snprintf(res->why, sizeof(res->why), "%.63s: %.240s", name,
			 err);
		goto out;
	}
	nkind = policy_unpinned(p, j->volume, kind, nkind);
	snap_policy_plan(nlist, nkind, j->keep, &plan);
	if (plan.refused) {
		snprintf(res->why, sizeof(res->why),
			 "%s refused: the datastore holds %zu snapshots, %zu "
			 "of them by hand or of other kinds, and may hold %d",
			 name, nlist, nlist - nkind, SNAP_POLICY_MAX_SNAPSHOTS);
		rc = -ENOSPC;
		goto out;
	}
	for (; !rc && gone < plan.del_before; gone++) {
		rc = policy_delete(p, exp, j, kind[gone], &rec, recpath, res);
	}
	if (rc) {
		goto out;
	}
	rc = admin__snapshot_sync(p->api, exp, "create", name, err,
				  sizeof(err));
	if (rc) {
		res->outcome = rc == -EBUSY ? POLICY_BUSY : POLICY_FAILED;
		snprintf(res->why, sizeof(res->why), "%.63s: %.240s", name,
			 err);
		goto out;
	}
	res->made++;
	rc = snap_policy_record_add(&rec, name);
	if (!rc) {
		rc = snap_policy_record_save(recpath, &rec, err, sizeof(err));
	}
	log_info("snapshot-policy: %s: %s: made %s", j->volume,
		 snap_policy_kind_name(j->kind), name);
	if (rc) {
		/* Made, but not recorded: retention will never take it. */
		snprintf(res->why, sizeof(res->why),
			 "%.63s made but not recorded as the policy's: %.200s",
			 name, rc == -ENOMEM ? strerror(-rc) : err);
		goto out;
	}
	for (size_t i = 0; !rc && i < plan.del_after; i++, gone++) {
		rc = policy_delete(p, exp, j, kind[gone], &rec, recpath, res);
	}
out:
	if (rc && res->outcome == POLICY_DONE) {
		res->outcome = rc == -EBUSY ? POLICY_BUSY : POLICY_FAILED;
	}
	free(kind);
	free(list);
	snap_policy_record_free(&rec);
	return rc;
}

/* Counts @res into @v and raises or clears its alarm.  Under the lock. */
static void policy_account(struct admin_policy_vol *v,
			   const struct policy_job *j,
			   const struct policy_result *res, int64_t now)
{
	v->made[j->kind] += res->made;
	v->deleted[j->kind] += res->deleted;
	if (res->outcome == POLICY_DONE) {
		v->last_ok_s = now;
		if (v->alarm[0]) {
			log_info("snapshot-policy: %s: alarm cleared (was: %s)",
				 v->volume, v->alarm);
			v->alarm[0] = '\0';
		}
		return;
	}
	if (res->outcome == POLICY_BUSY) {
		log_info("snapshot-policy: %s: %s: %s; tried again at the "
			 "next look",
			 j->volume, snap_policy_kind_name(j->kind), res->why);
		return;
	}
	v->failed[j->kind]++;
	log_warn("snapshot-policy: %s: %s: failed: %s", j->volume,
		 snap_policy_kind_name(j->kind), res->why);
	if (strcmp(v->alarm, res->why)) {
		log_warn("snapshot-policy: %s: alarm raised: the policy cannot "
			 "run: %s",
			 v->volume, res->why);
		snprintf(v->alarm, sizeof(v->alarm), "%s: %.300s",
			 snap_policy_kind_name(j->kind), res->why);
	}
}

void admin__policies_tick(struct admin_policies *p, int64_t now)
{
	struct policy_job jobs[SNAP_POLICY_KINDS * 4];
	size_t njobs, next = 0;

	/* One pass over the table, a few jobs at a time, so that the lock
	 * is never held across a snapshot. */
	do {
		njobs = 0;
		pthread_mutex_lock(&p->lock);
		for (; next < p->n && njobs + SNAP_POLICY_KINDS <=
					      sizeof(jobs) / sizeof(jobs[0]);
		     next++) {
			struct admin_policy_vol *v = &p->vols[next];
			const struct snap_policy *pol = admin__policy_of(v);
			int64_t slots[SNAP_POLICY_KINDS];
			unsigned due;

			if (!snap_policy_any(pol)) {
				continue;
			}
			due = snap_policy_due(pol, &v->st, now, slots);
			for (int k = 0; k < SNAP_POLICY_KINDS; k++) {
				if (due & (1u << k)) {
					struct policy_job *j = &jobs[njobs++];

					memcpy(j->volume, v->volume,
					       sizeof(j->volume));
					j->kind = (enum snap_policy_kind)k;
					j->slot = slots[k];
					j->keep = pol->k[k].keep;
				}
			}
		}
		pthread_mutex_unlock(&p->lock);
		for (size_t i = 0; i < njobs; i++) {
			struct policy_result res = { 0 };
			struct admin_policy_vol *v;

			(void)policy_run(p, &jobs[i], &res);
			pthread_mutex_lock(&p->lock);
			v = admin__policy_vol(p, jobs[i].volume, false);
			if (v) {
				policy_account(v, &jobs[i], &res, now);
				if (res.outcome != POLICY_BUSY) {
					snap_policy_done(&v->st, jobs[i].kind,
							 jobs[i].slot);
				}
			}
			pthread_mutex_unlock(&p->lock);
		}
	} while (njobs);
}

static void *policy_thread(void *arg)
{
	struct admin_policies *p = arg;

	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		struct timespec ts;

		pthread_mutex_unlock(&p->lock);
		admin__policies_tick(p, policy_now(p));
		pthread_mutex_lock(&p->lock);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += (long)p->tick_ms * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		if (!p->stop) {
			(void)pthread_cond_timedwait(&p->wake, &p->lock, &ts);
		}
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int admin__policies_new(struct admin_api *api, const char *state_dir,
			struct admin_policies **out, char *errbuf,
			size_t errlen)
{
	struct admin_policies *p = calloc(1, sizeof(*p));
	int err;

	if (!p) {
		return -ENOMEM;
	}
	p->api = api;
	snprintf(p->state_dir, sizeof(p->state_dir), "%s",
		 state_dir ? state_dir : ".");
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->wake, NULL);
	err = policy_clock_setup(p, errbuf, errlen);
	if (err) {
		admin__policies_free(p);
		return err;
	}
	*out = p;
	return 0;
}

int admin__policies_start(struct admin_policies *p)
{
	int err = pthread_create(&p->thread, NULL, policy_thread, p);

	if (err) {
		return -err;
	}
	p->started = true;
	return 0;
}

void admin__policies_stop(struct admin_policies *p)
{
	if (!p || !p->started) {
		return;
	}
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	p->started = false;
}

void admin__policies_free(struct admin_policies *p)
{
	if (!p) {
		return;
	}
	admin__policies_stop(p);
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

/* Whether two policies differ (a changed one starts afresh). */
static bool policy_differs(const struct snap_policy *a,
			   const struct snap_policy *b)
{
	return memcmp(a, b, sizeof(*a)) != 0;
}

int admin__policies_configure(struct admin_policies *p,
			      const struct admin_policy_config *cfg, size_t n)
{
	int err = 0;

	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < p->n; i++) {
		p->vols[i].in_config = false;
	}
	for (size_t i = 0; i < n; i++) {
		struct admin_policy_vol *v;
		struct snap_policy old;

		if (!snap_policy_any(&cfg[i].policy) &&
		    !admin__policy_vol(p, cfg[i].volume, false)) {
			continue;
		}
		v = admin__policy_vol(p, cfg[i].volume, true);
		if (!v) {
			err = -ENOSPC;
			continue;
		}
		old = *admin__policy_of(v);
		v->in_config = true;
		v->cfg = cfg[i].policy;
		if (policy_differs(&old, admin__policy_of(v))) {
			memset(&v->st, 0, sizeof(v->st));
		}
	}
	/* A datastore the config no longer names has no config policy. */
	for (size_t i = 0; i < p->n; i++) {
		struct admin_policy_vol *v = &p->vols[i];

		if (!v->in_config && snap_policy_any(&v->cfg)) {
			memset(&v->cfg, 0, sizeof(v->cfg));
			if (!v->has_api) {
				memset(&v->st, 0, sizeof(v->st));
			}
		}
	}
	pthread_mutex_unlock(&p->lock);
	return err;
}

/* ---- /metrics ------------------------------------------------------------ */

static void policy_family(struct admin_buf *out, const char *name,
			  const char *type, const char *help)
{
	admin__buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name,
			  type);
}

static void policy_counter(struct admin_policies *p, struct admin_buf *out,
			   const char *name, const char *help, size_t field)
{
	policy_family(out, name, "counter", help);
	for (size_t i = 0; i < p->n; i++) {
		const struct admin_policy_vol *v = &p->vols[i];
		const uint64_t *c = (const uint64_t *)((const char *)v + field);

		for (int k = 0; k < SNAP_POLICY_KINDS; k++) {
			admin__buf_printf(out, "%s{volume=\"", name);
			admin__metrics_label_escape(out, v->volume);
			admin__buf_printf(
				out, "\",kind=\"%s\"} %" PRIu64 "\n",
				snap_policy_kind_name((enum snap_policy_kind)k),
				c[k]);
		}
	}
}

void admin__policies_metrics(struct admin_policies *p, struct admin_buf *out)
{
	if (!p) {
		return;
	}
	pthread_mutex_lock(&p->lock);
	if (!p->n) {
		pthread_mutex_unlock(&p->lock);
		return;
	}
	policy_counter(p, out, "dsnfs_snapshot_policy_made_total",
		       "Snapshots made by the datastore's snapshot policy",
		       offsetof(struct admin_policy_vol, made));
	policy_counter(p, out, "dsnfs_snapshot_policy_deleted_total",
		       "Policy snapshots deleted past their kind's keep",
		       offsetof(struct admin_policy_vol, deleted));
	policy_counter(p, out, "dsnfs_snapshot_policy_failed_total",
		       "Policy snapshots that could not be made or deleted",
		       offsetof(struct admin_policy_vol, failed));
	policy_family(out, "dsnfs_snapshot_policy_last_success_seconds",
		      "gauge",
		      "UTC time of the policy's last good snapshot (0: never)");
	for (size_t i = 0; i < p->n; i++) {
		admin__buf_puts(out,
				"dsnfs_snapshot_policy_last_success_seconds"
				"{volume=\"");
		admin__metrics_label_escape(out, p->vols[i].volume);
		admin__buf_printf(out, "\"} %" PRId64 "\n",
				  p->vols[i].last_ok_s);
	}
	policy_family(out, "dsnfs_snapshot_policy_alarm", "gauge",
		      "The snapshot policy cannot run (1) or runs (0)");
	for (size_t i = 0; i < p->n; i++) {
		admin__buf_puts(out, "dsnfs_snapshot_policy_alarm{volume=\"");
		admin__metrics_label_escape(out, p->vols[i].volume);
		admin__buf_printf(out, "\"} %d\n", p->vols[i].alarm[0] != 0);
	}
	pthread_mutex_unlock(&p->lock);
}
