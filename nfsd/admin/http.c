// SPDX-License-Identifier: Apache-2.0
/*
 * http: the admin endpoint's HTTP server, libmicrohttpd with a thread per
 * connection (at most HTTP_CONNECTIONS_MAX; poll: dsnfsd's descriptors
 * run past select()'s FD_SETSIZE), so that one slow request holds its
 * own connection only, never the API, /metrics or the stop.  HTTPS when
 * [admin] tls_cert and tls_key are set (GnuTLS), and then only may the
 * endpoint listen beyond loopback.  Every request first passes auth.c's
 * decision (Host, Origin, the token or a session), taken before its
 * body is read; a refusal is logged once per peer.  Request bodies are
 * collected up to ADMIN_BODY_MAX_BYTES (413 past it) and handed whole to
 * api.c; changes are logged at info, reads not at all.
 */
#include "nfsd/admin/admin_int.h"
#include "nfsd/repl/service.h"
#include "nfsd/admin/ops.h"
#include "nfsd/admin/snap_policy.h"
#include "nfsd/alarm/alarm.h"
#include "nfsd/admin/auth.h"
#include "nfsd/repl/wire.h"
#include "nfsd/base/fileio.h"
#include "nfsd/base/sockaddr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "nfsd/base/errbuf.h"
#include "nfsd/base/log.h"

#define HTTP_CONNECTIONS_MAX 64
#define HTTP_TIMEOUT_S 30
/* A connection's buffer (libmicrohttpd's default: 32 KiB): a body is
 * handed to http_access_cb() in pieces of about half of it, so a
 * replication WRITE's MiB is 8 pieces, not 64. */
#define HTTP_CONN_MEMORY (256u << 10)
/* How long a stop waits for the requests under way. */
#define HTTP_STOP_WAIT_S 3

struct admin {
	struct MHD_Daemon *mhd;
	struct admin_api api;
	struct alarm_set *alarms;
	struct admin_ops *ops;
	struct admin_policies *policies;
	struct admin_auth auth;
	bool auth_ready;
	bool tls;
	char *tls_cert; /* PEM text, owned */
	char *tls_key;
};

/* One request's body, as it arrives, and what auth.c said of it. */
struct http_request {
	char *body;
	size_t len, cap; /* cap: body's allocation, its NUL included */
	bool too_large;
	bool refused; /* answered by http_auth() */
	bool authenticated;
	/* POST /replications/NAME/peer: the relation's key, not the
	 * admin token, decides (repl_api.c); its body may be a block. */
	bool peer;
	char peer_name[64];
};

/* The largest body @r may have. */
static size_t http_body_max(const struct http_request *r)
{
	return r->peer ? REPL_MSG_MAX : ADMIN_BODY_MAX_BYTES;
}

static void http_log_cb(void *cls, const char *fmt, va_list ap)
{
	char msg[512];
	size_t n;

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r')) {
		msg[--n] = '\0';
	}
	log_warn("admin: libmicrohttpd: %s", msg);
}

