// SPDX-License-Identifier: Apache-2.0
/*
 * store_open: the one place that turns a datastore's backend name into the
 * backend's open function; everything after that goes through the ops
 * table (store.h).
 */
#include "nfsd/store/store_open.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "nfsd/store/cephfs/cephfs.h"
#include "nfsd/store/local/local.h"

/* A cephfs store, and its RADOS intent log replayed before it serves. */
static int store_open_cephfs(const struct store_params *p, struct store **out,
			     char *errbuf, size_t errlen)
{
	struct store *st;
	int err;

	err = store_cephfs_open(p->name, p->export_id, p->ceph_conf,
				p->ceph_path, p->ceph_user, p->ceph_fs,
				p->state_dir, p->rlog_gateway, p->call_cap, &st,
				errbuf, errlen);
	if (!err) {
		err = store_cephfs_readahead(st, p->ceph_readahead_bytes);
		if (err) {
			snprintf(errbuf, errlen, "%s: readahead threads: %s",
				 p->name, strerror(-err));
			st->ops->close(st);
			return err;
		}
	}
	if (err || !p->rlog_gateway) {
		*out = err ? NULL : st;
		return err;
	}
	err = store_cephfs_rlog_open(
		st,
		&(const struct store_rlog_params){
			.ceph_conf = p->ceph_conf,
			.ceph_user = p->ceph_user,
			.gateway = p->rlog_gateway,
			.ring_bytes = p->rlog_ring_bytes,
			.checkpoint_ms = p->rlog_checkpoint_ms,
			.inplace_min_bytes = p->rlog_inplace_min_bytes },
		errbuf, errlen);
	if (err) {
		st->ops->close(st);
		return err;
	}
	*out = st;
	return 0;
}

int store_open(const struct store_params *p, struct store **out, char *errbuf,
	       size_t errlen)
{
	switch (p->backend) {
	case STORE_BACKEND_LOCAL:
		return store_local_open(p->name, p->path, p->export_id,
					p->state_dir, out, errbuf, errlen);
	case STORE_BACKEND_CEPHFS:
		return store_open_cephfs(p, out, errbuf, errlen);
	}
	if (errbuf != NULL && errlen > 0) {
		snprintf(errbuf, errlen, "%s: unknown backend %d", p->name,
			 (int)p->backend);
	}
	return -EINVAL;
}
