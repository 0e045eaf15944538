// SPDX-License-Identifier: Apache-2.0
/*
 * host: one emulated ESXi host.  It has its own source address, asks the
 * portmapper for the MOUNT and NFS ports (RFC 1833 3, GETPORT), mounts
 * every datastore (RFC 1813 5.2.1, MNT), reads FSINFO as ESXi does after
 * a mount, and keeps nConnect connections per datastore, shared past
 * SunRPC.MaxConnPerIP (esxi.h).  Two timers imitate ESXi's background
 * traffic: the heartbeat world (NFS.HeartbeatFrequency, 12 s: a GETATTR of
 * a datastore root that had no success for NFS.HeartbeatDelta, given up
 * after NFS.HeartbeatTimeout, feeding the APD state machine) and the
 * rewrite of every .lck file (NFS.DiskFileLockUpdateFreq, 10 s).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/base/base.h"
#include "perf/dsload/clock.h"
#include "perf/dsload/fleet_int.h"
#include "perf/dsload/pmapq.h"

static void host_hb_timeout_cb(struct ev_loop *loop, ev_timer *w, int revents);

/* One portmapper answer serves the reconnects of a host for this long. */
#define HOST_REDIRECT_FRESH_NS (200 * DSLOAD_NS_PER_MS)
/* A reconnect waits at most this long for the portmapper. */
#define HOST_REDIRECT_TIMEOUT_MS 1000

static void host_rpcconn_opts(const struct host *h,
			      const struct sockaddr_in *dst,
			      struct rpcconn_opts *o)
{
	const struct fleet_spec *spec = h->spec;

	rpcconn_opts_default(o);
	o->src = h->src;
	o->dst = *dst;
	o->machine = h->machine;
	o->connect_timeout_ms = spec->timeout_ms;
	o->call_timeout_ms = spec->call_timeout_ms;
	o->reconnect_ms = spec->reconnect_ms;
	o->resvport = spec->resvport;
}

static int host_getport(struct host *h, struct rpcconn *pm, uint32_t prog,
			uint32_t vers, uint16_t *port, char *errbuf,
			size_t errlen)
{
	pmap2_mapping m = {
		.prog = prog, .vers = vers, .prot = PMAP2_IPPROTO_TCP, .port = 0
	};
	u_int res = 0;
	int err;

	err = nfsc_call_sync(pm, PMAP2_PROG, PMAP2_VERS, PMAP2PROC_GETPORT,
			     (xdrproc_t)xdr_pmap2_mapping, &m,
			     (xdrproc_t)xdr_u_int, &res, h->spec->timeout_ms);
	if (err) {
		snprintf(errbuf, errlen, "%s:%u: portmapper GETPORT: %s",
			 h->spec->server, h->spec->portmap_port,
			 strerror(-err));
		return err;
	}
	if (res == 0 || res > 65535) {
		snprintf(errbuf, errlen,
			 "%s:%u: portmapper: program %u version %u over TCP "
			 "is not registered",
			 h->spec->server, h->spec->portmap_port, prog, vers);
		return -EPROTONOSUPPORT;
	}
	*port = (uint16_t)res;
	return 0;
}

/* Fills h->nfs and h->mount, through the portmapper where not given. */
static int host_ports(struct host *h, char *errbuf, size_t errlen)
{
	const struct fleet_spec *spec = h->spec;
	uint16_t nfs_port = spec->nfs_port, mount_port = spec->mount_port;
	struct sockaddr_in pm_addr = h->nfs;
	struct rpcconn_opts o;
	struct rpcconn pm;
	int err = 0;

	if (!nfs_port || !mount_port) {
		pm_addr.sin_port = htons(spec->portmap_port);
		host_rpcconn_opts(h, &pm_addr, &o);
		err = rpcconn_open(&pm, h->lp->loop, &o);
		if (err) {
			snprintf(errbuf, errlen, "%s:%u: portmapper: %s",
				 spec->server, spec->portmap_port,
				 strerror(-err));
			return err;
		}
		if (!mount_port) {
			err = host_getport(h, &pm, MOUNT_PROGRAM, MOUNT_V3,
					   &mount_port, errbuf, errlen);
		}
		if (!err && !nfs_port) {
			err = host_getport(h, &pm, NFS_PROGRAM, NFS_V3,
					   &nfs_port, errbuf, errlen);
		}
		rpcconn_close(&pm);
		if (err) {
			return err;
		}
	}
	h->nfs.sin_port = htons(nfs_port);
	h->mount = h->nfs;
	h->mount.sin_port = htons(mount_port);
	return 0;
}

