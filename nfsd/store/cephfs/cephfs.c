// SPDX-License-Identifier: Apache-2.0
/*
 * cephfs: opens a datastore on a CephFS directory (the mount, the handle
 * key of the state directory (cephfs_key.c), the root object) and holds the
 * backend's ops table.  libcephfs calls may wait on the cluster, so the store
 * is marked `blocking`: the nfs3 layer runs each of its calls on a work thread,
 * and no event loop waits on the cluster.  libcephfs checks no permission here
 * (client_permissions = false): as with the local backend, the nfs3 layer
 * checks access and the ops act with the mount's (root) identity.
 */
#include "nfsd/store/cephfs/cephfs_rlog.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/base/log.h"

static void store_cephfs_err(char *errbuf, size_t errlen, const char *name,
			     const char *cluster, const char *what, int err)
{
	if (errbuf != NULL && errlen > 0) {
		snprintf(errbuf, errlen,
			 "datastore %s: cephfs cluster %s: %s: %s", name,
			 cluster, what, strerror(-err));
	}
}

void store__cephfs_obj_fh(const struct store_obj *obj, struct store_fh *fh)
{
	*fh = obj->fh;
}

int store__cephfs_root(struct store *st, struct store_obj **out)
{
	struct store_cephfs *sc = store__cephfs(st);

	store__cephfs_obj_ref(store__cephfs_pub(sc->root));
	*out = store__cephfs_pub(sc->root);
	return 0;
}

void store__cephfs_close(struct store *st)
{
	struct store_cephfs *sc = store__cephfs(st);

	/* Its reads go through the guard: before the monitor. */
	store__cephfs_prefetch_stop(sc);
	/* The monitor probes through the mount and the root, and reads the
	 * log after an eviction: first. */
	store__cephfs_health_stop(sc);
	/* Its checkpoint fsyncs through the mount: before anything goes. */
	store__cephfs_rlog_close(sc->rlog);
	store__cephfs_cache_clear(sc);
	store__cephfs_obj_unref(store__cephfs_pub(sc->root));
	store__cephfs_ask_close(sc);
	store__cephfs_rados_close(sc);
	/* Evicted or fenced: nothing of this mount can reach the cluster,
	 * and an unmount would try to flush. */
	if (atomic_load(&sc->base.reopen) || atomic_load(&sc->base.fenced)) {
		ceph_abort_conn(sc->cm);
	} else {
		ceph_unmount(sc->cm);
	}
	ceph_release(sc->cm);
	store__cephfs_unname(sc);
	store__cephfs_statfs_destroy(&sc->statfs);
	pthread_mutex_destroy(&sc->cache_lock);
	explicit_bzero(&sc->secret, sizeof(sc->secret));
	free(sc);
}

/*
 * Ceph's default log levels (file/memory) of the subsystems every READ and
 * WRITE passes through.  The memory level makes each call format entries
 * for the in-memory ring (dumped only on a crash) and wake the log thread:
 * about an eighth of the gateway's CPU per 8 KiB READ (docs/ceph.md, "READ
 * of a cephfs datastore").  Left at the default by ceph.conf, they become
 * 0/0; levels an operator set are kept.
 */
static const char *const store_cephfs_quiet[][2] = {
	{ "debug_client", "0/5" },
	{ "debug_objectcacher", "0/5" },
	{ "debug_objecter", "0/1" },
};

static int store_cephfs_quiet_logs(struct ceph_mount_info *cm)
{
	size_t n = sizeof(store_cephfs_quiet) / sizeof(store_cephfs_quiet[0]);
	char cur[32];
	int rc;

	for (size_t i = 0; i < n; i++) {
		if (ceph_conf_get(cm, store_cephfs_quiet[i][0], cur,
				  sizeof(cur)) != 0 ||
		    strcmp(cur, store_cephfs_quiet[i][1]) != 0) {
			continue;
		}
		rc = ceph_conf_set(cm, store_cephfs_quiet[i][0], "0/0");
		if (rc) {
			return rc;
		}
	}
	return 0;
}

/* The ceph.conf options of our mount: the nfs3 layer checks access, a
 * cluster that does not answer fails the mount in bounded time, and no
 * log entries are formatted per call that no one reads. */
