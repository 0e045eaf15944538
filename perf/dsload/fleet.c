// SPDX-License-Identifier: Apache-2.0
/*
 * fleet: builds the emulated fleet, runs its phases on one thread per
 * event loop and gathers what they measured (see fleet.h).  The caller's
 * thread only waits and prints the progress line; a loop is touched by
 * one thread at a time (its phase thread, or the caller's between
 * phases, after pthread_join()).
 */
#include "perf/dsload/fleet.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nfsd/base/base.h"
#include "perf/dsload/clock.h"
#include "perf/dsload/fleet_int.h"
#include "perf/dsload/progress.h"
#include "perf/dsload/verify.h"

#define FLEET_POLL_NS (100 * DSLOAD_NS_PER_MS)

struct fleet {
	struct fleet_spec spec;
	struct place_shape shape;
	struct dloop *loops;
	unsigned nloops;
	struct host *hosts;
	struct job *jobs;
	size_t njobs;
	int verify; /* -1: no phase yet; else whether phases verify */
	uint64_t verf_changes;
	/* the phase being run */
	const struct workload *w;
	pthread_barrier_t barrier;
	int64_t t0_ns; /* the phase's start, for every loop */
	_Atomic unsigned running;
};

void fleet_spec_default(struct fleet_spec *spec)
{
	memset(spec, 0, sizeof(*spec));
	snprintf(spec->server, sizeof(spec->server), "127.0.0.1");
	spec->portmap_port = 111;
	spec->hosts = spec->vms = spec->vmdks = 1;
	spec->ndatastores = 1;
	snprintf(spec->datastores[0], sizeof(spec->datastores[0]), "ds1");
	spec->policy = PLACE_SPREAD;
	spec->nconnect = 1;
	spec->threads = 1;
	spec->vmdk_bytes = 256ull << 20;
	spec->timeout_ms = 5000;
	spec->call_timeout_ms = 30000;
	spec->reconnect_ms = 60000;
	esxi_conf_default(&spec->esxi);
	spec->progress = true;
}

void workload_default(struct workload *w)
{
	memset(w, 0, sizeof(*w));
	w->bs_bytes = 8192;
	w->read_pct = 50;
	w->random_pct = 100;
	w->iodepth = 16;
	w->ramp_s = 1.0;
	w->run_s = 5.0;
	w->stable = FILE_SYNC;
	w->commit_every = 64;
	w->seed = 1;
	workload_name_set(w);
}

void workload_name_set(struct workload *w)
{
	const char *pattern = w->random_pct == 100 ? "rand"
			      : w->random_pct == 0 ? "seq"
						   : "mix";
	char size[16];

	if (w->bs_bytes % (1024 * 1024) == 0) {
		snprintf(size, sizeof(size), "%um", w->bs_bytes >> 20);
	} else if (w->bs_bytes % 1024 == 0) {
		snprintf(size, sizeof(size), "%uk", w->bs_bytes >> 10);
	} else {
		snprintf(size, sizeof(size), "%ub", w->bs_bytes);
	}
	if (w->read_pct == 100) {
		snprintf(w->name, sizeof(w->name), "%s-%sread", size, pattern);
	} else if (w->read_pct == 0) {
		snprintf(w->name, sizeof(w->name), "%s-%swrite", size, pattern);
	} else {
		snprintf(w->name, sizeof(w->name), "%s-%s-r%u", size, pattern,
			 w->read_pct);
	}
}

uint64_t fleet_verf_changes(const struct fleet *f)
{
	return f->verf_changes;
}

/* ---- building ---------------------------------------------------------- */

