/* SPDX-License-Identifier: Apache-2.0 */
/*
 * placement: which datastore each VMDK of the emulated fleet lives on.
 * VMs are numbered across the fleet (VM v of host h is h * vms + v).
 *
 *   one     every VMDK on the first datastore ("all on one datastore")
 *   spread  round-robin over VMDKs, each VM starting one datastore further
 *           than the previous: VMDK k of VM g on (g + k) mod D, so one VM's
 *           disks cover min(K, D) datastores and VMs with one disk each
 *           are spread over the datastores
 *   per-vm  every VMDK of VM g on datastore g mod D ("one per VM")
 */
#ifndef DSLOAD_PLACEMENT_H
#define DSLOAD_PLACEMENT_H

enum place_policy {
	PLACE_ONE = 0,
	PLACE_SPREAD,
	PLACE_PER_VM,
};

struct place_shape {
	unsigned hosts;
	unsigned vms; /* per host */
	unsigned vmdks; /* per VM */
	unsigned datastores; /* mounted by every host */
	enum place_policy policy;
};

/* Returns 0 and *out for "one", "spread" or "per-vm", else -EINVAL. */
int place_policy_parse(const char *name, enum place_policy *out);

const char *place_policy_name(enum place_policy policy);

/* The datastore (0 .. datastores - 1) of VMDK @disk of VM @vm of host
 * @host.  The shape has no zero count. */
unsigned place_datastore(const struct place_shape *s, unsigned host,
			 unsigned vm, unsigned disk);

/* Flows that carry I/O: distinct (host, datastore) pairs holding at least
 * one VMDK (each is one TCP connection, or nconnect of them). */
unsigned place_flows(const struct place_shape *s);

#endif
