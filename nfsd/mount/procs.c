// SPDX-License-Identifier: Apache-2.0
/*
 * procs: the procedures of MOUNT version 3 (RFC 1813 5.2: NULL, MNT, DUMP,
 * UMNT, UMNTALL, EXPORT), their table and their --trace summaries.  MNT
 * answers MNT3ERR_NOENT for a path that is not an export and MNT3ERR_ACCES
 * for a client the export's rules refuse; otherwise it returns the root
 * handle of the export's store and the flavors AUTH_SYS, AUTH_NONE.
 */
#include "nfsd/mount/mount_int.h"
#include "nfsd/proto/xdr_cstring.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/base/base.h"
#include "nfsd/base/log.h"
#include "nfsd/base/sockaddr.h"
#include "nfsd/proto/xdr_empty.h"
#include "nfsd/snap/snap.h"

/* A client rule as EXPORT lists it: "10.0.0.0/8", "fd00::1". */
#define MOUNT_GROUP_MAX (INET6_ADDRSTRLEN + sizeof("/128"))

/* MNT's result with the storage its pointers point to.  res comes first:
 * xdr_mountres3 encodes it from the start of the request's res storage. */
struct mount_mnt_res {
	mountres3 res;
	char fh[FHSIZE3];
	int flavors[2];
};

/* One EXPORT element with its groups and their names, allocated together. */
struct mount_export_node {
	struct exportnode node;
	struct groupnode groups[EXPORT_MAX_CLIENTS];
	char names[EXPORT_MAX_CLIENTS][MOUNT_GROUP_MAX];
};

_Static_assert(MOUNT_SERVICE_PROG == MOUNT_PROGRAM &&
		       MOUNT_SERVICE_VERS == MOUNT_V3,
	       "mount.h and mount3.x disagree");

static const char *mount_stat_name(mountstat3 stat)
{
	switch (stat) {
	case MNT3_OK:
		return "OK";
	case MNT3ERR_PERM:
		return "PERM";
	case MNT3ERR_NOENT:
		return "NOENT";
	case MNT3ERR_IO:
		return "IO";
	case MNT3ERR_ACCES:
		return "ACCES";
	case MNT3ERR_NOTDIR:
		return "NOTDIR";
	case MNT3ERR_INVAL:
		return "INVAL";
	case MNT3ERR_NAMETOOLONG:
		return "NAMETOOLONG";
	case MNT3ERR_NOTSUPP:
		return "NOTSUPP";
	case MNT3ERR_SERVERFAULT:
		return "SERVERFAULT";
	}
	return "?";
}

/* The caller's address without port (sockaddr.h: v4-mapped as IPv4, as
 * the export rules match it). */
static void mount_peer_host(const struct request *req, char *buf, size_t len)
{
	sockaddr_format_host((const struct sockaddr *)&req->peer, buf, len);
}

/* "/ds1" + "sub//dir/" -> "/ds1/sub/dir": one spelling per directory in
 * the mount list, whatever slashes the client sent. */
static void mount_canonical_path(const struct export *exp, const char *rest,
				 char *buf, size_t len)
{
	size_t pos = (size_t)snprintf(buf, len, "%s", exp->path);

	while (*rest && pos + 1 < len) {
		size_t n = strcspn(rest, "/");

		if (n > 0) {
			pos += (size_t)snprintf(buf + pos, len - pos, "/%.*s",
						(int)n, rest);
			if (pos >= len) {
				pos = len - 1;
			}
		}
		rest += n;
		while (*rest == '/') {
			rest++;
		}
	}
}

/* A store error as MNT's status.  -EAGAIN, a cephfs datastore whose
 * cluster does not answer now, has no MOUNT status of its own (MOUNT has
 * no JUKEBOX): SERVERFAULT, said in the log; the client mounts again. */
