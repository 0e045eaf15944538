// SPDX-License-Identifier: Apache-2.0
/*
 * https: dsnfsctl's requests to an admin endpoint that speaks HTTPS (one
 * that listens beyond loopback must), through libcurl: the server's
 * certificate is checked against --cacert or the system's store, and its
 * name against the host given.  The token goes in a header list, never
 * in the URL.
 */
#include "nfsd/ctl/ctl.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define HTTPS_TIMEOUT_S 30

struct https_body {
	char *data;
	size_t len;
	bool too_large;
};

static size_t https_write_cb(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct https_body *b = arg;
	size_t n = size * nmemb;
	char *p;

	if (b->len + n + 1 > CTL_REPLY_MAX_BYTES) {
		b->too_large = true;
		return 0;
	}
	p = realloc(b->data, b->len + n + 1);
	if (!p) {
		return 0;
	}
	memcpy(p + b->len, ptr, n);
	b->len += n;
	p[b->len] = '\0';
	b->data = p;
	return n;
}

int ctl_https_request(const struct ctl_remote *r, const char *method,
		      const char *path, const char *body,
		      struct ctl_http_reply *out, char *errbuf, size_t errlen)
{
	const char *server = r->server;
	struct https_body b = { 0 };
	struct curl_slist *hdrs = NULL;
	char url[1024], auth[128];
	const char *ctype = NULL;
	long status = 0;
	CURLcode rc;
	CURL *c;

	memset(out, 0, sizeof(*out));
	if (!strncasecmp(server, "https://", 8)) {
		server += 8;
	}
	if ((size_t)snprintf(url, sizeof(url), "https://%s%s", server, path) >=
	    sizeof(url)) {
		snprintf(errbuf, errlen, "request too long");
		return -EINVAL;
	}
	c = curl_easy_init();
	if (!c) {
		snprintf(errbuf, errlen, "libcurl: cannot start");
		return -ENOMEM;
	}
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", r->token);
	hdrs = curl_slist_append(hdrs, auth);
	hdrs = curl_slist_append(hdrs, "Accept: application/json, text/plain");
	if (body) {
		hdrs = curl_slist_append(hdrs,
					 "Content-Type: application/json");
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	if (!strcmp(method, "HEAD")) {
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https");
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	if (r->cacert) {
		curl_easy_setopt(c, CURLOPT_CAINFO, r->cacert);
	}
	curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)HTTPS_TIMEOUT_S);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, https_write_cb);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	rc = curl_easy_perform(c);
	explicit_bzero(auth, sizeof(auth));
	if (rc == CURLE_OK) {
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
		curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ctype);
		out->status = (unsigned)status;
		snprintf(out->content_type, sizeof(out->content_type), "%s",
			 ctype ? ctype : "");
	}
	curl_slist_free_all(hdrs);
	curl_easy_cleanup(c);
	if (rc != CURLE_OK) {
		free(b.data);
		snprintf(errbuf, errlen, "%s: %s", r->server,
			 b.too_large ? "reply too large"
				     : curl_easy_strerror(rc));
		return b.too_large ? -EFBIG : -ECONNREFUSED;
	}
	out->body = b.data ? b.data : strdup("");
	out->len = b.len;
	if (!out->body) {
		snprintf(errbuf, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}
