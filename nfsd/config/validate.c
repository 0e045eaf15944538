// SPDX-License-Identifier: Apache-2.0
/*
 * config/validate: the checks of a whole parsed config (config_validate):
 * datastores present, each with a path, fsids unique, and no datastore's
 * directory inside another's.  Parsing is config.c's.
 */
#include "nfsd/config/config.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/base/base.h"

/* @path resolved (realpath) into @out, or as written when it does not
 * resolve yet (the store's open reports that). */
static void config_real_path(const char *path, char *out)
{
	if (!realpath(path, out)) {
		snprintf(out, PATH_MAX, "%s", path);
	}
}

/* True when directory @inner is @outer or lies below it. */
static bool config_path_within(const char *inner, const char *outer)
{
	size_t len = strlen(outer);

	while (len > 1 && outer[len - 1] == '/') {
		len--;
	}
	if (len == 1 && outer[0] == '/') {
		return true;
	}
	return strncmp(inner, outer, len) == 0 &&
	       (inner[len] == '\0' || inner[len] == '/');
}

/*
 * One export's directory inside another's: a client of the outer one
 * reaches the inner one's files under the outer one's rules (clients,
 * squash, read_only), so it is refused, as two names for one directory.
 */
static int config_check_nested(const struct config *cfg, char *errbuf,
			       size_t errlen)
{
	char(*real)[PATH_MAX] = calloc(cfg->ndatastores, PATH_MAX);

	if (!real) {
		snprintf(errbuf, errlen, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < cfg->ndatastores; i++) {
		if (cfg->datastores[i].backend == CONFIG_BACKEND_LOCAL) {
			config_real_path(cfg->datastores[i].path, real[i]);
		}
	}
	for (size_t i = 0; i < cfg->ndatastores; i++) {
		const struct config_datastore *a = &cfg->datastores[i];

		for (size_t j = 0; j < cfg->ndatastores; j++) {
			const struct config_datastore *b = &cfg->datastores[j];

			if (i == j || a->backend != CONFIG_BACKEND_LOCAL ||
			    b->backend != CONFIG_BACKEND_LOCAL ||
			    !config_path_within(real[i], real[j])) {
				continue;
			}
			snprintf(errbuf, errlen,
				 "datastores %s (%s) and %s (%s): %s; give "
				 "each datastore a directory of its own",
				 a->name, real[i], b->name, real[j],
				 strcmp(real[i], real[j])
					 ? "one lies inside the other"
					 : "the same directory");
			free(real);
			return -EINVAL;
		}
	}
	free(real);
	return 0;
}

int config_validate(const struct config *cfg, char *errbuf, size_t errlen)
{
	if (cfg->ndatastores == 0) {
		snprintf(
			errbuf, errlen,
			"no datastores: give -e NAME=DIR or a [datastore NAME] "
			"section");
		return -EINVAL;
	}
	for (size_t i = 0; i < cfg->ndatastores; i++) {
		const struct config_datastore *a = &cfg->datastores[i];

		if (a->backend == CONFIG_BACKEND_LOCAL && a->path[0] == '\0') {
			snprintf(errbuf, errlen, "[datastore %s]: no path",
				 a->name);
			return -EINVAL;
		}
		for (size_t j = 0; j < i; j++) {
			const struct config_datastore *b = &cfg->datastores[j];
			uint32_t ia = a->fsid ? a->fsid
					      : export_id_from_name(a->name);
			uint32_t ib = b->fsid ? b->fsid
					      : export_id_from_name(b->name);

			if (ia == ib) {
				snprintf(errbuf, errlen,
					 "datastores %s and %s have the same "
					 "fsid %u; set fsid in one of them",
					 b->name, a->name, ia);
				return -EINVAL;
			}
		}
	}
	return config_check_nested(cfg, errbuf, errlen);
}