static mountstat3 mount_errno_stat(const struct export *exp, int err)
{
	switch (err) {
	case -EAGAIN:
		log_warn("mount: %s: its cluster does not answer now; MNT "
			 "refused, to be tried again",
			 exp->name);
		return MNT3ERR_SERVERFAULT;
	case -ENOENT:
	case -ESTALE:
		return MNT3ERR_NOENT;
	case -ENOTDIR:
		return MNT3ERR_NOTDIR;
	case -EACCES:
	case -EPERM:
		return MNT3ERR_ACCES;
	case -ENAMETOOLONG:
		return MNT3ERR_NAMETOOLONG;
	case -EIO:
		return MNT3ERR_IO;
	default:
		return MNT3ERR_SERVERFAULT;
	}
}

/* Whether @name in directory @dir is the datastore's ROOT/.snapshot. */
static bool mount_is_snapdir(const struct export *exp, struct store *st,
			     struct store_obj *dir, const char *name)
{
	struct store_attr a;

	if (strcmp(name, SNAP_DIR_NAME) != 0) {
		return false;
	}
	/* Unknown root (0) or no attributes: treat it as the root, so
	 * that the option is never bypassed. */
	return exp->root_fileid == 0 || store_getattr(st, dir, &a) != 0 ||
	       a.fileid == exp->root_fileid;
}

/*
 * The handle of @rest ("" or "sub/dir") inside @exp, walked one name at a
 * time with the store's lookup, which never follows a symlink and keeps
 * ".." at the root: a mount cannot leave its export.
 */
static mountstat3 mount_dir_fh(const struct export *exp, const char *rest,
			       bool snapshot_dir, struct store_fh *fh)
{
	struct store *st = export_store(exp);
	struct store_obj *obj, *next;
	struct store_attr attr;
	char name[STORE_NAME_MAX + 1];
	bool walked = false;
	int err;

	if (!st) {
		if (export_store_down(exp)) {
			log_error("mount: %s: its cluster has not answered "
				  "since start (tried again every few "
				  "seconds); refused",
				  exp->name);
		} else {
			log_error("mount: %s: export has no datastore",
				  exp->name);
		}
		return MNT3ERR_SERVERFAULT;
	}
	err = store_root(st, &obj);
	if (err) {
		log_error("mount: %s: cannot open the datastore root: %s",
			  exp->name, strerror(-err));
		return mount_errno_stat(exp, err);
	}
	while (*rest) {
		size_t len = strcspn(rest, "/");

		if (len > STORE_NAME_MAX) {
			store_obj_unref(st, obj);
			return MNT3ERR_NAMETOOLONG;
		}
		memcpy(name, rest, len);
		name[len] = '\0';
		rest += len;
		while (*rest == '/') {
			rest++;
		}
		/* The snapshot area is not there when snapshot_dir = false:
		 * not for MNT either (as LOOKUP and READDIR, nfs3/). */
		if (!snapshot_dir && mount_is_snapdir(exp, st, obj, name)) {
			store_obj_unref(st, obj);
			return MNT3ERR_NOENT;
		}
		err = store_lookup(st, obj, name, &next);
		store_obj_unref(st, obj);
		if (err) {
			return mount_errno_stat(exp, err);
		}
		obj = next;
		walked = true;
	}
	/* The root is a directory; a walked path must end at one. */
	err = walked ? store_getattr(st, obj, &attr) : 0;
	if (!err && walked && attr.type != STORE_DIR) {
		err = -ENOTDIR;
	}
	if (!err) {
		store_obj_fh(st, obj, fh);
	}
	store_obj_unref(st, obj);
	if (err) {
		return mount_errno_stat(exp, err);
	}
	if (fh->len == 0 || fh->len > FHSIZE3) {
		log_error("mount: %s: handle of %u bytes", exp->name, fh->len);
		return MNT3ERR_SERVERFAULT;
	}
	return MNT3_OK;
}

