// SPDX-License-Identifier: Apache-2.0
/*
 * server: assembly and teardown of a running dsnfsd.  Order matters on the
 * way down: stop listening and the loops first, then the blocking-work
 * threads (which hand back what they still ran), then the services and the
 * stores they borrow, then the traffic model and the pools (the flows of
 * the last connections report to them until the loops' memory is gone).
 */
#include "nfsd/server/server.h"

#include <errno.h>
#include <ev.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nfsd/base/base.h"
#include "nfsd/admin/ops_engine.h"
#include "nfsd/base/log.h"
#include "nfsd/export/export.h"
#include "nfsd/portmap/portmap.h"
#include "nfsd/rpc/drc.h"
#include "nfsd/rpc/work.h"
#include "nfsd/server/server_int.h"
#include "nfsd/store/store.h"

/* The host's short name, cut at the first dot, with every character a
 * RADOS object name of ours does not take made a '-' ("gateway" when
 * there is none). */
static void server_hostname(char *out, size_t outlen)
{
	char host[256] = "";

	if (gethostname(host, sizeof(host) - 1) != 0 || !host[0]) {
		snprintf(host, sizeof(host), "gateway");
	}
	host[strcspn(host, ".")] = '\0';
	for (char *c = host; *c; c++) {
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWX"
			    "YZ"
			    "0123456789-_",
			    *c)) {
			*c = '-';
		}
	}
	snprintf(out, outlen, "%s", host);
}

static int server_mkdir_p(const char *path)
{
	char buf[4096];
	size_t len = strlen(path);

	if (len == 0 || len >= sizeof(buf)) {
		return -EINVAL;
	}
	memcpy(buf, path, len + 1);
	for (size_t i = 1; i <= len; i++) {
		if (buf[i] != '/' && buf[i] != '\0') {
			continue;
		}
		char saved = buf[i];
		buf[i] = '\0';
		if (mkdir(buf, 0700) < 0 && errno != EEXIST) {
			return -errno;
		}
		buf[i] = saved;
	}
	return 0;
}

static int server_open_exports(struct server *srv, const struct config *cfg,
			       char *errbuf, size_t errlen)
{
	int err = server_mkdir_p(cfg->state_dir);

	if (err) {
		snprintf(errbuf, errlen, "state_dir %s: %s", cfg->state_dir,
			 strerror(-err));
		return err;
	}
	snprintf(srv->state_dir, sizeof(srv->state_dir), "%s", cfg->state_dir);
	srv->group_commit = cfg->group_commit;
	srv->ilog_ring_bytes = (uint64_t)cfg->intent_log_mib << 20;
	srv->ilog_checkpoint_ms = cfg->intent_log_checkpoint_ms;
	srv->ilog_inplace_min = cfg->intent_log_inplace_min_bytes;
	srv->ilog_inplace_seq_min = cfg->intent_log_inplace_seq_min_bytes;
	srv->ilog_inplace_direct = cfg->intent_log_inplace_direct;
	srv->ilog_inplace_uring = cfg->intent_log_inplace_uring;
	server_hostname(srv->hostname, sizeof(srv->hostname));
	return server__exports_open(srv, cfg, errbuf, errlen);
}

static int server_open_services(struct server *srv, const struct config *cfg)
{
	int err = nfs3_service_init(&srv->nfs3, &srv->exports);

	if (err) {
		return err;
	}
	srv->nfs3.read_zero_copy = cfg->read_zero_copy;
	srv->nfs3.read_zero_copy_min_bytes = cfg->read_zero_copy_min_bytes;
	err = admin__ops_new(&srv->ops);
	if (err) {
		return err;
	}
	srv->nfs3.ops = srv->ops;
	nfs3_program_init(&srv->nfs3_prog, &srv->nfs3);
	err = mount_service_new(&srv->exports, &srv->mount);
	if (err) {
		return err;
	}
	mount_program_init(&srv->mount_prog, srv->mount);
	err = portmap_registry_new(&srv->portmap);
	if (err) {
		return err;
	}
	portmap_program_init(&srv->portmap_prog, srv->portmap);
	portmap_rpcb_program_init(&srv->rpcb3_prog, srv->portmap, 3);
	portmap_rpcb_program_init(&srv->rpcb4_prog, srv->portmap, 4);

	server__trace_set(srv, cfg->trace);
	rpc_dispatcher_add(&srv->dispatcher, &srv->nfs3_prog);
	rpc_dispatcher_add(&srv->dispatcher, &srv->mount_prog);
	rpc_dispatcher_add(&srv->dispatcher, &srv->portmap_prog);
	rpc_dispatcher_add(&srv->dispatcher, &srv->rpcb3_prog);
	rpc_dispatcher_add(&srv->dispatcher, &srv->rpcb4_prog);
	rpc_dispatcher_add(&srv->udp_dispatcher, &srv->mount_prog);
	rpc_dispatcher_add(&srv->udp_dispatcher, &srv->portmap_prog);
	rpc_dispatcher_add(&srv->udp_dispatcher, &srv->rpcb3_prog);
	rpc_dispatcher_add(&srv->udp_dispatcher, &srv->rpcb4_prog);
	rpc_dispatcher_add(&srv->nfs_udp_dispatcher, &srv->nfs3_prog);
	err = rpc_work_pool_new(config_work_threads(cfg), &srv->work_pool);
	if (err) {
		return err;
	}
	srv->dispatcher.work_pool = srv->work_pool;
	/* NFS over UDP, as knfsd: its deferred work on the same threads,
	 * READ/WRITE within a datagram, no io_offload (no backlog) and no
	 * traffic admission (flows are TCP connections). */
	srv->nfs_udp_dispatcher.work_pool = srv->work_pool;
	/* A MNT of a cephfs datastore waits on its MDS (mount_offload): on
	 * these threads too, not on the main loop. */
	srv->udp_dispatcher.work_pool = srv->work_pool;
	srv->nfs_udp_dispatcher.max_payload_bytes = NFS3_UDP_MAX_PAYLOAD_BYTES;
	srv->dispatcher.io_offload =
		cfg->io_offload_auto ? RPC_IO_OFFLOAD_AUTO : RPC_IO_OFFLOAD_OFF;
	err = drc_new(DRC_DEFAULT_MAX_ENTRIES, DRC_DEFAULT_MAX_BYTES,
		      &srv->drc);
	if (err) {
		return err;
	}
	srv->dispatcher.drc = srv->drc;
	/* Retransmissions are UDP's normal case: the same cache. */
	srv->nfs_udp_dispatcher.drc = srv->drc;
	return 0;
}