static int fleet_layout(struct fleet *f)
{
	const struct fleet_spec *s = &f->spec;
	size_t per_loop_hosts = s->hosts / f->nloops + 1;
	size_t per_loop_jobs = per_loop_hosts * s->vms * s->vmdks;
	size_t i = 0;

	f->hosts = calloc(s->hosts, sizeof(*f->hosts));
	f->njobs = (size_t)s->hosts * s->vms * s->vmdks;
	f->jobs = calloc(f->njobs, sizeof(*f->jobs));
	if (!f->hosts || !f->jobs) {
		return -ENOMEM;
	}
	for (unsigned l = 0; l < f->nloops; l++) {
		struct dloop *lp = &f->loops[l];

		lp->fleet = f;
		lp->hosts = calloc(per_loop_hosts, sizeof(*lp->hosts));
		lp->jobs = calloc(per_loop_jobs, sizeof(*lp->jobs));
		lp->loop = ev_loop_new(EVFLAG_AUTO);
		if (!lp->hosts || !lp->jobs || !lp->loop) {
			return -ENOMEM;
		}
	}
	for (unsigned h = 0; h < s->hosts; h++) {
		struct host *host = &f->hosts[h];

		host->idx = h;
		host->spec = &f->spec;
		host->lp = &f->loops[h % f->nloops];
		host->lp->hosts[host->lp->nhosts++] = host;
		host->jobs =
			calloc((size_t)s->vms * s->vmdks, sizeof(*host->jobs));
		host->vms = calloc(s->vms, sizeof(*host->vms));
		if (!host->jobs || !host->vms) {
			return -ENOMEM;
		}
		for (unsigned v = 0; v < s->vms; v++) {
			struct dvm *vm = &host->vms[v];

			vm->host = host;
			vm->jobs = calloc(s->vmdks, sizeof(*vm->jobs));
			if (!vm->jobs) {
				return -ENOMEM;
			}
			for (unsigned k = 0; k < s->vmdks; k++, i++) {
				struct job *j = &f->jobs[i];
				unsigned g = h * s->vms + v;

				j->idx = i;
				j->host = host;
				j->vm = vm;
				vm->jobs[vm->njobs++] = j;
				j->disk = k;
				j->key.host = h;
				j->key.vm = g;
				j->key.datastore =
					place_datastore(&f->shape, h, v, k);
				j->size_bytes = s->vmdk_bytes;
				snprintf(j->vm_name, sizeof(j->vm_name), "vm%u",
					 g);
				snprintf(j->disk_name, sizeof(j->disk_name),
					 "vm%u-disk%u.vmdk", g, k);
				snprintf(j->flat_name, sizeof(j->flat_name),
					 "vm%u-disk%u-flat.vmdk", g, k);
				host->jobs[host->njobs++] = j;
				host->lp->jobs[host->lp->njobs++] = j;
			}
		}
	}
	return 0;
}

static void *fleet_setup_main(void *arg)
{
	struct dloop *lp = arg;
	int err = 0;

	for (size_t i = 0; i < lp->nhosts && !err; i++) {
		err = host_setup(lp->hosts[i], lp->errmsg, sizeof(lp->errmsg));
	}
	for (size_t i = 0; i < lp->njobs && !err; i++) {
		struct job *j = lp->jobs[i];

		j->mnt = &j->host->mounts[j->key.datastore];
		err = vdisk_create(j, lp->errmsg, sizeof(lp->errmsg));
	}
	lp->err = err;
	return NULL;
}

int fleet_new(const struct fleet_spec *spec, struct fleet **out, char *errbuf,
	      size_t errlen)
{
	struct fleet *f;
	int err;

	if (spec->hosts == 0 || spec->hosts > FLEET_HOSTS_MAX ||
	    spec->vms == 0 || spec->vmdks == 0 || spec->ndatastores == 0 ||
	    spec->ndatastores > FLEET_DS_MAX || spec->nconnect == 0 ||
	    spec->threads == 0 || spec->threads > FLEET_THREADS_MAX ||
	    spec->vmdk_bytes < FLEET_VMDK_MIN ||
	    spec->vmdk_bytes % FLEET_VMDK_MIN) {
		snprintf(errbuf, errlen,
			 "invalid fleet: hosts 1..%u, datastores 1..%u, VMs, "
			 "VMDKs, nconnect and threads at least 1, VMDK size a "
			 "multiple of 1 MiB",
			 FLEET_HOSTS_MAX, FLEET_DS_MAX);
		return -EINVAL;
	}
	err = esxi_conf_check(&spec->esxi, spec->nconnect, spec->ndatastores,
			      errbuf, errlen);
	if (err) {
		return err;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		return -ENOMEM;
	}
	f->spec = *spec;
	f->verify = -1;
	f->shape = (struct place_shape){ .hosts = spec->hosts,
					 .vms = spec->vms,
					 .vmdks = spec->vmdks,
					 .datastores = spec->ndatastores,
					 .policy = spec->policy };
	f->nloops = spec->threads < spec->hosts ? spec->threads : spec->hosts;
	f->loops = calloc(f->nloops, sizeof(*f->loops));
	if (!f->loops) {
		free(f);
		return -ENOMEM;
	}
	err = fleet_layout(f);
	if (err) {
		snprintf(errbuf, errlen, "out of memory");
		goto fail;
	}
	for (unsigned l = 0; l < f->nloops; l++) {
		err = -pthread_create(&f->loops[l].thread, NULL,
				      fleet_setup_main, &f->loops[l]);
		if (err) {
			snprintf(errbuf, errlen, "pthread_create: %s",
				 strerror(-err));
			for (unsigned k = 0; k < l; k++) {
				pthread_join(f->loops[k].thread, NULL);
			}
			goto fail;
		}
	}
	for (unsigned l = 0; l < f->nloops; l++) {
		pthread_join(f->loops[l].thread, NULL);
	}
	for (unsigned l = 0; l < f->nloops; l++) {
		if (f->loops[l].err) {
			err = f->loops[l].err;
			snprintf(errbuf, errlen, "%s", f->loops[l].errmsg);
			goto fail;
		}
	}
	*out = f;
	return 0;
fail:
	fleet_free(f);
	return err;
}

