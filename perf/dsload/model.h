/* SPDX-License-Identifier: Apache-2.0 */
/*
 * model: the traffic model of a published profile as a function of the
 * fleet's shape, and its fit to the published table (docs/pools.md,
 * "The model and its fit").
 *
 * A fleet shape (hosts x VMs x VMDKs on datastores, nconnect connections
 * per host and datastore, a block size) becomes streams, one per VMDK and
 * connection, each through four shared servers: its VM, its flow (one
 * connection x one datastore), its host and its volume.  The figure is
 * the max-min fair allocation of those capacities (progressive filling:
 * every unfrozen stream grows alike until a server is full), in IOPS or
 * MiB/s, in published (unscaled) units.
 *
 * Parameters, each one physical thing:
 *   flow_iops, flow_mibps  one flow's queue: one TCP connection to one
 *                          datastore (8K IOPS, 64K MiB/s)
 *   contention             alpha: each other busy flow that shares the
 *                          flow's host or its volume (the more crowded of
 *                          the two) lowers its ceiling to
 *                          cap / (1 + alpha (n - 1))
 *   host_mibps             one host's NIC
 *   vm_iops                one VM's own ceiling (its vCPUs and queues)
 * and one given, not fitted:
 *   volume_mibps           the volume's QoS limit from its service level
 *
 * The fit takes up to MODEL_FIT_MAX scenarios of the table, each with a
 * target figure, and minimises the sum of squared log residuals by
 * Nelder-Mead over the logarithms of the parameters.
 */
#ifndef DSLOAD_MODEL_H
#define DSLOAD_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perf/dsload/placement.h"

#define MODEL_FIT_MAX 5

enum model_param {
	MODEL_FLOW_IOPS = 0,
	MODEL_FLOW_MIBPS,
	MODEL_CONTENTION,
	MODEL_HOST_MIBPS,
	MODEL_VM_IOPS,
	MODEL_NPARAMS,
};

struct model_params {
	double v[MODEL_NPARAMS];
	double volume_mibps; /* given; 0: none */
};

struct model_shape {
	struct place_shape place;
	unsigned nconnect; /* connections per (host, datastore); 0 = 1 */
	uint32_t bs_bytes;
	bool mibps; /* the figure in MiB/s, else IOPS */
};

/* One scenario of a fit: a shape and the figure it must give. */
struct model_point {
	struct model_shape shape;
	double target;
};

/* The name of parameter @p ("flow_iops", ...), its physical meaning. */
const char *model_param_name(enum model_param p);
const char *model_param_meaning(enum model_param p);

/*
 * The figure of @s under @m (IOPS, or MiB/s when s->mibps), published
 * units.  *flows (may be NULL) gets the connections carrying I/O.
 * Returns 0, or -EINVAL for a shape with a zero count or too large to
 * model (more than 4,096 streams).
 */
int model_predict(const struct model_params *m, const struct model_shape *s,
		  double *figure, unsigned *flows);

/*
 * Fits the MODEL_NPARAMS parameters of @m to the @n points (1 to
 * MODEL_FIT_MAX); m->volume_mibps is kept.  Returns 0 with *rms_log (may
 * be NULL) the root mean square of ln(model / target), or -EINVAL (no
 * points, too many, a target not above 0, a shape the model refuses).
 */
int model_fit(const struct model_point *pts, size_t n, struct model_params *m,
	      double *rms_log);

#endif