static int store_cephfs_configure(struct ceph_mount_info *cm, const char *conf)
{
	int rc;

	rc = ceph_conf_read_file(cm, conf);
	if (rc) {
		return rc;
	}
	rc = store_cephfs_quiet_logs(cm);
	if (rc) {
		return rc;
	}
	rc = ceph_conf_set(cm, "client_permissions", "false");
	/* Nor in the ll_* calls: the subtree check walks ".." from a file,
	 * which libcephfs's own check (search permission on the file)
	 * refuses for a file without an x bit. */
	if (!rc) {
		rc = ceph_conf_set(cm, "fuse_default_permissions", "true");
	}
	if (!rc) {
		rc = ceph_conf_set(cm, "client_mount_timeout", "10");
	}
	if (!rc) {
		rc = ceph_conf_set(cm, "rados_mon_op_timeout", "10");
	}
	/* No rados_osd_op_timeout: an OSD that does not answer makes the
	 * call wait (a hard mount's semantics; cephfs_health.c bounds how
	 * many wait and answers JUKEBOX to the rest).  A timeout failed the
	 * file's sync, and that file's next sync hung after the OSD was
	 * back (measured: docs/ceph.md). */
	return rc;
}

static int store_cephfs_mount(struct store_cephfs *sc, const char *name,
			      const char *conf, const char *path,
			      const char *user, const char *fs,
			      const char *state_dir, const char *gateway,
			      char *errbuf, size_t errlen)
{
	char mon[128] = "";
	int rc;

	snprintf(sc->cluster, sizeof(sc->cluster), "%s", conf);
	rc = ceph_create(&sc->cm, user);
	if (rc) {
		store_cephfs_err(errbuf, errlen, name, sc->cluster,
				 "ceph_create", rc);
		return rc;
	}
	rc = store_cephfs_configure(sc->cm, conf);
	if (!rc) {
		rc = store__cephfs_asok_set(sc, sc->cm, state_dir);
	}
	if (rc) {
		store_cephfs_err(errbuf, errlen, name, sc->cluster,
				 "cannot read the configuration", rc);
		goto out_release;
	}
	if (ceph_conf_get(sc->cm, "mon_host", mon, sizeof(mon)) == 0 &&
	    mon[0]) {
		snprintf(sc->cluster, sizeof(sc->cluster), "%s (mon_host %s)",
			 conf, mon);
	}
	rc = ceph_init(sc->cm);
	if (!rc && fs != NULL && fs[0]) {
		rc = ceph_select_filesystem(sc->cm, fs);
	}
	if (rc) {
		store_cephfs_err(errbuf, errlen, name, sc->cluster,
				 "cannot connect", rc);
		goto out_release;
	}
	store__cephfs_reclaim(sc, sc->cm, state_dir, gateway);
	rc = ceph_mount(sc->cm, path);
	if (rc) {
		store_cephfs_err(errbuf, errlen, name, sc->cluster,
				 path[0] ? "cannot mount its directory"
					 : "cannot mount",
				 rc);
		goto out_release;
	}
	sc->root_perms = ceph_mount_perms(sc->cm);
	return 0;

out_release:
	ceph_release(sc->cm);
	store__cephfs_unname(sc);
	sc->cm = NULL;
	return rc;
}

/* The root's object, and the secret its handles are signed with. */
static int store_cephfs_root_open(struct store_cephfs *sc,
				  const char *state_dir, char *errbuf,
				  size_t errlen)
{
	char why[512] = "";
	struct ceph_statx stx;
	Inode *root;
	int rc;

	rc = ceph_ll_lookup_root(sc->cm, &root);
	if (rc) {
		store_cephfs_err(errbuf, errlen, sc->base.name, sc->cluster,
				 "root", rc);
		return rc;
	}
	rc = store__cephfs_key_load(sc, root, state_dir, why, sizeof(why));
	if (rc) {
		ceph_ll_put(sc->cm, root);
		if (errbuf != NULL && errlen > 0) {
			snprintf(errbuf, errlen,
				 "datastore %s: cephfs cluster %s: handle "
				 "key: %s",
				 sc->base.name, sc->cluster, why);
		}
		return rc;
	}
	rc = ceph_ll_getattr(sc->cm, root, &stx, STORE_CEPHFS_WANT, 0,
			     sc->root_perms);
	if (rc) {
		ceph_ll_put(sc->cm, root);
		store_cephfs_err(errbuf, errlen, sc->base.name, sc->cluster,
				 "root getattr", rc);
		return rc;
	}
	if (!S_ISDIR(stx.stx_mode)) {
		ceph_ll_put(sc->cm, root);
		store_cephfs_err(errbuf, errlen, sc->base.name, sc->cluster,
				 "ceph_path", -ENOTDIR);
		return -ENOTDIR;
	}
	sc->root_ino = stx.stx_ino;
	rc = store__cephfs_obj_get(sc, root, &stx, &sc->root);
	if (rc) {
		store_cephfs_err(errbuf, errlen, sc->base.name, sc->cluster,
				 "root", rc);
	}
	return rc;
}

