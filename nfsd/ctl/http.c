// SPDX-License-Identifier: Apache-2.0
/*
 * http: dsnfsctl's HTTP/1.1 client for the admin endpoint, a plain socket:
 * one request with "Connection: close", the reply read to the end of the
 * stream (bounded by CTL_REPLY_MAX_BYTES) and split into status line,
 * headers and body.  The endpoint answers with Content-Length; a chunked
 * reply is refused rather than misread.  Every request carries the
 * token (Authorization: Bearer).  HTTPS goes through https.c.
 */
#include "nfsd/ctl/ctl.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

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

static int http_connect(const char *server, char *errbuf, size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM };
	struct timeval tv = { .tv_sec = HTTP_TIMEOUT_S };
	struct addrinfo *res, *ai;
	char host[256], port[16];
	int fd = -1, err = -ECONNREFUSED, rc;

	if (http_server_split(server, host, sizeof(host), port, sizeof(port))) {
		snprintf(errbuf, errlen, "%s: expected HOST:PORT", server);
		return -EINVAL;
	}
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc) {
		snprintf(errbuf, errlen, "%s: %s", server, gai_strerror(rc));
		return -EHOSTUNREACH;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
			    ai->ai_protocol);
		if (fd < 0) {
			err = -errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
			break;
		}
		err = -errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		snprintf(errbuf, errlen, "%s: %s", server, strerror(-err));
		return err;
	}
	return fd;
}

static int http_send_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			return n < 0 ? -errno : -EPIPE;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Reads to the end of the stream into *out (owned) and *len. */
static int http_read_all(int fd, char **out, size_t *len)
{
	size_t cap = 16384, n = 0;
	char *buf = malloc(cap), *p;
	ssize_t got;

	if (!buf) {
		return -ENOMEM;
	}
	for (;;) {
		if (cap - n < 4096) {
			if (cap >= CTL_REPLY_MAX_BYTES) {
				free(buf);
				return -EFBIG;
			}
			p = realloc(buf, cap * 2);
			if (!p) {
				free(buf);
				return -ENOMEM;
			}
			buf = p;
			cap *= 2;
		}
		got = recv(fd, buf + n, cap - n - 1, 0);
		if (got < 0 && errno == EINTR) {
			continue;
		}
		if (got < 0) {
			int err = errno == EAGAIN ? -ETIMEDOUT : -errno;

			free(buf);
			return err;
		}
		if (got == 0) {
			break;
		}
		n += (size_t)got;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

/* The value of header @name in @head (CRLF lines), into @out. */
static bool http_header(const char *head, const char *name, char *out,
			size_t len)
{
	size_t nlen = strlen(name);

	for (const char *l = strstr(head, "\r\n"); l; l = strstr(l, "\r\n")) {
		l += 2;
		if (!strncasecmp(l, name, nlen) && l[nlen] == ':') {
			const char *v = l + nlen + 1, *e = strstr(v, "\r\n");

			while (*v == ' ') {
				v++;
			}
			/* the last header ends where the head was cut */
			snprintf(out, len, "%.*s",
				 e ? (int)(e - v) : (int)strlen(v), v);
			return true;
		}
	}
	return false;
}

/* Splits the raw reply (takes @raw) into @out. */
static int http_parse(char *raw, size_t len, struct ctl_http_reply *out,
		      char *errbuf, size_t errlen)
{
	char *end = strstr(raw, "\r\n\r\n"), value[64];
	unsigned status;
	size_t body_len;
	uint64_t clen;

	if (!end || sscanf(raw, "HTTP/1.%*1[01] %3u", &status) != 1) {
		snprintf(errbuf, errlen, "not an HTTP reply");
		free(raw);
		return -EPROTO;
	}
	*end = '\0';
	if (http_header(raw, "Transfer-Encoding", value, sizeof(value)) &&
	    strcasecmp(value, "identity")) {
		snprintf(errbuf, errlen, "reply with Transfer-Encoding %s",
			 value);
		free(raw);
		return -EPROTO;
	}
	body_len = len - (size_t)(end + 4 - raw);
	if (http_header(raw, "Content-Length", value, sizeof(value))) {
		if (ctl_parse_uint(value, UINT64_MAX, &clen) ||
		    clen > body_len) {
			snprintf(errbuf, errlen, "reply cut short");
			free(raw);
			return -EPROTO;
		}
		body_len = (size_t)clen;
	}
	out->status = status;
	http_header(raw, "Content-Type", out->content_type,
		    sizeof(out->content_type));
	memmove(raw, end + 4, body_len);
	raw[body_len] = '\0';
	out->body = raw;
	out->len = body_len;
	return 0;
}

int ctl_http_request(const struct ctl_remote *r, const char *method,
		     const char *path, const char *body,
		     struct ctl_http_reply *out, char *errbuf, size_t errlen)
{
	size_t blen = body ? strlen(body) : 0, rlen = 0;
	const char *server = r->server;
	char head[1024], *raw = NULL;
	int fd, err, n;

	if (r->cacert || !strncasecmp(server, "https://", 8)) {
		return ctl_https_request(r, method, path, body, out, errbuf,
					 errlen);
	}
	if (!strncasecmp(server, "http://", 7)) {
		server += 7;
	}
	memset(out, 0, sizeof(*out));
	n = snprintf(head, sizeof(head),
		     "%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n"
		     "Accept: application/json, text/plain\r\n"
		     "Authorization: Bearer %s\r\n",
		     method, path, server, r->token);
	if (body && n > 0 && (size_t)n < sizeof(head)) {
		n += snprintf(head + n, sizeof(head) - (size_t)n,
			      "Content-Type: application/json\r\n"
			      "Content-Length: %zu\r\n",
			      blen);
	}
	if (n > 0 && (size_t)n < sizeof(head)) {
		n += snprintf(head + n, sizeof(head) - (size_t)n, "\r\n");
	}
	if (n < 0 || (size_t)n >= sizeof(head)) {
		snprintf(errbuf, errlen, "request too long");
		return -EINVAL;
	}
	fd = http_connect(server, errbuf, errlen);
	if (fd < 0) {
		return fd;
	}
	err = http_send_all(fd, head, (size_t)n);
	if (!err && blen) {
		err = http_send_all(fd, body, blen);
	}
	if (!err) {
		err = http_read_all(fd, &raw, &rlen);
	}
	close(fd);
	if (err) {
		snprintf(errbuf, errlen, "%s: %s", server, strerror(-err));
		return err;
	}
	return http_parse(raw, rlen, out, errbuf, errlen);
}
