// SPDX-License-Identifier: Apache-2.0
/*
 * sockaddr: inet_ntop() and the v4-mapped rule, once; and the one parser of
 * the addresses the config names (listen).
 */
#include "nfsd/base/sockaddr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

void sockaddr_key(const struct sockaddr *sa, uint8_t out[16])
{
	memset(out, 0, 16);
	if (sa->sa_family == AF_INET) {
		out[10] = out[11] = 0xff;
		memcpy(&out[12], &((const struct sockaddr_in *)sa)->sin_addr,
		       4);
	} else if (sa->sa_family == AF_INET6) {
		memcpy(out, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	}
}

int sockaddr_format_host(const struct sockaddr *sa, char *buf, size_t len)
{
	uint8_t key[16];
	const char *ok = NULL;

	if (sa->sa_family == AF_INET || sa->sa_family == AF_INET6) {
		sockaddr_key(sa, key);
		if (IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)key)) {
			ok = inet_ntop(AF_INET, &key[12], buf, (socklen_t)len);
		} else {
			ok = inet_ntop(AF_INET6, key, buf, (socklen_t)len);
		}
	}
	if (!ok) {
		snprintf(buf, len, "?");
		return -EAFNOSUPPORT;
	}
	return 0;
}

unsigned sockaddr_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		return ntohs(((const struct sockaddr_in *)sa)->sin_port);
	}
	if (sa->sa_family == AF_INET6) {
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	}
	return 0;
}

void sockaddr_format(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[SOCKADDR_TEXT_MAX];

	sockaddr_format_host(sa, host, sizeof(host));
	if (strchr(host, ':')) {
		snprintf(buf, len, "[%s]:%u", host, sockaddr_port(sa));
	} else {
		snprintf(buf, len, "%s:%u", host, sockaddr_port(sa));
	}
}

int sockaddr_parse(const char *text, int port, struct sockaddr_storage *ss,
		   socklen_t *len)
{
	const struct addrinfo hints = { .ai_flags = AI_NUMERICHOST,
					.ai_family = AF_UNSPEC };
	struct addrinfo *ai = NULL;
	char host[SOCKADDR_TEXT_MAX];
	size_t n = strlen(text);
	struct in_addr v4;

	if (port < 0 || port > 65535 || n == 0 || n >= sizeof(host)) {
		return -EINVAL;
	}
	if (text[0] == '[') {
		/* "[::1]": brackets hold an IPv6 address only. */
		if (n < 3 || text[n - 1] != ']' || !memchr(text, ':', n)) {
			return -EINVAL;
		}
		memcpy(host, text + 1, n - 2);
		host[n - 2] = '\0';
	} else {
		memcpy(host, text, n + 1);
	}
	/* Strict dotted quads: getaddrinfo() would also take "127.1". */
	if (!strchr(host, ':') && inet_pton(AF_INET, host, &v4) != 1) {
		return -EINVAL;
	}
	/* getaddrinfo() rather than inet_pton(): it reads a zone ("%eth0"),
	 * which a link-local address needs. */
	if (getaddrinfo(host, NULL, &hints, &ai) != 0) {
		return -EINVAL;
	}
	if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) ||
	    ai->ai_addrlen > sizeof(*ss)) {
		freeaddrinfo(ai);
		return -EINVAL;
	}
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*len = (socklen_t)ai->ai_addrlen;
	freeaddrinfo(ai);
	if (ss->ss_family == AF_INET) {
		((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
	} else {
		((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
	}
	return 0;
}