static const char *host_mountstat_name(mountstat3 st)
{
	switch (st) {
	case MNT3ERR_NOENT:
		return "no such export (MNT3ERR_NOENT)";
	case MNT3ERR_ACCES:
		return "this host may not mount it (MNT3ERR_ACCES)";
	case MNT3ERR_PERM:
		return "MNT3ERR_PERM";
	case MNT3ERR_NOTDIR:
		return "MNT3ERR_NOTDIR";
	default:
		break;
	}
	return "MNT3ERR (other)";
}

static int host_mnt(struct host *h, struct rpcconn *mc, struct dsmount *m,
		    char *errbuf, size_t errlen)
{
	char path[FLEET_NAME_MAX + 2];
	char *dirpath = path;
	mountres3 res;
	int err;

	snprintf(path, sizeof(path), "/%s", m->name);
	memset(&res, 0, sizeof(res));
	err = nfsc_call_sync(mc, MOUNT_PROGRAM, MOUNT_V3, MOUNTPROC3_MNT,
			     (xdrproc_t)xdr_dirpath, &dirpath,
			     (xdrproc_t)xdr_mountres3, &res,
			     h->spec->timeout_ms);
	if (err) {
		snprintf(errbuf, errlen, "%s: MNT %s: %s", h->addr, path,
			 strerror(-err));
		return err;
	}
	if (res.fhs_status != MNT3_OK) {
		snprintf(errbuf, errlen, "%s: MNT %s: refused: %s", h->addr,
			 path, host_mountstat_name(res.fhs_status));
		err = -EACCES;
	} else {
		fhandle3 *fh = &res.mountres3_u.mountinfo.fhandle;

		err = nfsc_fh_set(&m->root, fh->fhandle3_val, fh->fhandle3_len);
		if (err) {
			snprintf(errbuf, errlen, "%s: MNT %s: handle too long",
				 h->addr, path);
		}
	}
	xdr_free((xdrproc_t)xdr_mountres3, (char *)&res);
	return err;
}

static int host_fsinfo(struct host *h, struct dsmount *m, char *errbuf,
		       size_t errlen)
{
	FSINFO3args a = { .fsroot = nfsc_fh3(&m->root) };
	FSINFO3res res;
	int err;

	memset(&res, 0, sizeof(res));
	err = nfsc_call_sync(m->conns[0], NFS_PROGRAM, NFS_V3, NFSPROC3_FSINFO,
			     (xdrproc_t)xdr_FSINFO3args, &a,
			     (xdrproc_t)xdr_FSINFO3res, &res,
			     h->spec->timeout_ms);
	if (err) {
		snprintf(errbuf, errlen, "%s: FSINFO /%s: %s", h->addr, m->name,
			 strerror(-err));
		return err;
	}
	if (res.status != NFS3_OK) {
		snprintf(errbuf, errlen, "%s: FSINFO /%s: %s", h->addr, m->name,
			 nfsc_status_name(res.status));
		err = -EIO;
	} else {
		m->rtmax = res.FSINFO3res_u.resok.rtmax;
		m->wtmax = res.FSINFO3res_u.resok.wtmax;
	}
	xdr_free((xdrproc_t)xdr_FSINFO3res, (char *)&res);
	return err;
}

/*
 * rpcconn_opts.redirect of an NFS connection whose port came from the
 * portmapper: a restarted server may listen on another port, so a
 * reconnect asks again.  When the portmapper does not answer, the port
 * known last stays (the server may be up without it).
 */
static void host_nfs_redirect(void *arg, struct sockaddr_in *dst)
{
	struct host *h = arg;
	int64_t now = dsload_now_ns();

	if (now - h->nfs_asked_ns >= HOST_REDIRECT_FRESH_NS) {
		struct sockaddr_in pm = h->nfs;
		int timeout_ms = h->spec->timeout_ms;
		uint16_t port;

		if (timeout_ms <= 0 || timeout_ms > HOST_REDIRECT_TIMEOUT_MS) {
			timeout_ms = HOST_REDIRECT_TIMEOUT_MS;
		}
		pm.sin_port = htons(h->spec->portmap_port);
		h->nfs_asked_ns = now;
		if (pmapq_getport(&h->src, &pm, NFS_PROGRAM, NFS_V3, timeout_ms,
				  &port) == 0 &&
		    port != ntohs(h->nfs.sin_port)) {
			fprintf(stderr,
				"dsload: %s: the portmapper moved NFS from "
				"port %u to %u\n",
				h->addr, ntohs(h->nfs.sin_port), port);
			h->nfs.sin_port = htons(port);
		}
	}
	dst->sin_port = h->nfs.sin_port;
}

/* Opens the host's NFS connections and hands each datastore its
 * nconnect of them, shared past SunRPC.MaxConnPerIP (esxi_conn_plan()). */
