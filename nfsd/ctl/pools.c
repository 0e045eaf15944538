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
#include "nfsd/pool/pool.h"

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

/* Prints one pool, or the list of "pools", as a table or JSON. */
static int pools_print(const struct ctl_remote *r, const json_t *doc, bool list)
{
	const json_t *p;
	struct ctl_table t;
	size_t i;

	if (r->json) {
		ctl_json_print(doc);
		return CTL_EXIT_OK;
	}
	ctl_table_init(&t, pool_header);
	if (list) {
		json_array_foreach(json_object_get(doc, "pools"), i, p)
			pool_row(&t, p);
	} else {
		pool_row(&t, doc);
	}
	return ctl_table_print(&t) ? CTL_EXIT_FAIL : CTL_EXIT_OK;
}

int ctl_pools_main(const struct ctl_remote *r, int argc, char **argv)
{
	json_t *doc;
	int rc;

	if (argc != 1) {
		fprintf(stderr, "usage: dsnfsctl pools\n");
		return CTL_EXIT_USAGE;
	}
	(void)argv;
	if (ctl_api_call(r, "GET", "/pools", NULL, &doc))
		return CTL_EXIT_FAIL;
	rc = pools_print(r, doc, true);
	json_decref(doc);
	return rc;
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
	if (argc - optind != 2 || !pool_name_valid(argv[optind + 1]))
		return -EINVAL;
	a->verb = argv[optind];
	a->name = argv[optind + 1];
	return 0;
}

/* The body of a create or set: the fields given. */
static json_t *pool_body(const struct pool_args *a, bool create)
{
	json_t *b = json_object();

	if (!b)
		return NULL;
	if (create)
		json_object_set_new(b, "name", json_string(a->name));
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

int ctl_pool_main(const struct ctl_remote *r, int argc, char **argv)
{
	struct pool_args a;
	bool changes, create, set;
	json_t *doc, *body = NULL;
	int rc;

	if (pool_parse(argc, argv, &a))
		return pool_usage();
	create = !strcmp(a.verb, "create");
	set = !strcmp(a.verb, "set");
	changes = a.level || a.qos || a.has_size || a.has_mibps;
	if ((create && (!a.level || !a.has_size)) || (set && !changes) ||
	    (!create && !set && changes))
		return pool_usage();
	if (create || set)
		body = pool_body(&a, create);
	rc = ctl_item_call(r, "pools", a.verb, a.name, body, &doc);
	if (rc == -EOPNOTSUPP)
		return pool_usage();
	if (rc)
		return CTL_EXIT_FAIL;
	if (!doc) {
		printf("pool %s deleted\n", a.name);
		return CTL_EXIT_OK;
	}
	rc = pools_print(r, doc, false);
	json_decref(doc);
	return rc;
}
