// SPDX-License-Identifier: Apache-2.0
/*
 * repl_manage: `dsnfsctl replication list|create|delete`, the relations of
 * a server as one collection (/replications; docs/replication.md,
 * "Relations made through the API").  create reads the key file and the
 * CA file here, on the caller's side, and sends them inline: the server
 * opens no file a caller names.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nfsd/ctl/ctl.h"

/* The largest key or CA file read (the server takes 16 KiB of PEM). */
#define REPL_MANAGE_FILE_MAX (16 * 1024)

/* Options of create and the body field each sets. */
static const struct {
	const char *opt, *field;
	bool number;
} repl_manage_opts[] = {
	{ "--role", "role", false },
	{ "--datastore", "datastore", false },
	{ "--destination-url", "destination_url", false },
	{ "--destination-datastore", "destination_datastore", false },
	{ "--schedule", "schedule", false },
	{ "--schedule-seconds", "schedule_seconds", true },
	{ "--timeout-seconds", "timeout_seconds", true },
	{ "--source-url", "source_url", false },
	{ "--source-datastore", "source_datastore", false },
};

static int repl_manage_usage(void)
{
	fprintf(stderr,
		"usage: dsnfsctl replication list\n"
		"       dsnfsctl replication create NAME --role source|"
		"destination\n"
		"           --datastore DS --key-file FILE [--ca-file FILE]\n"
		"           [--destination-url URL --destination-datastore "
		"DS]\n"
		"           [--schedule 10min|hourly|daily|none] "
		"[--schedule-seconds N]\n"
		"           [--timeout-seconds N] [--source-url URL "
		"--source-datastore DS]\n"
		"       dsnfsctl replication delete NAME\n");
	return CTL_EXIT_USAGE;
}

/* The text of file @path (at most REPL_MANAGE_FILE_MAX bytes; owned:
 * free()), or NULL with the reason on stderr. */
static char *repl_manage_read(const char *path)
{
	char *buf = malloc(REPL_MANAGE_FILE_MAX + 1);
	size_t n = 0;
	ssize_t r = 1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || !buf) {
		fprintf(stderr, "dsnfsctl: %s: %s\n", path,
			strerror(fd < 0 ? errno : ENOMEM));
		free(buf);
		if (fd >= 0) {
			close(fd);
		}
		return NULL;
	}
	while (r > 0 && n <= REPL_MANAGE_FILE_MAX) {
		r = read(fd, buf + n, REPL_MANAGE_FILE_MAX + 1 - n);
		n += r > 0 ? (size_t)r : 0;
	}
	close(fd);
	if (r < 0 || n > REPL_MANAGE_FILE_MAX) {
		fprintf(stderr, "dsnfsctl: %s: %s\n", path,
			r < 0 ? "cannot read" : "larger than 16 KiB");
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	/* The key file's newline is not a part of the key. */
	if (n && buf[n - 1] == '\n' && !strstr(buf, "-----BEGIN")) {
		buf[n - 1] = '\0';
	}
	return buf;
}

/* File option @field (key or ca) read into @body. */
static int repl_manage_file(json_t *body, const char *field, const char *path)
{
	char *text = repl_manage_read(path);

	if (!text) {
		return -EIO;
	}
	json_object_set_new(body, field, json_string(text));
	explicit_bzero(text, strlen(text));
	free(text);
	return 0;
}

/* The options after NAME into a POST /replications body; NULL on bad
 * usage or an unreadable file (said on stderr). */
static json_t *repl_manage_body(int argc, char **argv)
{
	json_t *body = json_pack("{s:s}", "name", argv[0]);
	uint64_t v;

	for (int i = 1; body && i < argc; i += 2) {
		size_t k = 0, nopts = sizeof(repl_manage_opts) /
				      sizeof(repl_manage_opts[0]);
		int err = 0;

		if (i + 1 >= argc) {
			break;
		}
		if (!strcmp(argv[i], "--key-file") ||
		    !strcmp(argv[i], "--ca-file")) {
			err = repl_manage_file(body,
					       argv[i][2] == 'k' ? "key" : "ca",
					       argv[i + 1]);
			if (err) {
				json_decref(body);
				return NULL;
			}
			continue;
		}
		while (k < nopts && strcmp(argv[i], repl_manage_opts[k].opt)) {
			k++;
		}
		if (k == nopts || (repl_manage_opts[k].number &&
				   ctl_parse_uint(argv[i + 1], 86400, &v))) {
			json_decref(body);
			return NULL;
		}
		json_object_set_new(body, repl_manage_opts[k].field,
				    repl_manage_opts[k].number
					    ? json_integer((json_int_t)v)
					    : json_string(argv[i + 1]));
	}
	if (body && argc % 2 == 0) {
		json_decref(body); /* an option without its value */
		return NULL;
	}
	return body;
}

static const char *repl_manage_str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s && *s ? s : "-";
}

static void repl_manage_row(struct ctl_table *t, const json_t *r)
{
	bool src = !strcmp(repl_manage_str(r, "role"), "source");

	ctl_table_row(
		t, repl_manage_str(r, "name"), repl_manage_str(r, "origin"),
		repl_manage_str(r, "role"), repl_manage_str(r, "volume"),
		repl_manage_str(r, "state"),
		repl_manage_str(r, src ? "destination_url" : "source_url"),
		repl_manage_str(r,
				src ? "destination_volume" : "source_volume"),
		repl_manage_str(r, "last_snapshot"));
}

int ctl_replication_manage(const struct ctl_remote *r, int argc, char **argv)
{
	static const char *const header[] = {
		"NAME",	     "ORIGIN",	     "ROLE",	     "VOLUME", "STATE",
		"OTHER END", "OTHER VOLUME", "LAST REPLICA", NULL,
	};
	const char *verb = argv[1];
	json_t *doc = NULL, *body;
	char path[256];
	int rc;

	if (!strcmp(verb, "list") && argc == 2) {
		return ctl_list_main(r, 1, "/replications", "relations", header,
				     repl_manage_row);
	}
	if (!strcmp(verb, "delete") && argc == 3) {
		snprintf(path, sizeof(path), "/replications/%s", argv[2]);
		if (ctl_api_call(r, "DELETE", path, NULL, NULL)) {
			return CTL_EXIT_FAIL;
		}
		printf("relation %s deleted\n", argv[2]);
		return CTL_EXIT_OK;
	}
	if (strcmp(verb, "create") || argc < 3) {
		return repl_manage_usage();
	}
	body = repl_manage_body(argc - 2, argv + 2);
	if (!body) {
		return repl_manage_usage();
	}
	rc = ctl_api_call(r, "POST", "/replications", body, &doc);
	if (rc || !doc) {
		json_decref(doc);
		return CTL_EXIT_FAIL;
	}
	if (r->json) {
		ctl_json_print(doc);
	} else {
		printf("relation %s made: %s of volume %s\n",
		       repl_manage_str(doc, "name"),
		       repl_manage_str(doc, "role"),
		       repl_manage_str(doc, "volume"));
	}
	json_decref(doc);
	return CTL_EXIT_OK;
}
