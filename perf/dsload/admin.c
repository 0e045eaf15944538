// SPDX-License-Identifier: Apache-2.0
/*
 * admin: HTTP GET with libcurl's easy interface (see admin.h).  One easy
 * handle per request: a few requests per phase, so reuse buys nothing.
 */
#include "perf/dsload/admin.h"

#include "nfsd/admin/auth.h"
#include "nfsd/base/replybuf.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int admin_curl_errno(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_CONNECT:
		return -ECONNREFUSED;
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_WRITE_ERROR:
		return -EMSGSIZE;
	default:
		break;
	}
	return -EIO;
}

int admin_get(const char *host, uint16_t port, const char *path, int timeout_ms,
	      char **body, char *errbuf, size_t errlen)
{
	struct replybuf b = { .max = ADMIN_BODY_MAX };
	struct curl_slist *hdrs = NULL;
	char url[256], token[ADMIN_TOKEN_HEX_LEN + 1], terr[512];
	char auth[ADMIN_TOKEN_HEX_LEN + 32];
	const char *tfile = admin_token_file();
	long status = 0;
	CURLcode rc;
	CURL *curl;
	int err = 0;

	snprintf(url, sizeof(url), "http://%s:%u%s", host, port, path);
	err = admin_token_read(tfile, token, terr, sizeof(terr));
	if (err) {
		snprintf(errbuf, errlen,
			 "cannot read the admin token: %s (--token-file FILE "
			 "or " ADMIN_TOKEN_ENV ")",
			 terr);
		return -EACCES;
	}
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
	explicit_bzero(token, sizeof(token));
	curl = curl_easy_init();
	hdrs = curl ? curl_slist_append(NULL, auth) : NULL;
	explicit_bzero(auth, sizeof(auth));
	if (!curl || !hdrs) {
		if (curl) {
			curl_easy_cleanup(curl);
		}
		return -ENOMEM;
	}
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, replybuf_write);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &b);
	rc = curl_easy_perform(curl);
	if (rc != CURLE_OK) {
		err = b.too_large ? -EMSGSIZE : admin_curl_errno(rc);
		snprintf(errbuf, errlen, "%s: %s", url, curl_easy_strerror(rc));
		goto out;
	}
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200 || !b.data) {
		snprintf(errbuf, errlen, "%s: HTTP status %ld", url, status);
		err = -EPROTO;
		goto out;
	}
	*body = b.data;
	b.data = NULL;
out:
	free(b.data);
	curl_easy_cleanup(curl);
	curl_slist_free_all(hdrs);
	return err;
}
