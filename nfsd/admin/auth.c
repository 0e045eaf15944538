// SPDX-License-Identifier: Apache-2.0
/*
 * auth: the admin endpoint's decision, Host, then Origin, then the
 * credential (auth.h).  Nothing here knows HTTP connections.
 */
#include "nfsd/admin/auth.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include "nfsd/base/base.h"
#include "nfsd/base/errbuf.h"

/* A host name or address literal as a Host may give it: letters, digits,
 * '-', '.', '_' and ':' (IPv6, bracketed by the caller). */
static bool auth_name_valid(const char *s, size_t n)
{
	if (n == 0 || n >= ADMIN_HOST_NAME_MAX) {
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '-' || c == '.' ||
		      c == '_' || c == ':')) {
			return false;
		}
	}
	return true;
}

static void auth_lower_copy(char *dst, const char *src, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = src[i];

		dst[i] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
	}
	dst[n] = '\0';
}

int admin_auth_init(struct admin_auth *a, const struct admin_auth_config *cfg,
		    const char *token, char *errbuf, size_t errlen)
{
	const char *p = cfg->allowed_hosts ? cfg->allowed_hosts : "";
	size_t n;

	memset(a, 0, sizeof(*a));
	n = strlen(cfg->listen);
	if (n && cfg->listen[0] == '[' && cfg->listen[n - 1] == ']') {
		auth_lower_copy(a->listen, cfg->listen + 1,
				n - 2 < sizeof(a->listen) ? n - 2 : 0);
	} else if (n < sizeof(a->listen)) {
		auth_lower_copy(a->listen, cfg->listen, n);
	}
	a->port = cfg->port;
	a->tls = cfg->tls;
	a->metrics_auth = cfg->metrics_auth;
	while (*p) {
		p += strspn(p, ", \t");
		n = strcspn(p, ", \t");
		if (!n) {
			break;
		}
		if (!auth_name_valid(p, n)) {
			return errbuf_printf(errbuf, errlen, -EINVAL,
					     "allowed_hosts: '%.*s' is not a "
					     "host name or address",
					     (int)(n < 100 ? n : 100), p);
		}
		if (a->n_hosts == ADMIN_ALLOWED_HOSTS_MAX) {
			return errbuf_printf(
				errbuf, errlen, -EINVAL,
				"allowed_hosts: more than %d names",
				ADMIN_ALLOWED_HOSTS_MAX);
		}
		auth_lower_copy(a->hosts[a->n_hosts++], p, n);
		p += n;
	}
	memcpy(a->token, token, ADMIN_TOKEN_HEX_LEN);
	a->token[ADMIN_TOKEN_HEX_LEN] = '\0';
	pthread_mutex_init(&a->lock, NULL);
	return 0;
}

void admin_auth_fini(struct admin_auth *a)
{
	pthread_mutex_destroy(&a->lock);
	explicit_bzero(a->token, sizeof(a->token));
	explicit_bzero(a->sessions, sizeof(a->sessions));
}

bool admin_auth_token_equal(const char *token, const char *given)
{
	size_t n = given ? strlen(given) : 0;
	unsigned char diff = n != ADMIN_TOKEN_HEX_LEN;

	/* Every byte of the token is compared, against @given's own bytes
	 * or against itself when @given is shorter. */
	for (size_t i = 0; i < ADMIN_TOKEN_HEX_LEN; i++) {
		unsigned char g = i < n ? (unsigned char)given[i]
					: (unsigned char)token[i];

		diff |= g ^ (unsigned char)token[i];
	}
	return diff == 0;
}

/* @host splits into a name (lowercase, brackets dropped) and a port
 * (-1: none).  False when it is not NAME, NAME:PORT, [V6] or
 * [V6]:PORT. */
static bool auth_host_split(const char *host, char *name, int *port)
{
	const char *end, *colon;
	size_t n;

	*port = -1;
	if (host[0] == '[') {
		end = strchr(host, ']');
		if (!end) {
			return false;
		}
		n = (size_t)(end - host - 1);
		if (!auth_name_valid(host + 1, n)) {
			return false;
		}
		auth_lower_copy(name, host + 1, n);
		colon = end[1] == ':' ? end + 1 : NULL;
		if (!colon && end[1]) {
			return false;
		}
	} else {
		colon = strchr(host, ':');
		if (colon && strchr(colon + 1, ':')) {
			return false; /* a bare IPv6 address is not a Host */
		}
		n = colon ? (size_t)(colon - host) : strlen(host);
		if (!auth_name_valid(host, n)) {
			return false;
		}
		auth_lower_copy(name, host, n);
	}
	if (colon) {
		const char *d = colon + 1;
		long v = 0;

		if (!*d || strlen(d) > 5) {
			return false;
		}
		for (; *d; d++) {
			if (*d < '0' || *d > '9') {
				return false;
			}
			v = v * 10 + (*d - '0');
		}
		*port = (int)v;
	}
	return true;
}

