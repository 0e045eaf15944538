// SPDX-License-Identifier: Apache-2.0
/*
 * model: a fleet shape through the capacities of its VMs, flows, hosts
 * and volumes (max-min fair, by progressive filling), and the fit of the
 * parameters to published figures (Nelder-Mead on their logarithms).
 * See model.h; docs/pools.md for what each parameter stands for.
 */
#include "perf/dsload/model.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MODEL_STREAMS_MAX 4096
#define MODEL_MIB 1048576.0
/* Kinds of shared server a stream passes. */
enum { MODEL_VM = 0, MODEL_FLOW, MODEL_HOST, MODEL_VOLUME, MODEL_KINDS };

static const char *const model_names[MODEL_NPARAMS] = {
	[MODEL_FLOW_IOPS] = "flow_iops",   [MODEL_FLOW_MIBPS] = "flow_mibps",
	[MODEL_CONTENTION] = "contention", [MODEL_HOST_MIBPS] = "host_mibps",
	[MODEL_VM_IOPS] = "vm_iops",
};

static const char *const model_meanings[MODEL_NPARAMS] = {
	[MODEL_FLOW_IOPS] = "one flow's queue (one TCP connection to one "
			    "datastore), 8K IOPS",
	[MODEL_FLOW_MIBPS] = "one flow's queue, 64K MiB/s",
	[MODEL_CONTENTION] = "alpha: each other busy flow on the flow's host "
			     "or volume (the more crowded) costs it this share",
	[MODEL_HOST_MIBPS] = "one host's NIC, MiB/s",
	[MODEL_VM_IOPS] = "one VM's own ceiling (vCPUs, virtual SCSI queues), "
			  "IOPS",
};

const char *model_param_name(enum model_param p)
{
	return (unsigned)p < MODEL_NPARAMS ? model_names[p] : "?";
}

const char *model_param_meaning(enum model_param p)
{
	return (unsigned)p < MODEL_NPARAMS ? model_meanings[p] : "?";
}

/* The streams of one shape and the servers they pass, by index. */
struct model_net {
	size_t nstreams;
	unsigned srv[MODEL_STREAMS_MAX][MODEL_KINDS];
	size_t nsrv[MODEL_KINDS];
	double *cap[MODEL_KINDS]; /* per server, ops/s; INFINITY: none */
	unsigned *
		members[MODEL_KINDS]; /* flows: streams; hosts/volumes: flows */
	unsigned *flows_of[2]; /* flows with I/O per host, per volume */
};

static void model_net_free(struct model_net *n)
{
	for (int k = 0; k < MODEL_KINDS; k++) {
		free(n->cap[k]);
		free(n->members[k]);
	}
	free(n->flows_of[0]);
	free(n->flows_of[1]);
	free(n);
}

static double model_cap_ops(double mibps, uint32_t bs_bytes)
{
	return mibps > 0 ? mibps * MODEL_MIB / bs_bytes : INFINITY;
}

