// SPDX-License-Identifier: Apache-2.0
/*
 * login: the dashboard's way to the token without putting it in a URL.
 * POST /login with the token, as a form (token=HEX) or as JSON
 * ({"token": "HEX"}), sets a session cookie (random, HttpOnly,
 * SameSite=Strict, Path=/, expiring) that the page's polls carry; POST
 * /logout ends it.  http.c has already refused a cross-origin request.
 */
#include "nfsd/admin/admin_int.h"
#include "nfsd/admin/auth.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static int login_hex(char c)
{
	return c >= '0' && c <= '9'   ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
				      : -1;
}

/* A form value (@n bytes of @v) percent-decoded into @out (@len bytes),
 * without the blanks a pasted token may end with. */
static bool login_form_decode(const char *v, size_t n, char *out, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		char c = v[i];

		if (c == '+') {
			c = ' ';
		} else if (c == '%' && i + 2 < n && login_hex(v[i + 1]) >= 0 &&
			   login_hex(v[i + 2]) >= 0) {
			c = (char)(login_hex(v[i + 1]) * 16 +
				   login_hex(v[i + 2]));
			i += 2;
		}
		if (o + 1 >= len) {
			return false;
		}
		out[o++] = c;
	}
	while (o && (out[o - 1] == '\n' || out[o - 1] == '\r' ||
		     out[o - 1] == ' ')) {
		o--;
	}
	out[o] = '\0';
	return true;
}

/* The token of a form body "token=HEX[&...]" into @out (@len bytes). */
static bool login_form_token(const char *body, size_t n, char *out, size_t len)
{
	const char *p = body, *end = body + n;

	while (p < end) {
		const char *amp = memchr(p, '&', (size_t)(end - p));
		size_t field = amp ? (size_t)(amp - p) : (size_t)(end - p);

		if (field > 6 && !strncmp(p, "token=", 6)) {
			return login_form_decode(p + 6, field - 6, out, len);
		}
		p += field + 1;
	}
	return false;
}

/* The token of a JSON body {"token": "HEX"} into @out. */
static bool login_json_token(const char *body, size_t n, char *out, size_t len)
{
	json_t *doc = json_loadb(body, n, JSON_REJECT_DUPLICATES, NULL);
	const char *t = json_string_value(json_object_get(doc, "token"));
	bool ok = t && strlen(t) < len;

	if (ok) {
		strcpy(out, t);
	}
	json_decref(doc);
	return ok;
}

static bool login_is(const char *content_type, const char *want)
{
	size_t n = strlen(want);

	return content_type && !strncasecmp(content_type, want, n) &&
	       (content_type[n] == '\0' || content_type[n] == ';');
}

bool admin__login_handle(struct admin_auth *auth, bool tls, const char *method,
			 const char *url, const char *content_type,
			 const char *cookie, const char *body, size_t len,
			 time_t now, struct admin_reply *reply)
{
	char given[ADMIN_TOKEN_HEX_LEN + 2] = "";
	char id[ADMIN_TOKEN_HEX_LEN + 1];
	bool form, found = false;
	int err;

	if (strcmp(url, "/login") && strcmp(url, "/logout")) {
		return false;
	}
	memset(reply, 0, sizeof(*reply));
	if (strcmp(method, "POST")) {
		snprintf(reply->allow, sizeof(reply->allow), "POST");
		admin__reply_error(reply, 405, "%.16s is not allowed on %s",
				   method, url);
		return true;
	}
	if (!strcmp(url, "/logout")) {
		admin_auth_logout(auth, cookie);
		snprintf(reply->set_cookie, sizeof(reply->set_cookie),
			 "%s=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0%s",
			 ADMIN_SESSION_COOKIE, tls ? "; Secure" : "");
		admin__reply_empty(reply, 204);
		return true;
	}
	form = login_is(content_type, "application/x-www-form-urlencoded");
	if (form && body) {
		found = login_form_token(body, len, given, sizeof(given));
	} else if (login_is(content_type, "application/json") && body) {
		found = login_json_token(body, len, given, sizeof(given));
	} else {
		admin__reply_error(reply, 415,
				   "login: a form (token=...) or JSON "
				   "({\"token\": ...}) body is needed");
		return true;
	}
	err = found ? admin_auth_login(auth, given, now, id) : -EACCES;
	explicit_bzero(given, sizeof(given));
	if (err == -EACCES) {
		reply->bearer_challenge = true;
		admin__reply_error(reply, 401,
				   "login: not the token of admin.token");
		return true;
	}
	if (err) {
		admin__reply_error(reply, 500, "login: no session: %s",
				   strerror(-err));
		return true;
	}
	snprintf(reply->set_cookie, sizeof(reply->set_cookie),
		 "%s=%s; HttpOnly; SameSite=Strict; Path=/; Max-Age=%d%s",
		 ADMIN_SESSION_COOKIE, id, ADMIN_SESSION_LIFETIME_S,
		 tls ? "; Secure" : "");
	explicit_bzero(id, sizeof(id));
	if (form) {
		/* A plain form: back to the page, now with the session. */
		snprintf(reply->location, sizeof(reply->location), "/");
		admin__reply_empty(reply, 303);
	} else {
		admin__reply_empty(reply, 204);
	}
	return true;
}