static unsigned server_worker_count(const struct config *cfg)
{
	long n;

	if (cfg->workers) {
		return cfg->workers;
	}
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

/* Our own registrations, answered by the built-in portmapper or handed to
 * a running rpcbind. */
static void server_register_programs(struct server *srv)
{
	/* rpcbind refuses a mapping that exists: clear what a crashed run
	 * of ours may have left. */
	if (srv->ports.rpcbind) {
		portmap_rpcbind_unregister(NFS3_SERVICE_PROG,
					   NFS3_SERVICE_VERS);
		portmap_rpcbind_unregister(MOUNT_SERVICE_PROG,
					   MOUNT_SERVICE_VERS);
	}
	const struct {
		uint32_t prog, vers;
		int proto;
		int port;
	} regs[] = {
		{ PORTMAP_PROG, PORTMAP_VERS, IPPROTO_TCP, srv->ports.portmap },
		{ PORTMAP_PROG, PORTMAP_VERS, IPPROTO_UDP, srv->ports.portmap },
		{ NFS3_SERVICE_PROG, NFS3_SERVICE_VERS, IPPROTO_TCP,
		  srv->ports.nfs },
		{ NFS3_SERVICE_PROG, NFS3_SERVICE_VERS, IPPROTO_UDP,
		  srv->nfs_udp ? srv->ports.nfs : -1 },
		{ MOUNT_SERVICE_PROG, MOUNT_SERVICE_VERS, IPPROTO_TCP,
		  srv->ports.mount },
		{ MOUNT_SERVICE_PROG, MOUNT_SERVICE_VERS, IPPROTO_UDP,
		  srv->ports.mount },
	};

	for (size_t i = 0; i < ARRAY_SIZE(regs); i++) {
		if (regs[i].port <= 0) {
			continue;
		}
		if (srv->ports.rpcbind) {
			if (regs[i].prog == PORTMAP_PROG) {
				continue;
			}
			int err = portmap_rpcbind_register(
				regs[i].prog, regs[i].vers, regs[i].proto,
				(uint16_t)regs[i].port);
			if (err) {
				log_warn("portmap: rpcbind refused program %u "
					 "version %u: %s",
					 regs[i].prog, regs[i].vers,
					 strerror(-err));
			}
		} else {
			portmap_registry_set(srv->portmap, regs[i].prog,
					     regs[i].vers, regs[i].proto,
					     (uint16_t)regs[i].port);
		}
	}
}

static void server_unregister_programs(struct server *srv)
{
	if (!srv->ports.rpcbind) {
		return;
	}
	portmap_rpcbind_unregister(NFS3_SERVICE_PROG, NFS3_SERVICE_VERS);
	portmap_rpcbind_unregister(MOUNT_SERVICE_PROG, MOUNT_SERVICE_VERS);
}

static int server_listen(struct server *srv, const struct config *cfg,
			 char *errbuf, size_t errlen)
{
	int err;

	srv->ports.portmap = -1;
	srv->nfs_udp = cfg->nfs_udp;
	err = net_listen(&srv->net, cfg->listen, cfg->nfs_port, cfg->nfs_udp,
			 &srv->nfs_udp_dispatcher, &srv->ports.nfs);
	if (err) {
		snprintf(errbuf, errlen, "nfs port %s:%d: %s", cfg->listen,
			 cfg->nfs_port, strerror(-err));
		return err;
	}
	err = net_listen(&srv->net, cfg->listen, cfg->mount_port, true,
			 &srv->udp_dispatcher, &srv->ports.mount);
	if (err) {
		snprintf(errbuf, errlen, "mount port %s:%d: %s", cfg->listen,
			 cfg->mount_port, strerror(-err));
		return err;
	}
	if (cfg->portmap_port == CONFIG_PORT_OFF) {
		return 0;
	}
	err = net_listen(&srv->net, cfg->listen, cfg->portmap_port, true,
			 &srv->udp_dispatcher, &srv->ports.portmap);
	if (err == -EADDRINUSE && cfg->portmap_port == 111 &&
	    portmap_rpcbind_present()) {
		/* Share the machine's rpcbind rather than fight it. */
		log_info("portmap: port 111 belongs to a running rpcbind; "
			 "registering with it");
		srv->ports.rpcbind = true;
		srv->ports.portmap = 111;
		return 0;
	}
	if (err) {
		snprintf(errbuf, errlen, "portmap port %s:%d: %s", cfg->listen,
			 cfg->portmap_port, strerror(-err));
		return err;
	}
	return 0;
}

int server_open(const struct config *cfg, struct server_sections *sections,
		struct ev_loop *main_loop, struct server **out, char *errbuf,
		size_t errlen)
{
	struct server *srv = calloc(1, sizeof(*srv));
	struct net_limits limits = {
		.max_record_bytes = cfg->max_record_bytes,
		.max_inflight = cfg->max_inflight_per_conn,
		.max_output_bytes = cfg->max_output_bytes_per_conn,
		.max_conns = cfg->max_conns,
		.max_conns_per_host = cfg->max_conns_per_host,
		.idle_timeout_ms = cfg->idle_timeout_ms,
		.record_timeout_ms = cfg->record_timeout_ms,
		.memory_trim_ms = cfg->memory_trim_ms,
	};
	int err;

	if (!srv) {
		return -ENOMEM;
	}
	srv->fd_inputs = (struct server_fd_inputs){
		.max_conns = cfg->max_conns,
		.file_cache_fds = cfg->file_cache_fds,
		.loops = server_worker_count(cfg),
		.work_threads = config_work_threads(cfg),
	};
	err = server_open_exports(srv, cfg, errbuf, errlen);
	if (err) {
		goto fail;
	}
	err = server__quotas_open(srv, errbuf, errlen);
	if (err) {
		goto fail;
	}
	/* Cephfs datastores down at start: opened when their cluster
	 * answers, with their quotas now there to scan into. */
	err = server__recovery_start(srv);
	if (err) {
		snprintf(errbuf, errlen, "cannot start the recovery thread: %s",
			 strerror(-err));
		goto fail;
	}
	err = server__pools_open(srv, cfg->state_dir, sections, errbuf, errlen);
	if (err) {
		goto fail;
	}
	err = server_open_services(srv, cfg);
	if (err) {
		snprintf(errbuf, errlen, "cannot start services: %s",
			 strerror(-err));
		goto fail;
	}
	err = net_start(&srv->net, main_loop, &srv->dispatcher, &limits,
			server_worker_count(cfg));
	if (err) {
		snprintf(errbuf, errlen, "cannot start worker loops: %s",
			 strerror(-err));
		goto fail;
	}
	srv->net_started = true;
	/* Every NFS call over TCP is admitted by the traffic model. */
	srv->dispatcher.admission = net_admission_init(&srv->net, srv->traffic);
	/* Before any call can arrive (server_listen() refuses a bad one). */
	portmap_registry_set_listen(srv->portmap, cfg->listen);
	err = server_listen(srv, cfg, errbuf, errlen);
	if (err) {
		goto fail;
	}
	server_register_programs(srv);
	err = server__admin_start(srv, cfg, sections, errbuf, errlen);
	if (err) {
		goto fail;
	}
	*out = srv;
	return 0;
fail:
	server_close(srv);
	return err;
}

void server__trace_set(struct server *srv, bool on)
{
	/* The loops read the flag at every call, without a lock: one byte,
	 * stored atomically, is seen at their next call. */
	__atomic_store_n(&srv->dispatcher.trace, on, __ATOMIC_RELAXED);
	__atomic_store_n(&srv->udp_dispatcher.trace, on, __ATOMIC_RELAXED);
	__atomic_store_n(&srv->nfs_udp_dispatcher.trace, on, __ATOMIC_RELAXED);
}

struct server_ports server_ports(const struct server *srv)
{
	return srv->ports;
}

void server_close(struct server *srv)
{
	server__admin_stop(srv);
	server_unregister_programs(srv);
	if (srv->net_started) {
		net_stop(&srv->net);
	}
	if (srv->work_pool) {
		rpc_work_pool_free(srv->work_pool);
	}
	/* Stable WRITEs parked on an intent log come back as the work
	 * pool's do: before the loops' memory goes. */
	server__ilogs_drain(srv);
	if (srv->net_started) {
		net_free(&srv->net);
	}
	if (srv->drc) {
		drc_free(srv->drc);
	}
	if (srv->portmap) {
		portmap_registry_free(srv->portmap);
	}
	if (srv->mount) {
		mount_service_free(srv->mount);
	}
	/* No call and no request can start one now; a running clone stops
	 * here, before its store closes. */
	admin__ops_free(srv->ops);
	server__pools_close(srv);
	server__exports_close(srv);
	free(srv);
}