/* Builds the streams of @s and every server's capacity under @m. */
static int model_net_build(const struct model_params *m,
			   const struct model_shape *s, struct model_net **out)
{
	const struct place_shape *p = &s->place;
	unsigned nc = s->nconnect ? s->nconnect : 1;
	struct model_net *n;
	size_t nflows;

	if (!p->hosts || !p->vms || !p->vmdks || !p->datastores ||
	    !s->bs_bytes ||
	    (size_t)p->hosts * p->vms * p->vmdks * nc > MODEL_STREAMS_MAX ||
	    (size_t)p->hosts * p->datastores * nc > MODEL_STREAMS_MAX) {
		return -EINVAL;
	}
	n = calloc(1, sizeof(*n));
	if (!n) {
		return -ENOMEM;
	}
	n->nsrv[MODEL_VM] = (size_t)p->hosts * p->vms;
	nflows = (size_t)p->hosts * p->datastores * nc;
	n->nsrv[MODEL_FLOW] = nflows;
	n->nsrv[MODEL_HOST] = p->hosts;
	n->nsrv[MODEL_VOLUME] = p->datastores;
	for (int k = 0; k < MODEL_KINDS; k++) {
		n->cap[k] = calloc(n->nsrv[k], sizeof(double));
		n->members[k] = calloc(n->nsrv[k], sizeof(unsigned));
		if (!n->cap[k] || !n->members[k]) {
			goto nomem;
		}
	}
	n->flows_of[0] = calloc(p->hosts, sizeof(unsigned));
	n->flows_of[1] = calloc(p->datastores, sizeof(unsigned));
	if (!n->flows_of[0] || !n->flows_of[1]) {
		goto nomem;
	}
	for (unsigned h = 0; h < p->hosts; h++) {
		for (unsigned v = 0; v < p->vms; v++) {
			for (unsigned k = 0; k < p->vmdks; k++) {
				unsigned d = place_datastore(p, h, v, k);

				for (unsigned c = 0; c < nc; c++) {
					unsigned *sv = n->srv[n->nstreams++];

					sv[MODEL_VM] = h * p->vms + v;
					sv[MODEL_FLOW] =
						(h * p->datastores + d) * nc +
						c;
					sv[MODEL_HOST] = h;
					sv[MODEL_VOLUME] = d;
					n->members[MODEL_FLOW]
						  [sv[MODEL_FLOW]]++;
				}
			}
		}
	}
	/* A flow carrying I/O is busy: it counts for the contention of its
	 * host and of its volume. */
	for (size_t f = 0; f < nflows; f++) {
		unsigned h = (unsigned)(f / nc / p->datastores);
		unsigned d = (unsigned)(f / nc % p->datastores);

		if (n->members[MODEL_FLOW][f]) {
			n->flows_of[0][h]++;
			n->flows_of[1][d]++;
		}
	}
	for (size_t i = 0; i < n->nsrv[MODEL_VM]; i++) {
		n->cap[MODEL_VM][i] = m->v[MODEL_VM_IOPS] > 0
					      ? m->v[MODEL_VM_IOPS]
					      : INFINITY;
	}
	for (size_t f = 0; f < nflows; f++) {
		unsigned h = (unsigned)(f / nc / p->datastores);
		unsigned d = (unsigned)(f / nc % p->datastores);
		double a =
			m->v[MODEL_CONTENTION] > 0 ? m->v[MODEL_CONTENTION] : 0;
		double dh = 1 + a * (n->flows_of[0][h] - 1.0);
		double dv = 1 + a * (n->flows_of[1][d] - 1.0);
		double ops = m->v[MODEL_FLOW_IOPS] > 0 ? m->v[MODEL_FLOW_IOPS]
						       : INFINITY;
		double bw = model_cap_ops(m->v[MODEL_FLOW_MIBPS], s->bs_bytes);

		n->cap[MODEL_FLOW][f] = fmin(ops, bw) / fmax(fmax(dh, dv), 1);
	}
	for (unsigned h = 0; h < p->hosts; h++) {
		n->cap[MODEL_HOST][h] =
			model_cap_ops(m->v[MODEL_HOST_MIBPS], s->bs_bytes);
	}
	for (unsigned d = 0; d < p->datastores; d++) {
		n->cap[MODEL_VOLUME][d] =
			model_cap_ops(m->volume_mibps, s->bs_bytes);
	}
	*out = n;
	return 0;
nomem:
	model_net_free(n);
	return -ENOMEM;
}

/* Progressive filling: returns the sum of the streams' rates, ops/s, or
 * INFINITY when nothing bounds them. */
