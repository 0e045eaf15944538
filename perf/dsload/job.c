// SPDX-License-Identifier: Apache-2.0
/*
 * job: the I/O engine of one VMDK during a phase, a libev state machine in
 * the manner of fio's: it keeps iodepth READs and WRITEs on the wire
 * (RFC 1813 3.3.6, 3.3.7), drawing offsets from iogen; with verification
 * it tags every written unit and checks every unit read (verify.h); with
 * UNSTABLE writes it COMMITs (3.3.21) every commit_every writes and keeps
 * the writes not yet committed, so that when the server's write verifier
 * changes (a restart) it can send them again, regenerated from their
 * (file, offset, generation), before the final COMMIT.
 *
 * While verifying, an I/O never overlaps one in flight, so what a read
 * returns is exactly what the last completed write put there.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/base/base.h"
#include "perf/dsload/clock.h"
#include "perf/dsload/fleet_int.h"
#include "perf/dsload/verify.h"

#define JOB_MISMATCH_PRINTS 5
#define JOB_FINAL_COMMITS_MAX 8

static void job_fill(struct job *j);

static void job_fail(struct job *j, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void job_fail(struct job *j, int err, const char *fmt, ...)
{
	va_list ap;

	if (!j->fatal) {
		j->fatal = err;
		va_start(ap, fmt);
		vsnprintf(j->fatal_msg, sizeof(j->fatal_msg), fmt, ap);
		va_end(ap);
	}
	if (j->state == JOB_RUNNING) {
		j->state = JOB_DRAINING;
	}
}

static int job_nfs_errno(nfsstat3 st)
{
	return st == NFS3ERR_NOSPC || st == NFS3ERR_DQUOT ? -ENOSPC : -EIO;
}

/* ---- verification state ----------------------------------------------------
 */

static void job_units_set(struct job *j, uint64_t off_bytes, uint32_t len,
			  uint32_t gen)
{
	if (!j->unit_gen) {
		return;
	}
	for (uint64_t u = off_bytes / VTAG_UNIT_BYTES;
	     u < (off_bytes + len) / VTAG_UNIT_BYTES && u < j->nunits; u++) {
		j->unit_gen[u] = gen;
	}
}

static bool job_overlaps(const struct job *j, uint64_t off_bytes, uint32_t len)
{
	for (unsigned i = 0; i < j->nios; i++) {
		const struct job_io *io = &j->ios[i];

		if (io->busy && io->kind != JOB_IO_COMMIT &&
		    io->off_bytes < off_bytes + len &&
		    off_bytes < io->off_bytes + io->len) {
			return true;
		}
	}
	return false;
}

static void job_check_read(struct job *j, const struct job_io *io,
			   const uint8_t *data)
{
	struct dloop_progress *pg = &j->host->lp->progress;

	for (uint32_t pos = 0; pos + VTAG_UNIT_BYTES <= io->len;
	     pos += VTAG_UNIT_BYTES) {
		uint64_t off = io->off_bytes + pos;
		uint32_t want = j->unit_gen[off / VTAG_UNIT_BYTES], found;
		enum vtag_result r;

		if (want == VTAG_GEN_UNKNOWN) {
			continue;
		}
		j->stats.verified++;
		r = vtag_check(data + pos, j->file_id, off, want, &found);
		if (r == VTAG_OK) {
			continue;
		}
		j->stats.mismatches++;
		atomic_fetch_add_explicit(&pg->mismatches, 1,
					  memory_order_relaxed);
		if (j->mismatch_prints++ < JOB_MISMATCH_PRINTS) {
			fprintf(stderr,
				"dsload: MISMATCH %s:%s/%s offset %" PRIu64
				": %s (expected generation %u, read %u)\n",
				j->mnt->name, j->vm_name, j->flat_name, off,
				vtag_result_name(r), want, found);
		}
	}
}

/* ---- uncommitted writes -----------------------------------------------------
 */

static int job_unc_push(struct job_unc **v, size_t *n, size_t *cap,
			const struct job_unc *e)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 256;
		struct job_unc *nv = realloc(*v, ncap * sizeof(*nv));

		if (!nv) {
			return -ENOMEM;
		}
		*v = nv;
		*cap = ncap;
	}
	(*v)[(*n)++] = *e;
	return 0;
}

/* The server's verifier is not the one the uncommitted writes got: it
 * restarted, and they may be lost.  Every one of them is sent again. */