static int host_conns_open(struct host *h, char *errbuf, size_t errlen)
{
	const struct fleet_spec *spec = h->spec;
	unsigned nds = spec->ndatastores, nc = spec->nconnect, nconns;
	struct rpcconn_opts o;
	unsigned *map;
	int err = 0;

	map = calloc((size_t)nds * nc, sizeof(*map));
	if (!map) {
		return -ENOMEM;
	}
	nconns = esxi_conn_plan(&spec->esxi, nc, nds, map);
	h->shared_datastores = esxi_conn_shared(map, nc, nds, nconns);
	h->conns = calloc(nconns, sizeof(*h->conns));
	if (!h->conns) {
		free(map);
		return -ENOMEM;
	}
	host_rpcconn_opts(h, &h->nfs, &o);
	/* Fixed ports given by the user stay fixed. */
	if (!spec->nfs_port) {
		o.redirect = host_nfs_redirect;
		o.redirect_arg = h;
	}
	for (unsigned i = 0; i < nconns && !err; i++) {
		err = rpcconn_open(&h->conns[i], h->lp->loop, &o);
		if (err) {
			snprintf(errbuf, errlen, "%s -> %s:%u: NFS: %s",
				 h->addr, spec->server, ntohs(h->nfs.sin_port),
				 strerror(-err));
		} else {
			h->nconns++;
		}
	}
	for (unsigned d = 0; d < nds && !err; d++) {
		struct dsmount *m = &h->mounts[d];

		m->conns = calloc(nc, sizeof(*m->conns));
		if (!m->conns) {
			err = -ENOMEM;
			break;
		}
		for (unsigned i = 0; i < nc; i++) {
			m->conns[i] = &h->conns[map[d * nc + i]];
		}
		m->nconns = nc;
	}
	free(map);
	return err;
}

int host_setup(struct host *h, char *errbuf, size_t errlen)
{
	const struct fleet_spec *spec = h->spec;
	struct esxi_timers timers;
	struct rpcconn_opts o;
	struct rpcconn mc;
	int err;

	snprintf(h->addr, sizeof(h->addr), "127.0.1.%u", h->idx + 1);
	snprintf(h->machine, sizeof(h->machine), "esx%u", h->idx + 1);
	h->src.sin_family = AF_INET;
	inet_pton(AF_INET, h->addr, &h->src.sin_addr);
	h->nfs.sin_family = AF_INET;
	if (inet_pton(AF_INET, spec->server, &h->nfs.sin_addr) != 1) {
		snprintf(errbuf, errlen, "%s: not an IPv4 address",
			 spec->server);
		return -EINVAL;
	}
	/* The hosts' source addresses are loopback ones: so must be the
	 * server's, or connect() fails with a puzzling EINVAL. */
	if ((ntohl(h->nfs.sin_addr.s_addr) >> 24) != 127) {
		snprintf(errbuf, errlen,
			 "%s: dsload emulates hosts as loopback addresses "
			 "127.0.1.N; the server must listen on 127.0.0.0/8",
			 spec->server);
		return -EINVAL;
	}
	err = host_ports(h, errbuf, errlen);
	if (err) {
		return err;
	}
	h->mounts = calloc(spec->ndatastores, sizeof(*h->mounts));
	if (!h->mounts) {
		return -ENOMEM;
	}
	host_rpcconn_opts(h, &h->mount, &o);
	err = rpcconn_open(&mc, h->lp->loop, &o);
	if (err) {
		snprintf(errbuf, errlen, "%s -> %s:%u: MOUNT: %s", h->addr,
			 spec->server, ntohs(h->mount.sin_port),
			 strerror(-err));
		return err;
	}
	for (unsigned d = 0; d < spec->ndatastores && !err; d++) {
		h->mounts[d].host = h;
		h->mounts[d].ds = d;
		h->mounts[d].name = spec->datastores[d];
		err = host_mnt(h, &mc, &h->mounts[d], errbuf, errlen);
	}
	rpcconn_close(&mc);
	if (!err) {
		err = host_conns_open(h, errbuf, errlen);
	}
	esxi_timers_get(&spec->esxi, &timers);
	for (unsigned d = 0; d < spec->ndatastores && !err; d++) {
		err = host_fsinfo(h, &h->mounts[d], errbuf, errlen);
		esxi_hb_init(&h->mounts[d].hb, &timers, dsload_now_ns());
		ev_init(&h->mounts[d].hb_timeout, host_hb_timeout_cb);
	}
	return err;
}

struct rpcconn *host_mount_conn(struct dsmount *m)
{
	struct rpcconn *c = m->conns[m->rr];

	m->rr = m->rr + 1 == m->nconns ? 0 : m->rr + 1;
	return c;
}