int store_cephfs_open(const char *name, uint32_t export_id,
		      const char *ceph_conf, const char *ceph_path,
		      const char *ceph_user, const char *ceph_fs,
		      const char *state_dir, const char *gateway,
		      unsigned call_cap, struct store **out, char *errbuf,
		      size_t errlen)
{
	struct store_cephfs *sc;
	int err;

	sc = calloc(1, sizeof(*sc));
	if (sc == NULL) {
		store_cephfs_err(errbuf, errlen, name, ceph_conf, "store",
				 -ENOMEM);
		return -ENOMEM;
	}
	sc->base.ops = &store__cephfs_ops;
	sc->base.export_id = export_id;
	sc->base.group_commit = true;
	sc->base.blocking = true;
	if (strlen(name) >= sizeof(sc->base.name)) {
		err = -ENAMETOOLONG;
		store_cephfs_err(errbuf, errlen, name, ceph_conf,
				 "datastore name", err);
		goto out_free;
	}
	strcpy(sc->base.name, name);
	if (!ceph_user || !ceph_user[0]) {
		ceph_user = "admin";
	}
	err = pthread_mutex_init(&sc->cache_lock, NULL);
	if (err) {
		err = -err;
		goto out_free;
	}
	store__cephfs_statfs_init(&sc->statfs);
	err = store_cephfs_mount(sc, name, ceph_conf, ceph_path, ceph_user,
				 ceph_fs, state_dir, gateway, errbuf, errlen);
	if (err) {
		goto out_lock;
	}
	err = store_cephfs_root_open(sc, state_dir, errbuf, errlen);
	if (err) {
		goto out_unmount;
	}
	/* Without librados, used bytes fall back to st_blocks (logged
	 * below): the datastore serves anyway. */
	sc->rados_ok = store__cephfs_rados_open(sc, ceph_conf, ceph_user);
	sc->base.max_file_bytes = store__cephfs_max_file_bytes(sc, ceph_fs);
	store__cephfs_evict_cfg_check(sc);
	err = store__cephfs_health_start(sc, call_cap);
	if (err) {
		store_cephfs_err(errbuf, errlen, name, sc->cluster,
				 "monitor thread", err);
		goto out_root;
	}
	/* The session id is what a failover fences (ceph tell mds.* client
	 * evict id=N) before another gateway takes this one's address. */
	log_info("cephfs: %s: mounted %s of %s as client.%s, session %llu, "
		 "files up to %llu GiB%s",
		 name, ceph_path, sc->cluster, ceph_user,
		 (unsigned long long)ceph_get_instance_id(sc->cm),
		 (unsigned long long)(sc->base.max_file_bytes >> 30),
		 sc->rados_ok ? "" : "; no librados: used bytes are st_blocks");
	*out = &sc->base;
	return 0;

out_root:
	store__cephfs_cache_clear(sc);
	store__cephfs_obj_unref(store__cephfs_pub(sc->root));
	store__cephfs_ask_close(sc);
	store__cephfs_rados_close(sc);
out_unmount:
	ceph_unmount(sc->cm);
	ceph_release(sc->cm);
	store__cephfs_unname(sc);
out_lock:
	store__cephfs_statfs_destroy(&sc->statfs);
	pthread_mutex_destroy(&sc->cache_lock);
out_free:
	explicit_bzero(&sc->secret, sizeof(sc->secret));
	free(sc);
	return err;
}