static enum MHD_Result http_queue(struct MHD_Connection *conn,
				  struct admin_reply *reply)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(reply->len, reply->body,
					       MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		admin__reply_fini(reply);
		return MHD_NO;
	}
	reply->body = NULL; /* the response frees it */
	if (reply->content_type) {
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
					reply->content_type);
	}
	if (reply->location[0]) {
		MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION,
					reply->location);
	}
	if (reply->allow[0]) {
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW,
					reply->allow);
	}
	if (reply->set_cookie[0]) {
		MHD_add_response_header(resp, MHD_HTTP_HEADER_SET_COOKIE,
					reply->set_cookie);
	}
	if (reply->bearer_challenge || reply->status == 401) {
		MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
					"Bearer realm=\"dsnfs\"");
	}
	/* No page of another origin may frame this one. */
	MHD_add_response_header(resp, "X-Frame-Options", "DENY");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL,
				"no-store");
	ret = MHD_queue_response(conn, reply->status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* Keeps @n more bytes of body, or marks the request too large. */
static void http_body_add(struct http_request *r, const char *data, size_t n)
{
	char *p;

	if (r->too_large) {
		return;
	}
	if (n > http_body_max(r) - r->len) {
		r->too_large = true;
		free(r->body);
		r->body = NULL;
		r->len = 0;
		r->cap = 0;
		return;
	}
	if (r->len + n + 1 > r->cap) {
		/* Doubled, up to the limit: a replication WRITE's MiB comes
		 * in many pieces, and each realloc may copy the whole. */
		size_t cap = 2 * r->cap > r->len + n + 1 ? 2 * r->cap
							 : r->len + n + 1;

		cap = cap < http_body_max(r) + 1 ? cap : http_body_max(r) + 1;
		p = realloc(r->body, cap);
		if (!p) {
			r->too_large = true; /* answered 413 too */
			return;
		}
		r->body = p;
		r->cap = cap;
	}
	memcpy(r->body + r->len, data, n);
	r->len += n;
	r->body[r->len] = '\0';
}

static void http_log_change(struct MHD_Connection *conn, const char *method,
			    const char *url, const struct admin_reply *reply)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
		conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	char addr[SOCKADDR_TEXT_MAX] = "?";

	if (!strcmp(method, "GET") || !strcmp(method, "HEAD")) {
		return;
	}
	if (ci) {
		sockaddr_format_host(ci->client_addr, addr, sizeof(addr));
	}
	log_info("admin: %s: %.16s %.200s -> %u", addr, method, url,
		 reply->status);
}

static bool http_announced_too_large(struct MHD_Connection *conn, size_t max)
{
	const char *len = MHD_lookup_connection_value(
		conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	unsigned long long n;
	char *end;

	if (!len) {
		return false;
	}
	n = strtoull(len, &end, 10);
	return *end == '\0' && n > max;
}

/* The body's allocation at once when its length is announced (within
 * @r's limit): a replication WRITE's MiB is copied once, not again at
 * each doubling.  A failure leaves it to http_body_add(). */
static void http_body_reserve(struct MHD_Connection *conn,
			      struct http_request *r)
{
	const char *len = MHD_lookup_connection_value(
		conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	unsigned long long n;
	char *end;

	if (!len) {
		return;
	}
	n = strtoull(len, &end, 10);
	if (*end || n > http_body_max(r) || r->body) {
		return;
	}
	r->body = malloc((size_t)n + 1);
	r->cap = r->body ? (size_t)n + 1 : 0;
}

static enum MHD_Result http_reply_too_large(struct MHD_Connection *conn,
					    const char *method, const char *url)
{
	struct admin_reply reply;

	memset(&reply, 0, sizeof(reply));
	admin__reply_error(&reply, 413, "body: larger than %d bytes",
			   ADMIN_BODY_MAX_BYTES);
	http_log_change(conn, method, url, &reply);
	return http_queue(conn, &reply);
}

/* The query string's arguments, as libmicrohttpd decoded them. */
struct http_args {
	struct admin_arg list[ADMIN_ARGS_MAX];
	size_t n;
};

static enum MHD_Result http_arg_cb(void *cls, enum MHD_ValueKind kind,
				   const char *key, const char *value)
{
	struct http_args *a = cls;

	(void)kind;
	if (a->n < ADMIN_ARGS_MAX) {
		a->list[a->n].key = key;
		a->list[a->n].value = value ? value : "";
		a->n++;
	}
	return MHD_YES;
}

static time_t http_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static const char *http_header(struct MHD_Connection *conn, const char *name)
{
	return MHD_lookup_connection_value(conn, MHD_HEADER_KIND, name);
}

/* auth.c's decision on @conn's request: 0, or the refusal queued (and
 * logged, the first time for its peer). */
static enum MHD_Result http_auth(struct admin *adm, struct MHD_Connection *conn,
				 const char *method, const char *url,
				 struct http_request *r, bool *refused)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
		conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	struct admin_auth_request req = {
		.method = method,
		.url = url,
		.host = http_header(conn, MHD_HTTP_HEADER_HOST),
		.origin = http_header(conn, MHD_HTTP_HEADER_ORIGIN),
		.sec_fetch_site = http_header(conn, "Sec-Fetch-Site"),
		.authorization =
			http_header(conn, MHD_HTTP_HEADER_AUTHORIZATION),
		.cookie = http_header(conn, MHD_HTTP_HEADER_COOKIE),
	};
	struct admin_auth_verdict v;
	struct admin_reply reply;
	char addr[SOCKADDR_TEXT_MAX] = "?";

	admin_auth_decide(&adm->auth, &req, http_now(), &v);
	r->authenticated = v.authenticated;
	*refused = v.status != 0;
	if (!v.status) {
		return MHD_YES;
	}
	if (ci) {
		sockaddr_format_host(ci->client_addr, addr, sizeof(addr));
	}
	if (admin_auth_peer_first(&adm->auth, addr)) {
		log_warn("admin: %s: %.16s %.200s refused %u: %s (logged once "
			 "per peer)",
			 addr, method, url, v.status, v.why);
	}
	memset(&reply, 0, sizeof(reply));
	admin__reply_error(&reply, v.status, "%s", v.why);
	reply.bearer_challenge = v.status == 401;
	return http_queue(conn, &reply);
}

/* The first call of a POST /replications/NAME/peer: refused at once
 * (the relation's key, the method, the announced length) or MHD_YES to
 * read its body.  A refusal is logged once per peer. */
static enum MHD_Result http_peer_start(struct admin *adm,
				       struct MHD_Connection *conn,
				       const char *method, const char *url,
				       struct http_request *r)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
		conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	unsigned status = strcmp(method, "POST") ? 405 : 0;
	const char *why = "only POST";
	char addr[SOCKADDR_TEXT_MAX] = "?";
	struct admin_reply reply;

	if (!status) {
		status = repl_service_peer_auth(
			adm->api.ctx.repl, r->peer_name,
			http_header(conn, MHD_HTTP_HEADER_AUTHORIZATION));
		why = status == 401 ? "no key or not the relation's key"
				    : "not a replication relation this "
				      "server is the destination of";
	}
	if (status == 200 && http_announced_too_large(conn, REPL_MSG_MAX)) {
		status = 413;
		why = "body larger than a replication message";
	}
	if (status == 200) {
		http_body_reserve(conn, r);
		return MHD_YES;
	}
	r->refused = true;
	admin__repl_peer_refuse(&reply, status, r->peer_name, why);
	if (ci) {
		sockaddr_format_host(ci->client_addr, addr, sizeof(addr));
	}
	if (admin_auth_peer_first(&adm->auth, addr)) {
		log_warn("admin: %s: %.16s %.200s refused %u: %s (logged "
			 "once per peer)",
			 addr, method, url, status, why);
	}
	return http_queue(conn, &reply);
}