/* ---- phases ------------------------------------------------------------- */

static void fleet_end_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct dloop *lp = container_of(w, struct dloop, end_timer);

	(void)loop;
	(void)revents;
	for (size_t i = 0; i < lp->njobs; i++) {
		job_stop(lp->jobs[i]);
	}
}

static void *fleet_phase_main(void *arg)
{
	struct dloop *lp = arg;
	struct fleet *f = lp->fleet;
	const struct workload *w = f->w;
	int64_t t0;

	pthread_barrier_wait(&f->barrier);
	/* One start time for every loop and for the watcher, taken before
	 * the barrier: a thread the scheduler wakes late starts late, but
	 * measures the same window.  The loop's cached time is from the last
	 * phase: refresh it before arming timers. */
	t0 = f->t0_ns;
	ev_now_update(lp->loop);
	for (size_t i = 0; i < lp->nhosts; i++) {
		for (unsigned v = 0; v < f->spec.vms; v++) {
			vm_phase_start(&lp->hosts[i]->vms[v], f->spec.vm_iops,
				       t0, job_vm_wake_cb);
		}
	}
	lp->active_jobs = lp->njobs;
	for (size_t i = 0; i < lp->njobs; i++) {
		struct job *j = lp->jobs[i];
		int err = job_start(j, w, t0);

		if (err) {
			snprintf(j->fatal_msg, sizeof(j->fatal_msg),
				 "cannot start: %s", strerror(-err));
			j->fatal = err;
			j->state = JOB_DONE;
			j->t0_ns = j->done_ns = t0;
			lp->active_jobs--;
		}
	}
	for (size_t i = 0; i < lp->nhosts; i++) {
		host_timers_start(lp->hosts[i]);
	}
	if (!w->one_pass) {
		double left_s = dsload_ns_to_s(
			t0 + (int64_t)((w->ramp_s + w->run_s) * 1e9) -
			dsload_now_ns());

		ev_timer_init(&lp->end_timer, fleet_end_timer_cb,
			      left_s > 0 ? left_s : 0.0, 0.0);
		ev_timer_start(lp->loop, &lp->end_timer);
	}
	if (lp->active_jobs > 0) {
		ev_run(lp->loop, 0);
	}
	ev_timer_stop(lp->loop, &lp->end_timer);
	for (size_t i = 0; i < lp->nhosts; i++) {
		host_timers_stop(lp->hosts[i]);
		for (unsigned v = 0; v < f->spec.vms; v++) {
			vm_phase_stop(&lp->hosts[i]->vms[v]);
		}
	}
	atomic_fetch_sub(&f->running, 1);
	return NULL;
}