/* dirpath with no NUL inside: "/ds1\0junk" must not mount /ds1. */
static bool_t mount_xdr_dirpath(XDR *xdrs, dirpath *objp)
{
	return xdr_cstring(xdrs, objp, MNTPATHLEN);
}

static enum rpc_disposition mount_proc_null(struct request *req,
					    const void *args, void *res)
{
	(void)req;
	(void)args;
	(void)res;
	return RPC_REPLY;
}

static enum rpc_disposition mount_proc_mnt(struct request *req,
					   const void *args, void *res)
{
	const struct mount_service *svc = req->svc;
	const char *path = *(const dirpath *)args;
	struct mount_mnt_res *r = res;
	mountres3_ok *ok = &r->res.mountres3_u.mountinfo;
	char host[MOUNT_HOST_MAX];
	struct export_access acc;
	struct store_fh fh;
	struct export *exp;
	const char *rest = "";
	char canon[MNTPATHLEN + 1];
	mountstat3 stat;

	mount_peer_host(req, host, sizeof(host));
	exp = path ? export_find_by_prefix(svc->exports, path, &rest) : NULL;
	if (!exp) {
		r->res.fhs_status = MNT3ERR_NOENT;
		log_debug("mount: %s: MNT %s: no such export", host,
			  path ? path : "");
		return RPC_REPLY;
	}
	req->export_name = exp->name;
	if (export_access_get(svc->exports, exp,
			      (const struct sockaddr *)&req->peer, &acc)) {
		char why[256];

		r->res.fhs_status = MNT3ERR_ACCES;
		export_refusal_format(acc.refusal, exp->name,
				      (const struct sockaddr *)&req->peer, why,
				      sizeof(why));
		log_warn("mount: %s: MNT %s refused: %s", host, exp->path, why);
		return RPC_REPLY;
	}
	stat = mount_dir_fh(exp, rest, acc.snapshot_dir, &fh);
	r->res.fhs_status = stat;
	if (stat != MNT3_OK) {
		return RPC_REPLY;
	}
	memcpy(r->fh, fh.data, fh.len);
	ok->fhandle.fhandle3_len = fh.len;
	ok->fhandle.fhandle3_val = r->fh;
	/* AUTH_SYS first: clients take the first flavor they support. */
	r->flavors[0] = AUTH_SYS;
	r->flavors[1] = AUTH_NONE;
	ok->auth_flavors.auth_flavors_len = 2;
	ok->auth_flavors.auth_flavors_val = r->flavors;
	/* The list is informational: a full list costs the entry only. */
	mount_canonical_path(exp, rest, canon, sizeof(canon));
	(void)mount__list_add(req->svc, host, canon);
	log_info("mount: %s: mounted %s", host, canon);
	return RPC_REPLY;
}

static enum rpc_disposition mount_proc_dump(struct request *req,
					    const void *args, void *res)
{
	(void)args;
	if (mount__list_dump(req->svc, res) < 0) {
		/* DUMP has no error status; the client will retransmit. */
		return RPC_DROP;
	}
	return RPC_REPLY;
}

static void mount_dump_release(struct request *req, void *res)
{
	(void)req;
	mount__list_dump_free(*(mountlist *)res);
	*(mountlist *)res = NULL;
}

static enum rpc_disposition mount_proc_umnt(struct request *req,
					    const void *args, void *res)
{
	const struct mount_service *svc = req->svc;
	const char *path = *(const dirpath *)args;
	char host[MOUNT_HOST_MAX];
	char canon[MNTPATHLEN + 1];
	const char *rest;
	struct export *exp;

	(void)res;
	exp = path ? export_find_by_prefix(svc->exports, path, &rest) : NULL;
	if (!exp) {
		return RPC_REPLY;
	}
	req->export_name = exp->name;
	mount_peer_host(req, host, sizeof(host));
	mount_canonical_path(exp, rest, canon, sizeof(canon));
	if (mount__list_remove(req->svc, host, canon) == 0) {
		log_info("mount: %s: unmounted %s", host, canon);
	}
	return RPC_REPLY;
}

