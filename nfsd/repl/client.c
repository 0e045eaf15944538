// SPDX-License-Identifier: Apache-2.0
/*
 * client: the replication messages over HTTP(S) to the destination
 * dsnfsd (client.h).
 */
#include "nfsd/repl/client.h"

#include <curl/curl.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "nfsd/base/errbuf.h"

/* The operations that take the destination a while (a snapshot of its
 * whole tree, a revert): bounded by this instead of @timeout_s; a cut
 * connection still fails them in @timeout_s (client_sockopt_cb()). */
#define CLIENT_LONG_TIMEOUT_S 3600
#define CLIENT_REPLY_MAX (REPL_RESULT_HEAD + REPL_REASON_MAX)

struct repl_client {
	struct repl_dst pub;
	CURL *curl;
	struct curl_slist *headers;
	const bool *cancel;
	unsigned timeout_s;
	char url[1024];
	/* What repl_client_new() was given, for client_dup(). */
	char base_url[1024], name[256], key_path[4096];
	char ca_file[4096];
	unsigned char reply[CLIENT_REPLY_MAX];
	size_t reply_len;
	bool reply_over;
	/* The message being sent: its head (CLIENT_HEAD_MAX, encoded here)
	 * then its data, read by libcurl from where the caller holds it
	 * (a WRITE's MiB is not copied into a body first). */
	unsigned char *head;
	size_t head_len;
	const unsigned char *data;
	size_t data_len;
	size_t sent;
};

#define CLIENT_HEAD_MAX (REPL_MSG_HEAD + REPL_PATH_MAX + REPL_ARG_MAX)

/* The body for libcurl: the head, then the data. */
static size_t client_read_cb(char *buf, size_t size, size_t nitems, void *arg)
{
	struct repl_client *c = arg;
	size_t room = size * nitems, done = 0;

	while (done < room && c->sent < c->head_len + c->data_len) {
		const unsigned char *from =
			c->sent < c->head_len
				? c->head + c->sent
				: c->data + (c->sent - c->head_len);
		size_t left = c->sent < c->head_len
				      ? c->head_len - c->sent
				      : c->head_len + c->data_len - c->sent;
		size_t n = left < room - done ? left : room - done;

		memcpy(buf + done, from, n);
		done += n;
		c->sent += n;
	}
	return done;
}

/* libcurl sends the body again (a kept-alive connection the server had
 * closed): from @off. */
static int client_seek_cb(void *arg, curl_off_t off, int origin)
{
	struct repl_client *c = arg;

	if (origin != SEEK_SET || off < 0 ||
	    (size_t)off > c->head_len + c->data_len) {
		return CURL_SEEKFUNC_CANTSEEK;
	}
	c->sent = (size_t)off;
	return CURL_SEEKFUNC_OK;
}

static size_t client_write_cb(char *data, size_t size, size_t nmemb, void *arg)
{
	struct repl_client *c = arg;
	size_t n = size * nmemb;

	if (n > sizeof(c->reply) - c->reply_len) {
		c->reply_over = true;
		return 0; /* more than a result: the transfer stops */
	}
	memcpy(c->reply + c->reply_len, data, n);
	c->reply_len += n;
	return n;
}

/*
 * Every connection: TCP keepalive probes and TCP_USER_TIMEOUT, so that a
 * connection whose link is cut (nothing acknowledged, no RST) fails in
 * about @timeout_s even while the destination works on a long operation
 * and the HTTP exchange is silent.
 */
static int client_sockopt_cb(void *arg, curl_socket_t fd, curlsocktype purpose)
{
	const struct repl_client *c = arg;
	int on = 1, third = (int)(c->timeout_s / 3 ? c->timeout_s / 3 : 1),
	    cnt = 3;
	unsigned ms = c->timeout_s * 1000u;

	if (purpose != CURLSOCKTYPE_IPCXN) {
		return CURL_SOCKOPT_OK;
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &third, sizeof(third));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &third, sizeof(third));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof(ms));
	return CURL_SOCKOPT_OK;
}

/* Whether operation @op may take the destination long (a tree's
 * snapshot or revert). */
