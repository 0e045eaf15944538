// SPDX-License-Identifier: Apache-2.0
/*
 * snapshots: `dsnfsctl snapshot create|list|delete|restore DATASTORE
 * [NAME]`, the datastore snapshots of the admin API
 * (/volumes/NAME/snapshots; README.md, "Admin API"); a create, delete or
 * restore is an operation, followed to its end (ctl_op_wait(): a
 * progress bar on a terminal).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "nfsd/ctl/ctl.h"

static const char *const snap_header[] = { "NAME", "CREATED", NULL };

static void snap_row(struct ctl_table *t, const json_t *s)
{
	time_t when =
		(time_t)json_integer_value(json_object_get(s, "created_s"));
	char created[32] = "-";
	struct tm tm;

	if (gmtime_r(&when, &tm)) {
		strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", &tm);
	}
	ctl_table_row(t, json_string_value(json_object_get(s, "name")),
		      created);
}

static int snap_usage(void)
{
	fprintf(stderr, "usage: dsnfsctl snapshot create|delete|restore "
			"DATASTORE NAME\n"
			"       dsnfsctl snapshot list DATASTORE\n"
			"       dsnfsctl snapshot policy show|set|clear "
			"DATASTORE ...\n");
	return CTL_EXIT_USAGE;
}

int ctl_snapshot_main(const struct ctl_remote *r, int argc, char **argv)
{
	const char *verb = argc > 1 ? argv[1] : "";
	char path[256];
	json_t *doc = NULL, *last = NULL;
	int rc;

	if (!strcmp(verb, "policy")) {
		return ctl_snapshot_policy_main(r, argc, argv);
	}
	if (!strcmp(verb, "list") && argc == 3) {
		snprintf(path, sizeof(path), "/volumes/%s/snapshots", argv[2]);
		if (ctl_api_call(r, "GET", path, NULL, &doc)) {
			return CTL_EXIT_FAIL;
		}
		rc = ctl_items_print(r, doc, "snapshots", snap_header,
				     snap_row);
		json_decref(doc);
		return rc;
	}
	if (argc != 4) {
		return snap_usage();
	}
	if (!strcmp(verb, "create")) {
		snprintf(path, sizeof(path), "/volumes/%s/snapshots", argv[2]);
		rc = ctl_api_call(r, "POST", path,
				  json_pack("{s:s}", "name", argv[3]), &doc);
	} else if (!strcmp(verb, "delete")) {
		snprintf(path, sizeof(path), "/volumes/%s/snapshots/%s",
			 argv[2], argv[3]);
		rc = ctl_api_call(r, "DELETE", path, NULL, &doc);
	} else if (!strcmp(verb, "restore")) {
		snprintf(path, sizeof(path), "/volumes/%s/snapshots/%s/restore",
			 argv[2], argv[3]);
		rc = ctl_api_call(r, "POST", path, json_object(), &doc);
	} else {
		return snap_usage();
	}
	if (rc || !doc) {
		json_decref(doc);
		return CTL_EXIT_FAIL;
	}
	/* The server answers with the operation; it ends here. */
	rc = ctl_op_wait(r, doc, &last);
	doc = last;
	if (rc) {
		json_decref(doc);
		return CTL_EXIT_FAIL;
	}
	if (r->json) {
		ctl_json_print(doc);
	} else {
		printf("snapshot %s of %s: %s\n", argv[3], argv[2],
		       !strcmp(verb, "create")	 ? "created"
		       : !strcmp(verb, "delete") ? "deleted"
						 : "restored");
	}
	json_decref(doc);
	return CTL_EXIT_OK;
}