void fleet_progress_sample(const struct fleet *f, struct progress_sample *s)
{
	memset(s, 0, sizeof(*s));
	s->at_ns = dsload_now_ns();
	for (unsigned l = 0; l < f->nloops; l++) {
		const struct dloop_progress *p = &f->loops[l].progress;

		for (int d = 0; d < DSTATS_DIRS; d++) {
			s->ops[d] += atomic_load_explicit(&p->ops[d],
							  memory_order_relaxed);
			s->bytes[d] += atomic_load_explicit(
				&p->bytes[d], memory_order_relaxed);
		}
		s->lat_ns +=
			atomic_load_explicit(&p->lat_ns, memory_order_relaxed);
		s->errors +=
			atomic_load_explicit(&p->errors, memory_order_relaxed);
		s->mismatches += atomic_load_explicit(&p->mismatches,
						      memory_order_relaxed);
	}
}

/* Tells @obs about a window edge, once. */
static void fleet_edge(const struct fleet_observer *obs, bool end, bool *told)
{
	if (*told) {
		return;
	}
	*told = true;
	if (obs && obs->window) {
		obs->window(obs->arg, end, dsload_now_ns());
	}
}

/*
 * Waits for the phase threads, printing a progress line each second and
 * telling @obs when the window starts (after the ramp) and ends (after
 * the runtime, before the drain).
 */
static void fleet_watch(struct fleet *f, int64_t t0,
			const struct fleet_observer *obs)
{
	const struct workload *w = f->w;
	int64_t start = t0 + (w->one_pass ? 0 : (int64_t)(w->ramp_s * 1e9));
	int64_t stop =
		w->one_pass ? INT64_MAX : start + (int64_t)(w->run_s * 1e9);
	struct progress_sample prev, cur;
	bool tty = isatty(STDERR_FILENO), printed = false;
	bool started = false, stopped = false;
	int64_t next = t0 + DSLOAD_NS_PER_S, now, wake;
	char line[256];

	fleet_progress_sample(f, &prev);
	while (atomic_load(&f->running) > 0) {
		now = dsload_now_ns();
		if (now >= start) {
			fleet_edge(obs, false, &started);
		}
		if (now >= stop) {
			fleet_edge(obs, true, &stopped);
		}
		wake = now + FLEET_POLL_NS;
		if (!started && start < wake) {
			wake = start;
		}
		if (!stopped && stop < wake) {
			wake = stop;
		}
		if (f->spec.progress && now >= next) {
			fleet_progress_sample(f, &cur);
			progress_format(line, sizeof(line), w->name,
					dsload_ns_to_s(cur.at_ns - t0),
					!started, &prev, &cur);
			fprintf(stderr, tty ? "\r%s\033[K" : "%s\n", line);
			printed = true;
			prev = cur;
			next += DSLOAD_NS_PER_S;
		}
		if (wake > now) {
			struct timespec ts = { 0, wake - now };

			nanosleep(&ts, NULL);
		}
	}
	fleet_edge(obs, false, &started);
	fleet_edge(obs, true, &stopped);
	if (printed && tty) {
		fputc('\n', stderr);
	}
}

static void fleet_conn_sum(const struct fleet *f, struct fleet_conn_counters *c)
{
	memset(c, 0, sizeof(*c));
	for (unsigned h = 0; h < f->spec.hosts; h++) {
		const struct host *host = &f->hosts[h];

		c->lck_refreshes += host->lck_refreshes;
		for (unsigned d = 0; host->mounts && d < f->spec.ndatastores;
		     d++) {
			const struct dsmount *m = &host->mounts[d];

			c->heartbeats += m->hb.c.sent;
			c->heartbeat_failures += m->hb.c.failures;
		}
		/* the host's own: a shared connection counts once */
		for (unsigned i = 0; i < host->nconns; i++) {
			const struct rpcconn_counters *k =
				&host->conns[i].counters;

			c->breaks += k->breaks;
			c->reconnects += k->reconnects;
			c->resent += k->resent;
			c->timeouts += k->timeouts;
		}
	}
}

static void fleet_conn_delta(struct fleet_conn_counters *now,
			     const struct fleet_conn_counters *before)
{
	now->breaks -= before->breaks;
	now->reconnects -= before->reconnects;
	now->resent -= before->resent;
	now->timeouts -= before->timeouts;
	now->heartbeats -= before->heartbeats;
	now->heartbeat_failures -= before->heartbeat_failures;
	now->lck_refreshes -= before->lck_refreshes;
}

/* Each datastore's heartbeat counters summed over the hosts; @reset
 * starts a phase: the longest outage is the phase's own. */
