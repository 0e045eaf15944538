/* SPDX-License-Identifier: Apache-2.0 */
/*
 * config: the config file and command line -> struct config.  The file is
 * INI (parsed by libinih):
 *
 *   [server]            listen, nfs_port, mount_port, portmap_port (or off),
 *                       workers, work_threads, group_commit,
 *                       state_dir, trace,
 *                       max_record_bytes, max_inflight_per_conn,
 *                       max_output_bytes_per_conn, max_conns,
 *                       max_conns_per_host, idle_timeout_ms,
 *                       record_timeout_ms, memory_trim_ms, file_cache_fds,
 *                       admin_listen,
 *                       admin_port (or off: the admin and metrics
 *                       endpoint, admin.h),
 *                       read_zero_copy (READ data by sendfile; at start),
 *                       nfs_udp (NFS over UDP on nfs_port too; at start),
 *                       read_zero_copy_min_bytes (smaller READs copy),
 *                       io_offload (off|auto: READ and UNSTABLE WRITE
 *                       of a pipelining connection on work threads)
 *   [datastore NAME]    path, clients (CIDR list, or "*" for everyone;
 *                       default: loopback only), read_only, secure
 *                       (default true), squash (none|root|all; default
 *                       root, as knfsd; ESXi needs none, for its hosts
 *                       only), anonuid, anongid,
 *                       fsid, snapshot_hourly, snapshot_daily,
 *                       snapshot_weekly, snapshot_monthly (policy.h);
 *                       backend (local|cephfs; default local) and,
 *                       for cephfs, ceph_conf, ceph_path, ceph_user
 *                       (default admin), ceph_fs, ceph_readahead_mib
 *                       (0-64, default 8)
 *
 * Sections this module does not know, and the keys of [datastore NAME] it
 * does not know (pool, quota, throughput_mibps), are handed to
 * config->section_hook (pools, traffic, admin), so their modules parse
 * their own keys.  A key nobody takes is an error naming its line.
 */
#ifndef DSNFS_CONFIG_H
#define DSNFS_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nfsd/export/export.h"
#include "nfsd/snap/policy.h"

#define CONFIG_MAX_DATASTORES 64
#define CONFIG_PORT_OFF (-1)
/* A cephfs datastore's readahead (store/readahead.h): default, most. */
#define CONFIG_CEPH_READAHEAD_MIB 8
#define CONFIG_CEPH_READAHEAD_MAX_MIB 64

/* Where a datastore's files live (backend = ...). */
enum config_backend {
	CONFIG_BACKEND_LOCAL = 0, /* path: a directory of this machine */
	CONFIG_BACKEND_CEPHFS = 1, /* ceph_path in the CephFS of ceph_conf */
};

struct config_datastore {
	char name[64];
	char path[4096];
	enum config_backend backend;
	char ceph_conf[4096]; /* a ceph.conf (cephfs) */
	char ceph_path[4096]; /* the CephFS directory served (cephfs) */
	char ceph_user[64]; /* client id, "admin" unless set */
	char ceph_fs[64]; /* file system name; "": the cluster's default */
	/* How far ahead of files read in order (MiB, 0: off; default 8) */
	uint32_t ceph_readahead_mib;
	/* The lines that set these keys (0: not set), so that a check made
	 * once the section is read names the key's own line. */
	int path_line, backend_line, ceph_line, intent_log_line;
	struct export_client clients[EXPORT_MAX_CLIENTS];
	size_t nclients;
	/* No clients key: the list is loopback only (the default). */
	bool clients_default;
	/* clients = "*": everyone (nclients 0). */
	bool everyone;
	bool read_only;
	/* The snapshots' .snapshot directory is seen over NFS (snap.h). */
	bool snapshot_dir;
	bool secure; /* privileged client ports only */
	enum export_squash squash;
	uint32_t anon_uid, anon_gid;
	uint32_t fsid; /* 0: derived from the name */
	/* "": the [server] intent log if any; "off": none; else its own
	 * log at this path (read at start, or when a reload adds it);
	 * cephfs: "rados", a log in the cluster (store/cephfs/cephfs_rlog.h).
	 */
	char intent_log[4096];
	/* cephfs with intent_log = rados: the gateway's name in the log's
	 * object ("": this host's name); a gateway that takes over another's
	 * datastore names the other's log with it. */
	char intent_log_gateway[64];
	/* VMFS's zeroing of a block on its first write
	 * (store/local/local_int.h), for the zeroing lab; off by default. */
	bool zero_on_first_write;
	/* snapshot_hourly .. snapshot_monthly (nfsd/snap/policy.h): the
	 * schedules the server snapshots the datastore on. */
	struct snap_policy policy;
};

/* Called for every key config.c does not know.  Returns 0 (taken),
 * -ENOENT (not a key of any module: "unknown key"), or -EINVAL with a
 * message in errbuf. */
typedef int (*config_section_fn)(void *arg, const char *section,
				 const char *key, const char *value,
				 char *errbuf, size_t errlen);