static void job_verf_changed(struct job *j, const uint8_t *verf)
{
	j->stats.verf_changes++;
	j->verf_epoch++;
	memcpy(j->verf, verf, sizeof(j->verf));
	for (size_t i = 0; i < j->nunc; i++) {
		if (job_unc_push(&j->resq, &j->nresq, &j->resq_cap,
				 &j->unc[i])) {
			job_fail(j, -ENOMEM, "out of memory for resends");
			break;
		}
	}
	j->nunc = 0;
}

static void job_verf_seen(struct job *j, const uint8_t *verf)
{
	if (!j->have_verf) {
		memcpy(j->verf, verf, sizeof(j->verf));
		j->have_verf = true;
	} else if (memcmp(j->verf, verf, sizeof(j->verf)) != 0) {
		job_verf_changed(j, verf);
	}
}

/* ---- completions
 * -------------------------------------------------------------- */

static void job_account(struct job *j, const struct job_io *io,
			enum dstats_dir dir, int64_t now_ns)
{
	struct dloop_progress *pg = &j->host->lp->progress;
	uint64_t lat = (uint64_t)(now_ns - io->start_ns);

	atomic_fetch_add_explicit(&pg->ops[dir], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&pg->bytes[dir], io->len,
				  memory_order_relaxed);
	atomic_fetch_add_explicit(&pg->lat_ns, lat, memory_order_relaxed);
	if (io->resend || now_ns < j->ramp_end_ns || now_ns > j->end_ns) {
		return;
	}
	j->stats.ops[dir]++;
	j->stats.bytes[dir] += io->len;
	lat_hist_add(&j->stats.lat[dir], lat);
}

static void job_io_error(struct job *j, const struct job_io *io, int err,
			 nfsstat3 st)
{
	struct dloop_progress *pg = &j->host->lp->progress;
	const char *op = io->kind == JOB_IO_READ    ? "READ"
			 : io->kind == JOB_IO_WRITE ? "WRITE"
						    : "COMMIT";

	j->stats.errors++;
	atomic_fetch_add_explicit(&pg->errors, 1, memory_order_relaxed);
	if (io->kind == JOB_IO_WRITE) {
		job_units_set(j, io->off_bytes, io->len, VTAG_GEN_UNKNOWN);
	}
	if (err) {
		job_fail(j, err, "%s: %s", op, strerror(-err));
		return;
	}
	if (st == NFS3ERR_NOSPC || st == NFS3ERR_DQUOT) {
		j->stats.nospc++;
	}
	job_fail(j, job_nfs_errno(st), "%s at %" PRIu64 ": %s", op,
		 io->off_bytes, nfsc_status_name(st));
}

static void job_read_done(struct job *j, struct job_io *io, int err,
			  const uint8_t *body, size_t len, int64_t now_ns)
{
	const uint8_t *data = NULL;
	uint32_t dlen = 0;
	nfsstat3 st = NFS3_OK;
	bool eof = false;

	if (!err) {
		err = nfsc_read_decode(body, len, &st, &eof, &data, &dlen);
	}
	if (err || st != NFS3_OK) {
		job_io_error(j, io, err, st);
		return;
	}
	if (dlen != io->len) {
		job_fail(j, -EIO, "READ at %" PRIu64 ": %u bytes of %u",
			 io->off_bytes, dlen, io->len);
		j->stats.errors++;
		return;
	}
	if (j->unit_gen) {
		job_check_read(j, io, data);
	}
	job_account(j, io, DSTATS_READ, now_ns);
}

static void job_write_done(struct job *j, struct job_io *io, int err,
			   const uint8_t *body, size_t len, int64_t now_ns)
{
	struct nfsc_write_res res;
	struct job_unc e = { io->off_bytes, io->len, io->gen };

	if (!err) {
		err = nfsc_write_decode(body, len, &res);
	}
	if (err || res.status != NFS3_OK) {
		job_io_error(j, io, err, err ? NFS3_OK : res.status);
		return;
	}
	if (res.count != io->len) {
		job_units_set(j, io->off_bytes, io->len, VTAG_GEN_UNKNOWN);
		job_fail(j, -EIO, "WRITE at %" PRIu64 ": %u bytes of %u",
			 io->off_bytes, res.count, io->len);
		j->stats.errors++;
		return;
	}
	job_units_set(j, io->off_bytes, io->len, io->gen);
	job_verf_seen(j, res.verf);
	if (j->w->stable == UNSTABLE && res.committed == UNSTABLE &&
	    job_unc_push(&j->unc, &j->nunc, &j->unc_cap, &e)) {
		job_fail(j, -ENOMEM, "out of memory for uncommitted writes");
	}
	if (io->resend) {
		j->stats.resent++;
	}
	job_account(j, io, DSTATS_WRITE, now_ns);
}