/* ---- background traffic ------------------------------------------------- */

static void host_hb_done(struct rpcconn_call *call, int err,
			 const uint8_t *body, size_t len)
{
	struct dsmount *m = container_of(call, struct dsmount, hb_call);
	GETATTR3res res;

	ev_timer_stop(m->host->lp->loop, &m->hb_timeout);
	memset(&res, 0, sizeof(res));
	if (!err) {
		err = nfsc_decode(body, len, (xdrproc_t)xdr_GETATTR3res, &res);
	}
	if (!err && res.status != NFS3_OK) {
		err = -EIO;
	}
	esxi_hb_result(&m->hb, err == 0, dsload_now_ns());
}

/* NFS.HeartbeatTimeout: the GETATTR is given up and counts as failed. */
static void host_hb_timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct dsmount *m = container_of(w, struct dsmount, hb_timeout);

	(void)loop;
	(void)revents;
	if (m->hb_call.state != RPCCONN_CALL_IDLE) {
		rpcconn_cancel(m->conns[0], &m->hb_call);
	}
	esxi_hb_result(&m->hb, false, dsload_now_ns());
}

static void host_hb_send(struct dsmount *m, int64_t now)
{
	GETATTR3args a = { .object = nfsc_fh3(&m->root) };
	int len;

	m->hb_call.buf = m->hb_buf;
	m->hb_call.cap = sizeof(m->hb_buf);
	len = nfsc_encode(m->conns[0], &m->hb_call, NFS_PROGRAM, NFS_V3,
			  NFSPROC3_GETATTR, (xdrproc_t)xdr_GETATTR3args, &a);
	if (len <= 0 || rpcconn_submit(m->conns[0], &m->hb_call, (size_t)len,
				       host_hb_done)) {
		return;
	}
	esxi_hb_sent(&m->hb, now);
	ev_timer_set(&m->hb_timeout, dsload_ns_to_s(m->hb.t.timeout_ns), 0.0);
	ev_timer_start(m->host->lp->loop, &m->hb_timeout);
}

/* The heartbeat world: every HeartbeatFrequency, each datastore that
 * needs one gets a GETATTR of its root. */
static void host_hb_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct host *h = container_of(w, struct host, hb_timer);
	int64_t now = dsload_now_ns();

	(void)loop;
	(void)revents;
	for (unsigned d = 0; d < h->spec->ndatastores; d++) {
		struct dsmount *m = &h->mounts[d];

		if (esxi_hb_tick(&m->hb, now) && m->nconns &&
		    m->hb_call.state == RPCCONN_CALL_IDLE) {
			host_hb_send(m, now);
		}
	}
}

static void host_lck_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct host *h = container_of(w, struct host, lck_timer);

	(void)loop;
	(void)revents;
	for (size_t i = 0; i < h->njobs; i++) {
		vdisk_lck_refresh(h->jobs[i]);
	}
	h->lck_refreshes++;
}

void host_timers_start(struct host *h)
{
	struct esxi_timers t;

	esxi_timers_get(&h->spec->esxi, &t);
	ev_timer_init(&h->hb_timer, host_hb_timer_cb, 0.0,
		      dsload_ns_to_s(t.frequency_ns));
	ev_timer_init(&h->lck_timer, host_lck_timer_cb,
		      dsload_ns_to_s(t.lck_ns), dsload_ns_to_s(t.lck_ns));
	ev_timer_start(h->lp->loop, &h->hb_timer);
	ev_timer_start(h->lp->loop, &h->lck_timer);
}

void host_timers_stop(struct host *h)
{
	ev_timer_stop(h->lp->loop, &h->hb_timer);
	ev_timer_stop(h->lp->loop, &h->lck_timer);
	for (unsigned d = 0; d < h->spec->ndatastores; d++) {
		struct dsmount *m = &h->mounts[d];

		ev_timer_stop(h->lp->loop, &m->hb_timeout);
		/* Between phases nothing runs the loop: a heartbeat left on
		 * the wire is taken back, and counts as neither. */
		if (m->hb_call.state != RPCCONN_CALL_IDLE) {
			rpcconn_cancel(m->conns[0], &m->hb_call);
		}
		m->hb.inflight = false;
	}
}

void host_fini(struct host *h)
{
	if (h->mounts) {
		for (unsigned d = 0; d < h->spec->ndatastores; d++) {
			free(h->mounts[d].conns);
		}
		free(h->mounts);
		h->mounts = NULL;
	}
	for (unsigned i = 0; i < h->nconns; i++) {
		rpcconn_close(&h->conns[i]);
	}
	free(h->conns);
	h->conns = NULL;
	h->nconns = 0;
}
