/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fleet_int.h: the fleet's moving parts, shared by fleet.c (threads and
 * phases), host.c (ports, mounts, connections, timers), vdisk.c (VMDKs
 * over NFS) and job.c (one VMDK's I/O engine).  Nothing here is used
 * outside perf/dsload.
 */
#ifndef DSLOAD_FLEET_INT_H
#define DSLOAD_FLEET_INT_H

#include <ev.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>

#include "perf/dsload/esxi.h"
#include "perf/dsload/rpcconn.h"
#include "perf/dsload/fleet.h"
#include "perf/dsload/iogen.h"
#include "perf/dsload/nfsc.h"
#include "perf/dsload/stats.h"

struct host;
struct job;

/* Live totals one loop publishes for the progress line (relaxed). */
struct dloop_progress {
	_Atomic uint64_t ops[DSTATS_DIRS];
	_Atomic uint64_t bytes[DSTATS_DIRS];
	_Atomic uint64_t lat_ns;
	_Atomic uint64_t errors;
	_Atomic uint64_t mismatches;
};

/* One event loop and the hosts dealt to it. */
struct dloop {
	struct fleet *fleet;
	struct ev_loop *loop;
	pthread_t thread;
	struct host **hosts;
	size_t nhosts;
	struct job **jobs;
	size_t njobs;
	size_t active_jobs; /* jobs of the phase not yet done */
	ev_timer end_timer; /* the end of the phase's window */
	int err; /* setup: the first failure */
	char errmsg[256];
	struct dloop_progress progress;
};

/* One datastore as one host mounted it. */
struct dsmount {
	struct host *host;
	unsigned ds;
	const char *name; /* borrowed from the spec */
	struct nfsc_fh root;
	uint32_t rtmax, wtmax;
	/* nconnect of the host's connections (shared with other
	 * datastores past SunRPC.MaxConnPerIP) */
	struct rpcconn **conns;
	unsigned nconns;
	unsigned rr; /* next connection for a new I/O */
	struct rpcconn_call hb_call;
	uint8_t hb_buf[512];
	struct esxi_hb hb; /* heartbeats and APD, as ESXi keeps them */
	ev_timer hb_timeout; /* NFS.HeartbeatTimeout of the one in flight */
};

struct host {
	unsigned idx;
	struct dloop *lp;
	const struct fleet_spec *spec;
	char addr[16]; /* 127.0.1.N */
	char machine[32];
	struct sockaddr_in src;
	struct sockaddr_in nfs, mount;
	/* When the portmapper was last asked for the NFS port on a
	 * reconnect: the host's connections break together and share one
	 * answer (host.c). */
	int64_t nfs_asked_ns;
	struct dsmount *mounts; /* one per datastore */
	struct rpcconn *conns; /* the NFS connections (esxi_conn_plan()) */
	unsigned nconns;
	unsigned shared_datastores; /* that share a connection */
	struct dvm *vms; /* spec.vms of them */
	struct job **jobs;
	size_t njobs;
	ev_timer hb_timer, lck_timer;
	uint64_t lck_refreshes;
};

/* An unstable write not yet covered by a COMMIT of the same verifier. */
struct job_unc {
	uint64_t off_bytes;
	uint32_t len;
	uint32_t gen;
};

enum job_io_kind {
	JOB_IO_READ = 0,
	JOB_IO_WRITE,
	JOB_IO_COMMIT,
};

struct job_io {
	struct rpcconn_call call;
	struct job *job;
	struct rpcconn *conn;
	enum job_io_kind kind;
	uint64_t off_bytes;
	uint32_t len;
	uint32_t gen;
	bool resend;
	size_t commit_mark; /* COMMIT: uncommitted entries it covers */
	uint32_t verf_epoch; /* COMMIT: the verifier epoch it was sent in */
	bool busy;
	int64_t start_ns;
	int next_free; /* free list */
};

enum job_state {
	JOB_IDLE = 0, /* between phases */
	JOB_RUNNING, /* issuing I/O */
	JOB_DRAINING, /* no new I/O: in-flight, resends, final COMMIT */
	JOB_DONE,
};

/*
 * One VM: the VMDKs that share its ceiling.  A guest's vCPUs and virtual
 * SCSI adapter cap what one VM can issue whatever the storage does (the
 * source's V3: one 16-vCPU VM over 8 datastores stops at 147,000 IOPS
 * while a host reaches 200,000).  With spec.vm_iops set, each new I/O of
 * the VM's VMDKs takes a token from this bucket first.
 */
struct dvm {
	struct host *host;
	double rate_per_ns; /* tokens per ns; 0: no ceiling */
	double burst; /* bucket depth (VM_DEPTH_NS), at least one token */
	double tokens;
	int64_t last_ns;
	ev_timer wake; /* a token is due: kick the VMDKs again */
	struct job **jobs;
	size_t njobs;
	size_t rr; /* whom the next wake-up kicks first */
};

/* One VMDK and its I/O engine. */
struct job {
	size_t idx;
	struct dstats_key key;
	unsigned disk;
	struct host *host;
	struct dvm *vm;
	struct dsmount *mnt;
	char vm_name[32];
	char disk_name[64]; /* descriptor: vmN-diskK.vmdk */
	char flat_name[72]; /* vmN-diskK-flat.vmdk */
	char lck_name[32]; /* .lck-<fileid> */
	struct nfsc_fh dir_fh, desc_fh, flat_fh, lck_fh;
	uint64_t file_id;
	bool fresh; /* the flat file was created by this fleet: holes are zeros
		     */
	uint64_t size_bytes;
	uint32_t *unit_gen; /* per VTAG unit, when verifying */
	size_t nunits;
	uint32_t gen_next;
	/* the phase */
	const struct workload *w;
	enum job_state state;
	struct iogen gen;
	struct iogen_op next_op;
	bool have_next_op;
	uint64_t issued;
	struct job_io *ios;
	unsigned nios;
	int free_head;
	unsigned inflight; /* I/Os and COMMITs on the wire */
	unsigned inflight_rw; /* of which READ / WRITE */
	int64_t t0_ns, ramp_end_ns, end_ns, done_ns;
	struct dstats stats;
	struct job_unc *unc; /* uncommitted unstable writes, in order */
	size_t nunc, unc_cap;
	struct job_unc *resq; /* writes to send again */
	size_t nresq, iresq, resq_cap;
	uint8_t verf[NFS3_WRITEVERFSIZE];
	bool have_verf;
	uint32_t verf_epoch; /* bumped at each verifier change */
	bool commit_inflight;
	unsigned writes_since_commit;
	unsigned final_commits;
	int fatal;
	char fatal_msg[FLEET_STOP_MAX];
	unsigned mismatch_prints;
	/* .lck refresh */
	struct rpcconn_call lck_call;
	uint8_t lck_buf[512];
	uint32_t lck_gen;
	uint64_t lck_failures;
};

/* ---- host.c ---------------------------------------------------------------
 */

/* Ports, mounts (MNT + FSINFO) and connections of @h, synchronously on
 * its loop.  Returns 0, or -errno with the reason in @errbuf. */
int host_setup(struct host *h, char *errbuf, size_t errlen);

/* Starts / stops the heartbeat and .lck refresh timers. */
void host_timers_start(struct host *h);
void host_timers_stop(struct host *h);

/* The connection the next I/O of @m goes on (round-robin). */
struct rpcconn *host_mount_conn(struct dsmount *m);

/* Closes @h's connections and frees what it holds (not @h). */
void host_fini(struct host *h);

/* ---- vdisk.c --------------------------------------------------------------
 */

/* Creates @j's VM folder, descriptor, thin flat file and .lck file on its
 * datastore, as ESXi does.  Returns 0 or -errno with @errbuf. */
int vdisk_create(struct job *j, char *errbuf, size_t errlen);

/* Rewrites @j's .lck record (asynchronous; skipped while one is on the
 * wire). */
void vdisk_lck_refresh(struct job *j);

/* Removes @j's .lck file (synchronous; skipped when the connection is
 * not up; errors are ignored: the fleet is going away). */
void vdisk_lck_remove(struct job *j);

/*
 * The descriptor of a thin "vmfs" disk of @size_bytes whose extent is
 * @flat_name, into @buf.  Returns its length, or -ENOSPC.
 */
int vdisk_descriptor_format(char *buf, size_t len, const char *flat_name,
			    uint64_t size_bytes, uint32_t cid);

/* ---- job.c ----------------------------------------------------------------
 */

/* Allocates @j's per-phase state for @w and starts it: iodepth I/Os at
 * once.  Returns 0, -EINVAL (a block size that does not fit) or
 * -ENOMEM. */
int job_start(struct job *j, const struct workload *w, int64_t t0_ns);

/* The window has ended: no new I/O; drain, resend, commit. */
void job_stop(struct job *j);

/* Frees @j's per-phase state (after its loop stopped). */
void job_phase_fini(struct job *j);

/* Frees what @j holds. */
void job_fini(struct job *j);

/* The wake-up timer of a VM (vm_phase_start()): a token is due, so every
 * VMDK of the VM issues what it may, starting with the next in turn. */
void job_vm_wake_cb(struct ev_loop *loop, ev_timer *w, int revents);

/* ---- vm.c -------------------------------------------------------------------
 */

typedef void vm_wake_fn(struct ev_loop *loop, ev_timer *w, int revents);

/* Fills @vm's bucket for a phase: @iops per second (0: no ceiling);
 * @wake_cb runs when an empty bucket has a token again. */
void vm_phase_start(struct dvm *vm, double iops, int64_t now_ns,
		    vm_wake_fn *wake_cb);

/* Stops @vm's wake-up timer. */
void vm_phase_stop(struct dvm *vm);

/* Takes a token for one new I/O: true, or false with the wake-up timer
 * armed for when the next one is due. */
bool vm_admit(struct dvm *vm, int64_t now_ns);

#endif
