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
 * GETs http://@host:@port@path within @timeout_ms.  Returns 0 with *body
 * (owned: free(), NUL-terminated, at most ADMIN_BODY_MAX bytes), or
 * -errno with the reason in @errbuf (-ECONNREFUSED, -ETIMEDOUT, -EPROTO
 * for a status other than 200, -EMSGSIZE).
 */
int admin_get(const char *host, uint16_t port, const char *path, int timeout_ms,
	      char **body, char *errbuf, size_t errlen);

#endif