static enum MHD_Result http_access_cb(void *cls, struct MHD_Connection *conn,
				      const char *url, const char *method,
				      const char *version,
				      const char *upload_data,
				      size_t *upload_data_size, void **con_cls)
{
	struct admin *adm = cls;
	struct http_request *r = *con_cls;
	struct http_args args = { .n = 0 };
	struct admin_reply reply;
	const char *ctype;
	enum MHD_Result ret;
	bool refused;

	(void)version;
	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r) {
			return MHD_NO;
		}
		*con_cls = r;
		if (admin__repl_peer_url(url, r->peer_name,
					 sizeof(r->peer_name))) {
			r->peer = true;
			return http_peer_start(adm, conn, method, url, r);
		}
		/* Who asks comes first: a refused request's body is never
		 * read (libmicrohttpd closes the connection). */
		ret = http_auth(adm, conn, method, url, r, &refused);
		if (refused) {
			r->refused = true; /* its body is dropped */
			return ret;
		}
		/* A body announced too large is refused before it is read;
		 * libmicrohttpd then closes the connection. */
		if (http_announced_too_large(conn, ADMIN_BODY_MAX_BYTES)) {
			r->too_large = true;
			return http_reply_too_large(conn, method, url);
		}
		return MHD_YES;
	}
	if (r->refused) {
		*upload_data_size = 0; /* answered already */
		return MHD_YES;
	}
	if (*upload_data_size) {
		http_body_add(r, upload_data, *upload_data_size);
		*upload_data_size = 0;
		return MHD_YES;
	}
	ctype = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
					    MHD_HTTP_HEADER_CONTENT_TYPE);
	if (r->peer) {
		if (r->too_large) {
			admin__repl_peer_refuse(&reply, 413, r->peer_name,
						"body larger than a "
						"replication message");
		} else {
			admin__repl_peer_handle(
				&adm->api, r->peer_name,
				http_header(conn,
					    MHD_HTTP_HEADER_AUTHORIZATION),
				ctype, r->body, r->len, &reply);
		}
		if (reply.status != 200) {
			http_log_change(conn, method, url, &reply);
		}
		return http_queue(conn, &reply);
	}
	if (r->too_large) {
		return http_reply_too_large(conn, method, url);
	}
	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, http_arg_cb,
				  &args);
	if (!admin__login_handle(&adm->auth, adm->tls, method, url, ctype,
				 http_header(conn, MHD_HTTP_HEADER_COOKIE),
				 r->body, r->len, http_now(), &reply) &&
	    !admin__dashboard_handle(method, url, r->authenticated, &reply)) {
		admin__api_handle_args(&adm->api, method, url, args.list,
				       args.n, ctype, r->body, r->len, &reply);
	}
	http_log_change(conn, method, url, &reply);
	return http_queue(conn, &reply);
}

