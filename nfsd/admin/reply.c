// SPDX-License-Identifier: Apache-2.0
/*
 * reply: how a handler's result becomes a reply: a JSON document, an
 * {"error"} with its status, a text body, or none; and a registry error
 * as its HTTP status.  Every reply owns its body (admin__reply_fini()).
 */
#include "nfsd/admin/admin_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPLY_CONTENT_JSON "application/json"

void admin__reply_fini(struct admin_reply *reply)
{
	free(reply->body);
	reply->body = NULL;
	reply->len = 0;
}

/* Replaces the reply's body with @body (takes). */
static void reply_set(struct admin_reply *reply, unsigned status,
		      const char *content_type, char *body, size_t len)
{
	free(reply->body);
	reply->status = body ? status : 500;
	reply->content_type = content_type;
	reply->body = body;
	reply->len = body ? len : 0;
}

void admin__reply_json(struct admin_reply *reply, unsigned status, json_t *doc)
{
	char *text =
		doc ? json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(10))
		    : NULL;
	char *body = NULL;
	size_t len = 0;

	json_decref(doc);
	if (text) {
		len = strlen(text);
		body = malloc(len + 2);
		if (body) {
			memcpy(body, text, len);
			body[len++] = '\n';
			body[len] = '\0';
		}
		free(text);
	}
	reply_set(reply, status, REPLY_CONTENT_JSON, body, len);
}

/*
 * {"error": @msg}.  A message may quote a caller's bytes (the JSON
 * parser's error names the text where it stopped), and a JSON string
 * takes only UTF-8: when @msg is not, its bytes outside printable ASCII
 * become '?', so the error is still answered with its status.
 */
static json_t *reply_error_json(char *msg)
{
	json_t *doc = json_pack("{s:s}", "error", msg);

	if (doc) {
		return doc;
	}
	for (char *p = msg; *p; p++) {
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f) {
			*p = '?';
		}
	}
	return json_pack("{s:s}", "error", msg);
}

void admin__reply_error(struct admin_reply *reply, unsigned status,
			const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	admin__reply_json(reply, status, reply_error_json(msg));
}

void admin__reply_text(struct admin_reply *reply, unsigned status,
		       const char *content_type, struct admin_buf *text)
{
	if (text->err) {
		admin__buf_fini(text);
		admin__reply_error(reply, 500, "reply: %s",
				   strerror(-text->err));
		return;
	}
	reply_set(reply, status, content_type,
		  text->data ? text->data : strdup(""), text->len);
	memset(text, 0, sizeof(*text));
}

void admin__reply_empty(struct admin_reply *reply, unsigned status)
{
	reply_set(reply, status, NULL, strdup(""), 0);
}

unsigned admin__status_from_err(int err)
{
	switch (err) {
	case -EINVAL:
		return 400;
	case -ENOENT:
		return 404;
	case -EEXIST:
	case -ENOSPC:
	case -EBUSY:
		return 409;
	default:
		return 500;
	}
}
