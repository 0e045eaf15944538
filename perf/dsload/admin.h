/* SPDX-License-Identifier: Apache-2.0 */
/*
 * admin: a GET from dsnfsd's admin endpoint (docs/admin-api.md), through
 * libcurl.  Used between phases and at the edges of a measured window, on
 * the caller's thread, never on an event loop.
 */
#ifndef DSLOAD_ADMIN_H
#define DSLOAD_ADMIN_H

#include <stddef.h>
#include <stdint.h>

#define ADMIN_BODY_MAX (4u * 1024u * 1024u)

/*
 * The admin token's file: --token-file (@path), else a server dsload
 * started itself (admin_token_server(), its state directory's), else
 * $DSNFS_ADMIN_TOKEN_FILE, else /var/lib/dsnfs/admin.token.
 */
void admin_token_option(const char *path);
/* The state directory of the dsnfsd dsload just started (copied). */
void admin_token_server(const char *state_dir);
/* The file, as above (admin_token.c: no libcurl, for the unit tests). */
const char *admin_token_file(void);

/*
 * GETs http://@host:@port@path within @timeout_ms, with the admin token
 * (read at each call; a token that cannot be read is -EACCES with the
 * reason).  Returns 0 with *body
 * (owned: free(), NUL-terminated, at most ADMIN_BODY_MAX bytes), or
 * -errno with the reason in @errbuf (-ECONNREFUSED, -ETIMEDOUT, -EPROTO
 * for a status other than 200, -EMSGSIZE).
 */
int admin_get(const char *host, uint16_t port, const char *path, int timeout_ms,
	      char **body, char *errbuf, size_t errlen);

#endif
