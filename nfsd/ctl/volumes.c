/*
 * volumes: `dsnfsctl volumes` and `dsnfsctl volume create|set|show|delete`,
 * over the admin API's /volumes (README.md, "Admin API").
 *
 *   volume create NAME --pool P --quota SIZE [--limit MIBPS]
 *   volume set NAME [--pool P] [--quota SIZE] [--limit MIBPS]
 *
 * SIZE is bytes or a number with KiB/MiB/GiB/TiB (as in dsnfsd.conf).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "nfsd/ctl/ctl.h"
#include "nfsd/pool/pool.h"

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
		ctl_fmt_percent(v, "consumed_percent", pct, sizeof(pct)),
		limit,
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

struct volume_args {
	const char *verb, *name, *pool;
	uint64_t quota_bytes, mibps;
	bool has_quota, has_mibps;
};

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

static int volume_parse(int argc, char **argv, struct volume_args *a)
{
	static const struct option opts[] = {
		{ "pool", required_argument, NULL, 'p' },
		{ "quota", required_argument, NULL, 'q' },
		{ "limit", required_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(a, 0, sizeof(*a));
	optind = 0;
	while ((c = getopt_long(argc, argv, "p:q:l:", opts, NULL)) != -1) {
		if (c == 'p') {
			a->pool = optarg;
		} else if (c == 'q') {
			a->has_quota = true;
			if (pool_size_parse(optarg, &a->quota_bytes))
				return -EINVAL;
		} else if (c == 'l') {
			a->has_mibps = true;
			if (ctl_parse_uint(optarg, UINT32_MAX, &a->mibps))
				return -EINVAL;
		} else {
			return -EINVAL;
		}
	}
	return ctl_item_operands(argc, argv, &a->verb, &a->name);
}

/* The fields given, as the API names them. */
static json_t *volume_fields(const struct volume_args *a)
{
	json_t *b = json_object();

	if (!b)
		return NULL;
	if (a->pool)
		json_object_set_new(b, "pool", json_string(a->pool));
	if (a->has_quota)
		json_object_set_new(b, "quota_bytes",
				    json_integer((json_int_t)a->quota_bytes));
	if (a->has_mibps)
		json_object_set_new(b, "limit_mibps",
				    json_integer((json_int_t)a->mibps));
	return b;
}

static const struct ctl_item_cmd volume_cmd = {
	.kind = "volume",
	.collection = "volumes",
	.gone = "taken out of its pool",
	.header = volume_header,
	.row = volume_row,
	.usage = volume_usage,
};

int ctl_volume_main(const struct ctl_remote *r, int argc, char **argv)
{
	struct volume_args a;

	if (volume_parse(argc, argv, &a))
		return volume_usage();
	return ctl_item_main(r, &volume_cmd, a.verb, a.name, volume_fields(&a),
			     a.pool && a.has_quota);
}
