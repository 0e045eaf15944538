// SPDX-License-Identifier: Apache-2.0
/*
 * clones: the datastores made from snapshots by the admin API
 * (STATE_DIR/volume-clones, nfsd/snap/volclone.h) added to a config, at
 * start and at every SIGHUP, so that they are served as long as their
 * record says: each with its source datastore's rules (clients, squash,
 * secure, read_only, ...), its own name and directory, no snapshot
 * policy and no intent log of its own.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "nfsd/base/log.h"
#include "nfsd/server/server.h"
#include "nfsd/snap/volclone.h"

static struct config_datastore *clones_find(struct config *cfg,
					    const char *name)
{
	for (size_t i = 0; i < cfg->ndatastores; i++) {
		if (!strcmp(cfg->datastores[i].name, name)) {
			return &cfg->datastores[i];
		}
	}
	return NULL;
}

int server_clones_merge(struct config *cfg, char *errbuf, size_t errlen)
{
	struct snap_volclones c;
	int err;

	err = snap_volclones_load(cfg->state_dir, &c, errbuf, errlen);
	if (err) {
		return err;
	}
	for (size_t i = 0; !err && i < c.n; i++) {
		const struct snap_volclone *v = &c.v[i];
		struct config_datastore *src = clones_find(cfg, v->source);
		struct config_datastore *ds;

		if (clones_find(cfg, v->name)) {
			log_warn("volume %s (from snapshot %s of %s): the "
				 "config names a datastore %s: the config's "
				 "is served",
				 v->name, v->snap, v->source, v->name);
			continue;
		}
		if (!src || src->backend != CONFIG_BACKEND_LOCAL) {
			log_warn("volume %s (from snapshot %s of %s): its "
				 "source is not a local datastore of the "
				 "config: not served",
				 v->name, v->snap, v->source);
			continue;
		}
		if (cfg->ndatastores == CONFIG_MAX_DATASTORES) {
			snprintf(errbuf, errlen,
				 "volume %s (from a snapshot): more than %d "
				 "datastores",
				 v->name, CONFIG_MAX_DATASTORES);
			err = -ENOSPC;
			break;
		}
		ds = &cfg->datastores[cfg->ndatastores++];
		*ds = *src;
		snprintf(ds->name, sizeof(ds->name), "%s", v->name);
		snprintf(ds->path, sizeof(ds->path), "%s", v->dir);
		ds->fsid = 0;
		ds->path_line = ds->backend_line = ds->intent_log_line = 0;
		memset(&ds->policy, 0, sizeof(ds->policy));
		if (strcmp(ds->intent_log, "off")) {
			ds->intent_log[0] = '\0';
		}
	}
	snap_volclones_free(&c);
	return err;
}