static void job_commit_done(struct job *j, struct job_io *io, int err,
			    const uint8_t *body, size_t len)
{
	uint8_t verf[NFS3_WRITEVERFSIZE];
	nfsstat3 st = NFS3_OK;

	j->commit_inflight = false;
	if (!err) {
		err = nfsc_commit_decode(body, len, &st, verf);
	}
	if (err || st != NFS3_OK) {
		job_io_error(j, io, err, st);
		return;
	}
	j->stats.commits++;
	if (io->verf_epoch != j->verf_epoch) {
		return; /* a change since it left: its entries are resent */
	}
	if (j->have_verf && memcmp(j->verf, verf, sizeof(verf)) != 0) {
		job_verf_changed(j, verf);
		return;
	}
	memmove(j->unc, j->unc + io->commit_mark,
		(j->nunc - io->commit_mark) * sizeof(*j->unc));
	j->nunc -= io->commit_mark;
}

static void job_io_put(struct job *j, struct job_io *io)
{
	io->busy = false;
	io->next_free = j->free_head;
	j->free_head = (int)(io - j->ios);
}

static void job_io_done(struct rpcconn_call *call, int err, const uint8_t *body,
			size_t len)
{
	struct job_io *io = container_of(call, struct job_io, call);
	struct job *j = io->job;
	int64_t now = dsload_now_ns();

	j->inflight--;
	if (io->kind != JOB_IO_COMMIT) {
		j->inflight_rw--;
	}
	io->busy = false;
	switch (io->kind) {
	case JOB_IO_READ:
		job_read_done(j, io, err, body, len, now);
		break;
	case JOB_IO_WRITE:
		job_write_done(j, io, err, body, len, now);
		break;
	case JOB_IO_COMMIT:
		job_commit_done(j, io, err, body, len);
		break;
	}
	job_io_put(j, io);
	if (j->state == JOB_RUNNING && now >= j->end_ns) {
		j->state = JOB_DRAINING;
	}
	job_fill(j);
}

/* ---- submitting -------------------------------------------------------------
 */

static struct job_io *job_io_get(struct job *j)
{
	struct job_io *io;

	if (j->free_head < 0) {
		return NULL;
	}
	io = &j->ios[j->free_head];
	j->free_head = io->next_free;
	io->busy = true;
	io->resend = false;
	io->start_ns = dsload_now_ns();
	return io;
}

static void job_submit(struct job *j, struct job_io *io, int len)
{
	int err = len < 0 ? len
			  : rpcconn_submit(io->conn, &io->call, (size_t)len,
					   job_io_done);

	if (err) {
		job_io_put(j, io);
		job_fail(j, err, "cannot send: %s", strerror(-err));
		return;
	}
	j->inflight++;
	if (io->kind != JOB_IO_COMMIT) {
		j->inflight_rw++;
	}
}

static void job_submit_write(struct job *j, uint64_t off_bytes, uint32_t gen,
			     bool resend)
{
	struct job_io *io = job_io_get(j);
	enum stable_how stable = resend ? UNSTABLE : j->w->stable;
	uint8_t *data;
	int len;

	io->kind = JOB_IO_WRITE;
	io->off_bytes = off_bytes;
	io->len = j->w->bs_bytes;
	io->gen = gen;
	io->resend = resend;
	io->conn = host_mount_conn(j->mnt);
	len = nfsc_write_encode(io->conn, &io->call, &j->flat_fh, off_bytes,
				io->len, stable, &data);
	/* Without verification the payload is whatever pattern the buffer
	 * was filled with at allocation: no copy per write. */
	if (len > 0 && j->unit_gen) {
		for (uint32_t pos = 0; pos < io->len; pos += VTAG_UNIT_BYTES) {
			vtag_fill(data + pos, j->file_id, off_bytes + pos, gen);
		}
	}
	job_submit(j, io, len);
}

