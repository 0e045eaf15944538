// SPDX-License-Identifier: Apache-2.0
/*
 * config/work_threads: how many blocking-work threads a whole parsed
 * config asks for (config_work_threads): the key when set, else a default
 * that follows its datastores' backends, as a cephfs datastore waits on a
 * thread for every call and a RADOS intent log keeps more in flight.
 */
#include "nfsd/config/config.h"

#include <string.h>

unsigned config_work_threads(const struct config *cfg)
{
	if (cfg->work_threads) {
		return cfg->work_threads;
	}
	unsigned n = CONFIG_WORK_THREADS_LOCAL;

	for (size_t i = 0; i < cfg->ndatastores; i++) {
		const struct config_datastore *ds = &cfg->datastores[i];

		if (ds->backend != CONFIG_BACKEND_CEPHFS) {
			continue;
		}
		if (!strcmp(ds->intent_log, "rados")) {
			return CONFIG_WORK_THREADS_RLOG;
		}
		n = CONFIG_WORK_THREADS_CEPHFS;
	}
	return n;
}
