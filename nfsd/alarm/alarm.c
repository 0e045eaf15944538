// SPDX-License-Identifier: Apache-2.0
/*
 * alarm: the thin-provisioning alarms of every datastore.  A thread scans
 * the datastores' directories (dirscan.c) every interval_s ([admin]
 * alarm_interval_s); each
 * evaluation compares, per datastore with a quota,
 *
 *   usage          = used bytes / quota            (usage_alarm_percent)
 *   overallocation = provisioned bytes / quota (overallocation_alarm_percent)
 *
 * with their thresholds.  Provisioned bytes are the logical sizes of the
 * datastore's flat extents, thin or thick (a thick disk is fully allocated,
 * so this is what vSphere calls provisioned space); with thin disks it
 * passes 100% long before the datastore fills.  An alarm is logged once as
 * it is raised (warn) and once as it clears (info).
 */
#include "nfsd/alarm/alarm.h"

#include <errno.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nfsd/base/log.h"

/* The log lines keep their "admin:" prefix: operators and t9001 look for
 * them under it, as before the alarms had a folder of their own. */
#define ALARMS_GIB (1024.0 * 1024 * 1024)

struct alarm_set {
	struct alarm_source src; /* its pointers borrowed */
	pthread_mutex_t lock; /* views, snap, stopping */
	pthread_cond_t wake;
	pthread_t thread;
	bool started;
	bool stopping;
	size_t n;
	struct alarm_view *views; /* one per export, in its order */
	struct pool_state *snap; /* scratch for evaluations */
};

const char *alarm_kind_name(enum alarm_kind kind)
{
	return kind == ALARM_USAGE ? "usage" : "overallocation";
}

int alarm_set_new(const struct alarm_source *src, struct alarm_set **out)
{
	struct alarm_set *al = calloc(1, sizeof(*al));
	pthread_condattr_t attr;
	size_t n = src->exports ? export_table_count(src->exports) : 0;

	if (!al) {
		return -ENOMEM;
	}
	al->src = *src;
	al->n = n;
	al->views = calloc(n ? n : 1, sizeof(*al->views));
	al->snap = malloc(sizeof(*al->snap));
	if (!al->views || !al->snap) {
		free(al->views);
		free(al->snap);
		free(al);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		snprintf(al->views[i].volume, sizeof(al->views[i].volume), "%s",
			 src->exports->exports[i].name);
	}
	pthread_mutex_init(&al->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&al->wake, &attr);
	pthread_condattr_destroy(&attr);
	*out = al;
	return 0;
}

static bool alarms_stopping(struct alarm_set *al)
{
	bool stop;

	pthread_mutex_lock(&al->lock);
	stop = al->stopping;
	pthread_mutex_unlock(&al->lock);
	return stop;
}

void alarm_set_scan(struct alarm_set *al)
{
	struct alarm_view *copy = NULL;
	struct alarm_scan scan;
	size_t n = 0;

	for (size_t i = 0; i < al->n && !alarms_stopping(al); i++) {
		const struct export *exp = &al->src.exports->exports[i];
		int err = 0;

		/* A cephfs datastore has no directory here to scan for
		 * extents: its alarms see no provisioned disks. */
		memset(&scan, 0, sizeof(scan));
		if (!exp->remote_store) {
			err = alarm_scan_dir(exp->dir, &scan);
		}

		pthread_mutex_lock(&al->lock);
		if (err && al->views[i].scan_err != err) {
			log_warn("admin: datastore %s: cannot scan %s: %s",
				 exp->name, exp->dir, strerror(-err));
		}
		al->views[i].scan_err = err;
		if (!err) {
			al->views[i].scan = scan;
			al->views[i].scanned = true;
			al->views[i].scan_time_s = (int64_t)time(NULL);
		}
		pthread_mutex_unlock(&al->lock);
	}
	if (!alarm_set_evaluate(al, &copy, &n)) {
		free(copy);
	}
}

static uint32_t alarms_threshold(const struct alarm_set *al,
				 enum alarm_kind kind)
{
	return kind == ALARM_USAGE ? al->src.usage_percent
				   : al->src.overallocation_percent;
}

/* Logs a crossing of alarm @kind of @v, which is now v->raised[kind]. */
static void alarms_log(const struct alarm_set *al, const struct alarm_view *v,
		       enum alarm_kind kind)
{
	const char *what = alarm_kind_name(kind);
	uint32_t threshold = alarms_threshold(al, kind);

