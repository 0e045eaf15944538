// SPDX-License-Identifier: Apache-2.0
/*
 * http: dsnfsctl's client for the admin endpoint, HTTP and HTTPS alike
 * through libcurl's easy interface (as dsload's perf/dsload/admin.c): one
 * request per handle, the reply bounded by CTL_REPLY_MAX_BYTES.  Over
 * HTTPS the server's certificate is checked against --cacert or the
 * system's store, and its name against the host given.  The token goes in
 * a header (Authorization: Bearer), never in the URL.
 */
#include "nfsd/ctl/ctl.h"
#include "nfsd/base/replybuf.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define HTTP_TIMEOUT_S 30
#define HTTP_DEFAULT_PORT "8049"

void ctl_http_reply_fini(struct ctl_http_reply *reply)
{
	free(reply->body);
	memset(reply, 0, sizeof(*reply));
}

/* "host:port", "[v6]:port" or "host" into @host and @port. */
static int http_server_split(const char *server, char *host, size_t hlen,
			     char *port, size_t plen)
{
	const char *colon, *end;
	size_t n;

	if (server[0] == '[') {
		end = strchr(server, ']');
		if (!end || (end[1] != '\0' && end[1] != ':')) {
			return -EINVAL;
		}
		n = (size_t)(end - server - 1);
		colon = end[1] ? end + 1 : NULL;
		server++;
	} else {
		colon = strrchr(server, ':');
		if (colon && strchr(server, ':') != colon) {
			return -EINVAL; /* a bare IPv6 address: use [...] */
		}
		n = colon ? (size_t)(colon - server) : strlen(server);
	}
	if (n == 0 || n >= hlen) {
		return -EINVAL;
	}
	memcpy(host, server, n);
	host[n] = '\0';
	snprintf(port, plen, "%s", colon ? colon + 1 : HTTP_DEFAULT_PORT);
	return port[0] ? 0 : -EINVAL;
}

/* The URL of @path on r->server: https with an "https://" prefix or
 * --cacert, else http; "HOST" alone is port 8049 either way. */
static int http_url(const struct ctl_remote *r, const char *path, char *url,
		    size_t len, char *errbuf, size_t errlen)
{
	const char *server = r->server, *scheme = "http";
	char host[256], port[16];
	int n;

	if (!strncasecmp(server, "https://", 8)) {
		server += 8;
		scheme = "https";
	} else if (!strncasecmp(server, "http://", 7)) {
		server += 7;
	}
	if (r->cacert) {
		scheme = "https";
	}
	if (http_server_split(server, host, sizeof(host), port, sizeof(port))) {
		snprintf(errbuf, errlen, "%s: expected HOST:PORT", server);
		return -EINVAL;
	}
	n = snprintf(url, len,
		     strchr(host, ':') ? "%s://[%s]:%s%s" : "%s://%s:%s%s",
		     scheme, host, port, path);
	if (n < 0 || (size_t)n >= len) {
		snprintf(errbuf, errlen, "request too long");
		return -EINVAL;
	}
	return 0;
}

/* libcurl's failure as the -errno the socket client used to return. */
static int http_curl_errno(CURLcode rc, const struct replybuf *b)
{
	if (b->too_large) {
		return -EFBIG;
	}
	switch (rc) {
	case CURLE_COULDNT_RESOLVE_HOST:
		return -EHOSTUNREACH;
	case CURLE_COULDNT_CONNECT:
		return -ECONNREFUSED;
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_OUT_OF_MEMORY:
	case CURLE_WRITE_ERROR:
		return -ENOMEM;
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_SSL_CACERT_BADFILE:
		return -EACCES;
	default:
		return -EPROTO;
	}
}

int ctl_http_request(const struct ctl_remote *r, const char *method,
		     const char *path, const char *body,
		     struct ctl_http_reply *out, char *errbuf, size_t errlen)
{
	char url[1024], auth[128], why[CURL_ERROR_SIZE] = "";
	struct curl_slist *hdrs = NULL;
	struct replybuf b = { .max = CTL_REPLY_MAX_BYTES };
	const char *ctype = NULL;
	long status = 0;
	CURLcode rc;
	CURL *c;
	int err;

	memset(out, 0, sizeof(*out));
	err = http_url(r, path, url, sizeof(url), errbuf, errlen);
	if (err) {
		return err;
	}
	c = curl_easy_init();
	if (!c) {
		snprintf(errbuf, errlen, "libcurl: cannot start");
		return -ENOMEM;
	}
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", r->token);
	hdrs = curl_slist_append(hdrs, auth);
	hdrs = curl_slist_append(hdrs, "Accept: application/json, text/plain");
	/* The body goes with the request: no 100-continue round trip. */
	hdrs = curl_slist_append(hdrs, "Expect:");
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
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	if (r->cacert) {
		curl_easy_setopt(c, CURLOPT_CAINFO, r->cacert);
	}
	curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)HTTP_TIMEOUT_S);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, why);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, replybuf_write);
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
			 : why[0]    ? why
				     : curl_easy_strerror(rc));
		return http_curl_errno(rc, &b);
	}
	out->body = b.data ? b.data : strdup("");
	out->len = b.len;
	if (!out->body) {
		snprintf(errbuf, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}
