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
		ctl_fmt_member(v, "consumed_percent", false, pct, sizeof(pct)),
		limit,
		ctl_fmt_member(v, "provisioned_bytes", true, prov,
			       sizeof(prov)),
		ctl_fmt_member(json_object_get(v, "counters"), "limit_reached",
			       false, hit, sizeof(hit)));
}

static int volumes_print(const struct ctl_remote *r, const json_t *doc,
			 bool list)
{
	struct ctl_table t;
	const json_t *v;
	size_t i;

	if (r->json) {
		ctl_json_print(doc);
		return CTL_EXIT_OK;
	}
	ctl_table_init(&t, volume_header);
	if (list) {
		json_array_foreach(json_object_get(doc, "volumes"), i, v)
			volume_row(&t, v);
	} else {
		volume_row(&t, doc);
	}
	return ctl_table_print(&t) ? CTL_EXIT_FAIL : CTL_EXIT_OK;
}

int ctl_volumes_main(const struct ctl_remote *r, int argc, char **argv)
{
	json_t *doc;
	int rc;

	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "usage: dsnfsctl volumes\n");
		return CTL_EXIT_USAGE;
	}
	if (ctl_api_call(r, "GET", "/volumes", NULL, &doc))
		return CTL_EXIT_FAIL;
	rc = volumes_print(r, doc, true);
	json_decref(doc);
	return rc;
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
	if (argc - optind != 2 || !pool_name_valid(argv[optind + 1]))
		return -EINVAL;
	a->verb = argv[optind];
	a->name = argv[optind + 1];
	return 0;
}

static json_t *volume_body(const struct volume_args *a, bool create)
{
	json_t *b = json_object();

	if (!b)
		return NULL;
	if (create)
		json_object_set_new(b, "name", json_string(a->name));
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

int ctl_volume_main(const struct ctl_remote *r, int argc, char **argv)
{
	struct volume_args a;
	bool changes, create, set;
	json_t *doc, *body = NULL;
	int rc;

	if (volume_parse(argc, argv, &a))
		return volume_usage();
	create = !strcmp(a.verb, "create");
	set = !strcmp(a.verb, "set");
	changes = a.pool || a.has_quota || a.has_mibps;
	if ((create && (!a.pool || !a.has_quota)) || (set && !changes) ||
	    (!create && !set && changes))
		return volume_usage();
	if (create || set)
		body = volume_body(&a, create);
	rc = ctl_item_call(r, "volumes", a.verb, a.name, body, &doc);
	if (rc == -EOPNOTSUPP)
		return volume_usage();
	if (rc)
		return CTL_EXIT_FAIL;
	if (!doc) {
		printf("volume %s taken out of its pool\n", a.name);
		return CTL_EXIT_OK;
	}
	rc = volumes_print(r, doc, false);
	json_decref(doc);
	return rc;
}