static double model_net_fill(struct model_net *n)
{
	static const double eps = 1e-9;
	double *rate = calloc(n->nstreams, sizeof(double));
	double *used[MODEL_KINDS] = { 0 };
	unsigned *cnt[MODEL_KINDS] = { 0 };
	bool *frozen = calloc(n->nstreams, sizeof(bool));
	size_t left = n->nstreams;
	double total = 0;

	for (int k = 0; k < MODEL_KINDS; k++) {
		used[k] = calloc(n->nsrv[k], sizeof(double));
		cnt[k] = calloc(n->nsrv[k], sizeof(unsigned));
		if (!used[k] || !cnt[k]) {
			total = NAN;
		}
	}
	if (!rate || !frozen) {
		total = NAN;
	}
	while (left && !isnan(total)) {
		double inc = INFINITY;

		for (int k = 0; k < MODEL_KINDS; k++) {
			memset(cnt[k], 0, n->nsrv[k] * sizeof(unsigned));
		}
		for (size_t i = 0; i < n->nstreams; i++) {
			for (int k = 0; k < MODEL_KINDS && !frozen[i]; k++) {
				cnt[k][n->srv[i][k]]++;
			}
		}
		for (int k = 0; k < MODEL_KINDS; k++) {
			for (size_t j = 0; j < n->nsrv[k]; j++) {
				if (cnt[k][j] && isfinite(n->cap[k][j])) {
					inc = fmin(inc,
						   (n->cap[k][j] - used[k][j]) /
							   cnt[k][j]);
				}
			}
		}
		if (!isfinite(inc)) {
			total = INFINITY;
			break;
		}
		inc = fmax(inc, 0);
		for (size_t i = 0; i < n->nstreams; i++) {
			if (frozen[i]) {
				continue;
			}
			rate[i] += inc;
			for (int k = 0; k < MODEL_KINDS; k++) {
				used[k][n->srv[i][k]] += inc;
			}
		}
		/* Freeze every stream through a server now full. */
		for (size_t i = 0; i < n->nstreams; i++) {
			for (int k = 0; k < MODEL_KINDS && !frozen[i]; k++) {
				double c = n->cap[k][n->srv[i][k]];

				if (isfinite(c) &&
				    used[k][n->srv[i][k]] >= c * (1 - eps)) {
					frozen[i] = true;
					left--;
				}
			}
		}
	}
	for (size_t i = 0; i < n->nstreams && isfinite(total); i++) {
		total += rate[i];
	}
	for (int k = 0; k < MODEL_KINDS; k++) {
		free(used[k]);
		free(cnt[k]);
	}
	free(rate);
	free(frozen);
	return total;
}

int model_predict(const struct model_params *m, const struct model_shape *s,
		  double *figure, unsigned *flows)
{
	struct model_net *n;
	double ops;
	unsigned busy = 0;
	int err;

	err = model_net_build(m, s, &n);
	if (err) {
		return err;
	}
	for (size_t f = 0; f < n->nsrv[MODEL_FLOW]; f++) {
		busy += n->members[MODEL_FLOW][f] != 0;
	}
	ops = model_net_fill(n);
	model_net_free(n);
	if (isnan(ops)) {
		return -ENOMEM;
	}
	*figure = s->mibps ? ops * s->bs_bytes / MODEL_MIB : ops;
	if (flows) {
		*flows = busy;
	}
	return 0;
}

/* ---- the fit ------------------------------------------------------------ */

struct model_fit_ctx {
	const struct model_point *pts;
	size_t n;
	double volume_mibps;
};

static void model_from_log(const double *x, double volume_mibps,
			   struct model_params *m)
{
	for (int i = 0; i < MODEL_NPARAMS; i++) {
		m->v[i] = exp(x[i]);
	}
	m->volume_mibps = volume_mibps;
}

/* Sum of squared ln(model / target); a huge value where undefined. */
static double model_cost(const struct model_fit_ctx *c, const double *x)
{
	struct model_params m;
	double sum = 0, fig;

	model_from_log(x, c->volume_mibps, &m);
	for (size_t i = 0; i < c->n; i++) {
		double r;

		if (model_predict(&m, &c->pts[i].shape, &fig, NULL) ||
		    !isfinite(fig) || fig <= 0) {
			return 1e30;
		}
		r = log(fig / c->pts[i].target);
		sum += r * r;
	}
	return sum;
}

/* Nelder-Mead over MODEL_NPARAMS dimensions from @x (in: start, out:
 * best); returns the best cost. */
