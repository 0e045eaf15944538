/* SPDX-License-Identifier: Apache-2.0 */
/*
 * auth: the credentials of a call (RFC 5531 8, appendix A: AUTH_SYS).
 * dsnfsd accepts AUTH_NONE and AUTH_SYS; anything else is AUTH_BADCRED /
 * AUTH_TOOWEAK at the RPC level.
 */
#ifndef DSNFS_RPC_AUTH_H
#define DSNFS_RPC_AUTH_H

#include <stdint.h>

#include "nfsd/rpc/msg.h"

#define RPC_AUTH_SYS_MAX_GROUPS 16

/* The caller's credentials as sent (before any export squashing). */
struct rpc_cred {
	uint32_t flavor; /* AUTH_NONE or AUTH_SYS */
	uint32_t uid;
	uint32_t gid;
	uint32_t ngroups;
	uint32_t groups[RPC_AUTH_SYS_MAX_GROUPS];
	char machine[256];
};

/*
 * Fills *cred from the call's credential.  Returns RPC_AUTH_OK, or the
 * auth_stat to answer: AUTH_BADCRED for a malformed AUTH_SYS body (more
 * than 16 groups, a machine name over 255 bytes, trailing bytes) and
 * AUTH_REJECTEDCRED for a flavor we do not speak.
 */
enum rpc_auth_stat rpc_auth_parse(const struct rpc_call_header *call,
				  struct rpc_cred *cred);

#endif
