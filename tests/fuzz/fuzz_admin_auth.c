// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_admin_auth: libFuzzer target for the admin endpoint's decision
 * (nfsd/admin/auth.c): Host, Origin, Sec-Fetch-Site, the bearer token,
 * the session cookie, and the allowed_hosts list.  Input: a flags byte
 * (which of the fields below are sent, and metrics_auth), then the
 * fields separated by '\n': method, url, host, origin, sec_fetch_site,
 * authorization, cookie, allowed_hosts.  Whatever the input, these hold:
 *   - a request served (status 0) gave a Host that names the endpoint,
 *     had no Origin but its own and no Sec-Fetch-Site but same-origin
 *     or none, and carried the token or a live session, unless it asked
 *     for a page that needs none;
 *   - a bearer token admits only when it is the token, byte for byte;
 *   - a refusal always has a reason.
 * Seeds: tests/fuzz/corpus/admin_auth/.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nfsd/admin/auth.h"

#define FUZZ_TOKEN                                                             \
	"5f2b9c0e7a41d3869b0c2e4f6a8d1b3c5e7f90a2c4e6081a3b5c7d9e0f1a2b3c"
#define FUZZ_FIELDS 8
#define FUZZ_PORT 8049

static bool fuzz_public(const char *method, const char *url, bool metrics)
{
	if (!strcmp(url, "/login") || !strcmp(url, "/logout")) {
		return !strcmp(method, "POST");
	}
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		return false;
	}
	return !strcmp(url, "/") || !strcmp(url, "/index.html") ||
	       !strcmp(url, "/dashboard.js") || !strcmp(url, "/chart.js") ||
	       (!metrics && !strcmp(url, "/metrics"));
}

/* @host (served) names the endpoint: only these bytes, a known name. */
static bool fuzz_host_sane(const char *host)
{
	for (const char *p = host; *p; p++) {
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWX"
			    "YZ"
			    "0123456789.-_:[]",
			    *p)) {
			return false;
		}
	}
	return host[0] != '\0';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf, *fields[FUZZ_FIELDS] = { 0 }, *p, err[256];
	char session[ADMIN_TOKEN_HEX_LEN + 1], cookie[96];
	struct admin_auth_config cfg = { .listen = "127.0.0.1",
					 .port = FUZZ_PORT };
	struct admin_auth_request req;
	struct admin_auth_verdict v;
	struct admin_auth a;
	uint8_t flags;
	size_t n = 0;

	if (size < 1) {
		return 0;
	}
	flags = data[0];
	buf = malloc(size);
	if (!buf) {
		return 0;
	}
	memcpy(buf, data + 1, size - 1);
	buf[size - 1] = '\0';
	for (p = buf; n < FUZZ_FIELDS; n++) {
		fields[n] = p;
		p = strchr(p, '\n');
		if (!p) {
			n++;
			break;
		}
		*p++ = '\0';
	}
	for (; n < FUZZ_FIELDS; n++) {
		fields[n] = "";
	}
	cfg.metrics_auth = !(flags & 0x80);
	cfg.allowed_hosts = fields[7];
	if (admin_auth_init(&a, &cfg, FUZZ_TOKEN, err, sizeof(err))) {
		if (!err[0]) {
			abort(); /* a refusal says why */
		}
		free(buf);
		return 0;
	}
	/* A live session, so that a cookie may match one. */
	if (admin_auth_login(&a, FUZZ_TOKEN, 100, session)) {
		abort();
	}
	req = (struct admin_auth_request){
		.method = fields[0],
		.url = fields[1],
		.host = flags & 0x01 ? fields[2] : NULL,
		.origin = flags & 0x02 ? fields[3] : NULL,
		.sec_fetch_site = flags & 0x04 ? fields[4] : NULL,
		.authorization = flags & 0x08 ? fields[5] : NULL,
		.cookie = flags & 0x10 ? fields[6] : NULL,
	};
	if (flags & 0x20) {
		/* the live session's cookie, the fuzz cookie after it */
		snprintf(cookie, sizeof(cookie), "dsnfs_session=%s; %.20s",
			 session, fields[6]);
		req.cookie = cookie;
	}
	admin_auth_decide(&a, &req, 200, &v);
	if (v.status && !v.why[0]) {
		abort();
	}
	if (v.status != 0 && v.status != 401 && v.status != 403 &&
	    v.status != 421) {
		abort();
	}
	if (!v.status) {
		if (!req.host || !fuzz_host_sane(req.host)) {
			abort();
		}
		if (req.origin && (strncasecmp(req.origin, "http://", 7) ||
				   strcasecmp(req.origin + 7, req.host))) {
			abort();
		}
		if (req.sec_fetch_site &&
		    strcmp(req.sec_fetch_site, "same-origin") &&
		    strcmp(req.sec_fetch_site, "none")) {
			abort();
		}
		if (!v.authenticated &&
		    !fuzz_public(req.method, req.url, cfg.metrics_auth)) {
			abort();
		}
	}
	if (v.authenticated && req.authorization &&
	    !strncasecmp(req.authorization, "Bearer ", 7)) {
		const char *t = req.authorization + 7;

		while (*t == ' ') {
			t++;
		}
		if (strcmp(t, FUZZ_TOKEN)) {
			abort(); /* only the token itself admits */
		}
	}
	/* the login of the fuzz text: only the token opens a session */
	if (!admin_auth_login(&a, fields[5], 300, session) &&
	    strcmp(fields[5], FUZZ_TOKEN)) {
		abort();
	}
	admin_auth_logout(&a, req.cookie);
	(void)admin_auth_peer_first(&a, fields[2]);
	admin_auth_fini(&a);
	free(buf);
	return 0;
}
