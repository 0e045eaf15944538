/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sockaddr: the one place client addresses are turned into text and keys.
 * An IPv4 client arriving on a dual-stack socket as ::ffff:a.b.c.d is the
 * same client as a.b.c.d everywhere: in logs, export rules, connection
 * limits, the duplicate request cache and traffic accounting.
 */
#ifndef DSNFS_SOCKADDR_H
#define DSNFS_SOCKADDR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Room for any text below: an IPv6 literal, ':' and a port. */
#define SOCKADDR_TEXT_MAX 64

/* The address only ("10.0.0.1", "fd00::7"); 0, or -EAFNOSUPPORT for a
 * family without addresses (buf then says "?"). */
int sockaddr_format_host(const struct sockaddr *sa, char *buf, size_t len);

/* "ADDR:PORT" for IPv4 ("10.0.0.1:811"), "[ADDR]:PORT" for IPv6
 * ("[fd00::7]:811", RFC 5952 6: without the brackets "fd00::7:811" would
 * itself read as an address); the address as sockaddr_format_host(). */
void sockaddr_format(const struct sockaddr *sa, char *buf, size_t len);

/* The port; 0 for a family without ports. */
unsigned sockaddr_port(const struct sockaddr *sa);

/* The address as 16 bytes, IPv4 in its v4-mapped IPv6 form (the port is
 * left out): a key that is equal for equal clients.  Zeros for other
 * families. */
void sockaddr_key(const struct sockaddr *sa, uint8_t out[16]);

/* Fills @ss and @len with the numeric address @text and @port: an IPv4
 * address, or an IPv6 one, bare or in brackets, with an optional zone
 * ("::1", "[::1]", "fe80::1%eth0").  No name lookup.  Returns 0, or
 * -EINVAL when @text is not such an address or @port not in 0..65535. */
int sockaddr_parse(const char *text, int port, struct sockaddr_storage *ss,
		   socklen_t *len);

#endif