/* @name (lowercase) is one this endpoint answers to. */
static bool auth_name_allowed(const struct admin_auth *a, const char *name)
{
	static const char *const loopback[] = { "localhost", "127.0.0.1",
						"::1" };

	if (a->listen[0] && !strcmp(name, a->listen) &&
	    strcmp(name, "0.0.0.0") && strcmp(name, "::")) {
		return true;
	}
	for (size_t i = 0; i < ARRAY_SIZE(loopback); i++) {
		if (!strcmp(name, loopback[i])) {
			return true;
		}
	}
	for (size_t i = 0; i < a->n_hosts; i++) {
		if (!strcmp(name, a->hosts[i])) {
			return true;
		}
	}
	return false;
}

static bool auth_host_ok(const struct admin_auth *a, const char *host)
{
	char name[ADMIN_HOST_NAME_MAX];
	int port;

	if (!host || !auth_host_split(host, name, &port)) {
		return false;
	}
	if (port >= 0 && port != __atomic_load_n(&a->port, __ATOMIC_ACQUIRE)) {
		return false;
	}
	return auth_name_allowed(a, name);
}

/* An Origin is this endpoint's own: SCHEME://HOST exactly (browsers
 * send the Host's text), case aside. */
static bool auth_origin_ok(const struct admin_auth *a, const char *origin,
			   const char *host)
{
	const char *scheme = a->tls ? "https://" : "http://";
	size_t n = strlen(scheme);

	return !strncasecmp(origin, scheme, n) && !strcasecmp(origin + n, host);
}

/* The value of cookie @name in a Cookie header, into @out (@len bytes):
 * true when found and it fits. */
static bool auth_cookie_get(const char *cookie, const char *name, char *out,
			    size_t len)
{
	size_t nl = strlen(name);
	const char *p = cookie;

	while (p && *p) {
		size_t n;

		p += strspn(p, "; \t");
		n = strcspn(p, ";");
		if (n > nl && !strncmp(p, name, nl) && p[nl] == '=') {
			size_t v = n - nl - 1;

			while (v && (p[nl + 1 + v - 1] == ' ' ||
				     p[nl + 1 + v - 1] == '\t')) {
				v--;
			}
			if (v >= len) {
				return false;
			}
			memcpy(out, p + nl + 1, v);
			out[v] = '\0';
			return true;
		}
		p += n;
	}
	return false;
}

/* A live session has the id of @cookie's session cookie.  Locked. */
static bool auth_session_valid(struct admin_auth *a, const char *cookie,
			       time_t now)
{
	char id[ADMIN_TOKEN_HEX_LEN + 2];
	bool ok = false;

	if (!cookie ||
	    !auth_cookie_get(cookie, ADMIN_SESSION_COOKIE, id, sizeof(id))) {
		return false;
	}
	for (size_t i = 0; i < ADMIN_SESSIONS_MAX; i++) {
		struct admin_auth_session *s = &a->sessions[i];

		/* every slot compared: the time says nothing of the ids */
		ok |= s->id[0] && s->expires > now &&
		      admin_auth_token_equal(s->id, id);
	}
	return ok;
}

/* The bearer token of an Authorization header, or NULL. */
static const char *auth_bearer(const char *authorization)
{
	static const char scheme[] = "Bearer ";

	if (!authorization ||
	    strncasecmp(authorization, scheme, sizeof(scheme) - 1)) {
		return NULL;
	}
	authorization += sizeof(scheme) - 1;
	while (*authorization == ' ') {
		authorization++;
	}
	return authorization;
}

/* Needs no credential: the login step and what the login page loads
 * (static, no data); /metrics when [admin] metrics_auth = false. */
static bool auth_public(const struct admin_auth *a,
			const struct admin_auth_request *req)
{
	bool get = !strcmp(req->method, "GET") || !strcmp(req->method, "HEAD");

	if (!strcmp(req->url, "/login") || !strcmp(req->url, "/logout")) {
		return !strcmp(req->method, "POST");
	}
	if (!get) {
		return false;
	}
	return !strcmp(req->url, "/") || !strcmp(req->url, "/index.html") ||
	       !strcmp(req->url, "/dashboard.js") ||
	       !strcmp(req->url, "/chart.js") ||
	       (!a->metrics_auth && !strcmp(req->url, "/metrics"));
}