static enum rpc_disposition mount_proc_umntall(struct request *req,
					       const void *args, void *res)
{
	char host[MOUNT_HOST_MAX];
	size_t n;

	(void)args;
	(void)res;
	mount_peer_host(req, host, sizeof(host));
	n = mount__list_remove_host(req->svc, host);
	if (n) {
		log_info("mount: %s: unmounted all (%zu)", host, n);
	}
	return RPC_REPLY;
}

/* "ADDR" for a host rule, "ADDR/PREFIX" for a network. */
static void mount_group_format(const struct export_client *c, char *buf,
			       size_t len)
{
	char addr[INET6_ADDRSTRLEN];
	unsigned full = c->family == AF_INET ? 32 : 128;

	if (!inet_ntop(c->family, c->addr, addr, sizeof(addr))) {
		snprintf(addr, sizeof(addr), "?");
	}
	if (c->prefix_len >= full) {
		snprintf(buf, len, "%s", addr);
	} else {
		snprintf(buf, len, "%s/%u", addr, (unsigned)c->prefix_len);
	}
}

static enum rpc_disposition mount_proc_export(struct request *req,
					      const void *args, void *res)
{
	const struct mount_service *svc = req->svc;
	const struct export_table *tab = svc->exports;
	size_t count = export_table_count(tab);
	struct mount_export_node *nodes;
	exports *out = res;
	size_t i, g, live = 0;

	(void)args;
	*out = NULL;
	if (count == 0) {
		return RPC_REPLY;
	}
	nodes = calloc(count, sizeof(*nodes));
	if (!nodes) {
		/* EXPORT has no error status; the client will retransmit. */
		return RPC_DROP;
	}
	/* The client lists are options a SIGHUP may change: copied out
	 * under the table's lock. */
	export_table_read_lock(tab);
	for (i = 0; i < count; i++) {
		const struct export *exp = &tab->exports[i];
		struct mount_export_node *n = &nodes[live];
		size_t ngroups = exp->nclients;

		if (!export_is_live(exp)) {
			continue;
		}
		if (ngroups > EXPORT_MAX_CLIENTS) {
			ngroups = EXPORT_MAX_CLIENTS;
		}
		/* Borrowed: a path never changes and its slot outlives
		 * every request. */
		n->node.ex_dir = (char *)exp->path;
		for (g = 0; g < ngroups; g++) {
			mount_group_format(&exp->clients[g], n->names[g],
					   sizeof(n->names[g]));
			n->groups[g].gr_name = n->names[g];
			n->groups[g].gr_next =
				g + 1 < ngroups ? &n->groups[g + 1] : NULL;
		}
		n->node.ex_groups = ngroups ? &n->groups[0] : NULL;
		if (live) {
			nodes[live - 1].node.ex_next = &n->node;
		}
		live++;
	}
	export_table_read_unlock(tab);
	if (live == 0) {
		free(nodes);
		return RPC_REPLY;
	}
	/* Live exports fill nodes[0..live): the head is the allocation. */
	*out = &nodes[0].node;
	return RPC_REPLY;
}

static void mount_export_release(struct request *req, void *res)
{
	(void)req;
	/* node is the first member: the list head is the allocation. */
	free(*(exports *)res);
	*(exports *)res = NULL;
}

static void mount_trace_path(const struct request *req, const void *args,
			     const void *res, char *buf, size_t len)
{
	const char *path = *(const dirpath *)args;

	(void)req;
	(void)res;
	snprintf(buf, len, "path=%s", path ? path : "");
}

static void mount_trace_mnt_res(const struct request *req, const void *args,
				const void *res, char *buf, size_t len)
{
	const mountres3 *r = res;

	(void)req;
	(void)args;
	snprintf(buf, len, "status=%s", mount_stat_name(r->fhs_status));
}