static void http_completed_cb(void *cls, struct MHD_Connection *conn,
			      void **con_cls,
			      enum MHD_RequestTerminationCode toe)
{
	struct http_request *r = *con_cls;

	(void)cls;
	(void)conn;
	(void)toe;
	if (r) {
		free(r->body);
		free(r);
	}
	*con_cls = NULL;
}

/* @listen:@port as a socket address; -EINVAL if not an IP address. */
static int http_addr(const char *listen, int port, struct sockaddr_storage *ss,
		     socklen_t *len)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, listen, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		*len = sizeof(*sin);
		return 0;
	}
	if (inet_pton(AF_INET6, listen, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*sin6);
		return 0;
	}
	return -EINVAL;
}

/* libmicrohttpd does not say why it could not start: a bind of our own
 * finds the usual reason. */
static int http_bind_error(const struct sockaddr_storage *ss, socklen_t len)
{
	int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1, err = -EIO;

	if (fd < 0) {
		return -errno;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)ss, len) < 0) {
		err = -errno;
	}
	close(fd);
	return err;
}

static void *http_stop_thread(void *arg)
{
	MHD_stop_daemon(arg);
	return NULL;
}

/* Stops libmicrohttpd, which waits for every request under way; one
 * that hangs (a store that does not answer) may hold the stop for
 * HTTP_STOP_WAIT_S, no longer: dsnfsd stops all the same.  Returns
 * false when it gave up waiting. */
static bool http_stop_timed(struct MHD_Daemon *mhd)
{
	struct timespec deadline;
	pthread_t t;

	if (pthread_create(&t, NULL, http_stop_thread, mhd)) {
		MHD_stop_daemon(mhd);
		return true;
	}
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += HTTP_STOP_WAIT_S;
	if (pthread_timedjoin_np(t, NULL, &deadline)) {
		pthread_detach(t);
		log_warn("admin: a request still runs after %d s: dsnfsd "
			 "stops without waiting for it",
			 HTTP_STOP_WAIT_S);
		return false;
	}
	return true;
}

int admin_policies_config(struct admin *adm,
			  const struct admin_policy_config *p, size_t n)
{
	return adm ? admin__policies_configure(adm->policies, p, n) : 0;
}

void admin_stop(struct admin *adm)
{
	if (!adm) {
		return;
	}
	if (adm->mhd && !http_stop_timed(adm->mhd)) {
		/* The hung request still uses @adm: left to the exit. */
		admin__policies_stop(adm->policies);
		alarm_set_free(adm->alarms);
		return;
	}
	/* After the server: no request can start an operation now; the
	 * policies' thread, which starts them too, first. */
	admin__policies_free(adm->policies);
	if (!adm->api.ctx.ops) {
		admin__ops_free(adm->ops); /* its own, not the server's */
	}
	alarm_set_free(adm->alarms);
	if (adm->auth_ready) {
		admin_auth_fini(&adm->auth);
	}
	if (adm->tls_key) {
		explicit_bzero(adm->tls_key, strlen(adm->tls_key));
	}
	free(adm->tls_key);
	free(adm->tls_cert);
	free(adm);
}

