// SPDX-License-Identifier: Apache-2.0
/*
 * volumes: `dsnfsctl volumes` and `dsnfsctl volume create|set|show|delete`,
 * over the admin API's /volumes (README.md, "Admin API").
 *
 *   volume create NAME --pool P --quota SIZE [--limit MIBPS]
 *   volume set NAME [--pool P] [--quota SIZE] [--limit MIBPS]
 *
 * SIZE is bytes or a number with KiB/MiB/GiB/TiB (as in dsnfsd.conf).
 */
#include <stdio.h>
#include <string.h>

#include "nfsd/ctl/ctl.h"

static const char *const volume_header[] = {
	"NAME", "POOL",	     "LEVEL",	    "QUOTA",   "USED",
	"USE%", "QOS LIMIT", "PROVISIONED", "LIMITED", NULL
};

static void volume_row(struct ctl_table *t, const json_t *v)
{
	char pool[80], level[32], quota[32], used[32], pct[32], limit[32],
		prov[32], hit[32];
	const json_t *lim = json_object_get(v, "limit_bytes_per_s");

	ctl_fmt_rate(json_is_integer(lim) ? (uint64_t)json_integer_value(lim)
					  : 0,
		     limit, sizeof(limit));
	ctl_table_row(
		t, json_string_value(json_object_get(v, "name")),
		ctl_fmt_member(v, "pool", false, pool, sizeof(pool)),
		ctl_fmt_member(v, "level", false, level, sizeof(level)),
		ctl_fmt_member(v, "quota_bytes", true, quota, sizeof(quota)),
		ctl_fmt_member(v, "used_bytes", true, used, sizeof(used)),
		ctl_fmt_percent(v, "consumed_percent", pct, sizeof(pct)), limit,
		ctl_fmt_member(v, "provisioned_bytes", true, prov,
			       sizeof(prov)),
		ctl_fmt_member(json_object_get(v, "counters"), "limit_reached",
			       false, hit, sizeof(hit)));
}

int ctl_volumes_main(const struct ctl_remote *r, int argc, char **argv)
{
	(void)argv;
	return ctl_list_main(r, argc, "/volumes", "volumes", volume_header,
			     volume_row);
}

static int volume_usage(void)
{
	fprintf(stderr,
		"usage: dsnfsctl volume create NAME --pool P --quota SIZE "
		"[--limit MIBPS]\n"
		"       dsnfsctl volume set NAME [--pool P] [--quota SIZE] "
		"[--limit MIBPS]\n"
		"       dsnfsctl volume show|delete NAME\n");
	return CTL_EXIT_USAGE;
}

static const struct ctl_item_option volume_options[] = {
	{ "pool", CTL_OPTION_STRING, "pool", true },
	{ "quota", CTL_OPTION_SIZE, "quota_bytes", true },
	{ "limit", CTL_OPTION_UINT32, "limit_mibps", false },
	{ NULL, 0, NULL, false },
};

static const struct ctl_item_cmd volume_cmd = {
	.kind = "volume",
	.collection = "volumes",
	.gone = "taken out of its pool",
	.header = volume_header,
	.row = volume_row,
	.usage = volume_usage,
	.options = volume_options,
};

int ctl_volume_main(const struct ctl_remote *r, int argc, char **argv)
{
	return ctl_item_run(r, &volume_cmd, argc, argv);
}
