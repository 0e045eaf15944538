// SPDX-License-Identifier: Apache-2.0
/*
 * api: one call of the admin API for a dsnfsctl command: the request body
 * as JSON, the reply parsed, an error reply turned into one line on stderr
 * ("dsnfsctl: 400 Bad Request: pool p1: ...").
 */
#include "nfsd/ctl/ctl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/base/base.h"

void ctl_json_print(const json_t *doc)
{
	char *text = json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(10));

	if (text) {
		puts(text);
		free(text);
	}
}

static void api_error(const struct ctl_http_reply *reply)
{
	const json_t *msg;
	json_error_t e;
	json_t *doc;

	doc = json_loadb(reply->body, reply->len, 0, &e);
	msg = doc ? json_object_get(doc, "error") : NULL;
	if (json_is_string(msg)) {
		fprintf(stderr, "dsnfsctl: %u: %s\n", reply->status,
			json_string_value(msg));
	} else {
		fprintf(stderr, "dsnfsctl: %u: %.200s\n", reply->status,
			reply->body);
	}
	json_decref(doc);
}

int ctl_api_call(const struct ctl_remote *r, const char *method,
		 const char *path, json_t *body, json_t **doc)
{
	struct ctl_http_reply reply;
	char *text = NULL, err[300];
	json_error_t e;
	int rc;

	if (doc) {
		*doc = NULL;
	}
	if (body) {
		text = json_dumps(body, JSON_COMPACT);
		json_decref(body);
		if (!text) {
			fprintf(stderr, "dsnfsctl: out of memory\n");
			return -ENOMEM;
		}
	}
	rc = ctl_http_request(r, method, path, text, &reply, err, sizeof(err));
	free(text);
	if (rc) {
		fprintf(stderr, "dsnfsctl: %s\n", err);
		return rc;
	}
	if (reply.status < 200 || reply.status > 299) {
		api_error(&reply);
		ctl_http_reply_fini(&reply);
		return -EIO;
	}
	if (doc && reply.len) {
		*doc = json_loadb(reply.body, reply.len, 0, &e);
		if (!*doc) {
			fprintf(stderr,
				"dsnfsctl: %s%s: reply is not JSON: %s\n",
				r->server, path, e.text);
			rc = -EPROTO;
		}
	}
	ctl_http_reply_fini(&reply);
	return rc;
}

int ctl_item_call(const struct ctl_remote *r, const char *collection,
		  const char *verb, const char *name, json_t *body,
		  json_t **doc)
{
	static const struct {
		const char *verb;
		const char *method;
		bool named; /* the URL names the item */
	} verbs[] = {
		{ "create", "POST", false },
		{ "set", "PATCH", true },
		{ "show", "GET", true },
		{ "delete", "DELETE", true },
	};
	char path[160];

	for (size_t i = 0; i < ARRAY_SIZE(verbs); i++) {
		if (strcmp(verb, verbs[i].verb)) {
			continue;
		}
		if (verbs[i].named) {
			snprintf(path, sizeof(path), "/%s/%s", collection,
				 name);
		} else {
			snprintf(path, sizeof(path), "/%s", collection);
		}
		return ctl_api_call(r, verbs[i].method, path, body, doc);
	}
	json_decref(body);
	return -EOPNOTSUPP;
}
