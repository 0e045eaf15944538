/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fleet: the emulated ESXi fleet.  H hosts, each with its own loopback
 * source address (127.0.1.N, N = host index + 1), mount every datastore
 * and keep one TCP connection per datastore (nconnect: more, for
 * comparison); each host runs V VMs of K VMDKs, placed on the datastores
 * by a policy (placement.h), created over NFS as ESXi creates them
 * (vdisk.h).  A run is a list of phases (workloads) over the same fleet:
 * VMDKs, verification state and connections carry over from one phase
 * to the next, so a read phase checks what a write phase wrote.
 *
 * Threads: the hosts are dealt round-robin to `threads` libev loops, one
 * thread each, started per phase; the caller's thread prints progress.
 */
#ifndef DSLOAD_FLEET_H
#define DSLOAD_FLEET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nfs3_prot.h"
#include "perf/dsload/esxi.h"
#include "perf/dsload/rpcconn.h"
#include "perf/dsload/placement.h"
#include "perf/dsload/progress.h"
#include "perf/dsload/srvview.h"
#include "perf/dsload/stats.h"

/* 32 hosts x 32 datastores is the 1,000-flow scale test (docs/scale.md). */
#define FLEET_DS_MAX 64
#define FLEET_NAME_MAX 64
#define FLEET_HOSTS_MAX 254
#define FLEET_THREADS_MAX 64
#define FLEET_STOP_MAX 160
#define FLEET_VMDK_MIN (1024u * 1024u) /* and its unit */

struct fleet_spec {
	char server[FLEET_NAME_MAX]; /* IPv4 address of dsnfsd */
	uint16_t portmap_port; /* where to ask for the ports */
	uint16_t nfs_port; /* 0: ask the portmapper */
	uint16_t mount_port; /* 0: ask the portmapper */
	unsigned hosts, vms, vmdks; /* vms per host, vmdks per VM */
	unsigned ndatastores;
	char datastores[FLEET_DS_MAX][FLEET_NAME_MAX]; /* export names */
	enum place_policy policy;
	unsigned nconnect; /* connections per (host, datastore): nConnect */
	bool resvport; /* privileged source ports, as ESXi */
	unsigned threads; /* event loops */
	uint64_t vmdk_bytes; /* size of each flat file (thin) */
	int timeout_ms; /* setup calls; connect */
	int call_timeout_ms; /* an unanswered I/O: reconnect */
	int reconnect_ms; /* give up after this long down */
	/* ESXi's version, limits and timers (heartbeats, APD, .lck) */
	struct esxi_conf esxi;
	double vm_iops; /* ceiling of one VM, ops/s; 0: none */
	bool progress; /* one line per second on stderr */
};

struct workload {
	char name[48];
	uint32_t bs_bytes;
	unsigned read_pct, random_pct;
	unsigned iodepth; /* per VMDK */
	double ramp_s, run_s;
	enum stable_how stable; /* FILE_SYNC, or UNSTABLE + COMMIT */
	unsigned commit_every; /* UNSTABLE: COMMIT after this many */
	bool verify;
	bool one_pass; /* stop after bs-sized blocks covered once */
	uint64_t seed;
};

/* Connection events summed over the fleet during one phase. */
struct fleet_conn_counters {
	uint64_t breaks, reconnects, resent, timeouts;
	uint64_t heartbeats, heartbeat_failures, lck_refreshes;
};

/* What ESXi would have done with one datastore during a phase, over
 * every host that mounts it (esxi.h). */
struct fleet_esxi_ds {
	struct esxi_hb_counters hb; /* summed; outage_max_ns the longest */
	unsigned hosts_unavailable; /* in APD or down at the phase's end */
};

/* What one phase measured.  The arrays are owned (fleet_result_fini()). */
struct phase_result {
	struct workload w;
	struct place_shape shape;
	unsigned nconnect;
	unsigned flows; /* (host, datastore) pairs with I/O */
	char ds_names[FLEET_DS_MAX][FLEET_NAME_MAX];
	double window_s; /* the measured window, ramp excluded */
	size_t njobs;
	struct dstats *jobs; /* one per VMDK */
	struct dstats_key *keys;
	unsigned *job_disk; /* VMDK index in its VM */
	struct fleet_conn_counters conn;
	/* ESXi: its version, connections per host (after sharing), how
	 * many datastores share one, and each datastore's heartbeats */
	unsigned esxi_version;
	unsigned conns_per_host, shared_datastores;
	struct fleet_esxi_ds esxi[FLEET_DS_MAX];
	int fatal; /* 0, or the first job-stopping error */
	char fatal_msg[512];
	/* per job: why its generator stopped ("" when it did not), as
	 * "WRITE at 8388608: NFS3ERR_NOSPC" */
	char (*job_stop)[FLEET_STOP_MAX];
	struct srv_view server; /* the server's view; filled by the caller */
};

struct fleet;

/* Told, on the caller's thread, when the measured window of a phase
 * starts (@end false) and ends (@end true): for a --one-pass phase, when
 * it starts and when its last VMDK finishes.  It may block (an HTTP
 * request); the loops run on meanwhile. */
struct fleet_observer {
	void (*window)(void *arg, bool end, int64_t now_ns);
	void *arg;
};

/* Defaults: 127.0.0.1:111, 1 host x 1 VM x 1 VMDK on "ds1", one loop,
 * 256 MiB VMDKs, 5 s setup timeout, 30 s call timeout, 60 s reconnect,
 * .lck every 10 s, heartbeat every 12 s (ESXi's NFS.HeartbeatFrequency). */
void fleet_spec_default(struct fleet_spec *spec);

/* Defaults: 8 KiB, 100 % random, 50 % read, iodepth 16, 1 s ramp, 5 s
 * run, FILE_SYNC, commit every 64 writes when UNSTABLE, no verification. */
void workload_default(struct workload *w);

/* A name for @w ("8k-rand-r50"), written into w->name. */
void workload_name_set(struct workload *w);

/*
 * Builds the fleet of @spec (borrowed): finds the ports, mounts every
 * datastore from every host, opens the connections, creates every VMDK.
 * Returns 0 and *out (owned: fleet_free()), or -errno with the reason in
 * @errbuf (for example "127.0.0.1:111: portmapper: Connection refused").
 */
int fleet_new(const struct fleet_spec *spec, struct fleet **out, char *errbuf,
	      size_t errlen);

/*
 * Runs one phase of @w (borrowed) on every VMDK, telling @obs (borrowed,
 * may be NULL) the edges of its window.  Returns 0 with @res
 * filled (its arrays owned: fleet_result_fini()), or -errno for a phase
 * that could not start (bad workload, with the reason in @errbuf).  Job
 * failures (NFS errors, lost connections, mismatches) are results, not
 * return values: see res->fatal and the counters.
 */
int fleet_run(struct fleet *f, const struct workload *w,
	      const struct fleet_observer *obs, struct phase_result *res,
	      char *errbuf, size_t errlen);

void fleet_result_fini(struct phase_result *res);

/* Removes the .lck files, closes every connection, frees @f (takes). */
void fleet_free(struct fleet *f);

/* The client's running totals (all loops, ramp included), from any
 * thread: what the progress line and the server view compare with. */
void fleet_progress_sample(const struct fleet *f, struct progress_sample *s);

/* The server's WRITE verifier changes this fleet saw, over all phases. */
uint64_t fleet_verf_changes(const struct fleet *f);

#endif