static bool client_op_long(unsigned op)
{
	return op == REPL_OP_COMMIT || op == REPL_OP_BEGIN ||
	       op == REPL_OP_ABORT || op == REPL_OP_RESYNC ||
	       op == REPL_OP_BREAK || op == REPL_OP_REVERSE ||
	       op == REPL_OP_DELSNAP;
}

/* curl's failure as -errno: a failed connect as the system said it (a
 * refusal, or no route when the link is down), else by curl's code. */
static int client_curl_err(CURL *curl, CURLcode rc)
{
	long os_errno = 0;

	switch (rc) {
	case CURLE_COULDNT_CONNECT:
		curl_easy_getinfo(curl, CURLINFO_OS_ERRNO, &os_errno);
		return os_errno > 0 && os_errno < 4096 ? -(int)os_errno
						       : -ECONNREFUSED;
	case CURLE_COULDNT_RESOLVE_HOST:
		return -EHOSTUNREACH;
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
		return -ECONNRESET;
	case CURLE_OUT_OF_MEMORY:
		return -ENOMEM;
	default:
		return -EPROTO;
	}
}

static void client_call(struct repl_dst *d, const struct repl_msg *m,
			struct repl_result *r)
{
	struct repl_client *c = (struct repl_client *)d;
	long status = 0, n = repl_msg_encode_head(m, c->head, CLIENT_HEAD_MAX);
	CURLcode rc;

	memset(r, 0, sizeof(*r));
	if (c->cancel && __atomic_load_n(c->cancel, __ATOMIC_ACQUIRE)) {
		n = -ECANCELED; /* the server stops: the journal resumes */
	}
	if (n < 0) {
		r->err = (int32_t)n;
		snprintf(r->reason, sizeof(r->reason), "message: %s",
			 strerror((int)-n));
		return;
	}
	c->head_len = (size_t)n;
	c->data = m->data;
	c->data_len = m->len;
	c->sent = 0;
	c->reply_len = 0;
	c->reply_over = false;
	curl_easy_setopt(c->curl, CURLOPT_TIMEOUT,
			 client_op_long(m->op) ? (long)CLIENT_LONG_TIMEOUT_S
					       : (long)c->timeout_s);
	curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE,
			 (curl_off_t)(c->head_len + c->data_len));
	rc = curl_easy_perform(c->curl);
	c->data = NULL;
	if (rc != CURLE_OK && !c->reply_over) {
		r->err = client_curl_err(c->curl, rc);
		snprintf(r->reason, sizeof(r->reason), "%.300s: %s", c->url,
			 curl_easy_strerror(rc));
		return;
	}
	curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
	if (c->reply_over ||
	    repl_result_decode(c->reply, c->reply_len, r) < 0) {
		memset(r, 0, sizeof(*r));
		r->err = status == 401 ? -EACCES : -EPROTO;
		snprintf(r->reason, sizeof(r->reason),
			 "%.300s: HTTP %ld without a replication result (not a "
			 "dsnfsd of this version?)",
			 c->url, status);
		return;
	}
	if (status != 200 && !r->err) {
		r->err = -EPROTO; /* a refusal must say why */
	}
}

static void client_close(struct repl_dst *d)
{
	repl_client_free((struct repl_client *)d);
}

static int client_dup(struct repl_dst *d, struct repl_dst **out, char *errbuf,
		      size_t errlen)
{
	struct repl_client *c = (struct repl_client *)d, *n;
	int err = repl_client_new(c->base_url, c->name, c->key_path, c->ca_file,
				  c->timeout_s, c->cancel, &n, errbuf, errlen);

	if (!err) {
		*out = &n->pub;
	}
	return err;
}

int repl_client_new(const char *url, const char *name, const char *key_path,
		    const char *ca_file, unsigned timeout_s, const bool *cancel,
		    struct repl_client **out, char *errbuf, size_t errlen)
{
	char key[REPL_KEY_HEX_LEN + 1], auth[REPL_KEY_HEX_LEN + 32];
	struct repl_client *c;
	size_t ulen = strlen(url);
	int err;