static void job_submit_read(struct job *j, uint64_t off_bytes)
{
	struct job_io *io = job_io_get(j);

	io->kind = JOB_IO_READ;
	io->off_bytes = off_bytes;
	io->len = j->w->bs_bytes;
	io->gen = 0;
	io->conn = host_mount_conn(j->mnt);
	job_submit(j, io,
		   nfsc_read_encode(io->conn, &io->call, &j->flat_fh, off_bytes,
				    io->len));
}

static void job_submit_commit(struct job *j)
{
	struct job_io *io = job_io_get(j);

	io->kind = JOB_IO_COMMIT;
	io->off_bytes = 0;
	io->len = 0;
	io->commit_mark = j->nunc;
	io->verf_epoch = j->verf_epoch;
	io->conn = host_mount_conn(j->mnt);
	j->commit_inflight = true;
	j->writes_since_commit = 0;
	job_submit(j, io, nfsc_commit_encode(io->conn, &io->call, &j->flat_fh));
	if (!io->busy) {
		j->commit_inflight = false;
	}
}

static bool job_commit_due(const struct job *j)
{
	if (j->w->stable != UNSTABLE || j->commit_inflight || j->nunc == 0 ||
	    j->fatal) {
		return false;
	}
	if (j->state == JOB_RUNNING) {
		return j->writes_since_commit >= j->w->commit_every;
	}
	/* Draining: the final COMMIT waits for every write. */
	return j->inflight_rw == 0 && j->iresq == j->nresq;
}

/* The next resend still worth sending: a unit written again since then
 * holds newer data, which the old write must not overwrite. */
static bool job_resend_next(struct job *j, struct job_unc *e)
{
	while (j->iresq < j->nresq) {
		*e = j->resq[j->iresq];
		if (!j->unit_gen ||
		    j->unit_gen[e->off_bytes / VTAG_UNIT_BYTES] == e->gen) {
			return true;
		}
		j->iresq++;
	}
	return false;
}

/* One job of @lp's phase is done; the last one ends the loop's run. */
static void job_loop_done(struct dloop *lp)
{
	if (lp->active_jobs > 0 && --lp->active_jobs == 0) {
		ev_break(lp->loop, EVBREAK_ALL);
	}
}

static void job_check_done(struct job *j)
{
	if (j->state != JOB_DRAINING || j->inflight > 0) {
		return;
	}
	if (!j->fatal && (j->iresq < j->nresq || j->nunc > 0)) {
		return;
	}
	j->state = JOB_DONE;
	j->done_ns = dsload_now_ns();
	job_loop_done(j->host->lp);
}

static void job_fill(struct job *j)
{
	struct job_unc e;

	while (j->state == JOB_RUNNING || j->state == JOB_DRAINING) {
		if (j->fatal || j->free_head < 0) {
			break;
		}
		if (j->inflight_rw < j->w->iodepth && job_resend_next(j, &e)) {
			if (job_overlaps(j, e.off_bytes, e.len)) {
				break;
			}
			j->iresq++;
			job_submit_write(j, e.off_bytes, e.gen, true);
			continue;
		}
		if (j->iresq == j->nresq) {
			j->iresq = j->nresq = 0;
		}
		if (job_commit_due(j)) {
			if (j->state == JOB_DRAINING &&
			    ++j->final_commits > JOB_FINAL_COMMITS_MAX) {
				job_fail(j, -EIO,
					 "COMMIT: writes never stable");
				break;
			}
			job_submit_commit(j);
			continue;
		}
		if (j->state != JOB_RUNNING ||
		    j->inflight_rw >= j->w->iodepth) {
			break;
		}
		if (j->w->one_pass && j->issued >= j->gen.blocks) {
			j->state = JOB_DRAINING;
			break;
		}
		if (!j->have_next_op) {
			iogen_next(&j->gen, &j->next_op);
			j->have_next_op = true;
		}
		if (j->unit_gen &&
		    job_overlaps(j, j->next_op.off_bytes, j->w->bs_bytes)) {
			break;
		}
		if (!vm_admit(j->vm, dsload_now_ns())) {
			break;
		}
		j->have_next_op = false;
		j->issued++;
		if (j->next_op.is_read) {
			job_submit_read(j, j->next_op.off_bytes);
		} else {
			j->writes_since_commit++;
			job_submit_write(j, j->next_op.off_bytes,
					 j->unit_gen ? ++j->gen_next : 1,
					 false);
			if (j->unit_gen &&
			    j->gen_next == VTAG_GEN_UNKNOWN - 1) {
				j->gen_next = 0;
			}
		}
	}
	job_check_done(j);
}