static void fleet_esxi_sum(struct fleet *f, struct fleet_esxi_ds *out,
			   bool reset)
{
	memset(out, 0, sizeof(*out) * FLEET_DS_MAX);
	for (unsigned h = 0; h < f->spec.hosts; h++) {
		struct host *host = &f->hosts[h];

		for (unsigned d = 0; host->mounts && d < f->spec.ndatastores;
		     d++) {
			struct esxi_hb *hb = &host->mounts[d].hb;
			struct esxi_hb_counters *o = &out[d].hb;

			if (reset) {
				hb->c.outage_max_ns = 0;
			}
			o->sent += hb->c.sent;
			o->ok += hb->c.ok;
			o->failures += hb->c.failures;
			o->apd_starts += hb->c.apd_starts;
			o->downs += hb->c.downs;
			o->apd_timeouts += hb->c.apd_timeouts;
			o->recoveries += hb->c.recoveries;
			if (hb->c.outage_max_ns > o->outage_max_ns) {
				o->outage_max_ns = hb->c.outage_max_ns;
			}
			out[d].hosts_unavailable += hb->state != ESXI_VOL_UP;
		}
	}
}

static void fleet_esxi_delta(struct fleet_esxi_ds *now,
			     const struct fleet_esxi_ds *before, unsigned nds)
{
	for (unsigned d = 0; d < nds; d++) {
		struct esxi_hb_counters *n = &now[d].hb;
		const struct esxi_hb_counters *b = &before[d].hb;

		n->sent -= b->sent;
		n->ok -= b->ok;
		n->failures -= b->failures;
		n->apd_starts -= b->apd_starts;
		n->downs -= b->downs;
		n->apd_timeouts -= b->apd_timeouts;
		n->recoveries -= b->recoveries;
	}
}

static int fleet_collect(struct fleet *f, const struct workload *w,
			 struct phase_result *res)
{
	int64_t t0 = INT64_MAX, t1 = 0;

	res->w = *w;
	res->shape = f->shape;
	res->nconnect = f->spec.nconnect;
	res->esxi_version = f->spec.esxi.version;
	res->conns_per_host = f->hosts[0].nconns;
	res->shared_datastores = f->hosts[0].shared_datastores;
	res->flows = place_flows(&f->shape);
	memcpy(res->ds_names, f->spec.datastores, sizeof(res->ds_names));
	res->njobs = f->njobs;
	res->jobs = calloc(f->njobs, sizeof(*res->jobs));
	res->keys = calloc(f->njobs, sizeof(*res->keys));
	res->job_disk = calloc(f->njobs, sizeof(*res->job_disk));
	res->job_stop = calloc(f->njobs, sizeof(*res->job_stop));
	if (!res->jobs || !res->keys || !res->job_disk || !res->job_stop) {
		return -ENOMEM;
	}
	for (size_t i = 0; i < f->njobs; i++) {
		struct job *j = &f->jobs[i];

		res->jobs[i] = j->stats;
		res->keys[i] = j->key;
		res->job_disk[i] = j->disk;
		f->verf_changes += j->stats.verf_changes;
		if (j->t0_ns < t0) {
			t0 = j->t0_ns;
		}
		if (j->done_ns > t1) {
			t1 = j->done_ns;
		}
		if (j->fatal) {
			snprintf(res->job_stop[i], sizeof(res->job_stop[i]),
				 "%s", j->fatal_msg);
		}
		if (j->fatal && !res->fatal) {
			res->fatal = j->fatal;
			snprintf(res->fatal_msg, sizeof(res->fatal_msg),
				 "%s:%s/%s: %s", j->mnt ? j->mnt->name : "?",
				 j->vm_name, j->flat_name, j->fatal_msg);
		}
	}
	res->window_s = w->one_pass ? dsload_ns_to_s(t1 - t0) : w->run_s;
	if (res->window_s <= 0) {
		res->window_s = 1e-9;
	}
	return 0;
}

