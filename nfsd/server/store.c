// SPDX-License-Identifier: Apache-2.0
/*
 * store: a datastore's store opened from its [datastore NAME] section, for
 * the export table at start and at SIGHUP (exports.c) and for the retries
 * of a datastore whose cluster was down or evicted it (recovery.c).
 */
#include <stdatomic.h>
#include <string.h>

#include "nfsd/server/server_int.h"
#include "nfsd/store/store_open.h"

/* The store parameters of @ds (borrowed: they point into it). */
static void server_store_params(const struct server *srv,
				const struct config_datastore *ds,
				uint32_t export_id, struct store_params *p)
{
	memset(p, 0, sizeof(*p));
	p->backend = ds->backend == CONFIG_BACKEND_CEPHFS ? STORE_BACKEND_CEPHFS
							  : STORE_BACKEND_LOCAL;
	p->name = ds->name;
	p->export_id = export_id;
	p->state_dir = srv->state_dir;
	p->path = ds->path;
	p->ceph_conf = ds->ceph_conf;
	p->ceph_path = ds->ceph_path;
	p->ceph_user = ds->ceph_user;
	p->ceph_fs = ds->ceph_fs;
	p->ceph_readahead_bytes = (uint64_t)ds->ceph_readahead_mib << 20;
	/* Half the work threads: a lost cluster's calls, waiting in
	 * libcephfs, leave the other half to the other datastores. */
	p->call_cap = srv->fd_inputs.work_threads / 2;
	if (ds->backend == CONFIG_BACKEND_CEPHFS &&
	    !strcmp(ds->intent_log, "rados")) {
		p->rlog_gateway = ds->intent_log_gateway[0]
					  ? ds->intent_log_gateway
					  : srv->hostname;
		p->rlog_ring_bytes = srv->ilog_ring_bytes;
		p->rlog_checkpoint_ms = srv->ilog_checkpoint_ms;
		p->rlog_inplace_min_bytes = srv->ilog_inplace_min;
	}
}

int server__export_store_open(struct server *srv,
			      const struct config_datastore *ds, uint32_t id,
			      struct store **out, uint64_t *root_fileid,
			      char *errbuf, size_t errlen)
{
	struct store_params p;
	struct store_obj *root;
	struct store_attr a;
	struct store *st;
	int err;

	/* The state_dir of the start: it holds the secret that signs the
	 * handles of every export. */
	server_store_params(srv, ds, id, &p);
	err = store_open(&p, &st, errbuf, errlen);
	if (err) {
		return err;
	}
	st->group_commit = srv->group_commit;
	atomic_store(&st->zero_on_first_write, ds->zero_on_first_write);
	*root_fileid = 0;
	if (!store_root(st, &root)) {
		if (!store_getattr(st, root, &a)) {
			*root_fileid = a.fileid;
		}
		store_obj_unref(st, root);
	}
	*out = st;
	return 0;
}
