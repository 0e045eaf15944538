/*
 * auth: the credentials of a call (RFC 5531 8, appendix A: AUTH_SYS).
 * dsnfsd accepts AUTH_NONE and AUTH_SYS; anything else is AUTH_BADCRED /
 * AUTH_TOOWEAK at the RPC level.
 */
#ifndef DSNFS_RPC_AUTH_H
#define DSNFS_RPC_AUTH_H

#include "nfsd/rpc/dispatch.h"
#include "nfsd/rpc/msg.h"

/*
 * Fills *cred from the call's credential.  Returns RPC_AUTH_OK, or the
 * auth_stat to answer: AUTH_BADCRED for a malformed AUTH_SYS body (more
 * than 16 groups, a machine name over 255 bytes, trailing bytes) and
 * AUTH_REJECTEDCRED for a flavor we do not speak.
 */
enum rpc_auth_stat rpc_auth_parse(const struct rpc_call_header *call,
				  struct rpc_cred *cred);

#endif
