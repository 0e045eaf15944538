// SPDX-License-Identifier: Apache-2.0
/*
 * changes: `dsnfsctl changes` shows what the admin API changed over the
 * config (GET /changes: the overlay dsnfsd keeps in
 * STATE_DIR/admin-state.json and lays over the config at every start and
 * SIGHUP); `dsnfsctl changes revert` forgets it (DELETE /changes): the
 * config's pools, volumes and caps are live again at once.
 */
#include <stdio.h>
#include <string.h>

#include "nfsd/ctl/ctl.h"

/* "size_tib=8 level=Ultra": every member of @obj but @skip1/@skip2. */
static void changes_fields(const json_t *obj, const char *skip1,
			   const char *skip2, char *buf, size_t len)
{
	const char *key;
	json_t *v;
	size_t used = 0;

	buf[0] = '\0';
	json_object_foreach((json_t *)obj, key, v)
	{
		char val[64];

		if ((skip1 && !strcmp(key, skip1)) ||
		    (skip2 && !strcmp(key, skip2))) {
			continue;
		}
		if (json_is_string(v)) {
			snprintf(val, sizeof(val), "%s", json_string_value(v));
		} else {
			ctl_fmt_member(obj, key, false, val, sizeof(val));
		}
		if (used < len) {
			used += (size_t)snprintf(buf + used, len - used,
						 "%s%s=%s", used ? " " : "",
						 key, val);
		}
	}
	if (!buf[0]) {
		snprintf(buf, len, "-");
	}
}

/* One row per entry of the list @key ("pools") of @doc. */
static void changes_rows(struct ctl_table *t, const json_t *doc,
			 const char *key, const char *kind)
{
	const json_t *list = json_object_get(doc, key);
	size_t i;
	json_t *e;

	json_array_foreach(list, i, e)
	{
		char fields[512];

		changes_fields(e, "name", "change", fields, sizeof(fields));
		ctl_table_row(t, kind,
			      json_string_value(json_object_get(e, "name")),
			      json_string_value(json_object_get(e, "change")),
			      fields);
	}
}

static int changes_show(const struct ctl_remote *r)
{
	static const char *const header[] = { "OBJECT", "NAME", "CHANGE",
					      "FIELDS", NULL };
	const json_t *caps;
	struct ctl_table t;
	json_t *doc;
	bool empty;
	int rc;

	if (ctl_api_call(r, "GET", "/changes", NULL, &doc) || !doc) {
		return CTL_EXIT_FAIL;
	}
	if (r->json) {
		ctl_json_print(doc);
		json_decref(doc);
		return CTL_EXIT_OK;
	}
	ctl_table_init(&t, header);
	changes_rows(&t, doc, "pools", "pool");
	changes_rows(&t, doc, "volumes", "volume");
	caps = json_object_get(doc, "caps");
	if (json_object_size(caps)) {
		char fields[512];

		changes_fields(caps, NULL, NULL, fields, sizeof(fields));
		ctl_table_row(&t, "caps", "-", "changed", fields);
	}
	printf("changes over the config, kept in %s:\n",
	       json_string_value(json_object_get(doc, "file")));
	empty = t.nrows == 0;
	rc = ctl_table_print(&t);
	if (!rc && empty) {
		printf("(none: the live state is the config's)\n");
	}
	json_decref(doc);
	return rc ? CTL_EXIT_FAIL : CTL_EXIT_OK;
}

int ctl_changes_main(const struct ctl_remote *r, int argc, char **argv)
{
	if (argc == 1) {
		return changes_show(r);
	}
	if (argc == 2 && !strcmp(argv[1], "revert")) {
		if (ctl_api_call(r, "DELETE", "/changes", NULL, NULL)) {
			return CTL_EXIT_FAIL;
		}
		printf("changes forgotten: the config's pools, volumes and "
		       "caps are live\n");
		return CTL_EXIT_OK;
	}
	fprintf(stderr, "usage: dsnfsctl changes [revert]\n");
	return CTL_EXIT_USAGE;
}
