// SPDX-License-Identifier: Apache-2.0
/*
 * vm: the ceiling of one emulated VM (see struct dvm in fleet_int.h), a
 * token bucket refilled at spec.vm_iops.  Its VMDKs live on one host,
 * hence on one loop: no lock.  A VMDK that finds the bucket empty stops
 * issuing; the wake-up timer (its callback job.c's job_vm_wake_cb, so the
 * bucket knows nothing of jobs) kicks every VMDK of the VM, round-robin,
 * when the next token is due.
 */
#include <math.h>

#include "nfsd/base/base.h"
#include "perf/dsload/clock.h"
#include "perf/dsload/fleet_int.h"

/* A phase starts with 10 ms of rate, as the server's buckets (burst_ms);
 * the bucket holds 50 ms more, as the server's flows do (docs/pools.md,
 * "Late loops keep their tokens"): when dsload's own loop runs late on a
 * busy machine, the VM gets back the tokens of the time it was away, and
 * its ceiling stays its ceiling. */
#define VM_BURST_NS (10 * DSLOAD_NS_PER_MS)
#define VM_DEPTH_NS (60 * DSLOAD_NS_PER_MS)

void vm_phase_start(struct dvm *vm, double iops, int64_t now_ns,
		    vm_wake_fn *wake_cb)
{
	vm->rate_per_ns = iops / (double)DSLOAD_NS_PER_S;
	vm->burst = fmax(1.0, vm->rate_per_ns * VM_DEPTH_NS);
	vm->tokens = fmax(1.0, vm->rate_per_ns * VM_BURST_NS);
	vm->last_ns = now_ns;
	ev_timer_init(&vm->wake, wake_cb, 0.0, 0.0);
}

void vm_phase_stop(struct dvm *vm)
{
	ev_timer_stop(vm->host->lp->loop, &vm->wake);
}

bool vm_admit(struct dvm *vm, int64_t now_ns)
{
	double wait_ns;

	if (vm->rate_per_ns <= 0) {
		return true;
	}
	if (now_ns > vm->last_ns) {
		vm->tokens = fmin(vm->burst,
				  vm->tokens + (double)(now_ns - vm->last_ns) *
						       vm->rate_per_ns);
		vm->last_ns = now_ns;
	}
	if (vm->tokens >= 1.0) {
		vm->tokens -= 1.0;
		return true;
	}
	if (!ev_is_active(&vm->wake)) {
		wait_ns = (1.0 - vm->tokens) / vm->rate_per_ns;
		ev_timer_set(&vm->wake, wait_ns / (double)DSLOAD_NS_PER_S, 0.0);
		ev_timer_start(vm->host->lp->loop, &vm->wake);
	}
	return false;
}