int fleet_run(struct fleet *f, const struct workload *w,
	      const struct fleet_observer *obs, struct phase_result *res,
	      char *errbuf, size_t errlen)
{
	struct fleet_esxi_ds esxi_before[FLEET_DS_MAX];
	struct fleet_conn_counters before;
	unsigned started = 0;
	int64_t t0;
	int err = 0;

	memset(res, 0, sizeof(*res));
	if (f->verify >= 0 && f->verify != (int)w->verify) {
		snprintf(errbuf, errlen,
			 "verification must be on or off for every phase of "
			 "a run");
		return -EINVAL;
	}
	for (size_t i = 0; i < f->njobs; i++) {
		const struct dsmount *m = f->jobs[i].mnt;

		if (w->bs_bytes > m->wtmax || w->bs_bytes > m->rtmax) {
			snprintf(errbuf, errlen,
				 "block size %u exceeds the server's "
				 "rtmax/wtmax (%u/%u) on %s",
				 w->bs_bytes, m->rtmax, m->wtmax, m->name);
			return -EINVAL;
		}
	}
	if (w->bs_bytes == 0 || w->bs_bytes > f->spec.vmdk_bytes ||
	    w->iodepth == 0 || (w->verify && w->bs_bytes % VTAG_UNIT_BYTES)) {
		snprintf(errbuf, errlen,
			 "bad workload: block size %u (a multiple of %u with "
			 "--verify, at most the VMDK size), iodepth %u",
			 w->bs_bytes, VTAG_UNIT_BYTES, w->iodepth);
		return -EINVAL;
	}
	f->verify = w->verify;
	f->w = w;
	fleet_conn_sum(f, &before);
	fleet_esxi_sum(f, esxi_before, true);
	err = -pthread_barrier_init(&f->barrier, NULL, f->nloops + 1);
	if (err) {
		return err;
	}
	atomic_store(&f->running, f->nloops);
	for (; started < f->nloops; started++) {
		err = -pthread_create(&f->loops[started].thread, NULL,
				      fleet_phase_main, &f->loops[started]);
		if (err) {
			break;
		}
	}
	if (err) {
		/* Threads already waiting at the barrier cannot be released
		 * without all parties: the process cannot go on. */
		fprintf(stderr, "dsload: pthread_create: %s\n", strerror(-err));
		abort();
	}
	t0 = dsload_now_ns();
	f->t0_ns = t0;
	pthread_barrier_wait(&f->barrier);
	fleet_watch(f, t0, obs);
	for (unsigned l = 0; l < f->nloops; l++) {
		pthread_join(f->loops[l].thread, NULL);
	}
	pthread_barrier_destroy(&f->barrier);
	err = fleet_collect(f, w, res);
	fleet_conn_sum(f, &res->conn);
	fleet_conn_delta(&res->conn, &before);
	fleet_esxi_sum(f, res->esxi, false);
	fleet_esxi_delta(res->esxi, esxi_before, f->spec.ndatastores);
	for (size_t i = 0; i < f->njobs; i++) {
		job_phase_fini(&f->jobs[i]);
	}
	if (err) {
		fleet_result_fini(res);
		snprintf(errbuf, errlen, "out of memory");
	}
	return err;
}

void fleet_result_fini(struct phase_result *res)
{
	free(res->jobs);
	free(res->keys);
	free(res->job_disk);
	free(res->job_stop);
	res->job_stop = NULL;
	res->jobs = NULL;
	res->keys = NULL;
	res->job_disk = NULL;
	res->njobs = 0;
}

void fleet_free(struct fleet *f)
{
	if (!f) {
		return;
	}
	for (size_t i = 0; f->jobs && i < f->njobs; i++) {
		if (f->jobs[i].mnt && f->jobs[i].mnt->nconns) {
			vdisk_lck_remove(&f->jobs[i]);
		}
	}
	for (unsigned h = 0; f->hosts && h < f->spec.hosts; h++) {
		host_fini(&f->hosts[h]);
		free(f->hosts[h].jobs);
		for (unsigned v = 0; f->hosts[h].vms && v < f->spec.vms; v++) {
			free(f->hosts[h].vms[v].jobs);
		}
		free(f->hosts[h].vms);
	}
	for (size_t i = 0; f->jobs && i < f->njobs; i++) {
		job_fini(&f->jobs[i]);
	}
	for (unsigned l = 0; l < f->nloops; l++) {
		if (f->loops[l].loop) {
			ev_loop_destroy(f->loops[l].loop);
		}
		free(f->loops[l].hosts);
		free(f->loops[l].jobs);
	}
	free(f->loops);
	free(f->hosts);
	free(f->jobs);
	free(f);
}
