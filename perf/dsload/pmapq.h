/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pmapq: one portmapper GETPORT (RFC 1833 3, PMAPPROC_GETPORT, version 2)
 * over TCP, blocking, bounded by a timeout.  dsload asks through it again
 * when a connection found through the portmapper has to reconnect: a
 * restarted server may listen on other ports.  Pure socket code: no loop.
 */
#ifndef DSLOAD_PMAPQ_H
#define DSLOAD_PMAPQ_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Asks the portmapper at @pm (borrowed) from source address @src
 * (borrowed; port 0: any) for the TCP port of @prog @vers.  Waits at most
 * @timeout_ms in all.  Returns 0 with *port, -EPROTONOSUPPORT when the
 * program is not registered (port 0), -ETIMEDOUT, -EBADMSG for a reply
 * that is not a successful GETPORT answer, or the socket's -errno
 * (-ECONNREFUSED when nothing listens).
 */
int pmapq_getport(const struct sockaddr_in *src, const struct sockaddr_in *pm,
		  uint32_t prog, uint32_t vers, int timeout_ms, uint16_t *port);

/*
 * The GETPORT call as a record (record mark included) into @buf (room for
 * PMAPQ_CALL_BYTES) with @xid.  Returns its length.
 */
#define PMAPQ_CALL_BYTES 60
size_t pmapq_call_encode(uint32_t xid, uint32_t prog, uint32_t vers,
			 uint8_t *buf);

/*
 * Decodes the reply record @rec (@len bytes, record mark removed) to call
 * @xid.  Returns 0 with *port, or -EBADMSG / -EPROTONOSUPPORT as above.
 */
int pmapq_reply_decode(const uint8_t *rec, size_t len, uint32_t xid,
		       uint16_t *port);

#endif
