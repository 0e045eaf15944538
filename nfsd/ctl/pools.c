// SPDX-License-Identifier: Apache-2.0
/*
 * pools: `dsnfsctl pools` and `dsnfsctl pool create|set|show|delete`,
 * over the admin API's /pools (README.md, "Admin API").
 *
 *   pool create NAME --level L --size TIB [--qos auto|manual]
 *               [--throughput MIBPS]
 *   pool set NAME [--level L] [--size TIB] [--throughput MIBPS]
 *               [--qos manual]
 */
#include <stdio.h>
#include <string.h>

#include "nfsd/ctl/ctl.h"

static const char *const pool_header[] = { "NAME", "LEVEL",	 "QOS",
					   "SIZE", "THROUGHPUT", "ALLOCATED",
					   "USED", "VOLUMES",	 NULL };

static void pool_row(struct ctl_table *t, const json_t *p)
{
	char size[32], tput[32], alloc[32], used[32], vols[512] = "";
	const json_t *names = json_object_get(p, "volumes"), *v;
	size_t i, n = 0;

	json_array_foreach(names, i, v)
	{
		n += (size_t)snprintf(vols + n, sizeof(vols) - n, "%s%s",
				      i ? "," : "", json_string_value(v));
		if (n >= sizeof(vols)) {
			break;
		}
	}
	ctl_fmt_member(p, "size_tib", false, size, sizeof(size));
	strncat(size, " TiB", sizeof(size) - strlen(size) - 1);
	ctl_fmt_member(p, "throughput_mibps", false, tput, sizeof(tput));
	strncat(tput, " MiB/s", sizeof(tput) - strlen(tput) - 1);
	ctl_table_row(t, json_string_value(json_object_get(p, "name")),
		      json_string_value(json_object_get(p, "level")),
		      json_string_value(json_object_get(p, "qos")), size, tput,
		      ctl_fmt_member(p, "allocated_bytes", true, alloc,
				     sizeof(alloc)),
		      ctl_fmt_member(p, "used_bytes", true, used, sizeof(used)),
		      n ? vols : "-");
}

int ctl_pools_main(const struct ctl_remote *r, int argc, char **argv)
{
	(void)argv;
	return ctl_list_main(r, argc, "/pools", "pools", pool_header, pool_row);
}

static int pool_usage(void)
{
	fprintf(stderr,
		"usage: dsnfsctl pool create NAME --level L --size TIB "
		"[--qos auto|manual] [--throughput MIBPS]\n"
		"       dsnfsctl pool set NAME [--level L] [--size TIB] "
		"[--throughput MIBPS] [--qos manual]\n"
		"       dsnfsctl pool show|delete NAME\n");
	return CTL_EXIT_USAGE;
}

static const struct ctl_item_option pool_options[] = {
	{ "level", CTL_OPTION_STRING, "level", true },
	{ "size", CTL_OPTION_UINT32, "size_tib", true },
	{ "throughput", CTL_OPTION_UINT32, "purchased_mibps", false },
	{ "qos", CTL_OPTION_STRING, "qos", false },
	{ NULL, 0, NULL, false },
};

static const struct ctl_item_cmd pool_cmd = {
	.kind = "pool",
	.collection = "pools",
	.gone = "deleted",
	.header = pool_header,
	.row = pool_row,
	.usage = pool_usage,
	.options = pool_options,
};

int ctl_pool_main(const struct ctl_remote *r, int argc, char **argv)
{
	return ctl_item_run(r, &pool_cmd, argc, argv);
}
