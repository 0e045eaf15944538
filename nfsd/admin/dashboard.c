// SPDX-License-Identifier: Apache-2.0
/*
 * dashboard: the live page of the admin endpoint.  GET / is
 * nfsd/admin/dashboard/index.html, GET /dashboard.js its script, both
 * built into dsnfsd (make writes them into BUILD/gen/dashboard_assets.c
 * with xxd -i); GET /chart.js is Chart.js 3 from Debian's libjs-chart.js,
 * read from ADMIN_CHARTJS_PATH at each request, so nothing is fetched from
 * outside and a missing package is a 404 the page reports.  The page polls
 * the JSON API (/flows /hosts /volumes /pools /alarms /caps) itself, with
 * the session cookie that POST /login set (login.html, http.c): without
 * one, / is the login page.
 */
#include "nfsd/admin/admin_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nfsd/base/base.h"
#include "nfsd/base/fileio.h"

/* BUILD/gen/dashboard_assets.c */
extern const unsigned char dashboard_index_html[];
extern const unsigned int dashboard_index_html_len;
extern const unsigned char dashboard_dashboard_js[];
extern const unsigned int dashboard_dashboard_js_len;
extern const unsigned char dashboard_login_html[];
extern const unsigned int dashboard_login_html_len;

struct dashboard_asset {
	const char *url;
	const unsigned char *data;
	const unsigned int *len;
	const char *content_type;
};

static const struct dashboard_asset dashboard_assets[] = {
	{ "/", dashboard_index_html, &dashboard_index_html_len,
	  "text/html; charset=utf-8" },
	{ "/index.html", dashboard_index_html, &dashboard_index_html_len,
	  "text/html; charset=utf-8" },
	{ "/dashboard.js", dashboard_dashboard_js, &dashboard_dashboard_js_len,
	  "text/javascript; charset=utf-8" },
};

/* @len bytes of @data, copied, as the body of a 200. */
static void dashboard_reply_copy(struct admin_reply *reply,
				 const char *content_type, const void *data,
				 size_t len)
{
	char *body = malloc(len ? len : 1);

	if (!body) {
		admin__reply_error(reply, 500, "dashboard: out of memory");
		return;
	}
	memcpy(body, data, len);
	reply->status = 200;
	reply->content_type = content_type;
	reply->body = body;
	reply->len = len;
}

/* The whole of @path (at most ADMIN_CHARTJS_MAX_BYTES) as the body. */
static void dashboard_reply_file(struct admin_reply *reply, const char *path,
				 const char *content_type)
{
	uint8_t *body;
	size_t len;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		admin__reply_error(reply, 404,
				   "%s: %s (install libjs-chart.js)", path,
				   strerror(errno));
		return;
	}
	err = fileio_read_whole(fd, ADMIN_CHARTJS_MAX_BYTES, &body, &len);
	close(fd);
	if (err) {
		admin__reply_error(reply, 500, "%s: %s", path, strerror(-err));
		return;
	}
	reply->status = 200;
	reply->content_type = content_type;
	reply->body = (char *)body;
	reply->len = len;
}

bool admin__dashboard_handle(const char *method, const char *url,
			     bool authenticated, struct admin_reply *reply)
{
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		return false;
	}
	/* The page polls the API: without a session, the login step. */
	if (!authenticated &&
	    (!strcmp(url, "/") || !strcmp(url, "/index.html"))) {
		memset(reply, 0, sizeof(*reply));
		dashboard_reply_copy(reply, "text/html; charset=utf-8",
				     dashboard_login_html,
				     dashboard_login_html_len);
		return true;
	}
	for (size_t i = 0; i < ARRAY_SIZE(dashboard_assets); i++) {
		const struct dashboard_asset *a = &dashboard_assets[i];

		if (!strcmp(url, a->url)) {
			memset(reply, 0, sizeof(*reply));
			dashboard_reply_copy(reply, a->content_type, a->data,
					     *a->len);
			return true;
		}
	}
	if (!strcmp(url, "/chart.js")) {
		memset(reply, 0, sizeof(*reply));
		dashboard_reply_file(reply, ADMIN_CHARTJS_PATH,
				     "text/javascript; charset=utf-8");
		return true;
	}
	return false;
}