struct config {
	char listen[64];
	int nfs_port; /* 0: any free port, printed at start */
	int mount_port; /* 0: any */
	int portmap_port; /* CONFIG_PORT_OFF: no portmapper at all */
	unsigned workers; /* event loops; 0: one per core */
	/* 0 (the default): config_work_threads() picks. */
	unsigned work_threads;
	/* Concurrent stable writes of one file share one sync (true). */
	bool group_commit;
	/* Stable writes go to an intent log (store.h store_ilog_open): the
	 * log shared by the datastores that name none of their own; "":
	 * none.  Its ring size and checkpoint interval serve every log. */
	char intent_log[4096];
	uint32_t intent_log_mib;
	uint32_t intent_log_checkpoint_ms;
	/* Stable writes of at least this many bytes (intent_log_inplace_
	 * min_bytes, alias intent_log_immediate_max_bytes), and those of at
	 * least seq_min that start where their file's last write ended, are
	 * synced in their file, not copied into the log
	 * (store_ilog_set_inplace); 0: that rule is off. */
	uint32_t intent_log_inplace_min_bytes;
	uint32_t intent_log_inplace_seq_min_bytes;
	/* In-place writes over written blocks go O_DIRECT with RWF_DSYNC
	 * (store_ilog_set_inplace_direct); default on. */
	bool intent_log_inplace_direct;
	/* Those of parked WRITEs through an io_uring of the log's, not a
	 * work thread (store_ilog_set_inplace_uring); default on. */
	bool intent_log_inplace_uring;
	char state_dir[4096];
	bool trace;
	uint32_t max_record_bytes;
	uint32_t max_inflight_per_conn;
	uint32_t max_output_bytes_per_conn;
	uint32_t max_conns;
	uint32_t max_conns_per_host;
	uint32_t idle_timeout_ms; /* 0: idle connections stay */
	uint32_t record_timeout_ms; /* a started record must end by then */
	uint32_t memory_trim_ms; /* quiet loops give memory back; 0: never */
	/* Descriptors for all the exports' open-file caches; 0: what
	 * RLIMIT_NOFILE leaves after the connections (nfsd/server/fd_budget.c).
	 */
	uint32_t file_cache_fds;
	bool read_zero_copy; /* READ data from the file to the socket */
	bool nfs_udp; /* NFS over UDP too, on nfs_port */
	uint32_t read_zero_copy_min_bytes; /* smaller READs are copied */
	bool io_offload_auto; /* [server] io_offload = auto (dispatch.h) */
	char admin_listen[64]; /* the admin endpoint: loopback by default */
	int admin_port; /* 0: any; CONFIG_PORT_OFF: no endpoint */
	struct config_datastore datastores[CONFIG_MAX_DATASTORES];
	size_t ndatastores;

	config_section_fn section_hook; /* may be NULL */
	void *section_hook_arg;
};

/* Fills @cfg with the built-in defaults (no datastores). */
void config_defaults(struct config *cfg);

/*
 * Reads an INI file into @cfg (on top of what it holds).  Returns 0, or
 * -EINVAL / -errno with "FILE:LINE: what is wrong" in errbuf.
 */
int config_load_file(struct config *cfg, const char *path, char *errbuf,
		     size_t errlen);

/* Same, from a string (tests). @name stands for the file in messages. */
int config_load_string(struct config *cfg, const char *name, const char *text,
		       char *errbuf, size_t errlen);

/* Adds a datastore from "NAME=DIR" (the -e option).  Returns 0 or -EINVAL
 * with the reason in errbuf. */
int config_add_export_arg(struct config *cfg, const char *arg, char *errbuf,
			  size_t errlen);

/*
 * The work threads to start: work_threads if set, else
 * CONFIG_WORK_THREADS_CEPHFS when a datastore of @cfg is on cephfs (there
 * every call, not only syncs, waits on a thread for a network round trip,
 * and a stable write holds its thread through its sync: 16 capped the
 * writes in flight at 8 and halved FILE_SYNC rates; docs/ceph.md "CPU per
 * I/O"; CONFIG_WORK_THREADS_RLOG when one of them logs in RADOS), else
 * CONFIG_WORK_THREADS_LOCAL.  Read once at start: a cephfs
 * datastore added by SIGHUP finds the threads the start made.
 */
#define CONFIG_WORK_THREADS_LOCAL 16
/* 128: 64 places per cephfs datastore, the 64 I/Os four ESXi hosts keep
 * in flight; with 32 places half of them waited (docs/ceph.md, "READ of a
 * cephfs datastore": FILE_SYNC 1.3-2.0x, reads 1.0-1.17x). */
#define CONFIG_WORK_THREADS_CEPHFS 128
/* With a cephfs datastore on a RADOS intent log: a stable write holds its
 * thread (and one of the datastore's work_threads / 2 places) until a log
 * write covers its record, so the places bound the records per log write.
 * 64 places let 16 hosts x 4 in flight share one: 30 records a write
 * instead of 15, 5,767 IOPS instead of 3,673 (docs/ceph.md). */
#define CONFIG_WORK_THREADS_RLOG 128
unsigned config_work_threads(const struct config *cfg);

/* Checks what single keys cannot: at least one datastore, unique names and
 * fsids, ports in range, and no local datastore's directory inside
 * another's (after realpath: the outer export would bypass the inner
 * one's rules).  Returns 0 or -EINVAL with a message. */
int config_validate(const struct config *cfg, char *errbuf, size_t errlen);

#endif
