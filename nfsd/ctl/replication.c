// SPDX-License-Identifier: Apache-2.0
/*
 * replication: `dsnfsctl replication show|transfer|break|resync|reverse
 * DATASTORE [--relation NAME]`, a datastore's replication relations through the
 * admin API (/volumes/NAME/replication; docs/replication.md).  The
 * relations themselves are [replication NAME] sections of dsnfsd.conf(5)
 * or made through the API (list, create, delete: repl_manage.c).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "nfsd/ctl/ctl.h"
#include "nfsd/repl/sched.h"

static int repl_usage(void)
{
	fprintf(stderr, "usage: dsnfsctl replication show|transfer|break|"
			"resync|reverse DATASTORE [--relation NAME]\n"
			"       dsnfsctl replication list|create|delete ...\n");
	return CTL_EXIT_USAGE;
}

static const char *repl_time(json_int_t s, char *buf, size_t len)
{
	time_t t = (time_t)s;
	struct tm tm;

	if (!s || !gmtime_r(&t, &tm)) {
		return "never";
	}
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
}

static long long repl_int(const json_t *o, const char *key)
{
	return (long long)json_integer_value(json_object_get(o, key));
}

static const char *repl_str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s && *s ? s : "-";
}

static void repl_print(const json_t *doc)
{
	const json_t *list = json_object_get(doc, "relations"), *r;
	size_t i;
	char when[32], sched[32];

	json_array_foreach(list, i, r)
	{
		const json_t *last = json_object_get(r, "last");

		printf("relation %s: %s of volume %s%s, %s\n",
		       repl_str(r, "name"), repl_str(r, "role"),
		       repl_str(r, "volume"),
		       json_is_true(json_object_get(r, "reversed"))
			       ? " (reversed)"
			       : "",
		       repl_str(r, "state"));
		if (strcmp(repl_str(r, "role"), "source")) {
			/* Known only where the destination may be reversed. */
			if (*repl_str(r, "source_url") != '-') {
				printf("  from          %s volume %s\n",
				       repl_str(r, "source_url"),
				       repl_str(r, "source_volume"));
			}
			printf("  last replica  %s\n",
			       repl_str(r, "last_snapshot"));
			continue;
		}
		printf("  to            %s volume %s\n",
		       repl_str(r, "destination_url"),
		       repl_str(r, "destination_volume"));
		printf("  schedule      %s\n",
		       repl_sched_text(json_string_value(
					       json_object_get(r, "schedule")),
				       repl_int(r, "schedule_seconds"), sched,
				       sizeof(sched)));
		printf("  last replica  %s, at %s, lag %lld s\n",
		       repl_str(r, "last_snapshot"),
		       repl_time(repl_int(r, "last_transfer_s"), when,
				 sizeof(when)),
		       repl_int(r, "lag_s"));
		printf("  last transfer %lld files (%lld resumed%s), %lld "
		       "bytes "
		       "sent of %lld candidate\n",
		       repl_int(last, "files"), repl_int(last, "files_resumed"),
		       json_is_true(json_object_get(last, "restarted"))
			       ? ", restarted"
			       : "",
		       repl_int(last, "sent_bytes"),
		       repl_int(last, "candidate_bytes"));
		printf("  snapshots     %lld carried, %lld deleted by the last "
		       "transfer; %lld carried in all\n",
		       repl_int(last, "snapshots"),
		       repl_int(last, "snapshots_deleted"),
		       repl_int(r, "snapshots_total"));
		printf("  totals        %lld ok, %lld failed, %lld skipped, "
		       "%lld bytes sent\n",
		       repl_int(r, "transfers_ok"),
		       repl_int(r, "transfers_failed"),
		       repl_int(r, "runs_skipped"),
		       repl_int(r, "bytes_sent_total"));
		printf("  error         %s%s%s%s\n  alarm         %s\n",
		       repl_str(r, "error"),
		       *repl_str(r, "last_error") != '-' ? " (" : "",
		       *repl_str(r, "last_error") != '-'
			       ? repl_str(r, "last_error")
			       : "",
		       *repl_str(r, "last_error") != '-' ? ")" : "",
		       repl_str(r, "alarm"));
	}
}

int ctl_replication_main(const struct ctl_remote *r, int argc, char **argv)
{
	const char *verb = argc > 1 ? argv[1] : "", *rel = NULL;
	json_t *doc = NULL;
	char path[256];
	int rc;

	if (!strcmp(verb, "list") || !strcmp(verb, "create") ||
	    !strcmp(verb, "delete")) {
		return ctl_replication_manage(r, argc, argv);
	}
	if (argc == 5 && !strcmp(argv[3], "--relation")) {
		rel = argv[4];
	} else if (argc != 3) {
		return repl_usage();
	}
	if (!strcmp(verb, "show")) {
		snprintf(path, sizeof(path), "/volumes/%s/replication",
			 argv[2]);
		rc = ctl_api_call(r, "GET", path, NULL, &doc);
	} else if (!strcmp(verb, "transfer") || !strcmp(verb, "break") ||
		   !strcmp(verb, "resync") || !strcmp(verb, "reverse")) {
		snprintf(path, sizeof(path), "/volumes/%s/replication/%s%s%s",
			 argv[2], verb, rel ? "?relation=" : "",
			 rel ? rel : "");
		rc = ctl_api_call(r, "POST", path, json_object(), &doc);
	} else {
		return repl_usage();
	}
	if (rc || !doc) {
		json_decref(doc);
		return CTL_EXIT_FAIL;
	}
	if (r->json) {
		ctl_json_print(doc);
	} else if (!strcmp(verb, "transfer")) {
		printf("replication of %s: transfer queued (see: dsnfsctl "
		       "replication show %s)\n",
		       argv[2], argv[2]);
	} else {
		repl_print(doc);
	}
	json_decref(doc);
	return CTL_EXIT_OK;
}
