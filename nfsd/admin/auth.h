/* SPDX-License-Identifier: Apache-2.0 */
/*
 * auth: who may use the admin endpoint, decided without HTTP (so that
 * the unit tests and the fuzzer drive it directly).
 *
 * The secret is a token file, STATE_DIR/admin.token: 32 random bytes as
 * 64 lowercase hex digits and a newline, mode 0600, owned by dsnfsd's
 * user, made at the first start (token.c).  A request passes when, in
 * this order:
 *   1. its Host names this endpoint: the listen address literal,
 *      127.0.0.1, [::1], localhost or a name of [admin] allowed_hosts,
 *      with this endpoint's port or none (a DNS-rebound name never
 *      does): else 421;
 *   2. it is not cross-origin: an Origin header must be this endpoint's
 *      own (scheme://Host), Sec-Fetch-Site must be same-origin or none:
 *      else 403, for every method;
 *   3. it carries the token (Authorization: Bearer, compared in
 *      constant time) or a live session cookie from POST /login: else
 *      401.  The dashboard's page and its scripts (no data) and /login
 *      itself need no credential; /metrics needs one unless
 *      [admin] metrics_auth = false.
 */
#ifndef DSNFS_ADMIN_AUTH_H
#define DSNFS_ADMIN_AUTH_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#define ADMIN_TOKEN_FILE_NAME "admin.token"
#define ADMIN_TOKEN_BYTES 32
#define ADMIN_TOKEN_HEX_LEN (2 * ADMIN_TOKEN_BYTES)
/* The environment variable the tools read the token file's path from. */
#define ADMIN_TOKEN_ENV "DSNFS_ADMIN_TOKEN_FILE"
/* Where the tools look without --token-file or the variable: the token
 * of a dsnfsd with the packaged config's state_dir. */
#define ADMIN_TOKEN_DEFAULT_PATH "/var/lib/dsnfs/" ADMIN_TOKEN_FILE_NAME

#define ADMIN_SESSION_COOKIE "dsnfs_session"
/* Sessions alive at once; a new login replaces the oldest. */
#define ADMIN_SESSIONS_MAX 16
#define ADMIN_SESSION_LIFETIME_S (12 * 3600)
#define ADMIN_ALLOWED_HOSTS_MAX 16
#define ADMIN_HOST_NAME_MAX 256
/* Peers whose refusals are logged (the first of each); more are not. */
#define ADMIN_AUTH_PEERS_LOGGED 64

/* ---- the token file (token.c) ------------------------------------------ */

/*
 * dsnfsd's side: reads @path, or makes it when it does not exist (0600,
 * written whole then renamed into place).  Refuses (-EPERM, -EINVAL) a
 * file that is not a regular file (a symlink included), is not owned by
 * the effective uid, has any group or other permission bit, or does not
 * hold exactly 64 hex digits (and an optional newline).  Returns 0 with
 * @token (ADMIN_TOKEN_HEX_LEN + 1 bytes) and *created, or -errno with
 * the reason.
 */
int admin_token_load(const char *path, char *token, bool *created, char *errbuf,
		     size_t errlen);

/*
 * The tools' side: reads the token of @path (any owner: the file's
 * permissions are what admits the reader).  Returns 0 with @token, or
 * -errno with the reason naming the file.
 */
int admin_token_read(const char *path, char *token, char *errbuf,
		     size_t errlen);

/* The token file a tool uses: @option (--token-file) when not NULL, else
 * $DSNFS_ADMIN_TOKEN_FILE when set and not empty, else
 * ADMIN_TOKEN_DEFAULT_PATH.  Borrowed. */
const char *admin_token_path(const char *option);

/* ---- the decision (auth.c) --------------------------------------------- */

struct admin_auth_config {
	const char *listen; /* the listen address literal */
	int port; /* the port bound */
	bool tls; /* https: the origin's scheme */
	bool metrics_auth; /* /metrics needs a credential */
	/* Names a Host may also give, separated by commas or blanks. */
	const char *allowed_hosts;
};

struct admin_auth_session {
	char id[ADMIN_TOKEN_HEX_LEN + 1]; /* "" when free */
	time_t expires; /* CLOCK_MONOTONIC seconds */
};

struct admin_auth {
	char token[ADMIN_TOKEN_HEX_LEN + 1];
	char listen[64]; /* lowercase, no brackets */
	int port;
	bool tls;
	bool metrics_auth;
	char hosts[ADMIN_ALLOWED_HOSTS_MAX][ADMIN_HOST_NAME_MAX];
	size_t n_hosts;
	pthread_mutex_t lock; /* sessions, peers */
	struct admin_auth_session sessions[ADMIN_SESSIONS_MAX];
	char peers[ADMIN_AUTH_PEERS_LOGGED][64];
	size_t n_peers;
	bool peers_full_logged;
};

/* What the decision reads of one request (borrowed; a header not sent
 * is NULL). */
struct admin_auth_request {
	const char *method;
	const char *url; /* the path, without the query */
	const char *host;
	const char *origin;
	const char *sec_fetch_site;
	const char *authorization;
	const char *cookie;
};

/* The outcome: 0 (serve it) or the HTTP status of the refusal. */
struct admin_auth_verdict {
	unsigned status; /* 0, 401, 403 or 421 */
	bool authenticated; /* a token or a live session came with it */
	char why[200]; /* the refusal's reason, for the reply and the log */
};

/* Checks @cfg (an allowed host that is not a name: -EINVAL with the
 * reason) and fills @a (release: admin_auth_fini()) with @token. */
int admin_auth_init(struct admin_auth *a, const struct admin_auth_config *cfg,
		    const char *token, char *errbuf, size_t errlen);
void admin_auth_fini(struct admin_auth *a);

/* Decides @req at monotonic time @now (seconds). */
void admin_auth_decide(struct admin_auth *a,
		       const struct admin_auth_request *req, time_t now,
		       struct admin_auth_verdict *out);

/* @given (any length, may be NULL) is the token: constant time in the
 * token's length whatever @given is. */
bool admin_auth_token_equal(const char *token, const char *given);

/* POST /login's check and session: when @given is the token, a new
 * session id (ADMIN_TOKEN_HEX_LEN + 1 bytes) in @id expiring
 * ADMIN_SESSION_LIFETIME_S after @now, and 0; -EACCES for a wrong token,
 * -errno when no random bytes could be had. */
int admin_auth_login(struct admin_auth *a, const char *given, time_t now,
		     char *id);

/* Ends the session of @cookie (a Cookie header, may be NULL). */
void admin_auth_logout(struct admin_auth *a, const char *cookie);

/* True the first time a refusal of @peer is seen (so it is logged once
 * per peer, not once per request). */
bool admin_auth_peer_first(struct admin_auth *a, const char *peer);

#endif