	if ((strncasecmp(url, "http://", 7) &&
	     strncasecmp(url, "https://", 8)) ||
	    (ulen && url[ulen - 1] == '/')) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "relation %s: destination_url %s: "
				     "expected http(s)://HOST:PORT",
				     name, url);
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		return -ENOMEM;
	}
	c->pub.call = client_call;
	c->pub.close = client_close;
	c->pub.dup = client_dup;
	c->cancel = cancel;
	c->timeout_s = timeout_s ? timeout_s : REPL_TIMEOUT_DEFAULT_S;
	if (snprintf(c->url, sizeof(c->url), "%s/replications/%s/peer", url,
		     name) >= (int)sizeof(c->url)) {
		free(c);
		return errbuf_printf(errbuf, errlen, -ENAMETOOLONG,
				     "relation %s: destination_url too long",
				     name);
	}
	snprintf(c->ca_file, sizeof(c->ca_file), "%s", ca_file ? ca_file : "");
	if (snprintf(c->base_url, sizeof(c->base_url), "%s", url) >=
		    (int)sizeof(c->base_url) ||
	    snprintf(c->name, sizeof(c->name), "%s", name) >=
		    (int)sizeof(c->name) ||
	    snprintf(c->key_path, sizeof(c->key_path), "%s", key_path) >=
		    (int)sizeof(c->key_path)) {
		free(c);
		return errbuf_printf(errbuf, errlen, -ENAMETOOLONG,
				     "relation %s: a name or path too long",
				     name);
	}
	err = repl_key_load(key_path, key, errbuf, errlen);
	if (err) {
		free(c);
		return err;
	}
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", key);
	explicit_bzero(key, sizeof(key));
	c->headers = curl_slist_append(NULL, auth);
	explicit_bzero(auth, sizeof(auth));
	if (c->headers) {
		c->headers = curl_slist_append(
			c->headers, "Content-Type: application/octet-stream");
	}
	if (c->headers) {
		/* A WRITE is above libcurl's 1 MiB threshold for "Expect:
		 * 100-continue": no wait for a 100 before each body. */
		c->headers = curl_slist_append(c->headers, "Expect:");
	}
	c->head = malloc(CLIENT_HEAD_MAX);
	c->curl = c->headers && c->head ? curl_easy_init() : NULL;
	if (!c->curl) {
		repl_client_free(c);
		return errbuf_printf(errbuf, errlen, -ENOMEM,
				     "relation %s: libcurl: out of memory",
				     name);
	}
	curl_easy_setopt(c->curl, CURLOPT_URL, c->url);
	curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, c->headers);
	curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, client_write_cb);
	curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, c);
	curl_easy_setopt(c->curl, CURLOPT_POST, 1L);
	curl_easy_setopt(c->curl, CURLOPT_READFUNCTION, client_read_cb);
	curl_easy_setopt(c->curl, CURLOPT_READDATA, c);
	curl_easy_setopt(c->curl, CURLOPT_SEEKFUNCTION, client_seek_cb);
	curl_easy_setopt(c->curl, CURLOPT_SEEKDATA, c);
	/* A WRITE in a few large sends, not sixteen 64 KiB ones. */
	curl_easy_setopt(c->curl, CURLOPT_UPLOAD_BUFFERSIZE, 512L << 10);
	curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c->curl, CURLOPT_TIMEOUT, (long)c->timeout_s);
	curl_easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT, (long)c->timeout_s);
	curl_easy_setopt(c->curl, CURLOPT_SOCKOPTFUNCTION, client_sockopt_cb);
	curl_easy_setopt(c->curl, CURLOPT_SOCKOPTDATA, c);
	/* The key goes to this URL only, never to where it redirects. */
	curl_easy_setopt(c->curl, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	if (c->ca_file[0]) {
		curl_easy_setopt(c->curl, CURLOPT_CAINFO, c->ca_file);
	}
	*out = c;
	return 0;
}

struct repl_dst *repl_client_dst(struct repl_client *c)
{
	return &c->pub;
}

void repl_client_free(struct repl_client *c)
{
	if (!c) {
		return;
	}
	if (c->curl) {
		curl_easy_cleanup(c->curl);
	}
	if (c->headers) {
		curl_slist_free_all(c->headers); /* holds the key */
	}
	free(c->head);
	free(c);
}