	if (v->raised[kind]) {
		log_warn("admin: datastore %s: %s %.1f%% of its %.1f GiB "
			 "quota crossed the %u%% alarm threshold",
			 v->volume, what, v->percent[kind],
			 (double)v->quota_bytes / ALARMS_GIB, threshold);
	} else if (v->valid[kind]) {
		log_info("admin: datastore %s: %s alarm cleared: %.1f%%, "
			 "below %u%%",
			 v->volume, what, v->percent[kind], threshold);
	} else {
		log_info("admin: datastore %s: %s alarm cleared: no quota",
			 v->volume, what);
	}
}

/* Recomputes @v from its last scan, @snap's quota and the usage. */
static void alarms_evaluate_one(struct alarm_set *al, struct alarm_view *v)
{
	const struct alarm_source *src = &al->src;
	struct pool_volume *pv = pool_state_find_volume(al->snap, v->volume);
	uint64_t used = 0;

	v->quota_bytes = pv ? pv->quota_bytes : 0;
	v->used_known = false;
	if (src->usage && src->usage(src->usage_arg, v->volume, &used) == 0) {
		v->used_known = true;
		v->used_bytes = used;
	} else if (v->scanned) {
		v->used_known = true;
		v->used_bytes = v->scan.allocated_bytes;
	}
	v->valid[ALARM_USAGE] = v->quota_bytes && v->used_known;
	v->valid[ALARM_OVERALLOCATION] = v->quota_bytes && v->scanned;
	for (int k = 0; k < ALARM_COUNT; k++) {
		uint64_t num = k == ALARM_USAGE ? v->used_bytes
						: v->scan.provisioned_bytes;
		bool raised;

		v->percent[k] = v->valid[k] ? (double)num * 100.0 /
						      (double)v->quota_bytes
					    : 0;
		raised = v->valid[k] &&
			 v->percent[k] >= (double)alarms_threshold(
						  al, (enum alarm_kind)k);
		if (raised == v->raised[k]) {
			continue;
		}
		v->raised[k] = raised;
		alarms_log(al, v, (enum alarm_kind)k);
	}
}

int alarm_set_evaluate(struct alarm_set *al, struct alarm_view **out, size_t *n)
{
	struct alarm_view *copy;

	copy = calloc(al->n ? al->n : 1, sizeof(*copy));
	if (!copy) {
		return -ENOMEM;
	}
	pthread_mutex_lock(&al->lock);
	pool_registry_snapshot(al->src.pools, al->snap);
	for (size_t i = 0; i < al->n; i++) {
		alarms_evaluate_one(al, &al->views[i]);
	}
	memcpy(copy, al->views, al->n * sizeof(*copy));
	pthread_mutex_unlock(&al->lock);
	*out = copy;
	*n = al->n;
	return 0;
}

static void *alarms_main(void *arg)
{
	struct alarm_set *al = arg;
	struct timespec deadline;
	bool stop = false;

	while (!stop) {
		alarm_set_scan(al);
		clock_gettime(CLOCK_MONOTONIC, &deadline);
		deadline.tv_sec += al->src.interval_s;
		pthread_mutex_lock(&al->lock);
		while (!al->stopping &&
		       pthread_cond_timedwait(&al->wake, &al->lock,
					      &deadline) != ETIMEDOUT)
			;
		stop = al->stopping;
		pthread_mutex_unlock(&al->lock);
	}
	return NULL;
}

int alarm_set_start(struct alarm_set *al)
{
	int err = pthread_create(&al->thread, NULL, alarms_main, al);

	if (err) {
		return -err;
	}
	pthread_setname_np(al->thread, "dsnfs-alarms");
	al->started = true;
	return 0;
}

void alarm_set_free(struct alarm_set *al)
{
	if (!al) {
		return;
	}
	if (al->started) {
		pthread_mutex_lock(&al->lock);
		al->stopping = true;
		pthread_cond_signal(&al->wake);
		pthread_mutex_unlock(&al->lock);
		pthread_join(al->thread, NULL);
	}
	pthread_cond_destroy(&al->wake);
	pthread_mutex_destroy(&al->lock);
	free(al->snap);
	free(al->views);
	free(al);
}