static void auth_refuse(struct admin_auth_verdict *out, unsigned status,
			const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void auth_refuse(struct admin_auth_verdict *out, unsigned status,
			const char *fmt, ...)
{
	va_list ap;

	out->status = status;
	va_start(ap, fmt);
	vsnprintf(out->why, sizeof(out->why), fmt, ap);
	va_end(ap);
}

void admin_auth_decide(struct admin_auth *a,
		       const struct admin_auth_request *req, time_t now,
		       struct admin_auth_verdict *out)
{
	const char *bearer;

	memset(out, 0, sizeof(*out));
	if (!auth_host_ok(a, req->host)) {
		auth_refuse(out, 421,
			    "Host '%.100s' is not this endpoint's (a name "
			    "that is not in [admin] allowed_hosts)",
			    req->host ? req->host : "");
		return;
	}
	if (req->origin && !auth_origin_ok(a, req->origin, req->host)) {
		auth_refuse(out, 403,
			    "cross-origin request refused (Origin '%.100s')",
			    req->origin);
		return;
	}
	if (req->sec_fetch_site && strcmp(req->sec_fetch_site, "same-origin") &&
	    strcmp(req->sec_fetch_site, "none")) {
		auth_refuse(out, 403,
			    "cross-origin request refused (Sec-Fetch-Site: "
			    "%.30s)",
			    req->sec_fetch_site);
		return;
	}
	bearer = auth_bearer(req->authorization);
	if (bearer) {
		/* A wrong token is refused even when a cookie would do: a
		 * client that sends one means it. */
		out->authenticated = admin_auth_token_equal(a->token, bearer);
		if (!out->authenticated) {
			auth_refuse(out, 401, "the bearer token is wrong");
		}
		return;
	}
	pthread_mutex_lock(&a->lock);
	out->authenticated = auth_session_valid(a, req->cookie, now);
	pthread_mutex_unlock(&a->lock);
	if (!out->authenticated && !auth_public(a, req)) {
		auth_refuse(out, 401,
			    "no credential: send Authorization: Bearer "
			    "<the token of STATE_DIR/admin.token>");
	}
}

int admin_auth_login(struct admin_auth *a, const char *given, time_t now,
		     char *id)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char raw[ADMIN_TOKEN_BYTES];
	struct admin_auth_session *slot;

	if (!admin_auth_token_equal(a->token, given)) {
		return -EACCES;
	}
	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
		return -EIO;
	}
	for (size_t i = 0; i < sizeof(raw); i++) {
		id[2 * i] = hex[raw[i] >> 4];
		id[2 * i + 1] = hex[raw[i] & 15];
	}
	id[ADMIN_TOKEN_HEX_LEN] = '\0';
	pthread_mutex_lock(&a->lock);
	slot = &a->sessions[0];
	for (size_t i = 0; i < ADMIN_SESSIONS_MAX; i++) {
		struct admin_auth_session *s = &a->sessions[i];

		if (!s->id[0] || s->expires <= now) {
			slot = s;
			break;
		}
		if (s->expires < slot->expires) {
			slot = s;
		}
	}
	memcpy(slot->id, id, ADMIN_TOKEN_HEX_LEN + 1);
	slot->expires = now + ADMIN_SESSION_LIFETIME_S;
	pthread_mutex_unlock(&a->lock);
	return 0;
}

void admin_auth_logout(struct admin_auth *a, const char *cookie)
{
	char id[ADMIN_TOKEN_HEX_LEN + 2];

	if (!cookie ||
	    !auth_cookie_get(cookie, ADMIN_SESSION_COOKIE, id, sizeof(id))) {
		return;
	}
	pthread_mutex_lock(&a->lock);
	for (size_t i = 0; i < ADMIN_SESSIONS_MAX; i++) {
		struct admin_auth_session *s = &a->sessions[i];

		if (s->id[0] && admin_auth_token_equal(s->id, id)) {
			memset(s, 0, sizeof(*s));
		}
	}
	pthread_mutex_unlock(&a->lock);
}

bool admin_auth_peer_first(struct admin_auth *a, const char *peer)
{
	bool first = true;

	pthread_mutex_lock(&a->lock);
	for (size_t i = 0; i < a->n_peers && first; i++) {
		first = strcmp(a->peers[i], peer) != 0;
	}
	if (first) {
		if (a->n_peers < ADMIN_AUTH_PEERS_LOGGED) {
			snprintf(a->peers[a->n_peers++], sizeof(a->peers[0]),
				 "%s", peer);
		} else if (a->peers_full_logged) {
			first = false; /* the table is full: quiet from now */
		} else {
			a->peers_full_logged = true;
		}
	}
	pthread_mutex_unlock(&a->lock);
	return first;
}
