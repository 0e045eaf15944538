// SPDX-License-Identifier: Apache-2.0
/*
 * items: the course that the admin API's collections share in dsnfsctl:
 * `dsnfsctl pools|volumes|flows|...` lists one, and `dsnfsctl pool|volume
 * VERB NAME [options]` creates, sets, shows or deletes one item of it.
 * The commands keep their options, columns and rows (pools.c, volumes.c,
 * traffic.c).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "nfsd/ctl/ctl.h"
#include "nfsd/pool/pool.h"

int ctl_items_print(const struct ctl_remote *r, const json_t *doc,
		    const char *list_key, const char *const *header,
		    ctl_row_fn *row)
{
	const json_t *item;
	struct ctl_table t;
	size_t i;

	if (r->json) {
		ctl_json_print(doc);
		return CTL_EXIT_OK;
	}
	ctl_table_init(&t, header);
	if (list_key) {
		json_array_foreach(json_object_get(doc, list_key), i, item)
			row(&t, item);
	} else {
		row(&t, doc);
	}
	return ctl_table_print(&t) ? CTL_EXIT_FAIL : CTL_EXIT_OK;
}

int ctl_list_main(const struct ctl_remote *r, int argc, const char *path,
		  const char *key, const char *const *header, ctl_row_fn *row)
{
	json_t *doc;
	int rc;

	if (argc != 1) {
		fprintf(stderr, "usage: dsnfsctl %s\n", key);
		return CTL_EXIT_USAGE;
	}
	if (ctl_api_call(r, "GET", path, NULL, &doc) || !doc) {
		return CTL_EXIT_FAIL;
	}
	rc = ctl_items_print(r, doc, key, header, row);
	json_decref(doc);
	return rc;
}

int ctl_item_operands(int argc, char **argv, const char **verb,
		      const char **name)
{
	if (argc - optind != 2 || !pool_name_valid(argv[optind + 1])) {
		return -EINVAL;
	}
	*verb = argv[optind];
	*name = argv[optind + 1];
	return 0;
}

/* The request body of @verb: a create names the item first, then the
 * fields; a set sends the fields; the other verbs send none. */
static int ctl_item_body(const char *verb, const char *name, json_t *fields,
			 json_t **body)
{
	*body = NULL;
	if (!strcmp(verb, "set")) {
		*body = json_incref(fields);
		return 0;
	}
	if (strcmp(verb, "create")) {
		return 0;
	}
	*body = json_object();
	if (!*body || json_object_set_new(*body, "name", json_string(name)) ||
	    json_object_update(*body, fields)) {
		json_decref(*body);
		*body = NULL;
		return -ENOMEM;
	}
	return 0;
}

int ctl_item_main(const struct ctl_remote *r, const struct ctl_item_cmd *cmd,
		  const char *verb, const char *name, json_t *fields,
		  bool complete)
{
	bool create = !strcmp(verb, "create"), set = !strcmp(verb, "set");
	bool changes = json_object_size(fields) > 0;
	json_t *doc, *body;
	int rc;

	if (!fields) {
		fprintf(stderr, "dsnfsctl: out of memory\n");
		return CTL_EXIT_FAIL;
	}
	/* A create needs its required options, a set at least one change,
	 * and the other verbs take none. */
	if ((create && !complete) || (set && !changes) ||
	    (!create && !set && changes)) {
		json_decref(fields);
		return cmd->usage();
	}
	rc = ctl_item_body(verb, name, fields, &body);
	json_decref(fields);
	if (rc) {
		fprintf(stderr, "dsnfsctl: out of memory\n");
		return CTL_EXIT_FAIL;
	}
	rc = ctl_item_call(r, cmd->collection, verb, name, body, &doc);
	if (rc == -EOPNOTSUPP) {
		return cmd->usage();
	}
	if (rc) {
		return CTL_EXIT_FAIL;
	}
	if (!doc) {
		printf("%s %s %s\n", cmd->kind, name, cmd->gone);
		return CTL_EXIT_OK;
	}
	rc = ctl_items_print(r, doc, NULL, cmd->header, cmd->row);
	json_decref(doc);
	return rc;
}

/* @value of option @o into @fields.  Returns 0 or -EINVAL. */
static int ctl_item_option_set(const struct ctl_item_option *o,
			       const char *value, json_t *fields)
{
	uint64_t n;

	if (o->kind == CTL_OPTION_STRING) {
		return json_object_set_new(fields, o->key, json_string(value))
			       ? -ENOMEM
			       : 0;
	}
	if (o->kind == CTL_OPTION_UINT32 ? ctl_parse_uint(value, UINT32_MAX, &n)
					 : pool_size_parse(value, &n)) {
		return -EINVAL;
	}
	return json_object_set_new(fields, o->key, json_integer((json_int_t)n))
		       ? -ENOMEM
		       : 0;
}

int ctl_item_run(const struct ctl_remote *r, const struct ctl_item_cmd *cmd,
		 int argc, char **argv)
{
	struct option opts[CTL_ITEM_MAX_OPTIONS + 1] = { { 0 } };
	json_t *fields = json_object();
	const char *verb, *name;
	bool complete = true;
	size_t n = 0;
	int c;

	for (; n < CTL_ITEM_MAX_OPTIONS && cmd->options[n].name; n++) {
		opts[n] = (struct option){ cmd->options[n].name,
					   required_argument, NULL, (int)n };
	}
	optind = 0;
	while (fields && (c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c < 0 || (size_t)c >= n ||
		    ctl_item_option_set(&cmd->options[c], optarg, fields)) {
			json_decref(fields);
			return cmd->usage();
		}
	}
	if (fields && ctl_item_operands(argc, argv, &verb, &name)) {
		json_decref(fields);
		return cmd->usage();
	}
	for (size_t i = 0; fields && i < n; i++) {
		if (cmd->options[i].required &&
		    !json_object_get(fields, cmd->options[i].key)) {
			complete = false;
		}
	}
	return ctl_item_main(r, cmd, fields ? verb : "", fields ? name : "",
			     fields, complete);
}
