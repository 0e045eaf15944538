// SPDX-License-Identifier: Apache-2.0
/*
 * snap_policy: `dsnfsctl snapshot policy show|set|clear DATASTORE`, a
 * datastore's snapshot policy through the admin API
 * (/volumes/NAME/snapshot-policy; docs/admin-api.md).  set takes each
 * schedule in the config's text form (dsnfsd.conf(5)): --hourly ':05 keep
 * 24' --daily '22:15 keep 7' --weekly 'mon,fri 23:00 keep 4' --monthly
 * '1,15 05:00 keep 12'; a kind not given is off.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "nfsd/ctl/ctl.h"

static const char *const policy_kinds[] = { "hourly", "daily", "weekly",
					    "monthly" };

static int policy_usage(void)
{
	fprintf(stderr,
		"usage: dsnfsctl snapshot policy show|clear DATASTORE\n"
		"       dsnfsctl snapshot policy set DATASTORE [--hourly "
		"':MM keep N'] [--daily 'HH:MM keep N']\n"
		"            [--weekly 'DAYS HH:MM keep N'] [--monthly "
		"'DAYS HH:MM keep N']\n");
	return CTL_EXIT_USAGE;
}

/* The policy as lines of text. */
static void policy_print(const json_t *doc)
{
	const json_t *pol = json_object_get(doc, "policy");
	const json_t *counts = json_object_get(doc, "counts");
	const json_t *alarm = json_object_get(doc, "alarm");
	time_t last = (time_t)json_integer_value(
		json_object_get(doc, "last_success_s"));
	char when[32] = "never";
	struct tm tm;

	if (last && gmtime_r(&last, &tm)) {
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	}
	printf("volume %s (policy from %s)\n",
	       json_string_value(json_object_get(doc, "volume")),
	       json_string_value(json_object_get(doc, "source")));
	for (size_t k = 0; k < 4; k++) {
		const json_t *c = json_object_get(counts, policy_kinds[k]);

		printf("  %-8s %-28s made %lld, deleted %lld, failed %lld\n",
		       policy_kinds[k],
		       json_string_value(json_object_get(pol, policy_kinds[k])),
		       (long long)json_integer_value(
			       json_object_get(c, "made")),
		       (long long)json_integer_value(
			       json_object_get(c, "deleted")),
		       (long long)json_integer_value(
			       json_object_get(c, "failed")));
	}
	printf("  last success %s\n", when);
	printf("  alarm        %s\n",
	       json_is_string(alarm) ? json_string_value(alarm) : "none");
}

/* --KIND TEXT pairs into a PUT body, or NULL on bad usage. */
static json_t *policy_body(int argc, char **argv)
{
	json_t *body = json_object();

	for (int i = 0; body && i < argc; i += 2) {
		const char *kind = NULL;

		for (size_t k = 0; k < 4; k++) {
			if (!strncmp(argv[i], "--", 2) &&
			    !strcmp(argv[i] + 2, policy_kinds[k])) {
				kind = policy_kinds[k];
			}
		}
		if (!kind || i + 1 >= argc) {
			json_decref(body);
			return NULL;
		}
		json_object_set_new(body, kind, json_string(argv[i + 1]));
	}
	return body;
}

int ctl_snapshot_policy_main(const struct ctl_remote *r, int argc, char **argv)
{
	const char *verb = argc > 2 ? argv[2] : "";
	json_t *doc = NULL, *body = NULL;
	char path[256];
	int rc;

	if (argc < 4) {
		return policy_usage();
	}
	snprintf(path, sizeof(path), "/volumes/%s/snapshot-policy", argv[3]);
	if (!strcmp(verb, "show") && argc == 4) {
		rc = ctl_api_call(r, "GET", path, NULL, &doc);
	} else if (!strcmp(verb, "clear") && argc == 4) {
		rc = ctl_api_call(r, "DELETE", path, NULL, NULL);
		if (!rc && !r->json) {
			printf("snapshot policy of %s: cleared\n", argv[3]);
		}
		return rc ? CTL_EXIT_FAIL : CTL_EXIT_OK;
	} else if (!strcmp(verb, "set")) {
		body = policy_body(argc - 4, argv + 4);
		if (!body) {
			return policy_usage();
		}
		rc = ctl_api_call(r, "PUT", path, body, &doc);
	} else {
		return policy_usage();
	}
	if (rc || !doc) {
		json_decref(doc);
		return CTL_EXIT_FAIL;
	}
	if (r->json) {
		ctl_json_print(doc);
	} else {
		policy_print(doc);
	}
	json_decref(doc);
	return CTL_EXIT_OK;
}