static void mount_trace_dump_res(const struct request *req, const void *args,
				 const void *res, char *buf, size_t len)
{
	const struct mountbody *b;
	size_t n = 0;

	(void)req;
	(void)args;
	for (b = *(const mountlist *)res; b; b = b->ml_next) {
		n++;
	}
	snprintf(buf, len, "entries=%zu", n);
}

static void mount_trace_export_res(const struct request *req, const void *args,
				   const void *res, char *buf, size_t len)
{
	const struct exportnode *e;
	size_t n = 0;

	(void)req;
	(void)args;
	for (e = *(const exports *)res; e; e = e->ex_next) {
		n++;
	}
	snprintf(buf, len, "exports=%zu", n);
}

static const struct rpc_proc mount_procs[] = {
	[MOUNTPROC3_NULL] = { .name = "NULL",
			      .handler = mount_proc_null,
			      .decode = (xdrproc_t)xdr_empty,
			      .encode = (xdrproc_t)xdr_empty },
	[MOUNTPROC3_MNT] = { .name = "MNT",
			     .handler = mount_proc_mnt,
			     .decode = (xdrproc_t)mount_xdr_dirpath,
			     .encode = (xdrproc_t)xdr_mountres3,
			     .args_size = sizeof(dirpath),
			     .res_size = sizeof(struct mount_mnt_res),
			     .trace_args = mount_trace_path,
			     .trace_res = mount_trace_mnt_res },
	[MOUNTPROC3_DUMP] = { .name = "DUMP",
			      .handler = mount_proc_dump,
			      .release = mount_dump_release,
			      .decode = (xdrproc_t)xdr_empty,
			      .encode = (xdrproc_t)xdr_mountlist,
			      .res_size = sizeof(mountlist),
			      .trace_res = mount_trace_dump_res },
	[MOUNTPROC3_UMNT] = { .name = "UMNT",
			      .handler = mount_proc_umnt,
			      .decode = (xdrproc_t)mount_xdr_dirpath,
			      .encode = (xdrproc_t)xdr_empty,
			      .args_size = sizeof(dirpath),
			      .trace_args = mount_trace_path },
	[MOUNTPROC3_UMNTALL] = { .name = "UMNTALL",
				 .handler = mount_proc_umntall,
				 .decode = (xdrproc_t)xdr_empty,
				 .encode = (xdrproc_t)xdr_empty },
	[MOUNTPROC3_EXPORT] = { .name = "EXPORT",
				.handler = mount_proc_export,
				.release = mount_export_release,
				.decode = (xdrproc_t)xdr_empty,
				.encode = (xdrproc_t)xdr_exports,
				.res_size = sizeof(exports),
				.trace_res = mount_trace_export_res },
};

/*
 * MNT walks its path with the store's lookups, which on a cephfs store may
 * wait on the cluster's MDS: such a MNT runs on a work thread, so that a
 * stuck cluster holds its own mounts back, not MOUNT for every datastore
 * nor the NFS calls that share the loop.  The export is found again by the
 * handler (a lookup in a table whose slots never move).
 */
static bool mount_offload(struct request *req, const void *args)
{
	const struct mount_service *svc = req->svc;
	const char *path;
	const char *rest;
	const struct export *exp;
	const struct store *st;

	if (req->proc != MOUNTPROC3_MNT) {
		return false;
	}
	path = *(const dirpath *)args;
	exp = path ? export_find_by_prefix(svc->exports, path, &rest) : NULL;
	st = exp ? export_store(exp) : NULL;
	return st && st->blocking;
}

void mount_program_init(struct rpc_program *prog, struct mount_service *svc)
{
	memset(prog, 0, sizeof(*prog));
	prog->name = "mount";
	prog->prog = MOUNT_PROGRAM;
	prog->vers = MOUNT_V3;
	prog->procs = mount_procs;
	prog->nprocs = ARRAY_SIZE(mount_procs);
	prog->ctx = svc;
	prog->offload = mount_offload;
}
