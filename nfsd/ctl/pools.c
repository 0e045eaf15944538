/*
 * pools: `dsnfsctl pools` and `dsnfsctl pool create|set|show|delete`,
 * over the admin API's /pools (README.md, "Admin API").
 *
 *   pool create NAME --level L --size TIB [--qos auto|manual]
 *               [--throughput MIBPS]
 *   pool set NAME [--level L] [--size TIB] [--throughput MIBPS]
 *               [--qos manual]
 */
#include <errno.h>
#include <getopt.h>
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
		if (n >= sizeof(vols))
			break;
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

struct pool_args {
	const char *verb, *name, *level, *qos;
	uint64_t size_tib, mibps;
	bool has_size, has_mibps;
};

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

static int pool_parse(int argc, char **argv, struct pool_args *a)
{
	static const struct option opts[] = {
		{ "level", required_argument, NULL, 'l' },
		{ "size", required_argument, NULL, 's' },
		{ "throughput", required_argument, NULL, 't' },
		{ "qos", required_argument, NULL, 'q' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(a, 0, sizeof(*a));
	optind = 0;
	while ((c = getopt_long(argc, argv, "l:s:t:q:", opts, NULL)) != -1) {
		if (c == 'l') {
			a->level = optarg;
		} else if (c == 'q') {
			a->qos = optarg;
		} else if (c == 's') {
			a->has_size = true;
			if (ctl_parse_uint(optarg, UINT32_MAX, &a->size_tib))
				return -EINVAL;
		} else if (c == 't') {
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
static json_t *pool_fields(const struct pool_args *a)
{
	json_t *b = json_object();

	if (!b)
		return NULL;
	if (a->level)
		json_object_set_new(b, "level", json_string(a->level));
	if (a->has_size)
		json_object_set_new(b, "size_tib",
				    json_integer((json_int_t)a->size_tib));
	if (a->has_mibps)
		json_object_set_new(b, "purchased_mibps",
				    json_integer((json_int_t)a->mibps));
	if (a->qos)
		json_object_set_new(b, "qos", json_string(a->qos));
	return b;
}

static const struct ctl_item_cmd pool_cmd = {
	.kind = "pool",
	.collection = "pools",
	.gone = "deleted",
	.header = pool_header,
	.row = pool_row,
	.usage = pool_usage,
};

int ctl_pool_main(const struct ctl_remote *r, int argc, char **argv)
{
	struct pool_args a;

	if (pool_parse(argc, argv, &a))
		return pool_usage();
	return ctl_item_main(r, &pool_cmd, a.verb, a.name, pool_fields(&a),
			     a.level && a.has_size);
}