/* A loopback address: 127.0.0.0/8, ::1 or ::ffff:127.0.0.0/104. */
static bool http_addr_loopback(const struct sockaddr_storage *ss)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;

	if (ss->ss_family == AF_INET) {
		return (ntohl(sin->sin_addr.s_addr) >> 24) == 127;
	}
	return IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr) ||
	       (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr) &&
		sin6->sin6_addr.s6_addr[12] == 127);
}

/* The whole of PEM file @path, NUL-terminated (owned), for GnuTLS. */
static int http_pem_read(const char *what, const char *path, char **out,
			 char *errbuf, size_t errlen)
{
	uint8_t *data;
	size_t len;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), err;

	if (fd < 0) {
		return errbuf_printf(errbuf, errlen, -errno, "admin: %s %s: %s",
				     what, path, strerror(errno));
	}
	err = fileio_read_whole(fd, 1 << 20, &data, &len);
	close(fd);
	if (err) {
		return errbuf_printf(errbuf, errlen, err, "admin: %s %s: %s",
				     what, path, strerror(-err));
	}
	*out = (char *)data; /* one NUL after the bytes read */
	return 0;
}

/* HTTPS from [admin] tls_cert and tls_key, both or neither; beyond
 * loopback only with them: a token must not cross a network in clear. */
static int http_tls_setup(struct admin *adm, const struct admin_config *cfg,
			  const char *listen, const struct sockaddr_storage *ss,
			  char *errbuf, size_t errlen)
{
	int err;

	if (!cfg->tls_cert[0] != !cfg->tls_key[0]) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "admin: [admin] tls_cert and tls_key go "
				     "together: set both or neither");
	}
	if (!cfg->tls_cert[0]) {
		if (!http_addr_loopback(ss)) {
			return errbuf_printf(
				errbuf, errlen, -EPERM,
				"admin_listen %s: beyond loopback the admin "
				"endpoint needs HTTPS ([admin] tls_cert and "
				"tls_key): its token would cross the network "
				"in clear",
				listen);
		}
		return 0;
	}
	if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		return errbuf_printf(errbuf, errlen, -EOPNOTSUPP,
				     "admin: [admin] tls_cert: this "
				     "libmicrohttpd has no TLS");
	}
	err = http_pem_read("tls_cert", cfg->tls_cert, &adm->tls_cert, errbuf,
			    errlen);
	if (!err) {
		err = http_pem_read("tls_key", cfg->tls_key, &adm->tls_key,
				    errbuf, errlen);
	}
	adm->tls = !err;
	return err;
}

/* The token of ctx->state_dir/admin.token, made at the first start. */
static int http_token_load(const struct admin_ctx *ctx, char *token,
			   char *errbuf, size_t errlen)
{
	char path[4096];
	bool created;
	int err;

	if (!ctx->state_dir) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "admin: no state directory for "
				     "admin.token");
	}
	snprintf(path, sizeof(path), "%s/%s", ctx->state_dir,
		 ADMIN_TOKEN_FILE_NAME);
	err = admin_token_load(path, token, &created, errbuf, errlen);
	if (err) {
		return err;
	}
	if (created) {
		log_info("admin: made the API token %s (0600): dsnfsctl and "
			 "dsload read it",
			 path);
	}
	return 0;
}

