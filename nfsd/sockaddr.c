/*
 * sockaddr: inet_ntop() and the v4-mapped rule, once.
 */
#include "nfsd/sockaddr.h"

#include <arpa/inet.h>
#include <errno.h>
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
		if (IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)key))
			ok = inet_ntop(AF_INET, &key[12], buf, (socklen_t)len);
		else
			ok = inet_ntop(AF_INET6, key, buf, (socklen_t)len);
	}
	if (!ok) {
		snprintf(buf, len, "?");
		return -EAFNOSUPPORT;
	}
	return 0;
}

unsigned sockaddr_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)sa)->sin_port);
	if (sa->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	return 0;
}

void sockaddr_format(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[SOCKADDR_TEXT_MAX];

	sockaddr_format_host(sa, host, sizeof(host));
	snprintf(buf, len, "%s:%u", host, sockaddr_port(sa));
}