static double model_simplex(const struct model_fit_ctx *c, double *x,
			    double step, int iters)
{
	enum { D = MODEL_NPARAMS };
	double p[D + 1][D], f[D + 1], xo[D], xr[D], xe[D], xc[D];

	for (int i = 0; i <= D; i++) {
		memcpy(p[i], x, sizeof(p[i]));
		if (i) {
			p[i][i - 1] += step;
		}
		f[i] = model_cost(c, p[i]);
	}
	for (int it = 0; it < iters; it++) {
		int lo = 0, hi = 0, nh = 0;
		double fr;

		for (int i = 1; i <= D; i++) {
			if (f[i] < f[lo]) {
				lo = i;
			}
			if (f[i] > f[hi]) {
				hi = i;
			}
		}
		nh = lo;
		for (int i = 0; i <= D; i++) {
			if (i != hi && f[i] > f[nh]) {
				nh = i;
			}
		}
		if (f[hi] - f[lo] < 1e-18) {
			break;
		}
		for (int j = 0; j < D; j++) {
			xo[j] = 0;
			for (int i = 0; i <= D; i++) {
				if (i != hi) {
					xo[j] += p[i][j] / D;
				}
			}
		}
		for (int j = 0; j < D; j++) {
			xr[j] = xo[j] + (xo[j] - p[hi][j]);
		}
		fr = model_cost(c, xr);
		if (fr < f[lo]) {
			double fe;

			for (int j = 0; j < D; j++) {
				xe[j] = xo[j] + 2 * (xo[j] - p[hi][j]);
			}
			fe = model_cost(c, xe);
			memcpy(p[hi], fe < fr ? xe : xr, sizeof(p[hi]));
			f[hi] = fe < fr ? fe : fr;
		} else if (fr < f[nh]) {
			memcpy(p[hi], xr, sizeof(p[hi]));
			f[hi] = fr;
		} else {
			double fc;

			for (int j = 0; j < D; j++) {
				xc[j] = xo[j] + 0.5 * (p[hi][j] - xo[j]);
			}
			fc = model_cost(c, xc);
			if (fc < f[hi]) {
				memcpy(p[hi], xc, sizeof(p[hi]));
				f[hi] = fc;
				continue;
			}
			for (int i = 0; i <= D; i++) {
				if (i == lo) {
					continue;
				}
				for (int j = 0; j < D; j++) {
					p[i][j] = p[lo][j] +
						  0.5 * (p[i][j] - p[lo][j]);
				}
				f[i] = model_cost(c, p[i]);
			}
		}
	}
	{
		int lo = 0;

		for (int i = 1; i <= D; i++) {
			if (f[i] < f[lo]) {
				lo = i;
			}
		}
		memcpy(x, p[lo], sizeof(p[lo]));
		return f[lo];
	}
}

/* A start: the flow caps at the smallest targets of their unit, the
 * others above them. */
static void model_fit_start(const struct model_point *pts, size_t n, double *x)
{
	double iops = INFINITY, mibps = INFINITY;

	for (size_t i = 0; i < n; i++) {
		if (pts[i].shape.mibps) {
			mibps = fmin(mibps, pts[i].target);
		} else {
			iops = fmin(iops, pts[i].target);
		}
	}
	if (!isfinite(iops)) {
		iops = isfinite(mibps) ? mibps * 16 : 1e5;
	}
	if (!isfinite(mibps)) {
		mibps = iops / 16;
	}
	x[MODEL_FLOW_IOPS] = log(iops);
	x[MODEL_FLOW_MIBPS] = log(mibps);
	x[MODEL_CONTENTION] = log(0.1);
	x[MODEL_HOST_MIBPS] = log(mibps * 2);
	x[MODEL_VM_IOPS] = log(iops * 2);
}

int model_fit(const struct model_point *pts, size_t n, struct model_params *m,
	      double *rms_log)
{
	struct model_fit_ctx c = { pts, n, m->volume_mibps };
	double x[MODEL_NPARAMS], best;
	struct model_params probe;
	double fig;

	if (!n || n > MODEL_FIT_MAX) {
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		if (!(pts[i].target > 0) || !isfinite(pts[i].target)) {
			return -EINVAL;
		}
	}
	model_fit_start(pts, n, x);
	model_from_log(x, m->volume_mibps, &probe);
	for (size_t i = 0; i < n; i++) {
		if (model_predict(&probe, &pts[i].shape, &fig, NULL)) {
			return -EINVAL;
		}
	}
	/* Restarts from the best point with smaller steps escape the
	 * simplex collapsing on a flat face (a cap that does not bind). */
	best = model_simplex(&c, x, 0.7, 4000);
	for (int r = 0; r < 6 && best > 1e-14; r++) {
		best = model_simplex(&c, x, r % 2 ? 0.2 : 1.0, 4000);
	}
	model_from_log(x, m->volume_mibps, m);
	if (rms_log) {
		*rms_log = sqrt(best / (double)n);
	}
	return 0;
}