int admin_start(const struct admin_ctx *ctx, const char *listen, int port,
		int *bound_port, struct admin **out, char *errbuf,
		size_t errlen)
{
	const union MHD_DaemonInfo *info;
	struct sockaddr_storage ss;
	struct admin *adm;
	/* A thread per connection: a request that blocks (a slow store)
	 * holds its own connection only. */
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD |
			 MHD_USE_THREAD_PER_CONNECTION | MHD_USE_AUTO |
			 MHD_USE_ERROR_LOG;
	char token[ADMIN_TOKEN_HEX_LEN + 1];
	struct admin_auth_config acfg;
	socklen_t len;
	int err;

	if (port < 0 || port > 65535 || http_addr(listen, port, &ss, &len)) {
		snprintf(errbuf, errlen,
			 "admin: %s:%d: not an IP address "
			 "and port",
			 listen, port);
		return -EINVAL;
	}
	adm = calloc(1, sizeof(*adm));
	if (!adm) {
		return -ENOMEM;
	}
	adm->api.ctx = *ctx;
	err = http_tls_setup(adm, &ctx->config, listen, &ss, errbuf, errlen);
	if (err) {
		goto fail;
	}
	err = http_token_load(ctx, token, errbuf, errlen);
	if (err) {
		goto fail;
	}
	acfg = (struct admin_auth_config){
		.listen = listen,
		.port = port,
		.tls = adm->tls,
		.metrics_auth = ctx->config.metrics_auth,
		.allowed_hosts = ctx->config.allowed_hosts,
	};
	err = admin_auth_init(&adm->auth, &acfg, token, errbuf, errlen);
	explicit_bzero(token, sizeof(token));
	if (err) {
		goto fail;
	}
	adm->auth_ready = true;
	err = admin__alarms_new(&adm->api.ctx, &adm->alarms);
	if (err) {
		snprintf(errbuf, errlen, "admin: out of memory");
		goto fail;
	}
	adm->api.alarms = adm->alarms;
	adm->ops = ctx->ops;
	err = adm->ops ? 0 : admin__ops_new(&adm->ops);
	if (err) {
		snprintf(errbuf, errlen, "admin: out of memory");
		goto fail;
	}
	adm->api.ops = adm->ops;
	err = admin__policies_new(&adm->api, ctx->state_dir, &adm->policies,
				  errbuf, errlen);
	if (err) {
		goto fail;
	}
	/* The API's overrides over the config's policies: the engine itself
	 * knows no file format (snap_policy_api.c keeps it). */
	err = admin__policies_load(adm->policies, errbuf, errlen);
	if (err) {
		goto fail;
	}
	adm->api.policies = adm->policies;
	/* Dual stack, as the RPC listeners: "::" serves IPv4 clients too. */
	if (ss.ss_family == AF_INET6) {
		flags |= MHD_USE_DUAL_STACK;
	}
	if (adm->tls) {
		flags |= MHD_USE_TLS;
	}
	/* The TLS options last: without TLS they are not passed at all. */
	adm->mhd = MHD_start_daemon(
		flags, (uint16_t)port, NULL, NULL, http_access_cb, adm,
		MHD_OPTION_EXTERNAL_LOGGER, http_log_cb, adm,
		MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
		MHD_OPTION_NOTIFY_COMPLETED, http_completed_cb, adm,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_CONNECTIONS_MAX,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_CONN_MEMORY,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_TIMEOUT_S,
		adm->tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END,
		adm->tls_cert, MHD_OPTION_HTTPS_MEM_KEY, adm->tls_key,
		MHD_OPTION_END);
	if (!adm->mhd) {
		err = http_bind_error(&ss, len);
		snprintf(errbuf, errlen, "admin port %s:%d: %s", listen, port,
			 err == -EIO ? "libmicrohttpd could not start"
				     : strerror(-err));
		goto fail;
	}
	info = MHD_get_daemon_info(adm->mhd, MHD_DAEMON_INFO_BIND_PORT);
	*bound_port = info ? info->port : port;
	/* A Host must name the port bound; no client knew it before. */
	__atomic_store_n(&adm->auth.port, *bound_port, __ATOMIC_RELEASE);
	err = admin__policies_start(adm->policies);
	if (err) {
		snprintf(errbuf, errlen,
			 "admin: cannot start the snapshot-policy thread: %s",
			 strerror(-err));
		goto fail;
	}
	err = alarm_set_start(adm->alarms);
	if (err) {
		snprintf(errbuf, errlen,
			 "admin: cannot start the alarm "
			 "thread: %s",
			 strerror(-err));
		goto fail;
	}
	*out = adm;
	return 0;
fail:
	admin_stop(adm);
	return err;
}