void job_vm_wake_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct dvm *vm = container_of(w, struct dvm, wake);
	size_t first = vm->rr;

	(void)loop;
	(void)revents;
	vm->rr = vm->njobs ? (vm->rr + 1) % vm->njobs : 0;
	for (size_t i = 0; i < vm->njobs; i++) {
		job_fill(vm->jobs[(first + i) % vm->njobs]);
	}
}

/* ---- phase life -------------------------------------------------------------
 */

int job_start(struct job *j, const struct workload *w, int64_t t0_ns)
{
	struct iogen_params p = {
		.region_bytes = j->size_bytes,
		.bs_bytes = w->bs_bytes,
		.read_pct = w->read_pct,
		.random_pct = w->random_pct,
		.seed = w->seed ^ (j->idx * UINT64_C(0x9E3779B97F4A7C15)),
	};
	size_t cap = NFSC_HDR_MAX + NFSC_WRITE_ARGS_MAX + w->bs_bytes + 8;
	int err;

	if (w->bs_bytes > j->mnt->wtmax || w->bs_bytes > j->mnt->rtmax ||
	    (w->verify && w->bs_bytes % VTAG_UNIT_BYTES) || w->iodepth == 0) {
		return -EINVAL;
	}
	err = iogen_init(&j->gen, &p);
	if (err) {
		return err;
	}
	if (w->verify && !j->unit_gen) {
		j->nunits = j->size_bytes / VTAG_UNIT_BYTES;
		j->unit_gen = calloc(j->nunits, sizeof(*j->unit_gen));
		if (!j->unit_gen) {
			return -ENOMEM;
		}
		/* A flat file kept from an earlier run holds data this run
		 * did not write: its units are checked once written. */
		for (size_t u = 0; !j->fresh && u < j->nunits; u++) {
			j->unit_gen[u] = VTAG_GEN_UNKNOWN;
		}
	}
	j->nios = w->iodepth + 1;
	j->ios = calloc(j->nios, sizeof(*j->ios));
	if (!j->ios) {
		return -ENOMEM;
	}
	for (unsigned i = 0; i < j->nios; i++) {
		struct job_io *io = &j->ios[i];

		io->job = j;
		io->call.buf = malloc(cap);
		if (!io->call.buf) {
			return -ENOMEM;
		}
		io->call.cap = cap;
		/* A pattern, not zeros, for writes that are not verified. */
		for (size_t b = 0; b < cap; b++) {
			io->call.buf[b] = (uint8_t)(b * 131 + i);
		}
		io->next_free = i + 1 < j->nios ? (int)i + 1 : -1;
	}
	j->free_head = 0;
	j->w = w;
	dstats_init(&j->stats);
	j->inflight = j->inflight_rw = 0;
	j->have_next_op = false;
	j->issued = 0;
	j->writes_since_commit = 0;
	j->final_commits = 0;
	j->commit_inflight = false;
	j->fatal = 0;
	j->fatal_msg[0] = '\0';
	j->mismatch_prints = 0;
	j->t0_ns = t0_ns;
	j->ramp_end_ns =
		w->one_pass ? t0_ns
			    : t0_ns + (int64_t)(w->ramp_s * DSLOAD_NS_PER_S);
	j->end_ns = w->one_pass ? INT64_MAX
				: j->ramp_end_ns +
					  (int64_t)(w->run_s * DSLOAD_NS_PER_S);
	j->done_ns = 0;
	j->state = JOB_RUNNING;
	job_fill(j);
	return 0;
}

void job_stop(struct job *j)
{
	if (j->state != JOB_RUNNING) {
		return;
	}
	j->state = JOB_DRAINING;
	job_fill(j);
}

void job_phase_fini(struct job *j)
{
	for (unsigned i = 0; j->ios && i < j->nios; i++) {
		free(j->ios[i].call.buf);
	}
	free(j->ios);
	j->ios = NULL;
	j->nios = 0;
	j->state = JOB_IDLE;
}

void job_fini(struct job *j)
{
	job_phase_fini(j);
	free(j->unit_gen);
	free(j->unc);
	free(j->resq);
	j->unit_gen = NULL;
	j->unc = NULL;
	j->resq = NULL;
}
